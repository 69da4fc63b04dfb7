"""Bitwise operators: bitwise_and, bitwise_or, bitwise_xor, bitwise_not, left_shift and
right_shift (TVM's BroadcastRel and IdentityRel, patterns broadcast and elemwise).

topi computes them with TIR's `&`, `|`, `^`, `~`, `<<` and `>>`, which take only integers (bool is
TVM's 1-bit unsigned integer, so it is accepted: `&`, `|`, `^` are and, or, xor, `~` is not, a
shift keeps the low bit); a float tensor type-checks and its lowering refuses it. `>>` of a
signed integer is arithmetic (sign-filling), of an unsigned one logical; a shift by a negative
amount or by the dtype's width or more, undefined in LLVM, gives the shift's limit (ONNX's
definition): 0 to the left, the sign to the right.
"""
from __future__ import annotations

import operator

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import BOOL, register, tvm_lowering_refuses
from rvmdbg.relay.ops.elemwise import (
    SCALAR_FAST, _binary_rel, _guarded, _make_binary, _make_unary, _unary_rel,
)


def _integer_refusal(name, dtype):
    # TIR's type_check_integer_args: &, |, ^, ~, << and >> take integers (bool is uint1)
    return tvm_lowering_refuses(name, dtype, _("lowering refuses: a bitwise operator needs "
                                               "integer arguments"),
                                _("cast to an integer dtype first"))


def _shift(name, np_fn):
    """A shift in the dtype; bools shift as 1-bit integers (only their low bit survives).

    An amount outside [0, width) is undefined in TVM's lowering (LLVM's poison); rvmdbg gives
    the shift's limit, as ONNX's BitShift defines it: 0 for a left shift, the sign for a right
    one (docs/differences.md)."""
    left = np_fn is np.left_shift

    def fn(a, b):
        bits = 1 if a.dtype == BOOL else a.dtype.itemsize * 8
        amount = np.asarray(b)
        if a.dtype == BOOL:
            r = np_fn(a.astype(np.uint8), amount.astype(np.uint8)) & np.uint8(1)
            return r != 0
        wild = (amount < 0) | (amount >= bits)
        if not np.any(wild):
            return np_fn(a, amount.astype(a.dtype))
        safe = np.where(wild, 0, amount).astype(a.dtype)
        shifted = np_fn(a, safe)
        limit = np.zeros_like(a) if left or a.dtype.kind == "u" else np.where(
            a < 0, a.dtype.type(-1), a.dtype.type(0))
        return np.where(wild, limit, shifted)
    return fn


_BITWISE = [
    # name, numpy function on same-dtype arrays, Python int function
    ("bitwise_and", np.bitwise_and, operator.and_),
    ("bitwise_or", np.bitwise_or, operator.or_),
    ("bitwise_xor", np.bitwise_xor, operator.xor),
    ("left_shift", _shift("left_shift", np.left_shift), None),
    ("right_shift", _shift("right_shift", np.right_shift), None),
]

for _name, _np_fn, _pi in _BITWISE:
    _k, _s = _make_binary(_name, _np_fn, _pi)
    _k, _s = _guarded(_name, _k, _s, "f", _integer_refusal)
    register(_name, 2, _binary_rel("any"), _k, "broadcast", scalar=_s,
             doc=f"elementwise {_name} of integer tensors, broadcasting")
    SCALAR_FAST[_name] = _s


def _np_bitwise_not(x):
    return np.logical_not(x) if x.dtype == BOOL else np.invert(x)


_k, _s = _make_unary("bitwise_not", _np_bitwise_not, None, None)
_k, _s = _guarded("bitwise_not", _k, _s, "f", _integer_refusal)
register("bitwise_not", 1, _unary_rel("any"), _k, "elemwise", scalar=_s,
         doc="elementwise bitwise not of an integer tensor")
SCALAR_FAST["bitwise_not"] = _s
