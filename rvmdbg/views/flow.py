"""View 1's data: the program at every step from source text to bytecode, and how the pieces
of one stage map onto the next.

Stages, in order: Source (the text), AST (the parsed tree as an outline), Typed AST (the same
with each node's type), one stage per pass of the pipeline (its printed program, lines it
changed marked), Bytecode (every function's listing) and Execution (where the VM is).

Every stage is a list of lines and a list of `FlowItem`s: a node (or an instruction) with its
region in those lines and its *origin*, the source span it carries. Passes keep the span of
what a node replaced, and the compiler maps every instruction to a span (`source_map`), so
the origin is what links stages: selecting an item in one stage finds, in any other, the items
with the same origin (`exact`), the nodes a pass made for it (`made`: no span of their own,
inside an item with that origin) and its surviving sub-expressions (`inside`).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from rvmdbg.relay import ast as A
from rvmdbg.debug.session import step_tag
from rvmdbg.relay.diagnostics import Span
from rvmdbg.views.text import pad
from rvmdbg.i18n import N_, _, ngettext

SOURCE, AST, TYPED, PASS, BYTECODE, EXECUTION = (
    "source", "ast", "typed", "pass", "bytecode", "execution")
TEXT = "text"   # a stage of lines with no items (a Relax program's TVMScript, the comparison)
MAX_INDENT = 40  # outline levels drawn as indentation; deeper ones carry their depth number


@dataclass
class FlowItem:
    """One selectable piece of a stage: a node of the program, or one instruction."""

    label: str
    origin: Span | None         # the source span it carries (inherited when `own` is False)
    own: bool                   # the node has a span of its own (False: a pass made it)
    region: tuple               # (line, col, end_line, end_col) in the stage's lines, 0-based,
    #                             end exclusive
    node: object = None
    location: tuple | None = None   # (func_index, pc) of an instruction

    @property
    def line(self) -> int:
        return self.region[0]


@dataclass
class Matches:
    """The items of one stage that correspond to an origin span (indices into its items)."""

    exact: list = field(default_factory=list)
    made: list = field(default_factory=list)
    inside: list = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.exact or self.made or self.inside)

    def all(self) -> list:
        return self.exact + self.made + self.inside

    def kind_of(self, index: int) -> str:
        if index in self.exact:
            return "exact"
        if index in self.made:
            return "made"
        if index in self.inside:
            return "inside"
        return ""


@dataclass
class FlowStage:
    name: str
    description: str
    kind: str
    lines: list
    items: list
    marks: list = field(default_factory=list)      # per line: "" | "+" added | "~" changed
    changed: dict = field(default_factory=dict)    # global -> "added" | "changed" | "removed"
    line_of: dict = field(default_factory=dict)    # (func_index, pc) -> line (bytecode)
    _by_origin: dict | None = field(default=None, repr=False)
    _by_line: dict | None = field(default=None, repr=False)

    def by_origin(self) -> dict:
        if self._by_origin is None:
            table: dict = {}
            for i, item in enumerate(self.items):
                if item.origin is not None:
                    table.setdefault(item.origin, []).append(i)
            self._by_origin = table
        return self._by_origin

    def items_on_line(self, line: int) -> list:
        """Indices of the items whose region starts on `line`, outermost first."""
        if self._by_line is None:
            table: dict = {}
            for i, item in enumerate(self.items):
                table.setdefault(item.region[0], []).append(i)
            self._by_line = table
        return self._by_line.get(line, [])

    def matches(self, origin: Span | None) -> Matches:
        """The items that correspond to a source span (see the module docstring)."""
        out = Matches()
        if origin is None:
            return out
        for i in self.by_origin().get(origin, ()):
            (out.exact if self.items[i].own else out.made).append(i)
        for i, item in enumerate(self.items):
            o = item.origin
            if item.own and o is not None and o != origin and span_within(o, origin):
                out.inside.append(i)
        return out

    def preferred(self, m: Matches, inside: bool = True) -> int | None:
        """The item to select for a match: an exact one first, then one a pass made (then,
        if allowed, a sub-expression); a variable or a let binding only when nothing else
        has the span; the earliest in the text, the outermost of those starting there."""
        for ids in (m.exact, m.made, m.inside if inside else []):
            if ids:
                def rank(i):
                    node = self.items[i].node
                    kind = 2 if isinstance(node, A.Var) else 1 if isinstance(node, A.Let) else 0
                    r = self.items[i].region
                    return (kind, r[0], r[1], -r[2], -r[3])   # the outermost at a place
                return min(ids, key=rank)
        return None

    def item_at(self, line: int, col: int) -> int | None:
        """The innermost item whose region contains (line, col)."""
        best, best_size = None, None
        for i, item in enumerate(self.items):
            if region_contains(item.region, line, col):
                size = region_size(item.region)
                if best_size is None or size <= best_size:
                    best, best_size = i, size
        return best

    def enclosing(self, index: int) -> int | None:
        """The smallest item strictly enclosing item `index` (its parent expression)."""
        region = self.items[index].region
        best, best_size = None, None
        for i, item in enumerate(self.items):
            if i == index or item.region == region:
                continue
            if region_within(region, item.region):
                size = region_size(item.region)
                if best_size is None or size < best_size:
                    best, best_size = i, size
        return best


# ---------------------------------------------------------------- spans and regions

def span_within(inner: Span, outer: Span) -> bool:
    """inner lies inside outer (same file)."""
    return (inner.file == outer.file
            and (inner.line, inner.col) >= (outer.line, outer.col)
            and (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col))


def span_region(span: Span) -> tuple:
    return (span.line - 1, span.col - 1, span.end_line - 1, span.end_col - 1)


def region_contains(region: tuple, line: int, col: int) -> bool:
    return (region[0], region[1]) <= (line, col) < (region[2], region[3])


def region_within(inner: tuple, outer: tuple) -> bool:
    return (outer[0], outer[1]) <= (inner[0], inner[1]) and \
        (inner[2], inner[3]) <= (outer[2], outer[3])


def region_size(region: tuple) -> tuple:
    return (region[2] - region[0], region[3] - region[1])


# ---------------------------------------------------------------- node labels

def pattern_text(p) -> str:
    if isinstance(p, A.PatternWildcard):
        return "_"
    if isinstance(p, A.PatternVar):
        return "%" + p.var.name
    if isinstance(p, A.PatternConstructor):
        if not p.patterns:
            return p.name
        return p.name + "(" + ", ".join(pattern_text(q) for q in p.patterns) + ")"
    if isinstance(p, A.PatternTuple):
        inner = ", ".join(pattern_text(q) for q in p.patterns)
        return "(" + inner + ("," if len(p.patterns) == 1 else "") + ")"
    return "?"


def constant_label(data) -> str:
    import numpy as np
    a = np.asarray(data)
    if a.ndim == 0:
        from rvmdbg.relay.printer import constant_text
        try:
            return constant_text(a)
        except ValueError:
            return str(a.item())
    return f"[{', '.join(str(d) for d in a.shape)}] {a.dtype.name}"


def node_label(e) -> str:
    """A one-line description of a node: its kind and what distinguishes it."""
    t = type(e)
    if t is A.Constant:
        return "Constant " + constant_label(e.data)
    if t is A.Var:
        return f"Var %{e.name}"
    if t is A.GlobalVar:
        return f"GlobalVar @{e.name}"
    if t is A.ConstructorRef:
        return f"Constructor {e.name}"
    if t is A.OpRef:
        return f"Op {e.name}"
    if t is A.Call:
        op = e.op
        if isinstance(op, A.OpRef):
            return f"Call {op.name}"
        if isinstance(op, A.GlobalVar):
            return f"Call @{op.name}"
        if isinstance(op, A.ConstructorRef):
            return f"Call {op.name}"
        if isinstance(op, A.Function) and op.is_primitive:
            return "Call primitive fn"
        return "Call"
    if t is A.Function:
        params = ", ".join("%" + p.name for p in e.params)
        return f"Function({params})" + (" Primitive" if e.is_primitive else "")
    if t is A.Let:
        return f"Let %{e.var.name}"
    if t is A.If:
        return "If"
    if t is A.Tuple:
        return f"Tuple of {len(e.fields)}"
    if t is A.TupleGetItem:
        return f"TupleGetItem .{e.index}"
    if t is A.Match:
        return "Match" if e.complete else "Match?"
    if t is A.Clause:
        return f"Clause {pattern_text(e.lhs)} =>"
    if t is A.RefCreate:
        return "RefCreate"
    if t is A.RefRead:
        return "RefRead"
    if t is A.RefWrite:
        return "RefWrite"
    return t.__name__


def _atomic_callee(e) -> bool:
    return isinstance(e, (A.OpRef, A.GlobalVar, A.ConstructorRef))


def _outline_children(e) -> list:
    """The children an outline shows under e (a call's named callee is in its label)."""
    if isinstance(e, A.Call):
        return ([] if _atomic_callee(e.op) else [e.op]) + list(e.args)
    if isinstance(e, A.Match):
        return [e.data, *e.clauses]
    if isinstance(e, A.Clause):
        return [e.rhs]
    return A.children(e)


# ---------------------------------------------------------------- walking a module

def module_nodes(module) -> list:
    """[(node, origin, own)] for every expression, Var and clause of every global, each once;
    a node with no span inherits the nearest enclosing node's."""
    out: list = []
    seen: set = set()
    for fn in module.functions.values():
        stack = [(fn, fn.span)]
        while stack:
            e, inherited = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            own = isinstance(e.span, Span)
            origin = e.span if own else inherited
            out.append((e, origin, own))
            kids = list(A.children(e)) if not isinstance(e, A.Clause) else [e.rhs]
            if isinstance(e, A.Function):
                kids = list(e.params) + kids
            elif isinstance(e, A.Let):
                kids = [e.var] + kids
            elif isinstance(e, A.Match):
                kids = [e.data, *e.clauses]
                for c in e.clauses:
                    kids.extend(A.pattern_vars(c.lhs))
            for k in reversed(kids):
                stack.append((k, origin))
    return out


# ---------------------------------------------------------------- names as shown

# The stages rvmdbg names itself (pass stages keep TVM's pass names in every language).
STAGE_TITLES = (N_("Source"), N_("AST"), N_("Typed AST"), N_("Bytecode"), N_("Execution"),
                N_("Same model: Relay VM"), N_("Same model: Relax VM"))
EXECUTION_DESCRIPTION = N_("the VM running the bytecode")
_REMOVED = re.compile(r"globals (.+) does not reach are removed")


def stage_title(name: str) -> str:
    """A stage's name in the language in use."""
    return _(name) if name in STAGE_TITLES else name


def stage_description(text: str) -> str:
    """A stage's one-line description in the language in use (descriptions are kept in
    English on the stages: tests and `compile --passes` read them)."""
    from rvmdbg.passes.pipeline import DESCRIPTIONS
    if text in DESCRIPTIONS or text in STAGE_DESCRIPTIONS:
        return _(text)
    m = _REMOVED.fullmatch(text)
    if m:
        return _("globals {entries} does not reach are removed").format(entries=m.group(1))
    return text


STAGE_DESCRIPTIONS = (N_("the program text"), N_("the parsed program as a tree"),
                      N_("every node with the type the checker gave it"),
                      N_("TVM bytecode, one function after another"), EXECUTION_DESCRIPTION,
                      N_("the Relax module as TVMScript (mod.script()): no spans link it to "
                         "the bytecode"),
                      N_("a dense layer and a ReLU, compiled by rvmdbg's Relay VM compiler"),
                      N_("the same model, compiled by TVM's relax.build: allocation, checks "
                         "and frees are builtin calls"))
TVMSCRIPT_DESCRIPTION = STAGE_DESCRIPTIONS[5]


# ---------------------------------------------------------------- building stages

def source_stage(module, text: str, source_file: str) -> FlowStage:
    lines = text.split("\n")
    items = []
    for node, origin, own in module_nodes(module):
        if own and origin.file == source_file:
            items.append(FlowItem(node_label(node), origin, True, span_region(origin), node))
    items.sort(key=lambda it: (it.region[0], it.region[1], -it.region[2], -it.region[3]))
    return FlowStage("Source", N_("the program text"), SOURCE, lines, items)


def outline_stage(module, typed: bool) -> FlowStage:
    """The module as an indented tree, one node per line (Let chains drawn flat)."""
    lines: list = []
    items: list = []
    origin_of = {id(n): (o, own) for n, o, own in module_nodes(module)}
    first_line: dict = {}
    for name, fn in module.functions.items():
        header = f"def @{name}"
        if typed and fn.checked_type is not None:
            header += f"  : {fn.checked_type}"
        stack = [(fn, 0, header)]
        while stack:
            e, depth, label = stack.pop()
            indent = "  " * min(depth, MAX_INDENT)
            if depth > MAX_INDENT:
                indent += f"[{depth}] "
            line = len(lines)
            if id(e) in first_line and not isinstance(e, A.Var):
                lines.append(f"{indent}{label or node_label(e)}  " + _("(shared: line {line})").format(line=first_line[id(e)] + 1))
                origin, own = origin_of.get(id(e), (None, False))
                items.append(FlowItem(label or node_label(e), origin, own,
                                      (line, len(indent), line, len(lines[-1])), e))
                continue
            first_line.setdefault(id(e), line)
            text = label or node_label(e)
            ty = getattr(e, "checked_type", None)
            if typed and ty is not None and not isinstance(e, A.Function):
                text += f"  : {ty}"
            lines.append(indent + text)
            origin, own = origin_of.get(id(e), (None, False))
            items.append(FlowItem(label or node_label(e), origin, own,
                                  (line, len(indent), line, len(lines[-1])), e))
            if isinstance(e, A.Var):
                continue
            kids = _outline_children(e)
            pending = []
            if isinstance(e, A.Let):
                # a let chain reads as a sequence: its body continues at the same depth
                pending.append((e.value, depth + 1, None))
                pending.append((e.body, depth, None))
            else:
                pending.extend((k, depth + 1, None) for k in kids)
            stack.extend(reversed(pending))
        lines.append("")
    return FlowStage("AST" if not typed else "Typed AST",
                     N_("the parsed program as a tree") if not typed else
                     N_("every node with the type the checker gave it"),
                     TYPED if typed else AST, lines, items)


def pass_stage(stage, previous_text: str | None, changed: dict) -> FlowStage:
    """One pass's output: its printed text, each node's region in it, changed lines marked."""
    from rvmdbg.views.positions import text_regions
    lines = stage.text.split("\n")
    regions = text_regions(stage.module, stage.text, f"<{stage.name}>")
    items = []
    for node, origin, own in module_nodes(stage.module):
        span = regions.get(id(node))
        if span is None:
            continue
        items.append(FlowItem(node_label(node), origin, own, span_region(span), node))
    items.sort(key=lambda it: (it.region[0], it.region[1], -it.region[2], -it.region[3]))
    return FlowStage(stage.name, stage.description, PASS, lines, items,
                     marks=line_marks(previous_text, lines), changed=changed)


def _definitions(lines: list) -> list:
    """(key, start, end) of each top-level definition of a printed module: a line at column
    0 opening `def @name` or `type Name` starts one (the version header is its own)."""
    out = []
    start, key = 0, ""
    for i, line in enumerate(lines):
        if line.startswith(("def @", "type ", "extern type ")):
            out.append((key, start, i))
            head = line.split("(", 1)[0].split("[", 1)[0].split(" {", 1)[0]
            start, key = i, head
    out.append((key, start, len(lines)))
    return out


def line_marks(previous_text: str | None, lines: list) -> list:
    """Per line of the new text: "+" inserted, "~" replaced, "" unchanged since the previous.
    Compared definition by definition (a pass rewrites few of them; a diff of the whole text
    would be quadratic in its length)."""
    marks = [""] * len(lines)
    if previous_text is None:
        return marks
    before = previous_text.split("\n")
    old = {key: before[a:b] for key, a, b in _definitions(before)}
    for key, a, b in _definitions(lines):
        new = lines[a:b]
        prev = old.get(key)
        if prev == new:
            continue
        if prev is None:
            marks[a:b] = ["+"] * (b - a)
            continue
        # long definitions: let difflib skip popular lines (`}`), or it goes quadratic
        matcher = difflib.SequenceMatcher(None, prev, new, autojunk=len(new) > 2000)
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
            if tag in ("insert", "replace"):
                for j in range(j1, j2):
                    marks[a + j] = "+" if tag == "insert" else "~"
    return marks


def bytecode_stage(exe) -> FlowStage:
    names = exe.function_names()
    kernels = exe.kernel_names()
    lines: list = []
    items: list = []
    line_of: dict = {}
    for fi, fn in enumerate(exe.functions):
        lines.append(f"VM Function[{fi}]: {fn.name}({', '.join(fn.params)})")
        for pc, ins in enumerate(fn.instructions):
            line = len(lines)
            lines.append(f"{pc:>4}: {ins.text(names, kernels)}")
            line_of[(fi, pc)] = line
            span = exe.span_at(fi, pc)
            items.append(FlowItem(f"@{fn.name} pc {pc}", span, span is not None,
                                  (line, 6, line, len(lines[-1])), ins, (fi, pc)))
        lines.append("")
    return FlowStage("Bytecode", N_("TVM bytecode, one function after another"), BYTECODE,
                     lines, items, line_of=line_of)


# ---------------------------------------------------------------- the model

@dataclass
class StageMatch:
    """How one stage answers a selection: the stage, its matching items, one-line summary."""

    index: int
    name: str
    matches: Matches
    summary: str


class FlowModel:
    """All stages of one program, built lazily, and the mapping between them."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._built: dict = {}
        module = ctx.module
        names: list = []
        kinds: list = []
        if module is not None and ctx.source_text is not None:
            names.append("Source")
            kinds.append(SOURCE)
        if module is not None:
            names += ["AST", "Typed AST"]
            kinds += [AST, TYPED]
            for st in ctx.stages[1:]:
                names.append(st.name)
                kinds.append(PASS)
        relax = getattr(ctx.exe, "kind", None) == "relax"
        if relax and ctx.source_text is not None:
            names.append("TVMScript")    # beside the bytecode it was built into
            kinds.append(TEXT)
        names += ["Bytecode", "Execution"]
        kinds += [BYTECODE, EXECUTION]
        if relax:   # the teaching comparison: one model, both VMs, side by side
            from rvmdbg.relax.compare import RELAX_STAGE, RELAY_STAGE
            names += [RELAY_STAGE, RELAX_STAGE]
            kinds += [TEXT, TEXT]
        self.names = names
        self.kinds = kinds
        self._compare = None

    def __len__(self) -> int:
        return len(self.names)

    def index_of(self, name: str) -> int:
        return self.names.index(name)

    @property
    def bytecode_index(self) -> int:
        return self.kinds.index(BYTECODE)

    @property
    def execution_index(self) -> int:
        return self.kinds.index(EXECUTION)

    def stage(self, index: int) -> FlowStage:
        """Stage `index` (built on first use; Execution is rebuilt by `execution_stage`)."""
        got = self._built.get(index)
        if got is None:
            got = self._built[index] = self._build(index)
        return got

    def _build(self, index: int) -> FlowStage:
        kind, ctx = self.kinds[index], self.ctx
        if kind == SOURCE:
            return source_stage(ctx.module, ctx.source_text, ctx.source_file)
        if kind in (AST, TYPED):
            stages = ctx.stages
            module = stages[0].module if stages else ctx.module
            return outline_stage(module, typed=kind == TYPED)
        if kind == PASS:
            from rvmdbg.passes.pipeline import changed
            stages = ctx.stages
            k = index - self.kinds.index(PASS) + 1   # stages[0] is the pipeline's input
            return pass_stage(stages[k], stages[k - 1].text, changed(stages[k - 1], stages[k]))
        if kind == BYTECODE:
            return bytecode_stage(ctx.exe)
        if kind == TEXT:
            return self._text_stage(self.names[index])
        return self.execution_stage()

    def _text_stage(self, name: str) -> FlowStage:
        if name == "TVMScript":
            return FlowStage(name, TVMSCRIPT_DESCRIPTION, TEXT,
                             self.ctx.source_text.split("\n"), [])
        from rvmdbg.relax import compare
        if self._compare is None:
            left, right = compare.relay_side(), compare.relax_side()
            relay_sum, relax_sum = compare.summary_lines(left, right)
            # the Relay side also says where each of its opcodes' work went on the Relax VM
            self._compare = {compare.RELAY_STAGE: compare.stage_lines(left, relay_sum)
                             + ["", *compare.moved_lines()],
                             compare.RELAX_STAGE: compare.stage_lines(right, relax_sum)}
        description = (compare.RELAY_STAGE_DESCRIPTION if name == compare.RELAY_STAGE
                       else compare.RELAX_STAGE_DESCRIPTION)
        return FlowStage(name, description, TEXT, self._compare[name], [])

    # ---- selection ----

    def follow(self, origin: Span | None) -> list[StageMatch]:
        """For a selected origin: every stage's matching items and a one-line summary."""
        out = []
        for i, name in enumerate(self.names):
            if self.kinds[i] in (EXECUTION, TEXT):   # TEXT stages have no items to match
                continue
            st = self.stage(i)
            m = st.matches(origin)
            out.append(StageMatch(i, name, m, self.summary(st, m)))
        return out

    @staticmethod
    def summary(stage: FlowStage, m: Matches) -> str:
        if not m:
            return _("nothing (removed, or not in this stage)")
        if stage.kind == BYTECODE:
            pcs = [stage.items[i].location for i in m.exact + m.made]
            inside = len(m.inside)
            if not pcs:
                return ngettext("{n} instruction of sub-expressions",
                                "{n} instructions of sub-expressions", inside).format(n=inside)
            return _pc_ranges(pcs, stage.items, m) + (
                " " + _("(+{n} of sub-expressions)").format(n=inside) if inside else "")
        parts = []
        if m.exact:
            labels = []
            for i in m.exact:
                lab = stage.items[i].label
                if lab not in labels:
                    labels.append(lab)
            parts.append(", ".join(labels[:3]) + (", ..." if len(labels) > 3 else ""))
        if m.made:
            parts.append(ngettext("{n} node made by passes", "{n} nodes made by passes",
                                  len(m.made)).format(n=len(m.made)))
        if m.inside and not m.exact:
            parts.append(ngettext("{n} sub-expression", "{n} sub-expressions",
                                  len(m.inside)).format(n=len(m.inside)))
        return "; ".join(parts)

    def instructions_for(self, origin: Span | None) -> list:
        """(func_index, pc) of the instructions made from exactly this origin."""
        st = self.stage(self.bytecode_index)
        m = st.matches(origin)
        return [st.items[i].location for i in m.exact + m.made]

    def origin_at(self, func_index: int, pc: int) -> Span | None:
        return self.ctx.exe.span_at(func_index, pc)

    # ---- execution ----

    def execution_stage(self, recent: list | None = None) -> FlowStage:
        """Where the session is: the stop, the instruction, its source expression and what
        that expression is in every stage; then the recent stops (newest last)."""
        session = self.ctx.session
        lines: list = []
        items: list = []
        if session is None:
            lines.append(_("not running: the program has not started"))
            st = FlowStage("Execution", EXECUTION_DESCRIPTION, EXECUTION, lines, items)
            self._built[self.execution_index] = st
            return st
        event = getattr(session, "last_event", None)
        loc = session.location()
        if loc is None:
            lines.append(_("finished: {what}").format(
                what=event.line() if event is not None else _("the program returned")))
        else:
            fi, pc = loc
            ins = session.current_instruction()
            fname = session.func_name(fi)
            text = ins.text(self.ctx.exe.function_names(), self.ctx.exe.kernel_names()) \
                if ins is not None else "?"
            lines.append(f"{step_tag(session.step_count)} @{fname} pc={pc}: {text}")
            span = session.current_span()
            items.append(FlowItem(f"@{fname} pc {pc}", span, span is not None,
                                  (0, 0, 0, len(lines[0])), ins, loc))
            lines.append("")
            if span is None:
                lines.append(_("this instruction has no source span"))
            else:
                lines.append(_("from {place}").format(place=span))
                lines.extend(quote(span, self.ctx.source_text, self.ctx.source_file))
                lines.append("")
                lines.append(_("the same expression in every stage:"))
                for sm in self.follow(span):
                    lines.append(f"  {pad(stage_title(sm.name), 21)} {sm.summary}")
        if recent:
            lines.append("")
            lines.append(_("recent stops:"))
            lines.extend("  " + r for r in recent)
        st = FlowStage("Execution", EXECUTION_DESCRIPTION, EXECUTION, lines, items)
        self._built[self.execution_index] = st
        return st


def quote(span: Span, text: str | None, source_file: str | None) -> list:
    """The span's first source line with a caret line under it (nothing for other files)."""
    if text is None or span.file != source_file:
        return [f"  (in {span.file})"]
    src = text.split("\n")
    if not 1 <= span.line <= len(src):
        return []
    line = src[span.line - 1].rstrip("\r").expandtabs(1)
    gutter = f"  {span.line:>4} | "
    width = (span.end_col - span.col) if span.end_line == span.line else len(line) - span.col + 1
    return [gutter + line, " " * (len(gutter) + span.col - 1) + "^" + "~" * (max(1, width) - 1)]


def _pc_ranges(locs: list, items: list, m: Matches) -> str:
    by_fn: dict = {}
    for fi, pc in locs:
        by_fn.setdefault(fi, []).append(pc)
    parts = []
    for fi, pcs in by_fn.items():
        pcs.sort()
        runs, start, prev = [], pcs[0], pcs[0]
        for p in pcs[1:]:
            if p == prev + 1:
                prev = p
                continue
            runs.append((start, prev))
            start = prev = p
        runs.append((start, prev))
        name = next(items[i].label.split(" pc ")[0] for i in m.exact + m.made
                    if items[i].location[0] == fi)
        text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
        parts.append(f"{name} pc {text}")
    n = len(locs)
    return ngettext("{n} instruction: {places}", "{n} instructions: {places}", n).format(
        n=n, places="; ".join(parts))


__all__ = ["FlowModel", "FlowStage", "FlowItem", "Matches", "StageMatch", "node_label",
           "pattern_text", "module_nodes", "span_within", "quote", "line_marks",
           "SOURCE", "AST", "TYPED", "PASS", "BYTECODE", "EXECUTION"]
