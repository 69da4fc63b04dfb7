"""The VM compiler's pass pipeline: runs the passes in TVM's order and keeps every stage.

`default_pipeline()` is TVM's order before code generation: RemoveUnusedFunctions ->
SimplifyInference -> EtaExpand -> FoldConstant -> FuseOps -> ToANormalForm -> InferType ->
LambdaLift -> DeadCodeElimination -> ManifestAlloc -> ManifestLifetimes -> MemoryPlan; more
passes can be appended with `default_pipeline(extra=[...])`.
After each pass the type checker runs again (except after the passes that type their own
output: the memory dialect of ManifestAlloc is not made of user operators), so every kept
stage is a typed module, and its printed text is kept for `rvmdbg compile --passes`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from rvmdbg.passes.anf import to_a_normal_form
from rvmdbg.passes.dead_code import dead_code_elimination
from rvmdbg.passes.eta_expand import eta_expand
from rvmdbg.passes.fold_constant import fold_constant
from rvmdbg.passes.fuse_ops import fuse_ops
from rvmdbg.passes.lambda_lift import lambda_lift
from rvmdbg.passes.manifest_alloc import manifest_alloc
from rvmdbg.passes.manifest_lifetimes import manifest_lifetimes
from rvmdbg.passes.memory_plan import memory_plan
from rvmdbg.passes.remove_unused import ENTRIES, remove_unused_functions
from rvmdbg.passes.simplify_inference import simplify_inference
from rvmdbg.relay.ast import LEAF_KINDS, Call, Function, Module, OpRef, children, room_for_recursion
from rvmdbg.relay.dialect import DIALECT_OPS, KILL, MEMORY_OPS
from rvmdbg.relay.printer import print_expr, print_module
from rvmdbg.relay.typecheck import check_module, is_checked
from rvmdbg.i18n import N_


@dataclass(frozen=True)
class Pass:
    """One module-to-module transformation with the name TVM gives it."""

    name: str
    fn: Callable[[Module], Module]
    description: str = ""
    # The pass types what it makes itself; the checker does not run after it (ManifestAlloc's
    # memory dialect is not made of user operators; FuseOps gives each primitive function and
    # call the types of the expressions it groups, which tests compare with the checker's).
    typed_output: bool = False

    def __call__(self, mod: Module) -> Module:
        return self.fn(mod)

    def run_checked(self, mod: Module) -> Module:
        """The pass, followed by the type checker unless the pass types its own output or
        left every definition as it was (the same, already typed, objects)."""
        out = self.fn(mod)
        if self.typed_output:
            return out
        if out is not mod and is_checked(mod):
            # what was checked in mod still is in out, if out holds the same definitions
            out.checked_definitions = mod.checked_definitions
            out.warnings = list(mod.warnings)
        return _check(out)


@dataclass
class Stage:
    """The module as one pass left it (type-checked) and its printed text."""

    name: str
    description: str
    module: Module
    text: str
    _function_texts: dict | None = field(default=None, repr=False, compare=False)

    def function_texts(self) -> dict:
        """Each global's printed definition, by name (computed once)."""
        if self._function_texts is None:
            self._function_texts = {name: print_expr(fn)
                                    for name, fn in self.module.functions.items()}
        return self._function_texts


def _check(mod: Module) -> Module:
    """`mod` type-checked (as it is when nothing in it changed since its last check)."""
    if is_checked(mod):
        return mod
    out = check_module(mod)
    return mod if out is None else out


def _print(mod: Module) -> str:
    # a stage's text refers to its tensor constants without repeating the tables (TVM's
    # show_meta_data=False): the weights of a model would otherwise be printed per pass
    return print_module(mod, metadata=False)


def infer_type(mod: Module) -> Module:
    """InferType: the type checker as a pass (it fills checked_type everywhere). A module
    checked since its last change is already typed: it passes through as it is."""
    return _check(mod)


def remove_unused_pass(entries=ENTRIES) -> Pass:
    """RemoveUnusedFunctions keeping what the entry functions reach."""
    return Pass("RemoveUnusedFunctions",
                lambda mod: remove_unused_functions(mod, entries),
                N_("globals {entries} does not reach are removed").format(
                    entries="@" + ", @".join(entries)))


REMOVE_UNUSED_FUNCTIONS = remove_unused_pass()
SIMPLIFY_INFERENCE = Pass("SimplifyInference", simplify_inference,
                          N_("batch_norm becomes a multiply and an add by per-channel scale and "
                             "shift; dropout passes its data through"))
ETA_EXPAND = Pass("EtaExpand", eta_expand,
                  N_("constructors and operators used as values become fn wrappers"))
FOLD_CONSTANT = Pass("FoldConstant", fold_constant,
                     N_("operator calls on constants are evaluated; let-bound constants inlined; "
                        "an if on a constant takes its branch"))
FUSE_OPS = Pass("FuseOps", fuse_ops,
                N_("chains of operator calls become primitive functions, one kernel each"),
                typed_output=True)
TO_A_NORMAL_FORM = Pass("ToANormalForm", to_a_normal_form,
                        N_("every intermediate value is bound to a let, in evaluation order"))
INFER_TYPE = Pass("InferType", infer_type, N_("the type checker fills in every expression's type"),
                  typed_output=True)
LAMBDA_LIFT = Pass("LambdaLift", lambda_lift,
                   N_("nested functions become globals; closures capture their free variables"))
DEAD_CODE_ELIMINATION = Pass("DeadCodeElimination", dead_code_elimination,
                             N_("unused let bindings of pure values are removed"))

MANIFEST_ALLOC = Pass("ManifestAlloc", manifest_alloc,
                      N_("kernel calls become explicit storage and tensor allocation plus "
                         "destination-passing vm.invoke_tvm_op"), typed_output=True)
MANIFEST_LIFETIMES = Pass("ManifestLifetimes", manifest_lifetimes,
                          N_("memory.kill after the last use of each tensor and storage"),
                          typed_output=True)
MEMORY_PLAN = Pass("MemoryPlan", memory_plan,
                   N_("storage whose tensors went only into local tuples and views is released "
                      "after their last use, for the pool to hand out again"),
                   typed_output=True)
INPUT_DESCRIPTION = N_("the type-checked program")
SKIPPED_DESCRIPTION = N_("skipped: the input already holds this pass's output")

DEFAULT_PASSES = (REMOVE_UNUSED_FUNCTIONS, SIMPLIFY_INFERENCE, ETA_EXPAND, FOLD_CONSTANT, FUSE_OPS,
                  TO_A_NORMAL_FORM, INFER_TYPE, LAMBDA_LIFT, DEAD_CODE_ELIMINATION,
                  MANIFEST_ALLOC, MANIFEST_LIFETIMES, MEMORY_PLAN)
# the descriptions as written (English), for the views to translate where they show them
DESCRIPTIONS = frozenset(p.description for p in DEFAULT_PASSES[1:]) | {INPUT_DESCRIPTION,
                                                                     SKIPPED_DESCRIPTION}


class Pipeline:
    """An ordered list of passes; `run` keeps the module after each of them."""

    def __init__(self, passes: Iterable[Pass]):
        self.passes: list[Pass] = list(passes)

    def __iter__(self):
        return iter(self.passes)

    def __len__(self) -> int:
        return len(self.passes)

    def names(self) -> list[str]:
        return [p.name for p in self.passes]

    def run(self, mod: Module, include_input: bool = True) -> list[Stage]:
        """Stages in order: the type-checked input (named "Input", unless include_input is
        False), then one per pass. Raises whatever a pass or the type checker raises.
        A pass the input is already past (a printed ManifestAlloc stage read back) leaves it
        as it is, and its stage says so."""
        with room_for_recursion():
            mod = _check(mod)
            stages: list[Stage] = []
            if include_input:
                stages.append(Stage("Input", INPUT_DESCRIPTION, mod, _print(mod)))
            done = self._passes_done(mod)
            text = None
            for i, p in enumerate(self.passes):
                if i < done:
                    text = text or _print(mod)
                    stages.append(Stage(p.name, SKIPPED_DESCRIPTION, mod, text))
                    continue
                mod = p.run_checked(mod)
                stages.append(Stage(p.name, p.description, mod, _print(mod)))
            return stages

    def apply(self, mod: Module) -> Module:
        """Only the final module (no printing of intermediate stages)."""
        with room_for_recursion():
            mod = _check(mod)
            for p in self.passes[self._passes_done(mod):]:
                mod = p.run_checked(mod)
            return mod

    def _passes_done(self, mod: Module) -> int:
        """How many leading passes the module is already past: a module holding the memory
        dialect was printed after ManifestAlloc (after ManifestLifetimes if it kills)."""
        reached = memory_stage(mod)
        names = self.names()
        if reached is None or reached not in names:
            return 0
        return names.index(reached) + 1


def memory_stage(mod: Module) -> str | None:
    """The last pass whose output the module holds, judged by the memory dialect in it:
    "ManifestLifetimes" (it allocates and kills), "ManifestAlloc" (it allocates), or None.
    Kills alone do not make a stage: TVM's tests write `memory.kill` into programs whose
    operators are not fused yet, and those go through every pass. Neither does the dialect
    beside an operator call outside a primitive function (TVM's dead-code tests allocate
    storage next to a plain `cast`): such a module is not fused yet, and TVM's VM compiler
    runs every pass on it, FuseOps leaving the dialect's calls where they are."""
    allocates = kills = False
    leaves = LEAF_KINDS
    for fn in mod.functions.values():
        # every node once, kernels (primitive functions) not entered, leaves not stacked
        stack, seen = [fn.body], set()
        while stack:
            e = stack.pop()
            kind = type(e)
            if kind is Call:
                op = e.op
                if type(op) is OpRef:
                    if op.name in MEMORY_OPS:
                        if op.name == KILL:
                            kills = True
                        else:
                            allocates = True
                    elif op.name not in DIALECT_OPS:
                        return None  # an operator not fused yet
            elif kind is Function and e.is_primitive:
                continue
            for c in children(e):
                if type(c) not in leaves and id(c) not in seen:
                    seen.add(id(c))
                    stack.append(c)
    if allocates and kills:
        return MANIFEST_LIFETIMES.name
    return MANIFEST_ALLOC.name if allocates else None


def default_pipeline(extra: Iterable[Pass] = (), entries=ENTRIES) -> Pipeline:
    """TVM's pass order before code generation, followed by the passes in extra; the
    functions kept are those `entries` reach (TVM: main)."""
    passes = list(DEFAULT_PASSES)
    if tuple(entries) != ENTRIES:
        passes[0] = remove_unused_pass(tuple(entries))
    return Pipeline([*passes, *extra])


def changed(before: Stage, after: Stage) -> dict[str, str]:
    """The globals whose definition differs between two stages, in the later stage's order:
    name -> "added", "removed" or "changed"."""
    old, new = before.function_texts(), after.function_texts()
    out: dict[str, str] = {}
    for name, text in new.items():
        if name not in old:
            out[name] = "added"
        elif old[name] != text:
            out[name] = "changed"
    for name in old:
        if name not in new:
            out[name] = "removed"
    return out
