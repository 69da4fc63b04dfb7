"""ManifestLifetimes: `memory.kill(%x)` right after the last use of a let-bound tensor or
storage variable (TVM's ManifestLifetimes), compiled to `kill_register`.

Kills go only into straight-line let chains (a function body, an `if` branch, a `match` arm),
each chain on its own: a variable used anywhere inside a later binding (in any branch of an
`if` or `match` bound there, or captured by a closure made there) is live until that whole
binding is done, and a variable the chain returns is never killed. A variable bound outside
the chain is left to the chain that binds it.

Registers are shared by aliases: `let %x = %tensor_0;` gives `%x` the register of
`%tensor_0`, so a kill waits for the last use of every alias (and an alias of a value bound
outside the chain is never killed here). Killing a tensor register only drops that register's
reference. Killing a storage releases its bytes, so a storage is killed only once every tensor
laid out in it is dead and none of them escaped (into a call, a data value, a closure or the
result), where the value, not just the register, would outlive the kill.
"""
from __future__ import annotations

from rvmdbg.passes.lambda_lift import free_vars
from rvmdbg.passes.manifest_alloc import (ALLOC_STORAGE, ALLOC_TENSOR, INVOKE_TVM_OP, KILL,
                                          SHAPE_FUNC, SHAPE_OF, dialect_call, wrap_lets)
from rvmdbg.relay.ast import (Call, Clause, Function, If, Let, Match, Module, OpRef, PatternVar,
                              Var)
from rvmdbg.relay.dialect import ON_DEVICE
from rvmdbg.relay.types import UNIT, StorageType, TensorType

# dialect calls that use their operands in place: kernel arguments, shapes, allocation operands
_IN_PLACE = frozenset({INVOKE_TVM_OP, SHAPE_FUNC, SHAPE_OF, KILL, ALLOC_TENSOR, ALLOC_STORAGE})


def _is_dialect(value, names) -> bool:
    return type(value) is Call and type(value.op) is OpRef and value.op.name in names


def _alias_of(value):
    """The variable whose register `value` is, or None: a variable, or `on_device` of one
    (the compiler emits nothing for on_device; TVM's AliasEliminator looks through it too)."""
    if type(value) is Var:
        return value
    if _is_dialect(value, (ON_DEVICE,)) and len(value.args) == 1 and type(value.args[0]) is Var:
        return value.args[0]
    return None


def escaping(value, free=None) -> set:
    """Variables whose value (not just the register) may outlive the evaluation of `value`
    (`free`: value's free variables, when the caller has them already)."""
    kind = type(value)
    if kind is Var:
        return {value}
    if kind is Call:
        if type(value.op) is OpRef and value.op.name in _IN_PLACE:
            return set()
        return set(free_vars(value) if free is None else free)
    if kind is If:
        return _escaping_chain(value.true_branch) | _escaping_chain(value.false_branch)
    if isinstance(value, Match):
        out: set = set()
        for c in value.clauses:
            out |= _escaping_chain(c.rhs)
            if isinstance(c.lhs, PatternVar) and isinstance(value.data, Var):
                out.add(value.data)  # the clause names the data itself: it may flow out
        return out
    if isinstance(value, Let):
        return _escaping_chain(value)
    return set(free_vars(value) if free is None else free)


def _escaping_chain(e) -> set:
    out: set = set()
    while isinstance(e, Let):
        out |= escaping(e.value)
        e = e.body
    return out | escaping(e)


# the nodes that hold let chains of their own (the AST's classes are not subclassed)
_SCOPED = frozenset({Let, If, Match, Function})


class _KillInserter:
    def expr(self, e):
        kind = type(e)
        if kind not in _SCOPED:
            return e
        if kind is Let:
            return self.chain(e)
        if kind is If:
            return _keep(e, If(e.cond, self.expr(e.true_branch), self.expr(e.false_branch)))
        if isinstance(e, Match):
            return _keep(e, Match(e.data, [Clause(c.lhs, self.expr(c.rhs), c.span)
                                           for c in e.clauses], e.complete))
        if isinstance(e, Function) and not e.is_primitive:
            return _keep(e, Function(e.params, self.expr(e.body), e.ret_type, e.type_params,
                                     e.attrs))
        return e

    def chain(self, e: Let):
        bindings = []
        node = e
        scoped = _SCOPED
        while type(node) is Let:
            value = node.value
            bindings.append((node.var, self.expr(value) if type(value) in scoped else value,
                             node.span))
            node = node.body
        tail = self.expr(node)
        kills = self.kills(bindings, tail)
        out = []
        for i, binding in enumerate(bindings):
            out.append(binding)
            for var in kills.get(i, ()):
                unit = Var("_")
                unit.checked_type = UNIT
                out.append((unit, dialect_call(KILL, [var], UNIT, binding[2]), binding[2]))
        return wrap_lets(out, tail)

    @staticmethod
    def kills(bindings: list, tail) -> dict:
        """binding index -> the variables to kill right after that binding."""
        defined = {var: i for i, (var, _, _) in enumerate(bindings)}
        # alias groups: a let of a variable shares that variable's register
        root = {}
        for var, value, _ in bindings:
            alias = _alias_of(value)
            root[var] = root.get(alias, alias) if alias is not None else var
        returned = set(free_vars(tail))
        last_use: dict = {}        # group root -> last binding index using it
        last_member: dict = {}     # group root -> the member used last
        escaped: set = set()       # group roots whose value escapes
        storage_of: dict = {}      # tensor group root -> storage variable
        for i, (var, value, _) in enumerate(bindings):
            r = root[var]
            last_use.setdefault(r, i)
            last_member.setdefault(r, var)
            free = free_vars(value)
            for used in free:
                g = root.get(used)
                if g is not None:
                    last_use[g] = i
                    last_member[g] = used
            if _alias_of(value) is not None:
                last_member[r] = var
                continue  # an alias shares the register; the value goes nowhere new
            for used in escaping(value, free):
                g = root.get(used)
                if g is not None:
                    escaped.add(g)
            if _is_dialect(value, (ALLOC_TENSOR,)) and isinstance(value.args[0], Var):
                storage_of[r] = value.args[0]
        for used in returned:
            g = root.get(used)
            if g is not None:
                escaped.add(g)

        def killable(r) -> bool:
            # bound here (an alias of an outer value shares a register this chain must keep)
            return (r in defined and isinstance(r.checked_type, (TensorType, StorageType))
                    and not any(root.get(u) is r for u in returned))

        kills: dict = {}
        storage_end: dict = {}   # storage root -> last use of it or of its tensors
        storage_ok: dict = {}
        for r in {root[v] for v, _, _ in bindings}:
            if isinstance(r.checked_type, TensorType) and r in storage_of:
                s = root.get(storage_of[r])
                if s is not None:
                    storage_end[s] = max(storage_end.get(s, -1), last_use[r])
                    storage_ok[s] = storage_ok.get(s, True) and r not in escaped
        for r, i in last_use.items():
            if not killable(r):
                continue
            if isinstance(r.checked_type, StorageType):
                if r in escaped or not storage_ok.get(r, True):
                    continue
                i = max(i, storage_end.get(r, -1))
            # at one point: tensors before the storages they live in, each in binding order
            order = (isinstance(r.checked_type, StorageType), defined[r])
            kills.setdefault(i, []).append((order, last_member[r]))
        return {i: [v for _, v in sorted(vs, key=lambda x: x[0])] for i, vs in kills.items()}


def _keep(old, new):
    new.span = old.span
    new.checked_type = old.checked_type
    return new


def manifest_lifetimes(mod: Module) -> Module:
    """A new module with `memory.kill` after the last use of each let-bound tensor or storage."""
    out = mod.copy_shallow()
    inserter = _KillInserter()
    for name, fn in mod.functions.items():
        if fn.is_primitive:
            continue
        new = Function(fn.params, inserter.expr(fn.body), fn.ret_type, fn.type_params, fn.attrs,
                       fn.span)
        new.checked_type = fn.checked_type
        out.functions[name] = new
    return out
