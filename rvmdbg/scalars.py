"""Cheap scalars: how the VM and the reference interpreter hold a 0-d tensor of a scalar dtype,
and the arithmetic they do on it without NumPy's array machinery.

A 0-d tensor of a scalar dtype (bool, int8..int64, uint8..uint64, float16/32/64) is held at run
time as a NumPy scalar (`np.int32(3)`, `np.float32(0.5)`, `np.True_`) instead of a 0-d array:
it has the same `dtype`, `shape` (`()`), `ndim` and `item()`, prints and converts to JSON the
same (`rvmdbg.values`), and NumPy's scalar arithmetic on two scalars of one dtype costs about
25 ns where a fresh 0-d array costs about 300 ns. Operator kernels (`rvmdbg.relay.ops`) keep
their contract, arrays in and arrays out: `to_array` and `to_runtime` are the boundary, which
`rvmdbg.vm.kernels` and the interpreter cross for every kernel without a scalar path here.

`scalar_op(name, dtypes)` gives the scalar path of an elementwise operator for one argument
dtype signature, or None: a function of NumPy scalars with exactly the operator kernel's result
(int32 wraps around, float32 rounds at float32, comparisons give bool). Only operators whose
NumPy scalar operation is the kernel's own are listed; everything else (integer division and
modulo with their zero checks, powers, float minimum/maximum with NaN) takes the kernel, through
the boundary. `tests/test_scalars.py` compares each entry with the kernel on random operands.

NumPy reports integer overflow of scalar arithmetic as a RuntimeWarning (an array operation
wraps silently): callers run scalar code inside `quiet()`, entered once per run, not per op.
"""
from __future__ import annotations

import operator
from contextlib import contextmanager

import numpy as np

# The scalar types of Relay's scalar dtypes: a 0-d tensor of one of these dtypes is held as one.
SCALAR_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64")
SCALAR_TYPES = frozenset(np.dtype(d).type for d in SCALAR_DTYPES)


def is_scalar(v) -> bool:
    """True for a value held as a NumPy scalar (a 0-d tensor of a scalar dtype)."""
    return type(v) in SCALAR_TYPES


def to_runtime(v):
    """A 0-d array of a scalar dtype as its NumPy scalar; any other value as it is."""
    if type(v) is np.ndarray and not v.shape and v.dtype.type in SCALAR_TYPES:
        return v[()]
    return v


def to_array(v):
    """A NumPy scalar as a 0-d array (what operator kernels take); any other value as it is."""
    if type(v) in SCALAR_TYPES:
        return np.asarray(v)
    return v


def scalar(value, dtype) -> np.generic:
    """The runtime value of a 0-d tensor of `dtype` holding `value` (NumPy's conversion rules:
    use it for values already in range)."""
    return np.dtype(dtype).type(value)


@contextmanager
def quiet():
    """NumPy's floating-point and overflow reports off: scalar integer arithmetic wraps around
    as array arithmetic does, without a RuntimeWarning."""
    with np.errstate(all="ignore"):
        yield


class QuietSwitch:
    """`quiet()` for one call on a hot path (the VM's single step): entering np.errstate costs
    about 2 us, setting NumPy's error-state context variable directly about 0.2 us. Falls back
    to np.errstate where NumPy does not expose the variable."""

    def __init__(self):
        try:
            from numpy._core import _ufunc_config
            var = _ufunc_config._extobj_contextvar
            with np.errstate(all="ignore"):
                ignore = var.get()
        except (ImportError, AttributeError, LookupError):
            var = ignore = None
        self._var, self._ignore = var, ignore

    def call(self, fn, arg):
        """fn(arg) with NumPy's error reports off."""
        var = self._var
        if var is None:
            with np.errstate(all="ignore"):
                return fn(arg)
        token = var.set(self._ignore)
        try:
            return fn(arg)
        finally:
            var.reset(token)

    def enter(self):
        """Turn the reports off until `leave(token)` with what this returns (in a `finally`)."""
        if self._var is None:
            errors = np.errstate(all="ignore")
            errors.__enter__()
            return errors
        return self._var.set(self._ignore)

    def leave(self, token) -> None:
        if self._var is None:
            token.__exit__(None, None, None)
        else:
            self._var.reset(token)


# ---------------------------------------------------------------- scalar paths of operators

_INT = frozenset("iu")
_NUMERIC = frozenset("iuf")
_ANY = frozenset("biuf")


def _max_int(a, b):
    return a if a >= b else b


def _min_int(a, b):
    return a if a <= b else b


def _copy(a):
    return a  # scalars are immutable: the copy is the value itself


# name -> (function on scalars, dtype kinds it is exact for)
_OPS = {
    "add": (operator.add, _NUMERIC),
    "subtract": (operator.sub, _NUMERIC),
    "multiply": (operator.mul, _NUMERIC),
    "divide": (operator.truediv, frozenset("f")),  # integer division truncates: the kernel
    "equal": (operator.eq, _ANY),
    "not_equal": (operator.ne, frozenset("biu")),  # float NaN: TVM's ordered compare, the kernel
    "less": (operator.lt, _ANY),
    "less_equal": (operator.le, _ANY),
    "greater": (operator.gt, _ANY),
    "greater_equal": (operator.ge, _ANY),
    "logical_and": (operator.and_, frozenset("b")),
    "logical_or": (operator.or_, frozenset("b")),
    "logical_xor": (operator.xor, frozenset("b")),
    "logical_not": (operator.invert, frozenset("b")),
    "maximum": (_max_int, _INT),
    "minimum": (_min_int, _INT),
    "negative": (operator.neg, frozenset("if")),
    "copy": (_copy, _ANY),
}

SCALAR_OPS = frozenset(_OPS)


def scalar_op(name: str, dtypes):
    """The scalar path of operator `name` for arguments of `dtypes` (all equal, all scalar
    dtypes), or None when the kernel must compute it."""
    entry = _OPS.get(name)
    if entry is None or not dtypes:
        return None
    fn, kinds = entry
    first = np.dtype(dtypes[0])
    if first.type not in SCALAR_TYPES or first.kind not in kinds:
        return None
    if any(np.dtype(d) != first for d in dtypes[1:]):
        return None
    return fn


__all__ = ["SCALAR_DTYPES", "SCALAR_TYPES", "SCALAR_OPS", "QuietSwitch", "is_scalar",
           "quiet", "scalar", "scalar_op", "to_array", "to_runtime"]
