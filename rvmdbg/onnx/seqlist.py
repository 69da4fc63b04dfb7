"""Sequences whose length is known only at run time: the prelude's `List` (Cons/Nil).

A sequence is a Relay tuple while its length is known when the model is imported (see
`ops/sequence.py`). A `Loop` that carries a sequence (`SequenceInsert` in the body) makes it
grow once per iteration, a number known only when the model runs: such a loop-carried value
becomes a `List[Tensor[(?, ...), dtype]]` (its elements may differ in shape, so every dim is
`?`), and so does a tuple indexed by a position computed at run time (`SequenceAt(x, iter)`
in a loop body). On a List, `SequenceAt` is the prelude's `@nth`, `SequenceLength` `@length`,
`SequenceInsert` at the end `@concat(xs, Cons(x, Nil))`, and `ConcatFromSequence` a `@foldl`
of `concatenate` over the tail, starting from `@hd`. The prelude definitions used are added to
the imported module, as the loader adds those a Relay program reaches.
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relay import ast
from rvmdbg.relay.ast import Call, ConstructorRef, Function, GlobalVar, Var
from rvmdbg.relay.types import TensorType, TupleType, TypeCall

# a program using every prelude definition a run-time sequence needs: loading it merges them
_USES = """#[version = "0.0.5"]
def @main(%xs: List[float32], %n: int32, %f: fn(float32, float32) -> float32) {
  (@nth(%xs, %n), @length(%xs), @concat(%xs, Cons(1f, Nil)), @foldl(%f, @hd(%xs), @tl(%xs)))
}
"""


def ensure_prelude(module) -> None:
    """Add the prelude's List type, its constructors and the functions used on it to `module`
    (once)."""
    if "List" in module.type_defs and "nth" in module.functions:
        return
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    used = check_module(load_module(_USES, "<onnx sequences>"))
    for name, td in used.type_defs.items():
        module.type_defs.setdefault(name, td)
    for name, c in used.constructors.items():
        module.constructors.setdefault(name, c)
    for name, fn in used.functions.items():
        if name != "main":
            module.functions.setdefault(name, fn)


def is_list(g, expr) -> bool:
    t = g.type_of(expr)
    return isinstance(t, TypeCall) and t.name == "List"


def list_type(elem: TensorType) -> TypeCall:
    return TypeCall("List", (elem,))


def loose(t: TensorType) -> TensorType:
    """The element type a run-time sequence holds: the same rank and dtype, every dim `?`."""
    return TensorType(tuple([None] * len(t.shape)), t.dtype)


def elem_type(g, seq) -> TensorType | None:
    """The element type of a sequence expression (a tuple or a List) as a List holds it; None
    for an empty tuple."""
    t = g.type_of(seq)
    if isinstance(t, TypeCall) and t.name == "List":
        return t.args[0]
    if isinstance(t, TupleType):
        fields = [f for f in t.fields if isinstance(f, TensorType)]
        if not fields or len(fields) != len(t.fields):
            return None
        ranks = {len(f.shape) for f in fields}
        dtypes = {f.dtype for f in fields}
        if len(ranks) != 1 or len(dtypes) != 1:
            raise g.error(_("a sequence whose elements differ in rank or dtype cannot become a "
                            "run-time list: {type}").format(type=t))
        return loose(fields[0])
    return None


def _ctor(g, name: str) -> ConstructorRef:
    return ConstructorRef(name, g.module.constructors[name], g.span)


def _annotated(name: str, t) -> Var:
    v = Var(name, t)
    v.checked_type = t
    return v


def _loosened(g, x, t):
    """x seen as a value of type `t` (dims `?`): `let %elem: t = x; %elem`, so Cons's type
    argument is the loose type, not x's static one."""
    if g.type_of(x) == t:
        return x
    v = Var("elem", t)
    return ast.Let(v, x, v, g.span)


def nil(g, elem: TensorType):
    ensure_prelude(g.module)
    v = Var("empty", list_type(elem))
    return ast.Let(v, Call(_ctor(g, "Nil"), [], None, g.span), v, g.span)


def cons(g, x, xs, elem: TensorType):
    ensure_prelude(g.module)
    return Call(_ctor(g, "Cons"), [_loosened(g, x, elem), xs], None, g.span)


def as_list(g, seq, elem: TensorType | None = None):
    """A sequence expression as a List: a List stays, a tuple's fields are consed in order."""
    if is_list(g, seq):
        return seq
    elem = elem or elem_type(g, seq)
    if elem is None:
        raise g.error(_("the element type of an empty sequence is not known here"))
    if isinstance(seq, ast.Tuple):
        items = list(seq.fields)
    else:
        items = [g.get(seq, i) for i in range(len(g.type_of(seq).fields))]
    out = nil(g, elem)
    for x in reversed(items):
        out = cons(g, x, out, elem)
    return out


def _global(g, name: str) -> GlobalVar:
    ensure_prelude(g.module)
    return GlobalVar(name, g.span)


def _int32(g, pos):
    if g.dtype_of(pos) != "int32":
        pos = g.call("cast", [pos], dtype="int32")
    if g.shape_of(pos):
        pos = g.call("reshape", [pos], newshape=[])
    return pos


def length(g, xs):
    """`@length(xs)` as ONNX's int64 scalar."""
    n = Call(_global(g, "length"), [xs], None, g.span)
    return g.call("cast", [n], dtype="int64")


def at(g, xs, pos):
    """`@nth(xs, pos)`, a negative position counting from the end (as ONNX's SequenceAt)."""
    pos = _int32(g, pos)
    n = Call(_global(g, "length"), [xs], None, g.span)
    zero = g.const(np.asarray(0, "int32"))
    wrapped = g.call("where", [g.call("less", [pos, zero]), g.call("add", [pos, n]), pos])
    return Call(_global(g, "nth"), [xs, wrapped], None, g.span)


def append(g, xs, x):
    """xs with x inserted at its end: `@concat(xs, Cons(x, Nil))`."""
    elem = elem_type(g, xs)
    one = cons(g, x, nil(g, elem), elem)
    return Call(_global(g, "concat"), [xs, one], None, g.span)


def concat(g, xs, axis: int, new_axis: bool):
    """ConcatFromSequence on a List: the elements joined along `axis` (a new axis when
    `new_axis`), left to right; an empty List fails at run time (in `@hd`)."""
    elem = elem_type(g, xs)
    rank = len(elem.shape)
    if new_axis:
        if axis < 0:
            axis += rank + 1
        joined = TensorType(tuple([None] * (rank + 1)), elem.dtype)
    else:
        if axis < 0:
            axis += rank
        joined = elem

    def lift(x):
        return g.call("expand_dims", [x], axis=axis, num_newaxis=1) if new_axis else x

    acc, x = _annotated("acc", joined), _annotated("x", elem)
    step = Function([acc, x], g.call("concatenate", [g.tuple([acc, lift(x)])], axis=axis),
                    joined, span=g.span)
    first = _loosened(g, lift(Call(_global(g, "hd"), [xs], None, g.span)), joined)
    rest = Call(_global(g, "tl"), [xs], None, g.span)
    return Call(_global(g, "foldl"), [step, first, rest], None, g.span)


def loop_var(g, name: str, init, probe_out) -> Var:
    """The parameter of a Loop's recursive function for a loop-carried sequence: a
    List of the element type the initial value or the body's result shows."""
    elem = elem_type(g, init) or elem_type(g, probe_out)
    if elem is None:
        raise g.error(_("the element type of the loop-carried sequence {name} is not "
                        "known").format(name=name))
    return _annotated(name, list_type(elem))


def list_items(value) -> list | None:
    """The elements of a run-time List value (an ADTValue chain of Cons ending in Nil), or
    None when `value` is not one."""
    from rvmdbg.values import ADTValue
    out = []
    while isinstance(value, ADTValue) and value.con == "Cons" and len(value.fields) == 2:
        out.append(value.fields[0])
        value = value.fields[1]
    if isinstance(value, ADTValue) and value.con == "Nil":
        return out
    return None


__all__ = ["ensure_prelude", "is_list", "as_list", "at", "length", "append", "concat",
           "loop_var", "list_type", "elem_type", "list_items"]
