"""Names a program kind gives the places and values of its source, for the debugger.

A program made from another format (an ONNX graph) keeps that format's names: its nodes are
lines of the program's source, its tensors are values some line computes. The program kind
hands the session a `NameTable` (plain names, lines and arrays: the debugger never sees the
format's own types), and then `break NAME` stops where that line's code starts and `print
NAME` shows the value by reading the register the line's kernel wrote.

`NameTable(places, values, kind)`: `places` name -> source line; `values` name ->
`Produced(line, index)` (output `index` of the kernel at `line`), `Param(index)` (the entry
function's parameter) or `Fixed(array)` (a value known before the run, such as a weight).
`find_value(exe, frame, ref)` -> `(register or None, value, note)`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rvmdbg.i18n import _


@dataclass(frozen=True)
class Produced:
    line: int       # the source line whose kernel computes the value
    index: int = 0  # which of that kernel's outputs


@dataclass(frozen=True)
class Param:
    index: int      # the entry function's parameter


@dataclass(frozen=True, eq=False)
class Fixed:
    value: object   # known before the run (a constant the program holds)


@dataclass
class NameTable:
    places: dict = field(default_factory=dict)   # name -> source line
    values: dict = field(default_factory=dict)   # name -> Produced | Param | Fixed
    kind: str = "node"                           # what a place is called in messages

    def line_names(self) -> dict:
        """Source line -> the place name on it."""
        return {line: name for name, line in self.places.items()}


def place_names(exe, by_line: dict, fi: int, pc: int) -> str | None:
    """The names of the places an instruction comes from, as a stop or trace line shows them:
    a fused kernel's call names every node fused into it, in source order (`Conv_12,
    Relu_13`); another instruction the name on its line; None when its lines have none.
    `by_line`: `NameTable.line_names()`."""
    lines = getattr(exe, "fused_lines", {}).get((fi, pc))   # a Relay VM executable's
    if lines is None:
        line = _line_of(exe, fi, pc)
        lines = () if line is None else (line,)
    names = [by_line[line] for line in lines if line in by_line]
    return ", ".join(dict.fromkeys(names)) if names else None


def _line_of(exe, fi: int, pc: int):
    from rvmdbg.debug.breakpoints import instruction_line
    return instruction_line(exe, fi, pc)


def find_value(exe, frame, ref):
    """Where `ref` is in `frame`: (register, its value or None, note) for a produced value or
    parameter; (None, the value, note) for a fixed one. The note says why there is no value
    yet (the kernel has not run, or fused it away)."""
    if isinstance(ref, Fixed):
        return None, ref.value, _("a constant of the program")
    if isinstance(ref, Param):
        r = ref.index
        value = frame.registers[r] if r < len(frame.registers) else None
        return r, value, None
    fi = exe.func_index(frame.func_name)
    fn = exe.functions[fi]
    outs = []
    for pc, ins in enumerate(fn.instructions):
        if getattr(ins, "is_kernel_call", False) and hasattr(ins, "outputs") \
                and _line_of(exe, fi, pc) == ref.line:
            outs.append((pc, list(ins.outputs)))
    if not outs:
        return None, None, _("no kernel of @{func} computes it on its own (folded, or fused "
                             "into the kernel of a later line)").format(func=fn.name)
    pc, regs = outs[-1]
    if ref.index >= len(regs):
        return None, None, _("the kernel at line {line} has {n} output(s)").format(
            line=ref.line, n=len(regs))
    r = regs[ref.index]
    value = frame.registers[r] if r < len(frame.registers) else None
    note = None
    if frame.pc <= pc:
        note = _("not computed yet (its kernel is at pc {pc})").format(pc=pc)
        value = None
    return r, value, note
