"""The adapter's data model without a process: register values as DAP variables (summary
first, then slices, paged), and instruction addresses (hex numbers or `@f:PC`)."""
from __future__ import annotations

import numpy as np
import pytest

from rvmdbg.dap.addresses import BASE, AddressError, InstructionAddresses, format_address
from rvmdbg.dap.variables import MAX_CHILDREN, VariableStore
from rvmdbg.values import ADTValue, RefCell
from rvmdbg.vm.objects import VMClosure

from dap_client import PROGRAMS


def kids(store, var, **kw):
    return store.children(var["variablesReference"], kw.get("start", 0), kw.get("count", 0),
                          kw.get("which"))


def test_scalars_and_empty_registers_do_not_open():
    store = VariableStore()
    assert store.variable("$0", np.array(3, dtype=np.int32))["variablesReference"] == 0
    empty = store.variable("$1", None)
    assert empty["value"] == "(empty)" and empty["variablesReference"] == 0


def test_a_tensor_opens_to_its_summary_then_slices():
    store = VariableStore()
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    var = store.variable("$2", a)
    assert var["namedVariables"] == 6 and var["indexedVariables"] == 3
    named = {v["name"]: v["value"] for v in kids(store, var, which="named")}
    assert named == {"shape": "[3, 4]", "dtype": "float32", "size": "12", "min": "0f",
                     "max": "11f", "mean": "5.5"}
    rows = kids(store, var, which="indexed", start=1, count=1)
    assert [r["name"] for r in rows] == ["[1]"]
    cells = kids(store, rows[0], which="indexed")
    assert [c["value"] for c in cells] == ["4f", "5f", "6f", "7f"]


def test_bool_and_empty_tensors_summarise():
    store = VariableStore()
    b = store.variable("b", np.array([True, False, True]))
    assert {v["name"]: v["value"] for v in kids(store, b, which="named")}["mean"] == "0.666667"
    e = store.variable("e", np.zeros((0, 3), dtype=np.int32))
    assert e["namedVariables"] == 3 and e["indexedVariables"] == 0
    assert [v["name"] for v in kids(store, e)] == ["shape", "dtype", "size"]


def test_a_long_first_axis_is_capped_unless_paged():
    store = VariableStore()
    var = store.variable("$3", np.zeros(MAX_CHILDREN + 50, dtype=np.int8))
    unpaged = kids(store, var, which="indexed")
    assert len(unpaged) == MAX_CHILDREN + 1 and unpaged[-1]["name"] == "..."
    paged = kids(store, var, which="indexed", start=MAX_CHILDREN + 40, count=100)
    assert [v["name"] for v in paged][0] == f"[{MAX_CHILDREN + 40}]" and len(paged) == 10


def test_adts_tuples_cells_and_closures_open_to_their_parts():
    store = VariableStore()
    lst = ADTValue(1, "Cons", (np.array(1, dtype=np.int32), ADTValue(0, "Nil", ())))
    var = store.variable("$4", lst)
    fields = kids(store, var)
    assert [(f["name"], f["value"]) for f in fields] == [("0", "1"), ("1", "Nil")]
    pair = store.variable("t", ADTValue(0, None, (lst, np.array(2.5, dtype=np.float32))))
    assert [f["name"] for f in kids(store, pair)] == ["0", "1"]
    assert kids(store, pair)[0]["variablesReference"] != 0  # the list opens again
    cell = store.variable("r", RefCell(np.array(7, dtype=np.int32)))
    assert kids(store, cell)[0]["value"] == "7"
    clo = store.variable("c", VMClosure(2, "adder", (np.array(5, dtype=np.int32),)))
    assert clo["type"] == "fn @adder"
    assert [(f["name"], f["value"]) for f in kids(store, clo)] == [("captured 0", "5")]


def test_references_end_at_the_next_stop():
    store = VariableStore()
    var = store.variable("$0", np.zeros(3))
    store.clear()
    with pytest.raises(KeyError):
        kids(store, var)


def test_addresses_lay_functions_end_to_end():
    from rvmdbg.relay.loader import load_file
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    exe = compile_module(check_module(load_file(str(PROGRAMS / "fib.relay"))))
    addr = InstructionAddresses(exe)
    fib, main = exe.func_index("fib"), exe.func_index("main")
    n_fib = len(exe.functions[fib].instructions)
    assert addr.address(fib, 0) == BASE and addr.location(BASE + n_fib) == (main, 0)
    assert addr.location(BASE - 1) is None and addr.location(BASE + addr.size) is None
    assert addr.parse("@fib:3") == BASE + 3 == addr.parse(format_address(BASE + 3))
    assert addr.parse("@main") == addr.address(main, 0) == addr.parse(str(BASE + n_fib))
    for bad in ("@nope:1", "@fib:999", "fib:x", ""):
        with pytest.raises(AddressError):
            addr.parse(bad)
