"""Kernel times in the debugger (rvmdbg/debug/profiling.py, issue 30): `info profile` shows
the run so far (a reverse motion drops what comes after), the stop after a kernel call says
its time, `next` and `finish` say the time they covered, and nothing of it while off."""
from __future__ import annotations

from dbg_helpers import program

from rvmdbg.debug.commands import CommandInterpreter
from rvmdbg.debug.session import DebugSession
from rvmdbg.vm import bytecode as bc


def _session(name="cnn.relay", args=None):
    exe, values = program(name, args)
    session = DebugSession(exe, values)
    return session, CommandInterpreter(session)


def _kernel_steps(session) -> list[int]:
    """The steps that call a kernel, found by stepping a second session."""
    other = DebugSession(session.original_exe, session.arguments())
    steps = []
    while not other.finished:
        if type(other.current_instruction()) is bc.InvokePacked:
            steps.append(other.step_count)
        other.step()
    return steps


def test_info_profile_turns_profiling_on_and_shows_the_run_so_far():
    session, cmd = _session()
    out = cmd.execute("info profile")
    assert "profiling is on from step 0" in out
    cmd.execute("continue")
    kernels = _kernel_steps(session)
    table = cmd.execute("info profile")
    assert f": {len(kernels)}," in table.splitlines()[0]
    assert "conv2d" in table and "Argument Shapes" in table and "\nSum " in table
    assert sorted(session.profile.calls) == kernels
    # back before the last kernel call: the table is the run so far
    cmd.execute(f"goto {kernels[-1]}")
    assert f": {len(kernels) - 1}," in cmd.execute("info profile").splitlines()[0]
    # forward again: the call is timed again, under the same step
    cmd.execute("continue")
    assert f": {len(kernels)}," in cmd.execute("info profile").splitlines()[0]
    cmd.execute("restart")
    assert "(steps 0 to 0): 0," in cmd.execute("info profile").splitlines()[0]


def test_the_stop_after_a_kernel_says_its_time_and_motions_their_time():
    session, cmd = _session()
    kernels = _kernel_steps(session)
    cmd.execute("set profile on")
    cmd.execute(f"goto {kernels[0]}")
    out = cmd.execute("step")
    # the first kernel computes batch_norm's scale from its parameters (SimplifyInference)
    assert "kernel vm_mod_fused_add_sqrt_divide_multiply took " in out and " us" in out
    out = cmd.execute("next")
    assert "took " in out and "1 step," in out and "kernel" not in out.splitlines()[0]
    out = cmd.execute("finish")
    assert "took " in out and "kernel calls" in out


def test_next_over_a_call_counts_the_callees_kernels():
    session, cmd = _session("fib.relay", ["6"])
    cmd.execute("set profile on")
    while not isinstance(session.current_instruction(), bc.Invoke):
        cmd.execute("step")
    out = cmd.execute("next")
    covered = [line for line in out.splitlines() if "took" in line][0]
    n = int(covered.split(", ")[1].split()[0])
    assert n > 10


def test_off_prints_no_times_and_restores_the_plain_tables():
    session, cmd = _session()
    before = session.vm.handler_at(0, 4)
    cmd.execute("set profile on")
    assert session.vm.handler_at(0, 4) is not before
    assert cmd.execute("set profile off") == "profiling is off"
    assert session.vm.handler_at(0, 4) is before
    assert session.profile is None
    assert "took" not in cmd.execute("next") and "took" not in cmd.execute("finish")


def test_profiling_another_machine_is_refused():
    from pathlib import Path

    from rvmdbg.minivm.parser import load_mvm
    exe = load_mvm(str(Path(__file__).resolve().parents[2] / "programs" / "demo.mvm"))
    cmd = CommandInterpreter(DebugSession(exe, []))
    assert cmd.execute("info profile").startswith("error: profiling times the Relay VM")
