"""RemoveUnusedFunctions: the globals @main does not reach are dropped, as TVM's VM does."""
from pass_helpers import load

from rvmdbg.passes.remove_unused import remove_unused_functions
from rvmdbg.vm.compiler import compile_module

PROGRAM = """
def @unused(%x: int32) -> int32 { @also_unused(%x) }
def @also_unused(%x: int32) -> int32 { %x }
def @called(%x: int32) -> int32 { @as_value(%x) }
def @as_value(%x: int32) -> int32 { %x + 1 }
def @apply(%f: fn (int32) -> int32, %x: int32) -> int32 { %f(%x) }
def @main(%x: int32) -> int32 { @apply(@called, %x) }
"""


def test_only_what_main_reaches_stays_in_source_order():
    out = remove_unused_functions(load(PROGRAM))
    assert list(out.functions) == ["called", "as_value", "apply", "main"]


def test_other_entries_keep_what_they_reach():
    out = remove_unused_functions(load(PROGRAM), entries=("main", "unused"))
    assert list(out.functions) == ["unused", "also_unused", "called", "as_value", "apply", "main"]


def test_a_module_without_main_keeps_everything():
    mod = load("def @f(%x: int32) -> int32 { %x }\ndef @g() -> int32 { 1 }")
    assert remove_unused_functions(mod) is mod


def test_the_executable_has_no_function_for_an_unused_global():
    exe = compile_module(load(PROGRAM))
    assert "unused" not in exe.global_map and "also_unused" not in exe.global_map
    exe = compile_module(load(PROGRAM), entries=("main", "unused"))
    assert "unused" in exe.global_map
