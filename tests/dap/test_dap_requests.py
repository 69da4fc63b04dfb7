"""rvmdbg dap over a pipe: every request the adapter supports, as an editor sends it.

Each test starts `python -m rvmdbg dap`, speaks DAP to it, and checks the responses and
events against what the debugger protocol says about the program (fib, option, mlp, ...).
"""
from __future__ import annotations

import re

from dap_client import PROGRAMS, DapClient

FIB = str(PROGRAMS / "fib.relay")
# fib.relay: line 6 `if (%n < 2) {` starts @fib's body; line 9 makes the two calls
FIB_BODY, FIB_CALLS = 6, 9


def _scopes(dap, frame_id=None):
    frame_id = frame_id or dap.top_frame()["id"]
    return {s["name"]: s for s in dap.request("scopes", {"frameId": frame_id})["body"]["scopes"]}


def _registers(dap) -> dict:
    ref = _scopes(dap)["Registers"]["variablesReference"]
    return {v["name"]: v for v in
            dap.request("variables", {"variablesReference": ref})["body"]["variables"]}


def _eval(dap, text, context="repl", ok=True):
    return dap.request("evaluate", {"expression": text, "context": context}, ok=ok)


def _step_no(dap) -> int:
    return int(re.match(r"step (\d+);", _eval(dap, "info history")["body"]["result"]).group(1))


def test_initialize_reports_the_capabilities_it_has(dap):
    caps = dap.request("initialize", {"adapterID": "rvmdbg"})["body"]
    for name in ("supportsConfigurationDoneRequest", "supportsStepBack",
                 "supportsConditionalBreakpoints", "supportsHitConditionalBreakpoints",
                 "supportsFunctionBreakpoints", "supportsInstructionBreakpoints",
                 "supportsDataBreakpoints", "supportsDisassembleRequest",
                 "supportsSteppingGranularity", "supportsGotoTargetsRequest",
                 "supportsExceptionInfoRequest", "supportsEvaluateForHovers",
                 "supportsRestartRequest", "supportsTerminateRequest", "supportsLogPoints"):
        assert caps[name] is True, name


def test_entry_stop_stack_trace_scopes_and_threads(dap):
    ev = dap.launch("fib.relay", stop_on_entry=True)
    assert ev["event"] == "stopped" and ev["body"]["reason"] == "entry"
    assert dap.request("threads")["body"]["threads"] == [{"id": 1, "name": "@main"}]
    frames = dap.request("stackTrace", {"threadId": 1})["body"]
    assert frames["totalFrames"] == 1
    top = frames["stackFrames"][0]
    assert top["name"] == "@main pc=0"
    assert top["source"]["path"] == FIB and top["line"] == 14 and top["column"] == 3
    assert re.fullmatch(r"0x[0-9a-f]+", top["instructionPointerReference"])
    scopes = _scopes(dap)
    assert list(scopes) == ["Registers", "Arguments", "Constants"]
    args = dap.request("variables", {"variablesReference":
                                     scopes["Arguments"]["variablesReference"]})["body"]
    assert args["variables"][0]["name"] == "%n" and args["variables"][0]["value"] == "10"
    consts = dap.request("variables", {"variablesReference":
                                       scopes["Constants"]["variablesReference"]})["body"]
    assert [v["name"] for v in consts["variables"]][:2] == ["Const[0]", "Const[1]"]


def test_breakpoint_step_in_step_back_reverse_continue_and_the_end(dap):
    ev = dap.launch("fib.relay", stop_on_entry=False, breakpoints=[FIB_BODY])
    assert ev["body"]["reason"] == "breakpoint" and ev["body"]["hitBreakpointIds"] == [1]
    first = dap.top_frame()
    assert first["line"] == FIB_BODY
    assert _registers(dap)["$0"]["value"] == "10"
    ev = dap.motion("continue")
    assert ev["body"]["reason"] == "breakpoint"
    assert _registers(dap)["$0"]["value"] == "9"
    assert len(dap.request("stackTrace", {"threadId": 1})["body"]["stackFrames"]) == 3
    here = _step_no(dap)
    ev = dap.motion("stepIn")
    assert ev["body"]["reason"] == "step" and _step_no(dap) > here
    ev = dap.motion("stepBack")
    assert ev["body"]["reason"] == "step" and _step_no(dap) == here
    ev = dap.motion("reverseContinue")
    assert ev["body"]["reason"] == "breakpoint"
    assert _registers(dap)["$0"]["value"] == "10" and dap.top_frame()["id"] == 2
    dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": []})
    mark = dap.mark()
    ev = dap.motion("continue")
    assert ev["event"] == "terminated"
    assert dap.event("exited", mark)["body"]["exitCode"] == 0
    assert any(o["body"]["output"] == "55\n" for o in dap.events("output", mark))
    r = dap.request("stackTrace", {"threadId": 1}, ok=False)
    assert "ended" in r["message"]


def test_breakpoint_lines_are_verified_and_moved_to_code(dap):
    dap.launch("fib.relay")
    bps = dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": [
        {"line": 2}, {"line": 9}, {"line": 999}]})["body"]["breakpoints"]
    assert bps[0]["verified"] and bps[0]["line"] > 2 and "moved" in bps[0]["message"]
    assert bps[1]["verified"] and bps[1]["line"] == 9
    assert not bps[2]["verified"] and "outside" in bps[2]["message"]
    other = dap.request("setBreakpoints", {"source": {"path": str(PROGRAMS / "loop.relay")},
                                           "breakpoints": [{"line": 3}]})["body"]
    assert other["breakpoints"][0]["verified"] is False


def test_a_saved_executable_takes_breakpoints_in_its_source(dap, tmp_path):
    import subprocess
    import sys

    from dap_client import ROOT, adapter_env
    exe = tmp_path / "fib.rvmx"
    subprocess.run([sys.executable, "-m", "rvmdbg", "compile", "programs/fib.relay", "-o",
                    str(exe)], check=True, capture_output=True, env=adapter_env(), cwd=ROOT)
    dap.launch(str(exe), stop_on_entry=True, args=["4"])
    bp = dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": [
        {"line": FIB_BODY}]})["body"]["breakpoints"][0]
    assert bp["verified"] and bp["source"]["path"] == FIB
    assert dap.motion("continue")["body"]["reason"] == "breakpoint"
    assert dap.top_frame()["source"]["path"] == FIB


def test_conditional_and_hit_count_breakpoints(dap):
    dap.launch("fib.relay")
    dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": [
        {"line": FIB_BODY, "condition": "$0 == 3"}]})
    assert dap.motion("continue")["body"]["reason"] == "breakpoint"
    assert _registers(dap)["$0"]["value"] == "3"
    mark = dap.mark()
    dap.request("restart", {"arguments": {"program": FIB, "stopOnEntry": True}})
    dap.event("stopped", mark)
    dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": [
        {"line": FIB_BODY, "hitCondition": "3"}]})
    assert dap.motion("continue")["body"]["reason"] == "breakpoint"
    assert _registers(dap)["$0"]["value"] == "8"   # fib(10), fib(9), fib(8): the third hit
    bad = dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": [
        {"line": FIB_BODY, "hitCondition": "often"}, {"line": FIB_BODY, "condition": "$0 =="}]})
    assert [b["verified"] for b in bad["body"]["breakpoints"]] == [False, False]
    assert "hit condition" in bad["body"]["breakpoints"][0]["message"]


def test_function_and_instruction_breakpoints(dap):
    dap.launch("fib.relay")
    fb = dap.request("setFunctionBreakpoints", {"breakpoints": [{"name": "fib"}]})["body"]
    assert fb["breakpoints"][0]["verified"]
    ev = dap.motion("continue")
    assert ev["body"]["reason"] == "function breakpoint"
    assert dap.top_frame()["name"] == "@fib pc=0"
    dap.request("setFunctionBreakpoints", {"breakpoints": []})
    ib = dap.request("setInstructionBreakpoints", {"breakpoints": [
        {"instructionReference": "@fib:14"}]})["body"]["breakpoints"][0]
    assert ib["verified"] and ib["line"] == FIB_CALLS
    ev = dap.motion("continue")
    assert ev["body"]["reason"] == "instruction breakpoint"
    top = dap.top_frame()
    assert top["name"] == "@fib pc=14"
    # the same instruction by its address plus an offset
    base = dap.request("setInstructionBreakpoints", {"breakpoints": [
        {"instructionReference": top["instructionPointerReference"], "offset": 7}]})["body"]
    assert base["breakpoints"][0]["verified"]
    assert dap.motion("continue")["body"]["reason"] == "instruction breakpoint"
    assert dap.top_frame()["name"] == "@fib pc=21"
    bad = dap.request("setInstructionBreakpoints", {"breakpoints": [
        {"instructionReference": "@nope:1"}, {"instructionReference": "0x0"}]})["body"]
    assert [b["verified"] for b in bad["breakpoints"]] == [False, False]


def test_log_points_print_and_do_not_stop(dap):
    dap.launch("fib.relay", stop_on_entry=True, args=["4"])
    dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": [
        {"line": FIB_BODY, "logMessage": "fib({%n}) with $0 = {$0}"}]})
    mark = dap.mark()
    assert dap.motion("continue")["event"] == "terminated"
    logs = [o["body"]["output"] for o in dap.events("output", mark)
            if o["body"]["output"].startswith("fib(")]
    assert logs[:3] == ["fib(4) with $0 = 4\n", "fib(3) with $0 = 3\n", "fib(2) with $0 = 2\n"]
    # fib(4) makes 9 calls, each entering line 6; the 4 that recurse enter it again at the
    # `if`'s join after their calls return
    assert len(logs) == 13


def test_data_breakpoint_on_a_register(dap):
    dap.launch("fib.relay", stop_on_entry=False, breakpoints=[FIB_BODY])
    regs_ref = _scopes(dap)["Registers"]["variablesReference"]
    info = dap.request("dataBreakpointInfo", {"variablesReference": regs_ref,
                                              "name": "$6"})["body"]
    assert info["dataId"] and info["accessTypes"] == ["write", "read"]
    consts_ref = _scopes(dap)["Constants"]["variablesReference"]
    assert dap.request("dataBreakpointInfo", {"variablesReference": consts_ref,
                                              "name": "Const[0]"})["body"]["dataId"] is None
    set_ = dap.request("setDataBreakpoints", {"breakpoints": [{"dataId": info["dataId"]}]})
    assert set_["body"]["breakpoints"][0]["verified"]
    dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": []})
    ev = dap.motion("continue")
    assert ev["body"]["reason"] == "data breakpoint"
    assert "$6" in ev["body"]["text"] or "$6" in str(dap.events("output"))
    r = dap.request("setDataBreakpoints", {"breakpoints": [{"dataId": "9:9:9"}]})
    assert r["body"]["breakpoints"][0]["verified"] is False


def test_read_data_breakpoint_stops_before_the_reading_instruction(dap):
    dap.launch("fib.relay", stop_on_entry=False, breakpoints=[FIB_BODY])
    regs_ref = _scopes(dap)["Registers"]["variablesReference"]
    info = dap.request("dataBreakpointInfo", {"variablesReference": regs_ref,
                                              "name": "$0"})["body"]
    set_ = dap.request("setDataBreakpoints", {"breakpoints": [
        {"dataId": info["dataId"], "accessType": "read"}]})
    assert set_["body"]["breakpoints"][0]["verified"]
    assert "on read" in set_["body"]["breakpoints"][0]["description"]
    both = dap.request("setDataBreakpoints", {"breakpoints": [
        {"dataId": info["dataId"], "accessType": "readWrite"}]})
    assert both["body"]["breakpoints"][0]["verified"] is False
    dap.request("setDataBreakpoints", {"breakpoints": [
        {"dataId": info["dataId"], "accessType": "read"}]})
    dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": []})
    ev = dap.motion("continue")
    assert ev["body"]["reason"] == "data breakpoint"
    # fib's first instruction reading $0 is `invoke_packed ... (in: $0, ...)` at pc 4
    assert dap.top_frame()["name"].endswith("pc=4")


def test_stepping_granularity(dap):
    dap.launch("fib.relay", stop_on_entry=False, breakpoints=[FIB_BODY])
    dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": []})
    pc = lambda: int(dap.top_frame()["name"].split("pc=")[1])  # noqa: E731
    step = _step_no(dap)
    dap.motion("stepIn", {"granularity": "instruction"})
    assert _step_no(dap) == step + 1 and pc() == 1
    start = dap.top_frame()
    dap.motion("next", {"granularity": "statement"})
    after = dap.top_frame()
    assert (after["line"], after["column"], after["endLine"], after["endColumn"]) != (
        start["line"], start["column"], start["endLine"], start["endColumn"])
    line = dap.top_frame()["line"]
    dap.motion("next", {"granularity": "line"})
    assert dap.top_frame()["line"] != line
    here = _step_no(dap)
    dap.motion("stepBack", {"granularity": "instruction"})
    assert _step_no(dap) == here - 1
    dap.request("next", {"threadId": 1, "granularity": "word"}, ok=False)


def test_step_out_returns_to_the_caller(dap):
    dap.launch("fib.relay", stop_on_entry=False, breakpoints=[FIB_BODY])
    dap.request("setBreakpoints", {"source": {"path": FIB}, "breakpoints": []})
    assert dap.top_frame()["id"] == 2
    dap.motion("stepOut")
    assert dap.top_frame()["id"] == 1 and dap.top_frame()["name"].startswith("@main")


def test_goto_targets_travel_to_a_step(dap):
    dap.launch("fib.relay", stop_on_entry=True, args=["5"])
    targets = dap.request("gotoTargets", {"source": {"path": FIB},
                                          "line": FIB_CALLS})["body"]["targets"]
    assert len(targets) == 1 and "next visit" in targets[0]["label"]
    assert _step_no(dap) == 0  # asking moved nothing
    ev = dap.motion("goto", {"targetId": targets[0]["id"]})
    assert ev["body"]["reason"] == "goto"
    assert dap.top_frame()["line"] == FIB_CALLS
    dap.motion("next", {"granularity": "line"})
    targets = dap.request("gotoTargets", {"source": {"path": FIB},
                                          "line": FIB_CALLS})["body"]["targets"]
    assert "previous visit" in targets[0]["label"]
    dap.request("goto", {"threadId": 1, "targetId": 99}, ok=False)


def test_a_vm_error_stops_with_exception_and_can_step_back(dap):
    ev = dap.launch("option.relay", stop_on_entry=False, args=["17", "0"])
    assert ev["body"]["reason"] == "exception"
    info = dap.request("exceptionInfo", {"threadId": 1})["body"]
    assert info["breakMode"] == "always" and info["description"]
    assert "@expect" in info["details"]["stackTrace"]
    assert dap.top_frame()["name"].startswith("@expect")
    ev = dap.motion("continue")  # the error is where the program ends: it stops there again
    assert ev["body"]["reason"] == "exception"
    ev = dap.motion("stepBack", {"granularity": "instruction"})
    assert ev["body"]["reason"] == "step"
    dap.request("exceptionInfo", {"threadId": 1}, ok=False)


def test_inputs_bind_parameters_from_an_npz_archive(dap, tmp_path):
    import numpy as np
    archive = tmp_path / "inputs.npz"
    np.savez(archive, n=np.array(7, dtype=np.int32))
    dap.launch("fib.relay", stop_on_entry=True, inputs=str(archive))
    assert _eval(dap, "%n", "watch")["body"]["result"] == "7"
    r = dap.request("restart", {"arguments": {"program": FIB, "inputs": str(tmp_path / "no.npz")}},
                    ok=False)
    assert "no.npz" in r["message"]


def test_limits_stop_as_an_exception(dap):
    ev = dap.launch("fib.relay", stop_on_entry=False, maxSteps=50)
    assert ev["body"]["reason"] == "exception"
    assert "max_steps" in dap.request("exceptionInfo", {"threadId": 1})["body"]["exceptionId"]


def test_disassemble_around_the_pc_with_source_locations(dap):
    dap.launch("fib.relay", stop_on_entry=False, breakpoints=[FIB_CALLS])
    top = dap.top_frame()
    body = dap.request("disassemble", {"memoryReference": top["instructionPointerReference"],
                                       "instructionOffset": -3, "instructionCount": 7})["body"]
    ins = body["instructions"]
    assert len(ins) == 7
    assert ins[3]["address"] == top["instructionPointerReference"]
    assert ins[3]["instruction"].startswith(("invoke", "load_const", "alloc", "kill"))
    assert all(i["line"] == FIB_CALLS for i in ins[3:5])
    assert ins[3]["symbol"].startswith("@fib:")
    start = dap.request("disassemble", {"memoryReference": "@fib:0", "instructionOffset": -2,
                                        "instructionCount": 3})["body"]["instructions"]
    assert [i.get("presentationHint") for i in start] == ["invalid", "invalid", None]
    assert start[2]["location"]["path"] == FIB
    dap.request("disassemble", {"memoryReference": "nowhere", "instructionCount": 1}, ok=False)


def test_evaluate_in_repl_watch_and_hover(dap):
    dap.launch("fib.relay", stop_on_entry=False, breakpoints=[FIB_CALLS])
    assert _eval(dap, "print $0")["body"]["result"].startswith("$0 = 10")
    assert _eval(dap, "$0", "watch")["body"]["result"] == "10"
    assert _eval(dap, "%n", "hover")["body"]["result"] == "10"
    assert _eval(dap, "print %n", "watch")["body"]["result"] == "10"
    deps = _eval(dap, "deps", "watch")["body"]["result"]
    assert deps.startswith("@fib pc=") and "reads" in deps
    lw = _eval(dap, "last-write $4", "watch")["body"]["result"]
    assert lw.startswith("written at step") and "@fib pc=4" in lw
    assert "step" in _eval(dap, "info history")["body"]["result"]
    assert "@fib" in _eval(dap, "bt")["body"]["result"]
    r = _eval(dap, "step", "watch", ok=False)
    assert "debug console" in r["message"]
    r = _eval(dap, "frobnicate", ok=False)
    assert "unknown command" in r["message"]
    # a motion typed in the debug console reports its stop
    mark = dap.mark()
    _eval(dap, "next")
    assert dap.event("stopped", mark)["body"]["reason"] == "step"
    # the outer frame's registers by frameId
    frames = dap.request("stackTrace", {"threadId": 1})["body"]["stackFrames"]
    outer = dap.request("evaluate", {"expression": "$0", "context": "watch",
                                     "frameId": frames[-1]["id"]})["body"]
    assert outer["result"] == "10"


def test_variables_open_tensors_with_a_summary_then_slices(dap):
    dap.launch("mlp.relay", stop_on_entry=True)
    args = dap.request("variables", {"variablesReference": _scopes(dap)["Arguments"][
        "variablesReference"]})["body"]["variables"]
    w1 = next(v for v in args if v["name"] == "%w1")
    assert w1["type"] == "Tensor[(4, 8), float32]" and w1["indexedVariables"] == 4
    kids = dap.request("variables", {"variablesReference": w1["variablesReference"]})["body"]
    names = [v["name"] for v in kids["variables"]]
    assert names[:3] == ["shape", "dtype", "size"] and "[0]" in names and "[3]" in names
    assert kids["variables"][0]["value"] == "[4, 8]"
    paged = dap.request("variables", {"variablesReference": w1["variablesReference"],
                                      "filter": "indexed", "start": 1, "count": 2})["body"]
    assert [v["name"] for v in paged["variables"]] == ["[1]", "[2]"]
    row = paged["variables"][0]
    assert row["type"] == "Tensor[(8,), float32]"
    cells = dap.request("variables", {"variablesReference": row["variablesReference"],
                                      "filter": "indexed"})["body"]["variables"]
    assert [c["value"][:3] for c in cells[:2]] == ["0.4", "0.1"]


def test_variables_open_adts_tuples_and_closures(dap):
    dap.launch("list_ops.relay", stop_on_entry=True)
    lst = dap.request("variables", {"variablesReference": _scopes(dap)["Arguments"][
        "variablesReference"]})["body"]["variables"][0]
    assert lst["type"] == "Cons" and lst["variablesReference"]
    fields = dap.request("variables", {"variablesReference": lst["variablesReference"]})
    assert [f["value"] for f in fields["body"]["variables"]][0] == "3"
    # run until a closure and a tuple have been in a register
    seen = {}
    for _ in range(400):
        for v in _registers(dap).values():
            if v["type"].startswith("fn @") and v["variablesReference"]:
                seen.setdefault("closure", v)
        if "closure" in seen:
            break
        dap.motion("stepIn", {"granularity": "instruction"})
    closure = seen["closure"]
    captured = dap.request("variables", {"variablesReference": closure["variablesReference"]})
    assert captured["body"]["variables"][0]["name"].startswith("captured")
    dap.request("disconnect")


def test_tuple_values_open_to_their_fields():
    dap = DapClient.start()
    try:
        dap.launch("tuples.relay", stop_on_entry=True)
        found = None
        for _ in range(300):
            for v in _registers(dap).values():
                if v["type"].startswith("(") and v["variablesReference"]:
                    found = v
            if found:
                break
            dap.motion("stepIn", {"granularity": "instruction"})
        kids = dap.request("variables", {"variablesReference": found["variablesReference"]})
        assert [k["name"] for k in kids["body"]["variables"]][:2] == ["0", "1"]
    finally:
        dap.close()


def test_restart_and_terminate(dap):
    dap.launch("fib.relay", stop_on_entry=False, breakpoints=[FIB_CALLS])
    assert _step_no(dap) > 0
    mark = dap.mark()
    dap.request("restart", {"arguments": {"program": FIB, "stopOnEntry": True, "args": ["3"]}})
    assert dap.event("stopped", mark)["body"]["reason"] == "entry"
    assert _step_no(dap) == 0
    assert _eval(dap, "$0", "watch")["body"]["result"] == "3"
    assert dap.motion("continue")["body"]["reason"] == "breakpoint"  # breakpoints kept
    mark = dap.mark()
    dap.request("terminate")
    dap.event("terminated", mark)


def test_disconnect_ends_the_adapter():
    dap = DapClient.start()
    dap.launch("fib.relay")
    dap.request("disconnect", {"terminateDebuggee": True})
    assert dap.proc.wait(timeout=20) == 0
    dap.close()


def test_bad_requests_get_error_responses(dap):
    assert "does not support" in dap.request("frobnicate", ok=False)["message"]
    assert dap.request("stackTrace", {"threadId": 1}, ok=False)["message"]
    dap.request("initialize", {"adapterID": "rvmdbg"})
    r = dap.request("launch", {"stopOnEntry": True}, ok=False)
    assert "'program' is required" in r["message"]
    assert r["body"]["error"]["format"]
    r = dap.request("launch", {"program": str(PROGRAMS / "nope.relay")}, ok=False)
    assert "file not found" in r["message"]
    r = dap.request("launch", {"program": FIB, "maxSteps": -3}, ok=False)
    assert "positive" in r["message"]
    r = dap.request("launch", {"program": FIB, "args": ["ten"]}, ok=False)
    assert "argument" in r["message"]
    dap.request("launch", {"program": FIB, "stopOnEntry": True})
    dap.request("configurationDone")
    dap.event("stopped")
    for command, args in [("setBreakpoints", {"source": {}}),
                          ("setBreakpoints", {"source": {"path": FIB}, "breakpoints": [{}]}),
                          ("setBreakpoints", {"source": "fib"}),
                          ("evaluate", {}),
                          ("evaluate", {"expression": "$0", "frameId": 99}),
                          ("variables", {"variablesReference": 12345}),
                          ("variables", {"variablesReference": "x"}),
                          ("scopes", {"frameId": 0}),
                          ("disassemble", {"memoryReference": "@fib:0"}),
                          ("gotoTargets", {"source": {"path": FIB}}),
                          ("launch", {"program": FIB}),
                          ("source", {"source": {"path": "/nonexistent.relay"}})]:
        r = dap.request(command, args, ok=False)
        assert r["message"], (command, r)
    # still alive and answering
    assert dap.request("threads")["body"]["threads"]


def test_pause_interrupts_a_long_continue(dap):
    dap.launch("fib.relay", stop_on_entry=True, args=["25"])  # seconds of running
    mark = dap.mark()
    dap.request("continue", {"threadId": 1})
    dap.request("pause", {"threadId": 1})
    ev = dap.wait_for(lambda m: m.get("event") in ("stopped", "terminated"), start=mark)
    assert ev["event"] == "stopped" and ev["body"]["reason"] == "pause"
    assert dap.motion("stepBack", {"granularity": "instruction"})["body"]["reason"] == "step"


def test_source_request_and_stdout_stays_clean(dap):
    dap.launch("fib.relay")
    text = dap.request("source", {"source": {"path": FIB}})["body"]["content"]
    assert text.startswith("#[version")
    # everything the adapter wrote to stdout parsed as framed messages
    assert all(m["type"] in ("response", "event") for m in dap.messages)


def test_serves_one_client_on_a_tcp_port():
    import socket
    import subprocess
    import sys

    from dap_client import ROOT, adapter_env
    proc = subprocess.Popen([sys.executable, "-m", "rvmdbg", "dap", "--port", "0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=adapter_env(), cwd=ROOT)
    try:
        line = proc.stderr.readline().decode()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        client = DapClient(sock.makefile("rb"), sock.makefile("wb"))
        client.launch("fib.relay")
        assert client.top_frame()["name"] == "@main pc=0"
        client.request("disconnect")
        assert proc.wait(timeout=20) == 0
        sock.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_a_port_out_of_range_is_a_usage_error():
    import subprocess
    import sys

    from dap_client import ROOT, adapter_env
    proc = subprocess.run([sys.executable, "-m", "rvmdbg", "dap", "--port", "70000"],
                          capture_output=True, text=True, timeout=60, env=adapter_env(), cwd=ROOT)
    assert proc.returncode == 2 and "0..65535" in proc.stderr


def test_meta_inputs_and_meta_random_launch_settings(dap, tmp_path):
    # a program pasted without its #[metadata] section, as --meta-inputs / --meta-random read it
    path = tmp_path / "bug.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) {\n'
                    '  add(%x, meta[relay.Constant][0] /* ty=Tensor[(2), float32] */)\n}\n',
                    encoding="utf-8")
    dap.launch(str(path), stop_on_entry=True, args=["[1, 2]", "[10, 20]"], metaInputs=True)
    assert _eval(dap, "%meta_const_0", "watch")["body"]["result"].startswith("[10., 20.]")
    r = dap.request("restart", {"arguments": {"program": str(path), "args": ["[1, 2]"],
                                              "metaInputs": True, "metaRandom": 1}}, ok=False)
    assert "exclude each other" in r["message"]
    r = dap.request("restart", {"arguments": {"program": str(path), "args": ["[1, 2]"],
                                              "metaRandom": 1}})
    assert r["success"]
