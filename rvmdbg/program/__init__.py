"""The front door: what a program is and how each kind is read, below every front end.

`load_program(path)` reads any kind (`kind_for(path)` says which: `registry.py`), and the
functions here bind its arguments, compile it and run it on each executor. The command line
(`cli.py`), the DAP server (`dap/`), `serve.py` and the screen (`tui/program.py`) take their
programs from here; none of them decides by hand what a file is. A kind is one module beside
this one (`relay_text.py`, `rvmx.py`, `minivm.py`) plus one line in `registry.KINDS`.
"""
from __future__ import annotations

from typing import Callable

from rvmdbg.args import ArgumentError, bind_inputs
from rvmdbg.i18n import _
from rvmdbg.limits import Limits
from rvmdbg.program.base import (
    Debuggable, LoadOptions, Program, ProgramFailed, ProgramKind, ProgramLoadError, UsageError,
    refuse_foreign_options,
)
from rvmdbg.program.registry import KINDS, kind_for, kind_named
from rvmdbg.program.relay_text import read_source


def load_program(path: str, check: bool = True, missing_meta=None,
                 options: LoadOptions | None = None) -> Program:
    """The program at `path`, read by its kind: a `.relay` file parsed (with the prelude) and
    type-checked, a `.rvmx` executable loaded, a MiniVM `.mvm` program read (its executable is
    a `MiniProgram`), ... `check` and `missing_meta` (--meta-inputs / --meta-random) are
    shorthands for the `LoadOptions` fields, when no `options` are given."""
    if options is None:
        options = LoadOptions(check=check, missing_meta=missing_meta)
    kind = kind_for(path)
    refuse_foreign_options(kind.name, options)
    return kind.load(path, options)


def kind_of(program: Program) -> ProgramKind:
    """The program's kind (a Program built by hand is told by its path)."""
    return program.kind if program.kind is not None else kind_for(program.path)


def program_arguments(program: Program, entry: str, texts: list[str],
                      inputs: str | None = None, hint: str | None = None) -> list:
    """ARGs (or the program's `// args:` defaults when none are given) as runtime values;
    `inputs` (--inputs FILE.npz) binds the parameters after the ARGs by name. When none were
    given and some are needed, the error ends with `hint`: where this client takes them
    (default: the command line's, after PROGRAM; the DAP adapter names its launch settings)."""
    from rvmdbg.relay.loader import program_default_args
    if inputs is not None:
        texts = bind_inputs(entry_params(program, entry), texts, inputs, entry)
    elif not texts and program.text is not None:
        texts = program_default_args(program.text) or []
    try:
        return kind_of(program).bind(program, entry, texts)
    except ArgumentError as e:
        if not texts:
            e.message += "; " + (hint or _("give them after PROGRAM (the program has no "
                                           "`// args:` line)"))
            if kind_of(program).name == "onnx":
                from rvmdbg.program.onnx import test_folder_inputs
                found = test_folder_inputs(program.path)
                if found:
                    e.message += "; " + _("the ONNX test folder beside the model holds inputs: "
                                          "{args}").format(args=" ".join("@" + f for f in found))
        raise


def entry_params(program: Program, entry: str) -> list[str]:
    """The entry function's parameter names (without `%`)."""
    if program.module is not None:
        fn = program.module.functions.get(entry)
        if fn is None:
            known = ", ".join("@" + n for n in program.module.functions) or "none"
            raise ArgumentError(_("no function @{entry} in this program (functions: {known})").format(entry=entry, known=known))
        return [p.name for p in fn.params]
    try:
        return list(program.executable.function(entry).params)
    except KeyError as e:
        raise ArgumentError(str(e.args[0])) from None


def is_minivm(program: Program) -> bool:
    """Whether the MiniVM runs it (not the Relay VM)."""
    return kind_of(program).machine == "minivm"


# ------------------------------------------------------------------------------------ executors

def execute_interp(program: Program, entry: str, args: list, limits: Limits):
    """The reference interpreter, on the type-checked module."""
    from rvmdbg.relay.interpreter import Interpreter, InterpreterError
    if program.module is None:
        raise UsageError(f"{program.path}: " + _("the interpreter runs Relay source, and this is a "
                                                 "compiled executable; use --executor vm"))
    from rvmdbg.passes.pipeline import memory_stage
    stage = memory_stage(program.module)
    if stage is not None:
        raise UsageError(f"{program.path}: " + _("this is a printed {stage} stage: its memory dialect "
                                                 "runs on the VM only; use --executor vm").format(stage=stage))
    try:
        return Interpreter(program.module, limits).run(entry, args)
    except InterpreterError as e:
        raise ProgramFailed(e.format(program.source)) from None


def entries_for(entry: str) -> tuple:
    """The functions a compile keeps with what they reach: @main, and the entry run."""
    return ("main",) if entry == "main" else ("main", entry)


def executable_of(program: Program, entry: str = "main"):
    """The program's executable: the loaded .rvmx, or the .relay program compiled now."""
    if program.executable is not None:
        return program.executable
    from rvmdbg.vm.compiler import CompileError, compile_module
    try:
        return compile_module(program.module, entries=entries_for(entry))
    except CompileError as e:
        raise UsageError(f"{program.path}: " + _("cannot compile for the VM: {error}").format(
            error=e)) from None


def execute_vm(program: Program, entry: str, args: list, limits: Limits):
    """Compile (unless it is a loaded .rvmx) and run on the Relay VM (or the machine the
    executable names: a Relax executable's)."""
    from rvmdbg.debug.machine import machine_for
    from rvmdbg.vm.machine import VMError
    exe = executable_of(program, entry)
    try:
        return machine_for(exe, limits).invoke(entry, args)   # the program's own machine (Relax)
    except VMError as e:
        raise ProgramFailed(vm_error_text(e, exe)) from None


def vm_error_text(err, exe) -> str:
    """A VMError as printed: its own format (the quoted line comes from the text the
    executable carries, the prelude's too: never from a path it names), and the calls that
    led there."""
    out = [err.format()]
    for name, pc in err.backtrace[1:6]:
        where = ""
        if name in exe.global_map:
            caller_span = exe.span_at(exe.global_map[name], pc)
            where = f" ({caller_span})" if caller_span is not None else ""
        out.append("  " + _("called from @{func} pc={pc}").format(func=name, pc=pc) + where)
    return "\n".join(out)


def execute_graph(program: Program, entry: str, args: list, limits: Limits):
    """The static-graph executor: lower to a planned graph and run it. A program that needs
    the VM is refused with a GraphRefusal (a RelayError: exit 2)."""
    from rvmdbg.graph import GraphExecutor, GraphRunError, lower_to_graph
    if program.module is None:
        raise UsageError(f"{program.path}: " + _("the graph executor runs Relay source, and this is a "
                                                 "compiled executable; use --executor vm"))
    graph = lower_to_graph(program.module, entry)
    try:
        return GraphExecutor(graph, limits=limits).run(args)
    except GraphRunError as e:
        raise ProgramFailed(e.format(program.source)) from None


# name -> run(program, entry, args, limits) -> value; adding an executor is one line here
EXECUTORS: dict[str, Callable] = {
    "vm": execute_vm,
    "interp": execute_interp,
    "graph": execute_graph,
}


__all__ = ["Debuggable", "EXECUTORS", "KINDS", "LoadOptions", "Program", "ProgramFailed",
           "ProgramKind", "ProgramLoadError", "UsageError", "entries_for", "entry_params",
           "executable_of", "execute_graph", "execute_interp", "execute_vm", "is_minivm",
           "kind_for", "kind_named", "kind_of", "load_program", "program_arguments",
           "read_source", "vm_error_text"]
