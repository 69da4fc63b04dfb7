"""Breakpoints, watchpoints and the tiny condition language they share.

A breakpoint is a spec the user typed, resolved against the executable to a set of
(function index, pc) locations where execution stops before the instruction runs:

- `@f:PC`   one instruction;              - `@f`        the function's entry (pc 0);
- `LINE`    a Relay source line: every instruction where control enters the line (pc 0, or
            a pc some predecessor in the control-flow graph reaches from another line), so a
            line stops once per visit rather than once per instruction; a line with no code
            moves to the next line that has some;
- `op:NAME` every instruction of an opcode (`op:AllocADT` or TVM's `op:alloc_data`);
- a kernel: `NAME` (`fused_nn_conv2d_3`, its module prefix `vm_mod_` optional),
  `PackedFunc[N]` (as the listing prints it) or `kernel:TEXT` (every kernel whose name
  contains TEXT): every `invoke_packed` that calls it.

Each may carry a condition over the stopped frame's registers, e.g. `$3 == 0 and $1 != Nil`:
comparisons of register scalars (or an ADT value's constructor) with literals or registers,
`+ -`, `and or not` (also `&& || !`), parentheses. It is parsed into a small tree, which is
compiled once into nested closures over the register file (`compile_condition`); nothing is
ever handed to Python's eval.

A breakpoint may also carry a hit condition over the number of times it was hit going forward
(`5` or `== 5`: the fifth hit only; `>= 5`, `> 5`, `< 5`, `<= 5`; `% 5`: every fifth), and a
log message: a log point prints its message (`{$3}` and `{%n}` show a register's value) to
the session's `on_log` and does not stop.

Watchpoints watch one register of one activation (frame): they stop right after a write to
it, or only after a write that changes its value, or (read watchpoints) right before an
instruction that reads it. Breakpoints and watchpoints share one numbering, as in gdb.
Neither slows a run down: the session makes them traps (traps.py).
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field

import numpy as np

from rvmdbg.debug.heap import value_text
from rvmdbg.i18n import _
from rvmdbg.scalars import SCALAR_TYPES
from rvmdbg.values import ADTValue, values_equal
from rvmdbg.vm import bytecode as bc


class BreakpointError(ValueError):
    """A breakpoint spec, condition or number that cannot be used; the message says why."""


class ConditionError(Exception):
    """A condition that cannot be evaluated in the stopped state (empty register, a tensor
    with many elements, an ADT compared with a number)."""


# ------------------------------------------------------------------ conditions

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<reg>\$\d+)
  | (?P<num>\d+\.\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|\d+(?:e[-+]?\d+)?)(?P<suffix>f(?:16|32|64)?|i(?:8|16|32|64)|u(?:8|16|32|64))?
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>!()+\-])
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
""", re.VERBOSE)

_KEYWORDS = {"and": "&&", "or": "||", "not": "!"}
_COMPARE = {"==", "!=", "<", "<=", ">", ">="}


def _whole(digits: str, what: str) -> int:
    """A whole number from a breakpoint spec or condition; one of thousands of digits is a
    message, not Python's int() error."""
    if len(digits) > 18:
        raise BreakpointError(_("{what} too large: {start}... ({n} digits)").format(
            what=what, start=digits[:12], n=len(digits)))
    return int(digits)


def _tokenize(text: str) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise BreakpointError(_("condition: unexpected {char} at column {col}").format(
                char=repr(text[pos]), col=pos + 1))
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        if kind in ("num", "suffix"):
            digits = m.group("num")
            suffix = m.group("suffix") or ""
            is_float = suffix.startswith("f") or any(c in digits for c in ".e")
            out.append(("lit", float(digits) if is_float else _whole(digits, "condition: number")))
        elif kind == "reg":
            out.append(("reg", _whole(m.group("reg")[1:], "condition: register number")))
        elif kind == "op":
            out.append(("op", m.group("op")))
        else:
            word = m.group("name")
            if word in _KEYWORDS:
                out.append(("op", _KEYWORDS[word]))
            elif word in ("True", "true"):
                out.append(("lit", True))
            elif word in ("False", "false"):
                out.append(("lit", False))
            else:
                out.append(("con", word))  # a constructor name: compared with an ADT value
    return out


class _Parser:
    """Recursive descent: or -> and -> not -> comparison -> sum -> unary -> atom."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None:
            raise BreakpointError(_("condition {text} ends too early").format(text=repr(self.text)))
        if value is not None and tok != ("op", value):
            raise BreakpointError(_("condition {text}: expected {expected}, found {found}").format(
                text=repr(self.text), expected=repr(value), found=repr(tok[1])))
        self.i += 1
        return tok

    def parse(self):
        if not self.tokens:
            raise BreakpointError(_("empty condition"))
        tree = self.disjunction()
        if self.i != len(self.tokens):
            raise BreakpointError(_("condition {text}: unexpected {found}").format(
                text=repr(self.text), found=repr(self.peek()[1])))
        return tree

    def disjunction(self):
        left = self.conjunction()
        while self.peek() == ("op", "||"):
            self.take()
            left = ("or", left, self.conjunction())
        return left

    def conjunction(self):
        left = self.negation()
        while self.peek() == ("op", "&&"):
            self.take()
            left = ("and", left, self.negation())
        return left

    def negation(self):
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.negation())
        return self.comparison()

    def comparison(self):
        left = self.sum()
        tok = self.peek()
        if tok[0] == "op" and tok[1] in _COMPARE:
            self.take()
            right = self.sum()
            left = ("cmp", tok[1], left, right)
            nxt = self.peek()
            if nxt[0] == "op" and nxt[1] in _COMPARE:
                raise BreakpointError(_("condition {text}: chain comparisons with `and`").format(
                    text=repr(self.text)))
        return left

    def sum(self):
        left = self.unary()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            left = ("arith", op, left, self.unary())
        return left

    def unary(self):
        if self.peek() == ("op", "-"):
            self.take()
            return ("neg", self.unary())
        return self.atom()

    def atom(self):
        kind, value = self.take()
        if kind == "op" and value == "(":
            inner = self.disjunction()
            self.take(")")
            return inner
        if kind in ("lit", "reg", "con"):
            return (kind, value)
        raise BreakpointError(_("condition {text}: unexpected {found}").format(
            text=repr(self.text), found=repr(value)))


def _registers_used(tree) -> set[int]:
    if tree[0] == "reg":
        return {tree[1]}
    out: set[int] = set()
    for part in tree[1:]:
        if isinstance(part, tuple):
            out |= _registers_used(part)
    return out


class Condition:
    """A parsed condition; `evaluate(registers)` -> bool or raises ConditionError.
    `holds` is the same test compiled once into closures (what traps call)."""

    def __init__(self, text: str):
        self.text = text.strip()
        self.tree = _Parser(self.text).parse()
        self.registers = _registers_used(self.tree)
        self.holds = compile_condition(self.tree)

    def evaluate(self, registers) -> bool:
        return self.holds(registers)

    def walk(self, registers) -> bool:
        """The condition evaluated by walking its tree: the reference `holds` must agree
        with (the tests compare them)."""
        return _truth(self._eval(self.tree, registers))

    def _eval(self, node, regs):
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "con":
            return _Con(node[1])
        if kind == "reg":
            r = node[1]
            if not 0 <= r < len(regs):
                raise ConditionError(_outside(r, regs))
            return _operand(regs[r], r)
        if kind == "or":
            return _truth(self._eval(node[1], regs)) or _truth(self._eval(node[2], regs))
        if kind == "and":
            return _truth(self._eval(node[1], regs)) and _truth(self._eval(node[2], regs))
        if kind == "not":
            return not _truth(self._eval(node[1], regs))
        if kind == "neg":
            v = self._eval(node[1], regs)
            _need_number(v, "-")
            return -v
        if kind == "arith":
            a, b = self._eval(node[2], regs), self._eval(node[3], regs)
            _need_number(a, node[1])
            _need_number(b, node[1])
            return a + b if node[1] == "+" else a - b
        if kind == "cmp":
            return _compare(node[1], self._eval(node[2], regs), self._eval(node[3], regs))
        raise ConditionError(f"bad condition node {kind}")  # not shown to users: parsed trees have no other kind

    def __str__(self) -> str:
        return self.text


_NDARRAY = np.ndarray
# A register's scalar (`rvmdbg.scalars`: a 0-d tensor is a NumPy scalar) as a Python number,
# which is what walking the tree compares (no wrap-around in a condition's + and -).
_TO_NUMBER = {t: (float if np.dtype(t).kind == "f" else bool if np.dtype(t).kind == "b"
                  else int) for t in SCALAR_TYPES}
_ORDER = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
          ">": operator.gt, ">=": operator.ge}


def compile_condition(tree):
    """`fn(registers) -> bool` for a parsed condition tree: one closure per node, made once,
    with the same results and the same ConditionErrors as walking the tree."""
    test = _compile(tree)
    if tree[0] in ("cmp", "and", "or", "not"):
        return test   # these give a bool already

    def holds(regs):
        v = test(regs)
        if type(v) is bool:
            return v
        return _truth(v)
    return holds


def _compile(node):
    kind = node[0]
    if kind == "lit":
        value = node[1]
        return lambda regs: value
    if kind == "con":
        con = _Con(node[1])
        return lambda regs: con
    if kind == "reg":
        r = node[1]
        return lambda regs: _scalar_at(regs, r)
    if kind in ("or", "and"):
        a, b = _compile(node[1]), _compile(node[2])
        if kind == "or":
            return lambda regs: _truth(a(regs)) or _truth(b(regs))
        return lambda regs: _truth(a(regs)) and _truth(b(regs))
    if kind == "not":
        a = _compile(node[1])
        return lambda regs: not _truth(a(regs))
    if kind == "neg":
        a = _compile(node[1])

        def neg(regs):
            v = a(regs)
            _need_number(v, "-")
            return -v
        return neg
    if kind == "arith":
        op, a, b = node[1], _compile(node[2]), _compile(node[3])
        fn = operator.add if op == "+" else operator.sub

        def arith(regs):
            x, y = a(regs), b(regs)
            _need_number(x, op)
            _need_number(y, op)
            return fn(x, y)
        return arith
    if kind == "cmp":
        left, right = _folded(node[2]), _folded(node[3])
        op, a, b = node[1], _compile(left), _compile(right)
        fn = _ORDER[op]
        if left[0] == "reg" and right[0] == "lit":
            return _compare_register(op, left[1], right[1])

        def cmp(regs):
            x, y = a(regs), b(regs)
            if type(x) is _Con or type(y) is _Con:
                return _compare(op, x, y)
            return fn(x, y)
        return cmp
    raise BreakpointError(f"bad condition node {kind}")  # not shown to users


def _folded(node):
    """A negated number literal (`-1` parses as `-` applied to 1) as the literal it is."""
    if (node[0] == "neg" and node[1][0] == "lit" and type(node[1][1]) in (int, float)):
        return ("lit", -node[1][1])
    return node


def _compare_register(op: str, r: int, literal):
    """`$r OP literal`, the most common condition, as one closure."""
    fn = _ORDER[op]

    def cmp(regs):
        x = _scalar_at(regs, r)
        if type(x) is _Con:
            return _compare(op, x, literal)
        return fn(x, literal)
    return cmp


class _Con:
    """A constructor name in a condition, or an ADT value's constructor."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, _Con) and other.name == self.name

    def __repr__(self):
        return self.name


def _outside(r: int, regs) -> str:
    return _("${r} is outside the register file (size {n})").format(r=r, n=len(regs))


def _scalar_at(regs, r: int):
    """What register `r` holds as a condition sees it: a Python number, or a constructor."""
    try:
        v = regs[r]
    except IndexError:
        raise ConditionError(_outside(r, regs)) from None
    number = _TO_NUMBER.get(type(v))
    if number is not None:
        return number(v)
    if type(v) is _NDARRAY and v.size == 1:
        return v.item()
    return _operand(v, r)


def _operand(v, r: int):
    if v is None:
        raise ConditionError(_("${r} is empty").format(r=r))
    if isinstance(v, np.generic):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise ConditionError(_("${r} is a tensor of shape {shape}, not a scalar").format(r=r, shape=list(v.shape)))
        return v.reshape(()).item()
    if isinstance(v, ADTValue):
        if v.con is None:
            raise ConditionError(_("${r} is a tuple, not a scalar").format(r=r))
        return _Con(v.con)
    raise ConditionError(_("${r} holds a {kind}, not a scalar").format(r=r, kind=type(v).__name__))


def _need_number(v, op):
    if isinstance(v, _Con) or not isinstance(v, (int, float, bool)):
        raise ConditionError(_("`{op}` needs numbers, got {value}").format(op=op, value=repr(v)))


def _truth(v) -> bool:
    if isinstance(v, _Con):
        raise ConditionError(_("a constructor ({name}) is not true or false; compare it").format(name=v.name))
    return bool(v)


def _compare(op: str, a, b) -> bool:
    if isinstance(a, _Con) or isinstance(b, _Con):
        if op not in ("==", "!="):
            raise ConditionError(_("constructors compare only with == and !="))
        if not (isinstance(a, _Con) and isinstance(b, _Con)):
            raise ConditionError(_("cannot compare {a} with {b}").format(a=repr(a), b=repr(b)))
        return (a == b) if op == "==" else not (a == b)
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


def parse_condition(text: str | None) -> Condition | None:
    """A Condition, or None for no condition; raises BreakpointError with the reason."""
    if text is None or not text.strip():
        return None
    return Condition(text)


# ------------------------------------------------------------------ resolution

_FUNC_PC = re.compile(r"^@?([A-Za-z_][\w.]*)(?::(\d+))?$")
_PACKED = re.compile(r"PackedFunc\[(\d+)\]", re.IGNORECASE)
# what comes before a kernel's own name: nothing, or the module name the VM compiler adds
# (TVM's default `vm_mod`; `tvmgen_default` for the AOT/graph compilers' names)
_KERNEL_PREFIXES = ("", "vm_mod_", "tvmgen_default_")


def _some(names: list, n: int = 6) -> str:
    """The first few names, then how many more."""
    head = ", ".join(names[:n]) or _("none")
    return head + (" " + _("and {n} more").format(n=len(names) - n) if len(names) > n else "")


def instruction_line(exe, fi: int, pc: int) -> int | None:
    """The source line an instruction starts on (in the program's own file), or None."""
    span = exe.span_at(fi, pc)
    if span is None:
        return None
    name = getattr(exe, "source_name", None)
    if name is not None and span.file is not None and span.file != name:
        return None  # code from another file (the prelude)
    return span.line


def entry_table(exe, key) -> dict:
    """key -> the (function, pc) locations where control enters an instruction run with that
    key: `key(fi, pc)` names the source position of an instruction (None: no position); a
    location is an entry when it starts its function or some predecessor in the control-flow
    graph has another key."""
    table: dict = {}
    for fi, fn in enumerate(exe.functions):
        keys = [key(fi, pc) for pc in range(len(fn.instructions))]
        preds: list[list[int]] = [[] for _ in fn.instructions]
        for pc, ins in enumerate(fn.instructions):
            for s in ins.successors(pc):
                if 0 <= s < len(preds):
                    preds[s].append(pc)
        for pc, k in enumerate(keys):
            if k is None:
                continue
            entered = pc == 0 or not preds[pc] or any(keys[p] != k for p in preds[pc])
            if entered:
                table.setdefault(k, set()).add((fi, pc))
    return {k: frozenset(locs) for k, locs in table.items()}


def line_table(exe) -> dict[int, frozenset]:
    """Source line -> the (function, pc) locations where control enters that line. A line
    no instruction starts on, whose operator a fused kernel computes (the convolution of
    `conv2d -> multiply -> add -> relu`, whose call carries another line), is entered at the
    calls of that kernel (`Executable.fused_lines`)."""
    table = entry_table(exe, lambda fi, pc: instruction_line(exe, fi, pc))
    inside: dict = {}
    for loc, lines in getattr(exe, "fused_lines", {}).items():
        for line in lines:
            if line not in table:
                inside.setdefault(line, set()).add(loc)
    table.update((line, frozenset(locs)) for line, locs in inside.items())
    return table


def position_key(exe, unit: str):
    """`key(fi, pc)` for `entry_table` at a stepping unit: "line" (file and line) or
    "statement" (the instruction's whole Relay span)."""
    def by_line(fi, pc):
        span = exe.span_at(fi, pc)
        return None if span is None else (span.file, span.line)

    def by_span(fi, pc):
        span = exe.span_at(fi, pc)
        return None if span is None else (span.file, span.line, span.col, span.end_line,
                                          span.end_col)
    if unit == "line":
        return by_line
    if unit == "statement":
        return by_span
    raise BreakpointError(_("no stepping unit {unit}: use instruction, statement or line").format(
        unit=repr(unit)))


# ------------------------------------------------------------------ hit counts and log points

_HIT = re.compile(r"^\s*(==|=|>=|<=|>|<|%)?\s*(\d+)\s*$")


class HitCondition:
    """When a breakpoint's hit count lets it stop: `N`/`== N` (the Nth hit), `>= N`, `> N`,
    `< N`, `<= N`, `% N` (every Nth hit)."""

    def __init__(self, text: str):
        m = _HIT.match(text)
        if m is None:
            raise BreakpointError(_("hit condition {text}: use N, == N, >= N, > N, < N, <= N "
                                    "or % N").format(text=repr(text)))
        self.op = {None: "==", "=": "=="}.get(m.group(1), m.group(1))
        self.n = _whole(m.group(2), "hit condition: count")
        if self.op == "%" and self.n == 0:
            raise BreakpointError(_("hit condition % 0: the period must be at least 1"))
        self.text = f"{self.op} {self.n}"

    def holds(self, hits: int) -> bool:
        op, n = self.op, self.n
        if op == "%":
            return hits % n == 0
        return _compare(op, hits, n)

    def __str__(self) -> str:
        return self.text


_LOG_FIELD = re.compile(r"\{([^{}]*)\}")


def log_text(message: str, registers, params) -> str:
    """A log point's message with each `{$N}` or `{%name}` replaced by the value's text."""
    def field_text(m) -> str:
        what = m.group(1).strip()
        r = None
        if re.fullmatch(r"\$\d{1,18}", what):
            r = int(what[1:])
        elif what.startswith("%") and what[1:] in params:
            r = list(params).index(what[1:])
        if r is None:
            return f"{{{what}?}}"
        if not 0 <= r < len(registers):
            return f"{{{what}: no such register}}"
        return value_text(registers[r], 80)
    return _LOG_FIELD.sub(field_text, message)


def opcode_class(name: str):
    """The instruction class named `name` (class name or TVM mnemonic, any case)."""
    want = name.strip().lower()
    for cls in bc.OPCODES:
        if cls.name.lower() == want:
            return cls
    mnemonics = {"move": bc.Move, "ret": bc.Ret, "invoke": bc.Invoke,
                 "invoke_closure": bc.InvokeClosure, "invoke_packed": bc.InvokePacked,
                 "alloc_tensor": bc.AllocTensor, "alloc_tensor_reg": bc.AllocTensorReg,
                 "alloc_data": bc.AllocADT, "alloc_closure": bc.AllocClosure,
                 "get_field": bc.GetField, "if": bc.If, "load_const": bc.LoadConst,
                 "goto": bc.Goto, "get_tag": bc.GetTag, "load_consti": bc.LoadConsti,
                 "fatal": bc.Fatal, "alloc_storage": bc.AllocStorage, "shape_of": bc.ShapeOf,
                 "reshape_tensor": bc.ReshapeTensor, "device_copy": bc.DeviceCopy,
                 "kill_register": bc.KillRegister}
    cls = mnemonics.get(want)
    if cls is None:
        known = ", ".join(c.name for c in bc.OPCODES)
        raise BreakpointError(_("no opcode {name} (opcodes: {known})").format(
            name=repr(name), known=known))
    return cls


# ------------------------------------------------------------------ breakpoints

@dataclass(eq=False)
class Breakpoint:
    """A resolved breakpoint. `kind`: "instruction", "function", "line", "opcode" or
    "kernel" (`kernels`: the names of the kernels whose calls it stops at)."""

    id: int
    spec: str
    kind: str
    enabled: bool = True
    hits: int = 0
    condition: str | None = None
    locations: frozenset = frozenset()
    func_index: int | None = None
    pc: int | None = None
    line: int | None = None
    opcode: str | None = None
    kernels: tuple = ()
    line_text: str | None = None        # the source line's text, to find it again after edits
    moved_from: int | None = None       # a line breakpoint moved to the next line with code
    hit_condition: str | None = None    # e.g. ">= 3": which forward hits stop
    log_message: str | None = None      # a log point: print this instead of stopping
    _cond: Condition | None = field(default=None, repr=False)
    _hit: HitCondition | None = field(default=None, repr=False)

    @property
    def searched_backward(self) -> bool:
        """Whether reverse motion stops here: hit counts are counted going forward only, and
        a log point never stops."""
        return self._hit is None and self.log_message is None

    def counts(self) -> bool:
        """Count one more hit (its condition held); whether the hit condition lets it act."""
        self.hits += 1
        return self._hit is None or self._hit.holds(self.hits)

    def where(self, exe) -> str:
        if self.kind == "instruction":
            return f"@{exe.functions[self.func_index].name}:{self.pc}"
        if self.kind == "function":
            return f"@{exe.functions[self.func_index].name}"
        if self.kind == "line":
            moved = f" (moved from line {self.moved_from})" if self.moved_from else ""
            name = getattr(exe, "source_name", None) or "line"
            if not self.spec.isdigit():  # a named line (an ONNX node)
                return f"{self.spec} ({name}:{self.line}){moved}"
            return f"{name}:{self.line}{moved}"
        if self.kind == "kernel":
            if self.spec.startswith("kernel:") or len(self.kernels) != 1:
                return self.spec
            return f"{self.spec} ({self.kernels[0]})" if self.spec != self.kernels[0] else self.spec
        return f"op:{self.opcode}"

    def test(self, registers) -> tuple[bool, str | None]:
        """(stop?, message): a condition that fails to evaluate stops, saying why."""
        if self._cond is None:
            return True, None
        try:
            return self._cond.evaluate(registers), None
        except ConditionError as exc:
            return True, f"condition `{self.condition}` could not be evaluated: {exc}"


@dataclass(eq=False)
class Watchpoint:
    """Register `register` of the activation `serial` (at `depth`, running `func_index`).

    `on="write"` stops after every write to it, `on="change"` only after a write that gives
    it a different value, `on="read"` before every instruction that reads it."""

    id: int
    register: int
    depth: int
    serial: int
    func_index: int
    func_name: str
    on: str = "write"
    enabled: bool = True
    hits: int = 0
    prefix: str = "$"      # how the program names registers (`r` on the MiniVM)

    @property
    def name(self) -> str:
        return f"{self.prefix}{self.register}"

    @property
    def spec(self) -> str:
        return self.name

    @property
    def kind(self) -> str:
        return "watchpoint"

    def where(self, exe=None) -> str:
        return f"{self.name} of @{self.func_name} (at depth {self.depth})" + (
            f" on {self.on}" if self.on in ("change", "read") else "")

    def triggered(self, old, new) -> bool:
        if self.on == "write":
            return True
        if old is new:
            return False
        try:
            return not values_equal(old, new)
        except RecursionError:
            return True


class BreakpointTable:
    """The breakpoints of one session, resolved against its executable.

    `add(spec, condition)`, `delete(id)`, `enable(id)`, `disable(id)`, `set_condition(id, c)`,
    `toggle_at(fi, pc)`, `toggle_line(line)`, `at(fi, pc)`, iteration in id order.
    `on_change` (if set) is called after every change, to save the table.
    """

    def __init__(self, exe, ids=None):
        self.exe = exe
        self._bps: dict[int, Breakpoint] = {}
        self._ids = ids if ids is not None else IdCounter()
        self._lines: dict[int, frozenset] | None = None
        self._locs: dict | None = None
        self.on_change = None
        self.names = None   # a debug.names.NameTable: `break NAME` for a named source line

    # ------------------------------------------------------------ queries

    def __iter__(self):
        return iter(sorted(self._bps.values(), key=lambda b: b.id))

    def __len__(self) -> int:
        return len(self._bps)

    def __contains__(self, bp_id) -> bool:
        return bp_id in self._bps

    def get(self, bp_id: int) -> Breakpoint:
        try:
            return self._bps[bp_id]
        except KeyError:
            raise BreakpointError(_("no breakpoint number {n}").format(n=bp_id)) from None

    def at(self, func_index: int, pc: int) -> list[Breakpoint]:
        """Every breakpoint (enabled or not) with a location at this instruction."""
        return [b for b in self if (func_index, pc) in b.locations]

    def locations(self) -> dict[tuple[int, int], list[Breakpoint]]:
        """Enabled breakpoints by location (cached until the table changes)."""
        if self._locs is None:
            locs: dict = {}
            for b in self:
                if b.enabled:
                    for loc in b.locations:
                        locs.setdefault(loc, []).append(b)
            self._locs = locs
        return self._locs

    @property
    def lines(self) -> dict[int, frozenset]:
        if self._lines is None:
            self._lines = line_table(self.exe)
        return self._lines

    # ------------------------------------------------------------ changes

    def resolve(self, spec: str, current: tuple[int, int] | None = None) -> dict:
        """The fields of a breakpoint for `spec` (without id); raises BreakpointError."""
        text = spec.strip()
        exe = self.exe
        if not text:
            if current is None:
                raise BreakpointError(_("no current instruction to put a breakpoint on"))
            fi, pc = current
            return dict(spec=f"@{exe.functions[fi].name}:{pc}", kind="instruction",
                        locations=frozenset([current]), func_index=fi, pc=pc)
        if text.lower().startswith("op:"):
            cls = opcode_class(text[3:])
            locs = frozenset((fi, pc) for fi, fn in enumerate(exe.functions)
                             for pc, ins in enumerate(fn.instructions) if type(ins) is cls)
            return dict(spec=f"op:{cls.name}", kind="opcode", locations=locs, opcode=cls.name)
        if re.fullmatch(r"\d+", text):
            return self._resolve_line(_whole(text, "line number"))
        if self.names is not None and text in self.names.places:
            # a name the program kind gave a source line (an ONNX node): that line's code
            fields = self._resolve_line(self.names.places[text])
            fields["spec"] = text
            exe = self.exe
            kernels = frozenset(
                (fi, pc) for fi, fn in enumerate(exe.functions)
                for pc, ins in enumerate(fn.instructions)
                if getattr(ins, "is_kernel_call", False)
                and instruction_line(exe, fi, pc) == fields["line"])
            if kernels:  # the node's kernel, not every entry into its line's setup
                fields["locations"] = kernels
            return fields
        called = getattr(exe, "called_names", None)
        if called is not None:   # the Relax VM: a Call by the name it calls
            fields = self._resolve_called(text, called())
            if fields is not None:
                return fields
        kernel = self._resolve_kernel(text)
        if kernel is not None:
            return kernel
        m = _FUNC_PC.match(text)
        if m is None:
            raise BreakpointError(_("cannot read breakpoint spec {spec}: use @f, @f:PC, "
                                    "LINE, op:NAME, a kernel's name, PackedFunc[N] or "
                                    "kernel:TEXT").format(spec=repr(spec)))
        name, pc_text = m.group(1), m.group(2)
        try:
            fi = exe.func_index(name)
        except KeyError:
            known = ", ".join("@" + n for n in exe.function_names())
            raise BreakpointError(_("no function @{name} (functions: {known})").format(
                name=name, known=known)) from None
        fn = exe.functions[fi]
        if pc_text is None:
            return dict(spec=f"@{fn.name}", kind="function", locations=frozenset([(fi, 0)]),
                        func_index=fi, pc=0)
        pc = _whole(pc_text, "pc")
        if not 0 <= pc < len(fn.instructions):
            raise BreakpointError(_("@{func} has pcs 0..{last}, not {pc}").format(
                func=fn.name, last=len(fn.instructions) - 1, pc=pc))
        return dict(spec=f"@{fn.name}:{pc}", kind="instruction",
                    locations=frozenset([(fi, pc)]), func_index=fi, pc=pc)

    def _resolve_called(self, text: str, names: list) -> dict | None:
        """A Relax VM executable's `NAME` (a kernel or builtin its Calls name: `matmul`,
        `vm.builtin.alloc_tensor`) or `kernel:TEXT` (every such name containing TEXT): a
        breakpoint on every Call of it; None when `text` is neither."""
        if text.lower().startswith("kernel:"):
            needle = text[len("kernel:"):].strip()
            if not needle:
                raise BreakpointError(_("kernel: needs part of a kernel's name "
                                        "(kernel:conv2d)"))
            chosen = [n for n in names if needle.lower() in n.lower()]
            if not chosen:
                raise BreakpointError(_("no kernel name contains {text} (kernels: {names})")
                                      .format(text=repr(needle), names=_some(names)))
            spec = f"kernel:{needle}"
        elif text in names:
            chosen, spec = [text], text
        elif text.startswith("@") and text[1:] in names:
            # TVM's one function table names VM functions and kernels alike (a DAP function
            # breakpoint arrives as @NAME)
            chosen, spec = [text[1:]], text[1:]
        else:
            return None
        wanted = frozenset(chosen)
        locs = frozenset((fi, pc) for fi, fn in enumerate(self.exe.functions)
                         for pc, ins in enumerate(fn.instructions)
                         if getattr(ins, "func", None) in wanted)
        return dict(spec=spec, kind="kernel", locations=locs, kernels=tuple(chosen))

    def _resolve_kernel(self, text: str) -> dict | None:
        """`kernel:TEXT`, `PackedFunc[N]` or a kernel's name: the fields of a breakpoint on
        every invoke_packed calling those kernels; None when `text` is none of these."""
        exe = self.exe
        names = exe.kernel_names() if hasattr(exe, "kernel_names") else []
        m = _PACKED.fullmatch(text)
        if text.lower().startswith("kernel:"):
            needle = text[len("kernel:"):].strip()
            if not needle:
                raise BreakpointError(_("kernel: needs part of a kernel's name "
                                        "(kernel:conv2d)"))
            chosen = [i for i, n in enumerate(names) if needle.lower() in n.lower()]
            if not chosen:
                raise BreakpointError(_("no kernel name contains {text} (kernels: {names})")
                                      .format(text=repr(needle), names=_some(names)))
            spec = f"kernel:{needle}"
        elif m is not None:
            index = _whole(m.group(1), "kernel index")
            if not 0 <= index < len(names):
                raise BreakpointError(_("no PackedFunc[{n}]: the program has {count} kernels")
                                      .format(n=index, count=len(names)))
            chosen, spec = [index], f"PackedFunc[{index}]"
        else:
            # a kernel's name as TVM's listing and profiler name it; the module prefix the
            # VM compiler adds (`vm_mod_`) may be left off
            chosen = [i for i, n in enumerate(names) if n == text]
            if not chosen and re.fullmatch(r"[A-Za-z_][\w.]*", text):
                chosen = [i for i, n in enumerate(names) if n.endswith("_" + text)
                          and n[:-len(text)] in _KERNEL_PREFIXES]
            if not chosen:
                return None
            spec = text
        wanted = frozenset(chosen)
        locs = frozenset((fi, pc) for fi, fn in enumerate(exe.functions)
                         for pc, ins in enumerate(fn.instructions)
                         if getattr(ins, "is_kernel_call", False) and ins.packed_index in wanted)
        return dict(spec=spec, kind="kernel", locations=locs,
                    kernels=tuple(names[i] for i in sorted(wanted)))

    def _resolve_line(self, line: int) -> dict:
        lines = self.lines
        if not lines:
            raise BreakpointError(_("this executable has no source map: break on @f:PC instead"))
        total = len(_source_lines(self.exe))
        if line < 1 or (total and line > total):
            raise BreakpointError(_("line {line} is outside the program (lines 1..{total})").format(
                line=line, total=total))
        target = line
        while target not in lines and (not total or target <= total):
            target += 1
            if target - line > 1000:
                break
        if target not in lines:
            raise BreakpointError(_("no code at or after line {line}").format(line=line))
        src = _source_lines(self.exe)
        text = src[target - 1] if 0 < target <= len(src) else None
        return dict(spec=str(target), kind="line", locations=lines[target], line=target,
                    line_text=text, moved_from=line if target != line else None)

    def add(self, spec: str, condition: str | None = None, enabled: bool = True,
            current: tuple[int, int] | None = None, hit_condition: str | None = None,
            log_message: str | None = None) -> Breakpoint:
        fields = self.resolve(spec, current)
        cond = parse_condition(condition)
        hit = HitCondition(hit_condition) if hit_condition and hit_condition.strip() else None
        same = self.identical(fields, cond.text if cond else None, hit.text if hit else None,
                              log_message or None)
        if same is not None:
            # one breakpoint per place and condition: adding it again (a restored file, a
            # script run twice) gives the one there is, enabled if asked
            if enabled and not same.enabled:
                same.enabled = True
                self._changed()
            return same
        bp = Breakpoint(id=self._ids.next(), enabled=enabled,
                        condition=cond.text if cond else None, _cond=cond,
                        hit_condition=hit.text if hit else None, _hit=hit,
                        log_message=log_message or None, **fields)
        self._bps[bp.id] = bp
        self._changed()
        return bp

    def identical(self, fields: dict, condition: str | None, hit_condition: str | None = None,
                  log_message: str | None = None) -> Breakpoint | None:
        """The breakpoint that stops where `fields` (from `resolve`) does, on the same
        condition, hit condition and log message, if there is one."""
        for bp in self._bps.values():
            if (bp.kind == fields["kind"] and bp.locations == fields["locations"]
                    and bp.line == fields.get("line") and bp.opcode == fields.get("opcode")
                    and bp.spec == fields["spec"]
                    and bp.condition == condition and bp.hit_condition == hit_condition
                    and bp.log_message == log_message):
                return bp
        return None

    def delete(self, bp_id: int) -> Breakpoint:
        bp = self.get(bp_id)
        del self._bps[bp_id]
        self._changed()
        return bp

    def clear(self) -> None:
        self._bps.clear()
        self._changed()

    def enable(self, bp_id: int) -> Breakpoint:
        bp = self.get(bp_id)
        bp.enabled = True
        self._changed()
        return bp

    def disable(self, bp_id: int) -> Breakpoint:
        bp = self.get(bp_id)
        bp.enabled = False
        self._changed()
        return bp

    def set_condition(self, bp_id: int, condition: str | None) -> Breakpoint:
        bp = self.get(bp_id)
        cond = parse_condition(condition)
        bp._cond = cond
        bp.condition = cond.text if cond else None
        self._changed()
        return bp

    def toggle_at(self, func_index: int, pc: int) -> Breakpoint | None:
        """Delete the instruction breakpoints at (fi, pc) if any, else add one (returned)."""
        found = [b for b in self if b.kind in ("instruction", "function")
                 and b.locations == frozenset([(func_index, pc)])]
        if found:
            for b in found:
                del self._bps[b.id]
            self._changed()
            return None
        return self.add(f"@{self.exe.functions[func_index].name}:{pc}")

    def toggle_line(self, line: int) -> Breakpoint | None:
        """Delete the breakpoints on source line `line` if any, else add one (returned)."""
        found = [b for b in self if b.kind == "line" and (b.line == line or b.moved_from == line)]
        if found:
            for b in found:
                del self._bps[b.id]
            self._changed()
            return None
        named = self.names.line_names().get(line) if self.names is not None else None
        if named is not None:
            # a node's line (an ONNX model's listing): as `break NODE`, its kernel
            return self.add(named)
        return self.add(str(line))

    def _changed(self) -> None:
        self._locs = None
        if self.on_change is not None:
            self.on_change()


class IdCounter:
    """Numbers shared by breakpoints and watchpoints."""

    def __init__(self):
        self.last = 0

    def next(self) -> int:
        self.last += 1
        return self.last


def _source_lines(exe) -> list[str]:
    text = getattr(exe, "source_text", None)
    return text.split("\n") if text else []


__all__ = ["Breakpoint", "Watchpoint", "BreakpointTable", "BreakpointError", "Condition",
           "ConditionError", "HitCondition", "IdCounter", "parse_condition", "line_table",
           "entry_table", "position_key", "log_text", "instruction_line", "opcode_class"]
