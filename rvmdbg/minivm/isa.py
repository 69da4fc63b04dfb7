"""The MiniVM's six instructions, in the shape of `rvmdbg.vm.bytecode` (text, read and write
sets, jump targets, successors), so the debugger's dependency analysis, listing and jump
arrows read them as they read the Relay VM's.

    LD r imm       r = imm
    ADD a b dst    dst = a + b
    SUB a b dst    dst = a - b
    CH r target    jump to target if r >= 0, else go on
    JM target      jump to target
    HL             halt

Registers hold signed 64-bit integers (arithmetic wraps, as a machine word does). `HL` has
two meanings, chosen per program (`.hl stays` in the file): by default it halts the machine;
in the "stays" variant it does nothing and leaves the pc where it is, which is what the
classic tutorial loop (`while pc < len(program)`) does when HL forgets to advance the pc or
stop the loop: the program never halts.
"""
from __future__ import annotations

from rvmdbg.vm.bytecode import Instruction

WORD_BITS = 64
_WRAP = 1 << WORD_BITS
_HALF = 1 << (WORD_BITS - 1)


def wrap(v: int) -> int:
    """`v` as a signed 64-bit machine word."""
    v &= _WRAP - 1
    return v - _WRAP if v >= _HALF else v


def reg(n: int) -> str:
    return f"r{n}"


class MiniInstruction(Instruction):
    """Base of the MiniVM's instructions (numbered from 0 in the order the tutorials list them)."""

    __slots__ = ()
    FIELDS: tuple = ()   # the operands, in the order the text writes them

    def fields(self) -> list:
        return [getattr(self, f) for f in self.FIELDS]

    @classmethod
    def from_fields(cls, fields):
        return cls(*fields)

    def __repr__(self) -> str:
        return self.text()


class LD(MiniInstruction):
    __slots__ = ("dst", "value")
    FIELDS = ("dst", "value")
    opcode, name = 0, "LD"

    def __init__(self, dst: int, value: int):
        self.dst, self.value = dst, value

    def text(self, func_names=None, kernel_names=None) -> str:
        return f"LD {reg(self.dst)} {self.value}"

    def writes(self) -> tuple:
        return (self.dst,)


class _Arith(MiniInstruction):
    __slots__ = ("a", "b", "dst")
    FIELDS = ("a", "b", "dst")

    def __init__(self, a: int, b: int, dst: int):
        self.a, self.b, self.dst = a, b, dst

    def text(self, func_names=None, kernel_names=None) -> str:
        return f"{self.name} {reg(self.a)} {reg(self.b)} {reg(self.dst)}"

    def reads(self) -> tuple:
        return (self.a, self.b)

    def writes(self) -> tuple:
        return (self.dst,)


class ADD(_Arith):
    __slots__ = ()
    opcode, name = 1, "ADD"


class SUB(_Arith):
    __slots__ = ()
    opcode, name = 2, "SUB"


class CH(MiniInstruction):
    """Conditional jump: to `target` when the register holds a value >= 0."""

    __slots__ = ("test", "target")
    FIELDS = ("test", "target")
    opcode, name = 3, "CH"
    is_jump = True

    def __init__(self, test: int, target: int):
        self.test, self.target = test, target

    def text(self, func_names=None, kernel_names=None) -> str:
        return f"CH {reg(self.test)} {self.target}"

    def reads(self) -> tuple:
        return (self.test,)

    def jump_targets(self, pc: int) -> tuple:
        return (self.target,)

    def successors(self, pc: int) -> tuple:
        return (pc + 1, self.target)


class JM(MiniInstruction):
    __slots__ = ("target",)
    FIELDS = ("target",)
    opcode, name = 4, "JM"
    is_jump = True
    falls_through = False

    def __init__(self, target: int):
        self.target = target

    def text(self, func_names=None, kernel_names=None) -> str:
        return f"JM {self.target}"

    def jump_targets(self, pc: int) -> tuple:
        return (self.target,)


class HL(MiniInstruction):
    """Halt; with `stays` (the broken tutorial loop) it leaves the pc where it is instead,
    so control comes back to it for ever: a jump to itself."""

    __slots__ = ("stays",)
    opcode, name = 5, "HL"
    falls_through = False

    def __init__(self, stays: bool = False):
        self.stays = bool(stays)

    @property
    def is_jump(self) -> bool:
        return self.stays

    @property
    def is_return(self) -> bool:
        return not self.stays

    def text(self, func_names=None, kernel_names=None) -> str:
        return "HL"

    def __eq__(self, other) -> bool:
        return type(other) is HL and other.stays == self.stays

    def __hash__(self) -> int:
        return hash((self.opcode, self.stays))

    def jump_targets(self, pc: int) -> tuple:
        return (pc,) if self.stays else ()


OPCODES = {cls.name: cls for cls in (LD, ADD, SUB, CH, JM, HL)}

__all__ = ["LD", "ADD", "SUB", "CH", "JM", "HL", "OPCODES", "MiniInstruction", "wrap", "reg",
           "WORD_BITS"]
