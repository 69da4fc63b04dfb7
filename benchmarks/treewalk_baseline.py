"""A plain tree-walking evaluator of a typed Relay module, as a yardstick for bench_vm.py.

The issue that set the VM's speed targets compares the VM with "the tree-walking
interpreter". rvmdbg's reference interpreter (`rvmdbg.relay.interpreter`) is not one: it
compiles each expression once into a Python closure. This is the textbook alternative: every
evaluation of a node looks at the node's class and recurses into its children, the shape of
TVM's own Relay interpreter (a visitor over the expression). It calls the operators through
the same entry point as the reference interpreter (`OpDef.kernel` with the checked call's
attributes), and handles the subset of Relay the benchmark programs use: global calls,
operator calls, `if`, `let`, variables and constants. Not part of rvmdbg: nothing else uses
it, and it checks no limits.

`python3 benchmarks/treewalk_baseline.py` runs fib(10) and loop(100).
"""
from __future__ import annotations

import gc
import sys
from pathlib import Path

# Runnable as a plain script from a checkout, like the other benchmarks.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rvmdbg.relay.ast import Call, Constant, If, Let, OpRef, Var  # noqa: E402
from rvmdbg.relay.ops import OPS  # noqa: E402


class TreeWalker:
    def __init__(self, mod):
        self.functions = mod.functions
        self.dispatch = {Call: self.call, If: self.if_, Let: self.let, Var: self.var,
                         Constant: self.constant}

    def run(self, entry: str, args: list):
        """entry(args), with the cyclic collector paused as the reference interpreter and the
        VM pause it (their runs make no reference cycles either)."""
        fn = self.functions[entry]
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self.eval(fn.body, dict(zip(fn.params, args)))
        finally:
            if was_enabled:
                gc.enable()

    def eval(self, e, env: dict):
        # (no check for classes outside the subset: a KeyError names the class; written as
        # tersely as this, as a handler of a deep recursion's speed depends on its frame)
        return self.dispatch[type(e)](e, env)

    def var(self, e, env):
        return env[e]

    def constant(self, e, env):
        return e.data

    def let(self, e, env):
        env[e.var] = self.eval(e.value, env)
        return self.eval(e.body, env)

    def if_(self, e, env):
        return self.eval(e.true_branch if self.eval(e.cond, env).item() else e.false_branch, env)

    def call(self, e, env):
        args = [self.eval(a, env) for a in e.args]
        op = e.op
        if type(op) is OpRef:
            return OPS[op.name].kernel(args, e.attrs)
        fn = self.functions[op.name]
        return self.eval(fn.body, dict(zip(fn.params, args)))


def main() -> None:
    import numpy as np

    from rvmdbg.relay.interpreter import Interpreter, call_with_deep_stack
    from rvmdbg.relay.loader import load_file
    from rvmdbg.relay.typecheck import check_module
    programs = Path(__file__).resolve().parent.parent / "programs"
    for name, n in (("fib", 10), ("loop", 100)):
        mod = check_module(load_file(programs / f"{name}.relay"))
        args = [np.array(n, dtype=np.int32)]
        got = call_with_deep_stack(lambda: TreeWalker(mod).run("main", args))
        want = Interpreter(mod).run("main", args)
        print(f"{name}({n}) = {got.item()} (reference interpreter: {want.item()})")


if __name__ == "__main__":
    main()
