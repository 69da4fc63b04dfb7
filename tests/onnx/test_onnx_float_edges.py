"""Float edge cases where ONNX's definition and topi's kernels part, and the importer follows
ONNX: Mod (fmod=0) is NumPy's mod, infinite divisors included; ReduceMax/ReduceMin keep a
row of only -inf/+inf infinite. NumPy is the oracle (ONNX's reference implementation of both
is NumPy's)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from rvmdbg.onnx import import_model  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

_TYPES = {"float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT,
          "float64": TensorProto.DOUBLE}
_SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 7.0, np.inf, -np.inf, np.nan]


def _run(node, names, arrays, opset):
    inputs = [helper.make_tensor_value_info(n, _TYPES[str(a.dtype)], list(a.shape))
              for n, a in zip(names, arrays)]
    out = helper.make_tensor_value_info(node.output[0], _TYPES[str(arrays[0].dtype)], None)
    model = helper.make_model(helper.make_graph([node], "g", inputs, [out]),
                              opset_imports=[helper.make_opsetid("", opset)])
    exe = compile_module(check_module(import_model(model).module))
    return np.asarray(VirtualMachine(exe).invoke("main", list(arrays)))


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(sorted(_TYPES)),
       pairs=st.lists(st.tuples(st.sampled_from(_SPECIAL), st.sampled_from(_SPECIAL)),
                      min_size=1, max_size=10))
def test_mod_is_numpys_mod(dtype, pairs):
    x = np.array([p[0] for p in pairs], dtype)
    y = np.array([p[1] for p in pairs], dtype)
    with np.errstate(all="ignore"):
        want = np.mod(x, y)
    got = _run(helper.make_node("Mod", ["x", "y"], ["z"], fmod=0), ["x", "y"], [x, y], 13)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)   # NaN where NumPy has NaN; -0.0 == 0.0


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64"]), kind=st.sampled_from(["Max", "Min"]),
       rows=st.lists(st.lists(st.sampled_from([1.5, -2.0, np.inf, -np.inf]), min_size=3,
                              max_size=3), min_size=1, max_size=4))
def test_reduce_max_and_min_keep_infinite_rows(dtype, kind, rows):
    x = np.array(rows, dtype)
    want = (np.max if kind == "Max" else np.min)(x, axis=1, keepdims=True)
    node = helper.make_node(f"Reduce{kind}", ["x"], ["r"], axes=[1])
    got = _run(node, ["x"], [x], 13)
    np.testing.assert_array_equal(got, want)
