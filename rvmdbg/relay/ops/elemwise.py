"""Elementwise and broadcasting operators: unary math (erf, and topi's fast_exp, fast_tanh and
fast_erf approximations), binary arithmetic, comparisons, logic,
`where`, `cast`/`copy`, `clip`, and the creation ops (zeros, ones, full, *_like, broadcast_to).

Binary and unary kernels have a 0-d fast path in Python numbers (the VM runs scalar programs
through them millions of times); anything unusual (overflow, NaN, division by zero, float16)
falls back to the NumPy path, which is the reference. Integer overflow wraps, as in TVM.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay.ops.core import (
    BOOL, F32_MAX, FAST_BOOL, FAST_F32, FAST_F64, FAST_INT, FAST_KIND, IN_PLACE, OPS,
    SAME_SIZE_INT, AttrSpec, KernelError, OpTypeError, as_result, broadcast_dims,
    float_intrinsic_refusal, fmt_shape, need_dtype, register, same_dtype, tvm_lowering_refuses,
)
from rvmdbg.relay.types import TensorType

_arr = np.array

# ---------------------------------------------------------------------------------------------
# Type relations


def _binary_rel(what: str, out_dtype: str | None = None):
    def rel(name, args, attrs):
        a, b = args
        dt = same_dtype(name, a, b)
        need_dtype(name, a, what)
        return TensorType(broadcast_dims(name, [a, b]), out_dtype or dt)
    return rel


def _unary_rel(what: str, out_dtype: str | None = None):
    def rel(name, args, attrs):
        (x,) = args
        need_dtype(name, x, what)
        return TensorType(x.shape, out_dtype or x.dtype)
    return rel


# ---------------------------------------------------------------------------------------------
# Python-number functions for the 0-d fast path


def _py_tdiv(name):
    def tdiv(x, y):
        """Integer division truncating toward zero (C, TVM), unlike Python's floor division."""
        if y == 0:
            raise KernelError(_("{op}: integer division by zero").format(op=name))
        q = x // y
        if q < 0 and q * y != x:
            q += 1
        return q
    return tdiv


def _py_floordiv(x, y):
    if y == 0:
        raise KernelError(_("floor_divide: integer division by zero"))
    return x // y


def _py_tmod(name):
    def f(x, y):
        if y == 0:
            raise KernelError(_("{op}: integer division by zero").format(op=name))
        r = abs(x) % abs(y)
        return -r if x < 0 else r
    return f


def _py_floormod(x, y):
    if y == 0:
        raise KernelError(_("floor_mod: integer division by zero"))
    return x % y


# TVM's max(a, b) and min(a, b) are selects on an ordered compare (`a > b ? a : b`, LLVM's
# fcmp ogt, x86's maxps): a NaN on the left gives the right operand, one on the right stays


def _py_fmax(x, y):
    return x if x > y else y


def _py_fmin(x, y):
    return x if x < y else y


def _np_max_select(a, b):
    if a.dtype.kind == "f":
        return np.where(np.greater(a, b), a, b)
    return np.maximum(a, b)


def _np_min_select(a, b):
    if a.dtype.kind == "f":
        return np.where(np.less(a, b), a, b)
    return np.minimum(a, b)


def _py_imax(x, y):
    return x if x >= y else y


def _py_imin(x, y):
    return x if x <= y else y


# ---------------------------------------------------------------------------------------------
# NumPy implementations (broadcasting), used for arrays and as the fast path's fallback


def _np_tdiv(a, b):
    if a.dtype.kind in "iu":
        q = np.floor_divide(a, b)
        # floor -> trunc: add one where the remainder is nonzero and the signs differ
        fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return q + fix.astype(q.dtype) if isinstance(fix, np.ndarray) else q + q.dtype.type(fix)
    return np.divide(a, b)


def _np_trunc_divide(a, b):
    if a.dtype.kind in "iu":
        return _np_tdiv(a, b)
    return np.trunc(np.divide(a, b))


def _np_floor_divide(a, b):
    if a.dtype.kind in "iu":
        return np.floor_divide(a, b)
    return np.floor(np.divide(a, b))  # TVM: floor(a / b) for floats


def _np_floor_mod(a, b):
    if a.dtype.kind in "iu":
        return np.remainder(a, b)
    return a - np.floor(np.divide(a, b)) * b  # TVM: a - floor(a / b) * b for floats


def _np_power(a, b):
    if not a.shape and not b.shape:
        # NumPy's 0-d power can round differently from its array power (float32 11 ** -1 is
        # 1 ulp apart); the array loop is the one that matches topi's powf
        return np.power(a.reshape(1), b.reshape(1)).reshape(())
    return np.power(a, b)


_INT_DIVISION = frozenset(("divide", "floor_divide", "mod", "floor_mod", "trunc_divide",
                           "trunc_mod"))


def _broadcast_error(name, a, b):
    return KernelError(_("{op}: cannot broadcast shapes {a_shape} and {b_shape} at run time").format(op=name, a_shape=fmt_shape(a.shape), b_shape=fmt_shape(b.shape)))


def _make_binary(name, np_fn, py_int=None, py_float=None, out_dtype=None):
    """Kernel + 0-d fast path for a broadcasting binary op. `py_int`/`py_float` compute on Python
    numbers (None: no fast path for that kind); results out of the dtype's range fall back."""
    int_division = name in _INT_DIVISION
    out_dt = np.dtype(out_dtype) if out_dtype else None
    refuse_ints = name == "power"  # TIR's pow is float-only

    def bool_arith(a, b):
        # TVM's bool is a 1-bit unsigned integer: arithmetic wraps modulo 2 (add and subtract
        # are xor, multiply is and), and dividing by False is a division by zero
        r = slow(a.astype(np.uint8), b.astype(np.uint8)) & np.uint8(1)
        return as_result(r != 0, BOOL)

    def slow(a, b):
        if refuse_ints and a.dtype.kind != "f":
            raise tvm_lowering_refuses(name, a.dtype,
                                       _("lowering refuses: power only applies to float"),
                                       _("cast to a float dtype first"))
        if a.dtype == BOOL and out_dt is None:
            return bool_arith(a, b)
        dt = out_dt or a.dtype
        is_ints = a.dtype.kind in "iu"
        if int_division and is_ints and not np.all(b):
            raise KernelError(_("{op}: integer division by zero").format(op=name))
        try:
            if is_ints and not int_division:
                r = np_fn(a, b)  # integer arithmetic wraps silently; no warnings to silence
            else:
                with np.errstate(all="ignore"):
                    r = np_fn(a, b)
        except ValueError:
            raise _broadcast_error(name, a, b) from None
        return as_result(r, dt)

    def scalar(a, b):
        dt = a.dtype
        k = FAST_KIND.get(dt)
        if k is FAST_INT:
            if py_int is not None:
                x = py_int(a.item(), b.item())
                if x is not None:
                    try:
                        return _arr(x, out_dt or dt)
                    except OverflowError:
                        pass  # wraps in the NumPy path
        elif k is FAST_F64 or k is FAST_F32:
            if py_float is not None:
                try:
                    x = py_float(a.item(), b.item())
                except (ZeroDivisionError, OverflowError):
                    x = None
                if x is not None and (k is FAST_F64 or -F32_MAX <= x <= F32_MAX):
                    return _arr(x, dt)
        elif k is FAST_BOOL and py_int is not None and out_dt is not None:
            return _arr(py_int(a.item(), b.item()), out_dt)
        return slow(a, b)

    def kernel(args, attrs):
        a, b = args
        if not a.shape and not b.shape:
            # the int case of `scalar`, inlined: the common case of scalar programs
            if py_int is not None and FAST_KIND.get(a.dtype) is FAST_INT:
                x = py_int(a.item(), b.item())
                if x is not None:
                    try:
                        return _arr(x, out_dt or a.dtype)
                    except OverflowError:
                        pass
                return slow(a, b)
            return scalar(a, b)
        return slow(a, b)

    return kernel, scalar


def _make_compare(name, np_fn, py_fn):
    def slow(a, b):
        try:
            with np.errstate(all="ignore"):
                r = np_fn(a, b)
        except ValueError:
            raise _broadcast_error(name, a, b) from None
        return as_result(r, BOOL)

    def scalar(a, b):
        if a.dtype in FAST_KIND:
            return _arr(py_fn(a.item(), b.item()))
        return slow(a, b)

    def kernel(args, attrs):
        a, b = args
        if not a.shape and not b.shape and a.dtype in FAST_KIND:
            return _arr(py_fn(a.item(), b.item()))
        return slow(a, b)

    return kernel, scalar


def _guarded(name, kernel, scalar, bad_kinds: str, refusal):
    """`kernel` and its 0-d fast path behind a check of the first argument's dtype: where TVM's
    relation accepts a dtype that its lowering has no kernel for (`bad_kinds`, NumPy dtype
    kinds), rvmdbg type-checks the call as TVM does and stops when it runs, with
    `refusal(name, dtype)`, TVM's reason."""
    def checked_kernel(args, attrs):
        dt = args[0].dtype
        if dt.kind in bad_kinds:
            raise refusal(name, dt)
        return kernel(args, attrs)

    def checked_scalar(*xs):
        dt = xs[0].dtype
        if dt.kind in bad_kinds:
            raise refusal(name, dt)
        return scalar(*xs)
    return checked_kernel, checked_scalar


def _logical_refusal(name, dtype):
    # TIR's &&, || and ! take only bool operands
    return tvm_lowering_refuses(name, dtype, _("lowering refuses: a logical operator needs "
                                               "boolean arguments"),
                                _("compare with a value first (e.g. x != 0)"))


def _bitwise_refusal(name, dtype):
    # topi's logical_xor is TIR's ^, a bitwise xor of integers (and bools)
    return tvm_lowering_refuses(name, dtype, _("lowering refuses: its ^ needs integer "
                                               "arguments"),
                                _("compare with a value first (e.g. x != 0)"))


def _unsigned_sign_refusal(name, dtype):
    # topi's sign makes the constant -1 in the tensor's dtype
    return tvm_lowering_refuses(name, dtype, _("lowering refuses: cannot make an unsigned -1"),
                                _("cast to a signed dtype first"))


_BINARY = [
    # name, numpy function, dtype class, Python int fn, Python float fn
    ("add", np.add, "any", operator.add, operator.add),
    ("subtract", np.subtract, "any", operator.sub, operator.sub),
    ("multiply", np.multiply, "any", operator.mul, operator.mul),
    ("divide", _np_tdiv, "any", _py_tdiv("divide"), operator.truediv),
    ("floor_divide", _np_floor_divide, "any", _py_floordiv, None),
    ("trunc_divide", _np_trunc_divide, "any", _py_tdiv("trunc_divide"), None),
    ("mod", np.fmod, "any", _py_tmod("mod"), None),
    ("trunc_mod", np.fmod, "any", _py_tmod("trunc_mod"), None),
    ("floor_mod", _np_floor_mod, "any", _py_floormod, None),
    ("power", _np_power, "any", None, None),
    ("maximum", _np_max_select, "any", _py_imax, _py_fmax),
    ("minimum", _np_min_select, "any", _py_imin, _py_fmin),
]

def _np_ordered_not_equal(a, b):
    # TVM's != on floats is LLVM's ordered fcmp one: false when either side is NaN
    if a.dtype.kind == "f":
        return np.less(a, b) | np.greater(a, b)
    return np.not_equal(a, b)


def _py_ordered_ne(x, y):
    return x < y or x > y


def _nonzero(x):
    """A condition as TVM's `c != 0` tests it: a float NaN is false (ordered compare)."""
    if x.dtype.kind == "f":
        return np.less(x, 0) | np.greater(x, 0)
    return x


_COMPARE = [
    ("equal", np.equal, operator.eq),
    ("not_equal", _np_ordered_not_equal, _py_ordered_ne),
    ("less", np.less, operator.lt),
    ("less_equal", np.less_equal, operator.le),
    ("greater", np.greater, operator.gt),
    ("greater_equal", np.greater_equal, operator.ge),
]

_LOGICAL = [
    ("logical_and", np.logical_and, lambda x, y: x and y),
    ("logical_or", np.logical_or, lambda x, y: x or y),
    ("logical_xor", np.logical_xor, operator.ne),
]

SCALAR_FAST: dict = {}

for _name, _np_fn, _what, _pi, _pf in _BINARY:
    _k, _s = _make_binary(_name, _np_fn, _pi, _pf)
    register(_name, 2, _binary_rel(_what), _k, "broadcast", scalar=_s,
             doc=f"elementwise {_name} with NumPy-style broadcasting; equal dtypes")
    SCALAR_FAST[_name] = _s

for _name, _np_fn, _pf in _COMPARE:
    _k, _s = _make_compare(_name, _np_fn, _pf)
    register(_name, 2, _binary_rel("any", "bool"), _k, "broadcast", scalar=_s,
             doc=f"elementwise {_name} comparison, broadcasting; result bool")
    SCALAR_FAST[_name] = _s

def _by_dtype(for_bool, for_others):
    """A (kernel, scalar) pair that takes `for_bool`'s on bool tensors, else `for_others`'."""
    bk, bs = for_bool
    ok, os_ = for_others

    def kernel(args, attrs):
        return (bk if args[0].dtype == BOOL else ok)(args, attrs)

    def scalar(a, b):
        return (bs if a.dtype == BOOL else os_)(a, b)
    return kernel, scalar


for _name, _np_fn, _pf in _LOGICAL:
    _k, _s = _make_binary(_name, _np_fn, _pf, None, out_dtype="bool")
    if _name == "logical_xor":
        # BroadcastRel accepts any dtype and topi's logical_xor is TIR's ^: on integers, a
        # bitwise xor in their dtype; floats have no ^
        _ik, _is = _make_binary(_name, np.bitwise_xor, operator.xor)
        _k, _s = _by_dtype((_k, _s), _guarded(_name, _ik, _is, "f", _bitwise_refusal))
    else:
        _k, _s = _guarded(_name, _k, _s, "iuf", _logical_refusal)
    register(_name, 2, _binary_rel("any"), _k, "broadcast", scalar=_s,
             doc=f"elementwise {_name} of bool tensors, broadcasting")
    SCALAR_FAST[_name] = _s


# ---------------------------------------------------------------------------------------------
# Unary operators


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_rsqrt(x):
    return 1 / np.sqrt(x)


def _np_round(x):
    # TVM rounds halves away from zero (llvm.round); NumPy rounds them to even
    if x.dtype.kind != "f":
        return x.copy()
    r = np.round(x)
    t = np.trunc(x)
    half = np.abs(x - t) == 0.5
    return np.where(half, t + np.sign(x), r)


# erf in double, vectorised: around each grid point k/64 of [0, 6], the Taylor coefficients
# erf^(m)(x0)/m! (m >= 1: (2/sqrt(pi)) (-1)^(m-1) H_(m-1)(x0) e^(-x0^2) / m!, H the Hermite
# polynomials), then Horner in the distance d to the nearest point. |d| <= 1/128, so nine
# coefficients reach double precision; past 6, erf is 1 in double.
_ERF_STEP = 64
_ERF_ORDER = 9


def _erf_taylor_table() -> list:
    rows = []
    for k in range(6 * _ERF_STEP + 1):
        x0 = k / _ERF_STEP
        scale = 2 / math.sqrt(math.pi) * math.exp(-x0 * x0)
        row, h_prev, h = [math.erf(x0)], 0.0, 1.0
        for m in range(1, _ERF_ORDER):
            row.append(scale * (-1) ** (m - 1) * h / math.factorial(m))
            h_prev, h = h, 2 * x0 * h - 2 * (m - 1) * h_prev
        rows.append(row)
    return np.array(rows).T.copy()  # one row per order, for one gather per Horner step


_ERF_TABLE = _erf_taylor_table()


def _np_erf(x):
    """erf to about 1e-16 in double (float32 results are the nearest float32 to it; topi's
    float32 erf is Eigen's approximation, within a few ulp of that)."""
    x = x.astype(np.float64)
    a = np.minimum(np.abs(x), 6.0)
    k = np.rint(np.nan_to_num(a) * _ERF_STEP).astype(np.intp)
    d = a - k / _ERF_STEP
    r = _ERF_TABLE[_ERF_ORDER - 1].take(k)
    for m in range(_ERF_ORDER - 2, -1, -1):
        r *= d
        r += _ERF_TABLE[m].take(k)
    return np.where(np.isnan(x), x, np.copysign(np.minimum(r, 1.0), x))


# topi's fast approximations, step by step in the dtype as TVM's kernels compute them
# (float32; fast_erf float16 too; any other dtype falls back to the exact function, as topi's)
_F32 = np.float32
_FAST_EXP = dict(hi=_F32(88.3762626647950), lo=_F32(-88.3762626647949),
                 log2e=_F32(1.44269504088896341), ln2=_F32(0.6931471805599453),
                 p=[_F32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                      4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)])
_FAST_TANH_P = (4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05,
                5.12229709037114e-08, -8.60467152213735e-11, 2.00018790482477e-13,
                -2.76076847742355e-16)   # x^1, x^3, ..., x^13
_FAST_TANH_Q = (4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04,
                1.19825839466702e-06)    # x^0, x^2, x^4, x^6
_FAST_ERF_P = (-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04,
               -5.69250639462346e-05, -2.10102402082508e-06, 2.77068142495902e-08,
               -2.72614225801306e-10)
_FAST_ERF_Q = (-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
               -2.13374055278905e-04, -1.45660718464996e-05)


def _np_fast_exp(x):
    if x.dtype != _F32:
        return np.exp(x)
    c = _FAST_EXP
    # topi's clamp max(min(x, hi), lo) is two ordered selects: a NaN becomes hi (the final
    # max(.., x) gives the NaN back)
    xc = _np_max_select(_np_min_select(x, c["hi"]), c["lo"])
    n = np.floor(xc * c["log2e"] + _F32(0.5))
    f = xc - n * c["ln2"]
    p = c["p"]
    y = (((((p[0] * f + p[1]) * f + p[2]) * f + p[3]) * f + p[4]) * f + p[5]) * f * f + f + _F32(1)
    # 2^n built from its exponent bits
    scale = ((n + _F32(127)).astype(np.int32) << 23).view(_F32)
    return _np_max_select(scale * y, x)


def _odd_over_even(x, num, den, dt):
    """x * P(x^2) / Q(x^2), Horner from the highest power, every step in dtype dt."""
    x2 = x * x
    p = dt.type(num[-1])
    for a in reversed(num[:-1]):
        p = x2 * p + dt.type(a)
    q = dt.type(den[-1])
    for b in reversed(den[:-1]):
        q = x2 * q + dt.type(b)
    return x * p / q


def _np_fast_tanh(x):
    if x.dtype != _F32:
        return _np_tanh(x)  # topi's fast_tanh is tanh's own for other dtypes
    # topi writes maximum(-9, minimum(9, x)): with the constants on the left a NaN stays NaN
    xc = _np_max_select(np.full_like(x, -9), _np_min_select(np.full_like(x, 9), x))
    return _odd_over_even(xc, _FAST_TANH_P, _FAST_TANH_Q, x.dtype)


def _np_fast_erf(x):
    if x.dtype == np.float16:
        # topi evaluates it in float16, which strays past 1 (1.04 at x = 5); float32, rounded once
        return _np_fast_erf(x.astype(_F32)).astype(np.float16)
    if x.dtype != _F32:
        return _np_erf(x)
    # max(min(x, 4), -4) as ordered selects: a NaN becomes 4, so fast_erf(NaN) is erf's 1
    xc = _np_max_select(_np_min_select(x, _F32(4)), _F32(-4))
    return _odd_over_even(xc, _FAST_ERF_P, _FAST_ERF_Q, x.dtype)


def _np_int_identity(fn):
    def f(x):
        return x.copy() if x.dtype.kind in "iub" else fn(x)
    return f


def _np_negative(x):
    # TVM's negative is 0 - x: on a 1-bit bool that is x again
    return x.copy() if x.dtype == BOOL else np.negative(x)


_RELU_BITS_FROM = 2048   # below this many values the select's two calls cost less
# NumPy (2.4) runs maximum against a scalar without its vector loop: 233 us on 790,000 int32
# against 103 us for blocks of values against a block of zeros (measured); the block fits L2
_RELU_BLOCK = 16384
_ZERO_BLOCKS = {t: np.zeros(_RELU_BLOCK, t) for t in set(SAME_SIZE_INT.values())}


def _np_relu(x, out=None):
    """topi's relu is max(x, 0), the select `x > 0 ? x : 0`: NaN and -0.0 give +0 (see
    _np_max_select). For floats it runs on the bits: as integers of the same width, every
    value with the sign bit set (negatives, -0.0, negative NaNs) is below 0 and becomes the
    bits of +0.0, positive numbers keep their order; a positive NaN (bits above +inf's) is
    set to +0 after. NumPy's `where` over a mask of mixed signs (an activation's) runs a
    branch per element: 2.8 ms on 790,000 floats, against 0.15 ms here (measured: the max
    over blocks against a block of zeros, then one max reduction looking for a NaN)."""
    itype = SAME_SIZE_INT.get(x.dtype.itemsize) if x.dtype.kind == "f" else None
    if itype is None or x.size < _RELU_BITS_FROM:
        return _np_max_select(x, np.zeros((), x.dtype))
    x = np.ascontiguousarray(x)
    bits = x.view(itype).reshape(-1)
    out = np.empty_like(bits) if out is None else out.view(itype).reshape(-1)
    whole = bits.size - bits.size % _RELU_BLOCK
    if whole:
        np.maximum(bits[:whole].reshape(-1, _RELU_BLOCK), _ZERO_BLOCKS[itype],
                   out=out[:whole].reshape(-1, _RELU_BLOCK))
    np.maximum(bits[whole:], 0, out=out[whole:])
    inf = np.array(np.inf, x.dtype).view(itype)
    if out.max() > inf:
        out[out > inf] = 0
    return out.view(x.dtype).reshape(x.shape)


def _relu_in_place(args, attrs):
    x = args[0]
    if x.size < _RELU_BITS_FROM or not x.flags.c_contiguous:
        return _np_relu(x)
    _np_relu(x, out=x)   # each value's bits are read before they are written
    return x


IN_PLACE["nn.relu"] = _relu_in_place


def _binary_in_place(name, np_fn):
    def into_first(args, attrs):
        a, b = args
        if b.dtype != a.dtype:
            return OPS[name].kernel(args, attrs)   # its refusal
        with np.errstate(all="ignore"):
            return np_fn(a, b, out=a)
    return into_first


for _name, _fn in (("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply)):
    IN_PLACE[_name] = _binary_in_place(_name, _fn)


def _py_relu(x):
    return x if x > 0 else type(x)(0)


def _py_sign(x):
    return (x > 0) - (x < 0)


def _np_sign(x):
    if x.dtype.kind != "f":
        return np.sign(x)
    # topi's sign is x > 0 ? 1 : (x < 0 ? -1 : 0) with ordered compares: NaN and -0.0 give +0
    return np.where(x > 0, x.dtype.type(1), np.where(x < 0, x.dtype.type(-1), x.dtype.type(0)))


def _np_tanh(x):
    # LLVM's legalization of tir.tanh (target/llvm/intrin_rule_llvm.cc), in the dtype:
    # x >= 0 ? (1 - e^-2x) / (1 + e^-2x) : (e^2x - 1) / (e^2x + 1); tanh(-0.0) is +0.0
    one, two = x.dtype.type(1), x.dtype.type(2)
    with np.errstate(all="ignore"):
        en = np.exp(-two * x)
        ep = np.exp(two * x)
        pos = (one - en) / (one + en)
        neg = (ep - one) / (ep + one)
    return np.where(x >= 0, pos, neg).astype(x.dtype, copy=False)


def _make_unary(name, np_fn, py_int=None, py_float=None, out_dtype=None):
    out_dt = np.dtype(out_dtype) if out_dtype else None

    def slow(x):
        dt = out_dt or x.dtype
        if x.dtype.kind == "f":
            with np.errstate(all="ignore"):
                return as_result(np_fn(x), dt)
        return as_result(np_fn(x), dt)

    def scalar(x):
        k = FAST_KIND.get(x.dtype)
        if k is FAST_INT or k is FAST_BOOL:
            if py_int is not None:
                try:
                    return _arr(py_int(x.item()), out_dt or x.dtype)
                except OverflowError:
                    pass
        elif k is not None and py_float is not None:
            v = py_float(x.item())
            if v == v:  # NaN goes the NumPy way so payloads/signs match
                return _arr(v, out_dt or x.dtype)
        return slow(x)

    def kernel(args, attrs):
        x = args[0]
        if not x.shape:
            return scalar(x)
        return slow(x)

    return kernel, scalar


_UNARY = [
    # name, numpy function, dtype class, Python int fn, Python float fn, output dtype
    ("negative", _np_negative, "numeric", operator.neg, operator.neg, None),
    ("abs", np.abs, "numeric", abs, abs, None),
    ("sign", _np_sign, "numeric", _py_sign, None, None),
    ("exp", np.exp, "float", None, None, None),
    ("log", np.log, "float", None, None, None),
    ("log2", np.log2, "float", None, None, None),
    ("log10", np.log10, "float", None, None, None),
    ("sqrt", np.sqrt, "float", None, None, None),
    ("rsqrt", _np_rsqrt, "float", None, None, None),
    ("sin", np.sin, "float", None, None, None),
    ("cos", np.cos, "float", None, None, None),
    ("tan", np.tan, "float", None, None, None),
    ("tanh", _np_tanh, "float", None, None, None),
    ("sinh", np.sinh, "float", None, None, None),
    ("cosh", np.cosh, "float", None, None, None),
    ("asin", np.arcsin, "float", None, None, None),
    ("acos", np.arccos, "float", None, None, None),
    ("atan", np.arctan, "float", None, None, None),
    ("asinh", np.arcsinh, "float", None, None, None),
    ("acosh", np.arccosh, "float", None, None, None),
    ("atanh", np.arctanh, "float", None, None, None),
    ("sigmoid", _np_sigmoid, "float", None, None, None),
    ("erf", _np_erf, "float", None, math.erf, None),
    ("fast_exp", _np_fast_exp, "float", None, None, None),
    ("fast_tanh", _np_fast_tanh, "float", None, None, None),
    ("fast_erf", _np_fast_erf, "float", None, None, None),
    ("floor", _np_int_identity(np.floor), "numeric", operator.pos, None, None),
    ("ceil", _np_int_identity(np.ceil), "numeric", operator.pos, None, None),
    ("trunc", _np_int_identity(np.trunc), "numeric", operator.pos, None, None),
    ("round", _np_round, "numeric", operator.pos, None, None),
    ("isnan", np.isnan, "numeric", lambda x: False, None, "bool"),
    ("isinf", np.isinf, "numeric", lambda x: False, None, "bool"),
    ("isfinite", np.isfinite, "numeric", lambda x: True, None, "bool"),
    ("logical_not", np.logical_not, "bool", operator.not_, None, None),
    ("nn.relu", _np_relu, "numeric", _py_relu, _py_relu, None),
]

for _name, _np_fn, _what, _pi, _pf, _od in _UNARY:
    _k, _s = _make_unary(_name, _np_fn, _pi, _pf, _od)
    if _what == "float":
        # TVM's relation is IdentityRel (an integer tensor type-checks); lowering then calls
        # a float intrinsic
        _k, _s = _guarded(_name, _k, _s, "biu", float_intrinsic_refusal)
    elif _what == "bool":
        _k, _s = _guarded(_name, _k, _s, "iuf", _logical_refusal)
    elif _name == "sign":
        _k, _s = _guarded(_name, _k, _s, "bu", _unsigned_sign_refusal)
    _what = "any"
    register(_name, 1, _unary_rel(_what, _od), _k, "elemwise", scalar=_s,
             doc=f"elementwise {_name}")
    SCALAR_FAST[_name] = _s


def _copy_kernel(args, attrs):
    return args[0].copy()


def _copy_scalar(x):
    return x.copy()


register("copy", 1, _unary_rel("any"), _copy_kernel, "elemwise", scalar=_copy_scalar,
         doc="a fresh copy of the tensor")
SCALAR_FAST["copy"] = _copy_scalar


# ---------------------------------------------------------------------------------------------
# cast, clip, where


def _cast_rel(name, args, attrs):
    return TensorType(args[0].shape, attrs["dtype"])


def _cast_kernel(args, attrs):
    x = args[0]
    dt = attrs["dtype"]
    if dt == "bool":
        return as_result(_nonzero(x) != 0, BOOL)  # TVM: x != 0, NaN gives false
    if x.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return as_result(x.astype(dt), np.dtype(dt))
    return x.astype(dt)


register("cast", 1, _cast_rel, _cast_kernel, "elemwise", attrs=[AttrSpec("dtype", "dtype")],
         doc="convert to dtype (floats truncate toward zero when cast to integers)")


def _bits(dt: np.dtype) -> int:
    return 1 if dt == BOOL else dt.itemsize * 8  # TVM's bool is 1 bit


def _reinterpret_kernel(args, attrs):
    # TVM: CastRel (any dtype, the data's shape); the bit widths must match when tir lowers it
    x = args[0]
    dt = np.dtype(attrs["dtype"])
    if _bits(x.dtype) != _bits(dt):
        raise KernelError(_("reinterpret: TVM cannot reinterpret {src} ({a} bits) as {dst} "
                            "({b} bits): the bit widths must match").format(
            src=x.dtype.name, a=_bits(x.dtype), dst=dt.name, b=_bits(dt)))
    if dt == BOOL:
        return as_result(np.array(x, copy=True), BOOL)
    return as_result(np.array(x, copy=True).view(dt), dt)  # a 0-d tensor stays 0-d


register("reinterpret", 1, _cast_rel, _reinterpret_kernel, "elemwise",
         attrs=[AttrSpec("dtype", "dtype")],
         doc="reinterpret(x, dtype): the same bits read as dtype (widths must match)")


def _cast_like_rel(name, args, attrs):
    return TensorType(args[0].shape, args[1].dtype)


def _cast_like_kernel(args, attrs):
    x, like = args
    if like.dtype == BOOL:
        return as_result(_nonzero(x) != 0, BOOL)
    with np.errstate(all="ignore"):
        return x.astype(like.dtype)


register("cast_like", 2, _cast_like_rel, _cast_like_kernel, "elemwise",
         doc="convert to the dtype of the second argument")


def _clip_rel(name, args, attrs):
    (x,) = args  # TVM's relation is IdentityRel: any dtype
    return TensorType(x.shape, x.dtype)


def _int_range(dt: np.dtype) -> tuple:
    if dt.kind == "b":
        return 0, 1
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def _clip_bound(v: float, dt: np.dtype):
    """An attribute bound converted to the tensor's dtype (saturating for integers)."""
    if dt.kind in "biu":
        lo, hi = _int_range(dt)
        if v != v:
            return dt.type(0)
        v = min(max(v, float(lo)), float(hi))
        return dt.type(int(v))
    with np.errstate(all="ignore"):
        return dt.type(v)


def _clip_note(args, attrs):
    """TVM's kernel makes each bound a constant of the tensor's dtype (truncated toward zero),
    and lowering refuses one that does not fit; rvmdbg saturates it instead."""
    dt = np.dtype(args[0].dtype)
    if dt.kind not in "biu":
        return None
    lo, hi = _int_range(dt)
    for key in ("a_min", "a_max"):
        v = attrs[key]
        if v == v and abs(v) != float("inf") and not lo <= int(v) <= hi:
            return _("its lowering makes {key}={value} a constant of {dtype}, which does not "
                     "fit (rvmdbg saturates it to {lo}..{hi})").format(
                         key=key, value=v, dtype=dt.name, lo=lo, hi=hi)
    return None


def _clip_kernel(args, attrs):
    x = args[0]
    dt = x.dtype
    lo = _clip_bound(attrs["a_min"], dt)
    hi = _clip_bound(attrs["a_max"], dt)
    # TVM's order: max(min(x, a_max), a_min), so a_min wins if the bounds cross (and a NaN
    # becomes a_max: both are selects on ordered compares)
    hi, lo = np.asarray(hi), np.asarray(lo)
    return as_result(_np_max_select(_np_min_select(x, hi), lo), dt)


register("clip", 1, _clip_rel, _clip_kernel, "elemwise", tvm_note=_clip_note,
         attrs=[AttrSpec("a_min", "float"), AttrSpec("a_max", "float")],
         doc="clamp every element into [a_min, a_max]")


def _where_rel(name, args, attrs):
    cond, x, y = args
    dt = same_dtype(name, x, y)
    return TensorType(broadcast_dims(name, [cond, x, y]), dt)


def _where_kernel(args, attrs):
    cond, x, y = args
    if not cond.shape and not x.shape and not y.shape:
        c = cond.item()
        return (x if (c < 0 or c > 0) else y).copy()
    try:
        return as_result(np.where(_nonzero(cond), x, y), x.dtype)
    except ValueError:
        raise KernelError(_("where: cannot broadcast shapes {cond_shape}, {x_shape} and "
                            "{y_shape} at run time").format(cond_shape=fmt_shape(cond.shape), x_shape=fmt_shape(x.shape), y_shape=fmt_shape(y.shape))) from None


register("where", 3, _where_rel, _where_kernel, "broadcast",
         doc="where(cond, x, y): x where cond is nonzero, else y; all three broadcast")


# ---------------------------------------------------------------------------------------------
# Tensor creation


def _check_shape_attr(name, shape):
    if any(d < 0 for d in shape):
        raise OpTypeError(_("{op}: shape {shape} has a negative dimension").format(
                op=name, shape=list(shape)))
    return tuple(shape)


def _init_rel(name, args, attrs):
    return TensorType(_check_shape_attr(name, attrs["shape"]), attrs["dtype"])


def _make_init(fill):
    def kernel(args, attrs):
        return np.full(tuple(attrs["shape"]), fill, dtype=attrs["dtype"])
    return kernel


_INIT_ATTRS = [AttrSpec("shape", "int_list"), AttrSpec("dtype", "dtype", "float32")]
register("zeros", 0, _init_rel, _make_init(0), "elemwise", attrs=_INIT_ATTRS,
         doc="a tensor of zeros of the given shape and dtype")
register("ones", 0, _init_rel, _make_init(1), "elemwise", attrs=_INIT_ATTRS,
         doc="a tensor of ones of the given shape and dtype")


def _like_kernel(fill):
    def kernel(args, attrs):
        x = args[0]
        return np.full(x.shape, fill, dtype=x.dtype)
    return kernel


register("zeros_like", 1, _unary_rel("any"), _like_kernel(0), "elemwise",
         doc="zeros of the argument's shape and dtype")
register("ones_like", 1, _unary_rel("any"), _like_kernel(1), "elemwise",
         doc="ones of the argument's shape and dtype")


def _full_rel(name, args, attrs):
    (fill,) = args
    if fill.shape != ():
        raise OpTypeError(_("{op}: the fill value must be a scalar (0-d tensor), got "
                            "{fill}").format(op=name, fill=fill))
    return TensorType(_check_shape_attr(name, attrs["shape"]), attrs["dtype"] or fill.dtype)


def _full_kernel(args, attrs):
    fill = args[0]
    dt = attrs["dtype"] or fill.dtype
    with np.errstate(all="ignore"):
        return np.full(tuple(attrs["shape"]), fill, dtype=dt)


register("full", 1, _full_rel, _full_kernel, "elemwise",
         attrs=[AttrSpec("shape", "int_list"), AttrSpec("dtype", "dtype_or_none", None)],
         doc="full(fill_value, shape=, dtype=): a tensor filled with a 0-d value")


def _full_like_rel(name, args, attrs):
    x, fill = args
    if fill.shape != ():
        raise OpTypeError(_("{op}: the fill value must be a scalar (0-d tensor), got "
                            "{fill}").format(op=name, fill=fill))
    return TensorType(x.shape, x.dtype)


def _full_like_kernel(args, attrs):
    x, fill = args
    with np.errstate(all="ignore"):
        return np.full(x.shape, fill, dtype=x.dtype)


register("full_like", 2, _full_like_rel, _full_like_kernel, "elemwise",
         doc="full_like(data, fill_value): data's shape and dtype, filled with a 0-d value")


def _broadcast_to_rel(name, args, attrs):
    (x,) = args
    target = TensorType(_check_shape_attr(name, attrs["shape"]), x.dtype)
    out = broadcast_dims(name, [x, target])
    if len(out) != len(target.shape) or any(o != t for o, t in zip(out, target.shape)
                                            if o is not None):
        raise OpTypeError(_("{op}: cannot broadcast {x} to shape {target_shape}").format(
                op=name, x=x, target_shape=fmt_shape(target.shape)))
    return target


def _broadcast_to_kernel(args, attrs):
    x = args[0]
    try:
        return np.broadcast_to(x, tuple(attrs["shape"])).copy()
    except ValueError:
        raise KernelError(_("broadcast_to: cannot broadcast shape {x_shape} to {target_shape} at "
                            "run time").format(x_shape=fmt_shape(x.shape), target_shape=fmt_shape(tuple(attrs['shape'])))) from None


register("broadcast_to", 1, _broadcast_to_rel, _broadcast_to_kernel, "broadcast",
         attrs=[AttrSpec("shape", "int_list")],
         doc="broadcast_to(x, shape=): x broadcast NumPy-style to shape")
