"""The checks every operator family's test file runs on its table of cases, and the union of
those tables, so that `test_ops.py` can require a type case and a kernel case for every
registered operator wherever its family's tests live.

A family's file is `tests/relay/test_ops*.py` with module-level `TYPE_CASES` rows
`(op, arg_types, attrs, expected type text)` and `KERNEL_CASES` rows
`(op, args, attrs, expected array)`.
"""
from __future__ import annotations

import importlib
import math
import warnings
from pathlib import Path

import numpy as np

from rvmdbg.relay.ops import OPS
from rvmdbg.relay.types import TensorType, TupleType

HERE = Path(__file__).resolve().parent


def types_of(args) -> list:
    """The tensor (or tuple of tensors) types of concrete kernel arguments."""
    out = []
    for a in args:
        if isinstance(a, tuple):
            out.append(TupleType(tuple(TensorType(x.shape, str(x.dtype)) for x in a)))
        else:
            out.append(TensorType(a.shape, str(a.dtype)))
    return out


def check_type_case(op, args, attrs, expected: str) -> None:
    assert str(OPS[op].type_rel(args, attrs)) == expected


def check_kernel_case(op, args, attrs, expected, rtol=1e-6, atol=1e-6) -> None:
    """The kernel's result equals `expected` (dtype and shape exactly), the type relation
    agrees with it on the concrete types, it emits no NumPy warnings and shares no memory."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # kernels never emit NumPy warnings
        out = OPS[op].kernel(list(args), attrs)
    outs, wanted = (out, expected) if isinstance(expected, tuple) else ((out,), (expected,))
    assert isinstance(outs, tuple) and len(outs) == len(wanted)
    for o, e in zip(outs, wanted):
        assert type(o) is np.ndarray  # never a NumPy scalar
        assert o.dtype == e.dtype
        assert o.shape == e.shape
        if o.dtype.kind == "f":
            np.testing.assert_allclose(o, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(o, e)
        # the result is fresh: it never shares memory with an input
        for a in args:
            for x in (a if isinstance(a, tuple) else (a,)):
                assert not np.shares_memory(o, x)
    t = OPS[op].type_rel(types_of(args), attrs)
    types = list(t.fields) if isinstance(t, TupleType) else [t]
    assert len(types) == len(outs)
    for tt, o in zip(types, outs):
        assert tt.dtype == str(o.dtype) and len(tt.shape) == o.ndim
        # a `?` dim (dyn.*: the shape is a value) fits any size
        assert all(d is None or d == n for d, n in zip(tt.shape, o.shape))


def covered(table: str) -> set:
    """Operator names with a row in `table` (TYPE_CASES or KERNEL_CASES) of any family file."""
    names = set()
    for path in sorted(HERE.glob("test_ops*.py")):
        module = importlib.import_module(path.stem)
        names |= {row[0] for row in getattr(module, table, ())}
    return names


# the small constructors and calls every family's test file uses


def T(shape, dtype="float32"):
    """A tensor type: T((2, None)) is Tensor[(2, ?), float32]."""
    return TensorType(tuple(shape), dtype)


def A(data, dtype="float32"):
    return np.array(data, dtype=dtype)


def rel(name, *types, **attrs):
    """The operator's type relation on these argument types."""
    return OPS[name].type_rel(list(types), attrs)


def run(name, *args, **attrs):
    """The operator's kernel on these arrays."""
    return OPS[name].kernel(list(args), attrs)


def topi_padded_count(first: int, k: int, d: int, size: int, after: int) -> int:
    """topi's count_include_pad divisor along one axis for the window whose first cell is
    `first` (negative in the leading padding): its cells up to the end of the written
    padding; a window that starts past that end (wholly in ceil_mode's extra cells) counts
    1 + (end - first) / d in C's truncating division, 0 or less, never lifted to 1."""
    end = size + after - 1
    if first <= end:
        return sum(1 for t in range(k) if first + t * d <= end)
    return 1 + math.trunc((end - first) / d)


def run_text_everywhere(text: str, args: list, name: str = "op.relay") -> dict:
    """Relay text that calls an operator: checked, printed and read back unchanged, then run
    on the interpreter, the VM and (where static) the graph executor; {executor: result}."""
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.printer import print_module
    from rvmdbg.relay.typecheck import check_module
    from tests.corpus.corpus_run import run_everywhere

    printed = print_module(check_module(load_module(text, name)))
    assert print_module(check_module(load_module(printed, name))) == printed
    return run_everywhere(text, name, args)
