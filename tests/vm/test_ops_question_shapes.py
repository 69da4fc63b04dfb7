"""The transformer and indexing operators on `?` shapes on the VM: their outputs are planned
at run time by shape kernels running each type relation on the concrete shapes. Differential:
the VM gives the reference interpreter's values (and, for strided_slice, tile and gather, the
values NumPy indexing gives), for several run-time sizes. arange's length depends on a value:
its data-dependent shape function sizes it."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.values import values_equal
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine, VMError

PROGRAM = """#[version = "0.0.5"]
def @main(%x: Tensor[(?, 6), float32], %i: Tensor[(?, 2), int32], %j: Tensor[(2, ?), int32]) {
  %0 = strided_slice(%x, begin=[0, 1], end=[-1, 5], strides=[1, 2]);
  %1 = tile(%0, reps=[2, 1]);
  %2 = gather(%1, %i, axis=0);
  %3 = erf(%2);
  %4 = topk(%x, k=2, axis=1);
  %5 = cumsum(%x, axis=0, exclusive=True);
  %6 = repeat(%x, repeats=2, axis=0);
  %7 = contrib_reverse_reshape(%x, newshape=[-1, 3]);
  %8 = mean(%x, axis=[1], keepdims=True);
  %9 = variance(%x, %8, axis=[1]);
  %10 = argsort(%x, axis=0, is_ascend=False);
  %11 = one_hot(%i, 1f, 0f, depth=3, axis=-1, dtype="float32");
  %12 = layout_transform(%x, src_layout="NC", dst_layout="NC3c");
  %13 = gather_nd(%x, %j, index_rank=2);
  %14 = strided_slice(%x, begin=[-1], end=[2], axes=[0], strides=[1], slice_mode="size");
  %15 = cast(shape_of(%x), dtype="float32");
  %16 = arange(0f, take(%15, 0), 0.5f);
  (%1, %3, %4.0, %4.1, %5, %6, %7, %9, %10, %11, %12, %13, %14, logsumexp(%x, axis=[1]), %16)
}
"""


@pytest.fixture(scope="module")
def compiled():
    mod = load_module(PROGRAM, "question_shapes.relay")
    return mod, compile_module(mod)


@pytest.mark.parametrize("rows", [2, 3, 5])
def test_vm_matches_interpreter_and_numpy(compiled, rows):
    mod, exe = compiled
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 6)).astype(np.float32)
    # gather picks rows of the tiled slice; gather_nd reads %j's columns as (row, col) pairs
    i = rng.integers(0, 2 * rows - 2, (rows + 1, 2)).astype(np.int32)
    j = np.stack([rng.integers(0, rows, 4), rng.integers(0, 6, 4)]).astype(np.int32)
    expected = Interpreter(mod).run("main", [x, i, j])
    got = VirtualMachine(exe).invoke("main", [x, i, j])
    assert values_equal(expected, got)
    tiled = np.tile(x[0:rows - 1, 1:5:2], (2, 1))
    np.testing.assert_array_equal(got.fields[0], tiled)
    np.testing.assert_array_equal(got.fields[1], expected.fields[1])
    gathered = np.array([[tiled[i[r, c], c] for c in range(2)] for r in range(rows + 1)])
    np.testing.assert_allclose(got.fields[1], np.vectorize(math.erf)(gathered), rtol=1e-6)
    np.testing.assert_array_equal(got.fields[11], x[j[0], j[1]])
    assert got.fields[5].shape == (rows * 2, 6)
    assert got.fields[6].shape == (rows * 2, 3)
    assert got.fields[12].shape == (1, 6)
    # arange sized by a value: the data-dependent shape function plans it
    np.testing.assert_array_equal(got.fields[14], np.arange(0, rows, 0.5, dtype=np.float32))


def test_a_run_time_shape_error_stops_the_vm(compiled):
    mod, exe = compiled
    x = np.zeros((1, 6), np.float32)  # the slice 0:-1 of one row is empty: tile/gather fail
    i = np.zeros((1, 2), np.int32)
    j = np.zeros((2, 1), np.int32)
    with pytest.raises(VMError, match="gather: index 0 is out of range"):
        VirtualMachine(exe).invoke("main", [x, i, j])
