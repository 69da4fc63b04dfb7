"""The operator registry's core: errors, attribute specs, `OpDef`, attribute normalisation, and
the shape/dtype helpers every operator family's type relation and kernel share.

Conventions the operator files follow:
- a type relation implementation is `rel(name, arg_types, attrs) -> Type`; `register` binds the
  name, and `OpDef` checks the argument count and kinds and normalises the attributes first;
- a kernel is `kernel(args, attrs) -> np.ndarray | tuple` built by a factory that knows the op's
  name; it returns a fresh array of exactly the dtype the type relation gives (see `as_result`);
- validation belongs in the type relation; kernels only check what only shows at run time.
"""
from __future__ import annotations

import difflib
import functools

import numpy as np

from rvmdbg.i18n import N_, _, ngettext
from rvmdbg.relay.types import DTYPE_ALIASES, DTYPES, TensorType, TupleType, Type

# ---------------------------------------------------------------------------------------------
# Errors


class OpError(Exception):
    """Base of the operator errors; `message` is the text without location."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class OpTypeError(OpError):
    """A call's argument types do not fit the operator (wrong rank, dtype, shape)."""


class OpAttrError(OpError):
    """An attribute is unknown, missing or of the wrong kind; `attr_name` names it (or None)."""

    def __init__(self, message: str, attr_name: str | None = None):
        super().__init__(message)
        self.attr_name = attr_name


class KernelError(OpError):
    """A failure that only shows at run time (a `?` dimension mismatch, division by zero...)."""


# ---------------------------------------------------------------------------------------------
# Attribute specs


class _Required:
    __slots__ = ()

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()

# kind -> the phrase used in "attribute 'x' must be ..." messages
ATTR_KINDS = {
    "int": "an integer",
    "float": "a number",
    "bool": "True or False",
    "str": "a string",
    "dtype": "a dtype name",
    "dtype_or_none": "a dtype name or None",
    "int_list": "a list of integers",
    "int_list_or_none": "an integer, a list of integers or None",
    "int_or_none": "an integer or None",
    "float_or_none": "a number or None",
    "int_or_int_list": "an integer or a list of integers",
    "any": "any value",
}
# kind -> the whole message, one sentence per kind so that it translates as one
_KIND_MESSAGES = {
    "int": N_("{op}: attribute '{attr}' must be an integer, got {value}"),
    "float": N_("{op}: attribute '{attr}' must be a number, got {value}"),
    "bool": N_("{op}: attribute '{attr}' must be True or False, got {value}"),
    "str": N_("{op}: attribute '{attr}' must be a string, got {value}"),
    "dtype": N_("{op}: attribute '{attr}' must be a dtype name, got {value}"),
    "dtype_or_none": N_("{op}: attribute '{attr}' must be a dtype name or None, got {value}"),
    "int_list": N_("{op}: attribute '{attr}' must be a list of integers, got {value}"),
    "int_list_or_none": N_("{op}: attribute '{attr}' must be an integer, a list of integers or "
                           "None, got {value}"),
    "int_or_none": N_("{op}: attribute '{attr}' must be an integer or None, got {value}"),
    "float_or_none": N_("{op}: attribute '{attr}' must be a number or None, got {value}"),
    "int_or_int_list": N_("{op}: attribute '{attr}' must be an integer or a list of integers, "
                          "got {value}"),
}


class AttrSpec:
    """One attribute of an operator: its name, kind (a key of ATTR_KINDS) and default."""

    __slots__ = ("name", "kind", "default", "choices")

    def __init__(self, name: str, kind: str, default=REQUIRED, choices: tuple | None = None):
        if kind not in ATTR_KINDS:
            raise ValueError(f"unknown attribute kind {kind!r}")  # not shown to users
        self.name = name
        self.kind = kind
        self.default = default
        self.choices = tuple(choices) if choices is not None else None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def __repr__(self) -> str:
        d = "" if self.required else f", default={self.default!r}"
        return f"AttrSpec({self.name!r}, {self.kind!r}{d})"


class Attrs(dict):
    """A dict of attributes already normalised for the operator `op_name` (all present, converted).

    Kernels and type relations receive this; a plain dict passed to them is normalised first.
    """

    __slots__ = ("op_name",)

    def __init__(self, op_name: str = "", *args, **kw):
        super().__init__(*args, **kw)
        self.op_name = op_name


# ---------------------------------------------------------------------------------------------
# OpDef and the registry

# TVM's fusion pattern kinds (OpPatternKind), with TVM's numbers: lower fuses more freely.
PATTERNS = {"elemwise": 0, "broadcast": 1, "injective": 2, "comm_reduce": 3,
            "out_elemwise_fusable": 4, "opaque": 8}

OPS: dict = {}
# name -> `fn(args, attrs)` computing the operator's result into args[0] (a float array of the
# result's shape and dtype that nothing else refers to: a fused kernel's intermediate at its
# last use), returning it; the same values as the kernel, one fresh array fewer
IN_PLACE: dict = {}

# The operators TVM registers as TReshapeOp: they only reinterpret a contiguous tensor's shape.
# A primitive function made of nothing else is "reshape only" (FuseOps' relay.reshape_only): the
# VM turns its call into `vm.reshape_tensor`, the graph executor aliases its output.
RESHAPE_OPS = frozenset({"reshape", "squeeze", "expand_dims", "contrib_reverse_reshape",
                         "_contrib_reverse_reshape", "nn.batch_flatten", "dyn.reshape"})


class OpDef:
    """A primitive operator: arity, attributes, type relation, NumPy kernel, fusion pattern.

    `type_rel(arg_types, attrs)` and `kernel(args, attrs)` are the public entry points; the
    constructor's `type_rel` has the same signature and is wrapped to check the argument count
    and kinds and to normalise the attributes first;
    `tuple_input` marks operators whose first argument is a tuple of tensors (concatenate,
    stack), or gives the indexes of every such argument (qnn.concatenate: `(0, 1, 2)`);
    `tuple_args` is that set of indexes; `scalar` (or None) is the fast path taking 0-d
    arrays positionally;
    `resolve_attrs` (or None) fixes attributes that depend on the argument types;
    `attrs_from_args` (or None) copies the values of constant arguments into attributes before
    the type relation runs (TVM's arange keeps start/stop/step as arguments and attributes);
    `min_inputs` (default `num_inputs`) admits calls with fewer arguments, for operators whose
    TVM versions differ in arity (nn.pad's pad_value became an argument).

    A data-dependent shape function (TVM's `TShapeDataDependent` with an `FShapeFunc`): an
    operator whose output dims depend on input values (`dyn.reshape`, `dyn.zeros`) gives
    `shape_data`, one bool per input (True: the shape function needs that input's value,
    False: its shape), and `shape_func(inputs, attrs) -> [shape, ...]`, one shape per output,
    where `inputs[i]` is the input's ndarray when `shape_data[i]` and its shape tuple otherwise.
    Without them the run-time shape function is the type relation on concrete shapes
    (`rvmdbg.relay.ops.infer_shape` hides the difference).
    """

    __slots__ = ("name", "num_inputs", "attrs", "attr_specs", "type_rel", "kernel", "pattern",
                 "elementwise", "tuple_input", "tuple_args", "scalar", "doc", "_rel_impl",
                 "resolve_attrs", "attrs_from_args", "min_inputs", "shape_data", "shape_func",
                 "tvm_note", "bind")

    def __init__(self, name: str, num_inputs: int, attrs: list, type_rel, kernel,
                 pattern: str = "opaque", elementwise: bool | None = None,
                 tuple_input: bool | tuple = False, scalar=None, doc: str = "", resolve_attrs=None,
                 attrs_from_args=None, min_inputs: int | None = None,
                 shape_data: tuple | None = None, shape_func=None, tvm_note=None, bind=None):
        if pattern not in PATTERNS:
            raise ValueError(f"unknown fusion pattern {pattern!r}")  # not shown to users
        if (shape_func is None) != (shape_data is None):
            raise ValueError(  # not shown to users: a registration mistake, found at import
                f"{name}: shape_func and shape_data go together")
        if shape_data is not None and (len(shape_data) != num_inputs or not any(shape_data)):
            raise ValueError(  # not shown to users: a registration mistake, found at import
                f"{name}: shape_data needs one flag per input, at least one True")
        self.shape_data = tuple(bool(d) for d in shape_data) if shape_data is not None else None
        self.shape_func = shape_func
        # `tvm_note(arg_types, attrs) -> str | None`: for a call rvmdbg accepts and runs where
        # TVM refuses it (deliberately, docs/differences.md), TVM's refusal; `check` prints it
        # as a note at the call
        self.tvm_note = tvm_note
        # `bind(attrs) -> kernel`: the kernel with what its (normalised) attributes fix worked
        # out once, for a fused kernel's step that calls it many times with the same
        # attributes (the VM's `compile_kernel`); it computes exactly what `kernel` does, and
        # raises as the type relation would for attributes it cannot take
        self.bind = bind
        self.name = name
        self.num_inputs = num_inputs
        self.min_inputs = num_inputs if min_inputs is None else min_inputs
        self.attrs = list(attrs)
        self.attr_specs = {a.name: a for a in self.attrs}
        self.pattern = pattern
        if elementwise is None:
            elementwise = pattern in ("elemwise", "broadcast")
        self.elementwise = elementwise
        if isinstance(tuple_input, tuple):
            self.tuple_args = frozenset(tuple_input)
        else:
            self.tuple_args = frozenset((0,)) if tuple_input else frozenset()
        self.tuple_input = bool(self.tuple_args)
        self.scalar = scalar
        self.doc = doc
        # `resolve_attrs(arg_types, attrs)`: attributes the kernel must get instead of the
        # written ones once the argument types are known (or None to keep them); the type
        # checker stores them in the call, as TVM fixes them when it builds the kernel.
        self.resolve_attrs = resolve_attrs
        # `attrs_from_args(constants, attrs)`: constants[i] is argument i's value when it is
        # a constant, else None; returns the attributes to use (or None to keep them)
        self.attrs_from_args = attrs_from_args
        self._rel_impl = type_rel
        self.type_rel = self._checked_rel
        if self.attrs:
            raw_kernel = kernel

            def normalising_kernel(args, attrs, _op=self, _k=raw_kernel):
                if type(attrs) is not Attrs or attrs.op_name != _op.name:
                    attrs = normalize_attrs(_op, attrs or {})
                return _k(args, attrs)
            self.kernel = normalising_kernel
        else:
            self.kernel = kernel

    @property
    def attr_names(self) -> list:
        return [a.name for a in self.attrs]

    @property
    def data_dependent(self) -> bool:
        """Does the run-time shape function need input values (TVM: TShapeDataDependent)?"""
        return self.shape_data is not None

    @property
    def pattern_level(self) -> int:
        return PATTERNS[self.pattern]

    def _checked_rel(self, arg_types, attrs=None) -> Type:
        name = self.name
        if not self.min_inputs <= len(arg_types) <= self.num_inputs:
            n = self.num_inputs
            if self.min_inputs == n:
                text = ngettext("{op}: expects {n} argument, got {given}",
                                "{op}: expects {n} arguments, got {given}", n)
            else:
                text = ngettext("{op}: expects {low} or {n} argument, got {given}",
                                "{op}: expects {low} or {n} arguments, got {given}", n)
            raise OpTypeError(text.format(op=name, n=n, low=self.min_inputs,
                                          given=len(arg_types)))
        for i, t in enumerate(arg_types):
            if i in self.tuple_args:
                if not (isinstance(t, TupleType)
                        and all(isinstance(f, TensorType) for f in t.fields)):
                    raise OpTypeError(_("{op}: expects a tuple of tensors, got {type}").format(
                        op=name, type=t))
            elif not isinstance(t, TensorType):
                raise OpTypeError(_("{op}: argument {index} must be a tensor, got {type}").format(
                    op=name, index=i + 1, type=t))
        if type(attrs) is not Attrs or attrs.op_name != name:
            attrs = normalize_attrs(self, attrs or {})
        return self._rel_impl(list(arg_types), attrs)

    def __repr__(self) -> str:
        return f"OpDef({self.name!r}, {self.num_inputs}, pattern={self.pattern!r})"


def register(name: str, num_inputs: int, rel, kernel, pattern: str, attrs=(), **kw) -> OpDef:
    """Add an operator to OPS; `rel(name, arg_types, attrs)` gets the op's name bound."""
    if name in OPS:
        raise ValueError(f"operator {name} registered twice")  # not shown to users
    op = OpDef(name, num_inputs, list(attrs), functools.partial(rel, name), kernel, pattern, **kw)
    OPS[name] = op
    return op


def get_op(name: str) -> OpDef | None:
    return OPS.get(name)


# ---------------------------------------------------------------------------------------------
# Attribute normalisation


def _valid_names(op: OpDef) -> str:
    return ", ".join(op.attr_names) if op.attrs else "none"


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _as_int_list(v):
    if _is_int(v):
        return [int(v)]
    if isinstance(v, (list, tuple)) and all(_is_int(x) for x in v):
        return [int(x) for x in v]
    return None


def _convert(op: OpDef, spec: AttrSpec, v):
    kind = spec.kind
    bad = False
    out = v
    if kind == "any":
        return v
    if v is None and kind in ("int_list_or_none", "int_or_none", "float_or_none", "dtype_or_none"):
        return None
    if kind in ("int", "int_or_none"):
        if _is_int(v):
            out = int(v)
        else:
            bad = True
    elif kind in ("float", "float_or_none"):
        if _is_int(v) or isinstance(v, (float, np.floating)):
            out = float(v)
        else:
            bad = True
    elif kind == "bool":
        if isinstance(v, (bool, np.bool_)):
            out = bool(v)
        elif _is_int(v) and int(v) in (0, 1):
            out = bool(v)  # TVM prints some boolean attributes as 0/1
        else:
            bad = True
    elif kind == "str":
        if isinstance(v, str):
            out = v
        else:
            bad = True
    elif kind in ("dtype", "dtype_or_none"):
        if kind == "dtype_or_none" and v == "":
            return None  # TVM writes an unset dtype as ""
        if isinstance(v, str) and (v in DTYPES or v in DTYPE_ALIASES):
            out = DTYPE_ALIASES.get(v, v)
        else:
            raise OpAttrError(_("{op}: attribute '{attr}' must be a dtype name ({dtypes}), got "
                                "{value}").format(op=op.name, attr=spec.name,
                                                  dtypes=", ".join(DTYPES), value=repr(v)),
                              spec.name)
    elif kind in ("int_list", "int_list_or_none"):
        out = _as_int_list(v)
        bad = out is None
    elif kind == "int_or_int_list":
        if _is_int(v):
            out = int(v)
        else:
            out = _as_int_list(v)
            bad = out is None
    if bad:
        raise OpAttrError(_(_KIND_MESSAGES[kind]).format(op=op.name, attr=spec.name,
                                                         value=repr(v)), spec.name)
    if spec.choices is not None and out not in spec.choices:
        raise OpAttrError(_("{op}: attribute '{attr}' must be one of {choices}, got "
                            "{value}").format(op=op.name, attr=spec.name, value=repr(v),
                                              choices=", ".join(repr(c) for c in spec.choices)),
                          spec.name)
    return out


def normalize_attrs(op, attrs: dict) -> Attrs:
    """Check names and kinds of a call's attributes, convert them and fill in defaults.

    Unknown or missing attributes and values of the wrong kind raise OpAttrError, whose message
    lists the operator's valid attribute names. Idempotent.
    """
    if isinstance(op, str):
        found = OPS.get(op)
        if found is None:
            raise OpAttrError(_("unknown operator {op}").format(op=op), None)
        op = found
    if type(attrs) is Attrs and attrs.op_name == op.name:
        return attrs
    attrs = attrs or {}
    specs = op.attr_specs
    for key in attrs:
        if key not in specs:
            if not op.attrs:
                raise OpAttrError(_("{op}: takes no attributes, got '{attr}'").format(
                    op=op.name, attr=key), key)
            close = difflib.get_close_matches(key, list(specs), n=1)
            if close:
                text = _("{op}: unknown attribute '{attr}' (did you mean '{close}'?); valid "
                         "attributes: {valid}")
            else:
                text = _("{op}: unknown attribute '{attr}'; valid attributes: {valid}")
            raise OpAttrError(text.format(op=op.name, attr=key, close=close[0] if close else "",
                                          valid=_valid_names(op)), key)
    out = Attrs(op.name)
    for spec in op.attrs:
        if spec.name in attrs:
            out[spec.name] = _convert(op, spec, attrs[spec.name])
        elif spec.required:
            raise OpAttrError(_("{op}: missing required attribute '{attr}'; valid attributes: "
                                "{valid}").format(op=op.name, attr=spec.name,
                                                  valid=_valid_names(op)), spec.name)
        else:
            d = spec.default
            out[spec.name] = list(d) if isinstance(d, list) else d
    return out


# ---------------------------------------------------------------------------------------------
# Shape and dtype helpers for type relations (dims are int, or None for `?`)

FLOAT_DTYPES = frozenset(("float16", "float32", "float64"))
INT_DTYPES = frozenset(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def is_int(dtype: str) -> bool:
    return dtype in INT_DTYPES


def _dtype_bits(dtype: str) -> int:
    return 1 if dtype == "bool" else int("".join(c for c in dtype if c.isdigit()))


def tir_binary_dtype(a: str, b: str) -> str:
    """The dtype TIR computes `a op b` in when a kernel mixes two dtypes (TVM's
    BinaryOpMatchTypes, src/tir/op/op.cc): a float wins over an integer, the wider of two
    floats or two same-signed integers, and of a signed and an unsigned integer the wider one,
    the unsigned one at equal width (bool is a 1-bit unsigned integer)."""
    if a == b:
        return a
    fa, fb = is_float(a), is_float(b)
    if fa != fb:
        return a if fa else b
    ua, ub = a == "bool" or a.startswith("u"), b == "bool" or b.startswith("u")
    if fa or ua == ub or _dtype_bits(a) != _dtype_bits(b):
        return a if _dtype_bits(a) >= _dtype_bits(b) else b
    return a if ua else b


def fmt_shape(shape) -> str:
    dims = ", ".join("?" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def same_dtype(name: str, a: TensorType, b: TensorType) -> str:
    """The common dtype of two arguments; TVM never promotes implicitly."""
    if a.dtype != b.dtype:
        pair = {a.dtype, b.dtype}
        if pair == {"int32", "float32"}:
            text = _("{op}: dtypes {a} and {b} differ; cast one, or write the literal in the "
                     "other's dtype")
        else:
            text = _("{op}: dtypes {a} and {b} differ; cast one with cast(..., dtype=...)")
        raise OpTypeError(text.format(op=name, a=a.dtype, b=b.dtype))
    return a.dtype


def need_dtype(name: str, t: TensorType, what: str):
    """Check an argument's dtype class: 'numeric' (not bool), 'float', 'bool', 'int'."""
    d = t.dtype
    if what == "numeric" and d == "bool":
        if name in ("add", "multiply"):
            text = _("{op}: not defined for bool tensors, got {type}; use {instead}")
        else:
            text = _("{op}: not defined for bool tensors, got {type}")
        raise OpTypeError(text.format(op=name, type=t, instead="logical_or" if name == "add"
                                      else "logical_and"))
    if what == "float" and not is_float(d):
        raise OpTypeError(_("{op}: needs a float tensor, got {type}; cast it first, e.g. "
                            "cast(x, dtype=\"float32\")").format(op=name, type=t))
    if what == "bool" and d != "bool":
        raise OpTypeError(_("{op}: needs bool tensors, got {type}; compare with a value first "
                            "(e.g. x != 0)").format(op=name, type=t))
    if what == "int" and not is_int(d):
        raise OpTypeError(_("{op}: needs an integer tensor, got {type}").format(op=name, type=t))


def broadcast_dims(name: str, types: list) -> tuple:
    """NumPy-style broadcast of the shapes of `types`; None (`?`) broadcasts as TVM's Any does:
    against 1 it stays None, against a known k > 1 it becomes k (checked at run time)."""
    ndim = max(len(t.shape) for t in types)
    out = []
    for i in range(ndim):
        dim = 1
        for t in types:
            k = len(t.shape) - ndim + i
            if k < 0:
                continue
            d = t.shape[k]
            if d == 1:
                continue
            if dim == 1:
                dim = d
            elif d is None:
                continue
            elif dim is None:
                dim = d
            elif d != dim:
                together = str(types[0])
                for t in types[1:]:
                    together = _("{left} with {right}").format(left=together, right=t)
                raise OpTypeError(_("{op}: cannot broadcast {types}").format(op=name,
                                                                             types=together))
        out.append(dim)
    return tuple(out)


def norm_axis(name: str, axis: int, ndim: int, what: str = "axis", extra: int = 0) -> int:
    """Normalise a possibly negative axis into [0, ndim + extra)."""
    n = ndim + extra
    if not -n <= axis < n:
        attr = _attribute_named(what)
        if n and attr is None:
            text = _("{op}: {what} {axis} is out of range for a {ndim}-d tensor; valid: "
                     "[{low}, {high}]")
        elif n:
            text = _("{op}: attribute '{attr}' {axis} is out of range for a {ndim}-d tensor; "
                     "valid: [{low}, {high}]")
        elif attr is None:
            text = _("{op}: {what} {axis} is out of range for a {ndim}-d tensor; valid: none "
                     "(the tensor is 0-d)")
        else:
            text = _("{op}: attribute '{attr}' {axis} is out of range for a {ndim}-d tensor; "
                     "valid: none (the tensor is 0-d)")
        raise OpTypeError(text.format(op=name, what=what, attr=attr, axis=axis, ndim=ndim,
                                      low=-n, high=n - 1))
    return axis + n if axis < 0 else axis


def _attribute_named(what: str) -> str | None:
    """`x` for an axis named as "attribute 'x'" in messages; None for a bare name (`axis`)."""
    if what.startswith("attribute '") and what.endswith("'"):
        return what[len("attribute '"):-1]
    return None


def norm_axes(name: str, axes, ndim: int, what: str = "axis") -> list:
    out = [norm_axis(name, a, ndim, what) for a in axes]
    if len(set(out)) != len(out):
        attr = _attribute_named(what)
        text = (_("{op}: {what} {axes} repeats an axis") if attr is None else
                _("{op}: attribute '{attr}' {axes} repeats an axis"))
        raise OpTypeError(text.format(op=name, what=what, attr=attr, axes=list(axes)))
    return out


def known_prod(dims):
    """Product of dims, or None if any is unknown."""
    p = 1
    for d in dims:
        if d is None:
            return None
        p *= d
    return p


def unify_dim(name: str, a, b, what: str):
    """Two dims that must be equal: the known one wins; both known and different is an error."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    raise OpTypeError(_("{op}: {message}").format(op=name, message=what))


# ---------------------------------------------------------------------------------------------
# Kernel helpers

_arr = np.array
BOOL = np.dtype("bool")

# an integer dtype of each float width, to work on a float array's bits (`x.view(...)`)
SAME_SIZE_INT = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}

# dtype -> how the 0-d fast path computes: in Python ints, in Python floats (float64, or float32
# after a range check: +, -, *, / and comparisons of two float32 values are correctly rounded
# when done in double and rounded once), or as Python bools.
FAST_INT, FAST_F64, FAST_F32, FAST_BOOL = 1, 2, 3, 4
FAST_KIND = {np.dtype(d): FAST_INT for d in INT_DTYPES}
FAST_KIND[np.dtype("float64")] = FAST_F64
FAST_KIND[np.dtype("float32")] = FAST_F32
FAST_KIND[BOOL] = FAST_BOOL
F32_MAX = float(np.finfo(np.float32).max)


def as_result(r, dt) -> np.ndarray:
    """A kernel's result as an ndarray of exactly dtype `dt` (NumPy returns scalars for 0-d)."""
    if type(r) is not np.ndarray:
        return _arr(r, dt)
    if r.dtype != dt:
        return r.astype(dt)
    return r


def tvm_cast(x: np.ndarray, dtype) -> np.ndarray:
    """x converted as TVM's cast converts it: to bool `x != 0`, an ordered compare (a NaN is
    false); otherwise NumPy's conversion. Returns x itself when it already has the dtype."""
    dt = np.dtype(dtype)
    if x.dtype == dt:
        return x
    if dt == BOOL:
        if x.dtype.kind == "f":
            return np.less(x, 0) | np.greater(x, 0)
        return x != 0
    with np.errstate(all="ignore"):
        return x.astype(dt)


def bool_parity(total: np.ndarray) -> np.ndarray:
    """A sum of bools (held in int64) as TVM's 1-bit `uint1` sum ends: modulo 2, as bool."""
    return (total & 1) != 0


def tvm_lowering_refuses(name: str, dtype, why: str, fix: str) -> KernelError:
    """The error for a call that TVM's type relation accepts and its lowering refuses (no
    kernel for that dtype): rvmdbg type-checks it as TVM does and stops when it runs.
    `why` is TVM's reason, `fix` what the user can do; both already translated."""
    return KernelError(_("{op}: TVM has no {dtype} kernel for it ({why}); {fix}").format(
        op=name, dtype=np.dtype(dtype).name, why=why, fix=fix))


def float_intrinsic_refusal(name: str, dtype) -> KernelError:
    """exp, log, sqrt, ... (and operators built on them) of a non-float tensor."""
    return tvm_lowering_refuses(name, dtype, _("lowering calls a float intrinsic"),
                                _("cast to a float dtype first"))


def runtime_type_error(fn):
    """Run a shape computation at run time: its OpTypeError becomes a KernelError."""
    def wrapped(*args):
        try:
            return fn(*args)
        except OpTypeError as e:
            raise KernelError(e.message) from None
    return wrapped
