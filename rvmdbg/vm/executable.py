"""A compiled Relay VM program: functions of bytecode, a constant pool, kernels, a source map.

`Executable.bytecode()` prints the program in the layout of TVM's `exe.bytecode`;
`constants_text()` and `primitives()` mirror `exe.constants` and TVM's primitive listing.
`check_executable` verifies the invariants the VM relies on (operand ranges, jump targets,
no falling off the end of a function); `serialize.load` runs it on every file it reads.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from rvmdbg.relay.diagnostics import Span
from rvmdbg.vm.bytecode import (DTYPES, AllocADT, AllocClosure, Goto, If, Instruction, Invoke,
                                InvokePacked, LoadConst)

# A frame's register file is a Python list of this many slots; a larger declared size in a
# file is treated as corrupt rather than allocated.
MAX_REGISTER_FILE_SIZE = 1 << 20


class InvalidExecutable(ValueError):
    """An executable that breaks an invariant the VM relies on; the message says where."""


class VMFunction:
    """One global function: its parameters occupy registers 0..len(params)-1."""

    __slots__ = ("name", "params", "register_file_size", "instructions", "param_device_indexes")

    def __init__(self, name: str, params: Sequence[str], register_file_size: int,
                 instructions: Sequence[Instruction], param_device_indexes=None):
        self.name = name
        self.params = list(params)
        self.register_file_size = register_file_size
        self.instructions = list(instructions)
        self.param_device_indexes = (list(param_device_indexes) if param_device_indexes is not None
                                     else [0] * len(self.params))

    def __eq__(self, other) -> bool:
        return (isinstance(other, VMFunction) and self.name == other.name
                and self.params == other.params
                and self.register_file_size == other.register_file_size
                and self.instructions == other.instructions
                and self.param_device_indexes == other.param_device_indexes)

    __hash__ = None

    def __repr__(self) -> str:
        return (f"VMFunction({self.name!r}, params={self.params!r}, "
                f"register_file_size={self.register_file_size}, "
                f"instructions=<{len(self.instructions)}>)")


class Kernel:
    """A primitive (fused) function the VM calls with InvokePacked.

    `source` is the Relay text of the primitive function, or "" for a built-in kernel
    (`ref_create`, `ref_read`, `ref_write`). `impl` is the callable: set by the compiler, or
    rebuilt from `source` on load by `rvmdbg.vm.kernels.build_kernel`.
    """

    __slots__ = ("name", "source", "num_inputs", "num_outputs", "builtin", "impl")

    def __init__(self, name: str, source: str, num_inputs: int, num_outputs: int,
                 builtin: bool = False, impl: Callable | None = None):
        self.name = name
        self.source = source
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self.builtin = builtin
        self.impl = impl

    @property
    def arity(self) -> int:
        return self.num_inputs + self.num_outputs

    def __eq__(self, other) -> bool:
        # `impl` is derived from `source`, so it takes no part in equality.
        return (isinstance(other, Kernel) and self.name == other.name
                and self.source == other.source and self.num_inputs == other.num_inputs
                and self.num_outputs == other.num_outputs and self.builtin == other.builtin)

    __hash__ = None

    def __repr__(self) -> str:
        kind = ", builtin" if self.builtin else ""
        return f"Kernel({self.name!r}, in={self.num_inputs}, out={self.num_outputs}{kind})"


class Executable:
    """Functions (index = TVM's global index), constants, kernels (index = PackedFunc index),
    a source map from (function index, pc) to the Relay span the instruction came from, and
    `adt_constructor`: (function index, pc) of an AllocADT -> the constructor's name (TVM's
    bytecode carries only the tag; values need the name to print as `Cons(1, Nil)`; tuples
    have no entry)."""

    def __init__(self, functions: Sequence[VMFunction], constants: Sequence[np.ndarray],
                 kernels: Sequence[Kernel], source_map: dict | None = None,
                 source_text: str | None = None, source_name: str | None = None,
                 adt_constructor: dict | None = None):
        self.functions = list(functions)
        self.constants = list(constants)
        self.kernels = list(kernels)
        self.source_map: dict[tuple[int, int], Span] = dict(source_map or {})
        self.source_text = source_text
        self.source_name = source_name
        self.adt_constructor: dict[tuple[int, int], str] = dict(adt_constructor or {})
        self._global_map: dict[str, int] = {}

    # ------------------------------------------------------------ lookup

    @property
    def global_map(self) -> dict[str, int]:
        """Function name -> index (TVM's `global_map`)."""
        if len(self._global_map) != len(self.functions):
            self._global_map = {f.name: i for i, f in enumerate(self.functions)}
        return self._global_map

    def func_index(self, name: str) -> int:
        name = name[1:] if name.startswith("@") else name
        try:
            return self.global_map[name]
        except KeyError:
            known = ", ".join("@" + f.name for f in self.functions) or "none"
            raise KeyError(f"no function @{name} in the executable (functions: {known})") from None

    def function(self, name: str) -> VMFunction:
        return self.functions[self.func_index(name)]

    def function_names(self) -> list[str]:
        return [f.name for f in self.functions]

    def kernel_names(self) -> list[str]:
        return [k.name for k in self.kernels]

    def span_at(self, func_index: int, pc: int) -> Span | None:
        return self.source_map.get((func_index, pc))

    # ------------------------------------------------------------ TVM-style listings

    def bytecode(self, names: bool = False) -> str:
        """The program in TVM's `exe.bytecode` layout; `names=True` notes callee and
        constructor names after the TVM text."""
        func_names = self.function_names() if names else None
        kernel_names = self.kernel_names() if names else None
        out = []
        for i, func in enumerate(self.functions):
            out.append(f"VM Function[{i}]: {func.name}({', '.join(func.params)})\n")
            out.append(f"# reg file size = {func.register_file_size}\n")
            out.append(f"# instruction count = {len(func.instructions)}\n")
            out.append("opcode, fields # inst(text):\n")
            for pc, instr in enumerate(func.instructions):
                line = listing_line(pc, instr, func_names, kernel_names)
                if names and (i, pc) in self.adt_constructor:
                    line += f"  // {self.adt_constructor[(i, pc)]}"
                out.append(line + "\n")
            out.append("\n")
        return "".join(out)

    def constants_text(self, preview: int = 0) -> str:
        """One line per constant, as TVM's `exe.constants` prints them; with `preview`, a
        tensor whose values TVM does not show (rank 2+, or more than 10) gets its first
        `preview` values in a trailing comment."""
        out = []
        for i, c in enumerate(self.constants):
            line = f"VM Const[{i}]: {_ndarray_summary(c)} on device index 0"
            if preview and not _shows_contents(c) and c.size:
                flat = c.reshape(-1)[:preview]
                items = [_item_text(v, c.dtype) for v in flat]
                more = ", ..." if c.size > preview else ""
                line += f"  // {', '.join(items)}{more}"
            out.append(line + "\n")
        return "".join(out)

    def primitives(self) -> str:
        """One line per kernel, as TVM's primitive listing prints them."""
        return "".join(f"VM PackedFunc[{i}]: {k.name}\n" for i, k in enumerate(self.kernels))

    def stats(self) -> str:
        """A short summary in the spirit of TVM's `exe.stats`."""
        shapes = ", ".join("scalar" if c.ndim == 0 else str(list(c.shape)) for c in self.constants)
        globals_ = ", ".join(f'("{f.name}", {i})' for i, f in enumerate(self.functions))
        return ("Relay VM executable statistics:\n"
                f"  Constant shapes (# {len(self.constants)}): [{shapes}]\n"
                f"  Globals (#{len(self.functions)}): [{globals_}]\n"
                f"  Primitive ops (#{len(self.kernels)}): [{', '.join(self.kernel_names())}]\n")

    def __repr__(self) -> str:
        return (f"Executable(functions={self.function_names()!r}, "
                f"constants={len(self.constants)}, kernels={self.kernel_names()!r})")


def listing_line(pc: int, instr: Instruction, func_names=None, kernel_names=None) -> str:
    """One line of the bytecode listing: `pc: opcode fields`, padded to 40, `  # text`."""
    head = f"{pc:>2}: {instr.opcode} " + "".join(f"{v} " for v in instr.fields())
    return f"{head:<40}  # {instr.text(func_names, kernel_names)}"


def _shows_contents(a: np.ndarray) -> bool:
    """TVM prints the values of scalars and of vectors of at most 10 elements."""
    return a.ndim == 0 or (a.ndim == 1 and 0 < a.shape[0] <= 10)


def _item_text(v, dtype) -> str:
    return format(float(v), "g") if dtype.kind == "f" else str(int(v))


def _ndarray_summary(a: np.ndarray) -> str:
    # TVM's RuntimeObject2String: shape, dtype, (device type, id); contents for scalars and
    # short vectors only.
    dims = ",".join(str(d) for d in a.shape)
    text = f"NDArray[({dims}),{a.dtype},(1,0)]"
    if _shows_contents(a):
        text += "=[" + ",".join(_item_text(v, a.dtype) for v in a.reshape(-1)) + "]"
    return text


# ---------------------------------------------------------------- verification

def check_executable(exe: Executable) -> None:
    """Raise InvalidExecutable at the first broken invariant the VM relies on."""
    names = [f.name for f in exe.functions]
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise InvalidExecutable("a function has an empty name")
        if name in seen:
            raise InvalidExecutable(f"function @{name} is defined twice")
        seen.add(name)
    for i, c in enumerate(exe.constants):
        if not isinstance(c, np.ndarray):
            raise InvalidExecutable(f"constant {i} is not a tensor")
        if c.dtype.name not in DTYPES:
            raise InvalidExecutable(f"constant {i} has unsupported dtype {c.dtype}")
    for k, kern in enumerate(exe.kernels):
        if not isinstance(kern.name, str) or not kern.name:
            raise InvalidExecutable(f"kernel {k} has an empty name")
        if kern.num_inputs < 0 or kern.num_outputs < 0:
            raise InvalidExecutable(f"kernel {k} ({kern.name}) has a negative arity")
    for fi, func in enumerate(exe.functions):
        _check_function(exe, fi, func)
    for key, span in exe.source_map.items():
        fi, pc = key
        if not (0 <= fi < len(exe.functions) and 0 <= pc < len(exe.functions[fi].instructions)):
            raise InvalidExecutable(f"source map entry for function {fi}, pc {pc} has no instruction")
        if not isinstance(span, Span):
            raise InvalidExecutable(f"source map entry for function {fi}, pc {pc} is not a span")
    for (fi, pc), con in exe.adt_constructor.items():
        if not (0 <= fi < len(exe.functions) and 0 <= pc < len(exe.functions[fi].instructions)
                and isinstance(exe.functions[fi].instructions[pc], AllocADT)):
            raise InvalidExecutable(f"constructor name {con!r} for function {fi}, pc {pc} "
                                    f"does not name an alloc_data instruction")
        if not isinstance(con, str) or not con:
            raise InvalidExecutable(f"empty constructor name for function {fi}, pc {pc}")


def _check_function(exe: Executable, fi: int, func: VMFunction) -> None:
    where = f"function @{func.name}"
    size = func.register_file_size
    if not isinstance(size, int) or not 0 <= size <= MAX_REGISTER_FILE_SIZE:
        raise InvalidExecutable(f"{where}: register file size {size} out of range "
                                f"(0..{MAX_REGISTER_FILE_SIZE})")
    if len(func.params) > size:
        raise InvalidExecutable(f"{where}: {len(func.params)} parameters but only {size} registers")
    if len(func.param_device_indexes) != len(func.params):
        raise InvalidExecutable(f"{where}: {len(func.params)} parameters but "
                                f"{len(func.param_device_indexes)} parameter devices")
    code = func.instructions
    n = len(code)
    if n == 0:
        raise InvalidExecutable(f"{where}: no instructions")
    for pc, instr in enumerate(code):
        at = f"{where}, pc {pc}"
        if not isinstance(instr, Instruction):
            raise InvalidExecutable(f"{at}: not an instruction: {instr!r}")
        for r in instr.registers():
            if r >= size:
                raise InvalidExecutable(f"{at}: register ${r} outside the register file "
                                        f"(size {size}) in `{instr.text()}`")
        if isinstance(instr, If):
            if instr.true_offset == 0 or instr.false_offset == 0:
                raise InvalidExecutable(f"{at}: if offset 0 in `{instr.text()}`")
        elif isinstance(instr, Goto) and instr.pc_offset == 0:
            raise InvalidExecutable(f"{at}: goto offset 0")
        for target in instr.jump_targets(pc):
            if not 0 <= target < n:
                raise InvalidExecutable(f"{at}: jump target {target} outside the function "
                                        f"(0..{n - 1}) in `{instr.text()}`")
        if isinstance(instr, (Invoke, AllocClosure)):
            if instr.func_index >= len(exe.functions):
                raise InvalidExecutable(f"{at}: function index {instr.func_index} out of range "
                                        f"({len(exe.functions)} functions)")
            callee = exe.functions[instr.func_index]
            if isinstance(instr, Invoke) and len(instr.args) != len(callee.params):
                raise InvalidExecutable(f"{at}: @{callee.name} takes {len(callee.params)} "
                                        f"arguments, invoked with {len(instr.args)}")
            if isinstance(instr, AllocClosure) and len(instr.free_vars) > len(callee.params):
                raise InvalidExecutable(f"{at}: closure of @{callee.name} captures "
                                        f"{len(instr.free_vars)} values but it takes "
                                        f"{len(callee.params)} parameters")
        elif isinstance(instr, InvokePacked):
            if instr.packed_index >= len(exe.kernels):
                raise InvalidExecutable(f"{at}: kernel index {instr.packed_index} out of range "
                                        f"({len(exe.kernels)} kernels)")
            kern = exe.kernels[instr.packed_index]
            if instr.arity != kern.arity or instr.output_size != kern.num_outputs:
                raise InvalidExecutable(
                    f"{at}: kernel {kern.name} takes {kern.num_inputs} inputs and "
                    f"{kern.num_outputs} outputs, called with {instr.arity - instr.output_size} "
                    f"and {instr.output_size}")
        elif isinstance(instr, LoadConst):
            if instr.const_index >= len(exe.constants):
                raise InvalidExecutable(f"{at}: constant index {instr.const_index} out of range "
                                        f"({len(exe.constants)} constants)")
    if code[-1].falls_through or isinstance(code[-1], If):
        raise InvalidExecutable(f"{where}: control falls off the end after pc {n - 1} "
                                f"(`{code[-1].text()}`); the last instruction must be "
                                f"ret, goto or fatal")


__all__ = ["VMFunction", "Kernel", "Executable", "InvalidExecutable", "check_executable",
           "listing_line", "MAX_REGISTER_FILE_SIZE"]
