"""The VM profiler: where a run's time goes, in the shape of TVM's VM profiler report.

TVM's `VirtualMachineProfiler.profile` times every kernel call (and the VM's own
`VM::AllocStorage`, `VM::AllocTensor`, ... instructions) and returns a `Report` whose
`table()`, `csv()` and `json()` print one row per call, or per kernel and argument shapes
aggregated, with Name, Duration (us), Percent, Device, Count and Argument Shapes, then the
column sums ("Sum") and the device's whole run ("Total"). This module measures the same on
rvmdbg's VM, with nothing added to the dispatch loop:

- `Profiler.timed_executable(exe)`: a copy of the executable whose kernels' callables are
  timed wrappers, so every path that calls a kernel (the single handlers, `fastpath.py`'s
  fused blocks and `regions.py`'s regions) times each kernel call on its own;
- `Profiler.wrap` for `VirtualMachine.instrument`: each instruction's handler timed, by
  instruction class, and the gaps between them (the dispatch loop itself) counted as
  `VM::Dispatch`; with `trace=True` the same timers write Chrome trace events (`trace_json`).

`profile_run(...)` runs an entry that way and returns a `Report`. The rows partition the
timed run: kernels, the VM's own work per instruction class, the dispatch loop and the
profiler's bookkeeping; what stays outside them (run()'s entry and exit) is stated, and so
is the timers' own cost, which the rows include (measured by `timer_cost()`).
"""
from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field

from rvmdbg.i18n import N_
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.executable import Kernel
from rvmdbg.vm.state import CALL, HALT

_clock = time.perf_counter_ns

# TVM's names for the VM's own rows (src/runtime/vm/profiler/vm.cc names the first ones;
# the VM profiler there times no other instruction) and the overhead class each belongs to.
OPCODE_ROWS = {
    bc.Move: ("VM::Move", "copies"), bc.LoadConst: ("VM::LoadConst", "copies"),
    bc.DeviceCopy: ("VM::DeviceCopy", "copies"),
    bc.ReshapeTensor: ("VM::ReshapeTensor", "copies"), bc.ShapeOf: ("VM::ShapeOf", "copies"),
    bc.AllocStorage: ("VM::AllocStorage", "allocation"),
    bc.AllocTensor: ("VM::AllocTensor", "allocation"),
    bc.AllocTensorReg: ("VM::AllocTensorReg", "allocation"),
    bc.AllocADT: ("VM::AllocADT", "allocation"),
    bc.AllocClosure: ("VM::AllocClosure", "allocation"),
    bc.KillRegister: ("VM::KillRegister", "allocation"),
    bc.Invoke: ("VM::Invoke", "frames"), bc.InvokeClosure: ("VM::InvokeClosure", "frames"),
    bc.Ret: ("VM::Ret", "frames"),
    bc.InvokePacked: ("VM::InvokePacked", "dispatch"),
    bc.If: ("VM::If", "dispatch"), bc.Goto: ("VM::Goto", "dispatch"),
    bc.GetTag: ("VM::GetTag", "dispatch"), bc.GetField: ("VM::GetField", "dispatch"),
    bc.LoadConsti: ("VM::LoadConsti", "dispatch"), bc.Fatal: ("VM::Fatal", "dispatch"),
}
DISPATCH = "VM::Dispatch"          # the loop between handlers (and the timers' own reads)
BOOKKEEPING = "Profiler::Bookkeeping"   # what recording a kernel call costs, measured
FUSED = "VM::FusedCode"            # --fused: everything between kernel calls, as one row
DEVICE = "cpu0"                    # TVM's DeviceString of the host device
# the VM's overhead classes, as the notes list them (N_: translated where shown)
CATEGORIES = (N_("dispatch"), N_("allocation"), N_("frames"), N_("copies"), N_("profiler"))
SORT_KEYS = ("duration", "count", "name")


# ------------------------------------------------------------------ metrics (TVM's kinds)

@dataclass(frozen=True)
class Metric:
    """One cell: `kind` is TVM's JSON key ("microseconds", "count", "percent", "string")."""

    kind: str
    value: object

    def text(self) -> str:
        """As TVM's table prints it (durations with thousands separators, 2 decimals)."""
        if self.kind == "microseconds":
            return f"{self.value:,.2f}"
        if self.kind == "percent":
            return f"{self.value:.2f}"
        if self.kind == "count":
            return f"{self.value:,}"
        return str(self.value)

    def csv(self) -> str:
        if self.kind == "string":
            return f'"{self.value}"'
        return repr(float(self.value)) if self.kind != "count" else str(self.value)

    def as_json(self) -> dict:
        return {self.kind: self.value}


def us(ns: float) -> Metric:
    return Metric("microseconds", ns / 1000.0)


def count(n: int) -> Metric:
    return Metric("count", int(n))


def text(s: str) -> Metric:
    return Metric("string", str(s))


TABLE_HEADERS = ("Name", "Duration (us)", "Percent", "Device", "Count", "Argument Shapes")
# rvmdbg's own columns, after TVM's: the overhead class, the call's line (Relay line or ONNX
# node), the bytes the VM allocated (its AllocStorage rows), the bytes a kernel wrote
EXTRA_HEADERS = ("Category", "Line", "Bytes Allocated", "Output Bytes")


# ------------------------------------------------------------------ the report

@dataclass
class Report:
    """TVM's `Report`: `calls` (one dict of column -> Metric per call), `device_metrics`
    (device -> its whole-run metrics) and `configuration` (name -> Metric); `notes` are
    rvmdbg's lines under the table (the timer's cost, what the rows leave out)."""

    calls: list = field(default_factory=list)
    device_metrics: dict = field(default_factory=dict)
    configuration: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def total_us(self) -> float:
        return max((m["Duration (us)"].value for m in self.device_metrics.values()), default=0.0)

    def rows(self, sort: str = "duration", aggregate: bool = True) -> list[dict]:
        """The calls, aggregated by name + argument shapes + device (TVM's key; rvmdbg adds
        the line) summing durations, counts, percents and bytes; sorted by `sort`."""
        rows = [dict(c) for c in self.calls]
        if aggregate:
            groups: dict = {}
            for c in rows:
                key = (c["Name"].value, c.get("Argument Shapes", text("")).value,
                       c.get("Device", text("")).value)   # TVM's key (the line is ours)
                groups.setdefault(key, []).append(c)
            rows = [_aggregate(group) for group in groups.values()]
        if sort == "duration":
            rows.sort(key=lambda r: -r["Duration (us)"].value)
        elif sort == "count":
            rows.sort(key=lambda r: (-r["Count"].value, -r["Duration (us)"].value))
        elif sort == "name":
            rows.sort(key=lambda r: (r["Name"].value, -r["Duration (us)"].value))
        return rows

    def column_sums(self, rows: list[dict]) -> dict:
        sums: dict = {}
        for r in rows:
            for k, m in r.items():
                if m.kind in ("microseconds", "count", "percent"):
                    prev = sums.get(k)
                    sums[k] = Metric(m.kind, m.value + (prev.value if prev else 0))
        sums["Name"] = text("Sum")
        return sums

    def table(self, sort: str = "duration", aggregate: bool = True, col_sums: bool = True,
              width: int | None = None, columns=None) -> str:
        """TVM's `table()`: the rows, a separator, `Sum`, then `Total` per device, columns
        right-aligned but the first, then the configuration. `columns`: only these, in this
        order (the debugger's narrower table)."""
        rows = self.rows(sort, aggregate)
        if col_sums:
            sums = self.column_sums(rows)
            rows = rows + [{"Name": text("----------")}, sums]
        for dev, metrics in self.device_metrics.items():
            rows.append({**metrics, "Name": text("Total")})
        headers = list(TABLE_HEADERS) + [h for h in EXTRA_HEADERS
                                          if any(h in r for r in rows)]
        for r in rows:
            for k in r:
                if k not in headers:
                    headers.append(k)
        if columns is not None:
            headers = [h for h in columns if h in headers]
        cols = [[h] + [r[h].text() if h in r else "" for r in rows] for h in headers]
        widths = [max(len(x) for x in col) for col in cols]
        out = []
        for i in range(len(rows) + 1):
            # left-aligned: the name, and a chosen layout's last column (the shapes, which a
            # narrow console cuts: their start stays readable)
            left = {0, len(cols) - 1} if columns is not None else {0}
            cells = [cols[c][i].ljust(widths[c]) if c in left else cols[c][i].rjust(widths[c])
                     for c in range(len(cols))]
            line = "  ".join(cells).rstrip()
            out.append(line[:width] if width else line)
        out.append("")
        out.append("Configuration")
        out.append("-------------")
        for k, m in self.configuration.items():
            out.append(f"{k}: {m.text()}")
        if self.notes:
            out.append("")
            out.extend(self.notes)
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        """TVM's `csv()`: one line per call (not aggregated), the columns every call has
        any of, in sorted order; strings quoted, numbers as they are."""
        headers = sorted({k for c in self.calls for k in c})
        lines = [",".join(headers)]
        for c in self.calls:
            lines.append(",".join(c[h].csv() if h in c else "" for h in headers))
        return "\n".join(lines) + "\n"

    def json(self) -> str:
        """TVM's `json()`: `{"calls": [...], "device_metrics": {...}, "configuration":
        {...}}`, each metric an object keyed by its kind (`{"microseconds": 12.5}`)."""
        return json.dumps({
            "calls": [{k: m.as_json() for k, m in c.items()} for c in self.calls],
            "device_metrics": {d: {k: m.as_json() for k, m in ms.items()}
                               for d, ms in self.device_metrics.items()},
            "configuration": {k: m.as_json() for k, m in self.configuration.items()},
        })


def _aggregate(group: list[dict]) -> dict:
    """TVM's AggregateMetric per column: durations, counts and percents summed, strings
    taken from the first call (they are the same across the group) but the lines, which
    are listed (`12, 15, 18`: a kernel called from several)."""
    out = {}
    lines: list[str] = []
    for c in group:
        for k, m in c.items():
            prev = out.get(k)
            if prev is None:
                out[k] = m
            elif m.kind in ("microseconds", "count", "percent"):
                out[k] = Metric(m.kind, prev.value + m.value)
        line = c.get("Line")
        if line is not None and line.value and line.value not in lines:
            lines.append(line.value)
    if "Line" in out:
        shown = ", ".join(lines[:4]) + (", ..." if len(lines) > 4 else "")
        out["Line"] = text(shown)
    return out


# ------------------------------------------------------------------ the timers

def timer_cost(samples: int = 20000) -> float:
    """What one `perf_counter_ns()` read costs here, in ns (the best of three batches)."""
    clock = _clock
    best = None
    for _round in range(3):
        t0 = clock()
        for _i in range(samples):
            clock()
        t1 = clock()
        per = (t1 - t0) / samples
        best = per if best is None else min(best, per)
    return best


class Profiler:
    """Timers for one VM: kernel calls (through `timed_executable`) and instructions
    (through `wrap`, given to `VirtualMachine.instrument`). `calls` holds one record per
    kernel call `(kernel index, func index, pc, t0, t1, (dtype, shape) pairs)`; `ops` per row name
    [ns, count, bytes]; `dispatch_ns` the gaps between handlers. With `trace`, `events`
    collects Chrome trace events (see `trace_json`)."""

    def __init__(self, exe, trace: bool = False):
        self.exe = exe
        self.trace = trace
        self.vm = None
        self.reset()

    def reset(self) -> None:
        """Clear the figures for another run (in place: the timers hold these lists)."""
        if not hasattr(self, "calls"):
            self.calls: list[tuple] = []
            self.ops: dict[str, list] = {}
            self.events: list[dict] | None = [] if self.trace else None
            self.frame_starts: list = []   # (t, func name, serial) of each open frame
        self.calls.clear()
        for slot in self.ops.values():
            slot[:] = [0, 0, 0]
        if self.events is not None:
            self.events.clear()
        self.frame_starts.clear()
        self.dispatch_ns = 0
        self.book_ns = 0
        self.kernel_ns = 0
        self.last = 0                   # when the previous handler returned
        self.site = (-1, -1)            # the InvokePacked running (its kernel records it)
        self.registers = 0              # the register file's slots over the live frames
        self.peak_bytes = 0

    # -------------------------------------------------------------- kernels

    def timed_executable(self, exe):
        """A shallow copy of `exe` whose kernels call timed wrappers of their callables."""
        timed = copy.copy(exe)
        timed.kernels = [self._timed_kernel(i, k) for i, k in enumerate(exe.kernels)]
        return timed

    def _timed_kernel(self, index: int, kernel: Kernel) -> Kernel:
        impl = kernel.impl
        if impl is None:
            return kernel
        clock, calls = _clock, self.calls
        prof = self

        def record(values, out, t0, t1):
            fi, pc = prof.site
            calls.append((index, fi, pc, t0, t1, _shapes(values, out)))
            prof.kernel_ns += t1 - t0
            prof.book_ns += clock() - t1
            return out

        def timed(values):
            t0 = clock()
            out = impl(values)
            return record(values, out, t0, clock())
        # what the handlers and regions read off a kernel callable (not `scalar_fast`:
        # a 0-d call then goes through the timer too)
        if hasattr(impl, "intermediate_bytes"):
            timed.intermediate_bytes = impl.intermediate_bytes
        run_within = getattr(impl, "run_within", None)
        if run_within is not None:
            def timed_within(values, room):
                t0 = clock()
                out = run_within(values, room)
                return record(values, out, t0, clock())
            timed.run_within = timed_within
        return Kernel(kernel.name, kernel.source, kernel.num_inputs, kernel.num_outputs,
                      kernel.builtin, timed)

    # -------------------------------------------------------------- instructions

    def wrap(self, fi: int, pc: int, ins, handler):
        """`handler` timed under its instruction class's row (VirtualMachine.instrument)."""
        name, _category = OPCODE_ROWS.get(type(ins), ("VM::UnknownOp", "dispatch"))
        slot = self.ops.setdefault(name, [0, 0, 0])
        if self.events is not None:
            return self._traced(fi, pc, ins, handler, slot)
        clock, prof, vm = _clock, self, self.vm
        site = (fi, pc)
        kind = type(ins)

        if kind is bc.InvokePacked:
            def timed(regs):
                t0 = clock()
                prof.dispatch_ns += t0 - prof.last
                prof.site = site   # the kernel's timer names the call's place with it
                nxt = handler(regs)
                t1 = clock()
                slot[0] += t1 - t0
                slot[1] += 1
                prof.last = t1
                return nxt
        elif kind in (bc.AllocStorage, bc.KillRegister):
            def timed(regs):
                t0 = clock()
                prof.dispatch_ns += t0 - prof.last
                before = vm.live_bytes
                nxt = handler(regs)
                t1 = clock()
                live = vm.live_bytes
                slot[0] += t1 - t0
                slot[1] += 1
                if live > before:
                    slot[2] += live - before
                    if live > prof.peak_bytes:
                        prof.peak_bytes = live
                prof.last = t1
                return nxt
        else:
            def timed(regs):
                t0 = clock()
                prof.dispatch_ns += t0 - prof.last
                nxt = handler(regs)
                t1 = clock()
                slot[0] += t1 - t0
                slot[1] += 1
                prof.last = t1
                return nxt
        return timed

    def _traced(self, fi, pc, ins, handler, slot):
        """The timed handler that also writes trace events (frames, counters, if, allocs)."""
        clock, prof, vm = _clock, self, self.vm
        events, starts, frames = self.events, self.frame_starts, self.vm.frames
        functions = self.exe.functions
        kind = type(ins)
        site = (fi, pc)
        true_pc = pc + ins.true_offset if kind is bc.If else None

        def timed(regs):
            t0 = clock()
            prof.dispatch_ns += t0 - prof.last
            before = vm.live_bytes
            top = frames[-1]
            prof.site = site
            nxt = handler(regs)
            t1 = clock()
            slot[0] += t1 - t0
            slot[1] += 1
            ts = t1 / 1000.0
            live = vm.live_bytes
            if live > before:
                slot[2] += live - before
                if live > prof.peak_bytes:
                    prof.peak_bytes = live
            if nxt == CALL or nxt == HALT:
                if kind is bc.Ret:
                    start, name, serial = starts.pop()
                    prof.registers -= len(top.registers)
                    events.append({"name": "@" + name, "cat": "frame", "ph": "X",
                                   "ts": start / 1000.0, "dur": (t1 - start) / 1000.0,
                                   "pid": 1, "tid": 1, "args": {"serial": serial}})
                else:
                    callee = frames[-1]
                    prof.registers += len(callee.registers)
                    starts.append((t1, functions[callee.func_index].name, callee.serial))
                events.append({"name": "register file", "ph": "C", "ts": ts, "pid": 1,
                               "args": {"registers": prof.registers}})
            elif kind is bc.If:
                events.append({"name": "if", "cat": "vm", "ph": "i", "s": "t", "ts": ts,
                               "pid": 1, "tid": 1,
                               "args": {"at": f"@{functions[fi].name}:{pc}",
                                        "branch": "true" if nxt == true_pc else "false"}})
            elif kind is bc.AllocStorage:
                events.append({"name": "alloc_storage", "cat": "vm", "ph": "i", "s": "t",
                               "ts": ts, "pid": 1, "tid": 1,
                               "args": {"bytes": live - before,
                                        "at": f"@{functions[fi].name}:{pc}"}})
            if live != before:
                events.append({"name": "live bytes", "ph": "C", "ts": ts, "pid": 1,
                               "args": {"bytes": live}})
            prof.last = t1
            return nxt
        return timed

    # -------------------------------------------------------------- one run

    def begin(self, vm, entry_index: int) -> None:
        """Mark the start of a run of `vm` (just started at its entry)."""
        t = self.last = _clock()
        self.start_ns = t
        if self.events is not None:
            frame = vm.frames[-1]
            self.registers = len(frame.registers)
            self.frame_starts.append((t, self.exe.functions[entry_index].name, frame.serial))



def kernel_events(exe, calls) -> list[dict]:
    """One complete trace event per kernel call record of a `Profiler`."""
    functions, kernels = exe.functions, exe.kernels
    return [{"name": kernels[k].name, "cat": "kernel", "ph": "X", "ts": t0 / 1000.0,
             "dur": (t1 - t0) / 1000.0, "pid": 1, "tid": 1,
             "args": {"Argument Shapes": shape_text(shapes),
                      "at": f"@{functions[fi].name}:{pc}" if fi >= 0 else "?"}}
            for k, fi, pc, t0, t1, shapes in calls]


def _shapes(values, out) -> tuple:
    """A call's arguments as (dtype, shape) pairs, inputs then outputs: kept cheap while
    timing (`shape_text` makes the text at report time); tuples flattened."""
    outs = out if isinstance(out, (list, tuple)) else (out,)
    pairs = []
    for v in (*values, *outs):
        if type(v) is tuple:
            pairs.extend(_shapes(v, ()))
        else:
            pairs.append((getattr(v, "dtype", None), getattr(v, "shape", None)))
    return tuple(pairs)


def shape_text(pairs) -> str:
    """TVM's `ShapeString` of (dtype, shape) pairs: `float32[1, 3, 224, 224], int32[]`."""
    return ", ".join(f"{d}[{', '.join(str(x) for x in s)}]" for d, s in pairs
                     if d is not None and s is not None)


def output_bytes(pairs, num_outputs: int) -> int:
    """The bytes of a call's outputs (its last `num_outputs` pairs)."""
    total = 0
    for d, s in pairs[len(pairs) - num_outputs:] if num_outputs else ():
        if d is not None and s is not None:
            n = d.itemsize
            for x in s:
                n *= int(x)
            total += n
    return total


def trace_json(events: list[dict], metadata: dict | None = None) -> str:
    """The Chrome trace event format's JSON object form (what Perfetto and
    chrome://tracing open): `{"traceEvents": [...], "displayTimeUnit": "ms"}`, events sorted
    by time with a parent before the children that start with it."""
    def key(e):
        return (e["ts"], 0 if e["ph"] == "X" else 1, -e.get("dur", 0))
    # times from the run's start (the clock's own zero is arbitrary)
    zero = min((e["ts"] for e in events), default=0.0)
    shifted = [{**e, "ts": round(e["ts"] - zero, 3)} for e in events]
    out = {"traceEvents": [{"name": "process_name", "ph": "M", "pid": 1,
                            "args": {"name": "rvmdbg VM"}},
                           {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1,
                            "args": {"name": "dispatch loop"}}] + sorted(shifted, key=key),
           "displayTimeUnit": "ms"}
    if metadata:
        out["otherData"] = metadata
    return json.dumps(out)


# ------------------------------------------------------------------ running with it

@dataclass
class ProfiledRun:
    """One measured run: its `Report`, its `result`, its trace events (with `trace`), and
    the figures the notes state."""

    report: Report
    result: object
    events: list | None
    total_ns: int
    rows_ns: int


def profile_run(exe, entry: str, args, limits=None, *, repeat: int = 1, warmup: int = 0,
                fused: bool = False, trace: bool = False, site_name=None,
                threads: int | None = None) -> ProfiledRun:
    """Run `entry` of `exe` on the VM with timers, `warmup` untimed runs then `repeat` timed
    ones; the report is the fastest timed run's (its rows and its Total are the same run's).
    `fused`: keep run()'s fused blocks and regions, timing kernel calls only (the VM's work
    between them one row); `site_name(fi, pc) -> str` names a call's line (Relay line or
    ONNX node). Raises VMError as `run()` does."""
    from rvmdbg.vm.machine import VirtualMachine
    prof = Profiler(exe, trace=trace and not fused)
    vm = VirtualMachine(prof.timed_executable(exe), limits)
    prof.vm = vm
    if not fused:
        vm.instrument(prof.wrap)
    vm.blocks()   # run()'s fused tables made now, not inside the first timed run
    fi = exe.func_index(entry)
    for _i in range(warmup):
        vm.invoke(entry, args)
    best = None
    all_walls = []
    for _i in range(max(1, repeat)):
        prof.reset()
        vm.start(entry, args)
        prof.begin(vm, fi)
        t0 = prof.start_ns
        result = vm.run()
        t1 = _clock()
        if not fused:  # run()'s exit, after the last handler: the loop's too
            prof.dispatch_ns += t1 - prof.last
        wall = t1 - t0
        all_walls.append(wall)
        if best is None or wall < best[0]:
            best = (wall, list(prof.calls), {k: list(v) for k, v in prof.ops.items()},
                    prof.dispatch_ns, prof.book_ns, prof.kernel_ns,
                    None if prof.events is None else list(prof.events),
                    max(prof.peak_bytes, vm.live_bytes), vm.steps, result, vm.memory_stats())
    (total, calls, ops, dispatch, book, kernel_total, events, peak, steps, result,
     memory) = best
    report = _make_report(exe, calls, ops, dispatch, book, kernel_total, total, fused,
                          site_name)
    cost = timer_cost()
    reads = sum(v[1] for v in ops.values()) * 2 + len(calls) * 3
    rows_ns = sum(c["Duration (us)"].value for c in report.calls) * 1000.0
    report.configuration.update({
        "Executor": text("VM"),
        "Number of threads": count(threads if threads is not None else 1),
        "Runs": count(max(1, repeat)),
        "Warmup runs": count(warmup),
        "Instructions": count(steps),
        "Peak live bytes": count(peak),
        **_pool_figures(memory),
        "Timer cost": text(f"{cost:.0f} ns per clock read"),
    })
    tolerance_us = reads * cost / 1000.0
    report.configuration["Tolerance (us)"] = Metric("microseconds", tolerance_us)
    report.notes = _notes(total, rows_ns, reads, cost, all_walls, fused,
                          _untimed(exe, entry, args, limits))
    report.notes.insert(1, _by_category(report, total))
    if events is not None:
        events = events + kernel_events(exe, calls)
    return ProfiledRun(report, result, events, total, int(rows_ns))


def _pool_figures(memory: dict) -> dict:
    """The storage pool's figures for the report's configuration (none with `--no-pool`)."""
    if not memory.get("pooled", True):
        return {"Storage pool": text("off")}
    return {"Pool allocations": count(memory["allocations"]),
            "Pool reused": count(memory["reused"]),
            "Pool bytes allocated": count(memory["allocated"]),
            "Pool bytes reused": count(memory["reused_bytes"]),
            "Pool peak bytes": count(memory["peak"])}


def _make_report(exe, calls, ops, dispatch, book, kernel_total, total, fused, site_name):
    report = Report()
    kernels = exe.kernels
    sites = _static_sites(exe)
    for k, fi, pc, t0, t1, shapes in calls:
        kernel = kernels[k]
        row = {"Name": text(kernel.name), "Duration (us)": us(t1 - t0),
               "Percent": Metric("percent", 100.0 * (t1 - t0) / total if total else 0.0),
               "Device": text(DEVICE), "Count": count(1),
               "Argument Shapes": text(shape_text(shapes)), "Category": text("kernel"),
               "Output Bytes": count(output_bytes(shapes, kernel.num_outputs))}
        if fi < 0 and len(sites.get(k, ())) == 1:   # --fused: the kernel's one call site
            fi, pc = sites[k][0]
        if site_name is not None:
            row["Line"] = text((site_name(fi, pc) if fi >= 0 else "") or "")
        report.calls.append(row)

    def vm_row(name, ns, n, category, nbytes=0):
        report.calls.append({"Name": text(name), "Duration (us)": us(ns),
                             "Percent": Metric("percent", 100.0 * ns / total if total else 0.0),
                             "Device": text(DEVICE), "Count": count(n),
                             "Category": text(category), "Bytes Allocated": count(nbytes)})
    if fused:
        vm_row(FUSED, max(0, total - kernel_total - book), 1, "dispatch")
    else:
        names = {name: cat for name, cat in OPCODE_ROWS.values()}
        for name, (ns, n, nbytes) in sorted(ops.items()):
            if not n:
                continue
            if name == "VM::InvokePacked":  # the kernels' own time is in their rows
                ns -= kernel_total + book
            vm_row(name, max(0, ns), n, names.get(name, "dispatch"), nbytes)
        vm_row(DISPATCH, dispatch, sum(v[1] for v in ops.values()), "dispatch")
    vm_row(BOOKKEEPING, book, len(calls), "profiler")
    report.device_metrics[DEVICE] = {"Name": text("Total"), "Duration (us)": us(total),
                                     "Percent": Metric("percent", 100.0), "Count": count(1),
                                     "Device": text(DEVICE)}
    return report


def _by_category(report: Report, total: int) -> str:
    """`Kernels 81.2%, VM overhead: dispatch 9.1%, allocation 5.0%, ...` of the Total."""
    from rvmdbg.i18n import _
    share: dict = {}
    for c in report.calls:
        cat = c["Category"].value
        share[cat] = share.get(cat, 0.0) + c["Duration (us)"].value * 1000.0
    pct = {k: 100.0 * v / total if total else 0.0 for k, v in share.items()}
    parts = ", ".join(f"{_(k)} {pct[k]:.1f}%" for k in CATEGORIES if k in pct)
    return _("Kernels {kernels} of the Total; the VM's own work: {parts}.").format(
        kernels=f"{pct.get('kernel', 0.0):.1f}%", parts=parts)


def _static_sites(exe) -> dict:
    """Kernel index -> the (func index, pc) of every InvokePacked that calls it."""
    sites: dict = {}
    for fi, fn in enumerate(exe.functions):
        for pc, ins in enumerate(fn.instructions):
            if type(ins) is bc.InvokePacked:
                sites.setdefault(ins.packed_index, []).append((fi, pc))
    return sites


def _untimed(exe, entry, args, limits) -> int:
    """ns of the same run on a VM without the profiler (run()'s fused blocks), once warm."""
    from rvmdbg.vm.machine import VirtualMachine
    vm = VirtualMachine(exe, limits)
    vm.invoke(entry, args)
    t0 = _clock()
    vm.invoke(entry, args)
    return _clock() - t0


def _notes(total, rows_ns, reads, cost, walls, fused, untimed) -> list[str]:
    from rvmdbg.i18n import _
    out = [_("Sum of the rows: {sum:,.2f} us of a Total of {total:,.2f} us: every interval "
             "of the run is in one row (VM::Dispatch: the loop between handlers, run()'s "
             "entry and exit).").format(sum=rows_ns / 1000.0, total=total / 1000.0),
           _("Timer cost: {cost:.0f} ns per clock read, {reads:,} reads in this run: about "
             "{us:,.2f} us of the rows is the timers' own (the tolerance: the rows add up to "
             "the Total within it).").format(cost=cost, reads=reads,
                                             us=reads * cost / 1000.0),
           _("The same run without the profiler (run() with its fused blocks): {us:,.2f} "
             "us.").format(us=untimed / 1000.0)]
    if len(walls) > 1:
        ordered = sorted(walls)
        out.append(_("The fastest of {n} runs; the runs took {lo:,.2f} to {hi:,.2f} us "
                     "(median {mid:,.2f}).").format(n=len(walls), lo=ordered[0] / 1000.0,
                                                    hi=ordered[-1] / 1000.0,
                                                    mid=ordered[len(ordered) // 2] / 1000.0))
    if fused:
        out.append(_("With --fused, run()'s fused blocks and regions run as they do "
                     "unprofiled; kernel calls are timed, the VM's work between them is "
                     "one row."))
    return out
