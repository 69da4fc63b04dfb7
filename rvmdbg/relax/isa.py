"""The Relax VM's four instructions (`Call`, `Ret`, `Goto`, `If`) as
`rvmdbg.vm.bytecode.Instruction`s (text in TVM's `as_text()` layout, read and write sets from
each Call's `in:` registers and its `dst:`, jump targets from the relative offsets), their
operands, and the constant-pool value kinds that are not NumPy arrays (`DType`, `Shape`).
A leaf: the executable reader and the machine both import it."""
from __future__ import annotations

import re

from rvmdbg.i18n import _
from rvmdbg.vm.bytecode import Instruction

FUNC_PACKED, FUNC_VM, FUNC_TIR = 0, 1, 2   # the kinds of a function-table entry


class RelaxFormatError(ValueError):
    """A serialized executable or listing this reader cannot read; the message says where."""


class DType(str):
    """A constant-pool data type (`int64`, `float32`, ...): a str, told apart from strings."""


class Shape(tuple):
    """A constant-pool shape tuple."""

    def __repr__(self) -> str:
        return f"R.shape({list(self)})"


class Operand(tuple):
    """One argument of a Call: (kind, value); kind is `reg`, `imm`, `const`, `func`, `vm`
    or `void`. `text()` is TVM's (`%3`, `i0`, `c[2]`, `f[name]`, `%vm`, `%void`)."""

    __slots__ = ()

    @property
    def kind(self):
        return self[0]

    @property
    def value(self):
        return self[1]

    def text(self) -> str:
        k, v = self
        return {"reg": f"%{v}", "imm": f"i{v}", "const": f"c[{v}]", "func": f"f[{v}]",
                "vm": "%vm", "void": "%void"}[k]


def _reg_text(r) -> str:
    return "%void" if r is None else f"%{r}"


# vm.builtin functions that never write a tensor they are passed (the others may: a kernel
# writes its outputs in place, `match_shape` fills the shape heap)
PURE_BUILTINS = frozenset("vm.builtin." + n for n in (
    "check_tensor_info", "check_shape_info", "check_tuple_info", "check_func_info",
    "check_prim_value_info", "alloc_storage", "alloc_tensor", "alloc_shape_heap", "null_value",
    "make_shape", "make_closure", "invoke_closure", "shape_of", "tuple_getitem", "make_tuple",
    "read_if_cond", "tensor_to_shape", "copy"))


class RCall(Instruction):
    """`call NAME in: ARGS dst: REG`: a VM function, a kernel or a builtin, by name.

    `is_call` (a VM function, or `invoke_closure`: the machine pushes a frame) and `inplace`
    (the registers whose tensors the callee may write in place) are set by the executable,
    which knows which names are VM functions (`mark`)."""

    __slots__ = ("func", "args", "dst", "is_call", "inplace")
    opcode, name = 1, "Call"

    def __init__(self, func: str, args, dst):
        self.func, self.args, self.dst = func, tuple(args), dst
        self.is_call = False
        self.inplace = ()

    def mark(self, vm_functions) -> None:
        """Classify the callee: a VM function call pushes a frame; a packed function other
        than the builtins known not to write their arguments may write any tensor it is
        passed (the bytecode does not say which arguments a kernel's outputs are)."""
        self.is_call = self.func in vm_functions or self.func == "vm.builtin.invoke_closure"
        if self.is_call or self.func in PURE_BUILTINS:
            self.inplace = ()
        elif self.func == "vm.builtin.match_shape":
            self.inplace = tuple(a[1] for a in self.args[1:2] if a[0] == "reg")   # the heap
        else:
            self.inplace = tuple(a[1] for a in self.args if a[0] == "reg")

    @property
    def is_builtin(self) -> bool:
        return self.func.startswith("vm.builtin.")

    def text(self, func_names=None, kernel_names=None) -> str:
        args = ", ".join(a.text() for a in self.args)
        return f"call  {self.func:<16} in: {args:<12} dst: {_reg_text(self.dst)}"

    def fields(self) -> list:
        return [self.func, list(self.args), self.dst]

    def reads(self) -> tuple:
        return tuple(a[1] for a in self.args if a[0] == "reg")

    def writes(self) -> tuple:
        return () if self.dst is None else (self.dst,)


class RRet(Instruction):
    __slots__ = ("result",)
    opcode, name = 2, "Ret"
    is_return = True
    falls_through = False

    def __init__(self, result: int):
        self.result = result

    def text(self, func_names=None, kernel_names=None) -> str:
        return f"ret   %{self.result}"

    def fields(self) -> list:
        return [self.result]

    def reads(self) -> tuple:
        return (self.result,)


class RGoto(Instruction):
    __slots__ = ("offset",)
    opcode, name = 3, "Goto"
    is_jump = True
    falls_through = False

    def __init__(self, offset: int):
        self.offset = offset

    def text(self, func_names=None, kernel_names=None) -> str:
        return f"goto  {self.offset}"

    def fields(self) -> list:
        return [self.offset]

    def jump_targets(self, pc: int) -> tuple:
        return (pc + self.offset,)


class RIf(Instruction):
    """`If %cond, OFFSET`: on to pc + 1 when the register is non-zero, else to pc + OFFSET."""

    __slots__ = ("cond", "false_offset")
    opcode, name = 4, "If"
    is_jump = True

    def __init__(self, cond: int, false_offset: int):
        self.cond, self.false_offset = cond, false_offset

    def text(self, func_names=None, kernel_names=None) -> str:
        return f"If    %{self.cond}, {self.false_offset}"

    def fields(self) -> list:
        return [self.cond, self.false_offset]

    def reads(self) -> tuple:
        return (self.cond,)

    def jump_targets(self, pc: int) -> tuple:
        return (pc + self.false_offset,)


_CALL = re.compile(r"call\s+(\S+)\s+in:(.*?)\s*dst:\s*(%void|%\d+)$")
_OPERAND = re.compile(r"%(\d+)$|%vm$|%void$|i(-?\d+)$|c\[(\d+)\]$|f\[(.+)\]$")


def _operand(text: str, where: str) -> Operand:
    m = _OPERAND.match(text)
    if not m:
        raise RelaxFormatError(_("{where}: unknown operand {text!r}").format(where=where, text=text))
    if m.group(1) is not None:
        return Operand(("reg", int(m.group(1))))
    if text == "%vm":
        return Operand(("vm", None))
    if text == "%void":
        return Operand(("void", None))
    if m.group(2) is not None:
        return Operand(("imm", int(m.group(2))))
    if m.group(3) is not None:
        return Operand(("const", int(m.group(3))))
    return Operand(("func", m.group(4)))


def parse_instruction(line: str, where: str = "listing") -> Instruction:
    """One line of `as_text()` (without its indentation) as an instruction."""
    s = line.strip()
    m = _CALL.match(s)
    if m:
        name, args, dst = m.groups()
        operands = [_operand(a.strip(), where) for a in args.split(",") if a.strip()]
        return RCall(name, operands, None if dst == "%void" else int(dst[1:]))
    parts = s.replace(",", " ").split()
    try:
        if parts[0] == "ret" and len(parts) == 2:
            return RRet(int(parts[1].lstrip("%")))
        if parts[0] == "goto" and len(parts) == 2:
            return RGoto(int(parts[1]))
        if parts[0] == "If" and len(parts) == 3:
            return RIf(int(parts[1].lstrip("%")), int(parts[2]))
    except ValueError:
        pass
    raise RelaxFormatError(_("{where}: not a Relax VM instruction: {line!r}").format(where=where, line=s))



__all__ = ["PURE_BUILTINS", "RCall", "RRet", "RGoto", "RIf", "Operand", "DType", "Shape", "RelaxFormatError",
           "parse_instruction", "FUNC_PACKED", "FUNC_VM", "FUNC_TIR"]
