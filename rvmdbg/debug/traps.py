"""Where a motion may stop, as traps the VM checks inside its run loop.

A `TrapPlan` turns breakpoints (with their compiled conditions, hit counts and log points),
watchpoints and a motion's own stop (the return of `next` and `finish`, a source position)
into a set of trap locations and one check per location, which `VirtualMachine.run` calls
without leaving its loop (see `run(checks=...)`). The run leaves the loop only for a hit, so
asking a question costs a function call at the few instructions where its answer can change,
never a slow path:

- a breakpoint is a trap at its locations; its condition, hit count and log message are
  decided there;
- a write watchpoint on register $N of one activation of @f is a trap at exactly the
  instructions of @f whose static write set holds $N (`deps.read_write_sets`), which checks
  the activation (frame serial) first and compares the old and new values only there;
  a call that writes $N (its destination) is a trap at the call, which remembers the old
  value, and one at the instruction after it, where the callee's return lands; a parameter
  is written by the call that pushes the activation, seen at the activation's pc 0;
- a read watchpoint is a trap at the instructions of @f whose read set holds $N;
- `next` and `finish` stop at a location with a frame-depth test, evaluated in the loop too.

A plan works in one of two modes: "forward" (hit counts counted, log points logged: what
continue and its kin do) and "search" (what reverse motions replay segments with: a hit is
one that reverse continue would stop at; nothing counted).

The stop a check decided is in `decision`: (reason, number, message), with `after` True
when the machine ran the instruction before stopping (a watched write). `settle` does at the
state where a run begins what a trap would have done there, since `run()` never checks the
location it starts from.
"""
from __future__ import annotations

from rvmdbg.debug.breakpoints import ConditionError
from rvmdbg.debug.deps import writers_by_register
from rvmdbg.debug.heap import value_text


class _Parts:
    """What one location checks, in order: `landing` (a watched write that just happened:
    a call returned, an activation was pushed), `before` (breakpoints, read watchpoints,
    the motion's stop), `pre` (remember a value; never stops), `after` (a watched write this
    instruction makes)."""

    __slots__ = ("landing", "before", "pre", "after")

    def __init__(self):
        self.landing: list = []
        self.before: list = []
        self.pre: list = []
        self.after: list = []


class TrapPlan:
    """The traps of one motion (see the module docstring). Build with `add_breakpoints`,
    `add_watches`, `add_stop`, then `start()` at the state the motion begins from."""

    def __init__(self, vm, exe, mode: str = "forward", count_hits: bool = True, log=None,
                 register_index=None):
        self.vm = vm
        self.exe = exe
        # func index -> (register -> pcs writing it, register -> pcs reading it)
        self.register_index = register_index or (lambda fi: register_index_of(exe, fi))
        self.mode = mode
        self.count_hits = count_hits
        self.log = log                  # log(bp, registers): a log point was reached
        self._parts: dict = {}
        self._watches: list = []
        self._pending: dict = {}        # watch id -> (landing pc, old value)
        self._pushed: dict = {}         # watch id -> its activation has been pushed
        self.decision: tuple | None = None
        self.after = False
        self._scoped: set = set()       # locations of watchpoint parts
        self._breakpoints: dict = {}    # location -> its breakpoints' part
        self._stops: frozenset = frozenset()   # the motion's own stop locations
        self._stop = None                       # and its part
        self.traps: frozenset = frozenset()
        self.scoped: tuple | None = None
        self.checks: dict = {}

    # ------------------------------------------------------------ building

    def _at(self, loc) -> _Parts:
        self._scoped.add(loc)
        parts = self._parts.get(loc)
        if parts is None:
            parts = self._parts[loc] = _Parts()
        return parts

    def _decide(self, reason, number=None, message=None, after=False) -> bool:
        self.decision = (reason, number, message)
        self.after = after
        return True

    def add_breakpoints(self, by_location: dict) -> None:
        """`by_location`: (func_index, pc) -> the enabled breakpoints there."""
        made: dict = {}   # one check per set of breakpoints (op:NAME has thousands of places)
        for loc, bps in by_location.items():
            if self.mode == "search":
                bps = [bp for bp in bps if bp.searched_backward]
                if not bps:
                    continue
            key = tuple(bp.id for bp in bps)
            part = made.get(key)
            if part is None:
                part = made[key] = self._breaks(tuple(bps))
            self._breakpoints[loc] = part

    def _breaks(self, bps):
        forward = self.mode == "forward"
        count = self.count_hits
        frames = self.vm.frames

        def general(regs) -> bool:
            hit = None
            message = None
            for bp in bps:
                ok, msg = bp.test(regs)
                if not ok:
                    continue
                if forward:
                    if count:
                        if not bp.counts():
                            continue
                    elif not bp.searched_backward:
                        continue
                    if bp.log_message is not None:
                        if self.log is not None:
                            self.log(bp, frames[-1].registers)
                        continue
                if hit is None:
                    hit = bp
                message = message or msg
            if hit is None:
                return False
            return self._decide("breakpoint", hit.id, message)

        if len(bps) == 1 and bps[0]._cond is not None:
            # The common case, at full speed: a condition that does not hold stops nothing
            # and counts nothing.
            holds = bps[0]._cond.holds

            def conditional(regs) -> bool:
                try:
                    if not holds(regs):
                        return False
                except ConditionError:
                    pass
                return general(regs)
            return conditional
        return general

    def add_stop(self, locations, pred=None) -> None:
        """The motion's own stop: at `locations`, when `pred()` holds (None: always)."""
        decide = self._decide
        if pred is None:
            def stop(regs) -> bool:
                return decide("step")
        else:
            def stop(regs) -> bool:
                return pred() and decide("step")
        # Kept apart from the other parts: a source-level step stops at thousands of places.
        self._stops = frozenset(locations)
        self._stop = stop

    def add_watches(self, watches) -> None:
        """Watchpoints (enabled ones; each watches one register of one activation)."""
        exe = self.exe
        for wp in watches:
            fi = wp.func_index
            if not 0 <= fi < len(exe.functions):
                continue
            fn = exe.functions[fi]
            self._watches.append(wp)
            r = wp.register
            n = len(fn.instructions)
            writers, readers = self.register_index(fi)
            if wp.on == "read":
                for pc in readers.get(r, ()):
                    self._at((fi, pc)).before.append(self._read_part(wp))
                continue
            if r < len(fn.params):
                landing = self._at((fi, 0)).landing
                landing.append(self._push_part(wp))
                # the push writes the parameters in order: of two watched ones, the lower
                # register's watchpoint is hit first (as single steps see the writes)
                landing.sort(key=lambda part: part.register)
            for pc in writers.get(r, ()):
                ins = fn.instructions[pc]
                if ins.is_call:
                    self._at((fi, pc)).pre.append(self._call_part(wp, pc + 1))
                    if pc + 1 < n:
                        self._at((fi, pc + 1)).landing.append(
                            self._return_part(wp, pc + 1))
                elif not ins.is_return:
                    self._at((fi, pc)).after.append(self._write_part(wp))

    def _hit_watch(self, wp, old, new) -> bool:
        if self.mode == "forward" and self.count_hits:
            wp.hits += 1
        return self._decide("watchpoint", wp.id, f"{wp.name} of @{wp.func_name}: "
                            f"{value_text(old, 50)} -> {value_text(new, 50)}", after=True)

    def _write_part(self, wp):
        frames = self.vm.frames
        serial, r, triggered = wp.serial, wp.register, wp.triggered
        hit = self._hit_watch

        def write(regs):
            if frames[-1].serial != serial:
                return None
            old = regs[r]

            def written() -> bool:
                new = regs[r]
                return triggered(old, new) and hit(wp, old, new)
            return written
        return write

    def _call_part(self, wp, landing_pc):
        frames = self.vm.frames
        serial, r, pending = wp.serial, wp.register, self._pending

        def call(regs):
            if frames[-1].serial == serial:
                pending[wp.id] = (landing_pc, regs[r])
        return call

    def _return_part(self, wp, landing_pc):
        frames = self.vm.frames
        serial, r, pending = wp.serial, wp.register, self._pending

        def returned(regs) -> bool:
            if frames[-1].serial != serial:
                return False
            p = pending.get(wp.id)
            if p is None or p[0] != landing_pc:
                return False
            del pending[wp.id]
            old, new = p[1], regs[r]
            return wp.triggered(old, new) and self._hit_watch(wp, old, new)
        return returned

    def _push_part(self, wp):
        frames = self.vm.frames
        serial, r, pushed = wp.serial, wp.register, self._pushed

        def push(regs) -> bool:
            if frames[-1].serial != serial or pushed.get(wp.id):
                return False
            pushed[wp.id] = True
            return wp.triggered(None, regs[r]) and self._hit_watch(wp, None, regs[r])
        push.register = r
        return push

    def _read_part(self, wp):
        frames = self.vm.frames
        serial, r = wp.serial, wp.register

        def read(regs) -> bool:
            if frames[-1].serial != serial:
                return False
            if self.mode == "forward" and self.count_hits:
                wp.hits += 1
            return self._decide("watchpoint", wp.id, f"{wp.name} of @{wp.func_name} is read here: "
                                f"{value_text(regs[r], 50)}")
        return read

    # ------------------------------------------------------------ the checks

    def finish(self) -> "TrapPlan":
        """Make `traps` (armed everywhere), `scoped` (armed only in the watched activations:
        `run(scoped=...)`) and `checks` from what was added."""
        stops, stop = self._stops, self._stop
        # Breakpoints and the stop are kept apart from the other parts until here: they come
        # first and last among a location's `before` parts.
        for loc, parts in self._parts.items():
            part = self._breakpoints.get(loc)
            if part is not None:
                parts.before.insert(0, part)
            if loc in stops:
                parts.before.append(stop)
        self.traps = frozenset(self._breakpoints) | stops
        if self._scoped:
            self.scoped = (frozenset(wp.serial for wp in self._watches), frozenset(self._scoped))
        checks = self.checks = dict.fromkeys(stops, stop) if stops else {}
        for loc, part in self._breakpoints.items():
            if loc in stops:
                checks[loc] = self._first_of(part, stop)
            else:
                checks[loc] = part
        checks.update((loc, self._check(parts)) for loc, parts in self._parts.items())
        return self

    @staticmethod
    def _first_of(a, b):
        return lambda regs: a(regs) or b(regs)

    def _check(self, parts: _Parts):
        first = parts.landing + parts.before
        pre, after = parts.pre, parts.after
        if not pre and not after and len(first) == 1:
            return first[0]
        if not first and not pre and len(after) == 1:
            return after[0]

        def check(regs):
            for part in first:
                if part(regs):
                    return True
            for part in pre:
                part(regs)
            return self._afters(after, regs)
        return check

    @staticmethod
    def _afters(after, regs):
        """The callable a trap runs after the instruction, or None (nothing watched here)."""
        pending = [w for w in (part(regs) for part in after) if w]
        if not pending:
            return None
        if len(pending) == 1:
            return pending[0]
        return lambda: any(w() for w in pending)

    # ------------------------------------------------------------ running

    def start(self) -> None:
        """Read the watched activations' state off the stack where a run begins: a suspended
        activation whose call will write a watched register, activations already pushed."""
        self.decision = None
        self._pending.clear()
        self._pushed.clear()
        vm = self.vm
        frames = vm.frames
        for wp in self._watches:
            self._pushed[wp.id] = vm.pushes >= wp.serial
            d = wp.depth
            if wp.on == "read" or not d < len(frames) - 1 or frames[d].serial != wp.serial:
                continue
            f = frames[d]
            ins = self.exe.functions[f.func_index].instructions[f.pc]
            if ins.is_call and wp.register in ins.writes():
                self._pending[wp.id] = (f.pc + 1, f.registers[wp.register])

    def settle(self, before: bool, landing: bool, limit: int) -> bool:
        """Do what the trap at the current location would (a run never checks where it
        starts): `landing`/`before` say whether those parts may stop at this state (not
        where a motion begins: that stop was the previous motion's). A watched write runs
        its instruction here, one step, then goes on with the next state while that is a
        trap location and `vm.steps < limit`. True when a stop was decided (`decision`)."""
        vm = self.vm
        while not vm.halted and vm.frames:
            loc = vm.location
            parts = self._parts.get(loc)
            if parts is None:
                if not before:
                    return False
                part = self._breakpoints.get(loc)
                regs = vm.frames[-1].registers
                return bool((part is not None and part(regs))
                            or (loc in self._stops and self._stop(regs)))
            regs = vm.frames[-1].registers
            if landing:
                for part in parts.landing:
                    if part(regs):
                        return True
            if before:
                for part in parts.before:
                    if part(regs):
                        return True
            for part in parts.pre:
                part(regs)
            if not parts.after or vm.steps >= limit:
                return False
            written = self._afters(parts.after, regs)
            if written is None:
                return False
            vm.run(until_step=vm.steps + 1)
            if written():
                return True
            before = landing = True
        return False

    def take(self) -> tuple:
        """The decided stop, cleared for the next."""
        decision, self.decision = self.decision, None
        return decision


def run_checked(vm, until_step=None, breakpoints=None, checks=None, scoped=None):
    """`vm.run` with `checks` and `scoped` (see `VirtualMachine.run`) on any machine: the
    Relay VM decides them in its loop; for a machine without (`traps_with_checks`), this
    stops at every trap and asks the check here, with the same outcome."""
    if getattr(vm, "traps_with_checks", False):
        return vm.run(until_step, breakpoints, checks, scoped)
    everywhere = frozenset(breakpoints) if breakpoints else frozenset()
    serials, watched = scoped if scoped is not None else ((), frozenset())
    locations = everywhere | frozenset(watched)
    if not locations:
        return vm.run(until_step)
    checks = checks or {}
    first = True
    while True:
        if not first and not vm.halted:
            # a state the next run() would not check: the trap's work, here
            loc = vm.location
            armed = loc in everywhere or (loc in watched and vm.frames[-1].serial in serials)
            if armed:
                check = checks.get(loc)
                verdict = True if check is None else check(vm.frames[-1].registers)
                if verdict is True:
                    return None
                if verdict:
                    vm.run(until_step=vm.steps + 1)
                    if verdict() or vm.halted:
                        return vm.result if vm.halted else None
                    continue
        first = False
        if vm.halted or (until_step is not None and vm.steps >= until_step):
            return vm.result if vm.halted else None
        result = vm.run(until_step, locations)
        if vm.halted or (until_step is not None and vm.steps >= until_step):
            return result


def register_index_of(exe, fi: int) -> tuple[dict, dict]:
    """(register -> pcs of the function that write it, register -> pcs that read it)."""
    fn = exe.functions[fi]
    readers: dict = {}
    for pc, ins in enumerate(fn.instructions):
        for r in set(ins.reads()):
            readers.setdefault(r, []).append(pc)
    return writers_by_register(fn), readers


__all__ = ["TrapPlan", "register_index_of", "run_checked"]
