"""Check yourself: questions about a running program, asked before a step and answered by the VM.

A `Quiz` looks at a real `DebugSession` where it stands and asks one multiple-choice question
about what happens next:

- "next-pc": where control goes after this instruction (pc + 1, a jump target, a callee's
  pc 0, the caller's pc after its invoke, or the end of the program);
- "writes": which registers of this frame hold a new value after the step;
- "if": where an `if` goes (its true offset when the two registers are equal, else its false
  offset): does it jump;
- "swap": may this instruction and a nearby one of the same function trade places
  (`deps.may_swap`, with the dependence that forbids it);
- "executor": which executor can run the program: the VM only, or the graph executor too
  (the graph executor's own decision: `find_refusal`, then `lower_to_graph`).

The choices are made from the instruction alone, never from a run ahead. `answer(choice)`
then really steps the session (for the first three kinds) and reads the VM's answer from the
state it reached, so a question can never disagree with the machine. The quiz keeps a score
and is deterministic for a seed: the same program, arguments and seed ask the same questions.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from rvmdbg.debug import deps as deps_mod
from rvmdbg.debug.heap import value_text
from rvmdbg.i18n import N_, _
from rvmdbg.vm import bytecode as bc

KINDS = ("next-pc", "writes", "if", "swap", "executor")
STEPPING = frozenset({"next-pc", "writes", "if"})
END = "end"          # the key of "the program finishes"
SWAP_REACH = 4       # a swap partner lies at most this many instructions away


@dataclass
class Question:
    """One question: `prompt` asks it, `about` shows what it is about (the instruction and
    the values it reads), `choices` are the answers to pick from (1-based on screen)."""

    number: int
    kind: str
    prompt: str
    about: list
    choices: list
    keys: list = field(repr=False)   # what each choice stands for, compared with the VM's answer
    at_step: int = 0

    @property
    def steps(self) -> bool:
        """Answering it steps the program one instruction."""
        return self.kind in STEPPING


@dataclass
class Verdict:
    """The VM's answer to a question: `correct` is the index of the right choice (None when
    the program failed on the step, so no choice is right and nothing is scored)."""

    question: Question
    chosen: int | None
    correct: int | None
    answer: str
    explanation: str
    stop: str | None = None

    @property
    def right(self) -> bool:
        return self.correct is not None and self.chosen == self.correct

    @property
    def scored(self) -> bool:
        return self.chosen is not None and self.correct is not None


def _regs_text(regs, prefix: str = "$") -> str:
    return ", ".join(f"{prefix}{r}" for r in sorted(regs)) if regs else _("none")


def swap_reason(fn, pc_a: int, pc_b: int, exe=None) -> str:
    """Why two instructions of `fn` may or may not trade places, in one line: the first reason
    of `deps.swap_verdict` (the same verdict `may_swap` gives)."""
    prefix = getattr(exe, "register_prefix", "$")
    verdict = deps_mod.swap_verdict(fn, pc_a, pc_b, exe)
    if verdict.ok:
        lo, hi = min(pc_a, pc_b), max(pc_a, pc_b)
        if hi - lo > 1:
            return _("pc {a} and pc {b} share no register written by one and read or written "
                     "by the other, nor with anything between them, and no jump lands between "
                     "them").format(a=lo, b=hi)
        return _("pc {a} and pc {b} share no register written by one and read or written by "
                 "the other").format(a=lo, b=hi)
    more = len(verdict.reasons) - 1
    first = verdict.reasons[0].text(prefix)
    return _("{reason} (and {n} more)").format(reason=first, n=more) if more else first


def executor_verdict(module, entry: str = "main") -> tuple[bool, str] | None:
    """(the graph executor can run it, why) from the graph executor's own decision; None
    without a Relay module (a saved executable) or when lowering fails for another reason."""
    if module is None:
        return None
    from rvmdbg.graph import GraphRefusal, find_refusal, lower_to_graph
    refusal = find_refusal(module, entry)
    if refusal is None:
        try:
            lower_to_graph(module, entry)
        except GraphRefusal as exc:
            refusal = exc
        except Exception:
            return None
    if refusal is None:
        return True, _("@{entry} is a static dataflow graph (no control flow, no ADTs, no "
                       "recursion, fixed shapes): both executors run it").format(entry=entry)
    span = getattr(refusal, "span", None)
    where = f" ({span})" if span is not None and str(span) not in refusal.message else ""
    return False, f"{refusal.message}{where}"


class Quiz:
    """Questions over `session` (a `DebugSession`), answered by stepping it.

    `module`: the type-checked Relay module (for the executor question; None skips it);
    `seed`: the questions and the order of their choices; `step`: how to step the session
    one instruction (default `session.step()`; the screen passes its own so its panes follow);
    `kinds`: the kinds of question to ask."""

    def __init__(self, session, module=None, seed: int = 0, step=None, kinds=KINDS,
                 entry: str | None = None) -> None:
        self.session = session
        self.exe = session.exe
        self.module = module
        self.seed = seed
        self.rng = random.Random(seed)
        self._step = step or (lambda: session.step())
        self.kinds = tuple(k for k in KINDS if k in kinds)
        self.entry = entry or session.entry
        self.prefix = getattr(self.exe, "register_prefix", "$")   # `r3` on the MiniVM
        self.asked = 0
        self.right = 0
        self.current: Question | None = None
        self.history: list[Verdict] = []
        self._executor = None if "executor" in self.kinds else False
        self._last_kind: str | None = None

    # ------------------------------------------------------------ state

    @property
    def done(self) -> bool:
        """Nothing more to ask: the program finished or failed."""
        s = self.session
        return s.finished or s.error is not None or not s.vm.frames

    def score_text(self) -> str:
        return _("score: {right}/{asked}").format(right=self.right, asked=self.asked)

    # ------------------------------------------------------------ asking

    def question(self) -> Question | None:
        """The question waiting for an answer (a new one when the last was answered or the
        session has moved since it was asked), or None when the program has finished."""
        q = self.current
        if q is not None and q.kind != "executor" and q.at_step != self.session.step_count:
            q = None   # the session moved since it was asked (the debugger stepped): ask anew
        if q is None:
            q = self.current = self._generate()
        return q

    def _generate(self) -> Question | None:
        if self._executor is None:
            self._executor = executor_verdict(self.module, self.entry) or False
            if self._executor:
                return self._executor_question()
        if self.done:
            return None
        frame = self.session.frame()
        ins = frame.instruction
        if ins is None:
            return None
        weights = self._weights(frame, ins)
        if self._last_kind not in STEPPING:
            weights = {k: w for k, w in weights.items() if k in STEPPING}
        kinds = [k for k in weights if k in self.kinds and weights[k] > 0]
        if not kinds:
            kinds = ["next-pc"]
        kind = self.rng.choices(kinds, [weights.get(k, 1) for k in kinds])[0]
        make = {"next-pc": self._next_pc_question, "writes": self._writes_question,
                "if": self._if_question, "swap": self._swap_question}
        # a question with one choice asks nothing (a halt that reads and writes nothing, an
        # if whose two targets are one pc): another kind, and next-pc always has two
        for k in [kind] + [k for k in kinds if k != kind] + ["next-pc"]:
            q = make[k](frame, ins)
            if len(q.choices) >= 2:
                return q
        return q

    def _weights(self, frame, ins) -> dict:
        if isinstance(ins, bc.If):
            return {"if": 3, "next-pc": 1}
        if ins.is_return:
            return {"next-pc": 1}
        if ins.is_call:
            return {"next-pc": 2, "writes": 1}
        if ins.is_jump or not ins.falls_through:
            return {"next-pc": 1}
        swap = 2 if self._swap_partners(frame) else 0
        return {"writes": 2, "swap": swap, "next-pc": 1}

    def _new(self, kind: str, prompt: str, about: list, options: list) -> Question:
        """A question over `options` [(key, label)]: duplicates dropped, order shuffled."""
        seen, keys, labels = set(), [], []
        for key, label in options:
            if key in seen:
                continue
            seen.add(key)
            keys.append(key)
            labels.append(label)
        order = list(range(len(keys)))
        self.rng.shuffle(order)
        self._last_kind = kind
        return Question(len(self.history) + 1, kind, prompt, about, [labels[i] for i in order],
                        [keys[i] for i in order], self.session.step_count)

    def _fn(self, func_index: int):
        return self.exe.functions[func_index]

    def _text(self, ins) -> str:
        return ins.text(self.exe.function_names(), self.exe.kernel_names())

    def _about(self, frame, ins) -> list:
        """The instruction and the values of the registers it reads."""
        lines = [f"@{frame.func_name} pc={frame.pc}: {self._text(ins)}"]
        for r in dict.fromkeys(ins.reads()):
            v = frame.registers[r] if r < len(frame.registers) else None
            lines.append(f"  {self.prefix}{r} = {value_text(v, 50)}")
        return lines

    def _where(self, func_index: int, pc: int, why: str = "") -> str:
        fn = self._fn(func_index)
        ins = fn.instructions[pc] if 0 <= pc < len(fn.instructions) else None
        text = f": {self._text(ins)}" if ins is not None else ""
        return f"@{fn.name} pc={pc}{text}" + (f" ({_(why)})" if why else "")

    def _next_pc_question(self, frame, ins) -> Question:
        fi, pc = frame.func_index, frame.pc
        n = len(self._fn(fi).instructions)
        options = []
        if pc + 1 < n:
            options.append(((fi, pc + 1), self._where(fi, pc + 1, N_("the next instruction"))))
        for t in ins.jump_targets(pc):
            if 0 <= t < n:
                options.append(((fi, t), self._where(fi, t, N_("a jump target"))))
        callee = self._callee(frame, ins)
        if callee is not None:
            options.append(((callee, 0), self._where(callee, 0, N_("the callee's first"))))
        if ins.is_return:
            frames = self.session.frames(innermost=2)
            if len(frames) == 2:
                caller = frames[0]
                options.append(((caller.func_index, caller.pc + 1),
                                self._where(caller.func_index, caller.pc + 1,
                                            N_("after the caller's invoke"))))
        if not ins.is_jump and pc + 2 < n:
            options.append(((fi, pc + 2), self._where(fi, pc + 2)))
        options.append((END, _("the program finishes (no next pc)")))
        if len({key for key, _label in options}) < 2:
            # the last instruction of a function that cannot fall through: this one again
            # is the choice that is not END
            options.append(((fi, pc), self._where(fi, pc)))
        return self._new("next-pc", _("Which instruction runs next?"), self._about(frame, ins),
                         options)

    def _callee(self, frame, ins) -> int | None:
        if isinstance(ins, bc.Invoke):
            return ins.func_index
        if isinstance(ins, bc.InvokeClosure):
            clo = frame.registers[ins.closure] if ins.closure < len(frame.registers) else None
            return getattr(clo, "func_index", None)
        return None

    def _writes_question(self, frame, ins) -> Question:
        reads, writes = deps_mod.read_write_sets(ins)
        r, w = frozenset(reads), frozenset(writes)
        p = self.prefix
        options = [(w, _regs_text(w, p)), (r, _regs_text(r, p)), (r | w, _regs_text(r | w, p)),
                   (frozenset(), _("none"))]
        return self._new("writes", _("After this step, which registers of @{func} (this "
                                     "frame) hold a new value?").format(func=frame.func_name),
                         self._about(frame, ins), options)

    def _if_question(self, frame, ins) -> Question:
        fi, pc = frame.func_index, frame.pc
        t, f = pc + ins.true_offset, pc + ins.false_offset

        def label(target, equal):
            if target == pc + 1:
                text = (_("no jump: on to pc {pc} (the registers are equal)") if equal else
                        _("no jump: on to pc {pc} (the registers are different)"))
            else:
                text = (_("jumps to pc {pc} (the registers are equal)") if equal else
                        _("jumps to pc {pc} (the registers are different)"))
            return text.format(pc=target)
        options = [((fi, t), label(t, True)), ((fi, f), label(f, False))]
        return self._new("if", _("Does this if jump, and where to?"), self._about(frame, ins),
                         options)

    def _swap_partners(self, frame) -> list[int]:
        n = len(self._fn(frame.func_index).instructions)
        return [p for p in range(frame.pc - SWAP_REACH, frame.pc + SWAP_REACH + 1)
                if 0 <= p < n and p != frame.pc]

    def _swap_question(self, frame, ins) -> Question:
        fn = self._fn(frame.func_index)
        other = self.rng.choice(self._swap_partners(frame))
        a, b = sorted((frame.pc, other))
        about = [f"@{fn.name} pc={a}: {self._text(fn.instructions[a])}",
                 f"@{fn.name} pc={b}: {self._text(fn.instructions[b])}"]
        q = self._new("swap", _("May pc {a} and pc {b} of @{func} trade places without "
                                "changing what the program computes?").format(
                                    a=a, b=b, func=fn.name), about,
                      [(True, _("yes")), (False, _("no"))])
        q.keys = [(k, frame.func_index, a, b) for k in q.keys]
        return q

    def _executor_question(self) -> Question:
        about = [_("@{entry} of the program").format(entry=self.entry)]
        q = self._new("executor", _("Which executor can run @{entry}?").format(entry=self.entry),
                      about, [(False, _("the VM only")),
                              (True, _("both: the VM and the graph executor"))])
        return q

    # ------------------------------------------------------------ answering

    def answer(self, choice: int | None) -> Verdict:
        """Answer the current question with choice `choice` (0-based; None skips it: the VM
        still answers, nothing is scored). The VM answers: the program steps for the
        stepping kinds."""
        q = self.question()
        if q is None:
            raise ValueError("no question: the program has finished")
        if choice is not None and not 0 <= choice < len(q.choices):
            raise ValueError(f"choose 1 to {len(q.choices)}")
        handler = {"next-pc": self._answer_next_pc, "writes": self._answer_writes,
                   "if": self._answer_next_pc, "swap": self._answer_swap,
                   "executor": self._answer_executor}[q.kind]
        correct, answer, explanation, stop = handler(q)
        verdict = Verdict(q, choice, correct, answer, explanation, stop)
        if verdict.scored:
            self.asked += 1
            self.right += verdict.right
        self.history.append(verdict)
        self.current = None
        return verdict

    def _index(self, q: Question, key) -> int | None:
        return q.keys.index(key) if key in q.keys else None

    def _do_step(self):
        """Step the session once; the stop line after it, and the failure if it failed."""
        self._step()
        s = self.session
        ev = s.last_event
        err = s.error
        return (ev.line() if ev is not None else None), err

    def _answer_next_pc(self, q: Question):
        s = self.session
        before = s.frame()
        ins = before.instruction
        depth = s.depth()
        stop, err = self._do_step()
        if err is not None:
            return None, _("the program failed on this step"), err.message, stop
        if s.finished:
            key, answer = END, _("the program finished")
        else:
            top = s.frame()
            key = (top.func_index, top.pc)
            answer = self._where(top.func_index, top.pc)
        return self._index(q, key), answer, self._why_next(ins, before, depth, key), stop

    def _why_next(self, ins, before, depth: int, key) -> str:
        pc = before.pc
        if isinstance(ins, bc.If):
            regs = before.registers
            a, b = regs[ins.test], regs[ins.target]
            equal = key == (before.func_index, pc + ins.true_offset)
            text = (_("the VM compared ${a} ({va}) with ${b} ({vb}): equal, so pc += {offset}; "
                      "only that branch runs") if equal else
                    _("the VM compared ${a} ({va}) with ${b} ({vb}): different, so pc += "
                      "{offset}; only that branch runs"))
            return text.format(a=ins.test, va=value_text(a, 20), b=ins.target,
                               vb=value_text(b, 20),
                               offset=ins.true_offset if equal else ins.false_offset)
        if ins.is_call:
            return _("a call pushes a new frame and starts the callee at pc 0; the caller's "
                     "destination register is written only when the callee returns")
        if key == END:
            return _("{name} in the outermost frame ends the program").format(name=ins.name)
        if ins.is_return:
            return _("ret pops this frame (its registers go with it) and the caller resumes "
                     "after its invoke, with the result in the invoke's destination")
        if isinstance(ins, bc.Goto):
            return _("goto adds its offset {offset} to the pc").format(offset=ins.pc_offset)
        if ins.is_jump:
            went = key[1] if isinstance(key, tuple) else None
            if went == pc + 1:
                return _("{name} did not jump: its condition did not hold, on to pc "
                         "{pc}").format(name=ins.name, pc=went)
            return _("{name} jumped to pc {pc}").format(name=ins.name, pc=went)
        return _("{name} falls through to the next instruction").format(name=ins.name)

    def _answer_writes(self, q: Question):
        s = self.session
        before = s.frame()
        ins = before.instruction
        stop, err = self._do_step()
        if err is not None:
            return None, _("the program failed on this step"), err.message, stop
        frames = s.frames()
        if before.depth >= len(frames) or frames[before.depth].serial != before.serial:
            return None, _("the frame returned"), _("this frame is gone after the step"), stop
        after = frames[before.depth].registers
        changed = frozenset(r for r in range(len(after))
                            if after[r] is not (before.registers[r]
                                                if r < len(before.registers) else None))
        reads, writes = deps_mod.read_write_sets(ins)
        if ins.is_call:
            why = _("the call only enters the callee: ${register} is written when it "
                    "returns").format(register=ins.dst)
        elif isinstance(ins, bc.KillRegister):
            why = _("kill_register empties ${register} before the function "
                    "returns").format(register=ins.dst)
        elif ins.is_kernel_call:
            why = _("the kernel writes its output register(s) {registers}; its inputs are "
                    "only read").format(registers=_regs_text(writes))
        else:
            p = self.prefix
            why = _("{name} writes {written}; what it reads ({read}) keeps its value").format(
                name=ins.name, written=_regs_text(writes, p), read=_regs_text(reads, p))
        new = ", ".join(f"{self.prefix}{r} = {value_text(after[r], 30)}" for r in sorted(changed))
        answer = _regs_text(changed, self.prefix) + (f" ({new})" if new else "")
        return self._index(q, changed), answer, why, stop

    def _answer_swap(self, q: Question):
        fi, a, b = q.keys[0][1:]
        fn = self._fn(fi)
        ok = deps_mod.may_swap(fn, a, b, self.exe)
        correct = next(i for i, k in enumerate(q.keys) if k[0] is ok)
        return correct, _("yes") if ok else _("no"), swap_reason(fn, a, b, self.exe), None

    def _answer_executor(self, q: Question):
        can, why = self._executor
        return self._index(q, can), q.choices[self._index(q, can)], why, None


# ------------------------------------------------------------ as text (the command line's quiz)

def question_lines(q: Question) -> list[str]:
    """A question as the terminal quiz prints it: number, prompt, what it is about, choices."""
    out = [_("Q{number} [step {step}] {prompt}").format(number=q.number, step=q.at_step,
                                                        prompt=q.prompt)]
    out += [f"    {line}" for line in q.about]
    out += [f"  {i}) {c}" for i, c in enumerate(q.choices, 1)]
    return out


def verdict_lines(v: Verdict) -> list[str]:
    """The VM's answer: right or wrong (or skipped), what the VM did, and why in one line."""
    if v.correct is None:
        head = _("the VM could not answer")
    elif v.chosen is None:
        head = _("skipped: the answer is {n}").format(n=v.correct + 1)
    elif v.right:
        head = _("right")
    else:
        head = _("wrong: the answer is {n}").format(n=v.correct + 1)
    said = (_("{head}. The VM did: {answer}") if v.question.steps
            else _("{head}: {answer}")).format(head=head, answer=v.answer)
    out = [said, "  " + _("why: {why}").format(why=v.explanation)]
    if v.stop:
        out.append(f"  {v.stop}")
    return out


__all__ = ["Quiz", "Question", "Verdict", "KINDS", "swap_reason", "executor_verdict",
           "question_lines", "verdict_lines"]
