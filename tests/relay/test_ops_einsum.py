"""Tests of einsum: the equation's forms (explicit and implicit output, repeated labels,
`...`), the relation's shape inference and refusals, ONNX's Einsum as the oracle, and Relay
text through every executor."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.relay.ops import OPS, OpTypeError
from rvmdbg.relay.types import TupleType

from onnx_oracle import onnx_node
from op_cases import A, T, check_kernel_case, check_type_case, rel, run, run_text_everywhere


def Tup(*types):
    return TupleType(tuple(types))


TYPE_CASES = [
    ("einsum", [Tup(T((2, 3)), T((3, None)))], {"equation": "ij,jk->ik"},
     "Tensor[(2, ?), float32]"),
    ("einsum", [Tup(T((5, 2, 3)), T((3, 4)))], {"equation": "...ij,jk"},
     "Tensor[(5, 2, 4), float32]"),
]

KERNEL_CASES = [
    ("einsum", [(A([[1, 2], [3, 4]]), A([[5, 6], [7, 8]]))], {"equation": "ij,jk->ik"},
     A([[19, 22], [43, 50]])),
    ("einsum", [(A([[1, 2], [3, 4]], "int32"),)], {"equation": "ii"}, A(5, "int32")),
]


@pytest.mark.parametrize("op, args, attrs, expected", TYPE_CASES)
def test_type_cases(op, args, attrs, expected):
    check_type_case(op, args, attrs, expected)


@pytest.mark.parametrize("op, args, attrs, expected", KERNEL_CASES)
def test_kernel_cases(op, args, attrs, expected):
    check_kernel_case(op, args, attrs, expected)


def test_tvm_pattern_and_tuple_argument():
    assert OPS["einsum"].pattern == "injective" and OPS["einsum"].tuple_input


@pytest.mark.parametrize("equation, shapes", [
    ("ij->ji", [(3, 4)]), ("ii->i", [(3, 3)]), ("i,i", [(5,), (5,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ii->...i", [(2, 3, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("i,j", [(3,), (4,)]), ("ij", [(3, 2)]),
    ("...j,...j->...", [(2, 1, 4), (3, 4)])])
def test_agrees_with_onnx(equation, shapes):
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal(s).astype("float32") for s in shapes]
    (want,) = onnx_node("Einsum", xs, equation=equation)
    got = run("einsum", tuple(xs), equation=equation)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert rel("einsum", Tup(*[T(s) for s in shapes]), equation=equation) == T(want.shape)


@pytest.mark.parametrize("types, equation, words", [
    ([T((2, 3)), T((4, 5))], "ij,jk->ik", "label 'j'"),
    ([T((2, 3))], "ij,jk->ik", "names 2 operands"),
    ([T((2, 3))], "ijk", "does not fit a 2-d operand"),
    ([T((2, 3))], "ij->ik", "output label 'k'"),
    ([T((2, 3))], "i1", "unexpected '1'"),
    ([T((2, 3)), T((3, 2), "int32")], "ij,jk", "same dtype"),
])
def test_refusals(types, equation, words):
    with pytest.raises(OpTypeError, match=words):
        rel("einsum", Tup(*types), equation=equation)


def test_bool_sums_in_one_bit():
    a = A([[True, True], [True, False]], "bool")
    assert run("einsum", (a, a), equation="ij,jk->ik").tolist() == [[False, True],
                                                                    [True, True]]


def test_relay_text_runs_everywhere():
    text = ('#[version = "0.0.5"]\n'
            "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(3, 4), float32]) {\n"
            '  einsum((%a, %b), equation="ij,jk->ki")\n}\n')
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    results = run_text_everywhere(text, [a, b])
    assert set(results) == {"interp", "vm", "graph"}
    for got in results.values():
        np.testing.assert_allclose(got, (a @ b).T)
