"""MemoryPlan: storage whose tensors flowed only through local tuples and views is released
right after its last use (after TVM's MemoryPlan, which plans a function's storage).

ManifestLifetimes kills a storage only when none of its tensors escaped, and a tensor put in a
tuple counts as escaped: a `batch_norm`'s three outputs, gathered in a tuple and read back with
`.0`, kept their storages until the function returned (MobileNet's VM peak was 3.1x the graph
executor's plan). This pass follows the tensors of each storage bound in a let chain through
aliases, tuples of variables, projections of them and `vm.reshape_tensor` views; when none of
those values leaves the chain (into a call, a closure, a data value, a branch or the result),
it adds `memory.kill(%storage)` after the last use of any of them. The VM's storage pool
(`rvmdbg.vm.pool`) then hands those bytes to a later `alloc_storage` of the same rounded size,
which is where the coalescing happens: a dynamic-shape tensor's storage is sized when it is
made and pooled by its real size. A storage already killed, or bound outside the chain, is left
as it is, so running the pass twice changes nothing.
"""
from __future__ import annotations

from rvmdbg.passes.lambda_lift import free_vars
from rvmdbg.passes.manifest_alloc import (ALLOC_STORAGE, ALLOC_TENSOR, INVOKE_TVM_OP, KILL,
                                          RESHAPE_TENSOR, SHAPE_FUNC, SHAPE_OF, dialect_call,
                                          wrap_lets)
from rvmdbg.passes.manifest_lifetimes import _KillInserter, _is_dialect
from rvmdbg.relay.ast import Function, Let, Module, Tuple, TupleGetItem, Var
from rvmdbg.relay.dialect import ON_DEVICE
from rvmdbg.relay.types import UNIT

# dialect calls that read their operands in place: no reference to them outlives the call
_IN_PLACE = frozenset({INVOKE_TVM_OP, SHAPE_FUNC, SHAPE_OF, KILL, ALLOC_TENSOR, ALLOC_STORAGE})


def _referenced(value, stor: dict) -> set | None:
    """The storages the value of a binding refers to when it is a view of others (an alias,
    a tuple of variables, a projection, a reshape), else None."""
    kind = type(value)
    if kind is Var:
        return stor.get(value, set())
    if kind is Tuple and all(type(f) is Var for f in value.fields):
        out: set = set()
        for f in value.fields:
            out |= stor.get(f, set())
        return out
    if kind is TupleGetItem and type(value.tuple_value) is Var:
        return stor.get(value.tuple_value, set())
    if _is_dialect(value, (RESHAPE_TENSOR, ON_DEVICE)) and type(value.args[0]) is Var:
        return stor.get(value.args[0], set())
    return None


def storage_kills(bindings: list, tail) -> dict:
    """binding index -> storage variables to kill after it (only those ManifestLifetimes left)."""
    stor: dict = {}        # variable -> the storages its value may refer to
    defined: dict = {}     # storage variable -> its binding index
    killed: set = set()
    last: dict = {}        # storage variable -> last binding index using a value on it
    escaped: set = set()
    for i, (var, value, _) in enumerate(bindings):
        if _is_dialect(value, (ALLOC_STORAGE,)):
            defined[var] = i
            stor[var] = {var}
            last[var] = i
            continue
        free = free_vars(value)
        for u in free:
            for s in stor.get(u, ()):
                last[s] = i
        if _is_dialect(value, (KILL,)):
            if type(value.args[0]) is Var and value.args[0] in defined:
                killed.add(value.args[0])
            continue
        if _is_dialect(value, (ALLOC_TENSOR,)) and type(value.args[0]) is Var:
            stor[var] = set(stor.get(value.args[0], ()))
            continue
        if _is_dialect(value, _IN_PLACE):
            continue
        refs = _referenced(value, stor)
        if refs is not None:
            if refs:
                stor[var] = set(refs)
            continue
        for u in free:  # anything else may keep what it was given
            escaped |= stor.get(u, set())
    for u in free_vars(tail):
        escaped |= stor.get(u, set())
    out: dict = {}
    for s, i in defined.items():
        if s not in killed and s not in escaped:
            out.setdefault(last[s], []).append(s)
    return out


class _StorageKills(_KillInserter):
    def chain(self, e):
        bindings, node = [], e
        while type(node) is Let:
            value = node.value
            bindings.append((node.var, self.expr(value), node.span))
            node = node.body
        tail = self.expr(node)
        kills = storage_kills(bindings, tail)
        out = []
        for i, binding in enumerate(bindings):
            out.append(binding)
            for var in kills.get(i, ()):
                unit = Var("_")
                unit.checked_type = UNIT
                out.append((unit, dialect_call(KILL, [var], UNIT, binding[2]), binding[2]))
        return wrap_lets(out, tail)


def memory_plan(mod: Module) -> Module:
    """A new module whose let chains release storage after the last use of its tensors."""
    out = mod.copy_shallow()
    planner = _StorageKills()
    for name, fn in mod.functions.items():
        if fn.is_primitive:
            continue
        new = Function(fn.params, planner.expr(fn.body), fn.ret_type, fn.type_params, fn.attrs,
                       fn.span)
        new.checked_type = fn.checked_type
        out.functions[name] = new
    return out
