"""Register reuse: a smaller register file per function, by liveness over its control flow.

TVM's VM compiler gives every value a fresh register and never reuses one. This optional pass
(`rvmdbg compile --reuse-registers`) recolors registers so that values whose lifetimes do not
overlap share one: liveness is computed backwards over each function's control-flow graph
(the successors every instruction declares), two registers interfere when one is written
while the other is live afterwards, and a greedy coloring in program order assigns the lowest
free register, preferring the partner of a `move`. Parameters keep registers 0..n-1 (the
calling convention).

Two VM facts shape the use/def sets beyond `reads()`/`writes()`: a (non-built-in)
`invoke_packed` also reads its output registers, which hold the tensors `alloc_tensor` laid
out for it; and `kill_register` acts on the value in its register, so it both reads and
writes it.
"""
from __future__ import annotations

import gc

from rvmdbg.vm import bytecode as bc
from rvmdbg.vm.executable import VMFunction

# Operand names (instruction slots) that hold registers; every other slot is an immediate.
REGISTER_OPERANDS = frozenset({
    "src", "dst", "result", "args", "closure", "storage", "offset", "shape_register", "fields",
    "free_vars", "object", "test", "target", "size", "tensor", "newshape",
})
IMMEDIATE_OPERANDS = frozenset({
    "func_index", "packed_index", "arity", "output_size", "shape", "dtype", "tag", "field_index",
    "true_offset", "false_offset", "const_index", "device_index", "pc_offset", "value",
    "alignment", "dtype_hint", "src_device", "dst_device",
})


def rename_registers(instr: bc.Instruction, mapping) -> bc.Instruction:
    """A copy of instr with every register operand r replaced by mapping[r]."""
    operands = {}
    for slot in type(instr).__slots__:
        v = getattr(instr, slot)
        if slot in REGISTER_OPERANDS:
            v = tuple(mapping[r] for r in v) if isinstance(v, tuple) else mapping[v]
        elif slot not in IMMEDIATE_OPERANDS:
            raise ValueError(f"{instr.name}: operand {slot!r} is neither a register nor an "
                             f"immediate")
        operands[slot] = v
    return type(instr)(**operands)


def uses_defs(instr: bc.Instruction, kernels) -> tuple:
    """(registers read, registers written) as the VM really uses them."""
    if isinstance(instr, bc.InvokePacked):
        builtin = instr.packed_index < len(kernels) and kernels[instr.packed_index].builtin
        outs = instr.outputs
        return (instr.inputs if builtin else instr.args), outs
    if isinstance(instr, bc.KillRegister):
        return (instr.dst,), (instr.dst,)
    return instr.reads(), instr.writes()


def liveness(func: VMFunction, kernels) -> tuple:
    """(uses, defs, live_in, live_out) per pc, each a set of register numbers."""
    code = func.instructions
    n = len(code)
    uses, defs, succs = [], [], []
    preds: list = [[] for _ in range(n)]
    for pc, instr in enumerate(code):
        u, d = uses_defs(instr, kernels)
        uses.append(frozenset(u))
        defs.append(frozenset(d))
        nxt = tuple(s for s in instr.successors(pc) if 0 <= s < n)
        succs.append(nxt)
        for s in nxt:
            preds[s].append(pc)
    empty = frozenset()
    live_in = [empty] * n
    live_out = [empty] * n
    work = list(range(n))   # a stack: the last pcs first, the natural order for backward flow
    queued = [True] * n
    while work:
        pc = work.pop()
        queued[pc] = False
        nxt = succs[pc]
        if len(nxt) == 1:
            out = live_in[nxt[0]]
        else:
            out = frozenset().union(*(live_in[s] for s in nxt))
        live_out[pc] = out
        new_in = uses[pc] | (out - defs[pc]) if defs[pc] else uses[pc] | out
        if new_in != live_in[pc]:
            live_in[pc] = new_in
            for p in preds[pc]:
                if not queued[p]:
                    queued[p] = True
                    work.append(p)
    return uses, defs, live_in, live_out


def allocate_function(func: VMFunction, kernels) -> VMFunction:
    """func with registers recolored by liveness (parameters stay in 0..n-1)."""
    code = func.instructions
    nparams = len(func.params)
    _uses, defs, live_in, live_out = liveness(func, kernels)
    neighbours: dict = {}

    def interfere(a: int, b: int) -> None:
        if a != b:
            neighbours.setdefault(a, set()).add(b)
            neighbours.setdefault(b, set()).add(a)

    partner: dict = {}
    for pc, instr in enumerate(code):
        written = defs[pc]
        if not written:
            continue
        out = live_out[pc]
        if isinstance(instr, bc.Move):
            # a move's source and destination may share a register: same value
            out = out - {instr.src}
            partner.setdefault(instr.dst, instr.src)
            partner.setdefault(instr.src, instr.dst)
        for d in written:
            for r in out:
                interfere(d, r)
            for e in written:
                interfere(d, e)
    # parameters are all written on entry
    entry = (live_in[0] if code else frozenset()) | set(range(nparams))
    for p in range(nparams):
        for r in entry:
            interfere(p, r)

    color = {p: p for p in range(nparams)}
    for instr in code:
        for r in instr.registers():
            if r in color:
                continue
            taken = {color[m] for m in neighbours.get(r, ()) if m in color}
            want = color.get(partner.get(r))
            if want is not None and want not in taken:
                color[r] = want
                continue
            c = 0
            while c in taken:
                c += 1
            color[r] = c
    new_size = max([nparams, *(c + 1 for c in color.values())])
    new_code = [rename_registers(instr, color) for instr in code]
    return VMFunction(func.name, func.params, new_size, new_code, func.param_device_indexes)


def reuse_registers(exe) -> dict:
    """Recolor every function of exe in place; {function name: (size before, size after)}."""
    report = {}
    gc_was_enabled = gc.isenabled()
    gc.disable()  # many small sets: the collector would rescan everything alive, repeatedly
    try:
        for i, func in enumerate(exe.functions):
            new = allocate_function(func, exe.kernels)
            report[func.name] = (func.register_file_size, new.register_file_size)
            exe.functions[i] = new
    finally:
        if gc_was_enabled:
            gc.enable()
    return report


def register_report_text(report: dict) -> str:
    """`# @f: reg file size 21 -> 9` lines, and the total."""
    lines = [f"# @{name}: reg file size {before} -> {after}"
             for name, (before, after) in report.items()]
    total_before = sum(b for b, _ in report.values())
    total_after = sum(a for _, a in report.values())
    lines.append(f"# total: {total_before} -> {total_after} registers")
    return "\n".join(lines) + "\n"


__all__ = ["reuse_registers", "allocate_function", "liveness", "rename_registers", "uses_defs",
           "register_report_text"]
