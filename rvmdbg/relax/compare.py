"""The teaching comparison: one small model (a dense layer with a ReLU) compiled twice, by
rvmdbg's Relay VM compiler (its 21 opcodes) and by TVM's Relax VM (`relax.build`: four
instructions, allocation and bookkeeping as `vm.builtin.*` calls), from real compiles each
time (`docs/relax-vm.md` holds the text `comparison_markdown()` makes, and a test checks it is
still what the compilers give; View 1 shows the two listings side by side).

Both compilers run here: the Relay one always, TVM's only with apache-tvm installed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rvmdbg.i18n import N_, _

RELAY_MODEL = """#[version = "0.0.5"]
def @main(%x: Tensor[(3, 4), float32], %w: Tensor[(5, 4), float32]) -> Tensor[(3, 5), float32] {
  %0 = nn.dense(%x, %w);
  nn.relu(%0)
}
"""

TVMSCRIPT_MODEL = """# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), w: R.Tensor((5, 4), "float32")) -> R.Tensor((3, 5), "float32"):
        with R.dataflow():
            y = R.nn.relu(R.linear(x, w))
            R.output(y)
        return y
"""

# What each Relay VM opcode's work is on the Relax VM (facts of the two instruction sets)
MOVED = (
    ("alloc_storage", "call vm.builtin.alloc_storage"),
    ("alloc_tensor", "call vm.builtin.alloc_tensor"),
    ("invoke_packed", "call KERNEL (outputs passed as trailing arguments)"),
    ("invoke", "call FUNCTION (a VM function by name)"),
    ("load_const", "c[N], an operand of a call"),
    ("load_consti", "iN, an operand of a call"),
    ("kill", "call vm.builtin.null_value"),
    ("alloc_adt / get_field", "call vm.builtin.make_tuple / vm.builtin.tuple_getitem"),
    ("alloc_closure / invoke_closure", "call vm.builtin.make_closure / vm.builtin.invoke_closure"),
    ("shape_of / reshape_tensor", "call vm.builtin.shape_of / vm.builtin.reshape"),
    ("if / goto / ret", "If / Goto / Ret"),
)


@dataclass
class Side:
    """One compiler's listing of the model: instruction lines and which kinds it used."""

    title: str
    lines: list
    kinds: list = field(default_factory=list)     # opcodes / instructions used, in order
    callees: list = field(default_factory=list)   # kernels and builtins called, in order


def _first_seen(items) -> list:
    seen: dict = {}
    for x in items:
        seen.setdefault(x, None)
    return list(seen)


def relay_side() -> Side:
    """The model compiled by rvmdbg's Relay VM compiler (the default pipeline)."""
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm import bytecode as bc
    from rvmdbg.vm.compiler import compile_module
    exe = compile_module(check_module(load_module(RELAY_MODEL, "model.relay")))
    kernels = exe.kernel_names()
    fn = exe.functions[exe.func_index("main")]
    lines = [f"{pc:>2}: {ins.text()}" for pc, ins in enumerate(fn.instructions)]
    kinds = _first_seen(ins.text().split(" ")[0] for ins in fn.instructions)
    callees = _first_seen(kernels[ins.packed_index] for ins in fn.instructions
                          if ins.is_kernel_call)
    title = _("rvmdbg's Relay VM: {n} of its {total} opcodes").format(
        n=len(kinds), total=len(bc.OPCODES))
    return Side(title, lines, kinds, callees)


def relax_side() -> Side:
    """The model compiled by TVM (`relax.build(mod, target="llvm")`), read by rvmdbg."""
    from rvmdbg.relax import require_tvm
    from rvmdbg.relax.executable import from_tvm
    tvm = require_tvm()
    from tvm import relax
    exe = from_tvm(relax.build(tvm.script.from_source(TVMSCRIPT_MODEL), target="llvm"))
    fn = exe.functions[exe.func_index("main")]
    lines = [f"{pc:>2}: {ins.text()}" for pc, ins in enumerate(fn.instructions)]
    kinds = _first_seen(ins.name for ins in fn.instructions)
    callees = _first_seen(ins.func for ins in fn.instructions if ins.name == "Call")
    title = _("TVM's Relax VM: {n} of its 4 instructions").format(n=len(kinds))
    return Side(title, lines, kinds, callees)


def side_by_side(left: Side, right: Side, gap: int = 3) -> list[str]:
    """The two listings in two columns, titles first."""
    width = max(len(x) for x in [left.title, *left.lines]) + gap
    rows = [left.title.ljust(width) + right.title, ""]
    for i in range(max(len(left.lines), len(right.lines))):
        a = left.lines[i] if i < len(left.lines) else ""
        b = right.lines[i] if i < len(right.lines) else ""
        rows.append((a.ljust(width) + b).rstrip())
    return rows


def summary_lines(left: Side, right: Side) -> list[str]:
    """Counts and what was called, from the two compiles."""
    builtins = [c for c in right.callees if c.startswith("vm.builtin.")]
    kernels = [c for c in right.callees if not c.startswith("vm.builtin.")]
    return [
        _("Relay VM: {n} instructions, opcodes {ops}; kernels {kernels}").format(
            n=len(left.lines), ops=", ".join(left.kinds), kernels=", ".join(left.callees)),
        _("Relax VM: {n} instructions, {kinds}; kernels {kernels}; builtins {builtins}").format(
            n=len(right.lines), kinds=", ".join(right.kinds), kernels=", ".join(kernels),
            builtins=", ".join(builtins)),
    ]


def moved_lines() -> list[str]:
    """What moved from opcodes into builtins: one line per Relay VM opcode (or pair)."""
    width = max(len(a) for a, _b in MOVED) + 3
    head = _("Relay VM opcode").ljust(width) + _("on the Relax VM")
    return [head] + [a.ljust(width) + b for a, b in MOVED]


def comparison_markdown() -> str:
    """The block `docs/relax-vm.md` holds between its comparison markers (English)."""
    left, right = relay_side(), relax_side()
    out = ["```", *side_by_side(left, right), "```", "", *[f"- {s}" for s in
                                                           summary_lines(left, right)], "",
           "```", *moved_lines(), "```"]
    return "\n".join(out) + "\n"


def call_counts(exe) -> list[str]:
    """What View 2 can say of a Relax VM executable: per VM function, its instructions and
    what its Calls call (kernels, builtins, VM functions; allocations among the builtins)."""
    out = []
    vm_names = set(exe.function_names())
    for fn in exe.functions:
        calls = [ins.func for ins in fn.instructions if ins.name == "Call"]
        kernels = [c for c in calls if not c.startswith("vm.builtin.") and c not in vm_names]
        builtins = [c for c in calls if c.startswith("vm.builtin.")]
        allocs = [c for c in builtins if c in ("vm.builtin.alloc_storage",
                                               "vm.builtin.alloc_tensor")]
        out.append(_("@{name}: {n} instructions; calls {k} kernels ({names}), {b} builtins "
                     "({a} allocations), {v} calls of VM functions").format(
            name=fn.name, n=len(fn.instructions), k=len(kernels),
            names=", ".join(_first_seen(kernels)) or "-", b=len(builtins), a=len(allocs),
            v=len(calls) - len(kernels) - len(builtins)))
    return out


RELAY_STAGE, RELAX_STAGE = N_("Same model: Relay VM"), N_("Same model: Relax VM")
RELAY_STAGE_DESCRIPTION = N_("a dense layer and a ReLU, compiled by rvmdbg's Relay VM compiler")
RELAX_STAGE_DESCRIPTION = N_("the same model, compiled by TVM's relax.build: allocation, checks "
                             "and frees are builtin calls")


def stage_lines(side: Side, summary: str) -> list[str]:
    """What View 1's comparison stage shows of one side: title, listing, what it used."""
    from rvmdbg.views.text import wrap
    head, _sep, rest = summary.partition(": ")
    parts = [line for part in rest.split("; ") for line in
             (["  " + x for x in wrap(part, 70)][:1] + ["    " + x for x in wrap(part, 70)[1:]])]
    return [side.title, "", *side.lines, "", head + ":", *parts]

__all__ = ["call_counts", "RELAY_MODEL", "TVMSCRIPT_MODEL", "MOVED", "Side", "relay_side", "relax_side",
           "side_by_side", "summary_lines", "moved_lines", "comparison_markdown",
           "RELAY_STAGE", "RELAX_STAGE", "RELAY_STAGE_DESCRIPTION", "RELAX_STAGE_DESCRIPTION",
           "stage_lines"]
