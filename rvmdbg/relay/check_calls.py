"""Type checking of calls: the callee's type (global, constructor, closure or operator), the
arguments against it, operator type relations (applied at once or queued for the solver),
the memory dialect and `call_lowered`, and the notes where TVM would refuse a call. A mixin
of `typecheck.TypeChecker`.
"""
from __future__ import annotations

import math

import numpy as np

from rvmdbg.i18n import N_, _, ngettext
from rvmdbg.relay import ast, dialect
from rvmdbg.relay.ast import Call, Constant, ConstructorRef, GlobalVar, OpRef, Var
from rvmdbg.relay.check_base import TypeNote, at_node, float_word, ops_module
from rvmdbg.relay.diagnostics import NameResolutionError
from rvmdbg.relay.types import (
    FuncType, IncompleteType, RefType, TensorType, TupleType, Type, TypeCall, TypeVar,
    is_vector_dtype, scalar,
)
from rvmdbg.relay.unify import Mismatch, OpRelation, has_unknown


def _solvers() -> dict:
    from rvmdbg.relay.ops.solvers import SOLVERS  # with the registry: imported late
    return SOLVERS


def _vector_dtype_in(t) -> str | None:
    """The first vector dtype (`int8x4`) in a tensor type or a tuple of them, or None."""
    if type(t) is TensorType:
        return t.dtype if is_vector_dtype(t.dtype) else None
    if type(t) is TupleType:
        for f in t.fields:
            found = _vector_dtype_in(f)
            if found is not None:
                return found
    return None


class CallChecker:
    """Call checking, against the checker's substitution and relation queue."""

    def callee_desc(self, op) -> str | None:
        """How messages name the callee: `@f`, `Cons`, `%g`, or None for another function."""
        if isinstance(op, GlobalVar):
            return "@" + op.name
        if isinstance(op, ConstructorRef):
            return op.name
        if isinstance(op, Var):
            return "%" + op.name
        return None

    def call(self, call: Call) -> Type:
        op = call.op
        if type(op) is OpRef:
            return self.op_call(call, op)
        fty = self.callee_type(call, op)
        args = call.args
        arg_types = [self.visit(a) for a in args]
        if type(fty) is IncompleteType:
            ret = IncompleteType()
            self.expect(fty, FuncType(tuple(arg_types), ret), call,
                         N_("cannot call this value: it has type {expected}, but is called as "
                            "{found}"))
            return ret
        if type(fty) is not FuncType:
            raise self.error(call, _("cannot call a value of type {type}: it is not a "
                                     "function").format(type=self.resolve(fty)))
        if len(fty.params) != len(args):
            desc = self.callee_desc(op)
            n = len(fty.params)
            if desc is None:
                text = ngettext("the function takes {n} argument, {given} given",
                                "the function takes {n} arguments, {given} given", n)
            else:
                text = ngettext("{callee} takes {n} argument, {given} given",
                                "{callee} takes {n} arguments, {given} given", n)
            raise self.error(call, text.format(callee=desc, n=n, given=len(args)))
        self.unify_args(call, op, fty, args, arg_types)
        return fty.ret

    def callee_type(self, call: Call, op) -> Type:
        """The type of the function `call` calls through `op` (a global, a constructor or a
        value), instantiated where it is polymorphic; the instantiation is kept for the call."""
        inst = None
        if type(op) is GlobalVar:
            s, poly = self.global_scheme(op)
            if poly:
                fty, inst = self.instantiate(s)
            else:
                fty = s
                self.mono_calls.append((call, op.name))
            self.record(op, fty)
        elif type(op) is ConstructorRef:
            fty, inst = self.instantiate(self.constructor_scheme(op))
            self.record(op, fty)
        else:
            fty = self.find(self.visit(op))
            if type(fty) is FuncType and fty.type_params:
                fty, inst = self.instantiate(fty)
        if inst:
            self.call_inst[id(call)] = inst
        return fty

    def unify_args(self, call: Call, op, fty: FuncType, args, arg_types: list) -> None:
        """Each argument type against its parameter; a mismatch is reported at its argument
        (`args`: the nodes the arguments come from)."""
        unify = self.unify
        for i, (p, a, at) in enumerate(zip(fty.params, args, arg_types)):
            try:
                unify(p, at)
            except Mismatch:
                # the message is made only for a mismatch (unifying again fails the same way)
                desc = self.callee_desc(op)
                template = (N_("type mismatch in argument {index} of the function: expected "
                               "{expected}, found {found}") if desc is None else
                            N_("type mismatch in argument {index} of {callee}: expected "
                               "{expected}, found {found}"))
                self.refuse(p, at, at_node(a, call), template, literal=a, index=i + 1, callee=desc)

    def op_call(self, call: Call, op: OpRef) -> Type:
        relay_ops = ops_module()
        opdef = relay_ops.OPS.get(op.name)
        if opdef is None and op.name in dialect.DIALECT_OPS:
            return self.dialect_call(call, op)
        if opdef is None:
            raise self.error(op, _("unknown operator `{op}`").format(op=op.name),
                             cls=NameResolutionError)
        try:
            call.attrs = relay_ops.normalize_attrs(opdef, call.attrs)
        except relay_ops.OpAttrError as exc:
            raise self.error(call, getattr(exc, "message", None) or str(exc),
                             cls=NameResolutionError) from None
        arg_types = [self.visit(a) for a in call.args]
        if opdef.attrs_from_args is not None:
            fixed = opdef.attrs_from_args(
                [a.data if isinstance(a, Constant) else None for a in call.args], call.attrs)
            if fixed is not None:
                call.attrs = fixed
        out = self.apply_relation(call, opdef, arg_types)
        if out is None:
            out = IncompleteType()
            self.pending.append(OpRelation(call, opdef, arg_types, out, self.root))
        self.record(op, FuncType(tuple(arg_types), out))
        return out

    def dialect_call(self, call: Call, op: OpRef) -> Type:
        """A call of the memory or device dialect (a printed late pass stage)."""
        msg = dialect.arity_error(op.name, len(call.args))
        if msg is not None:
            raise self.error(call, msg)
        if op.name == dialect.CALL_LOWERED:
            return self.call_lowered(call, op)
        arg_types = [self.visit(a) for a in call.args]
        if op.name in dialect.DEVICE_OPS:
            out = arg_types[0]  # one device: the value passes through
        else:
            resolved = [self.resolve(self.find(t)) for t in arg_types]
            try:
                out = dialect.result_type(op.name, resolved, call.attrs)
            except dialect.DialectTypeError as exc:
                where = call if exc.arg is None else at_node(call.args[exc.arg], call)
                raise self.error(where, exc.message) from None
        self.record(op, FuncType(tuple(arg_types), out))
        return out

    def call_lowered(self, call: Call, op: OpRef) -> Type:
        """`call_lowered(@f, (a, b), metadata={...})`, as TVM's LowerTE writes a kernel call:
        TVM's relation asks for a global callee whose parameters are the tuple's fields, and
        gives the callee's result."""
        callee, packed = call.args
        if type(callee) is not GlobalVar:
            raise self.error(at_node(callee, call), _(
                "call_lowered: the callee must be a global function such as @f"))
        fty = self.callee_type(call, callee)  # a global's type is known or being inferred
        packed_t = self.resolve(self.find(self.visit(packed)))
        if type(packed_t) is not TupleType:
            raise self.error(at_node(packed, call), _(
                "call_lowered: the arguments must be a tuple, found {type}").format(type=packed_t))
        fields = packed_t.fields
        if len(fty.params) != len(fields):
            raise self.error(at_node(packed, call), ngettext(
                "call_lowered: @{name} takes {n} argument, the tuple holds {given}",
                "call_lowered: @{name} takes {n} arguments, the tuple holds {given}",
                len(fty.params)).format(name=callee.name, n=len(fty.params), given=len(fields)))
        # a mismatch is reported at the tuple's field when the tuple is written out
        nodes = packed.fields if type(packed) is ast.Tuple else [packed] * len(fields)
        self.unify_args(call, callee, fty, nodes, list(fields))
        self.record(op, FuncType((fty, packed_t), fty.ret))
        return fty.ret

    def apply_relation(self, call: Call, opdef, arg_types: list) -> Type | None:
        """The operator's result type, or None while an argument type is still unknown."""
        relay_ops = ops_module()
        resolved = []
        for t in arg_types:
            t = self.find(t)
            if type(t) is not TensorType:
                t = self.resolve(t)
                if has_unknown(t):
                    if not self.assign_arguments(call, opdef, arg_types):
                        return None
                    return self.apply_relation(call, opdef, arg_types)
            resolved.append(t)
        for i, t in enumerate(resolved):
            # the relation checks tensor kinds itself; these kinds get a message at the argument
            if type(t) in (FuncType, TypeCall, RefType, TypeVar):
                raise self.error(at_node(call.args[i], call),
                                 _("argument {index} of operator `{op}` must be a tensor, found "
                                   "{type}").format(index=i + 1, op=opdef.name, type=t))
            vector = _vector_dtype_in(t)
            if vector is not None:
                raise self.error(at_node(call.args[i], call),
                                 _("argument {index} of operator `{op}` has the vector dtype "
                                   "{dtype}, which no operator kernel here takes").format(
                                       index=i + 1, op=opdef.name, dtype=vector),
                                 _("vector dtypes (TVM's lanes, as in int8x4) may appear in "
                                   "types; an operator needs a scalar dtype such as int8"))
        try:
            out = opdef.type_rel(resolved, call.attrs)
        except relay_ops.OpTypeError as exc:
            msg = getattr(exc, "message", None) or str(exc)
            if not msg.startswith(opdef.name):
                msg = f"{opdef.name}: {msg}"
            raise self.error(call, msg, self.relation_hint(call, resolved)) from None
        self.check_integer_context(call, opdef.name, resolved, out)
        if opdef.tvm_note is not None:
            self.note_tvm_refusal(call, opdef, resolved)
        if opdef.resolve_attrs is not None:
            fixed = opdef.resolve_attrs(resolved, call.attrs)
            if fixed is not None:
                call.attrs = fixed
        return out

    def note_tvm_refusal(self, call: Call, opdef, arg_types: list) -> None:
        """A call rvmdbg runs and TVM refuses (docs/differences.md): a note at the call, once."""
        why = opdef.tvm_note(arg_types, ops_module().normalize_attrs(opdef, call.attrs or {}))
        if why is None or id(call) in self.tvm_noted or call.span is None:
            return
        self.tvm_noted.add(id(call))
        self.warnings.append(TypeNote(
            _("TVM refuses this: {why}").format(why=why), call.span,
            _("rvmdbg accepts it (docs/differences.md says why)"),
            self.mod.source if self.mod is not None else None))

    # operator -> (index of the argument converted to the result's dtype, whether integer
    # wrap-around is the conversion's meaning): a cast wraps integers on purpose, a fill does not
    _CONVERTING = {"cast": (0, True), "cast_like": (0, True), "full": (0, False),
                   "full_like": (1, False)}

    def check_integer_context(self, call: Call, name: str, args: list, out) -> None:
        """A literal that has no value in the integer dtype it is converted to (`inff`, `nanf`,
        3e9f or 300 into int8) is a type error at the literal: TVM's code for it is undefined
        (a float cast to an integer) or silently wraps (a fill value)."""
        if not isinstance(out, TensorType) or not out.dtype.startswith(("int", "uint")):
            return
        want = out.dtype
        if name == "clip":
            for key in ("a_min", "a_max"):
                v = call.attrs.get(key) if call.attrs else None
                if isinstance(v, float) and not math.isfinite(v):
                    raise self.error(
                        call, _("clip: {attr}={value} has no {dtype} value").format(
                            attr=key, value=float_word(v), dtype=want),
                        _("give {attr} as a number within {dtype}'s range").format(
                            attr=key, dtype=want))
            return
        spec = self._CONVERTING.get(name)
        if spec is None or spec[0] >= len(call.args):
            return
        literal = call.args[spec[0]]
        if not isinstance(literal, Constant) or getattr(literal.data, "ndim", 1) != 0:
            return
        value = literal.data.item()
        if isinstance(value, bool):
            return
        where = at_node(literal, call)
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.error(where, _("{op}: {value} has no {dtype} value (converting it "
                                          "to an integer is undefined)").format(
                                     op=name, value=float_word(value), dtype=want),
                                 _("write an integer literal within {dtype}'s range").format(
                                     dtype=want))
            value = math.trunc(value)
            wraps = False  # a float out of an integer's range is undefined, not a wrap
        else:
            wraps = spec[1]
        info = np.iinfo(want)
        if not wraps and not info.min <= value <= info.max:
            raise self.error(where, _("{op}: {value} is out of range for {dtype} ({low} to "
                                      "{high})").format(op=name, value=value, dtype=want,
                                                         low=info.min, high=info.max),
                             _("cast(...) an integer literal when wrap-around is meant")
                             if not isinstance(literal.data.item(), float) else None)

    def assign_arguments(self, call: Call, opdef, arg_types: list) -> bool:
        """Give unknown arguments the types the operator's TVM relation assigns them (the
        weight of nn.dense from `units`, ...); True when one became known."""
        solve = _solvers().get(opdef.name)
        if solve is None:
            return False
        known = []
        for t in arg_types:
            t = self.resolve(self.find(t))
            known.append(None if has_unknown(t) else t)
        progress = False
        for i, t in solve(known, call.attrs).items():
            if known[i] is None:
                self.expect(t, arg_types[i], at_node(call.args[i], call),
                             N_("argument {index} of operator `{op}` must be {expected}, found "
                                "{found}"), index=i + 1, op=opdef.name)
                progress = progress or not has_unknown(self.resolve(self.find(arg_types[i])))
        return progress

    def assign_from_result(self, rel: "OpRelation") -> bool:
        """TVM's IdentityRel unifies result and input both ways: a known result types an
        unknown input. True when that made the input known."""
        from rvmdbg.relay.ops.solvers import IDENTITY_RELATION_OPS
        if rel.opdef.name not in IDENTITY_RELATION_OPS or len(rel.arg_types) != 1:
            return False
        result = self.resolve(self.find(rel.result))
        arg = rel.arg_types[0]
        if has_unknown(result) or not has_unknown(self.resolve(self.find(arg))):
            return False
        self.expect(result, arg, at_node(rel.call.args[0], rel.call),
                     N_("operator `{op}` gives {expected} here, so its argument must be "
                        "{expected}, found {found}"), op=rel.opdef.name)
        return not has_unknown(self.resolve(self.find(arg)))

    def relation_hint(self, call: Call, arg_types: list) -> str | None:
        """When an int literal meets a float tensor (or back), how to write the literal."""
        dtypes = [t.dtype for t in arg_types if type(t) is TensorType]
        for a, t in zip(call.args, arg_types):
            if isinstance(a, Constant):
                for dtype in dtypes:
                    h = self.literal_hint(a, scalar(dtype)) if dtype != t.dtype else None
                    if h:
                        return h
        return None
