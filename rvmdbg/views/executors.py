"""View 2's data: the Relay VM and the static graph executor on the same program and inputs.

`compare_executors` runs both (no timing): the VM one `step()` at a time, recording every
dispatch (the instruction stream) with the bytes it allocated, and, when the program is a
static dataflow graph, the graph executor over its planned pool; it compares the results and
lists each graph node with its storage block and the node whose block it reuses. For a
dynamic program it keeps the graph executor's refusal (what and where) instead.

`measure_executors` adds timings: the VM's fast path with a timer around each kernel (on a
copy of the executable: the session's is never touched) and the graph executor's profiled
run, each the best of a few rounds. The screen shows measurements it is given, so tests can
pass fixed ones; nothing here is timed unless asked.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from rvmdbg.views.text import merge_pieces
from rvmdbg.vm import bytecode as bc
from rvmdbg.i18n import _

MAX_STREAM = 200_000   # dispatches recorded one by one; a longer run is counted, not listed

_KIND = {
    bc.InvokePacked: "kernel", bc.AllocStorage: "alloc", bc.AllocTensor: "alloc",
    bc.AllocTensorReg: "alloc", bc.AllocADT: "alloc", bc.AllocClosure: "alloc",
    bc.Invoke: "call", bc.InvokeClosure: "call", bc.Ret: "return", bc.If: "control",
    bc.Goto: "control", bc.Fatal: "control", bc.KillRegister: "free",
}


@dataclass
class Dispatch:
    """One executed VM instruction."""

    step: int
    func_index: int
    pc: int
    text: str
    kind: str           # kernel, alloc, free, call, return, control, data
    allocated: int = 0  # storage bytes this instruction allocated
    freed: int = 0


@dataclass
class ExecutorMeasurement:
    """Timings and memory of one executor on one program (seconds, bytes)."""

    executor: str
    dispatches: int
    total_seconds: float
    kernel_seconds: float
    allocations: int
    peak_bytes: int
    compile_seconds: float = 0.0

    @property
    def overhead_seconds(self) -> float:
        return max(0.0, self.total_seconds - self.kernel_seconds)

    @property
    def per_dispatch_seconds(self) -> float:
        return self.overhead_seconds / self.dispatches if self.dispatches else 0.0

    @property
    def kernel_share(self) -> float:
        return self.kernel_seconds / self.total_seconds if self.total_seconds else 0.0


@dataclass
class NodeStorage:
    """A graph node and the memory its first output lives in."""

    node: int
    name: str
    kind: str                   # input, constant, kernel
    storage_id: int | None
    bytes: int
    reuses: int | None = None   # the earlier node whose block this one takes over
    alias: bool = False         # a reshape-only kernel: its output is its input's bytes
    live: tuple = (0, 0)        # (first, last) node positions the entry must stay in its block
    lines: tuple = ()           # a kernel's program lines (every call fused into it)


@dataclass
class MemoryFigures:
    """An executor's memory for one run, counted the same way on both sides: the caller's
    input tensors, the constant tensors, and the working memory the executor allocates for
    kernel outputs (the VM: its peak of live storage; the graph executor: the pool's blocks
    for kernel outputs)."""

    inputs: int
    constants: int
    working: int

    @property
    def total(self) -> int:
        return self.inputs + self.constants + self.working


def tensor_bytes(value) -> int:
    """Bytes of the tensors in a value (tuples and ADT fields followed, each array once; a
    0-d tensor held as a NumPy scalar counts its itemsize)."""
    import numpy as np
    seen: set = set()
    total = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (np.ndarray, np.generic)):
            if id(v) not in seen:
                seen.add(id(v))
                total += v.nbytes
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif hasattr(v, "fields") and isinstance(getattr(v, "fields"), tuple):
            stack.extend(v.fields)
    return total


@dataclass
class ExecutorComparison:
    entry: str
    static: bool
    refusal: str | None = None          # why the graph executor refuses (formatted)
    refusal_span: object = None
    stream: list = field(default_factory=list)
    stream_total: int = 0               # dispatches executed (the stream may be cut short)
    vm_result: object = None
    vm_error: str | None = None
    vm_allocations: int = 0             # alloc_storage executed
    vm_tensor_allocations: int = 0      # alloc_tensor(_reg) executed
    vm_adt_allocations: int = 0         # alloc_data / alloc_closure executed
    vm_allocated_bytes: int = 0
    vm_peak_bytes: int = 0
    graph: object = None
    plan: object = None
    graph_result: object = None
    graph_error: str | None = None
    results_equal: bool | None = None
    nodes: list = field(default_factory=list)
    measurements: dict | None = None    # executor name -> ExecutorMeasurement
    vm_kernel_calls: int = 0            # invoke_packed executed (in the recorded stream)
    input_bytes: int = 0                # the entry's argument tensors
    vm_constant_bytes: int = 0
    graph_memory: MemoryFigures | None = None
    graph_input_buffers: int = 0        # pool blocks reserved for inputs (TVM's set_input)
    vm_pool: dict | None = None         # the storage pool's figures (VirtualMachine.memory_stats)

    @property
    def peak_vs_plan(self) -> float | None:
        """The VM's storage peak over the graph executor's planned kernel-output pool."""
        if self.graph_memory is None or not self.graph_memory.working:
            return None
        return self.vm_peak_bytes / self.graph_memory.working

    @property
    def vm_memory(self) -> MemoryFigures:
        return MemoryFigures(self.input_bytes, self.vm_constant_bytes, self.vm_peak_bytes)

    @property
    def graph_dispatches(self) -> int:
        if self.graph is None:
            return 0
        return sum(1 for n in self.nodes if n.kind == "kernel" and not n.alias)


# ---------------------------------------------------------------- the VM's instruction stream

def trace_vm(exe, entry: str, args, max_dispatches: int = MAX_STREAM) -> dict:
    """Run a fresh VM to the end, one step at a time: every dispatch (up to max_dispatches,
    then the rest at full speed), allocation counts, bytes and the peak of live bytes."""
    from rvmdbg.debug.machine import machine_for
    from rvmdbg.vm.machine import VMError
    vm = machine_for(exe)
    names, kernels = exe.function_names(), exe.kernel_names()
    stream: list = []
    out = {"stream": stream, "result": None, "error": None, "storage": 0, "tensors": 0,
           "adts": 0, "bytes": 0, "peak": 0, "total": 0, "kernels": 0}
    try:
        vm.start(entry, args)
        peak = 0
        while not vm.halted and len(stream) < max_dispatches:
            info = vm.step()
            ins = info.instruction
            kind = _KIND.get(type(ins), "data")
            if isinstance(ins, bc.AllocStorage):
                out["storage"] += 1
            elif isinstance(ins, (bc.AllocTensor, bc.AllocTensorReg)):
                out["tensors"] += 1
            elif isinstance(ins, (bc.AllocADT, bc.AllocClosure)):
                out["adts"] += 1
            if kind == "kernel":
                out["kernels"] += 1
            out["bytes"] += info.allocated_bytes
            if vm.live_bytes > peak:
                peak = vm.live_bytes
            stream.append(Dispatch(info.step, info.func_index, info.pc,
                                   ins.text(names, kernels) if ins is not None else "?", kind,
                                   info.allocated_bytes, info.freed_bytes))
        if not vm.halted:
            vm.run()  # counts only: the figures above cover the recorded part
        out["peak"] = peak
        stats = getattr(vm, "memory_stats", None)
        if callable(stats) and stats().get("pooled"):
            # the pooled allocator: its peak (free buffers included) is the VM's footprint
            out["pool"] = stats()
            out["peak"] = out["pool"]["peak"]
        out["result"] = vm.result
    except VMError as exc:
        out["error"] = exc.message
    out["total"] = vm.steps
    return out


# ---------------------------------------------------------------- the graph side

def node_storage(graph, plan) -> list:
    """Each node's first output: its storage block, and the node whose block it reuses
    (the previous holder of the same storage id, in execution order)."""
    ranges = plan.live_ranges(graph)
    holder: dict = {}
    out = []
    for nid, node in enumerate(graph.nodes):
        if node.num_outputs == 0:
            out.append(NodeStorage(nid, node.name if node.kind != "kernel" else node.func_name,
                                   node.kind, None, 0))
            continue
        eid = graph.entry_id(nid, 0)
        sid = plan.storage_ids[eid]
        alias = eid in plan.aliased
        prev = holder.get(sid)
        reuses = prev if (prev is not None and not alias) else None
        for i in range(node.num_outputs):
            holder[plan.storage_ids[graph.entry_id(nid, i)]] = nid
        out.append(NodeStorage(nid, node.func_name if node.kind == "kernel" else node.name,
                               node.kind, sid, plan.entry_bytes[eid], reuses, alias,
                               tuple(ranges[eid]),
                               node.source_lines() if node.kind == "kernel" else ()))
    return out


def storage_strip(graph, plan, nodes: list, symbols=None) -> list:
    """Per node, one cell per storage block: `write` where the node writes its output, `live`
    where a block holds a value some later node still reads, `free` where it holds nothing
    needed. Returns rows of (text, role) pieces."""
    from rvmdbg.views.text import UNICODE
    symbols = symbols or UNICODE
    ascii_only = symbols is not UNICODE
    cells = {"write": "#" if ascii_only else "█", "live": "=" if ascii_only else "▒",
             "free": "." if ascii_only else "·"}
    ranges = plan.live_ranges(graph)
    nblocks = len(plan.block_sizes)
    entries_of: list = [[] for _ in range(nblocks)]
    for eid, sid in enumerate(plan.storage_ids):
        entries_of[sid].append(eid)
    rows = []
    for n in nodes:
        lo, hi = graph.node_row_ptr[n.node], graph.node_row_ptr[n.node + 1]
        row = []
        for sid in range(nblocks):
            state = "free"
            for eid in entries_of[sid]:
                if lo <= eid < hi:
                    state = "write"
                    break
                first, last = ranges[eid]
                if first < n.node <= last:
                    state = "live"
            row.append((cells[state], state))
        rows.append(merge_pieces(row))
    return rows


# ---------------------------------------------------------------- both

def compare_executors(module, exe, args, entry: str = "main",
                      max_dispatches: int = MAX_STREAM) -> ExecutorComparison:
    """Both executors on `args` (fresh copies are made); no timing."""
    from rvmdbg.views.context import copy_args as _copy_args
    from rvmdbg.values import values_equal
    cmp = ExecutorComparison(entry, static=False)
    vm = trace_vm(exe, entry, _copy_args(args), max_dispatches)
    cmp.stream, cmp.stream_total = vm["stream"], vm["total"]
    cmp.vm_result, cmp.vm_error = vm["result"], vm["error"]
    cmp.vm_allocations, cmp.vm_tensor_allocations = vm["storage"], vm["tensors"]
    cmp.vm_adt_allocations = vm["adts"]
    cmp.vm_allocated_bytes, cmp.vm_peak_bytes = vm["bytes"], vm["peak"]
    cmp.vm_pool = vm.get("pool")
    cmp.vm_kernel_calls = vm["kernels"]
    cmp.input_bytes = tensor_bytes(list(args))
    cmp.vm_constant_bytes = tensor_bytes(list(getattr(exe, "constants", [])))
    if getattr(exe, "kind", None) == "minivm":
        cmp.refusal = _("a MiniVM program is bytecode with jumps over registers, not a dataflow "
                        "graph of kernels: there is nothing for a graph executor to run")
        return cmp
    if module is None:
        cmp.refusal = _("the graph executor needs the Relay program (this executable has no source)")
        return cmp
    from rvmdbg.graph import GraphExecutor, GraphRefusal, find_refusal, lower_to_graph, \
        plan_memory
    refusal = find_refusal(module, entry)
    if refusal is not None:
        cmp.refusal = refusal.message
        cmp.refusal_span = refusal.span
        return cmp
    try:
        graph = lower_to_graph(module, entry)
    except GraphRefusal as exc:
        cmp.refusal, cmp.refusal_span = exc.message, exc.span
        return cmp
    cmp.static = True
    cmp.graph = graph
    cmp.plan = plan_memory(graph)
    cmp.nodes = node_storage(graph, cmp.plan)
    from rvmdbg.graph.graph import CONSTANT, INPUT, KERNEL
    kinds = cmp.plan.block_kinds
    blocks = cmp.plan.block_sizes
    cmp.graph_memory = MemoryFigures(
        cmp.input_bytes, sum(b for b, k in zip(blocks, kinds) if k == CONSTANT),
        sum(b for b, k in zip(blocks, kinds) if k == KERNEL))
    cmp.graph_input_buffers = sum(b for b, k in zip(blocks, kinds) if k == INPUT)
    try:
        ex = GraphExecutor(graph, cmp.plan)
        cmp.graph_result = ex.run(_copy_args(args))
    except Exception as exc:  # a run error is part of the comparison, not a crash
        cmp.graph_error = getattr(exc, "message", None) or str(exc)
    if cmp.vm_error is None and cmp.graph_error is None:
        cmp.results_equal = values_equal(cmp.vm_result, cmp.graph_result)
    return cmp


def _timed_copy(exe, spent: list):
    """A copy of exe whose kernels add their time to spent[0]."""
    from rvmdbg.vm.executable import Executable, Kernel
    clock = time.perf_counter
    kernels = []
    for k in exe.kernels:
        impl = k.impl
        if impl is not None and not k.builtin:
            def timed(inputs, _impl=impl):
                t0 = clock()
                try:
                    return _impl(inputs)
                finally:
                    spent[0] += clock() - t0
            impl = timed
        kernels.append(Kernel(k.name, k.source, k.num_inputs, k.num_outputs, k.builtin, impl))
    return Executable(exe.functions, exe.constants, kernels, exe.source_map, exe.source_text,
                      exe.source_name, exe.adt_constructor)


class VMRunner:
    """Timed runs of the VM on a copy of the executable whose kernels add their time up."""

    def __init__(self, exe, entry: str):
        from rvmdbg.debug.machine import machine_for
        self.spent = [0.0]
        self.entry = entry
        self.vm = machine_for(exe if getattr(exe, "kind", None) == "minivm"
                              else _timed_copy(exe, self.spent))
        self.warm = False

    def run(self, args, k: int = 1) -> tuple:
        """(seconds, seconds in kernels, dispatches) of `k` runs on fresh copies of args."""
        from rvmdbg.views.context import copy_args as _copy_args
        if not self.warm:
            # the first run builds the VM's fused tables: not representative
            try:
                self.vm.invoke(self.entry, _copy_args(args))
            except Exception:
                pass
            self.warm = True
        copies = [_copy_args(args) for _ in range(k)]
        self.spent[0] = 0.0
        steps = 0
        t0 = time.perf_counter()
        for a in copies:
            try:
                self.vm.invoke(self.entry, a)
            except Exception:
                pass  # a failing program is measured up to its failure
            steps += self.vm.steps
        return time.perf_counter() - t0, self.spent[0], steps


class GraphRunner:
    """The graph executor made (timed: its compile) and then run with profiling."""

    def __init__(self, module, entry: str, rounds: int = 3):
        from rvmdbg.graph import GraphExecutor, lower_to_graph, plan_memory
        self.compile_seconds = float("inf")
        for _ in range(max(1, rounds)):
            t0 = time.perf_counter()
            graph = lower_to_graph(module, entry)
            plan = plan_memory(graph)
            ex = GraphExecutor(graph, plan)
            self.compile_seconds = min(self.compile_seconds, time.perf_counter() - t0)
        self.executor = ex

    def run(self, args, k: int = 1) -> tuple:
        from rvmdbg.views.context import copy_args as _copy_args
        ex = self.executor
        if not ex._verified:
            ex.run(_copy_args(args))  # the first run checks every output: not representative
        copies = [_copy_args(args) for _ in range(k)]
        total = kernel = 0.0
        for a in copies:
            ex.run(a, profile=True)
            total += ex.stats.total_seconds
            kernel += ex.stats.kernel_seconds
        return total, kernel, k * ex.stats.dispatches


def vm_compile_seconds(module, rounds: int = 3) -> float:
    """The VM compiler's time on `module` (0 without one: a saved or MiniVM program)."""
    from rvmdbg.vm.compiler import compile_module
    if module is None:
        return 0.0
    best = float("inf")
    for _ in range(max(1, rounds)):
        t0 = time.perf_counter()
        compile_module(module)
        best = min(best, time.perf_counter() - t0)
    return best


def _best(runner, args, rounds: int, k: int = 1) -> tuple:
    best = None
    for _ in range(max(1, rounds)):
        got = runner.run(args, k)
        if best is None or got[0] < best[0]:
            best = got
    return best


def measure_executors(module, exe, args, entry: str = "main", rounds: int = 3,
                      comparison: ExecutorComparison | None = None) -> dict:
    """{"VM": ..., "graph": ...} ExecutorMeasurements of one run (graph only for a static
    program), each the run with the shortest total of `rounds`, compile times included."""
    cmp = comparison or compare_executors(module, exe, args, entry)
    out: dict = {}
    total, kernel, steps = _best(VMRunner(exe, entry), args, rounds)
    out["VM"] = ExecutorMeasurement("VM", steps, total, kernel, cmp.vm_allocations,
                                    cmp.vm_memory.total, vm_compile_seconds(module, rounds))
    if cmp.static and cmp.graph is not None and cmp.graph_error is None:
        g = GraphRunner(module, entry, rounds)
        total, kernel, dispatches = _best(g, args, rounds)
        out["graph"] = ExecutorMeasurement("graph", dispatches, total, kernel,
                                           g.executor.stats.allocations,
                                           cmp.graph_memory.total, g.compile_seconds)
    return out


__all__ = ["Dispatch", "ExecutorMeasurement", "NodeStorage", "ExecutorComparison", "trace_vm",
           "node_storage", "storage_strip", "compare_executors", "measure_executors",
           "MemoryFigures", "tensor_bytes", "VMRunner", "GraphRunner", "vm_compile_seconds",
           "MAX_STREAM"]


def memory_explanation(cmp: ExecutorComparison) -> list[str]:
    """Where the VM's storage peak and the graph executor's plan differ, from this run's
    figures: what each allocator does, and the figures that show it."""
    out = []
    pool = cmp.vm_pool
    if pool:
        out.append(_("the VM allocates storage as it runs: MemoryPlan kills a storage after "
                     "the last use of its tensors, and the pool hands a freed buffer of the "
                     "same size (whole 4 kB pages) to a later alloc_storage: {reused} of "
                     "{n} requests were served so, and the pool peaked at {peak} B").format(
            reused=pool["reused"], n=pool["reused"] + pool["allocations"],
            peak=pool["peak"]))
    else:
        out.append(_("the VM runs without its pool: each alloc_storage takes new bytes and a "
                     "kill frees them; its peak is the most bytes live at once"))
    if cmp.graph_memory is not None and cmp.peak_vs_plan is not None:
        out.append(_("the graph executor plans every kernel output before running, sharing "
                     "a block between outputs whose lifetimes do not overlap and sizing it for "
                     "the largest: {plan} B. VM peak / graph plan: {ratio:.2f}x").format(
            plan=cmp.graph_memory.working, ratio=cmp.peak_vs_plan))
        out.append(_("the difference: the pool reuses a buffer only for a request of the same "
                     "rounded size and rounds to pages, while the plan packs outputs of any "
                     "size into shared blocks; the VM frees at kills the compiler placed, the "
                     "plan knows every lifetime at once"))
    elif cmp.refusal:
        out.append(_("a dynamic program has no plan to compare with: its tensors' sizes are "
                     "known only when they are made, and the pool allocates them at that size"))
    return out
