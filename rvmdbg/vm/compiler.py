"""The VM compiler's back end: a passed Relay module becomes an `Executable` of TVM bytecode.

`compile_module(mod)` runs the pass pipeline (`rvmdbg.passes.pipeline.default_pipeline`, which
ends with ManifestAlloc and ManifestLifetimes) and generates code the way TVM's
`VMFunctionCompiler` does (`src/relay/backend/vm/compiler.cc`):

- one VMFunction per global, primitive functions excepted (they become kernels); parameters in
  registers 0..n-1, a `Closure=1` global taking its captured values first; every value gets a
  fresh register, never reused (TVM's numbering) unless `reuse_registers` asks for
  `rvmdbg.vm.regalloc`;
- `let` binds the variable to its value's register (no move); let chains compile in a loop;
- `if`: `load_consti $t 1; if $c $t 1 F; <then>; move $m $a; goto G; <else>; move $m $b` with
  the relative offsets back-patched and `$m` a fresh merge register;
- `match`: per clause a decision tree of `get_field` / `get_tag` / `load_consti` / `if` tests
  whose failures jump to the next clause, the body, `move $m $r; goto end`; then `fatal`;
- the memory dialect (`memory.alloc_storage`, `memory.alloc_tensor`, `vm.invoke_tvm_op`,
  `vm.shape_of`, `vm.shape_func`, `vm.reshape_tensor`, `memory.kill`) maps one call to one
  instruction; kernels are deduplicated by their Relay text and named like TVM's
  (`vm_mod_fused_add_multiply`, as TVM 0.18); references run through built-in kernels.

Every instruction is mapped to the span of the nearest Relay node with one (`source_map`), and
each `alloc_data` of a constructor to the constructor's name (`adt_constructor`).
"""
from __future__ import annotations

import gc
import hashlib
from contextlib import contextmanager

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.passes.manifest_alloc import (ALLOC_STORAGE, ALLOC_TENSOR, INVOKE_TVM_OP, KILL,
                                          RESHAPE_TENSOR, SHAPE_FUNC, SHAPE_FUNC_ATTR, SHAPE_OF)
from rvmdbg.relay.ast import (Call, Constant, ConstructorRef, Function, GlobalVar, If, Let, Match,
                              Module, OpRef, PatternConstructor, PatternTuple, PatternVar,
                              PatternWildcard, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem,
                              Var, call_lines, room_for_recursion)
from rvmdbg.relay.dialect import DEVICE_COPY, ON_DEVICE, static_shape
from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.executable import Executable, Kernel, VMFunction
from rvmdbg.vm.kernels import BUILTIN_KERNELS, build_kernel, post_order, with_param_types

# TVM shortens longer kernel names and appends a hash of the full one
MAX_KERNEL_NAME = 80
_POOL_BY_VALUE = 1 << 16  # bytes: a constant up to this size is shared with its equals
# the name TVM's VM compiler gives its LowerTE module, which prefixes every kernel name
KERNEL_PREFIX = "vm_mod_"
# passes recurse once per nested node: a 10,000-let program needs room beyond Python's default


class CompileError(Exception):
    """A module the code generator cannot compile (it did not go through the pipeline, or uses
    something the VM has no instruction for). `span` locates it when known."""

    def __init__(self, message: str, span=None):
        super().__init__(message if span is None else f"{span}: {message}")
        self.message = message
        self.span = span


# ---------------------------------------------------------------- module-wide tables

def kernel_name(fn: Function) -> str:
    """TVM 0.18's name for a lowered primitive: its LowerTE module prefix `vm_mod_`, then
    `fused_` (`shape_func` for a shape kernel) and its operators in evaluation order, dots
    made underscores; a function for an external codegen (`Compiler=...`, or `Extern=1`
    once it is compiled) keeps its `global_symbol`."""
    symbol = fn.attrs.get("global_symbol")
    external = fn.attrs.get("Compiler") or fn.attrs.get("Extern")
    if external and isinstance(symbol, str) and symbol:
        return symbol
    ops = [n.op.name for n in post_order(fn.body)
           if isinstance(n, Call) and isinstance(n.op, OpRef)]
    head = "shape_func" if fn.attrs.get(SHAPE_FUNC_ATTR) else "fused"
    name = "_".join([head, *ops]) if ops else head + "_identity"
    if len(name) > MAX_KERNEL_NAME:
        digest = hashlib.sha1(name.encode()).hexdigest()[:12]
        name = f"{name[:MAX_KERNEL_NAME]}_{digest}_"
    return KERNEL_PREFIX + name.replace(".", "_")


class _ModuleTables:
    """What all functions of one executable share: indexes, constants, kernels, side tables."""

    def __init__(self, mod: Module):
        self.mod = mod
        self.func_index = {name: i for i, name in enumerate(
            n for n, f in mod.functions.items() if not f.is_primitive)}
        self.constants: list = []
        self._const_index: dict = {}
        self._pinned: list = []
        self.kernels: list = []
        self._kernel_index: dict = {}   # source text (or builtin name) -> index
        self._names: set = set()
        self.source_map: dict = {}
        self.fused_lines: dict = {}
        self.adt_constructor: dict = {}

    def constant(self, data: np.ndarray) -> int:
        data = np.asarray(data)
        if data.nbytes > _POOL_BY_VALUE:
            # a large weight is pooled by identity: hashing its bytes cost as much as the rest
            # of compiling a network (ResNet-50: 100 MB of weights)
            key = (data.dtype.str, data.shape, id(data))
            self._pinned.append(data)  # keeps the id from being reused
        else:
            key = (data.dtype.str, data.shape, data.tobytes())
        index = self._const_index.get(key)
        if index is None:
            index = self._const_index[key] = len(self.constants)
            pooled = np.array(data, copy=True)
            pooled.flags.writeable = False  # shared by every load_const of it
            self.constants.append(pooled)
        return index

    def kernel(self, fn: Function, num_inputs: int, num_outputs: int, span) -> int:
        from rvmdbg.relay.printer import print_expr
        # with its own #[metadata]: a tensor constant or metadata attribute inside a primitive
        # function (as TVM prints fused functions) must parse back when the kernel is built
        fn = with_param_types(fn)
        source = print_expr(fn, metadata=True)
        index = self._kernel_index.get(source)
        if index is not None:
            return index
        name = kernel_name(fn)
        base, n = name, 0
        while name in self._names:
            n += 1
            name = f"{base}_{n}"
        self._names.add(name)
        kern = Kernel(name, source, num_inputs, num_outputs)
        try:
            kern.impl = build_kernel(kern)
        except Exception as e:
            raise CompileError(_("kernel {kernel} cannot be built: {error}").format(
                kernel=name, error=e), span) from e
        index = self._kernel_index[source] = len(self.kernels)
        self.kernels.append(kern)
        return index

    def builtin(self, name: str) -> int:
        index = self._kernel_index.get(("builtin", name))
        if index is None:
            n_in, n_out = BUILTIN_KERNELS[name]
            kern = Kernel(name, "", n_in, n_out, builtin=True)
            kern.impl = build_kernel(kern)
            index = self._kernel_index[("builtin", name)] = len(self.kernels)
            self.kernels.append(kern)
            self._names.add(name)
        return index


# ---------------------------------------------------------------- one function

class _FunctionCompiler:
    def __init__(self, tables: _ModuleTables, index: int, name: str, fn: Function):
        self.tables = tables
        self.mod = tables.mod
        self.index = index
        self.name = name
        self.code: list = []
        self.spans: list = []
        self.num_registers = 0
        self.var_reg: dict = {}
        self.span = fn.span
        self.fn = fn

    # ---- basics ----

    def new_register(self) -> int:
        r = self.num_registers
        self.num_registers += 1
        return r

    def emit(self, instr) -> int:
        self.code.append(instr)
        self.spans.append(self.span)
        return len(self.code) - 1

    def error(self, message: str, node=None):
        span = getattr(node, "span", None) or self.span
        return CompileError(f"@{self.name}: {message}", span)

    def compile(self) -> VMFunction:
        fn = self.fn
        params = list(fn.params)
        body = fn.body
        if fn.attrs.get("Closure"):
            # a lifted closure: captured values first, then the inner function's parameters
            if not isinstance(body, Function):
                raise self.error(_("a Closure=1 global must return a function"), fn)
            params += body.params
            body = body.body
        for p in params:
            self.var_reg[p] = self.new_register()
        result = self.block(body)
        self.span = _result_span(body) or fn.span
        self.emit(bc.Ret(result))
        for pc, span in enumerate(self.spans):
            if span is not None:
                self.tables.source_map[(self.index, pc)] = span
        return VMFunction(self.name, [p.name for p in params], self.num_registers, self.code)

    # ---- expressions ----

    def block(self, e) -> int:
        """Compile a let chain (iteratively) and return the register of its result."""
        outer = self.span
        while isinstance(e, Let):
            self.span = e.value.span or e.span or outer  # the value is more precise
            value = e.value
            if isinstance(value, Var):
                self.var_reg[e.var] = self.register_of(value)  # an alias: no move
            else:
                r = self.value(value)
                if r is not None:
                    self.var_reg[e.var] = r
            e = e.body
        self.span = outer
        return self.value(e)

    def register_of(self, var: Var) -> int:
        try:
            return self.var_reg[var]
        except KeyError:
            raise self.error(_("%{var} has no value here (it is unbound, or bound to a call "
                               "that returns nothing)").format(var=var.name), var) from None

    def value(self, e):
        """Emit code computing e; its register (None for dialect calls with no result)."""
        if type(e) is Var:  # the most common operand: no code, no span to track
            return self.register_of(e)
        outer = self.span
        if e.span is not None:
            self.span = e.span
        try:
            kind = type(e)
            if kind is Var:
                return self.register_of(e)
            if kind is Constant:
                dst = self.new_register()
                self.emit(bc.LoadConst(self.tables.constant(e.data), dst))
                return dst
            if kind is Call:
                return self.call(e)
            if kind is Let:
                return self.block(e)
            if kind is If:
                return self.if_(e)
            if kind is Match:
                return self.match(e)
            if kind is Tuple:
                fields = [self.value(f) for f in e.fields]
                dst = self.new_register()
                self.emit(bc.AllocADT(0, fields, dst))
                return dst
            if kind is TupleGetItem:
                obj = self.value(e.tuple_value)
                dst = self.new_register()
                self.emit(bc.GetField(obj, e.index, dst))
                return dst
            if kind is GlobalVar:
                return self.closure_of_global(e)
            if kind is ConstructorRef:
                return self.construct(e, [])
            if kind is RefCreate:
                return self.builtin("ref_create", [e.value])
            if kind is RefRead:
                return self.builtin("ref_read", [e.ref])
            if kind is RefWrite:
                return self.builtin("ref_write", [e.ref, e.value])
            if kind is Function:
                raise self.error(_("a nested function reached code generation (run LambdaLift)"), e)
            if kind is OpRef:
                raise self.error(_("operator {op} used as a value (run EtaExpand)").format(
                    op=e.name), e)
            raise self.error(_("cannot compile a {kind}").format(kind=kind.__name__), e)
        finally:
            self.span = outer

    def closure_of_global(self, g: GlobalVar) -> int:
        target = self.mod.functions.get(g.name)
        if target is None or g.name not in self.tables.func_index:
            raise self.error(_("@{func} is not a function of the module").format(func=g.name), g)
        dst = self.new_register()
        self.emit(bc.AllocClosure(self.tables.func_index[g.name], [], dst))
        return dst

    def construct(self, ref: ConstructorRef, args: list) -> int:
        con = ref.constructor or self.mod.constructors.get(ref.name)
        if con is None:
            raise self.error(_("unknown constructor {name}").format(name=ref.name), ref)
        if len(args) != len(con.inputs):
            raise self.error(_("constructor {name} takes {n} fields, got {m} (run "
                               "EtaExpand)").format(name=con.name, n=len(con.inputs),
                                                    m=len(args)), ref)
        fields = [self.value(a) for a in args]
        dst = self.new_register()
        pc = self.emit(bc.AllocADT(con.tag, fields, dst))
        self.tables.adt_constructor[(self.index, pc)] = con.name
        return dst

    def builtin(self, name: str, args: list) -> int:
        ins = [self.value(a) for a in args]
        dst = self.new_register()
        k = self.tables.builtin(name)
        self.emit(bc.InvokePacked(k, len(ins) + 1, 1, [*ins, dst]))
        return dst

    def call(self, e: Call):
        op = e.op
        if isinstance(op, OpRef):
            return self.dialect(e, op.name)
        if isinstance(op, ConstructorRef):
            return self.construct(op, e.args)
        if isinstance(op, GlobalVar):
            target = self.mod.functions.get(op.name)
            if target is None or op.name not in self.tables.func_index:
                if target is not None and target.is_primitive:
                    raise self.error(_("call of primitive @{func} reached code generation (run "
                                       "ManifestAlloc)").format(func=op.name), e)
                raise self.error(_("@{func} is not a function of the module").format(
                    func=op.name), e)
            args = [self.value(a) for a in e.args]
            dst = self.new_register()
            index = self.tables.func_index[op.name]
            if target.attrs.get("Closure"):
                self.emit(bc.AllocClosure(index, args, dst))  # a lifted closure's captures
            else:
                self.emit(bc.Invoke(index, args, dst))
            return dst
        if isinstance(op, Function) and op.is_primitive:
            raise self.error(_("call of a primitive function reached code generation "
                               "(run ManifestAlloc)"), e)
        closure = self.value(op)
        args = [self.value(a) for a in e.args]
        dst = self.new_register()
        self.emit(bc.InvokeClosure(closure, args, dst))
        return dst

    def dialect(self, e: Call, name: str):
        args = e.args
        if name == KILL:  # the most common: one after each tensor's last use
            self.emit(bc.KillRegister(self.value(args[0])))
            return None
        if name in (INVOKE_TVM_OP, SHAPE_FUNC):
            fn, ins, outs = args
            if not (isinstance(fn, Function) and isinstance(ins, Tuple)
                    and isinstance(outs, Tuple)):
                raise self.error(_("{op} takes a primitive function and two tuples").format(
                    op=name), e)
            in_regs = [self.value(a) for a in ins.fields]
            out_regs = [self.value(a) for a in outs.fields]
            k = self.tables.kernel(fn, len(in_regs), len(out_regs), e.span or self.span)
            pc = self.emit(bc.InvokePacked(k, len(in_regs) + len(out_regs), len(out_regs),
                                           in_regs + out_regs))
            lines = call_lines(e.span or self.span, fn)
            if len(lines) > 1:
                self.tables.fused_lines[(self.index, pc)] = lines
            return None
        if name == ALLOC_STORAGE:
            size = self.value(args[0])
            attrs = e.attrs or {}
            alignment = attrs.get("alignment", 64)
            if len(args) > 1:  # TVM: (size, alignment), from 0.14 (size, shape, alignment)
                if not isinstance(args[-1], Constant):
                    raise self.error(_("alloc_storage: the alignment must be a constant"), e)
                alignment = int(args[-1].data)
            dtype = attrs.get("dtype_hint", attrs.get("dtype", "float32"))
            dst = self.new_register()
            self.emit(bc.AllocStorage(size, alignment, dtype, dst))
            return dst
        if name == ALLOC_TENSOR:
            storage = self.value(args[0])
            offset = self.value(args[1])
            const_shape = static_shape((e.attrs or {}).get("const_shape"))
            if const_shape is not None:
                dst = self.new_register()
                self.emit(bc.AllocTensor(storage, offset, const_shape,
                                         e.attrs.get("dtype", "float32"), dst))
            else:
                shape = self.value(args[2])
                dst = self.new_register()
                self.emit(bc.AllocTensorReg(storage, offset, shape,
                                            (e.attrs or {}).get("dtype", "float32"), dst))
            return dst
        if name == SHAPE_OF:
            tensor = self.value(args[0])
            dst = self.new_register()
            self.emit(bc.ShapeOf(tensor, dst))
            return dst
        if name == RESHAPE_TENSOR:
            tensor = self.value(args[0])
            shape = self.value(args[1])
            dst = self.new_register()
            self.emit(bc.ReshapeTensor(tensor, shape, dst))
            return dst
        if name == ON_DEVICE:
            return self.value(args[0])  # an annotation: one device here
        if name == DEVICE_COPY:
            src = self.value(args[0])
            dst = self.new_register()
            self.emit(bc.DeviceCopy(src, 0, 0, dst))  # device 0 to device 0: the one CPU
            return dst
        raise self.error(_("operator call {op}(...) outside a primitive function (run FuseOps "
                           "and ManifestAlloc)").format(op=name), e)

    # ---- control flow ----

    def if_(self, e: If) -> int:
        cond = self.value(e.cond)
        one = self.new_register()
        self.emit(bc.LoadConsti(1, one))
        branch = self.emit(bc.If(cond, one, 1, 1))  # false offset patched below
        then_result = self.block(e.true_branch)
        merge = self.new_register()  # allocated after the then-branch, as TVM does
        self.emit(bc.Move(then_result, merge))
        skip = self.emit(bc.Goto(1))
        else_start = len(self.code)
        else_result = self.block(e.false_branch)
        self.emit(bc.Move(else_result, merge))
        end = len(self.code)
        self.code[branch] = bc.If(cond, one, 1, else_start - branch)
        self.code[skip] = bc.Goto(end - skip)
        return merge

    def match(self, e: Match) -> int:
        data = self.value(e.data)
        merge = None
        exits = []
        for clause in e.clauses:
            failures: list = []   # pcs of the clause's tests; they fail to the next clause
            outer = self.span
            self.span = clause.span or self.span
            self.pattern(clause.lhs, data, failures)
            result = self.block(clause.rhs)
            if merge is None:
                merge = self.new_register()
            self.span = clause.span or outer
            self.emit(bc.Move(result, merge))
            exits.append(self.emit(bc.Goto(1)))
            self.span = outer
            next_clause = len(self.code)
            for pc in failures:
                test = self.code[pc]
                self.code[pc] = bc.If(test.test, test.target, 1, next_clause - pc)
        self.emit(bc.Fatal())  # no clause matched (TVM emits it for complete matches too)
        end = len(self.code)
        for pc in exits:
            self.code[pc] = bc.Goto(end - pc)
        if merge is None:  # a match with no clauses always fails
            merge = self.new_register()
        return merge

    def pattern(self, p, reg: int, failures: list) -> None:
        """Test `reg` against p (each failing test recorded in failures); bind its vars."""
        if isinstance(p, PatternWildcard):
            return
        if isinstance(p, PatternVar):
            self.var_reg[p.var] = reg
            return
        if isinstance(p, PatternConstructor):
            con = p.constructor or self.mod.constructors.get(p.name)
            if con is None:
                raise self.error(_("unknown constructor {name} in a pattern").format(
                    name=p.name), p)
            tag = self.new_register()
            self.emit(bc.GetTag(reg, tag))
            expected = self.new_register()
            self.emit(bc.LoadConsti(con.tag, expected))
            failures.append(self.emit(bc.If(tag, expected, 1, 1)))
        elif not isinstance(p, PatternTuple):
            raise self.error(_("unknown pattern {kind}").format(kind=type(p).__name__), p)
        for i, sub in enumerate(p.patterns):
            if isinstance(sub, PatternWildcard):
                continue
            field = self.new_register()
            self.emit(bc.GetField(reg, i, field))
            self.pattern(sub, field, failures)


def _result_span(e):
    while isinstance(e, Let):
        e = e.body
    return getattr(e, "span", None)


# ---------------------------------------------------------------- entry points

def _is_pipeline(p) -> bool:
    return hasattr(p, "run") and hasattr(p, "apply")


def codegen(mod: Module) -> Executable:
    """Bytecode for a module that has been through the whole pipeline."""
    tables = _ModuleTables(mod)
    functions = []
    for name, fn in mod.functions.items():
        if fn.is_primitive:
            continue
        functions.append(_FunctionCompiler(tables, tables.func_index[name], name, fn).compile())
    source = mod.source
    exe = Executable(functions, tables.constants, tables.kernels, tables.source_map,
                     source.text if source is not None else None,
                     source.name if source is not None else None,
                     tables.adt_constructor, _sources(mod, tables.source_map))
    exe.fused_lines = tables.fused_lines
    return exe


def _sources(mod: Module, source_map: dict) -> dict:
    """The text of every file the source map names that the compiler knows: the program's
    own and the prelude's. The executable carries them, so a saved one opens no paths."""
    from rvmdbg.relay.loader import PRELUDE_PATH, prelude_text
    known = {}
    if mod.source is not None:
        known[mod.source.name] = mod.source.text
    files = {span.file for span in source_map.values()}
    if str(PRELUDE_PATH) in files and str(PRELUDE_PATH) not in known:
        text = prelude_text()
        if text is not None:
            known[str(PRELUDE_PATH)] = text
    return {f: known[f] for f in files if f in known}


@contextmanager
def _compiling():
    """Room for the passes' recursion, and no cyclic GC passes meanwhile: compiling makes many
    small objects next to a large AST, which the collector would rescan over and over."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with room_for_recursion():
            yield
    finally:
        if gc_was_enabled:
            gc.enable()


def compile_stages(mod: Module, pipeline=None, entries=("main",)):
    """(the stages of the pipeline, the executable): for `rvmdbg compile --passes`."""
    from rvmdbg.passes.pipeline import default_pipeline
    pipeline = default_pipeline(entries=entries) if pipeline is None else pipeline
    with _compiling():
        stages = pipeline.run(mod)
        return stages, codegen(stages[-1].module)


def compile_module(mod: Module, pipeline=None, reuse_registers: bool = False,
                   entries=("main",)) -> Executable:
    """Compile a type-checkable module to an executable.

    `entries`: the functions the default pipeline keeps with what they reach (TVM: main).

    `pipeline`: None runs `default_pipeline()`; a Pipeline (or a list of passes) runs that;
    False means mod has already been through the passes (it is compiled as it is).
    `reuse_registers` shares registers between values whose lifetimes do not overlap
    (`rvmdbg.vm.regalloc`); the report is kept in `exe.register_report`."""
    from rvmdbg.passes.pipeline import Pipeline, default_pipeline
    with _compiling():
        if pipeline is None:
            passed = default_pipeline(entries=entries).apply(mod)
        elif pipeline is False:
            passed = mod
        else:
            passed = (pipeline if _is_pipeline(pipeline) else Pipeline(pipeline)).apply(mod)
        exe = codegen(passed)
    if reuse_registers:
        from rvmdbg.vm.regalloc import reuse_registers as allocate
        exe.register_report = allocate(exe)
    return exe


__all__ = ["compile_module", "compile_stages", "codegen", "kernel_name", "CompileError"]
