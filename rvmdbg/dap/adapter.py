"""The mapping from Debug Adapter Protocol requests to the debugger protocol.

`DapAdapter.handle(command, arguments)` answers one request with a response body (or raises
`RequestError`, which the server turns into `success: false` with the message). A request that
moves the program (continue, next, stepIn, stepOut, stepBack, reverseContinue, goto, restart,
a motion typed in the debug console) answers at once and leaves its motion in `then`, which
the server runs after sending the response; the motion reports its stop with `stopped` (or
`exited` and `terminated` once the program returned).

Everything is asked of a `DebugSession` and a `CommandInterpreter`, as batch mode and the
screen do: line, function and instruction breakpoints are the session's breakpoints (with
their conditions, hit conditions and log messages), data breakpoints its watchpoints on
registers, stepping granularity its stepping units, goto targets its `visits`. The DAP
vocabulary stays in this package.
"""
from __future__ import annotations

import dataclasses
import os
import re
import threading
from dataclasses import dataclass, field

from rvmdbg.dap.addresses import AddressError, InstructionAddresses, format_address
from rvmdbg.dap.variables import VariableStore
from rvmdbg.debug import CommandInterpreter, DebugSession
from rvmdbg.debug.breakpoints import BreakpointError
from rvmdbg.debug.session import DebugError
from rvmdbg.fileio import read_text
from rvmdbg.i18n import N_
from rvmdbg.limits import DEFAULT_LIMITS, LimitValueError
from rvmdbg.program import kind_for
from rvmdbg.values import format_value

THREAD_ID = 1   # the VM runs one thread of control

# StopEvent reasons that are not breakpoint hits, as DAP `stopped` reasons
_STOP_REASONS = {"step": "step", "start of history": "step", "interrupted": "pause",
                 "error": "exception", "limit": "exception", "repeated state": "exception",
                 "watchpoint": "data breakpoint"}
# a session breakpoint's kind -> the DAP reason it stops with
_BREAK_REASONS = {"line": "breakpoint", "opcode": "breakpoint", "function": "function breakpoint",
                  "instruction": "instruction breakpoint"}
_GRANULARITY = {"instruction": "instruction", "statement": "statement", "line": "line"}
_REGISTER = re.compile(r"^\$(\d{1,20})$")
_TOO_LONG_REGISTER = re.compile(r"^\$\d{21,}$")
_PARAM = re.compile(r"^%([A-Za-z_][\w]*)$")
# commands that watch and hover evaluate (the debug console runs every command)
_WATCH_HELP = ("watch and hover evaluate $N, %name, print $N, deps and last-write $N; "
               "the debug console runs every command")


class RequestError(Exception):
    """A request that cannot be carried out; the message is shown to the user."""


CAPABILITIES = {
    "supportsConfigurationDoneRequest": True,
    "supportsStepBack": True,
    "supportsConditionalBreakpoints": True,
    "supportsHitConditionalBreakpoints": True,
    "supportsFunctionBreakpoints": True,
    "supportsInstructionBreakpoints": True,
    "supportsDataBreakpoints": True,
    "supportsDisassembleRequest": True,
    "supportsSteppingGranularity": True,
    "supportsGotoTargetsRequest": True,
    "supportsExceptionInfoRequest": True,
    "supportsEvaluateForHovers": True,
    "supportsRestartRequest": True,
    "supportsTerminateRequest": True,
    "supportsLogPoints": True,
    "supportsDelayedStackTraceLoading": False,
    "supportsSetVariable": False,
    "exceptionBreakpointFilters": [],
}


# ------------------------------------------------------------------------------------ launch

@dataclass
class LaunchConfig:
    """The `launch` request's arguments, checked."""

    program: str
    args: list[str] = field(default_factory=list)
    inputs: str | None = None
    entry: str = "main"
    stop_on_entry: bool = False
    stop_at_end: bool = False
    limits: object = DEFAULT_LIMITS
    history_mb: int = 256
    # `metaInputs` / `metaRandom`: the command line's --meta-inputs / --meta-random SEED
    meta_inputs: bool = False
    meta_random: int | None = None
    # `shape` / `dtype` / `opset`: the command line's --shape / --dtype / --opset (an ONNX
    # model's), held as the command line's NAME=VALUE texts
    shape: list = field(default_factory=list)
    dtype: list = field(default_factory=list)
    opset: int | None = None
    threads: int | None = None      # `threads`: the command line's --threads N


def _typed(args: dict, name: str, kind, default=None, required: bool = False):
    if name not in args or args[name] is None:
        if required:
            raise RequestError(f"'{name}' is required")
        return default
    value = args[name]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        want = {str: "a string", bool: "true or false", int: "a whole number",
                list: "a list", dict: "an object"}.get(kind, kind.__name__)
        raise RequestError(f"'{name}' must be {want}, not {value!r}"[:200])
    return value


def _positive(args: dict, name: str) -> int | None:
    n = _typed(args, name, int)
    if n is not None and n <= 0:
        raise RequestError(f"'{name}' must be a positive whole number, not {n}")
    return n


def launch_config(args: dict) -> LaunchConfig:
    """A LaunchConfig from `launch` (or `restart`) arguments; RequestError names a bad one."""
    program = _typed(args, "program", str, required=True)
    cwd = _typed(args, "cwd", str)
    for key in ("program", "cwd", "inputs"):
        if isinstance(args.get(key), str) and "\0" in args[key]:
            raise RequestError(f"'{key}' holds a NUL byte: no file has such a name")
    if cwd and not os.path.isabs(program):
        program = os.path.join(cwd, program)
    prog_args = _typed(args, "args", list, [])
    if not all(isinstance(a, str) for a in prog_args) or any("\0" in a for a in prog_args):
        raise RequestError("'args' must be a list of strings, as typed on the command line")
    limits = {}
    for key, name in (("maxSteps", "max_steps"), ("maxDepth", "max_depth"),
                      ("maxBytes", "max_bytes")):
        n = _positive(args, key)
        if n is not None:
            limits[name] = n
    inputs = _typed(args, "inputs", str)
    if inputs and cwd and not os.path.isabs(inputs):
        inputs = os.path.join(cwd, inputs)
    try:
        chosen = dataclasses.replace(DEFAULT_LIMITS, **limits)
    except LimitValueError as e:
        raise RequestError(str(e)) from None
    return LaunchConfig(
        program=os.path.abspath(program), args=list(prog_args), inputs=inputs,
        entry=_typed(args, "entry", str, "main").lstrip("@") or "main",
        stop_on_entry=_typed(args, "stopOnEntry", bool, False),
        stop_at_end=_typed(args, "stopAtEnd", bool, False),
        limits=chosen,
        history_mb=_positive(args, "historyMb") or 256,
        meta_inputs=_meta_inputs(args), meta_random=_typed(args, "metaRandom", int),
        shape=_onnx_pairs(args, "shape"), dtype=_onnx_pairs(args, "dtype"),
        opset=_positive(args, "opset"), threads=_threads(args))


def _threads(args: dict) -> int | None:
    n = _positive(args, "threads")
    if n is not None and n > 1024:
        raise RequestError(f"'threads' must be at most 1024, not {n}")
    return n


def _onnx_pairs(args: dict, name: str) -> list[str]:
    """`shape` ({"x": [1, 3, 224, 224]}, null or "?" for an unknown dim) or `dtype`
    ({"x": "float32"}) as the command line's NAME=VALUE texts."""
    value = _typed(args, name, dict, {})
    out = []
    for key, v in value.items():
        if name == "shape":
            ok = isinstance(v, list) and all(
                d is None or d == "?" or (isinstance(d, int) and not isinstance(d, bool))
                for d in v)
            if not ok:
                raise RequestError(f"'shape' maps an input name to a list of dimensions "
                                   f"(whole numbers, null for unknown), not {v!r}"[:200])
            out.append(f"{key}=" + ",".join("?" if d is None else str(d) for d in v))
        else:
            if not isinstance(v, str):
                raise RequestError(f"'dtype' maps an input name to a dtype name, not {v!r}"[:200])
            out.append(f"{key}={v}")
    return out


def _meta_inputs(args: dict) -> bool:
    on = _typed(args, "metaInputs", bool, False)
    if on and args.get("metaRandom") is not None:
        raise RequestError("'metaInputs' and 'metaRandom' exclude each other")
    return on


def open_session(config: LaunchConfig) -> DebugSession:
    """Load, check and compile the program and start a session on it (RequestError with the
    located message when the program or its arguments are wrong)."""
    from rvmdbg.args import ArgumentError, set_array_limit
    from rvmdbg.cmdline import load_options_from
    from rvmdbg.i18n import _
    from rvmdbg.program import (
        ProgramFailed, UsageError, executable_of, load_program, program_arguments,
    )
    from rvmdbg.relay.diagnostics import RelayError
    from rvmdbg.vm.machine import VMError
    try:
        set_array_limit(config.limits.max_bytes)  # `inputs` archives obey maxBytes
        program = load_program(config.program, options=load_options_from(config))
        # `args` as on the command line; `inputs` binds the parameters after them by name
        # from an .npz archive, as `--inputs` does; with neither, the hint names those settings
        args = program_arguments(
            program, config.entry, config.args, inputs=config.inputs,
            hint=_("set them in the launch configuration: `args` (a list of values, as on the "
                   "command line) or `inputs` (an .npz archive naming the parameters)"))
        exe = executable_of(program)
        # the kind's names (an ONNX model's nodes and tensors: `break Conv_12`, `print y`)
        return DebugSession(exe, args, entry=config.entry, limits=config.limits,
                            history_bytes=config.history_mb * 2 ** 20, names=program.names)
    except RelayError as e:
        raise RequestError(e.format()) from None
    except ArgumentError as e:
        raise RequestError(f"error: {e.message}") from None
    except (UsageError, ProgramFailed) as e:
        raise RequestError(f"error: {e}") from None
    except VMError as e:
        raise RequestError(f"error: {e.message}") from None
    except OSError as e:
        raise RequestError(f"error: {e.filename or config.program}: {e.strerror or e}") from None
    except RecursionError:
        raise RequestError("error: the program is nested too deeply to process") from None


# ------------------------------------------------------------------------------------ adapter

class DapAdapter:
    """One debugging session seen through DAP. `send_event(name, body)` emits an event."""

    def __init__(self, send_event):
        self.send_event = send_event
        self.session: DebugSession | None = None
        self.interp: CommandInterpreter | None = None
        self.addresses: InstructionAddresses | None = None
        self.config: LaunchConfig | None = None
        self.threads: int | None = None         # the kernels' thread count in force
        self.release_threads = lambda: None     # puts the thread pools back (rvmdbg/threads.py)
        self.variables = VariableStore()
        self.lines_from_1 = True
        self.columns_from_1 = True
        self.configured = False
        self.started = False
        self.ended = False
        self.done = False                      # disconnect: the server stops reading
        self.then = None                       # run after the response is sent
        self.source_bps: dict[str, list] = {}  # path -> the last setBreakpoints list
        self.function_bps: list = []
        self.instruction_bps: list = []
        self._ids: dict[str, list[int]] = {}   # "source:PATH" / "function" / ... -> bp ids
        self.data_watches: dict[str, object] = {}
        self.goto_steps: dict[int, int] = {}
        self._running = threading.Event()     # a motion was answered and has not stopped
        self._pausing = threading.Event()     # pause asked during that motion
        self._handlers = {name[4:]: getattr(self, name) for name in dir(self)
                          if name.startswith("req_")}

    # ------------------------------------------------------------ dispatch

    def handle(self, command: str, args: dict) -> dict | None:
        handler = self._handlers.get(command)
        if handler is None:
            raise RequestError(f"rvmdbg does not support the request {command!r}")
        self.then = None
        try:
            return handler(args)
        except (DebugError, BreakpointError, AddressError) as exc:
            raise RequestError(str(exc)) from None

    def pause(self) -> None:
        """Stop a running motion at the next instruction boundary (any thread). A pause that
        arrives between a motion's response and its start is kept until the motion runs."""
        if self.session is not None and self._running.is_set():
            self._pausing.set()
            self.session.interrupt()

    def _progress(self, steps: int, rate: float) -> None:
        # The session clears a stale interrupt when a motion starts: ask again while running.
        if self._pausing.is_set():
            self.session.interrupt()

    def _need_session(self) -> DebugSession:
        if self.session is None:
            raise RequestError("no program is launched yet")
        return self.session

    def _need_stopped(self) -> DebugSession:
        s = self._need_session()
        if self.ended:
            raise RequestError("the program has ended")
        return s

    # ------------------------------------------------------------ lines, sources

    def _line_out(self, n: int) -> int:
        return n if self.lines_from_1 else n - 1

    def _col_out(self, n: int) -> int:
        return n if self.columns_from_1 else n - 1

    def _line_in(self, n: int) -> int:
        return n if self.lines_from_1 else n + 1

    def _source(self, span) -> dict | None:
        if span is None or not span.file:
            return None
        path = os.path.abspath(span.file)
        return {"name": os.path.basename(path), "path": path}

    def _place(self, out: dict, span) -> dict:
        """Add source, line, column and their ends of `span` to `out` (line 0: none)."""
        src = self._source(span)
        if src is None:
            out.update(line=0, column=0)
            return out
        out.update(source=src, line=self._line_out(span.line), column=self._col_out(span.col),
                   endLine=self._line_out(span.end_line), endColumn=self._col_out(span.end_col))
        return out

    def _program_source(self) -> str:
        """The Relay file of the program: the launched file, or for a saved .rvmx the source
        it was compiled from (when that file is where the executable says)."""
        name = getattr(self.session.exe, "source_name", None) if self.session else None
        if kind_for(self.config.program).compiled and name and os.path.isfile(name):
            return os.path.abspath(name)
        return self.config.program

    def _own_file(self, path: str | None) -> bool:
        if not path or self.config is None:
            return False
        own = self._program_source()
        try:
            return os.path.samefile(path, own)
        except OSError:
            return os.path.abspath(path) == own

    # ------------------------------------------------------------ session set-up

    def req_initialize(self, args: dict) -> dict:
        self.lines_from_1 = _typed(args, "linesStartAt1", bool, True)
        self.columns_from_1 = _typed(args, "columnsStartAt1", bool, True)
        return dict(CAPABILITIES)

    def req_launch(self, args: dict) -> None:
        if self.session is not None:
            raise RequestError("a program is already launched (restart it instead)")
        config = launch_config(args)
        self._open(config)

        def after():
            for note in self.session.notes:
                self._output(f"note: {note}\n")
            self.send_event("initialized")
            if self.configured and not self.started:
                self._start()
        self.then = after
        return None

    def _open(self, config: LaunchConfig) -> None:
        from rvmdbg.threads import hold
        session = open_session(config)
        self.release_threads()
        self.threads, self.release_threads = hold(config.threads)
        self.session, self.config = session, config
        self.interp = CommandInterpreter(session)
        self.interp.may_switch_session = False   # the adapter holds this session
        self.addresses = InstructionAddresses(session.exe)
        session.on_log = self._log_point
        session.on_progress = self._progress
        self._ids.clear()
        self.data_watches.clear()
        self.goto_steps.clear()
        self.variables.clear()
        for path in list(self.source_bps):
            self._apply_source(path)
        self._apply_functions()
        self._apply_instructions()

    def req_configurationDone(self, args: dict) -> None:
        self.configured = True
        if self.session is not None and not self.started:
            self.then = self._start
        return None

    def _start(self) -> None:
        self.started = True
        if self.config.stop_on_entry:
            self._stopped("entry", description="stopped before the first instruction")
        else:
            self._run(self.session.cont, "step")

    def req_restart(self, args: dict) -> None:
        self._need_session()
        new_args = _typed(args, "arguments", dict)
        config = launch_config(new_args) if new_args else self.config
        watched = len(self.data_watches)
        self._open(config)
        self.ended = False

        def after():
            if watched:
                self._output(f"note: {watched} data breakpoint(s) on registers of the old "
                             f"run were dropped\n")
            self._start()
        self.then = after
        return None

    def req_disconnect(self, args: dict) -> None:
        self.done = True
        self.release_threads()
        return None

    def req_terminate(self, args: dict) -> None:
        self._need_session()

        def after():
            if not self.ended:
                self.ended = True
                self.send_event("terminated")
        self.then = after
        return None

    def req_threads(self, args: dict) -> dict:
        name = f"@{self.config.entry}" if self.config else "rvmdbg"
        return {"threads": [{"id": THREAD_ID, "name": name}]}

    # ------------------------------------------------------------ breakpoints

    def req_setBreakpoints(self, args: dict) -> dict:
        source = _typed(args, "source", dict, required=True)
        path = _typed(source, "path", str)
        if path is None:
            raise RequestError("breakpoints need a source with a 'path'")
        bps = _typed(args, "breakpoints", list, None)
        if bps is None:
            lines = _typed(args, "lines", list, [])
            bps = [{"line": n} for n in lines]
        for bp in bps:
            if not isinstance(bp, dict):
                raise RequestError("each breakpoint must be an object with a 'line'")
            _typed(bp, "line", int, required=True)
        self.source_bps[path] = bps
        if self.session is None:
            return {"breakpoints": [{"verified": False, "message": "set when the program is "
                                     "launched"} for _ in bps]}
        return {"breakpoints": self._apply_source(path)}

    def _apply_source(self, path: str) -> list:
        key = f"source:{path}"
        self._delete(key)
        out = []
        for spec in self.source_bps.get(path, []):
            if not self._own_file(path):
                out.append({"verified": False, "line": spec.get("line"),
                            "message": f"rvmdbg debugs {self._program_source()}; this file "
                                       f"is not that program"})
                continue
            line = self._line_in(spec["line"])
            out.append(self._add(key, str(line), spec))
        return out

    def _add(self, key: str, where: str, spec: dict) -> dict:
        """Add one session breakpoint for a DAP breakpoint; its DAP form (or why not)."""
        s = self.session
        try:
            cond = _typed(spec, "condition", str)
            hit = _typed(spec, "hitCondition", str)
            log = _typed(spec, "logMessage", str)
            bp = s.breakpoints.add(where, cond, hit_condition=hit, log_message=log)
        except (BreakpointError, RequestError) as exc:
            return {"verified": False, "message": str(exc)}
        self._ids.setdefault(key, []).append(bp.id)
        out = {"id": bp.id, "verified": True}
        if bp.kind == "line":
            out.update(line=self._line_out(bp.line), source=self._source_of_program())
            if bp.moved_from:
                out["message"] = f"moved from line {bp.moved_from}: the first line with code"
        elif bp.func_index is not None:
            out["instructionReference"] = self.addresses.text(bp.func_index, bp.pc)
            self._place(out, s.exe.span_at(bp.func_index, bp.pc))
        return out

    def _source_of_program(self) -> dict:
        path = self._program_source()
        return {"name": os.path.basename(path), "path": path}

    def _delete(self, key: str) -> None:
        for n in self._ids.pop(key, []):
            if n in self.session.breakpoints:
                self.session.breakpoints.delete(n)

    def req_setFunctionBreakpoints(self, args: dict) -> dict:
        bps = _typed(args, "breakpoints", list, [])
        for bp in bps:
            if not isinstance(bp, dict) or not isinstance(bp.get("name"), str):
                raise RequestError("each function breakpoint must be an object with a 'name'")
        self.function_bps = bps
        if self.session is None:
            return {"breakpoints": [{"verified": False} for _ in bps]}
        return {"breakpoints": self._apply_functions()}

    def _apply_functions(self) -> list:
        self._delete("function")
        out = []
        for spec in self.function_bps:
            name = spec["name"].strip()
            out.append(self._add("function", name if name.startswith("@") else "@" + name,
                                 spec))
        return out

    def req_setInstructionBreakpoints(self, args: dict) -> dict:
        bps = _typed(args, "breakpoints", list, [])
        for bp in bps:
            if not isinstance(bp, dict) or not isinstance(bp.get("instructionReference"), str):
                raise RequestError("each instruction breakpoint needs an 'instructionReference'")
            _typed(bp, "offset", int)
        self.instruction_bps = bps
        if self.session is None:
            return {"breakpoints": [{"verified": False} for _ in bps]}
        return {"breakpoints": self._apply_instructions()}

    def _apply_instructions(self) -> list:
        self._delete("instruction")
        out = []
        for spec in self.instruction_bps:
            try:
                address = self.addresses.parse(spec["instructionReference"])
            except AddressError as exc:
                out.append({"verified": False, "message": str(exc)})
                continue
            loc = self.addresses.location(address + (spec.get("offset") or 0))
            if loc is None:
                out.append({"verified": False, "message": "no instruction at that address"})
                continue
            fi, pc = loc
            out.append(self._add("instruction", f"@{self.session.exe.functions[fi].name}:{pc}",
                                 spec))
        return out

    def req_setExceptionBreakpoints(self, args: dict) -> dict:
        # A VM error always stops (reason "exception"): there is nothing to choose.
        return {"breakpoints": []}

    def req_dataBreakpointInfo(self, args: dict) -> dict:
        s = self._need_stopped()
        name = _typed(args, "name", str, required=True).strip()
        ref = _typed(args, "variablesReference", int)
        if ref:
            info = self.variables.info(ref) or {}
            depth = info.get("depth")
            if info.get("kind") not in ("registers", "arguments"):
                return {"dataId": None, "description": "only registers can be watched (from "
                        "the Registers or Arguments scope)"}
        else:
            depth = self._depth(args.get("frameId"))
        try:
            f = s.frame(depth)
            r = self._register_in(name, f)
        except DebugError as exc:
            return {"dataId": None, "description": str(exc)}
        if r is None:
            return {"dataId": None, "description": f"{name} is not a register"}
        n = len(s.vm.frames) - 1 - f.depth
        return {"dataId": f"{f.depth}:{f.serial}:{r}",
                "description": f"${r} of @{f.func_name} (frame #{n})",
                "accessTypes": ["write", "read"], "canPersist": False}

    def req_setDataBreakpoints(self, args: dict) -> dict:
        s = self._need_stopped()
        bps = _typed(args, "breakpoints", list, [])
        keep: dict[str, object] = {}
        out = []
        for spec in bps:
            if not isinstance(spec, dict) or not isinstance(spec.get("dataId"), str):
                raise RequestError("each data breakpoint needs a 'dataId'")
            access = spec.get("accessType") or "write"
            if access not in ("write", "read"):
                out.append({"verified": False, "message": "a register's writes or reads can "
                            "be watched, not both at once"})
                continue
            data_id = spec["dataId"]
            key = data_id if access == "write" else f"{data_id}/read"
            wp = keep.get(key) or self.data_watches.get(key)
            if wp is None:
                try:
                    wp = self._watch(data_id, access)
                except (DebugError, ValueError) as exc:
                    out.append({"verified": False, "message": str(exc)})
                    continue
            keep[key] = wp
            out.append({"id": wp.id, "verified": True, "description": wp.where()})
        for data_id, wp in self.data_watches.items():
            if data_id not in keep and wp in s.watches:
                s.delete(wp.id)
        self.data_watches = keep
        return {"breakpoints": out}

    def _watch(self, data_id: str, access: str = "write"):
        parts = data_id.split(":")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"not a data breakpoint id from dataBreakpointInfo: {data_id!r}")
        depth, serial, register = (int(p) for p in parts)
        s = self.session
        fs = s.vm.frames
        if depth >= len(fs) or fs[depth].serial != serial:
            raise ValueError("that frame has returned: its registers cannot be watched")
        return s.watch(register, depth, access)

    # ------------------------------------------------------------ motion

    def _unit(self, args: dict) -> str:
        g = _typed(args, "granularity", str, "statement")
        unit = _GRANULARITY.get(g)
        if unit is None:
            raise RequestError(f"granularity {g!r}: use instruction, statement or line")
        return unit

    def _motion(self, motion, default_reason: str) -> dict:
        self._need_stopped()
        if not self.started:
            raise RequestError("the program has not started: send configurationDone first")
        self._running.set()
        self.then = lambda: self._run(motion, default_reason)
        return {"allThreadsContinued": True}

    def req_continue(self, args: dict) -> dict:
        return self._motion(lambda: self.session.cont(), "step")

    def req_next(self, args: dict) -> None:
        unit = self._unit(args)
        self._motion(lambda: self.session.next(unit), "step")

    def req_stepIn(self, args: dict) -> None:
        unit = self._unit(args)
        self._motion(lambda: self.session.step(1, unit), "step")

    def req_stepOut(self, args: dict) -> None:
        self._motion(lambda: self.session.finish(), "step")

    def req_stepBack(self, args: dict) -> None:
        unit = self._unit(args)
        self._motion(lambda: self.session.rstep(1, unit), "step")

    def req_reverseContinue(self, args: dict) -> None:
        self._motion(lambda: self.session.rcontinue(), "step")

    def req_pause(self, args: dict) -> None:
        self.pause()  # normally answered by the server's reader while a motion runs

    def req_gotoTargets(self, args: dict) -> dict:
        s = self._need_stopped()
        source = _typed(args, "source", dict, required=True)
        line = self._line_in(_typed(args, "line", int, required=True))
        if not self._own_file(source.get("path")):
            raise RequestError("goto targets lie in the program being debugged")
        fields = s.breakpoints.resolve(str(line))
        before, after = s.visits(fields["locations"])
        targets = []
        for step, label in ((before, "previous"), (after, "next")):
            if step is None:
                continue
            tid = len(self.goto_steps) + 1
            self.goto_steps[tid] = step
            targets.append({"id": tid, "label": f"step {step} ({label} visit of line "
                            f"{fields['line']})", "line": self._line_out(fields["line"])})
        return {"targets": targets}

    def req_goto(self, args: dict) -> None:
        tid = _typed(args, "targetId", int, required=True)
        step = self.goto_steps.get(tid)
        if step is None:
            raise RequestError(f"no goto target {tid} (ask gotoTargets at this stop)")
        self._motion(lambda: self.session.goto(step), "goto")

    def _run(self, motion, default_reason: str) -> None:
        self._running.set()
        try:
            if self._pausing.is_set():
                self.session.interrupt()
            ev = motion()
        except (DebugError, BreakpointError) as exc:
            self._output(f"error: {exc}\n", "stderr")
            self._stopped("pause", description=str(exc))
            return
        except RecursionError:
            self._output("error: a value is nested too deeply\n", "stderr")
            self._stopped("pause")
            return
        finally:
            self._running.clear()
            self._pausing.clear()
        self._report(ev, default_reason)

    def _report(self, ev, default_reason: str) -> None:
        """Tell the client where a motion stopped (or that the program ended)."""
        s = self.session
        if ev.reason == "finished" and not self.config.stop_at_end:
            self._output(format_value(s.result) + "\n", "stdout")
            self.ended = True
            self.send_event("exited", {"exitCode": 0})
            self.send_event("terminated")
            return
        body_extra = {}
        if ev.reason == "breakpoint":
            bp = s.breakpoints.get(ev.number) if ev.number in s.breakpoints else None
            reason = _BREAK_REASONS.get(bp.kind if bp else "line", "breakpoint")
            body_extra["hitBreakpointIds"] = [ev.number]
        elif ev.reason == "finished":
            reason = "step"
        elif ev.reason == "watchpoint":
            reason = "data breakpoint"
            body_extra["hitBreakpointIds"] = [ev.number]
        else:
            reason = _STOP_REASONS.get(ev.reason, default_reason)
            if ev.reason == "step":
                reason = default_reason
        if ev.reason in ("error", "limit", "repeated state"):
            from rvmdbg.program import vm_error_text
            err = s.error
            self._output((vm_error_text(err, s.exe) if err is not None else ev.message or "")
                         + "\n", "stderr")
            description = "VM error: " + (err.message if err is not None else "")
        else:
            description = ev.reason if ev.number is None else f"{ev.reason} {ev.number}"
            if ev.message:
                self._output(ev.message + "\n")
        self._stopped(reason, description=description, text=ev.line(), **body_extra)

    def _stopped(self, reason: str, **extra) -> None:
        self.variables.clear()
        self.goto_steps.clear()
        if self.interp is not None:
            self.interp.selected = None
        body = {"reason": reason, "threadId": THREAD_ID, "allThreadsStopped": True}
        body.update({k: v for k, v in extra.items() if v is not None})
        self.send_event("stopped", body)

    def _output(self, text: str, category: str = "console") -> None:
        self.send_event("output", {"category": category, "output": text})

    def _log_point(self, bp, text: str) -> None:
        body = {"category": "console", "output": text + "\n"}
        if bp.kind == "line":
            body.update(source=self._source_of_program(), line=self._line_out(bp.line))
        self.send_event("output", body)

    # ------------------------------------------------------------ where the program is

    def _depth(self, frame_id) -> int | None:
        """The session depth of a DAP frame id (None: the innermost frame)."""
        if frame_id is None:
            return None
        if not isinstance(frame_id, int) or isinstance(frame_id, bool):
            raise RequestError(f"'frameId' must be a whole number, not {frame_id!r}")
        depth = frame_id - 1
        frames = self.session.vm.frames
        if not 0 <= depth < len(frames):
            raise RequestError(f"no frame {frame_id} at this stop")
        return depth

    def req_stackTrace(self, args: dict) -> dict:
        s = self._need_stopped()
        start = _typed(args, "startFrame", int, 0)
        levels = _typed(args, "levels", int, 0)
        fs = s.vm.frames
        total = len(fs)
        first = max(0, start)
        last = total if levels <= 0 else min(total, first + levels)
        out = []
        for k in range(first, last):
            f = s.frame(total - 1 - k)
            frame = {"id": f.depth + 1, "name": f"@{f.func_name} pc={f.pc}",
                     "instructionPointerReference": self.addresses.text(f.func_index, f.pc)}
            self._place(frame, f.span)
            out.append(frame)
        return {"stackFrames": out, "totalFrames": total}

    def req_scopes(self, args: dict) -> dict:
        s = self._need_stopped()
        depth = self._depth(_typed(args, "frameId", int, required=True))
        f = s.frame(depth)
        v = self.variables
        regs = v.reference(lambda a, b, c: self._registers(depth), kind="registers",
                           depth=depth)
        params = v.reference(lambda a, b, c: self._arguments(depth), kind="arguments",
                             depth=depth)
        consts = v.reference(lambda a, b, c: self._constants(a, b), kind="constants")
        filled = sum(1 for x in f.registers if x is not None)
        return {"scopes": [
            {"name": "Registers", "presentationHint": "registers", "variablesReference": regs,
             "namedVariables": filled, "expensive": False},
            {"name": "Arguments", "presentationHint": "arguments", "variablesReference": params,
             "namedVariables": len(f.params), "expensive": False},
            {"name": "Constants", "variablesReference": consts,
             "namedVariables": len(s.exe.constants), "expensive": False},
        ]}

    def _registers(self, depth: int) -> list:
        f = self.session.frame(depth)
        names = {i: p for i, p in enumerate(f.params)}
        out = []
        for r, value in enumerate(f.registers):
            if value is None:
                continue
            var = self.variables.variable(f"${r}", value, evaluate_name=f"${r}")
            if r in names:
                var["type"] = f"{var['type']} (%{names[r]})"
            out.append(var)
        return out

    def _arguments(self, depth: int) -> list:
        f = self.session.frame(depth)
        return [self.variables.variable(f"%{p}", f.registers[i], evaluate_name=f"${i}")
                for i, p in enumerate(f.params)]

    def _constants(self, start: int, count: int) -> list:
        consts = self.session.exe.constants
        lo = max(0, start)
        hi = len(consts) if count <= 0 else min(len(consts), lo + count)
        return [self.variables.variable(f"Const[{i}]", consts[i]) for i in range(lo, hi)]

    def req_variables(self, args: dict) -> dict:
        self._need_stopped()
        ref = _typed(args, "variablesReference", int, required=True)
        which = _typed(args, "filter", str)
        if which not in (None, "named", "indexed"):
            raise RequestError(f"filter {which!r}: use named or indexed")
        try:
            kids = self.variables.children(ref, _typed(args, "start", int, 0),
                                           _typed(args, "count", int, 0), which)
        except KeyError:
            raise RequestError(f"no variables reference {ref} at this stop") from None
        return {"variables": kids}

    def req_source(self, args: dict) -> dict:
        """The text of one source of the loaded program: from the text the executable
        carries, else the program's own file read through fileio; no other path is read."""
        s = self._need_session()
        source = _typed(args, "source", dict, {}) or {}
        path = source.get("path")
        if not isinstance(path, str) or not path or "\0" in path:
            raise RequestError("rvmdbg gives every source by its path")
        wanted = os.path.abspath(path)
        for name in list(s.exe.sources) + [s.exe.source_name]:
            if name and os.path.abspath(name) == wanted and s.exe.source_of(name) is not None:
                language = kind_for(name).source_language  # how the file's kind shows it
                return {"content": s.exe.source_of(name),
                        "mimeType": f"text/x-{language}" if language else "text/plain"}
        if not self._own_file(path):
            raise RequestError(f"{path!r} is not a source of the program being debugged")
        try:
            text = read_text(self._program_source(), what=N_("program"))
        except (OSError, UnicodeDecodeError) as exc:
            raise RequestError(f"cannot read {path!r}: {exc}") from None
        language = kind_for(path).source_language  # how the file's kind shows its source
        return {"content": text, "mimeType": f"text/x-{language}" if language else "text/plain"}

    def req_exceptionInfo(self, args: dict) -> dict:
        s = self._need_stopped()
        err = s.error
        if err is None:
            raise RequestError("the program is not stopped at a VM error")
        from rvmdbg.program import vm_error_text
        text = vm_error_text(err, s.exe)
        return {"exceptionId": f"limit {err.limit}" if err.limit else "VMError",
                "description": err.message, "breakMode": "always",
                "details": {"message": err.message, "typeName": "VMError",
                            "stackTrace": text}}

    # ------------------------------------------------------------ disassembly

    def req_disassemble(self, args: dict) -> dict:
        s = self._need_session()
        base = self.addresses.parse(_typed(args, "memoryReference", str, required=True))
        base += _typed(args, "offset", int, 0) + _typed(args, "instructionOffset", int, 0)
        count = _typed(args, "instructionCount", int, required=True)
        if not 0 <= count <= 100_000:
            raise RequestError(f"instructionCount must be between 0 and 100000, not {count}")
        names, kernels = s.exe.function_names(), s.exe.kernel_names()
        out = []
        last_span = None
        for address in range(base, base + count):
            loc = self.addresses.location(address)
            if loc is None:
                out.append({"address": format_address(address), "instruction": "",
                            "presentationHint": "invalid"})
                continue
            fi, pc = loc
            fn = s.exe.functions[fi]
            ins = fn.instructions[pc]
            item = {"address": format_address(address),
                    "instructionBytes": " ".join(str(x) for x in [ins.opcode, *ins.fields()]),
                    "instruction": ins.text(names, kernels), "symbol": f"@{fn.name}:{pc}"}
            span = s.exe.span_at(fi, pc)
            if span is not None:
                src = self._source(span)
                if span != last_span:
                    item["location"] = src
                item.update(line=self._line_out(span.line), column=self._col_out(span.col),
                            endLine=self._line_out(span.end_line),
                            endColumn=self._col_out(span.end_col))
            last_span = span
            out.append(item)
        return {"instructions": out}

    # ------------------------------------------------------------ evaluate

    def _register_in(self, expr: str, frame) -> int | None:
        """The register `$N` or `%param` names in `frame` (None: neither); DebugError when
        out of range."""
        if _TOO_LONG_REGISTER.match(expr):
            raise DebugError(f"{expr[:12]}...: a register number of {len(expr) - 1} digits is "
                             f"outside the register file (size {len(frame.registers)})")
        m = _REGISTER.match(expr)
        if m:
            r = int(m.group(1))
            if not 0 <= r < len(frame.registers):
                raise DebugError(f"${r} is outside the register file "
                                 f"(size {len(frame.registers)})")
            return r
        m = _PARAM.match(expr)
        if m and m.group(1) in frame.params:
            return frame.params.index(m.group(1))
        return None

    def req_evaluate(self, args: dict) -> dict:
        s = self._need_stopped()
        expr = _typed(args, "expression", str, required=True).strip()
        context = _typed(args, "context", str, "repl")
        depth = self._depth(args.get("frameId"))
        frame = s.frame(depth) if s.vm.frames else None
        if frame is not None:
            r = self._register_in(expr, frame)
            if r is not None:
                return self._value_result(expr, frame.registers[r])
        if context == "repl":
            return self._command(expr, depth)
        word, _, rest = expr.partition(" ")
        word = word.lower()
        if frame is None:
            raise RequestError("the program has finished: no registers")
        if word in ("print", "p"):
            r = self._register_in(rest.strip(), frame)
            if r is None:
                raise RequestError(f"print takes $N or %name, not {rest.strip()!r}")
            return self._value_result(rest.strip(), frame.registers[r])
        if word == "deps":
            return {"result": self._interp_text("deps", depth), "variablesReference": 0}
        if word in ("last-write", "lw"):
            r = self._register_in(rest.strip(), frame)
            if r is None:
                raise RequestError(f"last-write takes $N or %name, not {rest.strip()!r}")
            step, wfi, wpc, text = s.last_writer(r, depth)
            where = (f"written at step {step} by @{s.func_name(wfi)} pc={wpc}: {text}"
                     if step is not None else f"${r}: {text}")
            return {"result": where, "variablesReference": 0}
        raise RequestError(_WATCH_HELP)

    def _value_result(self, expr: str, value) -> dict:
        var = self.variables.variable(expr, value)
        out = {"result": var["value"], "type": var.get("type", ""),
               "variablesReference": var["variablesReference"]}
        for key in ("namedVariables", "indexedVariables"):
            if key in var:
                out[key] = var[key]
        return out

    def _interp_text(self, line: str, depth: int | None) -> str:
        self.interp.selected = depth
        out = self.interp.execute(line)
        if self.interp.last_error is not None:
            raise RequestError(self.interp.last_error)
        return out

    def _command(self, line: str, depth: int | None) -> dict:
        """A debug-console line: the whole command language; a motion reports its stop."""
        s = self.session
        word = line.split()[0].lower() if line.split() else ""
        if word in ("quit", "q", "exit"):
            raise RequestError("end the session from the editor (disconnect or terminate)")
        before_event, before_step = s.last_event, s.step_count
        self.interp.selected = depth
        self._running.set()  # a motion typed here can be paused too
        try:
            out = self.interp.execute(line)
        finally:
            self._running.clear()
            self._pausing.clear()
        moved = s.last_event is not before_event or s.step_count != before_step
        if self.interp.last_error is not None:
            raise RequestError(self.interp.last_error)
        if moved and s.last_event is not None:
            ev = s.last_event
            self.then = lambda: self._report(ev, "step")
        return {"result": out, "variablesReference": 0}


__all__ = ["DapAdapter", "RequestError", "LaunchConfig", "launch_config", "CAPABILITIES"]
