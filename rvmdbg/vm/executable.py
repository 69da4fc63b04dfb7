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
                                InvokePacked, KillRegister, LoadConst)
from rvmdbg.i18n import _, ngettext
from rvmdbg.wording import picture_controls

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
    have no entry).

    `sources` maps each file the source map names to its text (the program's own file and the
    prelude): an executable carries the text it was compiled from, so nothing ever opens a
    path named inside it (a saved file could name any path). `source_name`/`source_text` are
    the program's own file."""

    def __init__(self, functions: Sequence[VMFunction], constants: Sequence[np.ndarray],
                 kernels: Sequence[Kernel], source_map: dict | None = None,
                 source_text: str | None = None, source_name: str | None = None,
                 adt_constructor: dict | None = None, sources: dict | None = None):
        self.functions = list(functions)
        self.constants = list(constants)
        self.kernels = list(kernels)
        self.source_map: dict[tuple[int, int], Span] = dict(source_map or {})
        self.source_text = source_text
        self.source_name = source_name
        self.adt_constructor: dict[tuple[int, int], str] = dict(adt_constructor or {})
        # (function, pc) of an InvokePacked -> the lines of every call fused into its kernel,
        # when more than its own (set by the compiler; a saved executable keeps only spans)
        self.fused_lines: dict[tuple[int, int], tuple] = {}
        self.sources: dict[str, str] = dict(sources or {})
        if source_name is not None and source_text is not None:
            self.sources.setdefault(source_name, source_text)
        self._lines: dict[str, list] = {}
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
            known = ", ".join("@" + f.name for f in self.functions) or _("none")
            raise KeyError(_("no function @{func} in the executable (functions: {known})").format(
                func=name, known=known)) from None

    def function(self, name: str) -> VMFunction:
        return self.functions[self.func_index(name)]

    def function_names(self) -> list[str]:
        return [f.name for f in self.functions]

    def kernel_names(self) -> list[str]:
        return [k.name for k in self.kernels]

    def span_at(self, func_index: int, pc: int) -> Span | None:
        return self.source_map.get((func_index, pc))

    def source_of(self, file: str | None) -> str | None:
        """The text of `file` as the executable carries it (None when it carries none)."""
        if file is None or (file == self.source_name and self.source_text is not None):
            return self.source_text
        return self.sources.get(file)

    def source_lines(self, file: str | None) -> list | None:
        """`source_of(file)` split into lines (cached per text), or None."""
        text = self.source_of(file)
        if text is None:
            return None
        cached = self._lines.get(file)
        if cached is None or cached[0] is not text:
            cached = self._lines[file] = (text, [ln.rstrip("\r") for ln in text.split("\n")])
        return cached[1]

    def source_line(self, span: Span | None) -> str | None:
        """The text of the first line of `span`, from the carried sources, or None."""
        if span is None:
            return None
        lines = self.source_lines(span.file)
        if lines is None or not 1 <= span.line <= len(lines):
            return None
        # quoted in messages: a control character in the carried text is shown, not obeyed
        return picture_controls(lines[span.line - 1])

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
            raise InvalidExecutable(_("a function has an empty name"))
        if name in seen:
            raise InvalidExecutable(_("function @{func} is defined twice").format(func=name))
        seen.add(name)
    for i, c in enumerate(exe.constants):
        if not isinstance(c, np.ndarray):
            raise InvalidExecutable(_("constant {i} is not a tensor").format(i=i))
        if c.dtype.name not in DTYPES:
            raise InvalidExecutable(_("constant {i} has unsupported dtype {dtype}").format(
                i=i, dtype=c.dtype))
    for k, kern in enumerate(exe.kernels):
        if not isinstance(kern.name, str) or not kern.name:
            raise InvalidExecutable(_("kernel {k} has an empty name").format(k=k))
        if kern.num_inputs < 0 or kern.num_outputs < 0:
            raise InvalidExecutable(_("kernel {k} ({kernel}) has a negative arity").format(
                k=k, kernel=kern.name))
    for fi, func in enumerate(exe.functions):
        _check_function(exe, fi, func)
    for key, span in exe.source_map.items():
        fi, pc = key
        if not (0 <= fi < len(exe.functions) and 0 <= pc < len(exe.functions[fi].instructions)):
            raise InvalidExecutable(_("source map entry for function {fi}, pc {pc} has no "
                                      "instruction").format(fi=fi, pc=pc))
        if not isinstance(span, Span):
            raise InvalidExecutable(_("source map entry for function {fi}, pc {pc} is not a "
                                      "span").format(fi=fi, pc=pc))
        lines = exe.source_lines(span.file)
        if lines is not None:
            problem = span_problem(span, lines)
            if problem:
                raise InvalidExecutable(_("source map entry for function {fi}, pc {pc}: "
                                          "{problem}").format(fi=fi, pc=pc, problem=problem))
    for (fi, pc), con in exe.adt_constructor.items():
        if not (0 <= fi < len(exe.functions) and 0 <= pc < len(exe.functions[fi].instructions)
                and isinstance(exe.functions[fi].instructions[pc], AllocADT)):
            raise InvalidExecutable(_("constructor name {name} for function {fi}, pc {pc} "
                                      "does not name an alloc_data instruction").format(
                name=repr(con), fi=fi, pc=pc))
        if not isinstance(con, str) or not con:
            raise InvalidExecutable(_("empty constructor name for function {fi}, pc {pc}").format(
                fi=fi, pc=pc))


def span_problem(span: Span, lines: list) -> str | None:
    """Why `span` cannot lie in a text of these lines (None when it can): each end must be a
    line of the text and a column on it or just past its end, the end not before the start."""
    for start, line, col in ((True, span.line, span.col), (False, span.end_line, span.end_col)):
        if not 1 <= line <= len(lines):
            return (_("start line {line} is outside {file} ({n} lines)") if start else
                    _("end line {line} is outside {file} ({n} lines)")).format(
                line=line, file=span.file, n=len(lines))
        if not 1 <= col <= len(lines[line - 1]) + 1:
            return (_("start column {col} is outside line {line} of {file} ({n} characters)")
                    if start else
                    _("end column {col} is outside line {line} of {file} ({n} characters)")
                    ).format(col=col, line=line, file=span.file, n=len(lines[line - 1]))
    if (span.end_line, span.end_col) < (span.line, span.col):
        return _("ends ({end}) before it starts ({start})").format(
            end=f"{span.end_line}:{span.end_col}", start=f"{span.line}:{span.col}")
    return None


def _check_function(exe: Executable, fi: int, func: VMFunction) -> None:
    where = _("function @{func}").format(func=func.name)
    size = func.register_file_size
    if not isinstance(size, int) or not 0 <= size <= MAX_REGISTER_FILE_SIZE:
        raise InvalidExecutable(_("{where}: register file size {size} out of range "
                                  "(0..{most})").format(where=where, size=size,
                                                        most=MAX_REGISTER_FILE_SIZE))
    if len(func.params) > size:
        raise InvalidExecutable(_("{where}: {n} parameters but only {size} registers").format(
            where=where, n=len(func.params), size=size))
    if len(func.param_device_indexes) != len(func.params):
        raise InvalidExecutable(_("{where}: {n} parameters but {m} parameter devices").format(
            where=where, n=len(func.params), m=len(func.param_device_indexes)))
    code = func.instructions
    n = len(code)
    if n == 0:
        raise InvalidExecutable(_("{where}: no instructions").format(where=where))
    for pc, instr in enumerate(code):
        at = f"{where}, pc {pc}"
        if not isinstance(instr, Instruction):
            raise InvalidExecutable(_("{where}: not an instruction: {value}").format(
                where=at, value=repr(instr)))
        for r in instr.registers():
            if r >= size:
                raise InvalidExecutable(_("{where}: register ${reg} outside the register file "
                                          "(size {size}) in `{instruction}`").format(
                    where=at, reg=r, size=size, instruction=instr.text()))
        if isinstance(instr, If):
            if instr.true_offset == 0 or instr.false_offset == 0:
                raise InvalidExecutable(_("{where}: if offset 0 in `{instruction}`").format(
                    where=at, instruction=instr.text()))
        elif isinstance(instr, Goto) and instr.pc_offset == 0:
            raise InvalidExecutable(_("{where}: goto offset 0").format(where=at))
        for target in instr.jump_targets(pc):
            if not 0 <= target < n:
                raise InvalidExecutable(_("{where}: jump target {target} outside the function "
                                          "(0..{last}) in `{instruction}`").format(
                    where=at, target=target, last=n - 1, instruction=instr.text()))
        if isinstance(instr, (Invoke, AllocClosure)):
            if instr.func_index >= len(exe.functions):
                raise InvalidExecutable(_("{where}: function index {index} out of range ({n} "
                                          "functions)").format(where=at, index=instr.func_index,
                                                               n=len(exe.functions)))
            callee = exe.functions[instr.func_index]
            if isinstance(instr, Invoke) and len(instr.args) != len(callee.params):
                raise InvalidExecutable(ngettext(
                    "{where}: @{func} takes {n} argument, invoked with {m}",
                    "{where}: @{func} takes {n} arguments, invoked with {m}",
                    len(callee.params)).format(where=at, func=callee.name, n=len(callee.params),
                                               m=len(instr.args)))
            if isinstance(instr, AllocClosure) and len(instr.free_vars) > len(callee.params):
                raise InvalidExecutable(_("{where}: closure of @{func} captures {n} values but "
                                          "it takes {m} parameters").format(
                    where=at, func=callee.name, n=len(instr.free_vars), m=len(callee.params)))
        elif isinstance(instr, InvokePacked):
            if instr.packed_index >= len(exe.kernels):
                raise InvalidExecutable(_("{where}: kernel index {index} out of range ({n} "
                                          "kernels)").format(where=at, index=instr.packed_index,
                                                             n=len(exe.kernels)))
            kern = exe.kernels[instr.packed_index]
            if instr.arity != kern.arity or instr.output_size != kern.num_outputs:
                raise InvalidExecutable(_(
                    "{where}: kernel {kernel} takes {inputs} inputs and {outputs} outputs, "
                    "called with {given_inputs} and {given_outputs}").format(
                    where=at, kernel=kern.name, inputs=kern.num_inputs, outputs=kern.num_outputs,
                    given_inputs=instr.arity - instr.output_size,
                    given_outputs=instr.output_size))
        elif isinstance(instr, LoadConst):
            if instr.const_index >= len(exe.constants):
                raise InvalidExecutable(_("{where}: constant index {index} out of range ({n} "
                                          "constants)").format(where=at, index=instr.const_index,
                                                               n=len(exe.constants)))
    if code[-1].falls_through or isinstance(code[-1], If):
        raise InvalidExecutable(_("{where}: control falls off the end after pc {pc} "
                                  "(`{instruction}`); the last instruction must be ret, goto or "
                                  "fatal").format(where=where, pc=n - 1,
                                                  instruction=code[-1].text()))
    _check_defined_before_read(func, where)


def _check_defined_before_read(func: VMFunction, where: str) -> None:
    """Refuse a register read on some path before any write to it (or after its kill).

    A forward must-be-written analysis over the function's control flow: at entry only the
    parameters hold values; a join keeps what every incoming path wrote. Without it a crafted
    executable could return or pass on an empty register."""
    code = func.instructions
    n = len(code)
    full = frozenset(range(func.register_file_size))
    written_in: list = [None] * n     # None: not reached yet
    written_in[0] = frozenset(range(len(func.params)))
    work = [0]
    while work:
        pc = work.pop()
        instr = code[pc]
        have = written_in[pc]
        for r in instr.reads():
            if r not in have:
                raise InvalidExecutable(_("{where}, pc {pc}: `{instruction}` reads ${reg}, "
                                          "which is not written on every path to it").format(
                    where=where, pc=pc, instruction=instr.text(), reg=r))
        out = have
        if isinstance(instr, KillRegister):
            out = out - {instr.dst}
        elif instr.writes():
            out = out | frozenset(instr.writes())
        for nxt in instr.successors(pc):
            old = written_in[nxt]
            new = out if old is None else (old & out)
            if old is None or new != old:
                written_in[nxt] = new & full
                work.append(nxt)


__all__ = ["VMFunction", "Kernel", "Executable", "InvalidExecutable", "check_executable",
           "span_problem",
           "listing_line", "MAX_REGISTER_FILE_SIZE"]
