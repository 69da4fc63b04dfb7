"""View 3's match decision trees: which instructions test which part of the scrutinee, which
clause the current value takes, and what its variables are bound to.

TVM compiles `match` clause by clause (see `rvmdbg.vm.compiler`): each clause is a run of
tests that fail to the next clause, its body, `move $m $r; goto end`; after the last clause a
`fatal`. A constructor pattern at some position of the value emits `get_tag`, `load_consti
TAG`, `if` (failing to the next clause); every non-wildcard sub-pattern first fetches its
field with `get_field`; variables bind the register holding their part.

`find_decision_trees` recovers this from the bytecode: a `fatal` at F and the gotos to F+1
that follow a move are the clause exits; clause k+1 starts after exit k. The clauses'
patterns come from the `Match` node the compiler was given (the last pass stage), and each
clause's instructions are checked to be exactly what its pattern compiles to; the first
clause's start, which no exit marks, is where that check succeeds (its failing `if`s jump to
the second clause). `evaluate` runs the tests on a value without the VM.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rvmdbg.relay import ast as A
from rvmdbg.values import ADTValue
from rvmdbg.vm import bytecode as bc
from rvmdbg.i18n import _

GET_TAG, LOAD_CONSTI, IF, GET_FIELD = "get_tag", "load_consti", "if", "get_field"
_KINDS = {bc.GetTag: GET_TAG, bc.LoadConsti: LOAD_CONSTI, bc.If: IF, bc.GetField: GET_FIELD}


@dataclass
class Test:
    """One instruction of a clause's pattern test."""

    pc: int
    op: str                     # GET_TAG, LOAD_CONSTI, IF or GET_FIELD
    path: tuple                 # field indices from the scrutinee to the part it looks at
    register: int               # the register it writes (the test register for an `if`)
    constructor: str | None = None   # LOAD_CONSTI and IF: the constructor tested for
    tag: int | None = None
    field: int | None = None    # GET_FIELD: the field index


@dataclass
class Binding:
    name: str
    register: int | None
    path: tuple


@dataclass
class ClauseTests:
    index: int                  # 0-based
    pattern: str
    span: object
    start: int | None           # first test pc (None: the pattern tests nothing)
    tests: list
    body_pc: int | None         # first pc after the tests
    exit_pc: int                # the clause's `goto end`
    bindings: list = field(default_factory=list)
    pattern_node: object = None

    @property
    def always_matches(self) -> bool:
        return not any(t.op == IF for t in self.tests)


@dataclass
class DecisionTree:
    func_index: int
    span: object                # the match's span
    scrutinee: int | None       # the register holding the value matched on
    clauses: list
    fatal_pc: int
    end_pc: int
    match: object = None        # the Match node, when found

    @property
    def first_pc(self) -> int:
        starts = [c.start for c in self.clauses if c.start is not None]
        return min(starts) if starts else self.clauses[0].exit_pc

    def contains(self, pc: int) -> bool:
        """pc is one of the match's own instructions: a test, a clause exit or the fatal."""
        if pc == self.fatal_pc:
            return True
        for c in self.clauses:
            if pc in (c.exit_pc, c.exit_pc - 1) or any(t.pc == pc for t in c.tests):
                return True
        return False

    def within(self, pc: int) -> bool:
        """pc lies between the first test and the fatal (bodies included)."""
        return self.first_pc <= pc <= self.fatal_pc

    def clause_at(self, pc: int) -> int | None:
        """The clause whose tests or body hold pc."""
        for c in self.clauses:
            lo = c.start if c.start is not None else (c.body_pc or c.exit_pc)
            if lo <= pc <= c.exit_pc:
                return c.index
        return None


# ---------------------------------------------------------------- what a pattern compiles to

def expected_tests(p, path: tuple = ()) -> list:
    """The (op, path, extra) sequence the compiler emits for pattern p at `path`."""
    out: list = []
    if isinstance(p, A.PatternConstructor):
        con = p.constructor
        tag = con.tag if con is not None else None
        out += [(GET_TAG, path, None), (LOAD_CONSTI, path, (p.name, tag)),
                (IF, path, (p.name, tag))]
    elif not isinstance(p, A.PatternTuple):
        return out
    for i, sub in enumerate(p.patterns):
        if isinstance(sub, A.PatternWildcard):
            continue
        out.append((GET_FIELD, path, i))
        out += expected_tests(sub, path + (i,))
    return out


def pattern_bindings(p, path: tuple = ()) -> list:
    """(var name, path) of every variable the pattern binds."""
    if isinstance(p, A.PatternVar):
        return [(p.var.name, path)]
    if isinstance(p, (A.PatternConstructor, A.PatternTuple)):
        return [b for i, sub in enumerate(p.patterns) for b in pattern_bindings(sub, path + (i,))]
    return []


def fit_clause(code: list, start: int, expected: list, fail_to: int | None,
               root: int | None) -> tuple | None:
    """(tests, root register) if code[start:] is exactly `expected` (registers chained as the
    compiler chains them, `if`s failing to `fail_to`), else None."""
    if start < 0 or start + len(expected) > len(code):
        return None
    regs: dict = {}     # path -> register holding that part
    if root is not None:
        regs[()] = root
    tests = []
    tag_reg = const_reg = None
    for k, (op, path, extra) in enumerate(expected):
        pc = start + k
        ins = code[pc]
        if _KINDS.get(type(ins)) != op:
            return None
        if op == GET_TAG:
            if path in regs and regs[path] != ins.object:
                return None
            regs.setdefault(path, ins.object)
            tag_reg = ins.dst
            tests.append(Test(pc, op, path, ins.dst))
        elif op == LOAD_CONSTI:
            name, tag = extra
            if tag is not None and ins.value != tag:
                return None
            const_reg = ins.dst
            tests.append(Test(pc, op, path, ins.dst, name, ins.value))
        elif op == IF:
            name, tag = extra
            if (ins.test, ins.target) != (tag_reg, const_reg) or ins.true_offset != 1:
                return None
            if fail_to is not None and pc + ins.false_offset != fail_to:
                return None
            tests.append(Test(pc, op, path, ins.test, name, tag))
        else:  # GET_FIELD
            if ins.field_index != extra:
                return None
            if path in regs and regs[path] != ins.object:
                return None
            regs.setdefault(path, ins.object)
            regs[path + (extra,)] = ins.dst
            tests.append(Test(pc, op, path + (extra,), ins.dst, field=extra))
    return tests, regs


# ---------------------------------------------------------------- finding the matches

def _match_nodes(fn) -> list:
    out, seen, stack = [], set(), [fn]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, A.Match):
            out.append(e)
        stack.extend(reversed(A.children(e)))
    return out


def clause_exits(code: list, fatal_pc: int) -> list:
    """pcs of the `goto end` of each clause of the match whose `fatal` is at fatal_pc."""
    end = fatal_pc + 1
    return [pc for pc, ins in enumerate(code[:fatal_pc])
            if isinstance(ins, bc.Goto) and pc + ins.pc_offset == end and pc > 0
            and isinstance(code[pc - 1], bc.Move)]


def find_decision_trees(exe, func_index: int, module=None) -> list:
    """Every match of one function, in pc order. `module` is the module the bytecode was
    compiled from (the pipeline's last stage); without it the patterns are unknown and only
    the later clauses' tests are found."""
    fn = exe.functions[func_index]
    code = fn.instructions
    ast_fn = module.functions.get(fn.name) if module is not None else None
    nodes = _match_nodes(ast_fn) if ast_fn is not None else []
    used: set = set()
    trees = []
    for fatal_pc, ins in enumerate(code):
        if not isinstance(ins, bc.Fatal):
            continue
        exits = clause_exits(code, fatal_pc)
        if not exits:
            continue
        span = exe.span_at(func_index, fatal_pc)
        candidates = [m for m in nodes if len(m.clauses) == len(exits) and id(m) not in used]
        candidates.sort(key=lambda m: m.span != span)  # the one with the fatal's span first
        tree = None
        for m in candidates:
            tree = _fit_match(code, func_index, fatal_pc, exits, m, span)
            if tree is not None:
                used.add(id(m))
                break
        if tree is None:
            tree = _bytecode_only(code, func_index, fatal_pc, exits, span)
        trees.append(tree)
    trees.sort(key=lambda t: t.first_pc)
    return trees


def _fit_match(code, func_index, fatal_pc, exits, match, span) -> DecisionTree | None:
    k = len(exits)
    starts = [None] + [g + 1 for g in exits[:-1]]
    fail_targets = [g + 1 for g in exits[:-1]] + [fatal_pc]
    expected = [expected_tests(c.lhs) for c in match.clauses]
    root = None
    fitted: list = [None] * k
    for j in range(1, k):
        got = fit_clause(code, starts[j], expected[j], fail_targets[j], root)
        if got is None:
            return None
        fitted[j] = got
        if expected[j]:
            root = got[1].get((), root)
    if expected[0]:
        limit = exits[0] - 1
        for s in range(0, max(0, limit - len(expected[0]) + 1)):
            got = fit_clause(code, s, expected[0], fail_targets[0], root)
            if got is not None:
                fitted[0] = got
                starts[0] = s
                root = got[1].get((), root)
                break
        else:
            return None
    else:
        fitted[0] = ([], {} if root is None else {(): root})
    clauses = []
    for j, c in enumerate(match.clauses):
        tests, regs = fitted[j]
        if root is not None:
            regs.setdefault((), root)
        start = starts[j] if tests else None
        body = (starts[j] + len(tests)) if starts[j] is not None else None
        binds = [Binding(name, regs.get(path), path) for name, path in pattern_bindings(c.lhs)]
        from rvmdbg.views.flow import pattern_text
        clauses.append(ClauseTests(j, pattern_text(c.lhs), c.span, start, tests, body,
                                   exits[j], binds, c.lhs))
    return DecisionTree(func_index, match.span or span, root, clauses, fatal_pc, fatal_pc + 1,
                        match)


def _bytecode_only(code, func_index, fatal_pc, exits, span) -> DecisionTree:
    """Without the Match node: each clause's tests are the run of test instructions at its
    start (the first clause's: the run before its first `if` failing to the second)."""
    k = len(exits)
    fail_targets = [g + 1 for g in exits[:-1]] + [fatal_pc]
    clauses = []
    root = None
    for j in range(k):
        if j > 0:
            start = exits[j - 1] + 1
        else:
            ifs = [pc for pc in range(exits[0]) if isinstance(code[pc], bc.If)
                   and pc + code[pc].false_offset == fail_targets[0]]
            start = ifs[0] if ifs else None
            while start is not None and start > 0 and type(code[start - 1]) in _KINDS \
                    and not isinstance(code[start - 1], bc.If):
                start -= 1
        tests = []
        pc = start
        while pc is not None and pc < exits[j] and type(code[pc]) in _KINDS:
            ins = code[pc]
            if isinstance(ins, bc.If) and pc + ins.false_offset != fail_targets[j]:
                break
            op = _KINDS[type(ins)]
            reg = ins.test if op == IF else ins.dst
            tests.append(Test(pc, op, (), reg, None,
                              ins.value if op == LOAD_CONSTI else None,
                              ins.field_index if op == GET_FIELD else None))
            if root is None and op in (GET_TAG, GET_FIELD):
                root = ins.object
            pc += 1
        clauses.append(ClauseTests(j, "?", None, start if tests else None, tests,
                                   pc if tests else None, exits[j]))
    return DecisionTree(func_index, span, root, clauses, fatal_pc, fatal_pc + 1)


def decision_tree_at(trees: list, pc: int) -> DecisionTree | None:
    """The innermost match whose instructions (tests, exits, fatal) include pc, or else the
    innermost one whose range includes it."""
    own = [t for t in trees if t.contains(pc)]
    if own:
        return max(own, key=lambda t: t.first_pc)
    around = [t for t in trees if t.within(pc)]
    return max(around, key=lambda t: t.first_pc) if around else None


# ---------------------------------------------------------------- running the tests

@dataclass
class Evaluation:
    """The outcome of matching one value: per clause "match", "fail" or "not reached";
    per test pc True (passes), False (fails) or None (not reached); bound values."""

    chosen: int | None
    clause_results: list
    test_results: dict
    failed_at: dict                 # clause index -> pc of the failing `if`
    bound: dict                     # var name -> value (chosen clause)
    parts: dict                     # (clause, path) -> value reached


def part(value, path: tuple):
    """The sub-value at a field path, or None when the path does not exist."""
    v = value
    for i in path:
        if not isinstance(v, ADTValue) or i >= len(v.fields):
            return None
        v = v.fields[i]
    return v


def evaluate(tree: DecisionTree, value) -> Evaluation:
    results, tests, failed, bound, parts = [], {}, {}, {}, {}
    chosen = None
    for c in tree.clauses:
        if chosen is not None:
            results.append("not reached")
            for t in c.tests:
                tests[t.pc] = None
            continue
        ok = True
        for t in c.tests:
            if not ok:
                tests[t.pc] = None
                continue
            v = part(value, t.path)
            parts[(c.index, t.path)] = v
            if t.op == IF:
                passes = isinstance(v, ADTValue) and t.tag is not None and v.tag == t.tag
                tests[t.pc] = passes
                if not passes:
                    ok = False
                    failed[c.index] = t.pc
            else:
                tests[t.pc] = True
        if ok:
            chosen = c.index
            results.append("match")
            for b in c.bindings:
                bound[b.name] = part(value, b.path)
        else:
            results.append("fail")
    return Evaluation(chosen, results, tests, failed, bound, parts)


__all__ = ["Test", "Binding", "ClauseTests", "DecisionTree", "Evaluation", "expected_tests",
           "pattern_bindings", "fit_clause", "clause_exits", "find_decision_trees",
           "decision_tree_at", "evaluate", "part", "GET_TAG", "LOAD_CONSTI", "IF", "GET_FIELD"]


# ---------------------------------------------------------------- drawing

def _short(v, width: int = 40) -> str:
    if v is None:
        return "unset"
    from rvmdbg.debug.heap import value_text
    return value_text(v, width)


def _con_of_tag(tree: DecisionTree, path: tuple, tag) -> str | None:
    """The constructor name some clause tests for at this path with this tag."""
    for c in tree.clauses:
        for t in c.tests:
            if t.op == IF and t.path == path and t.tag == tag and t.constructor:
                return t.constructor
    return None


def draw_decision_tree(tree: DecisionTree, registers=None, current_pc: int | None = None,
                       code=None, symbols=None) -> list:
    """The match as a tree of clauses and their test instructions, annotated with what each
    test does on the scrutinee's current value and which clause it selects.

    Roles: "header", "taken" (the clause that will match, tests that pass), "failed" (a
    clause that fails, the test that fails it), "pending" (not reached), "current" (the pc
    about to run), "done" (tests already run), "binding", "plain"."""
    from rvmdbg.views.text import UNICODE
    symbols = symbols or UNICODE
    value = None
    if registers is not None and tree.scrutinee is not None and tree.scrutinee < len(registers):
        value = registers[tree.scrutinee]
    ev = evaluate(tree, value) if value is not None else None
    here = tree.clause_at(current_pc) if current_pc is not None else None
    rows: list = []
    scrut = f"${tree.scrutinee}" if tree.scrutinee is not None else "$?"
    rows.append([(_("match at {place} on {value}").format(place=tree.span, value=scrut)
                  if tree.span is not None else _("match on {value}").format(value=scrut),
                  "header")])
    if value is None:
        rows.append([("  " + _("the value is not computed yet"), "pending")])
    else:
        rows.append([(f"  {scrut} = {_short(value, 60)}", "plain")])
        if ev.chosen is not None:
            c = tree.clauses[ev.chosen]
            rows.append([(f"  {symbols.arrow} " + _("clause {n} ({pattern}) matches").format(
                n=ev.chosen + 1, pattern=c.pattern), "taken")])
        else:
            rows.append([(f"  {symbols.arrow} " + _("no clause matches: fatal at pc {pc}").format(
                pc=tree.fatal_pc), "failed")])
    n = len(tree.clauses)
    for c in tree.clauses:
        last = c.index == n - 1
        branch = symbols.last if last else symbols.tee
        inner = "   " if last else symbols.bar + " "
        if ev is None:
            state, mark = "plain", ""
        else:
            res = ev.clause_results[c.index]
            state = {"match": "taken", "fail": "failed"}.get(res, "pending")
            mark = {"match": f"{symbols.taken} " + _("matches"),
                    "fail": f"{symbols.failed} " + _("fails")}.get(
                res, f"{symbols.pending} " + _("not reached"))
        head = _("clause {n}").format(n=c.index + 1) + f"  {c.pattern}"
        if here == c.index:
            head += "   " + _("(executing)")
        rows.append([(branch + " ", "plain"), (head, state)] +
                    ([("   " + mark, state)] if mark else []))
        if not c.tests:
            rows.append([(inner + "   ", "plain"), (_("no tests: this pattern always matches"),
                                                    "plain")])
        binders = {b.path: b.name for b in c.bindings}
        for t in c.tests:
            ins_text = code[t.pc].text() if code is not None else t.op
            is_current = t.pc == current_pc
            done = current_pc is not None and here is not None and (
                c.index < here or (c.index == here and t.pc < current_pc))
            mark = symbols.current if is_current else " "
            note, role = _test_note(tree, t, ev, c.index, binders, symbols)
            step_role = "current" if is_current else ("done" if done else "plain")
            rows.append([(inner + f" {mark}{t.pc:>4}  ", step_role),
                         (f"{ins_text:<26}", step_role), ("  " + note, role)])
        if ev is not None and ev.chosen == c.index and c.bindings:
            bound = ", ".join(f"%{b.name} = ${b.register if b.register is not None else '?'}"
                              f" = {_short(ev.bound.get(b.name), 30)}" for b in c.bindings)
            rows.append([(inner + "   ", "plain"), (_("bound: {names}").format(names=bound), "binding")])
        elif c.bindings:
            names = ", ".join(f"%{b.name} (${b.register if b.register is not None else '?'})"
                              for b in c.bindings)
            rows.append([(inner + "   ", "plain"), (_("binds {names}").format(names=names), "plain")])
        if c.body_pc is not None:
            rows.append([(inner + "   ", "plain"), (_("body from pc {body}, exit at pc {exit}").format(
                body=c.body_pc, exit=c.exit_pc), "plain")])
    return rows


def _test_note(tree, t: Test, ev: Evaluation | None, clause: int, binders: dict, symbols):
    """What one test instruction does on the current value, and its role."""
    if t.op == LOAD_CONSTI:
        return _("{constructor} has tag {tag}").format(constructor=t.constructor or '?', tag=t.tag), "plain"
    if t.op == GET_FIELD:
        name = binders.get(t.path)
        what = _("field {n}").format(n=t.field) + (f" {symbols.arrow} %{name}" if name else "")
        return what, "binding" if name else "plain"
    if ev is None:
        return (_("tag of the value") if t.op == GET_TAG else
                _("equal: go on; else {arrow} next clause").format(arrow=symbols.arrow)), "plain"
    result = ev.test_results.get(t.pc)
    v = ev.parts.get((clause, t.path))
    if result is None:
        return f"{symbols.pending} " + _("not reached"), "pending"
    if t.op == GET_TAG:
        tag = getattr(v, "tag", None)
        con = getattr(v, "con", None) or _con_of_tag(tree, t.path, tag)
        return _("tag {tag}").format(tag=tag) + (f" ({con})" if con else ""), "plain"
    tag = getattr(v, "tag", None)
    if result:
        return f"{tag} == {t.tag} {symbols.taken} " + _("go on"), "taken"
    return f"{tag} != {t.tag} {symbols.failed} {symbols.arrow} " + _("next clause"), "failed"


__all__ += ["draw_decision_tree"]
