"""One line per executed instruction: `format_step` and `trace_lines` (`rvmdbg run --trace`)."""
from __future__ import annotations

from typing import Iterator

from rvmdbg.i18n import _
from rvmdbg.vm.state import StepInfo, summary

# ---------------------------------------------------------------- tracing

def format_step(vm, info: StepInfo, width: int = 40) -> str:
    """`[step 12] @main pc=3: load_consti $5 1    $5=1`: one executed instruction."""
    fn = vm.exe.functions[info.func_index]
    text = info.instruction.text() if info.instruction is not None else "?"
    # the stop line's step label, in the language in use (as the debugger's)
    head = _("[step {step}]").format(step=info.step) + f" @{fn.name} pc={info.pc}: {text}"
    if info.halted:
        effect = f"halt: {summary(info.result, width)}"
    elif info.pushed is not None:
        callee = vm.exe.functions[info.pushed.func_index].name
        params = ", ".join(f"${w.register}={summary(w.new, width)}" for w in info.writes)
        effect = f"call @{callee}({params})"
    elif info.popped is not None:
        caller = vm.exe.functions[info.next_func_index].name
        w = info.writes[0]
        effect = f"return to @{caller} ${w.register}={summary(w.new, width)}"
    else:
        parts = [f"${w.register}={summary(w.new, width)}" for w in info.writes]
        if info.jump_target is not None:
            parts.append(f"-> pc={info.jump_target}")
        effect = ", ".join(parts)
    return f"{head}    {effect}" if effect else head


def trace_lines(vm, width: int = 40) -> Iterator[str]:
    """Step a started machine to the end, yielding one line per executed instruction.

    A VMError propagates after the lines of the instructions that completed."""
    while not vm.halted:
        yield format_step(vm, vm.step(), width)
