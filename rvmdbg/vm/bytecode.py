"""The Relay VM instruction set: one class per TVM opcode.

Each class is the single source of truth for its operands, its TVM text form (`text()`), its
TVM serialized operand list (`fields()` / `from_fields()`), the registers it reads and writes,
and where control can go next. No other module needs a switch over opcodes to learn any of it.

Numbering, serialized field order and text forms follow TVM 0.18
(`include/tvm/runtime/vm/bytecode.h`, `src/runtime/vm/bytecode.cc`, `executable.cc`).
Dtypes are NumPy names (`"float32"`, `"bool"`); in serialized form they are DLPack triples
(code, bits, lanes) with int=0, uint=1, float=2 and bool = uint1.

Instructions are immutable in spirit: build a new one instead of changing an operand.
"""
from __future__ import annotations

from typing import Sequence

from rvmdbg.i18n import N_, _, ngettext

# The operand fields' names the decoder's refusals use (the call sites pass the plain English,
# translated with `_()` only when a refusal is made).
FIELD_NAMES = (N_("alignment"), N_("arity"), N_("constant index"), N_("constructor tag"),
               N_("destination device index"), N_("device index"), N_("dimension"),
               N_("false offset"), N_("field index"), N_("field"), N_("function index"),
               N_("immediate"), N_("kernel index"), N_("output size"), N_("pc offset"),
               N_("register"), N_("source device index"), N_("true offset"))


def _field(what: str) -> str:
    """An operand field's name in the language in use (`AllocADT count` stays as it is)."""
    return _(what) if what in FIELD_NAMES else what

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


class BytecodeError(ValueError):
    """A malformed instruction: unknown opcode, wrong operand count or an invalid operand."""


# ---------------------------------------------------------------- dtypes as DLPack triples

_DTYPE_TO_DL = {
    "bool": (1, 1, 1),
    "int8": (0, 8, 1), "int16": (0, 16, 1), "int32": (0, 32, 1), "int64": (0, 64, 1),
    "uint8": (1, 8, 1), "uint16": (1, 16, 1), "uint32": (1, 32, 1), "uint64": (1, 64, 1),
    "float16": (2, 16, 1), "float32": (2, 32, 1), "float64": (2, 64, 1),
}
_DL_TO_DTYPE = {v: k for k, v in _DTYPE_TO_DL.items()}
DTYPES = tuple(_DTYPE_TO_DL)


def dtype_to_dl(dtype) -> tuple[int, int, int]:
    """`"float32"` -> (2, 32, 1); raises BytecodeError for a dtype the VM does not know."""
    try:
        return _DTYPE_TO_DL[str(dtype)]
    except KeyError:
        raise BytecodeError(_("unsupported dtype {dtype}").format(dtype=repr(dtype))) from None


def dl_to_dtype(code: int, bits: int, lanes: int) -> str:
    """(2, 32, 1) -> `"float32"`; raises BytecodeError for vector lanes or unknown codes."""
    try:
        return _DL_TO_DTYPE[(code, bits, lanes)]
    except (KeyError, TypeError):
        raise BytecodeError(_("unsupported DLPack dtype (code {code}, bits {bits}, lanes "
                              "{lanes})").format(code=code, bits=bits, lanes=lanes)) from None


def _dl_print(dtype: str) -> str:
    # TVM's DLDatatypePrint (alloc_tensor text): no special case for bool, so it prints uint1.
    code, bits, _ = _DTYPE_TO_DL[dtype]
    return ("int", "uint", "float")[code] + str(bits)


def _dtype(value) -> str:
    name = str(value)
    if name not in _DTYPE_TO_DL:
        raise BytecodeError(_("unsupported dtype {dtype}").format(dtype=repr(value)))
    return name


# ---------------------------------------------------------------- operand checks

def _int(value, what: str) -> int:
    if type(value) is int and _INT64_MIN <= value <= _INT64_MAX:
        return value  # the common case, at once (the compiler makes every operand)
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise BytecodeError(_("{what} must be an integer, got {value}").format(
            what=_field(what), value=repr(value)))
    v = value.__index__()
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise BytecodeError(_("{what} {value} does not fit in 64 bits").format(what=_field(what),
                                                                               value=v))
    return v


def _nonneg(value, what: str) -> int:
    if type(value) is int and 0 <= value <= _INT64_MAX:
        return value
    v = _int(value, what)
    if v < 0:
        raise BytecodeError(_("{what} must not be negative, got {value}").format(what=_field(what),
                                                                                 value=v))
    return v


def _reg(value) -> int:
    if type(value) is int and 0 <= value <= _INT64_MAX:
        return value
    return _nonneg(value, "register")


def _regs(values) -> tuple:
    try:
        regs = tuple(values)
    except TypeError:
        raise BytecodeError(_("expected a list of registers, got {value}").format(
            value=repr(values))) from None
    for v in regs:
        if type(v) is not int or not 0 <= v <= _INT64_MAX:
            return tuple(_reg(v) for v in regs)  # says which one is wrong
    return regs


def _need(fields, n: int, name: str) -> None:
    if len(fields) != n:
        raise BytecodeError(ngettext("{name} takes {n} field, got {m}",
                                     "{name} takes {n} fields, got {m}", n).format(
            name=name, n=n, m=len(fields)))


def _counted(fields, count_at: int, head: int, name: str) -> int:
    """Check `fields` = `head` fixed fields + fields[count_at] trailing ones; return the count."""
    if len(fields) < head:
        raise BytecodeError(_("{name} takes at least {n} fields, got {m}").format(
            name=name, n=head, m=len(fields)))
    count = _int(fields[count_at], f"{name} count")
    if count < 0 or len(fields) != head + count:
        raise BytecodeError(_("{name} declares {n} trailing fields but has {m}").format(
            name=name, n=count, m=len(fields) - head))
    return count


def _join_regs(regs, delim: str) -> str:
    # TVM's StrJoin: the caller prints the first `$`, so an empty list shows as a bare `$`.
    return delim.join(str(r) for r in regs)


def _name_note(names, index: int, prefix: str) -> str:
    if names is not None and 0 <= index < len(names):
        return f"  // {prefix}{names[index]}"
    return ""


# ---------------------------------------------------------------- the instruction classes

class Instruction:
    """Base of all instructions. Subclasses set `opcode`, `name` and `__slots__`."""

    __slots__ = ()
    opcode: int = -1
    name: str = "?"
    is_jump = False          # If, Goto
    is_call = False          # Invoke, InvokeClosure: push a frame
    is_kernel_call = False   # InvokePacked
    is_return = False        # Ret
    falls_through = True     # control may continue at pc + 1 without a jump

    def text(self, func_names: Sequence[str] | None = None,
             kernel_names: Sequence[str] | None = None) -> str:
        """TVM's text form; given name tables, calls gain a `// @callee` note."""
        raise NotImplementedError

    def fields(self) -> list:
        """TVM's serialized operand list (opcode excluded)."""
        raise NotImplementedError

    @classmethod
    def from_fields(cls, fields) -> "Instruction":
        raise NotImplementedError

    def reads(self) -> tuple:
        return ()

    def writes(self) -> tuple:
        return ()

    def registers(self) -> tuple:
        """Every register the instruction names, read or written."""
        return self.reads() + self.writes()

    def jump_targets(self, pc: int) -> tuple:
        """Absolute pcs this instruction may jump to (not counting falling through)."""
        return ()

    def successors(self, pc: int) -> tuple:
        """Every pc control may reach next within the function."""
        if self.falls_through:
            return (pc + 1,)
        return self.jump_targets(pc)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.fields() == other.fields()

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.opcode, tuple(self.fields())))

    def __repr__(self) -> str:
        args = ", ".join(f"{s}={getattr(self, s)!r}" for s in self.__slots__)
        return f"{self.name}({args})"

    def __str__(self) -> str:
        return self.text()


class Move(Instruction):
    __slots__ = ("src", "dst")
    opcode, name = 0, "Move"

    def __init__(self, src, dst):
        self.src = _reg(src)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return f"move ${self.dst} ${self.src}"

    def fields(self):
        return [self.src, self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 2, cls.name)
        return cls(f[0], f[1])

    def reads(self):
        return (self.src,)

    def writes(self):
        return (self.dst,)


class Ret(Instruction):
    __slots__ = ("result",)
    opcode, name = 1, "Ret"
    is_return = True
    falls_through = False

    def __init__(self, result):
        self.result = _reg(result)

    def text(self, func_names=None, kernel_names=None):
        return f"ret ${self.result}"

    def fields(self):
        return [self.result]

    @classmethod
    def from_fields(cls, f):
        _need(f, 1, cls.name)
        return cls(f[0])

    def reads(self):
        return (self.result,)


class Invoke(Instruction):
    __slots__ = ("func_index", "args", "dst")
    opcode, name = 2, "Invoke"
    is_call = True

    def __init__(self, func_index, args, dst):
        self.func_index = _nonneg(func_index, "function index")
        self.args = _regs(args)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return (f"invoke ${self.dst} VMFunc[{self.func_index}]"
                f"(${_join_regs(self.args, ',$')})" + _name_note(func_names, self.func_index, "@"))

    def fields(self):
        return [self.func_index, len(self.args), self.dst, *self.args]

    @classmethod
    def from_fields(cls, f):
        _counted(f, 1, 3, cls.name)
        return cls(f[0], f[3:], f[2])

    def reads(self):
        return self.args

    def writes(self):
        return (self.dst,)


class InvokeClosure(Instruction):
    __slots__ = ("closure", "args", "dst")
    opcode, name = 3, "InvokeClosure"
    is_call = True

    def __init__(self, closure, args, dst):
        self.closure = _reg(closure)
        self.args = _regs(args)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return f"invoke_closure ${self.dst} ${self.closure}(${_join_regs(self.args, ',$')})"

    def fields(self):
        return [self.closure, len(self.args), self.dst, *self.args]

    @classmethod
    def from_fields(cls, f):
        _counted(f, 1, 3, cls.name)
        return cls(f[0], f[3:], f[2])

    def reads(self):
        return (self.closure, *self.args)

    def writes(self):
        return (self.dst,)


class InvokePacked(Instruction):
    """A kernel call in destination-passing style: the last `output_size` args are outputs."""

    __slots__ = ("packed_index", "arity", "output_size", "args")
    opcode, name = 4, "InvokePacked"
    is_kernel_call = True

    def __init__(self, packed_index, arity, output_size, args):
        self.packed_index = _nonneg(packed_index, "kernel index")
        self.args = _regs(args)
        self.arity = _nonneg(arity, "arity")
        self.output_size = _nonneg(output_size, "output size")
        if self.arity != len(self.args):
            raise BytecodeError(_("InvokePacked arity {arity} but {n} arguments").format(
                arity=self.arity, n=len(self.args)))
        if self.output_size > self.arity:
            raise BytecodeError(_("InvokePacked output size {size} exceeds arity {arity}").format(
                size=self.output_size, arity=self.arity))

    @property
    def inputs(self) -> tuple:
        return self.args[:self.arity - self.output_size]

    @property
    def outputs(self) -> tuple:
        return self.args[self.arity - self.output_size:]

    def text(self, func_names=None, kernel_names=None):
        return (f"invoke_packed PackedFunc[{self.packed_index}] (in: ${_join_regs(self.inputs, ', $')}"
                f", out: ${_join_regs(self.outputs, ', $')})"
                + _name_note(kernel_names, self.packed_index, ""))

    def fields(self):
        return [self.packed_index, self.arity, self.output_size, *self.args]

    @classmethod
    def from_fields(cls, f):
        _counted(f, 1, 3, cls.name)
        return cls(f[0], f[1], f[2], f[3:])

    def reads(self):
        return self.inputs

    def writes(self):
        # Outputs are preallocated by AllocTensor; the kernel overwrites them, never reads them.
        return self.outputs


class AllocTensor(Instruction):
    __slots__ = ("storage", "offset", "shape", "dtype", "dst")
    opcode, name = 5, "AllocTensor"

    def __init__(self, storage, offset, shape, dtype, dst):
        self.storage = _reg(storage)
        self.offset = _reg(offset)
        try:
            self.shape = tuple(_nonneg(d, "dimension") for d in shape)
        except TypeError:
            raise BytecodeError(_("shape must be a list of integers, got {value}").format(
                value=repr(shape))) from None
        self.dtype = _dtype(dtype)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        dims = ", ".join(str(d) for d in self.shape)
        return f"alloc_tensor ${self.dst} ${self.storage} ${self.offset} [{dims}] {_dl_print(self.dtype)}"

    def fields(self):
        return [self.storage, self.offset, *dtype_to_dl(self.dtype), len(self.shape), self.dst,
                *self.shape]

    @classmethod
    def from_fields(cls, f):
        _counted(f, 5, 7, cls.name)
        return cls(f[0], f[1], f[7:], dl_to_dtype(f[2], f[3], f[4]), f[6])

    def reads(self):
        return (self.storage, self.offset)

    def writes(self):
        return (self.dst,)


class AllocTensorReg(Instruction):
    __slots__ = ("storage", "offset", "shape_register", "dtype", "dst")
    opcode, name = 6, "AllocTensorReg"

    def __init__(self, storage, offset, shape_register, dtype, dst):
        self.storage = _reg(storage)
        self.offset = _reg(offset)
        self.shape_register = _reg(shape_register)
        self.dtype = _dtype(dtype)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return (f"alloc_tensor_reg ${self.dst} ${self.storage} ${self.offset} "
                f"${self.shape_register} {_dl_print(self.dtype)}")

    def fields(self):
        return [self.storage, self.offset, self.shape_register, *dtype_to_dl(self.dtype), self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 7, cls.name)
        return cls(f[0], f[1], f[2], dl_to_dtype(f[3], f[4], f[5]), f[6])

    def reads(self):
        return (self.storage, self.offset, self.shape_register)

    def writes(self):
        return (self.dst,)


class _ADTFields(tuple):
    """AllocADT's field registers. The contract names both the operand `fields` and the method
    `fields()`; this tuple is the operand and, when called, gives the serialized list."""

    def __new__(cls, regs, owner_tag: int, owner_dst: int):
        self = super().__new__(cls, regs)
        self._tag = owner_tag
        self._dst = owner_dst
        return self

    def __call__(self) -> list:
        return [self._tag, len(self), self._dst, *self]


class AllocADT(Instruction):
    __slots__ = ("tag", "fields", "dst")
    opcode, name = 7, "AllocADT"

    def __init__(self, tag, fields, dst):
        self.tag = _nonneg(tag, "constructor tag")
        self.dst = _reg(dst)
        self.fields = _ADTFields(_regs(fields), self.tag, self.dst)

    def text(self, func_names=None, kernel_names=None):
        return f"alloc_data ${self.dst} tag({self.tag}) [${_join_regs(self.fields, ',$')}]"

    # `fields()` is served by the _ADTFields operand (the slot shadows a method of that name).

    @classmethod
    def from_fields(cls, f):
        _counted(f, 1, 3, cls.name)
        return cls(f[0], f[3:], f[2])

    def reads(self):
        return tuple(self.fields)

    def writes(self):
        return (self.dst,)

    def __repr__(self) -> str:
        return f"AllocADT(tag={self.tag!r}, fields={tuple(self.fields)!r}, dst={self.dst!r})"


class AllocClosure(Instruction):
    __slots__ = ("func_index", "free_vars", "dst")
    opcode, name = 8, "AllocClosure"

    def __init__(self, func_index, free_vars, dst):
        self.func_index = _nonneg(func_index, "function index")
        self.free_vars = _regs(free_vars)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return (f"alloc_closure ${self.dst} VMFunc[{self.func_index}]"
                f"(${_join_regs(self.free_vars, ',$')})"
                + _name_note(func_names, self.func_index, "@"))

    def fields(self):
        return [self.func_index, len(self.free_vars), self.dst, *self.free_vars]

    @classmethod
    def from_fields(cls, f):
        _counted(f, 1, 3, cls.name)
        return cls(f[0], f[3:], f[2])

    def reads(self):
        return self.free_vars

    def writes(self):
        return (self.dst,)


class GetField(Instruction):
    __slots__ = ("object", "field_index", "dst")
    opcode, name = 9, "GetField"

    def __init__(self, object, field_index, dst):  # noqa: A002 - the contract's operand name
        self.object = _reg(object)
        self.field_index = _nonneg(field_index, "field index")
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return f"get_field ${self.dst} ${self.object}[{self.field_index}]"

    def fields(self):
        return [self.object, self.field_index, self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 3, cls.name)
        return cls(f[0], f[1], f[2])

    def reads(self):
        return (self.object,)

    def writes(self):
        return (self.dst,)


class If(Instruction):
    """pc += true_offset if reg[test] == reg[target] else false_offset (relative offsets)."""

    __slots__ = ("test", "target", "true_offset", "false_offset")
    opcode, name = 10, "If"
    is_jump = True
    falls_through = False

    def __init__(self, test, target, true_offset, false_offset):
        self.test = _reg(test)
        self.target = _reg(target)
        self.true_offset = _int(true_offset, "true offset")
        self.false_offset = _int(false_offset, "false offset")

    def text(self, func_names=None, kernel_names=None):
        return f"if ${self.test} ${self.target} {self.true_offset} {self.false_offset}"

    def fields(self):
        return [self.test, self.target, self.true_offset, self.false_offset]

    @classmethod
    def from_fields(cls, f):
        _need(f, 4, cls.name)
        return cls(f[0], f[1], f[2], f[3])

    def reads(self):
        return (self.test, self.target)

    def jump_targets(self, pc):
        return (pc + self.true_offset, pc + self.false_offset)


class LoadConst(Instruction):
    __slots__ = ("const_index", "dst", "device_index")
    opcode, name = 11, "LoadConst"

    def __init__(self, const_index, dst, device_index=0):
        self.const_index = _nonneg(const_index, "constant index")
        self.dst = _reg(dst)
        self.device_index = _nonneg(device_index, "device index")

    def text(self, func_names=None, kernel_names=None):
        return f"load_const ${self.dst} Const[{self.const_index}] {self.device_index}"

    def fields(self):
        return [self.const_index, self.device_index, self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 3, cls.name)
        return cls(f[0], f[2], f[1])

    def writes(self):
        return (self.dst,)


class Goto(Instruction):
    __slots__ = ("pc_offset",)
    opcode, name = 12, "Goto"
    is_jump = True
    falls_through = False

    def __init__(self, pc_offset):
        self.pc_offset = _int(pc_offset, "pc offset")

    def text(self, func_names=None, kernel_names=None):
        return f"goto {self.pc_offset}"

    def fields(self):
        return [self.pc_offset]

    @classmethod
    def from_fields(cls, f):
        _need(f, 1, cls.name)
        return cls(f[0])

    def jump_targets(self, pc):
        return (pc + self.pc_offset,)


class GetTag(Instruction):
    __slots__ = ("object", "dst")
    opcode, name = 13, "GetTag"

    def __init__(self, object, dst):  # noqa: A002 - the contract's operand name
        self.object = _reg(object)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return f"get_tag ${self.dst} ${self.object}"

    def fields(self):
        return [self.object, self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 2, cls.name)
        return cls(f[0], f[1])

    def reads(self):
        return (self.object,)

    def writes(self):
        return (self.dst,)


class LoadConsti(Instruction):
    __slots__ = ("value", "dst")
    opcode, name = 14, "LoadConsti"

    def __init__(self, value, dst):
        self.value = _int(value, "immediate")
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return f"load_consti ${self.dst} {self.value}"

    def fields(self):
        return [self.value, self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 2, cls.name)
        return cls(f[0], f[1])

    def writes(self):
        return (self.dst,)


class Fatal(Instruction):
    __slots__ = ()
    opcode, name = 15, "Fatal"
    falls_through = False

    def text(self, func_names=None, kernel_names=None):
        return "fatal"

    def fields(self):
        return []

    @classmethod
    def from_fields(cls, f):
        _need(f, 0, cls.name)
        return cls()

    def __repr__(self) -> str:
        return "Fatal()"


class AllocStorage(Instruction):
    """A raw buffer of reg[size] bytes. TVM also allows a static shape instead of a size
    register (ndim > 0); rvmdbg's compiler never emits that form, so it is rejected."""

    __slots__ = ("size", "alignment", "dtype_hint", "dst", "device_index")
    opcode, name = 16, "AllocStorage"

    def __init__(self, size, alignment, dtype_hint, dst, device_index=0):
        self.size = _reg(size)
        self.alignment = _nonneg(alignment, "alignment")
        self.dtype_hint = _dtype(dtype_hint)
        self.dst = _reg(dst)
        self.device_index = _nonneg(device_index, "device index")

    def text(self, func_names=None, kernel_names=None):
        # TVM prints the hint with DLDataType2String, which (unlike alloc_tensor) says `bool`.
        return (f"alloc_storage ${self.dst} ${self.size} {self.alignment} {self.dtype_hint} "
                f"{self.device_index}")

    def fields(self):
        # size, alignment, dtype (3), device index, ndim (always 0 here), dst
        return [self.size, self.alignment, *dtype_to_dl(self.dtype_hint), self.device_index, 0,
                self.dst]

    @classmethod
    def from_fields(cls, f):
        if len(f) >= 8 and f[6] != 0:
            raise BytecodeError(_("AllocStorage with a static shape (ndim > 0) is not supported"))
        _need(f, 8, cls.name)
        return cls(f[0], f[1], dl_to_dtype(f[2], f[3], f[4]), f[7], f[5])

    def reads(self):
        return (self.size,)

    def writes(self):
        return (self.dst,)


class ShapeOf(Instruction):
    __slots__ = ("tensor", "dst")
    opcode, name = 17, "ShapeOf"

    def __init__(self, tensor, dst):
        self.tensor = _reg(tensor)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return f"shape_of ${self.dst} ${self.tensor}"

    def fields(self):
        return [self.tensor, self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 2, cls.name)
        return cls(f[0], f[1])

    def reads(self):
        return (self.tensor,)

    def writes(self):
        return (self.dst,)


class ReshapeTensor(Instruction):
    __slots__ = ("tensor", "newshape", "dst")
    opcode, name = 18, "ReshapeTensor"

    def __init__(self, tensor, newshape, dst):
        self.tensor = _reg(tensor)
        self.newshape = _reg(newshape)
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return f"reshape_tensor ${self.dst} ${self.tensor} ${self.newshape}"

    def fields(self):
        return [self.tensor, self.newshape, self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 3, cls.name)
        return cls(f[0], f[1], f[2])

    def reads(self):
        return (self.tensor, self.newshape)

    def writes(self):
        return (self.dst,)


class DeviceCopy(Instruction):
    __slots__ = ("src", "src_device", "dst_device", "dst")
    opcode, name = 19, "DeviceCopy"

    def __init__(self, src, src_device, dst_device, dst):
        self.src = _reg(src)
        self.src_device = _nonneg(src_device, "source device index")
        self.dst_device = _nonneg(dst_device, "destination device index")
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        # TVM prints the destination device before the source device.
        return f"device_copy ${self.dst} ${self.src} {self.dst_device} {self.src_device}"

    def fields(self):
        return [self.src, self.src_device, self.dst_device, self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 4, cls.name)
        return cls(f[0], f[1], f[2], f[3])

    def reads(self):
        return (self.src,)

    def writes(self):
        return (self.dst,)


class KillRegister(Instruction):
    __slots__ = ("dst",)
    opcode, name = 20, "KillRegister"

    def __init__(self, dst):
        self.dst = _reg(dst)

    def text(self, func_names=None, kernel_names=None):
        return f"kill_register ${self.dst}"

    def fields(self):
        return [self.dst]

    @classmethod
    def from_fields(cls, f):
        _need(f, 1, cls.name)
        return cls(f[0])

    def writes(self):
        # Killing clears the register: a write of "nothing", never a read.
        return (self.dst,)


OPCODES: list = [
    Move, Ret, Invoke, InvokeClosure, InvokePacked, AllocTensor, AllocTensorReg, AllocADT,
    AllocClosure, GetField, If, LoadConst, Goto, GetTag, LoadConsti, Fatal, AllocStorage,
    ShapeOf, ReshapeTensor, DeviceCopy, KillRegister,
]
assert all(cls.opcode == i for i, cls in enumerate(OPCODES))

BY_NAME = {cls.name: cls for cls in OPCODES}


def decode(opcode: int, fields) -> Instruction:
    """Build the instruction for a serialized (opcode, fields) pair; BytecodeError if malformed."""
    if isinstance(opcode, bool) or not isinstance(opcode, int) or not 0 <= opcode < len(OPCODES):
        raise BytecodeError(_("unknown opcode {opcode}").format(opcode=repr(opcode)))
    fields = list(fields)
    for v in fields:
        _int(v, "field")
    return OPCODES[opcode].from_fields(fields)


def encode(instr: Instruction) -> tuple[int, list]:
    """The serialized (opcode, fields) pair of an instruction."""
    return instr.opcode, instr.fields()
