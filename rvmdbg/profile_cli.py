"""`rvmdbg profile PROGRAM [ARG...]` and the `--trace FILE.json` of `run`, `profile`, `trace`.

The command's options and handler; `cli.py` registers them. The measuring is the engine's
(`rvmdbg/vm/profile.py`); this file loads the program through the front door, names each
kernel call's line (the Relay line, or the ONNX node on it), holds `--threads`, and prints
the report as TVM's `table()`, `csv()` or `json()`.
"""
from __future__ import annotations

import argparse
import sys

from rvmdbg.cmdline import (
    EXIT_OK, add_limit_options, add_program_args, add_threads_option, limits_from,
    load_options_from, positive, whole_number,
)
from rvmdbg.i18n import _, ngettext
from rvmdbg.program import (
    ProgramFailed, UsageError, executable_of, load_program, program_arguments, vm_error_text,
)


def add_trace_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", dest="trace_file", metavar="FILE.json",
                   help=_("also write the run as a Chrome trace (Perfetto, chrome://tracing): "
                          "kernel calls and frames nested, live bytes and registers as "
                          "counters, if decisions and allocations as instants"))


def configure(p: argparse.ArgumentParser) -> None:
    add_program_args(p)
    p.add_argument("--entry", default="main", metavar="NAME",
                   help=_("the function to run (default main)"))
    p.add_argument("--repeat", type=positive, default=1, metavar="N",
                   help=_("timed runs; the report is the fastest one's (default 1)"))
    p.add_argument("--warmup", type=whole_number, default=0, metavar="N",
                   help=_("untimed runs first (default 0)"))
    p.add_argument("--sort", choices=("duration", "count", "name"), default="duration",
                   help=_("order of the table's rows (default duration)"))
    form = p.add_mutually_exclusive_group()
    form.add_argument("--csv", action="store_true", help=_("print TVM's Report.csv()"))
    form.add_argument("--json", action="store_true", help=_("print TVM's Report.json()"))
    p.add_argument("--no-aggregate", action="store_true",
                   help=_("one row per kernel call instead of per kernel and argument shapes"))
    p.add_argument("--fused", action="store_true",
                   help=_("keep run()'s fused blocks and regions: time kernel calls only, the "
                          "VM's work between them as one row"))
    add_trace_option(p)
    add_threads_option(p)
    add_limit_options(p)


def relay_vm_executable(program, entry: str, command: str):
    """The program's Relay VM executable, or a UsageError for another machine's."""
    from rvmdbg.vm.executable import Executable
    if program.kind is not None and program.kind.machine != "relay-vm":
        raise UsageError(_("{path}: {command} runs programs on the Relay VM; this is a {kind} "
                           "program").format(path=program.path, command=command,
                                             kind=program.kind.name))
    exe = executable_of(program, entry)
    if not isinstance(exe, Executable):
        raise UsageError(_("{path}: {command} runs programs on the Relay VM").format(
            path=program.path, command=command))
    return exe


def site_namer(program, exe):
    """`name(fi, pc)`: the line a kernel call comes from, as the report's Line column says
    it: the ONNX node on it, else `FILE:LINE` (`prelude:LINE` for the prelude's code)."""
    from rvmdbg.debug.breakpoints import instruction_line
    by_line = program.names.line_names() if program.names is not None else {}

    def name(fi: int, pc: int) -> str:
        line = instruction_line(exe, fi, pc)
        if line is not None and line in by_line:
            return by_line[line]
        if line is not None:
            return str(line)
        span = exe.span_at(fi, pc)
        return f"prelude:{span.line}" if span is not None else ""
    return name


def write_trace(path: str, events: list, metadata: dict) -> None:
    """Write the Chrome trace; a file that cannot be written is a usage error (exit 2)."""
    from rvmdbg.vm.profile import trace_json
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(trace_json(events, metadata))
    except OSError as e:
        raise UsageError(_("{path}: cannot write the trace: {reason}").format(
            path=path, reason=e.strerror or e)) from None


def profiled(program, entry: str, args, ns, *, trace: bool, repeat=1, warmup=0, fused=False):
    """Run `entry` with the profiler under --threads; VMError as ProgramFailed (exit 1)."""
    from rvmdbg.threads import limited
    from rvmdbg.vm.machine import VMError
    from rvmdbg.vm.profile import profile_run
    exe = relay_vm_executable(program, entry, "profile" if not trace else "--trace")
    with limited(getattr(ns, "threads", None)) as threads:
        try:
            run = profile_run(exe, entry, args, limits_from(ns), repeat=repeat, warmup=warmup,
                              fused=fused, trace=trace, site_name=site_namer(program, exe),
                              threads=threads)
        except VMError as e:
            raise ProgramFailed(vm_error_text(e, exe)) from None
    return run, threads


def run(ns: argparse.Namespace) -> int:
    """`rvmdbg profile`: the report of the fastest of --repeat runs."""
    if ns.fused and ns.trace_file:
        raise UsageError(_("--trace needs each instruction timed on its own: leave out "
                           "--fused"))
    program = load_program(ns.program, options=load_options_from(ns))
    entry = ns.entry.lstrip("@")
    args = program_arguments(program, entry, ns.args, ns.inputs)
    prof, threads = profiled(program, entry, args, ns, trace=bool(ns.trace_file),
                             repeat=ns.repeat, warmup=ns.warmup, fused=ns.fused)
    report = prof.report
    if ns.trace_file and prof.events is not None:
        write_trace(ns.trace_file, prof.events, {"program": ns.program, "entry": entry})
    if ns.csv:
        sys.stdout.write(report.csv())
    elif ns.json:
        sys.stdout.write(report.json() + "\n")
    else:
        runs = ngettext("{n} timed run", "{n} timed runs", ns.repeat).format(n=ns.repeat)
        sys.stdout.write(_("Profile of @{entry} in {path}: {runs}, {threads} on the VM").format(
            entry=entry, path=ns.program, runs=runs,
            threads=ngettext("{n} thread", "{n} threads", threads).format(n=threads)) + "\n\n")
        sys.stdout.write(report.table(sort=ns.sort, aggregate=not ns.no_aggregate))
    return EXIT_OK


def traced_result(program, entry: str, args, ns):
    """`run --trace FILE`: run on the VM with the timers, write the trace, return the
    result (what `run` prints)."""
    prof, _threads = profiled(program, entry, args, ns, trace=True)
    write_trace(ns.trace_file, prof.events, {"program": ns.program, "entry": entry})
    return prof.result


def traced_machine(program, exe, ns):
    """`trace --trace FILE`: a VM whose steps write trace events; `finish()` writes them."""
    from rvmdbg.vm.machine import VirtualMachine
    from rvmdbg.vm.profile import Profiler, kernel_events
    exe = relay_vm_executable(program, ns.entry.lstrip("@"), "--trace")
    prof = Profiler(exe, trace=True)
    vm = VirtualMachine(prof.timed_executable(exe), limits_from(ns))
    prof.vm = vm
    vm.instrument(prof.wrap)
    entry_index = exe.func_index(ns.entry.lstrip("@"))

    def start(entry, args):
        vm.start(entry, args)
        prof.begin(vm, entry_index)

    def finish():
        write_trace(ns.trace_file, prof.events + kernel_events(exe, prof.calls),
                    {"program": ns.program, "entry": ns.entry.lstrip("@")})
    return vm, start, finish
