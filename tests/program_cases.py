"""Expected results of the example programs in `programs/`, for interpreter, VM and CLI tests.

`CASES` rows are `(file, args, expected)`:
- `file` is a name in `programs/`;
- `args` is None for the program's `// args:` defaults, or a list of CLI argument strings;
- `expected` is the `--json` result form of the CLI contract (the V of `{"result": V}`).

`FAILING_CASES` rows are `(file, args, function)`: runs that must fail at run time (exit 1)
inside the named global function (an unmatched `match?`).

The values were worked out by hand and, for the tensor programs, with NumPy in float32; no
rvmdbg code produced them. Compare with `matches(expected, actual)`: float data within a
float32 tolerance, everything else exactly.
"""
from __future__ import annotations

import math
from pathlib import Path

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"


# ---- builders for the --json forms ----

def i32(v: int) -> dict:
    return {"dtype": "int32", "shape": [], "data": v}


def boolean(v: bool) -> dict:
    return {"dtype": "bool", "shape": [], "data": v}


def f32(data) -> dict:
    """A float32 tensor from nested lists; the shape follows the nesting."""
    shape, level = [], data
    while isinstance(level, list):
        shape.append(len(level))
        level = level[0] if level else None
    return {"dtype": "float32", "shape": shape, "data": data}


def tup(*fields) -> dict:
    return {"tuple": list(fields)}


def con(name: str, *fields) -> dict:
    return {"con": name, "fields": list(fields)}


def pair_list(pairs) -> dict:
    """List[(int32, int32)] as nested Cons cells ending in Nil."""
    result = con("Nil")
    for a, b in reversed(pairs):
        result = con("Cons", tup(i32(a), i32(b)), result)
    return result


def int_list(values) -> dict:
    """List[int32] as nested Cons cells ending in Nil."""
    result = con("Nil")
    for v in reversed(values):
        result = con("Cons", i32(v), result)
    return result


def matches(expected, actual, rel: float = 1e-5, abs_tol: float = 1e-6) -> bool:
    """Structural equality of two --json forms, floats compared within a tolerance."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return False
        return all(matches(expected[k], actual[k], rel, abs_tol) for k in expected)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            matches(e, a, rel, abs_tol) for e, a in zip(expected, actual))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, float) or isinstance(actual, float):
        if not isinstance(expected, (int, float)) or not isinstance(actual, (int, float)):
            return False
        return math.isclose(expected, actual, rel_tol=rel, abs_tol=abs_tol)
    return expected == actual


# ---- arguments shared by several rows (the tensor programs take their weights as arguments) ----

MLP_W1 = ("[[0.1, -0.2, 0.3, 0.1, 0.5, -0.1, 0.2, 0], [0.4, 0.1, -0.3, 0.2, -0.1, 0.3, 0, 0.2], "
          "[-0.2, 0.3, 0.1, -0.4, 0.2, 0.1, 0.3, -0.1], [0, 0.2, 0.2, 0.3, -0.3, 0, 0.1, 0.4]]")
MLP_B1 = "[0.1, -0.1, 0.05, 0]"
MLP_W2 = "[[0.5, -0.4, 0.3, 0.2], [-0.3, 0.6, 0.1, -0.2], [0.2, 0.1, -0.5, 0.4]]"
MLP_B2 = "[0, 0.1, -0.1]"

RNN_WX = "[[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]]"
RNN_WH = "[[0.1, 0.2, 0], [0, 0.3, -0.2], [0.4, 0, 0.1]]"
RNN_B = "[0.1, 0, -0.1]"

POLICY_W1 = "[[0.3, 0.1, -0.2, 0.5], [-0.4, 0.6, 0.1, 0], [0.2, -0.1, 0.4, 0.3], [0.1, 0.2, 0.3, -0.6]]"
POLICY_W2 = "[[0.5, -0.2, 0.1, 0.3], [-0.3, 0.4, -0.1, 0.2], [0.2, 0.6, -0.3, -0.1]]"
POLICY_W2_NEGATIVE = ("[[-0.5, -0.2, -0.1, -0.3], [-0.3, -0.4, -0.1, -0.2], "
                      "[-0.2, -0.6, -0.3, -0.1]]")


CASES = [
    # recursion on scalars
    ("fib.relay", None, i32(55)),
    ("fib.relay", ["15"], i32(610)),
    ("fib.relay", ["1"], i32(1)),
    ("fib.relay", ["0"], i32(0)),
    ("loop.relay", None, i32(500500)),
    ("loop.relay", ["10"], i32(55)),
    ("loop.relay", ["0"], i32(0)),
    ("sum_up.relay", None, i32(5050)),
    ("sum_up.relay", ["10"], i32(55)),
    ("sum_up.relay", ["0"], i32(0)),
    ("minivm.relay", None, i32(7)),
    ("minivm.relay", ["-3", "4"], i32(-7)),
    ("minivm.relay", ["0", "-5"], i32(-5)),

    # lists, trees and naturals through the prelude
    ("list_ops.relay", None, tup(int_list([9, 16, 25, 81, 36]), i32(167), i32(9))),
    ("list_ops.relay", ["Cons(1, Cons(2, Nil))", "5"], tup(int_list([]), i32(0), i32(2))),
    ("list_ops.relay", ["Cons(-4, Cons(-7, Nil))", "-10"],
     tup(int_list([16, 49]), i32(65), i32(-4))),
    ("rose_tree.relay", None, tup(i32(7), i32(28), i32(4))),
    ("rose_tree.relay", ["Rose(10, Nil)"], tup(i32(1), i32(10), i32(1))),
    ("rose_tree.relay", ["Rose(1, Cons(Rose(2, Cons(Rose(3, Nil), Nil)), Nil))"],
     tup(i32(3), i32(6), i32(3))),
    ("peano.relay", None, tup(i32(14), i32(12))),
    ("peano.relay", ["0", "5"], tup(i32(10), i32(0))),
    ("peano.relay", ["2", "7"], tup(i32(18), i32(14))),
    ("quicksort.relay", None, int_list([1, 2, 3, 5, 5, 8, 9])),
    ("quicksort.relay", ["Nil"], int_list([])),
    ("quicksort.relay", ["Cons(3, Cons(-1, Cons(2, Nil)))"], int_list([-1, 2, 3])),
    ("bst.relay", None, tup(int_list([1, 3, 3, 4, 5, 7, 8, 9]), i32(4))),
    ("bst.relay", ["Nil"], tup(int_list([]), i32(0))),
    ("bst.relay", ["Cons(1, Cons(2, Cons(3, Nil)))"], tup(int_list([1, 2, 3]), i32(3))),
    ("collatz.relay", None, tup(int_list([6, 3, 10, 5, 16, 8, 4, 2, 1]), i32(9))),
    ("collatz.relay", ["1"], tup(int_list([1]), i32(1))),
    ("collatz.relay", ["0"], tup(int_list([]), i32(0))),
    ("collatz.relay", ["7"],
     tup(int_list([7, 22, 11, 34, 17, 52, 26, 13, 40, 20, 10, 5, 16, 8, 4, 2, 1]), i32(17))),

    ("prelude_tour.relay", None, tup(
        i32(2),                                       # @nth(xs, 1)
        int_list([10, 2, 3]),                         # @update(xs, 0, 10)
        pair_list([(1, 3), (2, 2), (3, 1)]),          # @zip(xs, @rev(xs))
        tup(i32(6), int_list([6, 3, 1])),             # @map_accuml: outputs last-first (TVM)
        tup(i32(6), int_list([6, 5, 3])),             # @map_accumr
        int_list([3, 2, 1]),                          # @unfoldr
        int_list([1, 2, 3]),                          # @unfoldl
        i32(8),                                       # @iterate(double, 3)(1)
        i32(9),                                       # @flip(minus)(1, 10)
        con("Rose", i32(10), con("Cons", con("Rose", i32(20), con("Nil")), con("Nil"))),
        i32(3),                                       # @nat_nth(xs, 2)
        int_list([1, 2, 3, 1, 2, 3]),                 # @concat(xs, xs)
        i32(1), int_list([2, 3]), i32(3),             # @hd, @tl, @length
    )),
    ("prelude_tour.relay", ["Cons(5, Cons(-1, Cons(4, Cons(0, Nil))))"], tup(
        i32(-1),
        int_list([10, -1, 4, 0]),
        pair_list([(5, 0), (-1, 4), (4, -1), (0, 5)]),
        tup(i32(8), int_list([8, 8, 4, 5])),
        tup(i32(8), int_list([8, 3, 4, 0])),
        int_list([3, 2, 1]),
        int_list([1, 2, 3]),
        i32(8),
        i32(9),
        con("Rose", i32(10), con("Cons", con("Rose", i32(20), con("Nil")), con("Nil"))),
        i32(4),
        int_list([5, -1, 4, 0, 5, -1, 4, 0]),
        i32(5), int_list([-1, 4, 0]), i32(4),
    )),

    # closures, references, options, tuples
    ("closures.relay", None, tup(i32(15), i32(21), i32(110), i32(321))),
    ("closures.relay", ["0"], tup(i32(5), i32(1), i32(20), i32(321))),
    ("closures.relay", ["-2"], tup(i32(3), i32(-3), i32(2), i32(321))),
    ("refs.relay", None, tup(i32(5), i32(15))),
    ("refs.relay", ["0"], tup(i32(0), i32(0))),
    ("refs.relay", ["100"], tup(i32(100), i32(5050))),
    ("option.relay", None, tup(i32(3), i32(6))),
    ("option.relay", ["17", "-5"], tup(i32(-3), i32(-6))),  # division truncates toward zero
    ("option.relay", ["-17", "5"], tup(i32(-3), i32(-6))),
    ("tuples.relay", None, tup(tup(i32(2), i32(3)), i32(17), boolean(False))),
    ("tuples.relay", ["-17", "5"], tup(tup(i32(-2), i32(-3)), i32(-17), boolean(False))),
    ("tuples.relay", ["20", "4"], tup(tup(i32(0), i32(5)), i32(20), boolean(True))),

    # tensors
    ("mlp.relay", None, f32([[0.22775607, 0.37550628, 0.39673764]])),
    ("mlp.relay", ["[[0, 0, 0, 0, 0, 0, 0, 0]]", MLP_W1, MLP_B1, MLP_W2, MLP_B2],
     f32([[0.35042042, 0.35394222, 0.2956374]])),
    ("mlp.relay", ["[[-1, 2, 0.5, 0, 1, 1, -2, 0.5]]", MLP_W1, MLP_B1, MLP_W2, MLP_B2],
     f32([[0.3967527, 0.36260465, 0.24064267]])),
    ("rnn.relay", None, f32([[0.74971014, 0.67523754, -0.66895545]])),
    ("rnn.relay", ["0", RNN_WX, RNN_WH, RNN_B], f32([[0.0, 0.0, 0.0]])),
    ("rnn.relay", ["1", RNN_WX, RNN_WH, RNN_B], f32([[-0.19737534, 0.6640368, 0.0]])),
    ("rnn.relay", ["7", RNN_WX, RNN_WH, RNN_B], f32([[0.960819, 0.49738973, -0.93112534]])),
    # a transformer block (layer norm, attention, erf-GELU); NumPy in float32, math.erf
    ("attention.relay", None, f32([
        [[0.56006944, -1.0931375, 0.18714005, 2.1078532, 0.0584047, 0.8679322, -0.536099,
          0.90014213],
         [1.0388126, -0.02942312, -1.0473312, 0.54189533, 0.29892623, -0.3115649, 1.9637833,
          -1.9240658],
         [-0.41732183, 0.8021205, 1.3636738, 1.1507119, -1.3081526, -1.1161225, 0.7567147,
          -0.4147492],
         [-0.47261572, 0.17292887, -0.03339017, 1.0880334, 2.0322292, -1.1093605, -0.01281804,
          0.62461066]]])),
    ("policy.relay", None, i32(2)),
    ("policy.relay", ["[[0.5, -1.5, 0, 0]]", POLICY_W1, POLICY_W2], i32(0)),  # emergency rule
    ("policy.relay", ["[[0.5, 1, -0.5, 0.2]]", POLICY_W1, POLICY_W2_NEGATIVE], i32(-1)),
    ("policy.relay", ["[[1, 0, 1, 0]]", POLICY_W1, POLICY_W2], i32(0)),  # argmax picks 0
    ("grow.relay", None, f32([0.0, 1.0, 4.0, 9.0, 16.0])),
    ("grow.relay", ["1"], f32([0.0])),
    ("grow.relay", ["8"], f32([0.0, 1.0, 4.0, 9.0, 16.0, 25.0, 36.0, 49.0])),
    # quantize rounds x / 0.5 half away from zero; the int32 sums / 8 likewise
    ("quantized_dense.relay", None, f32([[3.0, -7.0]])),
    ("quantized_dense.relay", ["[[10, 20, 30, 40]]", "[[1, 2, 3, 4], [-5, 6, -7, 8]]"],
     f32([[75.0, 45.0]])),
    ("quantized_dense.relay", ["[[2, 0, 0, 0]]", "[[1, 2, 3, 4], [-5, 6, -7, 8]]"],
     f32([[1.0, -3.0]])),  # 4 / 8 and -20 / 8 are ties
    ("dynamic_shapes.relay", None, f32([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])),
    ("dynamic_shapes.relay", ["[[1, 2, 3, 4, 5, 6]]", "[2, 3]"],
     f32([[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]])),
    ("dynamic_shapes.relay", ["[[1, 2, 3, 4, 5, 6]]", "[6, 1]"],
     f32([[2.0], [3.0], [4.0], [5.0], [6.0], [7.0]])),
]

FAILING_CASES = [
    ("option.relay", ["17", "0"], "expect"),          # match? on None
    ("list_ops.relay", ["Nil", "0"], "foldr1"),       # the prelude's @foldr1 on an empty list
    ("prelude_tour.relay", ["Cons(1, Nil)"], "hd"),   # @nth(xs, 1) runs off the end
]
