"""The `rvmdbg` command line (../shared/reference/cli-contract.md): subcommands, exit codes, errors.

Each subcommand is one `Command` in `COMMANDS` (its argparse set-up and its handler). What a
program is, how each kind is read and each way of running it (`EXECUTORS`) come from the front
door, `rvmdbg.program`; the exit codes and shared option sets from `rvmdbg.cmdline`. Handlers raise; `main` maps what they
raise to the contract's exit codes: 0 success, 1 the program failed while running, 2 bad input
(usage, unreadable file, lex/parse/type error, bad argument), 130 interrupted. A user's mistake
never prints a Python traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rvmdbg import __version__
from rvmdbg.argparse_i18n import TranslatedParser
from rvmdbg.argparse_i18n import speaking as argparse_speaking
from rvmdbg.args import ArgumentError, set_array_limit
from rvmdbg.cmdline import (
    EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, add_limit_options,
    add_meta_options, add_program_args, configure_screen as _configure_screen, limits_from,
    load_options_from, missing_meta_from, positive as _positive,
)
from rvmdbg.program import (
    EXECUTORS, Program, ProgramFailed, UsageError, executable_of, is_minivm, kind_for,
    load_program, program_arguments, read_source, vm_error_text,
)
from rvmdbg.relay.diagnostics import RelayError
from rvmdbg.values import format_value, to_json
from rvmdbg.wording import plural
from rvmdbg.i18n import LANGUAGES, N_, _, ngettext
from rvmdbg.i18n import setup as setup_language


# ------------------------------------------------------------------------------------ commands

@dataclass
class Command:
    """One subcommand: `configure(parser)` adds its arguments, `handler(ns) -> exit code`."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]


def _configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("program", metavar="PROGRAM", help=_("a .relay file"))
    add_meta_options(p)


def _definition_lines(mod, own_file: str) -> tuple[list[str], list[str]]:
    """`type ...` and `def @f(...) -> T` lines: the program's own, and the prelude's it uses."""
    entries = []
    for td in mod.type_defs.values():
        params = ("[" + ", ".join(str(p) for p in td.type_params) + "]") if td.type_params else ""
        if td.extern:
            text = f"extern type {td.name}{params}"
        else:
            ctors = ", ".join(c.name + ("(" + ", ".join(str(t) for t in c.inputs) + ")"
                                        if c.inputs else "") for c in td.constructors)
            text = f"type {td.name}{params} {{ {ctors} }}"
        entries.append((td.span, text))
    for name, fn in mod.functions.items():
        ft = fn.checked_type
        tps = getattr(ft, "type_params", ()) or fn.type_params
        tp = ("[" + ", ".join(str(t) for t in tps) + "]") if tps else ""
        types = list(ft.params) if ft is not None else [p.checked_type for p in fn.params]
        params = ", ".join(f"%{p.name}: {t}" for p, t in zip(fn.params, types))
        ret = ft.ret if ft is not None else fn.ret_type
        entries.append((fn.span, f"def @{name}{tp}({params}) -> {ret}"))

    def key(entry):
        sp = entry[0]
        return (sp.line, sp.col) if sp is not None else (0, 0)
    own = [e for e in entries if e[0] is not None and e[0].file == own_file]
    other = [e for e in entries if not (e[0] is not None and e[0].file == own_file)]
    return [t for _, t in sorted(own, key=key)], [t for _, t in sorted(other, key=key)]


def cmd_check(ns: argparse.Namespace) -> int:
    if kind_for(ns.program).compiled:
        raise UsageError(f"{ns.program}: " + _("check reads Relay source, not a compiled executable"))
    if getattr(ns, "engine", None) == "tvm":   # TVM's import gives a Relax executable, no Relay
        raise UsageError(f"{ns.program}: " + _("check reads Relay source; with --engine tvm the "
                                               "model becomes a Relax executable (use run, trace "
                                               "or debug)"))
    program = load_program(ns.program, options=load_options_from(ns))
    if is_minivm(program):
        exe = program.executable
        print(f"{ns.program}: a MiniVM program of {plural(len(exe.instructions), 'instruction')} "
              f"and {plural(exe.register_count, 'register')}"
              + (" (HL leaves the pc where it is)" if exe.hl_stays else ""))
        return EXIT_OK
    own, prelude = _definition_lines(program.module, program.path)
    out = own[:]
    if prelude:
        out.append("// from the prelude:")
        out.extend(prelude)
    print("\n".join(out))
    for w in getattr(program.module, "warnings", [])[program.parse_warnings:]:
        print(w.format(program.source) if hasattr(w, "format") else str(w), file=sys.stderr)
    return EXIT_OK


def _configure_run(p: argparse.ArgumentParser) -> None:
    add_program_args(p)
    p.add_argument("--entry", default="main", metavar="NAME",
                   help=_("the function to run (default main)"))
    p.add_argument("--executor", default="vm", choices=list(EXECUTORS),
                   help=_("how to run it (default vm)"))
    p.add_argument("--json", action="store_true", help=_('print {"result": ...} as JSON'))
    p.add_argument("--stats", action="store_true",
                   help=_("after the result, print the VM's storage figures (the pool's, and "
                          "its peak against the graph executor's plan)"))
    p.add_argument("--no-pool", action="store_true",
                   help=_("run without the pooled storage allocator (for comparison)"))
    _trace_and_threads(p)
    add_limit_options(p)


def _trace_and_threads(p: argparse.ArgumentParser) -> None:
    from rvmdbg.cmdline import add_threads_option
    from rvmdbg.profile_cli import add_trace_option
    add_trace_option(p)
    add_threads_option(p)


def run_minivm(program: Program, ns: argparse.Namespace) -> int:
    """`rvmdbg run PROGRAM.mvm`: run on the MiniVM; print the final registers."""
    from rvmdbg.minivm.machine import MiniMachine, registers_text
    from rvmdbg.vm.machine import VMError
    if ns.executor != "vm":
        raise UsageError(f"{program.path}: a MiniVM program runs on the MiniVM only "
                         f"(--executor vm, the default)")
    if ns.args or ns.inputs:
        raise UsageError(f"{program.path}: a MiniVM program takes no arguments "
                         "(its LD instructions set the registers)")
    machine = MiniMachine(program.executable, limits_from(ns))
    try:
        result = machine.invoke()
    except VMError as e:
        raise ProgramFailed(e.format()) from None
    if ns.json:
        print(json.dumps({"result": list(result), "steps": machine.steps}))
    else:
        print(registers_text(result))
    return EXIT_OK


def cmd_run(ns: argparse.Namespace) -> int:
    from rvmdbg.relay.interpreter import call_with_deep_stack
    program = load_program(ns.program, options=load_options_from(ns))
    if is_minivm(program):
        return run_minivm(program, ns)
    entry = ns.entry.lstrip("@")
    args = program_arguments(program, entry, ns.args, ns.inputs)
    execute = EXECUTORS[ns.executor]
    limits = limits_from(ns)
    stats: list[str] = []
    if ns.trace_file:
        if ns.executor != "vm":
            raise UsageError(_("--trace writes a run on the VM (--executor vm, the default)"))
        from rvmdbg.profile_cli import traced_result

        def execute(program, entry, args, limits):  # noqa: F811 (the same call, traced)
            return traced_result(program, entry, args, ns)
    elif (ns.stats or ns.no_pool) and ns.executor == "vm":
        execute = _pool_executor(ns, stats)

    def run_and_render() -> str:
        from rvmdbg.threads import limited
        # deep results (long lists) print recursively: render on the same deep stack
        with limited(ns.threads):
            value = execute(program, entry, args, limits)
        try:
            if ns.json:
                return json.dumps({"result": to_json(value)})
            return format_value(value)
        except RecursionError:
            raise ProgramFailed(_("error: {message}").format(message=_("the result is nested too deeply to print"))) from None
    text = call_with_deep_stack(run_and_render)
    print(text)
    for line in stats:
        print(line)
    return EXIT_OK


def _pool_executor(ns: argparse.Namespace, lines: list):
    """`run --stats` / `--no-pool` on the Relay VM: runs as `execute_vm` does, then puts the
    storage figures in `lines` (a program another machine runs, Relax's or the MiniVM's, runs
    as without the options)."""
    from rvmdbg.program import execute_vm, executable_of, vm_error_text
    from rvmdbg.vm.executable import Executable
    from rvmdbg.vm.machine import VirtualMachine, VMError
    from rvmdbg.vm.memory_report import graph_plan_bytes, stats_lines, stepped_peak

    def execute(program, entry, args, limits):
        exe = executable_of(program, entry)
        if not isinstance(exe, Executable):
            return execute_vm(program, entry, args, limits)
        vm = VirtualMachine(exe, limits, pool=not ns.no_pool)
        try:
            value = vm.invoke(entry, list(args))
            if ns.stats:
                unpooled = (stepped_peak(VirtualMachine(exe, limits, pool=False), entry, args)
                            if ns.no_pool else None)
                module = getattr(program, "module", None)
                plan = graph_plan_bytes(module) if module is not None and entry == "main" else None
                lines.extend(stats_lines(vm.memory_stats(), vm.steps, plan, unpooled))
        except VMError as e:
            raise ProgramFailed(vm_error_text(e, exe)) from None
        return value
    return execute


def _configure_compile(p: argparse.ArgumentParser) -> None:
    p.add_argument("program", metavar="PROGRAM", help=_("a .relay file (or a saved .rvmx to list)"))
    add_meta_options(p)
    p.add_argument("-o", "--output", metavar="FILE.rvmx", help=_("also save the executable"))
    p.add_argument("--passes", action="store_true",
                   help=_("first print the program after each compiler pass"))
    p.add_argument("--stage", metavar="PASS",
                   help=_("print only the program after this pass (e.g. ManifestAlloc) with its "
                          "#[metadata] section: a file that reads back and runs"))
    p.add_argument("--reuse-registers", action="store_true",
                   help=_("share registers between values whose lifetimes do not overlap"))
    p.add_argument("--names", action="store_true",
                   help=_("note callee, kernel and constructor names after each instruction"))


CONSTANT_PREVIEW = 4  # values shown of a constant TVM prints without its contents


def _print_stage(program: Program, name: str) -> int:
    """`compile --stage PASS`: one pass stage printed whole, metadata included."""
    from rvmdbg.relay.printer import print_module
    from rvmdbg.vm.compiler import CompileError, compile_stages
    try:
        stages = compile_stages(program.module)[0]
    except CompileError as e:
        raise UsageError(f"{program.path}: " + _("cannot compile for the VM: {error}").format(
            error=e)) from None
    by_name = {st.name.lower(): st for st in stages}
    stage = by_name.get(name.lower())
    if stage is None:
        raise UsageError(_("no pass stage {name}; the stages are {stages}").format(
            name=repr(name), stages=", ".join(st.name for st in stages)))
    text = print_module(stage.module)
    args_line = next((line for line in (program.text or "").splitlines()
                      if line.startswith("// args:")), None)
    if args_line is not None:  # the stage runs with the program's default arguments too
        header, rest = text.split("\n", 1)
        text = f"{header}\n{args_line}\n{rest}"
    sys.stdout.write(text)
    return EXIT_OK


def cmd_compile(ns: argparse.Namespace) -> int:
    from rvmdbg.vm.compiler import CompileError, compile_module, compile_stages
    from rvmdbg.vm.regalloc import register_report_text, reuse_registers
    program = load_program(ns.program, options=load_options_from(ns))
    out = sys.stdout
    report = None
    if program.executable is not None:
        if ns.passes or ns.stage:
            raise UsageError(f"{program.path}: " + _("a saved executable keeps no compiler passes"))
    elif ns.stage:
        return _print_stage(program, ns.stage)
    if program.executable is not None:
        exe = program.executable
        if ns.reuse_registers:
            report = reuse_registers(exe)
    else:
        try:
            if ns.passes:
                stages, exe = compile_stages(program.module)
                for stage in stages:
                    out.write(f"// ==== {stage.name}: {stage.description}\n{stage.text}\n")
                out.write("// ==== Bytecode\n")
            else:
                exe = compile_module(program.module)
        except CompileError as e:
            raise UsageError(f"{program.path}: " + _("cannot compile for the VM: {error}").format(
                error=e)) from None
        if ns.reuse_registers:
            report = reuse_registers(exe)
    # TVM's compiler logs the constant pool and the kernel table before the bytecode
    for table in (exe.constants_text(preview=CONSTANT_PREVIEW), exe.primitives()):
        if table:
            out.write(table + "\n")
    out.write(exe.bytecode(names=ns.names))
    if report is not None:
        out.write(register_report_text(report))
    if ns.output:
        from rvmdbg.vm.serialize import save
        save(exe, ns.output)
        _error(_("saved {path}").format(path=ns.output))
    return EXIT_OK


def _configure_trace(p: argparse.ArgumentParser) -> None:
    add_program_args(p)
    p.add_argument("--entry", default="main", metavar="NAME",
                   help=_("the function to run (default main)"))
    _trace_and_threads(p)
    add_limit_options(p)


def cmd_trace(ns: argparse.Namespace) -> int:
    from rvmdbg.debug.machine import machine_for
    from rvmdbg.vm.machine import VMError, trace_lines
    program = load_program(ns.program, options=load_options_from(ns))
    entry = ns.entry.lstrip("@")
    args = program_arguments(program, entry, ns.args, ns.inputs)
    exe = executable_of(program, entry)
    vm = machine_for(exe, limits_from(ns))   # the Relay VM, or the MiniVM for a .mvm
    start, finish = vm.start, None
    if ns.trace_file:
        from rvmdbg.profile_cli import traced_machine
        vm, start, finish = traced_machine(program, exe, ns)
    write = sys.stdout.write
    from rvmdbg.threads import limited
    try:
        with limited(ns.threads):
            start(entry, args)
            if program.names is None:
                for line in trace_lines(vm):
                    write(line + "\n")
            else:
                _trace_named(vm, exe, program.names, write)
    except VMError as e:
        sys.stdout.flush()
        raise ProgramFailed(vm_error_text(e, exe)) from None
    if finish is not None:
        finish()
    return EXIT_OK


def _trace_named(vm, exe, names, write) -> None:
    """The trace of a program whose kind names its lines (an ONNX model's nodes): each line
    says its node, as `[step 12] @main pc=3 [Conv_12]: ...`, a fused kernel's call every node
    fused into it (`[Conv_12, Relu_13]`)."""
    from rvmdbg.debug.names import place_names
    from rvmdbg.vm.machine import format_step
    by_line = names.line_names()
    while not vm.halted:
        info = vm.step()
        line = format_step(vm, info)
        place = place_names(exe, by_line, info.func_index, info.pc)
        if place is not None:
            head, sep, rest = line.partition(": ")
            line = f"{head} [{place}]{sep}{rest}"
        write(line + "\n")


def _configure_graph(p: argparse.ArgumentParser) -> None:
    p.add_argument("program", metavar="PROGRAM", help=_("a .relay file"))
    add_meta_options(p)
    p.add_argument("--entry", default="main", metavar="NAME",
                   help=_("the function to lower (default main)"))
    p.add_argument("--json", action="store_true",
                   help=_("print TVM's graph JSON (with the memory plan) instead"))


def cmd_graph(ns: argparse.Namespace) -> int:
    from rvmdbg.graph import graph_report
    kind = kind_for(ns.program)
    if kind.compiled:
        raise UsageError(f"{ns.program}: " + _("graph reads Relay source, not a compiled executable"))
    if kind.machine == "minivm":
        raise UsageError(f"{ns.program}: " + _("graph reads Relay source; a MiniVM program has no "
                                               "dataflow graph (it is bytecode with jumps)"))
    if getattr(ns, "engine", None) == "tvm":   # TVM's import gives a Relax executable, no Relay
        raise UsageError(f"{ns.program}: " + _("graph reads Relay source; with --engine tvm the "
                                               "model becomes a Relax executable (use run, trace "
                                               "or debug)"))
    program = load_program(ns.program, options=load_options_from(ns))
    print(graph_report(program.module, ns.entry.lstrip("@"), as_json=ns.json,
                       names=program.names))
    return EXIT_OK


def _commands_without_terminal() -> list[str] | None:
    """None when stdin and stdout are a terminal (the screen can open); else the commands
    that came on stdin, for batch mode ([] when none came)."""
    if sys.stdin.isatty() and sys.stdout.isatty():
        return None
    from rvmdbg.serve import served_in_browser
    if served_in_browser():  # a browser tab's screen: the pipes carry its terminal
        return None
    if sys.stdin.isatty():
        return []
    lines = sys.stdin.read().splitlines()
    return lines if any(line.strip() and not line.strip().startswith("#") for line in lines) else []


def _no_terminal_error() -> UsageError:
    """A screen writing escape codes into a pipe or file would wait for keys that never come."""
    stdin_tty, stdout_tty = sys.stdin.isatty(), sys.stdout.isatty()
    where = (_("stdout is not one") if stdin_tty else _("stdin is not one") if stdout_tty
             else _("neither stdin nor stdout is one"))
    return UsageError(_("the debugger screen needs a terminal, and {where}; "
                        "to run debugger commands without it, pipe them in "
                        "(`echo step | rvmdbg debug PROGRAM`) or use --batch FILE").format(where=where))


def cmd_screen(ns: argparse.Namespace) -> int:
    if not Path(ns.program).is_file():
        read_source(ns.program)  # a missing program is reported first, terminal or not
    lines = _commands_without_terminal()
    if lines:
        return run_debug_batch(ns, lines)
    from rvmdbg.tui import run_screen  # imported here: the engine never loads Textual
    history_mb = getattr(ns, "history_mb", None)
    # without a terminal, the settings and the program are still checked (their errors
    # come first), then the screen is refused
    from rvmdbg.threads import limited
    with limited(getattr(ns, "threads", None)):
        code = run_screen(ns.program, ns.args, entry=ns.entry.lstrip("@"),
                          mouse=not ns.no_mouse, inputs=getattr(ns, "inputs", None),
                          ascii_only=ns.ascii, limits=limits_from(ns),
                          history_bytes=history_mb * 2 ** 20 if history_mb else None,
                          keys_file=getattr(ns, "keys", None), check_only=lines is not None,
                          missing_meta=load_options_from(ns))
    if code == EXIT_OK and lines is not None:
        raise _no_terminal_error()
    return code


def _configure_keys(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", metavar="FILE",
                   help=_("check a keys file instead (exit 2 with the place of a mistake)"))


def cmd_keys(ns: argparse.Namespace) -> int:
    from rvmdbg.tui.keymap import load_keymap, template
    if ns.check:
        keymap = load_keymap(ns.check)  # a KeymapError is a located error: exit 2
        print(_("{file}: {n} binding(s) rebound").format(file=ns.check, n=len(keymap)))
        return EXIT_OK
    print(template(), end="")
    return EXIT_OK


COMMANDS: dict[str, Command] = {
    "check": Command("check", N_("parse and type-check a program; print each definition's type"),
                     _configure_check, cmd_check),
    "run": Command("run", N_("run a program's entry function and print its result"),
                   _configure_run, cmd_run),
    "compile": Command("compile", N_("compile a program and print its bytecode in TVM's layout"),
                       _configure_compile, cmd_compile),
    "trace": Command("trace", N_("run on the VM printing each executed instruction"),
                     _configure_trace, cmd_trace),
    "graph": Command("graph", N_("print the static graph and its memory plan, or why the "
                              "program needs the VM"), _configure_graph, cmd_graph),
    "screen": Command("screen", N_("open the debugger screen (also: rvmdbg PROGRAM [ARG...])"),
                      _configure_screen, cmd_screen),
    "keys": Command("keys", N_("print the screen's key bindings as a keys file to edit"),
                    _configure_keys, cmd_keys),
}


def _configure_debug(p: argparse.ArgumentParser) -> None:
    add_program_args(p)
    p.add_argument("--entry", default="main", metavar="NAME",
                   help=_("the function to debug (default main)"))
    p.add_argument("--batch", metavar="FILE",
                   help=_("run debugger commands from FILE (- for stdin) and print their output"))
    p.add_argument("--history-mb", type=_positive, default=256, metavar="MB",
                   help=_("memory for reverse-execution history (default 256); past it the "
                          "oldest history is dropped"))
    p.add_argument("--saved-breakpoints", action="store_true",
                   help=_("start with the breakpoints the screen saved for PROGRAM, and save "
                          "changes to them (by default a batch run neither reads nor writes them)"))
    add_limit_options(p)


def cmd_debug(ns: argparse.Namespace) -> int:
    if ns.batch is None and "screen" in COMMANDS:
        # no script: the same program on the debugger screen (or stdin's commands)
        ns.no_mouse, ns.ascii = getattr(ns, "no_mouse", False), getattr(ns, "ascii", None)
        return COMMANDS["screen"].handler(ns)
    if ns.batch is None:
        raise UsageError(_("debug runs commands with --batch FILE (or - for stdin); "
                           "the debugger screen opens with `rvmdbg PROGRAM [ARG...]`"))
    if ns.batch == "-":
        lines = sys.stdin.read().splitlines()
    else:
        lines = Path(ns.batch).read_text(encoding="utf-8").splitlines()
    return run_debug_batch(ns, lines)


def run_debug_batch(ns: argparse.Namespace, lines: list[str]) -> int:
    """Batch mode: run the command lines on a fresh session of `ns.program`. The breakpoints
    the screen saved are used (and kept up to date) only with --saved-breakpoints, so that
    a script's result does not depend on earlier runs."""
    import threading

    from rvmdbg.debug import DebugSession, run_batch
    from rvmdbg.relay.interpreter import call_with_deep_stack
    from rvmdbg.vm.machine import VMError
    program = load_program(ns.program, options=load_options_from(ns))
    entry = ns.entry.lstrip("@")
    args = program_arguments(program, entry, ns.args, ns.inputs)
    exe = executable_of(program, entry)
    saved = ns.program if getattr(ns, "saved_breakpoints", False) else None
    try:
        session = DebugSession(exe, args, entry=entry, limits=limits_from(ns),
                               history_bytes=ns.history_mb * 2 ** 20, program_path=saved,
                               names=program.names)
    except VMError as e:
        raise UsageError(e.message) from None

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()
    stop, done = threading.Event(), threading.Event()
    errors: list[int] = []

    def batch() -> None:
        try:
            errors.append(run_batch(session, lines, write, stop))
        finally:
            done.set()

    def interrupt() -> None:  # Ctrl-C: the running command stops cleanly, the script ends
        stop.set()
        session.interrupt()
        done.wait(5.0)  # (a join interrupted by Ctrl-C may not wait for the thread)
    call_with_deep_stack(batch, on_interrupt=interrupt)
    # as gdb's batch mode: 0 only when every command succeeded and the program did not fail
    failed_commands = errors[0] if errors else 0
    if failed_commands:
        print("rvmdbg: " + ngettext("{n} command reported an error", "{n} commands reported an error",
                                    failed_commands).format(n=failed_commands), file=sys.stderr)
        return EXIT_USAGE
    if session.failed:
        print("rvmdbg: " + _("the program failed while running"), file=sys.stderr)
        return EXIT_RUNTIME
    return EXIT_OK


COMMANDS["debug"] = Command("debug", N_("run debugger commands on a program (--batch FILE or -)"),
                            _configure_debug, cmd_debug)


def _configure_dap(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, metavar="N",
                   help=_("listen on 127.0.0.1:N for one client instead of using stdin/stdout "
                          "(0: any free port, printed on stderr)"))


def cmd_dap(ns: argparse.Namespace) -> int:
    from rvmdbg.dap.server import serve_stdio, serve_tcp
    from rvmdbg.relay.interpreter import call_with_deep_stack
    if ns.port is None:
        return call_with_deep_stack(serve_stdio)
    if not 0 <= ns.port <= 65535:
        raise UsageError(f"--port {ns.port}: " + _("a TCP port is 0..65535"))

    def ready(port: int) -> None:
        _error("rvmdbg dap: " + _("listening on {address}").format(address=f"127.0.0.1:{port}"))
    return call_with_deep_stack(lambda: serve_tcp(ns.port, ready=ready))


def _configure_quiz(p: argparse.ArgumentParser) -> None:
    add_program_args(p)
    p.add_argument("--entry", default="main", metavar="NAME",
                   help=_("the function to run (default main)"))
    p.add_argument("--seed", type=int, default=0, metavar="N",
                   help=_("which questions are asked and the order of their choices (default 0)"))
    p.add_argument("--questions", type=_positive, metavar="N",
                   help=_("stop after N questions (default: until the program ends or the "
                          "input does)"))
    add_limit_options(p)


def cmd_quiz(ns: argparse.Namespace) -> int:
    """Check yourself: a question before each step, answered from stdin (a number, Enter to
    skip, q to stop); the VM answers by stepping. The score is printed at the end (also at
    EOF, so piped answers work)."""
    from rvmdbg.debug import DebugSession
    from rvmdbg.views.quiz import Quiz, question_lines, verdict_lines
    from rvmdbg.vm.machine import VMError
    program = load_program(ns.program, options=load_options_from(ns))
    entry = ns.entry.lstrip("@")
    args = program_arguments(program, entry, ns.args, ns.inputs)
    exe = executable_of(program, entry)
    try:
        session = DebugSession(exe, args, entry=entry, limits=limits_from(ns))
    except VMError as e:
        raise UsageError(e.message) from None
    quiz = Quiz(session, program.module, seed=ns.seed, entry=entry)
    echo = not sys.stdin.isatty()   # piped answers are shown, so the transcript reads whole
    out = sys.stdout
    out.write(_("Check yourself on {program} (seed {seed}): answer with the number of a "
                "choice, Enter to skip, q to stop.").format(program=ns.program, seed=ns.seed)
              + "\n")
    failure = None
    while ns.questions is None or len(quiz.history) < ns.questions:
        q = quiz.question()
        if q is None:
            break
        out.write("\n" + "\n".join(question_lines(q)) + "\n")
        choice = None
        while True:
            out.write(_("answer (1-{n}): ").format(n=len(q.choices)))
            out.flush()
            line = sys.stdin.readline()
            if not line:
                out.write("\n")
                q = None   # end of input: the score so far
                break
            text = line.strip()
            if echo:
                out.write(text + "\n")
            if text.lower() in ("q", "quit"):
                q = None
                break
            if not text:
                break
            if text.isdigit() and 1 <= int(text) <= len(q.choices):
                choice = int(text) - 1
                break
            out.write("  " + _("a number from 1 to {n}, Enter to skip, q to "
                               "stop").format(n=len(q.choices)) + "\n")
        if q is None:
            break
        verdict = quiz.answer(choice)
        out.write("\n".join(verdict_lines(verdict)) + "\n")
        if session.error is not None:
            failure = session.error
            break
    if quiz.done and failure is None and session.finished:
        out.write("\n" + _("the program finished: {result}").format(
            result=session.last_event.text) + "\n")
    out.write(f"\n{quiz.score_text()}\n")
    out.flush()
    if failure is not None:
        raise ProgramFailed(vm_error_text(failure, exe))
    return EXIT_OK


COMMANDS["quiz"] = Command("quiz", N_("check yourself: predict each step (next pc, registers "
                                   "written, if, swaps, executor) and let the VM answer"),
                           _configure_quiz, cmd_quiz)


COMMANDS["dap"] = Command("dap", N_("serve the Debug Adapter Protocol (for editors) on stdin/stdout "
                                 "or --port N"), _configure_dap, cmd_dap)


def _configure_serve(p: argparse.ArgumentParser) -> None:
    from rvmdbg.serve import add_serve_options
    _configure_screen(p)
    add_serve_options(p)


def cmd_serve(ns: argparse.Namespace) -> int:
    from rvmdbg.serve import cmd_serve as serve
    return serve(ns)


COMMANDS["serve"] = Command("serve", N_("serve the debugger screen to browsers (textual-serve), "
                                     "one debugger per tab"), _configure_serve, cmd_serve)
def _configure_import(p: argparse.ArgumentParser) -> None:
    from rvmdbg.onnx_cli import configure
    configure(p)


def cmd_import(ns: argparse.Namespace) -> int:
    from rvmdbg.onnx_cli import run
    return run(ns)


def _configure_profile(p: argparse.ArgumentParser) -> None:
    from rvmdbg.profile_cli import configure
    configure(p)


def cmd_profile(ns: argparse.Namespace) -> int:
    from rvmdbg.profile_cli import run
    return run(ns)


COMMANDS["profile"] = Command("profile", N_("run on the VM timing every kernel call and "
                                         "instruction class; print TVM's profiler report"),
                              _configure_profile, cmd_profile)
COMMANDS["import"] = Command("import", N_("write an ONNX model as the Relay module TVM's "
                                       "frontend made (needs rvmdbg[onnx])"),
                             _configure_import, cmd_import)
# The command `rvmdbg PROGRAM [ARG...]` means when its first word is no command (None: an error).
DEFAULT_COMMAND: str | None = "screen"


# ------------------------------------------------------------------------------------ main

class _ArgumentParser(TranslatedParser):
    """argparse that reads `-2.5f`, `-3i64` and `-.5` as values, not unknown options (and
    speaks the language in use: `argparse_i18n`)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._negative_number_matcher = re.compile(r"^-\.?\d")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser, and each command's own parser by name."""
    parser = _ArgumentParser(
        prog="rvmdbg", description=_("A terminal step debugger for Relay-VM bytecode."))
    parser.add_argument("--version", action="version", version=f"rvmdbg {__version__}",
                        help=_("show program's version number and exit"))
    # read by main() before parsing (take_language); here for --help
    parser.add_argument("--lang", metavar="LANG", choices=LANGUAGES,
                        help=_("the interface's language: en or zh_CN (default: from LANGUAGE, "
                               "LC_ALL, LC_MESSAGES, LANG)"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    parsers = {}
    for cmd in COMMANDS.values():
        p = sub.add_parser(cmd.name, help=_(cmd.help), description=_(cmd.help))
        cmd.configure(p)
        p.set_defaults(handler=cmd.handler)
        parsers[cmd.name] = p
    return parser, parsers


def parse_command_line(argv: list[str]) -> argparse.Namespace:
    """argv to a namespace with `handler`; raises SystemExit as argparse does (its usage,
    help and errors in the language in use)."""
    with argparse_speaking():
        parser, parsers = build_parser()
        if argv and argv[0] in parsers:
            # options may come between and after the program arguments (`run F 1 --json 2`)
            ns = parsers[argv[0]].parse_intermixed_args(argv[1:])
            ns.command = argv[0]
            return ns
        return parser.parse_args(argv)  # --help, --version, or a usage error


TOP_LEVEL_OPTIONS = ("-h", "--help", "--version")


def _command_first(argv: list[str]) -> list[str]:
    """Options may come anywhere, also before the command (`rvmdbg --ascii run F`) or before
    PROGRAM when the command is left out (`rvmdbg --ascii F`): put the command word first,
    or the default command when there is none."""
    if not argv or argv[0] in COMMANDS or argv[0] in TOP_LEVEL_OPTIONS:
        return argv
    if argv[0].startswith("-"):
        for i, word in enumerate(argv):
            if word in COMMANDS:
                return [word] + argv[:i] + argv[i + 1:]
        if any(word in TOP_LEVEL_OPTIONS for word in argv):
            return argv  # `rvmdbg --ascii --help`: argparse's help
    if DEFAULT_COMMAND is not None:
        return [DEFAULT_COMMAND] + argv
    return argv


def _error(text: str) -> None:
    print(text, file=sys.stderr)


def take_language(argv: list[str]) -> tuple[str | None, list[str]]:
    """`--lang L` / `--lang=L` anywhere before `--`, taken out of argv (it applies to every
    command, and is chosen before any message is made)."""
    lang, rest, i = None, [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            rest += argv[i:]
            break
        if word == "--lang" and i + 1 < len(argv):
            lang, i = argv[i + 1], i + 2
            continue
        if word.startswith("--lang="):
            lang, i = word.split("=", 1)[1], i + 1
            continue
        rest.append(word)
        i += 1
    return lang, rest


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    lang, argv = take_language(list(sys.argv[1:] if argv is None else argv))
    try:
        chosen = setup_language(lang)
        if lang:
            # processes rvmdbg starts (serve's screens, one per browser tab) speak it too
            os.environ["LANGUAGE"] = chosen
    except ValueError as e:
        setup_language(None)
        _error(_("error: {message}").format(message=e))
        return EXIT_USAGE
    argv = _command_first(argv)
    ns = None
    try:
        try:
            ns = parse_command_line(argv)
        except SystemExit as e:  # argparse: --help, --version (0) or a usage error (2)
            return e.code if isinstance(e.code, int) else EXIT_USAGE
        set_array_limit(getattr(ns, "max_bytes", None))  # arrays read from files obey it too
        return ns.handler(ns)
    except RelayError as e:
        _error(e.format())
        return EXIT_USAGE
    except ArgumentError as e:
        _error(_("error: {message}").format(message=e.message))
        return EXIT_USAGE
    except UsageError as e:
        _error(_("error: {message}").format(message=e))
        return EXIT_USAGE
    except ProgramFailed as e:
        _error(e.text)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        _error(_("interrupted"))
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly, without a second error at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return EXIT_BROKEN_PIPE
    except OSError as e:
        name = f"{e.filename}: " if getattr(e, "filename", None) else ""
        _error(_("error: {message}").format(message=f"{name}{e.strerror or e}"))
        return EXIT_USAGE
    except RecursionError:
        name = getattr(ns, "program", None)
        _error(_("error: {message}").format(message=(f"{name}: " if name else "")
                                            + _("the program is nested too deeply to process")))
        return EXIT_USAGE
    except MemoryError:
        # outside the VM and interpreter (which stop with their own message): reading or
        # compiling something too big for this machine
        _error(_("error: {message}").format(
            message=_("out of memory (lower --max-bytes, or give the process more memory)")))
        return EXIT_RUNTIME
