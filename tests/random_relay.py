"""Random well-typed int32 Relay programs for property tests (shared by the pass pipeline's
and the swap checker's tests): closures, lets, references, options, sharing, a fused float
chain; `@main(%a: int32, %b: int32) -> int32`."""
from __future__ import annotations

from hypothesis import strategies as st


class RandomProgram:
    """Draws a random well-typed int32 program text (closures, lets, refs, options, sharing)."""

    def __init__(self, draw):
        self.draw = draw
        self.n = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"%{prefix}{self.n}"

    def expr(self, depth: int, env: list) -> str:
        d = self.draw
        if depth <= 0 or d(st.integers(0, 9)) < 2:
            if env and d(st.booleans()):
                return d(st.sampled_from(env))
            return str(d(st.integers(-4, 9)))
        kind = d(st.sampled_from(["bin", "bin", "if", "let", "fn", "call", "tuple", "ref",
                                  "match", "float"]))
        e = lambda: self.expr(depth - 1, env)  # noqa: E731
        if kind == "bin":
            op = d(st.sampled_from(["+", "-", "*"]))
            return f"({e()} {op} {e()})"
        if kind == "if":
            cmp = d(st.sampled_from(["<", "<=", "==", "!="]))
            return f"if ({e()} {cmp} {e()}) {{ {e()} }} else {{ {e()} }}"
        if kind == "let":
            v = self.fresh("v")
            return f"(let {v} = {e()}; {self.expr(depth - 1, env + [v])})"
        if kind == "fn":
            f, y = self.fresh("f"), self.fresh("y")
            body = self.expr(depth - 1, env + [y])
            return f"(let {f} = fn ({y}: int32) -> int32 {{ {body} }}; {f}({e()}) + {f}({e()}))"
        if kind == "call":
            return f"@h({e()}, {e()})"
        if kind == "tuple":
            return f"({e()}, {e()}).{d(st.integers(0, 1))}"
        if kind == "ref":
            r = self.fresh("r")
            return (f"(let {r} = ref({e()}); ref_write({r}, ref_read({r}) + {e()}); "
                    f"ref_read({r}))")
        if kind == "match":
            z = self.fresh("z")
            return (f"(match (if ({e()} < 0) {{ None }} else {{ Some({e()}) }}) {{ "
                    f"Some({z}) => {self.expr(depth - 1, env + [z])}, None => {e()} }})")
        # float: a fused chain on float32 cast back to int32
        return f"cast(floor(exp(cast({e()}, dtype=\"float32\") * 0.01f) * 2f), dtype=\"int32\")"

    def program(self) -> str:
        shared = []
        lines = []
        for i in range(self.draw(st.integers(0, 2))):
            lines.append(f"  %{i} = {self.expr(2, ['%a', '%b'] + shared)};")
            shared.append(f"%{i}")
        final = self.expr(3, ["%a", "%b"] + shared + shared)
        return ("def @h(%p: int32, %q: int32) -> int32 { %p * 2 - %q }\n"
                "def @main(%a: int32, %b: int32) -> int32 {\n" + "\n".join(lines)
                + f"\n  {final}\n}}\n")


@st.composite
def programs(draw):
    return RandomProgram(draw).program()
