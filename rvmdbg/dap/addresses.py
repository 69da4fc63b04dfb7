"""Instruction addresses: the executable's functions laid end to end, one address per
instruction, so an editor's disassembly view can scroll across functions.

`@f:PC` (the command language's instruction spec) and a number (`0x1010`) both name an
instruction; addresses are written as hexadecimal numbers, which is what editors parse. They
start at `BASE`, so a view that asks for instructions before the first one still gets
addresses that are numbers (marked invalid).
"""
from __future__ import annotations

import bisect
import re

BASE = 0x1000
_SPEC = re.compile(r"^@?([A-Za-z_][\w.]*)(?::(\d+))?$")


class AddressError(ValueError):
    """A reference that names no instruction of the executable."""


class InstructionAddresses:
    """address <-> (function index, pc) for one executable."""

    def __init__(self, exe):
        self.exe = exe
        self.bases: list[int] = []
        total = 0
        for fn in exe.functions:
            self.bases.append(total)
            total += len(fn.instructions)
        self.size = total

    def address(self, func_index: int, pc: int) -> int:
        return BASE + self.bases[func_index] + pc

    def text(self, func_index: int, pc: int) -> str:
        return format_address(self.address(func_index, pc))

    def location(self, address: int) -> tuple[int, int] | None:
        """(function index, pc) at `address`, None outside the executable."""
        index = address - BASE
        if not 0 <= index < self.size:
            return None
        fi = bisect.bisect_right(self.bases, index) - 1
        return fi, index - self.bases[fi]

    def parse(self, reference: str) -> int:
        """The address a reference names: `0x1010`, `4112`, `@f:PC` or `@f` (its pc 0)."""
        text = str(reference).strip()
        try:
            return int(text, 0)
        except ValueError:
            pass
        m = _SPEC.match(text)
        if m is None:
            raise AddressError(f"cannot read instruction reference {reference!r}: use an "
                               f"address such as 0x1010 or @f:PC")
        try:
            fi = self.exe.func_index(m.group(1))
        except KeyError as exc:
            raise AddressError(str(exc.args[0])) from None
        pc = int(m.group(2) or 0)
        n = len(self.exe.functions[fi].instructions)
        if not 0 <= pc < n:
            raise AddressError(f"@{self.exe.functions[fi].name} has pcs 0..{n - 1}, not {pc}")
        return self.address(fi, pc)


def format_address(address: int) -> str:
    return f"0x{max(0, address):08x}"


__all__ = ["InstructionAddresses", "AddressError", "format_address"]
