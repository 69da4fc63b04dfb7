"""The reference interpreter: evaluates a type-checked Relay module directly, without passes.

It is the oracle the VM is tested against, so it is written for plain correctness first and
speed second. Each expression is compiled once into a Python closure `thunk(env) -> value`
(no per-node type dispatch at run time); `env` is a dict keyed by `Var` objects (binders are
unique, so one flat dict per function activation is enough) and, for nodes a graph binding
shares (`%0 = e;` used twice), by the node itself, so a shared node is evaluated once per
activation as the VM's A-normal form evaluates it once.

Relay calls nest Python calls, so evaluation runs in a worker thread with a large stack and a
raised recursion limit (`call_with_deep_stack`); Relay call depth is counted against
`Limits.max_depth` and calls (function, constructor and operator applications) against
`Limits.max_steps`. Running out of the Python stack before `max_depth` is reported as the same
kind of limit error, never a crash.
"""
from __future__ import annotations

import gc
import sys
import threading
import weakref
from pathlib import Path

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.wording import picture_controls
from rvmdbg.heap import keep_freed_memory
from rvmdbg.limits import (
    DEEP_STACK_BYTES, DEFAULT_LIMITS, FRAME_FLOOR, INTERPRETER_FRAME_BYTES, Limits,
    address_room,
)
from rvmdbg.scalars import SCALAR_TYPES, scalar_op, to_runtime
from rvmdbg.relay.ast import (
    Call, Constant, ConstructorRef, Function, GlobalVar, If, Let, Match, Module, OpRef,
    PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate, RefRead, RefWrite,
    Tuple, TupleGetItem, Var, children, pattern_vars,
)
from rvmdbg.relay.diagnostics import Source, Span
from rvmdbg.relay.dialect import (
    ALLOC_STORAGE, CALL_LOWERED, DEVICE_OPS, KILL, MEMORY_OPS, InterpretedStorage,
)
from rvmdbg.relay.types import TensorType
from rvmdbg.values import ADTValue, RefCell, format_value, tensor_line
from rvmdbg.i18n import _

__all__ = ["Interpreter", "InterpreterError", "Closure", "ConstructorValue", "OpValue",
           "call_with_deep_stack"]

UNIT_VALUE = ADTValue(0, None, ())
_MISSING = object()
_FRAMES_SHOWN = 8  # call-stack lines an error prints before eliding the middle


# ------------------------------------------------------------------------------------ errors

class InterpreterError(Exception):
    """A run-time failure located at a Relay span.

    `limit` names the limit hit (`"max_steps"`, `"max_depth"`, `"max_bytes"`) or is None;
    `frames` is the Relay call stack, innermost first, as (function name, call-site span).
    """

    def __init__(self, message: str, span: Span | None = None, limit: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.limit = limit
        self.frames: list[tuple[str, Span | None]] = []
        self.source: Source | None = None

    @property
    def function(self) -> str | None:
        """The global or closure the failure happened in."""
        return self.frames[0][0] if self.frames else None

    def format(self, source: Source | None = None) -> str:
        """`FILE:LINE:COL: error: MESSAGE (in @f)`, the quoted line with a caret, the call stack."""
        fn = " " + _("(in @{func})").format(func=self.function) if self.function else ""
        sp = self.span
        if sp is None:
            return f"error: {self.message}{fn}" + self._stack_text()
        out = [f"{sp.file}:{sp.line}:{sp.col}: error: {self.message}{fn}"]
        text = _source_line(sp, source or self.source)
        if text is not None:
            gutter = f"{sp.line:>4} | "
            text = text.expandtabs(1)
            out.append(gutter + text)
            width = (sp.end_col - sp.col) if sp.end_line == sp.line else len(text) - sp.col + 1
            out.append(" " * (len(gutter) + sp.col - 1) + "^" + "~" * (max(1, width) - 1))
        return "\n".join(out) + self._stack_text()

    def _stack_text(self) -> str:
        # frames[i] holds the call site of frame i, i.e. a line in its caller frames[i + 1]
        calls = [(self.frames[i + 1][0] if i + 1 < len(self.frames) else None, site)
                 for i, (_, site) in enumerate(self.frames)]
        calls = [(caller, site) for caller, site in calls if caller is not None and site]
        if not calls:
            return ""
        lines: list[str] = []
        i = 0
        while i < len(calls):  # a recursion repeats one call site: print it once with a count
            j = i
            while j + 1 < len(calls) and calls[j + 1] == calls[i]:
                j += 1
            caller, site = calls[i]
            lines.append("  " + (_("called from @{func} at {site} ({n} times)") if j > i else
                                 _("called from @{func} at {site}")).format(
                func=caller, site=site, n=j - i + 1))
            i = j + 1
        if len(lines) > _FRAMES_SHOWN:
            half = _FRAMES_SHOWN // 2
            lines = lines[:half] + ["  " + _("... {n} more ...").format(
                n=len(lines) - 2 * half)] + lines[-half:]
        return "\n" + "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


_file_cache: dict[str, Source | None] = {}


def _source_line(span: Span, source: Source | None) -> str | None:
    """The text of span's first line: from `source` when it is that file, else from disk
    (errors inside prelude functions point into the prelude file)."""
    if source is None or source.name != span.file:
        if span.file not in _file_cache:
            try:
                _file_cache[span.file] = Source(span.file, Path(span.file).read_text("utf-8"))
            except (OSError, UnicodeDecodeError, ValueError):
                _file_cache[span.file] = None
        source = _file_cache[span.file]
        if source is None:
            return None
    if 1 <= span.line <= len(source.lines):
        return picture_controls(source.line_text(span.line))
    return None


def _op_message(op: str, message: str) -> str:
    """An operator's message (already in the language in use) after the operator's name."""
    return f"{op}: {message}"


def _limit_error(name: str, value: int, what: str, span) -> InterpreterError:
    return InterpreterError(_("{what} (raise with {flag})").format(
        what=what, flag=Limits.flag_for(name)), span, limit=name)


# ------------------------------------------------------------------------------------ values

class Closure:
    """A function value: compiled code plus the values of its free variables.

    A let-bound recursive function (`let %f = fn ... %f(...)`) names itself through `self_var`,
    bound on each call rather than stored in `env`, so closures never form reference cycles."""

    __slots__ = ("name", "code", "env", "self_var")

    def __init__(self, name: str, code: "_Code", env: dict, self_var: Var | None = None):
        self.name = name
        self.code = code
        self.env = env
        self.self_var = self_var

    def __repr__(self) -> str:
        return f"<closure @{self.name}>"


class ConstructorValue:
    """A constructor used as a function value (`@map(Some, %l)`)."""

    __slots__ = ("name", "tag", "arity")

    def __init__(self, name: str, tag: int, arity: int):
        self.name = name
        self.tag = tag
        self.arity = arity

    def __repr__(self) -> str:
        return f"<constructor {self.name}>"


class OpValue:
    """A primitive operator used as a function value."""

    __slots__ = ("name", "kernel", "attrs")

    def __init__(self, name: str, kernel, attrs):
        self.name = name
        self.kernel = kernel
        self.attrs = attrs

    def __repr__(self) -> str:
        return f"<operator {self.name}>"


class _Code:
    """A compiled function: parameters, body thunk, and the free variables a closure captures."""

    __slots__ = ("name", "params", "body", "free_vars", "span")

    def __init__(self, name: str, params: list, span):
        self.name = name
        self.params = params
        self.body = None
        self.free_vars: tuple = ()
        self.span = span


def _fn_name(fn: Function) -> str:
    sp = fn.span
    return f"fn@{sp.line}:{sp.col}" if sp is not None else "fn"


def _short(v, limit: int = 120) -> str:
    if type(v) is np.ndarray:
        return tensor_line(v, limit)
    text = format_value(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------------------------ the stack

# Bytes of C stack allowed per unit of Python's recursion limit: the worst paths measured (nested
# format_value, json.dumps, values_equal) crash at 128 and are safe at 256; 512 leaves a margin.
_STACK_BYTES_PER_FRAME = 512
_STACK_SIZES = (DEEP_STACK_BYTES, 512 << 20, 64 << 20)
_deep = threading.local()
_deep_lock = threading.Lock()


def call_with_deep_stack(fn, *args, on_interrupt=None):
    """Run fn(*args) in a worker thread with a large stack and a matching recursion limit,
    returning its result or re-raising its exception here. Python's RecursionError inside
    becomes a clean exception instead of a crash. When Ctrl-C arrives while waiting,
    `on_interrupt()` is called (to make the worker stop early) before KeyboardInterrupt goes on.
    The recursion limit is process-wide, so such runs take a lock: one at a time per process."""
    if getattr(_deep, "active", False):
        return fn(*args)  # already on a deep stack
    outcome: list = []

    def work():
        _deep.active = True
        try:
            outcome.append((True, fn(*args)))
        except BaseException as e:  # handed to the caller's thread, which re-raises it
            outcome.append((False, e))

    with _deep_lock:
        old_limit = sys.getrecursionlimit()
        thread = None
        room = address_room()
        for size in _STACK_SIZES:
            if room is not None and size > room // 2 and size != _STACK_SIZES[-1]:
                continue  # under an address-space cap: leave room for the heap and threads
            try:
                old_size = threading.stack_size(size)
            except (ValueError, RuntimeError):
                continue
            try:
                thread = threading.Thread(target=work, name="rvmdbg-deep", daemon=True)
                sys.setrecursionlimit(size // _STACK_BYTES_PER_FRAME)
                thread.start()
                break
            except (RuntimeError, MemoryError):
                thread = None
                sys.setrecursionlimit(old_limit)
            finally:
                threading.stack_size(old_size)
        if thread is None:
            return fn(*args)  # no big thread possible here: run with the ordinary stack
        try:
            while thread.is_alive():
                try:
                    thread.join()
                except KeyboardInterrupt:
                    if on_interrupt is not None:
                        on_interrupt()
                        thread.join(5.0)
                    raise
        finally:
            sys.setrecursionlimit(old_limit)
    ok, value = outcome[0]
    if ok:
        return value
    raise value


# ------------------------------------------------------------------------------------ memory

class LiveTensors:
    """The bytes of the tensors the program's operators made that are still alive, for
    `--max-bytes`. The interpreter keeps a value exactly as long as the program can reach it
    (environments, closures, ADTs and reference cells hold it; nothing else does), so
    Python's own lifetime of the array is the tensor's: each is followed by a weak
    reference that gives its bytes back when it is freed."""

    __slots__ = ("bytes", "_held")

    def __init__(self):
        self.bytes = 0
        self._held: dict[int, tuple] = {}   # id(weak reference) -> (it, bytes)

    def add(self, a) -> None:
        """Count `a`, a kernel's output, if it owns its memory (a view shares its base's)."""
        if type(a) is not np.ndarray or a.base is not None:
            return
        n = a.nbytes
        ref = weakref.ref(a, self._drop)
        self._held[id(ref)] = (ref, n)
        self.bytes += n

    def _drop(self, ref) -> None:
        _, n = self._held.pop(id(ref))
        self.bytes -= n


# ------------------------------------------------------------------------------------ interpreter

class Interpreter:
    """Evaluates functions of a type-checked module. Reusable: each `run` starts afresh."""

    def __init__(self, mod: Module, limits: Limits | None = None):
        keep_freed_memory()   # freed arrays stay mapped for the next kernels (rvmdbg.heap)
        self.mod = mod
        self.limits = limits or DEFAULT_LIMITS
        self._codes: dict[str, _Code] | None = None
        self._global_closures: dict[str, Closure] = {}
        self._thunks: dict[int, object] = {}
        self._shared: set[int] = set()
        self._free: dict[int, tuple] = {}
        self._ops = None
        self._depth = 0
        self._budget = 0
        self._interrupted = False
        self._live = LiveTensors()

    # ---- running

    def run(self, entry: str = "main", args=()) -> object:
        """Call global `entry` with runtime values `args` and return its result."""
        return call_with_deep_stack(self._run, entry, list(args), on_interrupt=self.interrupt)

    def call(self, fn, args) -> object:
        """Apply a function value this interpreter made (closure, constructor, op) to args."""
        return call_with_deep_stack(self._call_value, fn, list(args),
                                    on_interrupt=self.interrupt)

    def interrupt(self) -> None:
        """Make a run in progress stop at its next call (safe from another thread)."""
        self._interrupted = True
        self._budget = 0

    def _run(self, entry: str, args: list):
        self._prepare()
        code = self._codes.get(entry)
        if code is None:
            known = ", ".join("@" + n for n in self._codes) or _("none")
            raise InterpreterError(_("no function @{func} in this program (functions: "
                                     "{known})").format(func=entry, known=known))
        if len(args) != len(code.params):
            raise InterpreterError(_("@{func} takes {n} argument(s), got {m}").format(
                func=entry, n=len(code.params), m=len(args)), code.span)
        env = dict(zip(code.params, [to_runtime(a) for a in args]))
        return self._guarded(lambda: self._enter(code, env, code.span))

    def _call_value(self, fn, args: list):
        self._prepare()
        return self._guarded(lambda: self._apply(fn, args, None))

    def _guarded(self, go):
        self._depth = 0
        self._interrupted = False
        self._budget = self.limits.max_steps
        self._live = LiveTensors()
        # The interpreter makes no reference cycles, and collections over a deep stack of live
        # activations are slow (they dominated unwinding from a depth-limit error): pause them.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        # Scalar arithmetic wraps around without NumPy's overflow warnings (`rvmdbg.scalars`).
        errors = np.errstate(all="ignore")
        errors.__enter__()
        try:
            return go()
        except RecursionError:
            raise self._stack_exhausted() from None
        except MemoryError:
            raise InterpreterError(_("out of memory while evaluating the program"),
                                   limit="max_bytes") from None
        except InterpreterError as e:
            e.source = self.mod.source
            raise
        finally:
            errors.__exit__(None, None, None)
            self._depth = 0
            if gc_was_enabled:
                gc.enable()

    def _stack_exhausted(self, span=None) -> InterpreterError:
        depth = self._depth
        e = InterpreterError(
            _("call depth limit exceeded: the interpreter ran out of stack at call depth "
              "{depth}, below --max-depth {limit} (the VM has no such bound)").format(
                depth=depth, limit=self.limits.max_depth),
            span, limit="max_depth")
        e.source = self.mod.source
        return e

    def _out_of_steps(self, span) -> InterpreterError:
        if self._interrupted:
            return InterpreterError(_("interrupted"), span)
        n = self.limits.max_steps
        return _limit_error("max_steps", n, _("step limit {n} exceeded").format(n=n), span)

    def _depth_error(self, span) -> InterpreterError:
        n = self.limits.max_depth
        if self._depth + 1 > n:
            return _limit_error("max_depth", n, _("call depth limit {n} exceeded").format(n=n),
                                span)
        return _limit_error("max_bytes", self.limits.max_bytes, _(
            "call depth {depth}: {depth} activations of {size} bytes with {live} bytes of live "
            "tensors would pass the limit of {limit} bytes").format(
                depth=self._depth + 1, size=INTERPRETER_FRAME_BYTES, live=self._live.bytes,
                limit=self.limits.max_bytes), span)

    # ---- applying function values

    def _enter(self, code: _Code, env: dict, span):
        """Run code's body in env: the one place calls are counted (inlined in call_global,
        the hot path of calls to globals)."""
        depth = self._depth + 1
        if depth > self.limits.max_depth or (
                depth * INTERPRETER_FRAME_BYTES > FRAME_FLOOR and
                depth * INTERPRETER_FRAME_BYTES > self.limits.max_bytes - self._live.bytes):
            raise self._depth_error(span)
        self._budget -= 1
        if self._budget < 0:
            raise self._out_of_steps(span)
        self._depth = depth
        try:
            result = code.body(env)
        except InterpreterError as e:
            e.frames.append((code.name, span))
            raise e.with_traceback(None)  # a Relay error needs no Python traceback
        except RecursionError:
            # out of Python stack: retried one frame up until there is room to build the error
            raise self._stack_exhausted(span) from None
        self._depth = depth - 1
        return result

    def _apply(self, f, args: list, span):
        if type(f) is Closure:
            code = f.code
            if len(args) != len(code.params):
                raise InterpreterError(_("@{func} takes {n} argument(s), got {m}").format(
                    func=f.name, n=len(code.params), m=len(args)), span)
            env = dict(f.env)
            if f.self_var is not None:
                env[f.self_var] = f
            for p, a in zip(code.params, args):
                env[p] = a
            return self._enter(code, env, span)
        self._budget -= 1
        if self._budget < 0:
            raise self._out_of_steps(span)
        if type(f) is ConstructorValue:
            if len(args) != f.arity:
                raise InterpreterError(_("constructor {name} takes {n} argument(s), got "
                                         "{m}").format(name=f.name, n=f.arity, m=len(args)),
                                       span)
            return ADTValue(f.tag, f.name, args)
        if type(f) is OpValue:
            return self._run_kernel(f.name, f.kernel, args, f.attrs, span)
        raise InterpreterError(_("cannot call {value}: not a function").format(value=_short(f)),
                               span)

    def _run_kernel(self, name, kernel, args, attrs, span):
        args = [_kernel_input(a) for a in args]
        try:
            out = kernel(args, attrs)
        except self._ops.KernelError as e:
            # most kernel messages already start with the operator's name
            text = e.message if e.message.startswith(f"{name}:") else f"{name}: {e.message}"
            raise InterpreterError(text, span) from None
        if type(out) is tuple:
            return ADTValue(0, None, tuple(map(to_runtime, out)))
        return to_runtime(out)

    # ---- compiling

    def _prepare(self) -> None:
        if self._codes is not None:
            return
        from rvmdbg.relay import ops  # late: the registry is large
        self._ops = ops
        self._shared = _shared_nodes(self.mod)
        codes = {}
        for name, fn in self.mod.functions.items():
            codes[name] = _Code(name, list(fn.params), fn.span)
        self._codes = codes
        for name, fn in self.mod.functions.items():
            codes[name].body = self._compile(fn.body)

    def _global_closure(self, name: str, span) -> Closure:
        clo = self._global_closures.get(name)
        if clo is None:
            code = self._codes.get(name)
            if code is None:
                raise InterpreterError(_("unknown global @{func}").format(func=name), span)
            clo = self._global_closures[name] = Closure(name, code, {})
        return clo

    def _compile(self, e):
        key = id(e)
        thunk = self._thunks.get(key)
        if thunk is not None:
            return thunk
        method = getattr(self, "_compile_" + type(e).__name__, None)
        if method is None:
            raise InterpreterError(_("cannot evaluate a {kind} node").format(
                kind=type(e).__name__), e.span)
        thunk = method(e)
        if key in self._shared and not isinstance(e, (Var, Constant, GlobalVar, OpRef)):
            thunk = _memoized(thunk, e)
        self._thunks[key] = thunk
        return thunk

    def _compile_Constant(self, e: Constant):
        data = to_runtime(e.data)
        return lambda env: data

    def _compile_Var(self, v: Var):
        return lambda env: env[v]

    def _compile_GlobalVar(self, g: GlobalVar):
        clo = self._global_closure(g.name, g.span)
        return lambda env: clo

    def _constructor(self, ref: ConstructorRef):
        c = ref.constructor or self.mod.constructors.get(ref.name)
        if c is None:
            raise InterpreterError(_("unknown constructor {name}").format(name=ref.name),
                                   ref.span)
        return c

    def _compile_ConstructorRef(self, ref: ConstructorRef):
        c = self._constructor(ref)
        if not c.inputs:
            value = ADTValue(c.tag, c.name, ())
            return lambda env: value
        value = ConstructorValue(c.name, c.tag, len(c.inputs))
        return lambda env: value

    def _op(self, ref: OpRef, attrs):
        op = self._ops.get_op(ref.name)
        if op is None:
            raise InterpreterError(_("unknown operator {op}").format(op=ref.name), ref.span)
        try:
            return op, self._ops.normalize_attrs(op, attrs or {})
        except self._ops.OpError as e:
            raise InterpreterError(_op_message(ref.name, e.message), ref.span) from None

    def _compile_OpRef(self, ref: OpRef):
        op, attrs = self._op(ref, {})
        value = OpValue(op.name, op.kernel, attrs)
        return lambda env: value

    def _compile_Function(self, fn: Function, self_var: Var | None = None):
        code = _Code(_fn_name(fn), list(fn.params), fn.span)
        code.body = self._compile(fn.body)
        free = tuple(v for v in self._free_vars(fn) if v is not self_var)
        code.free_vars = free
        name = code.name

        def make_closure(env):
            return Closure(name, code, {v: env[v] for v in free}, self_var)
        return make_closure

    def _free_vars(self, fn: Function) -> tuple:
        free = self._free.get(id(fn))
        if free is None:
            free = self._free[id(fn)] = _free_vars(fn)
        return free

    def _compile_Let(self, e: Let):
        # a chain of lets runs in one loop: long let sequences cost no Python stack
        binds = []
        node = e
        while isinstance(node, Let) and (not binds or id(node) not in self._shared):
            value = node.value
            if isinstance(value, Function) and node.var in self._free_vars(value):
                thunk = self._compile_Function(value, self_var=node.var)
            else:
                thunk = self._compile(value)
            binds.append((node.var, thunk))
            node = node.body
        body = self._compile(node)
        if len(binds) == 1:
            (var, value), = binds

            def let1(env):
                env[var] = value(env)
                return body(env)
            return let1

        def let_chain(env):
            for var, value in binds:
                env[var] = value(env)
            return body(env)
        return let_chain

    def _compile_If(self, e: If):
        cond = self._compile(e.cond)
        then = self._compile(e.true_branch)
        other = self._compile(e.false_branch)

        def if_(env):
            if cond(env):
                return then(env)
            return other(env)
        return if_

    def _compile_Tuple(self, e: Tuple):
        fields = [self._compile(f) for f in e.fields]
        if not fields:
            return lambda env: UNIT_VALUE
        if len(fields) == 2:
            f0, f1 = fields
            return lambda env: ADTValue(0, None, (f0(env), f1(env)))
        return lambda env: ADTValue(0, None, [f(env) for f in fields])

    def _compile_TupleGetItem(self, e: TupleGetItem):
        tup = self._compile(e.tuple_value)
        index = e.index
        return lambda env: tup(env).fields[index]

    def _compile_RefCreate(self, e: RefCreate):
        value = self._compile(e.value)
        return lambda env: RefCell(value(env))

    def _compile_RefRead(self, e: RefRead):
        ref = self._compile(e.ref)
        return lambda env: ref(env).value

    def _compile_RefWrite(self, e: RefWrite):
        ref = self._compile(e.ref)
        value = self._compile(e.value)

        def ref_write(env):
            cell = ref(env)
            cell.value = value(env)
            return UNIT_VALUE
        return ref_write

    def _compile_Match(self, e: Match):
        data = self._compile(e.data)
        clauses = [(_compile_pattern(c.lhs, self.mod), self._compile(c.rhs)) for c in e.clauses]
        keyword = "match" if e.complete else "match?"
        span = e.span

        def match(env):
            value = data(env)
            for matches, rhs in clauses:
                if matches(value, env):
                    return rhs(env)
            raise InterpreterError(_("{keyword} found no matching clause for {value}").format(
                keyword=keyword, value=_short(value)), span)
        return match

    def _compile_Call(self, e: Call):
        op = e.op
        args = [self._compile(a) for a in e.args]
        span = e.span
        if isinstance(op, OpRef):
            if op.name in DEVICE_OPS:
                return args[0]  # one device: on_device and device_copy pass the value on
            if op.name == CALL_LOWERED:
                # call_lowered(@f, (a, b)): @f applied to the tuple's fields
                callee, packed, apply = args[0], args[1], self._apply
                return lambda env: apply(callee(env), list(packed(env).fields), span)
            if op.name == KILL:
                # freeing is the VM's business: here a kill only evaluates its operand
                return lambda env, a=args[0]: (a(env), UNIT_VALUE)[1]
            if op.name == ALLOC_STORAGE:
                # storage nothing is laid out in (TVM's dead-code tests allocate and kill it)
                size = args[0]
                rest = args[1:]

                def storage(env, size=size, rest=rest):
                    n = int(np.asarray(size(env)).item())
                    for a in rest:
                        a(env)
                    return InterpretedStorage(n)
                return storage
            if op.name in MEMORY_OPS:
                raise InterpreterError(_("{op}: the memory dialect of a late pass stage runs on "
                                         "the VM only (--executor vm)").format(op=op.name), span)
            return self._compile_op_call(e, args)
        if isinstance(op, ConstructorRef):
            c = self._constructor(op)
            if len(args) != len(c.inputs):
                raise InterpreterError(_("constructor {name} takes {n} argument(s), got "
                                         "{m}").format(name=c.name, n=len(c.inputs),
                                                       m=len(args)), span)
            tag, con = c.tag, c.name
            if not args:
                value = ADTValue(tag, con, ())
                return lambda env: value
            if len(args) == 2:
                a0, a1 = args
                return lambda env: ADTValue(tag, con, (a0(env), a1(env)))
            return lambda env: ADTValue(tag, con, [a(env) for a in args])
        if isinstance(op, GlobalVar):
            return self._compile_global_call(op, args, span)
        return self._compile_value_call(self._compile(op), args, span)

    def _compile_global_call(self, g: GlobalVar, args: list, span):
        code = self._codes.get(g.name)
        if code is None:
            raise InterpreterError(_("unknown global @{func}").format(func=g.name), g.span)
        if len(args) != len(code.params):
            raise InterpreterError(_("@{func} takes {n} argument(s), got {m}").format(
                func=g.name, n=len(code.params), m=len(args)), span)
        binds = list(zip(code.params, args))
        limits = self.limits
        name = code.name

        # _enter inlined: one Python frame less per Relay call, for speed and depth
        def call_global(env):
            new = {}
            for p, a in binds:
                new[p] = a(env)
            depth = self._depth + 1
            # activations count against --max-bytes beside the live tensors
            if depth > limits.max_depth or (
                    depth * INTERPRETER_FRAME_BYTES > FRAME_FLOOR and
                    depth * INTERPRETER_FRAME_BYTES > limits.max_bytes - self._live.bytes):
                raise self._depth_error(span)
            self._budget -= 1
            if self._budget < 0:
                raise self._out_of_steps(span)
            self._depth = depth
            try:
                result = code.body(new)
            except InterpreterError as err:
                err.frames.append((name, span))
                raise err.with_traceback(None)  # a Relay error needs no Python traceback
            except RecursionError:
                # out of Python stack: retried one frame up until there is room to build the error
                raise self._stack_exhausted(span) from None
            self._depth = depth - 1
            return result
        return call_global

    def _compile_value_call(self, callee, args: list, span):
        apply = self._apply

        def call_value(env):
            f = callee(env)
            return apply(f, [a(env) for a in args], span)
        return call_value

    def _compile_op_call(self, e: Call, args: list):
        op, attrs = self._op(e.op, e.attrs)
        kernel, name, span = op.kernel, op.name, e.span
        KernelError = self._ops.KernelError
        max_bytes = self.limits.max_bytes
        t = e.checked_type
        static = isinstance(t, TensorType) and t.is_static
        static_size = None
        if static:
            static_size = np.dtype(t.dtype).itemsize
            for d in t.shape:
                static_size *= d

        def over(size: int):
            """The limit error of allocating `size` bytes beside the live tensors."""
            return _limit_error("max_bytes", max_bytes, _(
                "{op} would allocate {size} bytes, bringing live memory to {live} bytes, over "
                "the limit of {limit}").format(op=name, size=size, live=self._live.bytes + size,
                                               limit=max_bytes), span)
        tuple_args = op.tuple_input or any(
            not isinstance(a.checked_type, TensorType) for a in e.args
            if a.checked_type is not None) or any(a.checked_type is None for a in e.args)

        type_rel = getattr(op, "type_rel", None)

        def size_before(values) -> int | None:
            """The output's bytes from the operator's relation on the inputs' real shapes,
            known before the kernel allocates (None when the relation cannot say)."""
            try:
                t = type_rel([TensorType(tuple(v.shape), str(v.dtype)) for v in values], attrs)
            except Exception:
                return None   # the kernel reports what is wrong with its inputs
            if not isinstance(t, TensorType) or not t.is_static:
                return None
            size = np.dtype(t.dtype).itemsize
            for d in t.shape:
                size *= int(d)
            return size

        def run_kernel(values):
            values = [_kernel_input(v) for v in values]
            live = self._live
            size = static_size
            if not static and not tuple_args and type_rel is not None and all(
                    type(v) is np.ndarray for v in values):
                size = size_before(values)
            if size is not None and live.bytes + size > max_bytes:
                raise over(size)
            try:
                out = kernel(values, attrs)
            except KernelError as err:
                text = err.message
                if not text.startswith(f"{name}:"):  # most messages name their operator
                    text = f"{name}: {text}"
                raise InterpreterError(text, span) from None
            if type(out) is tuple:
                for field in out:
                    live.add(field)
                if size is None and live.bytes > max_bytes:
                    raise over(0)
                return ADTValue(0, None, tuple(map(to_runtime, out)))
            if size is None and live.bytes + out.nbytes > max_bytes:
                raise over(out.nbytes)  # a size the relation could not tell in advance
            live.add(out)
            return to_runtime(out)

        def op_call(env):
            values = [a(env) for a in args]
            self._budget -= 1
            if self._budget < 0:
                raise self._out_of_steps(span)
            return run_kernel(values)

        fast = _scalar_path(name, e.args, t)
        if fast is not None and len(args) == 2:
            a0, a1 = args

            # scalar code: NumPy scalars in, the operator's scalar path (`rvmdbg.scalars`)
            def op_scalar2(env):
                x = a0(env)
                y = a1(env)
                self._budget -= 1
                if self._budget < 0:
                    raise self._out_of_steps(span)
                if type(x) in SCALAR_TYPES and type(y) in SCALAR_TYPES:
                    return fast(x, y)
                return run_kernel([x, y])
            return op_scalar2
        if fast is not None and len(args) == 1:
            a0 = args[0]

            def op_scalar1(env):
                x = a0(env)
                self._budget -= 1
                if self._budget < 0:
                    raise self._out_of_steps(span)
                if type(x) in SCALAR_TYPES:
                    return fast(x)
                return run_kernel([x])
            return op_scalar1
        if len(args) == 2 and static and not tuple_args:
            a0, a1 = args

            # the common case (binary arithmetic on tensors of a known size), kept lean
            def op_call2(env):
                x = a0(env)
                y = a1(env)
                self._budget -= 1
                if self._budget < 0:
                    raise self._out_of_steps(span)
                if type(x) in SCALAR_TYPES or type(y) in SCALAR_TYPES:
                    return run_kernel([x, y])
                live = self._live
                if live.bytes + static_size > max_bytes:
                    raise over(static_size)
                try:
                    out = kernel([x, y], attrs)
                except KernelError as err:
                    raise InterpreterError(_op_message(name, err.message), span) from None
                live.add(out)
                return out
            return op_call2
        return op_call


def _kernel_input(v):
    """A runtime value as operator kernels take it: a NumPy scalar as a 0-d array, a tuple as
    a Python tuple of its fields."""
    t = type(v)
    if t in SCALAR_TYPES:
        return np.asarray(v)
    if t is ADTValue:
        return tuple(np.asarray(f) if type(f) in SCALAR_TYPES else f for f in v.fields)
    return v


def _scalar_path(name: str, args, out_type):
    """The scalar path (`rvmdbg.scalars.scalar_op`) of a call of operator `name` on 0-d
    arguments with a 0-d result, or None."""
    types = [a.checked_type for a in args]
    if not all(isinstance(t, TensorType) and t.shape == () for t in types + [out_type]):
        return None
    return scalar_op(name, [t.dtype for t in types])


def _memoized(thunk, node):
    """Evaluate a shared (graph-bound) node once per function activation."""
    def memo(env):
        value = env.get(node, _MISSING)
        if value is _MISSING:
            value = env[node] = thunk(env)
        return value
    return memo


# ------------------------------------------------------------------------------------ patterns

def _compile_pattern(p, mod: Module):
    """A matcher `(value, env) -> bool` that binds the pattern's variables into env."""
    if isinstance(p, PatternWildcard):
        return lambda value, env: True
    if isinstance(p, PatternVar):
        var = p.var

        def bind(value, env):
            env[var] = value
            return True
        return bind
    if isinstance(p, PatternConstructor):
        c = p.constructor or mod.constructors.get(p.name)
        if c is None:
            raise InterpreterError(_("unknown constructor {name}").format(name=p.name), p.span)
        tag = c.tag
        subs = p.patterns
        if not subs:
            return lambda value, env: value.tag == tag
        if all(isinstance(q, (PatternVar, PatternWildcard)) for q in subs):
            # flat patterns such as Cons(%h, %t): bind directly
            slots = [(i, q.var) for i, q in enumerate(subs) if isinstance(q, PatternVar)]

            def flat(value, env):
                if value.tag != tag:
                    return False
                fields = value.fields
                for i, var in slots:
                    env[var] = fields[i]
                return True
            return flat
        matchers = [_compile_pattern(q, mod) for q in subs]

        def nested(value, env):
            if value.tag != tag:
                return False
            for m, f in zip(matchers, value.fields):
                if not m(f, env):
                    return False
            return True
        return nested
    if isinstance(p, PatternTuple):
        matchers = [_compile_pattern(q, mod) for q in p.patterns]

        def tuple_(value, env):
            for m, f in zip(matchers, value.fields):
                if not m(f, env):
                    return False
            return True
        return tuple_
    raise InterpreterError(_("unknown pattern {kind}").format(kind=type(p).__name__),
                           getattr(p, "span", None))


# ------------------------------------------------------------------------------------ analyses

def _shared_nodes(mod: Module) -> set:
    """ids of the expression nodes reached from more than one place (graph bindings)."""
    uses: dict[int, int] = {}
    seen: set = set()
    work = [fn for fn in mod.functions.values()]
    for fn in work:
        seen.add(id(fn))
    while work:
        node = work.pop()
        for c in children(node):
            k = id(c)
            uses[k] = uses.get(k, 0) + 1
            if k not in seen:
                seen.add(k)
                work.append(c)
    return {k for k, n in uses.items() if n > 1}


def _free_vars(fn: Function) -> tuple:
    """The variables fn's body uses but does not bind, in a stable order."""
    bound = set(fn.params)
    used: dict = {}
    seen: set = set()
    work = [fn.body]
    while work:
        node = work.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Var):
            used.setdefault(node, None)
            continue
        if isinstance(node, Let):
            bound.add(node.var)
        elif isinstance(node, Function):
            bound.update(node.params)
        elif isinstance(node, Match):
            for c in node.clauses:
                bound.update(pattern_vars(c.lhs))
        work.extend(children(node))
    return tuple(v for v in used if v not in bound)
