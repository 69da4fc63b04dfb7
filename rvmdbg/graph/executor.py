"""The graph executor: runs a planned static graph over one preallocated pool of buffers.

As TVM's graph executor: the storage blocks of the plan are allocated once, when the executor
is made; every entry is a fixed view (its shape and dtype) into the front of its block;
constants are copied into their views once; `run(inputs)` binds the inputs (copied into
their views, or read in place where that is safe: see `GraphExecutor`), calls the kernels in
node order, writing each output into its planned view, and copies the heads out. A
reshape-only kernel does nothing at run time: its output view already aliases its input's
bytes.

Kernels are the same callables the VM calls (`rvmdbg.vm.kernels.compile_kernel`), so the two
executors differ only in dispatch and memory handling. A kernel returns a fresh array, which
is copied into the planned view (`np.copyto`); the plan guarantees the view's block is not
read by the kernel and holds no other live tensor.

`stats` counts what a run did: kernel dispatches, time inside kernels (when profiling), total
time, copies, and the pool allocations (once, at construction) and their bytes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from rvmdbg.graph.graph import CONSTANT, INPUT, Graph, quote_span
from rvmdbg.i18n import _
from rvmdbg.graph.plan import MemoryPlan, plan_memory
from rvmdbg.limits import DEFAULT_LIMITS, Limits
from rvmdbg.scalars import to_runtime
from rvmdbg.vm.kernels import NoRoom
from rvmdbg.values import ADTValue, format_value, make_tuple

__all__ = ["GraphExecutor", "GraphRunError", "GraphRunStats"]


class GraphRunError(Exception):
    """A run that failed: bad inputs, a kernel error, or a pool over the byte limit."""

    def __init__(self, message: str, span=None, limit: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.limit = limit

    def format(self, source=None) -> str:
        return "\n".join([f"error: {self.message}", *quote_span(self.span, source)])


@dataclass
class GraphRunStats:
    """What the executor did: per run, and since it was made."""

    runs: int = 0
    dispatches: int = 0            # kernel calls in the last run
    nops: int = 0                  # reshape-only kernels skipped in the last run
    kernel_seconds: float = 0.0    # time inside kernels in the last run (profiled runs only)
    total_seconds: float = 0.0     # time of the last run
    copies: int = 0                # inputs copied in plus results copied out, last run
    allocations: int = 0           # pool blocks allocated (once, at construction)
    pool_bytes: int = 0
    peak_bytes: int = 0            # the pool is allocated whole: peak == pool

    def summary(self) -> str:
        share = (self.kernel_seconds / self.total_seconds * 100) if self.total_seconds else 0.0
        return (f"dispatches {self.dispatches} (+{self.nops} reshape no-ops), "
                f"time {self.total_seconds * 1e6:.1f} us, in kernels "
                f"{self.kernel_seconds * 1e6:.1f} us ({share:.0f}%), allocations "
                f"{self.allocations} ({self.pool_bytes} bytes), peak {self.peak_bytes} bytes")


def _view(block: np.ndarray, shape: tuple, dtype: str) -> np.ndarray:
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    return block[:nbytes].view(dt).reshape(shape)


def _regroup(views: list, forms: tuple) -> list:
    """Kernel arguments from flat input views: a tuple parameter gets a nested tuple."""
    out, pos = [], 0

    def take(form):
        nonlocal pos
        if form is None:
            pos += 1
            return views[pos - 1]
        return tuple(take(f) for f in form)
    for form in forms:
        out.append(take(form))
    return out


class GraphExecutor:
    """Runs `graph` with the storage of `plan` (TVM's plan when None).

    With `zero_copy` (TVM's `set_input_zero_copy`), kernels read the caller's input arrays
    directly, except an input a reshape-only kernel aliases or a kernel takes inside a tuple:
    those are copied into their planned block (TVM's `set_input`), as all are without it."""

    def __init__(self, graph: Graph, plan: MemoryPlan | None = None,
                 limits: Limits | None = None, zero_copy: bool = True):
        from rvmdbg.vm.kernels import compile_kernel
        self.graph = graph
        self.plan = plan if plan is not None else plan_memory(graph)
        self.plan.check(graph)  # never run a plan that would let live tensors share memory
        limits = limits or DEFAULT_LIMITS
        if self.plan.pool_bytes > limits.max_bytes:
            raise GraphRunError(_("the memory pool needs {n} bytes, over the limit of {limit} "
                                  "(--max-bytes)").format(n=self.plan.pool_bytes,
                                                          limit=limits.max_bytes),
                                limit="max_bytes")
        self.stats = GraphRunStats()
        # the pool: one buffer per storage id, allocated once
        self.blocks = [np.empty(size, dtype=np.uint8) for size in self.plan.block_sizes]
        self.stats.allocations = len(self.blocks)
        self.stats.pool_bytes = self.stats.peak_bytes = self.plan.pool_bytes
        sids = self.plan.storage_ids
        self.views = [_view(self.blocks[sids[e]], graph.shapes[e], graph.dtypes[e])
                      for e in range(graph.num_entries)]
        self.input_views = []
        impls: dict = {}
        steps = []
        self.nops = 0
        # where each input entry is read: (list, index) slots a zero-copy run rebinds
        slots: dict = {e: [] for e in (graph.entry_id(n) for n in graph.input_nodes)}
        # an input a reshape aliases, or a kernel takes inside a tuple, is copied instead
        must_copy = set(self.plan.aliased.values())
        for nid, node in enumerate(graph.nodes):
            base = graph.entry_id(nid)
            if node.kind == INPUT:
                self.input_views.append((node.name, self.views[base], node.span, base))
            elif node.kind == CONSTANT:
                np.copyto(self.views[base], node.value)
            elif node.reshape_only:
                self.nops += 1  # the output view already shows the input's bytes reshaped
            else:
                impl = impls.get(node.func_name)
                if impl is None:
                    impl = impls[node.func_name] = compile_kernel(node.function)
                outs_bytes = sum(self.views[base + i].nbytes for i in range(node.num_outputs))
                impl = self._within_limit(impl, node, outs_bytes, limits.max_bytes)
                ins = [self.views[graph.entry_id(s, i)] for s, i in node.inputs]
                entries = [graph.entry_id(s, i) for s, i in node.inputs]
                if any(f is not None for f in node.arg_shape):
                    ins = _regroup(ins, node.arg_shape)
                    must_copy.update(e for e in entries if e in slots)
                else:
                    for pos, e in enumerate(entries):
                        if e in slots:
                            slots[e].append((ins, pos))
                outs = tuple(self.views[base + i] for i in range(node.num_outputs))
                steps.append((impl, ins, outs[0] if len(outs) == 1 else outs, nid))
        self.steps = steps
        self._verified = False
        self.head_views = [self.views[graph.entry_id(n, i)] for n, i in graph.heads]
        for k, (n, i) in enumerate(graph.heads):
            e = graph.entry_id(n, i)
            if e in slots:
                slots[e].append((self.head_views, k))
        self.zero_copy = zero_copy
        self._slots = [None if (not zero_copy or e in must_copy) else slots[e]
                       for _, _, _, e in self.input_views]

    def _within_limit(self, impl, node, outs_bytes: int, max_bytes: int):
        """`impl`, checked against --max-bytes as the VM checks a fused kernel: beside the
        pool, the kernel holds its intermediates (their peak, known from the static types)
        and the fresh result it returns before that is copied into the pool. Over the limit
        is a GraphRunError now, before anything runs; a kernel whose intermediates have shapes
        known only at run time checks each operator before it allocates."""
        room = max_bytes - self.plan.pool_bytes - outs_bytes
        held = getattr(impl, "intermediate_bytes", 0)
        if held is not None:
            if held > room:
                raise self._over(node, held, held + outs_bytes + self.plan.pool_bytes,
                                 max_bytes)
            return impl
        run_within = getattr(impl, "run_within", None)
        if run_within is None:
            return impl

        def checked(inputs):
            try:
                return run_within(inputs, room)
            except NoRoom as short:
                raise self._over(node, short.needed,
                                 short.needed + outs_bytes + self.plan.pool_bytes,
                                 max_bytes, short.op) from None
        return checked

    def _over(self, node, held: int, total: int, max_bytes: int, op: str | None = None):
        if op:
            text = _("kernel {kernel} would hold {n} bytes of intermediates at {op}, bringing "
                     "memory to {total} bytes with the pool (limit max_bytes={limit}; raise "
                     "it with --max-bytes)")
        else:
            text = _("kernel {kernel} would hold {n} bytes of intermediates, bringing memory "
                     "to {total} bytes with the pool (limit max_bytes={limit}; raise it with "
                     "--max-bytes)")
        return GraphRunError(text.format(kernel=node.func_name, n=held, op=op, total=total,
                                         limit=max_bytes), node.span, limit="max_bytes")

    # ---- running ----

    def set_inputs(self, inputs) -> None:
        """Copy the entry's arguments into their planned buffers (tuples flatten)."""
        flat = []
        expected = len(self.graph.input_forms)
        if len(inputs) != expected:
            raise GraphRunError(_("@{func} takes {n} arguments, got {m}").format(
                func=self.graph.entry, n=expected, m=len(inputs)))
        for value, form in zip(inputs, self.graph.input_forms):
            flat.extend(_flatten_value(value, form))
        copies = 0
        for (name, view, span, _kind), value, slots in zip(self.input_views, flat, self._slots):
            arr = np.asarray(value)
            if arr.shape != view.shape or arr.dtype != view.dtype:
                raise GraphRunError(_("input %{var} must be {wanted}, got {got}").format(
                    var=name, wanted=f"[{', '.join(map(str, view.shape))}] {view.dtype}",
                    got=f"[{', '.join(map(str, arr.shape))}] {arr.dtype}"), span)
            if slots is None:
                np.copyto(view, arr)
                copies += 1
            else:
                # kernels never write their inputs: they may read the caller's array itself
                for lst, pos in slots:
                    lst[pos] = arr
        self.stats.copies = copies

    def run(self, inputs=(), profile: bool = False):
        """The entry's result for `inputs` (fresh arrays, not views of the pool)."""
        start = time.perf_counter()
        self.set_inputs(inputs)
        kernel_time = 0.0
        clock = time.perf_counter
        copyto = np.copyto
        step = None
        try:
            if not self._verified:
                # the first run checks every kernel's outputs against the graph's entries
                # (np.copyto would broadcast or cast a wrong one silently)
                for step in self.steps:
                    impl, ins, out, nid = step
                    t0 = clock()
                    res = impl(ins)
                    kernel_time += clock() - t0
                    self._check_outputs(nid, out, res)
                    if type(out) is tuple:
                        for view, r in zip(out, res):
                            copyto(view, r)
                    else:
                        copyto(out, res)
                self._verified = True
            elif profile:
                for step in self.steps:
                    impl, ins, out, _ = step
                    t0 = clock()
                    res = impl(ins)
                    kernel_time += clock() - t0
                    if type(out) is tuple:
                        for view, r in zip(out, res):
                            copyto(view, r)
                    else:
                        copyto(out, res)
            else:
                for step in self.steps:
                    impl, ins, out, _ = step
                    if type(out) is tuple:
                        for view, r in zip(out, impl(ins)):
                            copyto(view, r)
                    else:
                        copyto(out, impl(ins))
        except GraphRunError:
            raise
        except Exception as exc:
            raise self._kernel_failure(step, exc) from None
        result = self._result()
        stats = self.stats
        stats.runs += 1
        stats.dispatches = len(self.steps)
        stats.nops = self.nops
        stats.kernel_seconds = kernel_time
        stats.copies += len(self.head_views)
        stats.total_seconds = time.perf_counter() - start
        return result

    def _check_outputs(self, nid: int, out, res) -> None:
        views = out if type(out) is tuple else (out,)
        results = tuple(res) if type(out) is tuple and isinstance(res, (tuple, list)) else (res,)
        name = self.graph.nodes[nid].func_name
        if len(results) != len(views):
            raise GraphRunError(_("kernel {kernel} returned {n} outputs, expected {m}").format(
                kernel=name, n=len(results), m=len(views)), self.graph.nodes[nid].span)
        for view, r in zip(views, results):
            r = np.asarray(r)
            if r.shape != view.shape or r.dtype != view.dtype:
                raise GraphRunError(_("kernel {kernel} produced {made} for an entry planned as "
                                      "{planned}").format(
                    kernel=name, made=f"[{', '.join(map(str, r.shape))}] {r.dtype}",
                    planned=f"[{', '.join(map(str, view.shape))}] {view.dtype}"),
                    self.graph.nodes[nid].span)

    def _result(self):
        # runtime values, as the VM's: a 0-d result as a NumPy scalar (rvmdbg/scalars.py)
        outs = [to_runtime(np.array(v, copy=True)) for v in self.head_views]
        form = self.graph.result_form
        if form is None:
            return outs[0]

        def build(f):
            if isinstance(f, int):
                return outs[f]
            return make_tuple(build(g) for g in f)
        return build(form)

    def _kernel_failure(self, step, exc: Exception) -> GraphRunError:
        if step is None:
            return GraphRunError(_("graph executor failed: {error}").format(error=exc))
        nid = step[3]
        node = self.graph.nodes[nid]
        where = " " + _("at {place}").format(place=node.span) if node.span is not None else ""
        msg = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        shapes = []
        for s, i in node.inputs:
            eid = self.graph.entry_id(s, i)
            shapes.append(self.graph.entry_text(eid))
        return GraphRunError(_("kernel {kernel} (node {nid}{where}) failed on ({shapes}): "
                               "{message}").format(kernel=node.func_name, nid=nid, where=where,
                                                   shapes=", ".join(shapes), message=msg),
                             node.span)


def _flatten_value(value, form) -> list:
    if form is None:
        if isinstance(value, ADTValue):
            raise GraphRunError(_("expected a tensor, got {value}").format(
                value=format_value(value)))
        return [value]
    fields = value.fields if isinstance(value, ADTValue) else tuple(value)
    if len(fields) != len(form):
        raise GraphRunError(_("expected a tuple of {n} fields, got {m}").format(
            n=len(form), m=len(fields)))
    return [leaf for v, f in zip(fields, form) for leaf in _flatten_value(v, f)]
