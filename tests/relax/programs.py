"""Relax programs in TVMScript (as `mod.script()` prints them) with inputs, for the Relax VM
tests: each is built once per test module (`built()`), stepped and checked against TVM's VM.
Written for these tests."""
from __future__ import annotations

import numpy as np

HEAD = """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.script import relax as R

@I.ir_module
class Module:
"""

f32 = np.float32
i64 = np.int64


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(f32)


PROGRAMS = {
    # control flow: R.If on a scalar condition
    "if_abs": ("""
    @R.function
    def main(x: R.Tensor((), "float32")) -> R.Tensor((), "float32"):
        if R.const(0, "float32") < x:
            r = x
        else:
            r = R.negative(x)
        return r
""", [np.array(-2.5, f32)]),
    "if_nested": ("""
    @R.function
    def main(a: R.Tensor((), "int64"), v: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):
        if R.const(0, "int64") < a:
            if R.const(5, "int64") < a:
                r = R.multiply(v, v)
            else:
                r = R.add(v, v)
        else:
            r = R.subtract(v, v)
        return r
""", [np.array(3, i64), _x((3,))]),
    # recursion
    "fact": ("""
    @R.function
    def fact(n: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
        if R.const(1, "int64") < n:
            r = Module.fact(n - R.const(1, "int64"))
            out = n * r
        else:
            out = R.const(1, "int64")
        return out

    @R.function
    def main(n: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
        return Module.fact(n)
""", [np.array(6, i64)]),
    "mutual_recursion": ("""
    @R.function
    def is_even(n: R.Tensor((), "int64")) -> R.Tensor((), "bool"):
        if R.const(0, "int64") < n:
            r = Module.is_odd(n - R.const(1, "int64"))
        else:
            r = R.const(True, "bool")
        return r

    @R.function
    def is_odd(n: R.Tensor((), "int64")) -> R.Tensor((), "bool"):
        if R.const(0, "int64") < n:
            r = Module.is_even(n - R.const(1, "int64"))
        else:
            r = R.const(False, "bool")
        return r

    @R.function
    def main(n: R.Tensor((), "int64")) -> R.Tensor((), "bool"):
        return Module.is_even(n)
""", [np.array(7, i64)]),
    "sum_loop": ("""
    @R.function
    def loop(i: R.Tensor((), "int64"), acc: R.Tensor((2, 2), "float32")) -> R.Tensor((2, 2), "float32"):
        if i < R.const(4, "int64"):
            r = Module.loop(i + R.const(1, "int64"), R.add(acc, R.multiply(acc, R.const(0.5, "float32"))))
        else:
            r = acc
        return r

    @R.function
    def main(x: R.Tensor((2, 2), "float32")) -> R.Tensor((2, 2), "float32"):
        return Module.loop(R.const(0, "int64"), x)
""", [_x((2, 2), 1)]),
    # dataflow blocks
    "dataflow": ("""
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, x)
            c = R.exp(b)
            d = R.subtract(c, y)
            R.output(d)
        return d
""", [_x((2, 3), 2), _x((2, 3), 3)]),
    "matmul_relu": ("""
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), w: R.Tensor((4, 5), "float32")) -> R.Tensor((3, 5), "float32"):
        with R.dataflow():
            m = R.matmul(x, w)
            r = R.nn.relu(m)
            s = R.sum(r, axis=[1])
            R.output(s, r)
        return r
""", [_x((3, 4), 4), _x((4, 5), 5)]),
    # tuples
    "tuples": ("""
    @R.function
    def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
        t = (x, y)
        a = t[0]
        b = t[1]
        s = R.add(a, b)
        return ((s, a), R.multiply(s, b))
""", [_x((2,), 6), _x((2,), 7)]),
    # symbolic shapes
    "symbolic": ("""
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor((4, "m"), "float32")):
        n = T.int64()
        m = T.int64()
        y = R.matmul(x, w)
        z = R.reshape(y, R.shape([n * m]))
        return R.add(z, z)
""", [_x((3, 4), 8), _x((4, 2), 9)]),
    "symbolic_permute": ("""
    @R.function
    def main(x: R.Tensor(("a", "b"), "float32")):
        y = R.permute_dims(x, [1, 0])
        z = R.concat([y, y], axis=0)
        return z
""", [_x((2, 5), 10)]),
    # call_tir kernels written in TIR
    "call_tir": ("""
    @T.prim_func
    def addone(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] + T.float32(1)

    @T.prim_func
    def scale(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] * T.float32(2)
            C[i] = A[i] * T.float32(3)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Module
        y = R.call_tir(cls.addone, (x,), out_ty=R.Tensor((4,), "float32"))
        z = R.call_tir(cls.scale, (y,), out_ty=[R.Tensor((4,), "float32"), R.Tensor((4,), "float32")])
        return z
""", [_x((4,), 11)]),
    # more operators: each a kernel TVM compiles, stepped as one Call
    "softmax_argmax": ("""
    @R.function
    def main(x: R.Tensor((2, 5), "float32")):
        s = R.nn.softmax(x, axis=1)
        a = R.argmax(s, axis=1)
        return (s, a)
""", [_x((2, 5), 17)]),
    "conv_pool": ("""
    @R.function
    def main(x: R.Tensor((1, 2, 6, 6), "float32"), w: R.Tensor((3, 2, 3, 3), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            r = R.nn.relu(c)
            p = R.nn.max_pool2d(r, pool_size=[2, 2], strides=[2, 2])
            R.output(p)
        return p
""", [_x((1, 2, 6, 6), 18), _x((3, 2, 3, 3), 19)]),
    "where_broadcast": ("""
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), b: R.Tensor((4,), "float32")):
        y = R.add(x, b)
        m = R.greater(y, R.const(0, "float32"))
        z = R.where(m, y, R.multiply(y, R.const(0.1, "float32")))
        return R.mean(z, axis=[0])
""", [_x((3, 4), 20), _x((4,), 21)]),
    "slice_concat_int": ("""
    @R.function
    def main(x: R.Tensor((6,), "int32")):
        a = R.strided_slice(x, axes=[0], begin=[0], end=[3])
        b = R.strided_slice(x, axes=[0], begin=[3], end=[6])
        c = R.concat([b, a], axis=0)
        return R.multiply(c, c)
""", [np.arange(-3, 3, dtype=np.int32)]),
    "if_on_tensor_sum": ("""
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        s = R.sum(x)
        if R.const(0, "float32") < s:
            r = R.exp(x)
        else:
            r = R.negative(x)
        return r
""", [_x((4,), 22)]),
    # closures (relax.build does not lambda-lift local functions at 0.27: these are written
    # as mod.script() prints a module after relax.transform.LambdaLift)
    "closure": ("""
    @R.function(private=True)
    def main_inner(z: R.Tensor((3,), dtype="float32"), y: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        gv: R.Tensor((3,), dtype="float32") = R.add(z, y)
        return gv

    @R.function
    def main(x: R.Tensor((3,), dtype="float32"), y: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        cls = Module
        inner: R.Any = R.make_closure(cls.main_inner, (y,))
        a: R.Tensor((3,), dtype="float32") = R.invoke_pure_closure(inner, (x,), ty_args=(R.Tensor((3,), dtype="float32"),))
        b: R.Tensor((3,), dtype="float32") = R.invoke_pure_closure(inner, (a,), ty_args=(R.Tensor((3,), dtype="float32"),))
        return b
""", [_x((3,), 12), _x((3,), 13)]),
    "closure_two_captured": ("""
    @R.function(private=True)
    def lifted(z: R.Tensor((2,), dtype="float32"), a: R.Tensor((2,), dtype="float32"), b: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        gv: R.Tensor((2,), dtype="float32") = R.add(R.multiply(z, a), b)
        return gv

    @R.function
    def main(x: R.Tensor((2,), dtype="float32"), a: R.Tensor((2,), dtype="float32"), b: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        cls = Module
        f: R.Any = R.make_closure(cls.lifted, (a, b))
        r: R.Tensor((2,), dtype="float32") = R.invoke_pure_closure(f, (x,), ty_args=(R.Tensor((2,), dtype="float32"),))
        return r
""", [_x((2,), 14), _x((2,), 15), _x((2,), 16)]),
}


def source(name: str) -> str:
    return HEAD + PROGRAMS[name][0]


def inputs(name: str) -> list:
    return [np.array(a) for a in PROGRAMS[name][1]]


def built(tmp_dir) -> dict:
    """{name: RelaxExecutable} of every program, built through the front door's reader."""
    from rvmdbg.program.relax import build
    out = {}
    for name in PROGRAMS:
        path = tmp_dir / f"{name}.relax.py"
        path.write_text(source(name))
        out[name] = build(str(path))
    return out
