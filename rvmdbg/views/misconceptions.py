"""Common misconceptions about the Relay VM, each shown wrong by a small program that runs.

Every `Misconception` names the claim, its program in `programs/misconceptions/`, what to
watch in the debugger, and an `evidence` function that runs the program on the real VM (or
asks the graph executor) and returns `Evidence`: `facts` (the figures, which the tests
assert) and `lines` (what the VM shows, written from those same facts, so the explanation
cannot drift from the behaviour). View 1 lists them (`M`); `demonstrate(m)` computes one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rvmdbg.i18n import N_, _
from rvmdbg.vm import bytecode as bc

PROGRAMS_DIR = Path(__file__).resolve().parents[2] / "programs" / "misconceptions"


@dataclass
class Evidence:
    """What running the program showed: `facts` by name, and the lines that say it."""

    facts: dict
    lines: list = field(default_factory=list)


@dataclass(frozen=True)
class Misconception:
    key: str
    claim: str                   # English (marked with N_): shown through `_`
    program: str                 # file name in programs/misconceptions/
    watch: str                   # what to do in the debugger to see it (as claim)
    evidence: Callable           # (Loaded) -> Evidence

    @property
    def path(self) -> Path:
        return PROGRAMS_DIR / self.program

    @property
    def relative_path(self) -> str:
        return f"programs/misconceptions/{self.program}"


@dataclass
class Loaded:
    """A misconception's program: checked module, executable, default arguments."""

    module: object
    exe: object
    args: list
    result: object = None        # the last trace's result

    def trace(self, args=None) -> list:
        """Every executed instruction's `StepInfo`, from the real VM stepped to the end."""
        from rvmdbg.values import copy_values
        from rvmdbg.vm.machine import VirtualMachine
        vm = VirtualMachine(self.exe)
        vm.start("main", copy_values(self.args if args is None else args))
        infos = []
        while not vm.halted:
            infos.append(vm.step())
        self.result = vm.result
        return infos

    def function(self, name: str) -> int:
        return self.exe.global_map[name]

    def kernel_name(self, info) -> str:
        return self.exe.kernels[info.instruction.packed_index].name


def load(m: Misconception, text: str | None = None) -> Loaded:
    """Parse, check and compile a misconception's program, with its `// args:` defaults."""
    from rvmdbg.args import parse_program_args
    from rvmdbg.relay.loader import load_module, program_default_args
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    if text is None:
        text = m.path.read_text(encoding="utf-8")
    module = check_module(load_module(text, m.relative_path))
    exe = compile_module(module)
    args = parse_program_args(module, "main", program_default_args(text) or [])
    return Loaded(module, exe, args)


def demonstrate(m: Misconception) -> Evidence:
    """Run `m`'s program and gather the evidence against the claim."""
    return m.evidence(load(m))


def _value(v) -> str:
    from rvmdbg.debug.heap import value_text
    return value_text(v, 40)


# ---------------------------------------------------------------- the evidence, one per claim

def _kills_before_return(p: Loaded) -> Evidence:
    main = p.function("main")
    kills, ret_step = [], None
    for info in p.trace():
        if info.func_index != main:
            continue
        if isinstance(info.instruction, bc.KillRegister):
            kills.append((info.step, info.instruction.dst))
        elif info.instruction.is_return:
            ret_step = info.step
    facts = {"kills": kills, "ret_step": ret_step,
             "killed_before_return": all(step < ret_step for step, _reg in kills)}
    lines = [_("@main empties {n} registers with kill_register before it returns at step "
               "{step}:").format(n=len(kills), step=ret_step)]
    lines += ["  " + _("step {step}: kill_register ${register} (its value is dead: nothing "
                       "reads it again)").format(step=step, register=r) for step, r in kills]
    lines.append(_("A register's value is released when it is last used, not when the "
                   "function returns; the frame's register file itself goes at ret."))
    return Evidence(facts, lines)


def _graph_cannot_branch(p: Loaded) -> Evidence:
    from rvmdbg.graph import find_refusal
    refusal = find_refusal(p.module, "main")
    shallow = [p.kernel_name(i) for i in p.trace() if i.instruction.is_kernel_call]
    import numpy as np
    deep_args = [p.args[0], np.array(True)]
    deep = [p.kernel_name(i) for i in p.trace(deep_args) if i.instruction.is_kernel_call]
    facts = {"graph_refusal": refusal.message if refusal is not None else None,
             "vm_kernels_shallow": len(shallow), "vm_kernels_deep": len(deep)}
    lines = [_("The graph executor refuses this program: {why}").format(
                 why=facts["graph_refusal"]),
             _("The VM runs it: with %deep = False it dispatches {shallow} kernel(s) ({names}); "
               "with %deep = True, {deep}.").format(shallow=len(shallow),
                                                    names=", ".join(shallow) or _("none"),
                                                    deep=len(deep)),
             _("A static graph has no branches, so speed is not even the question here; where "
               "both run, they dispatch the same kernels and differ only in the overhead "
               "around them (View 2 measures it).")]
    return Evidence(facts, lines)


def _one_branch_only(p: Loaded) -> Evidence:
    import numpy as np
    infos = p.trace()
    zero_result = p.result
    divides_at_zero = [p.kernel_name(i) for i in infos if i.instruction.is_kernel_call
                       and "divide" in p.kernel_name(i)]
    ifs = [i for i in infos if isinstance(i.instruction, bc.If)]
    infos5 = p.trace([np.array(5, dtype="int32")])
    divides_at_five = [p.kernel_name(i) for i in infos5 if i.instruction.is_kernel_call
                       and "divide" in p.kernel_name(i)]
    facts = {"result": int(zero_result), "ifs": len(ifs),
             "if_went_to": ifs[0].next_pc if ifs else None,
             "divides_at_zero": len(divides_at_zero), "divides_at_five": len(divides_at_five),
             "result_at_five": int(p.result)}
    lines = [_("With %x = 0 the VM runs one if (at pc {pc}), goes to pc {went} and returns "
               "{result}: the division kernel runs {divides} times, so 100 / 0 never "
               "happens.").format(pc=ifs[0].pc, went=facts["if_went_to"],
                                  result=facts["result"], divides=facts["divides_at_zero"]),
             _("With %x = 5 the other branch runs: the division kernel runs {divides} time(s) "
               "and the result is {result}.").format(divides=facts["divides_at_five"],
                                                     result=facts["result_at_five"]),
             _("An if compares two registers and jumps: only the chosen branch's instructions "
               "execute.")]
    return Evidence(facts, lines)


def _registers_die_and_are_reused(p: Loaded) -> Evidence:
    from rvmdbg.vm.compiler import compile_module
    from rvmdbg.vm.machine import VirtualMachine
    from rvmdbg.values import copy_values, values_equal
    main = p.function("main")
    kills = [i.instruction.dst for i in p.trace()
             if i.func_index == main and isinstance(i.instruction, bc.KillRegister)]
    result = p.result
    reused = compile_module(p.module, reuse_registers=True)
    before = p.exe.functions[main].register_file_size
    after = reused.functions[reused.global_map["main"]].register_file_size
    again = VirtualMachine(reused).invoke("main", copy_values(p.args))
    facts = {"kills": len(kills), "registers": before, "registers_reused": after,
             "same_result": bool(values_equal(result, again))}
    same = (_("TVM's numbering gives @main {before} registers, one per value; numbered by "
              "liveness (--reuse-registers) it needs {after}, and the result is the same "
              "({result}).") if facts["same_result"] else
            _("TVM's numbering gives @main {before} registers, one per value; numbered by "
              "liveness (--reuse-registers) it needs {after}, and the result differs "
              "({result})."))
    lines = [_("@main kills {n} registers once their values are dead ({registers}).").format(
                 n=len(kills), registers=", ".join(f"${r}" for r in kills)),
             same.format(before=before, after=after, result=_value(result)),
             _("A register holds a value from its write to its last read; after that the "
               "number can hold another value.")]
    return Evidence(facts, lines)


def _captured_at_creation(p: Loaded) -> Evidence:
    infos = p.trace()
    made = next(i for i in infos if isinstance(i.instruction, bc.AllocClosure))
    called = next(i for i in infos if isinstance(i.instruction, bc.InvokeClosure))
    closure = next(w.new for w in made.writes)
    captured = [_value(v) for v in closure.captured]
    facts = {"made_step": made.step, "called_step": called.step, "captured": captured,
             "result": int(p.result)}
    lines = [_("Step {step}: alloc_closure makes the closure and captures {values} (the "
               "value %x has then).").format(step=made.step, values=", ".join(captured)),
             _("Step {step}: invoke_closure calls it, after %x was bound anew to 10 times %a; "
               "the result is {result}, computed with the captured value.").format(
                 step=called.step, result=facts["result"]),
             _("A closure takes its free variables' values when it is made (alloc_closure); "
               "the call copies nothing from the caller's environment.")]
    return Evidence(facts, lines)


def _same_tensor_in_callee(p: Loaded) -> Evidence:
    from rvmdbg.vm.machine import VirtualMachine
    from rvmdbg.values import copy_values
    vm = VirtualMachine(p.exe)
    vm.start("main", copy_values(p.args))
    passed = callee_param = None
    allocated = 0
    while not vm.halted:
        ins = vm.current_instruction()
        if isinstance(ins, bc.Invoke):
            passed = vm.frames[-1].registers[ins.args[0]]
            info = vm.step()
            allocated = info.allocated_bytes
            callee_param = vm.frames[-1].registers[0]
            break
        vm.step()
    facts = {"same_object": passed is callee_param and passed is not None,
             "bytes_allocated_by_call": allocated}
    lines = [(_("At the invoke, @main passes its tensor {value}; in @norm, $0 is the very "
                "same array object.") if facts["same_object"] else
              _("At the invoke, @main passes its tensor {value}; in @norm, $0 is another "
                "array.")).format(value=_value(passed)),
             _("The call allocated {n} bytes: arguments are passed by reference, and tensors "
               "are never written after they are made, so sharing them is safe.").format(
                 n=allocated)]
    return Evidence(facts, lines)


def _frame_per_tail_call(p: Loaded) -> Evidence:
    depth = 0
    from rvmdbg.vm.machine import VirtualMachine
    from rvmdbg.values import copy_values
    vm = VirtualMachine(p.exe)
    vm.start("main", copy_values(p.args))
    while not vm.halted:
        vm.step()
        depth = max(depth, len(vm.frames))
    n = int(p.args[0])
    facts = {"n": n, "max_depth": depth}
    lines = [_("@loop calls itself in tail position {n} times; at the deepest point the VM "
               "holds {depth} frames (@main and {loops} of @loop).").format(
                 n=n, depth=depth, loops=depth - 1),
             _("Relay's VM (as TVM's) has no tail-call optimisation: every invoke pushes a "
               "frame and every ret pops one.")]
    return Evidence(facts, lines)


MISCONCEPTIONS = [
    Misconception(
        "freed-at-return", N_("A function's registers are freed only when it returns."),
        "registers_freed_at_return.relay",
        N_("break op:KillRegister, continue, step, info registers: the kill has run, the "
           "register it named is empty (-) and @main still has calls to make"),
        _kills_before_return),
    Misconception(
        "graph-faster", N_("The graph executor is always faster than the VM."),
        "graph_always_faster.relay",
        N_("View 2 (or rvmdbg graph): the graph executor refuses the program; "
           "break op:InvokePacked counts the VM's kernels"), _graph_cannot_branch),
    Misconception(
        "if-both", N_("An if evaluates both branches, then picks one."),
        "if_evaluates_both.relay",
        N_("break op:If, then s: the VM jumps to one branch; the division never runs"),
        _one_branch_only),
    Misconception(
        "own-register", N_("Every Relay value lives in its own register for the whole "
                           "function."),
        "own_register_forever.relay",
        N_("break op:KillRegister in @main; rvmdbg compile --reuse-registers shows the "
           "smaller register file"), _registers_die_and_are_reused),
    Misconception(
        "closure-at-call", N_("A closure copies its environment when it is called."),
        "closure_captures_at_creation.relay",
        N_("break op:AllocClosure, print the closure's register; break op:InvokeClosure"),
        _captured_at_creation),
    Misconception(
        "tensor-copied", N_("A tensor is copied when it is passed to a function."),
        "tensors_copied_on_call.relay",
        N_("s into @norm, print $0: the caller's tensor itself"), _same_tensor_in_callee),
    Misconception(
        "tail-call", N_("A tail call reuses the caller's frame (a tail-recursive loop runs in "
                        "constant stack)."),
        "tail_call_reuses_frame.relay",
        N_("break @loop, c a few times, backtrace: one frame more each time"),
        _frame_per_tail_call),
]


__all__ = ["Misconception", "Evidence", "Loaded", "MISCONCEPTIONS", "load", "demonstrate",
           "PROGRAMS_DIR"]
