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
    # ---- more programs (issue 31: 30 in all)
    "if_chain": ("""
    @R.function
    def main(a: R.Tensor((), "float32"), v: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        if a < R.const(-1, "float32"):
            r = R.negative(v)
        else:
            if a < R.const(1, "float32"):
                r = R.multiply(v, a)
            else:
                r = R.add(v, a)
        return r
""", [np.array(0.5, f32), _x((2,), 23)]),
    "if_tuple": ("""
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((3,), "float32")):
        if c:
            t = (R.exp(x), x)
        else:
            t = (x, R.negative(x))
        return R.add(t[0], t[1])
""", [np.array(False), _x((3,), 24)]),
    "fib": ("""
    @R.function
    def fib(n: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
        if n < R.const(2, "int64"):
            r = n
        else:
            a = Module.fib(n - R.const(1, "int64"))
            b = Module.fib(n - R.const(2, "int64"))
            r = a + b
        return r

    @R.function
    def main(n: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
        return Module.fib(n)
""", [np.array(7, i64)]),
    "power": ("""
    @R.function
    def power(x: R.Tensor((2, 2), "float32"), n: R.Tensor((), "int64")) -> R.Tensor((2, 2), "float32"):
        if R.const(0, "int64") < n:
            p = Module.power(x, n - R.const(1, "int64"))
            r = R.matmul(p, x)
        else:
            r = R.ones(R.shape([2, 2]), "float32")
        return r

    @R.function
    def main(x: R.Tensor((2, 2), "float32")) -> R.Tensor((2, 2), "float32"):
        return Module.power(x, R.const(3, "int64"))
""", [_x((2, 2), 25)]),
    "layer_norm": ("""
    @R.function
    def main(x: R.Tensor((2, 6), "float32"), g: R.Tensor((6,), "float32"), b: R.Tensor((6,), "float32")):
        with R.dataflow():
            y = R.nn.layer_norm(x, g, b, axes=[1])
            z = R.nn.gelu(y)
            R.output(z)
        return z
""", [_x((2, 6), 26), _x((6,), 27), _x((6,), 28)]),
    "two_dataflow_blocks": ("""
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            a = R.sigmoid(x)
            b = R.multiply(a, x)
            R.output(b)
        s = R.sum(b)
        with R.dataflow():
            c = R.subtract(b, s)
            d = R.tanh(c)
            R.output(d)
        return (d, s)
""", [_x((4,), 29)]),
    "nested_tuples": ("""
    @R.function
    def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "int32")):
        t = ((x, y), (y, (x, x)))
        inner = t[1]
        deep = inner[1]
        u = R.add(deep[0], deep[1])
        v = R.multiply(t[0][1], inner[0])
        return (u, (v, t[0][0]))
""", [_x((2,), 30), np.array([3, -4], np.int32)]),
    "shape_arith": ("""
    @R.function
    def main(x: R.Tensor(("n", "m"), "float32"), y: R.Tensor(("k", "m"), "float32")):
        n = T.int64()
        m = T.int64()
        k = T.int64()
        c = R.concat([x, y], axis=0)
        f = R.reshape(c, R.shape([(n + k) * m]))
        h = R.reshape(f, R.shape([m, n + k]))
        return R.sum(h, axis=[0])
""", [_x((2, 3), 31), _x((4, 3), 32)]),
    "match_cast": ("""
    @R.function
    def main(x: R.Tensor(ndim=2, dtype="float32")):
        n = T.int64()
        y = R.match_cast(x, R.Tensor((n, 2), "float32"))
        z = R.reshape(y, R.shape([2 * n]))
        return R.add(z, z)
""", [_x((3, 2), 33)]),
    "call_tir_symbolic": ("""
    @T.prim_func
    def axpy(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for i in range(n):
            C[i] = A[i] * T.float32(2) + B[i]

    @R.function
    def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32")):
        n = T.int64()
        cls = Module
        z = R.call_tir(cls.axpy, (x, y), out_ty=R.Tensor((n,), "float32"))
        w = R.call_tir(cls.axpy, (z, x), out_ty=R.Tensor((n,), "float32"))
        return w
""", [_x((5,), 34), _x((5,), 35)]),
    "call_tir_2d": ("""
    @T.prim_func
    def transpose_add(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3, 2), "float32"), C: T.Buffer((3, 2), "float32")):
        for i, j in T.grid(3, 2):
            C[i, j] = A[j, i] + B[i, j]

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((3, 2), "float32")):
        cls = Module
        with R.dataflow():
            z = R.call_tir(cls.transpose_add, (x, y), out_ty=R.Tensor((3, 2), "float32"))
            r = R.nn.relu(z)
            R.output(r)
        return r
""", [_x((2, 3), 36), _x((3, 2), 37)]),
    "conv_bias_relu": ("""
    @R.function
    def main(x: R.Tensor((1, 1, 5, 5), "float32"), w: R.Tensor((2, 1, 3, 3), "float32"), b: R.Tensor((1, 2, 1, 1), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, w, strides=[2, 2])
            d = R.add(c, b)
            e = R.nn.relu(d)
            f = R.nn.avg_pool2d(e, pool_size=[2, 2])
            g = R.reshape(f, R.shape([1, 2]))
            R.output(g)
        return g
""", [_x((1, 1, 5, 5), 40), _x((2, 1, 3, 3), 41), _x((1, 2, 1, 1), 42)]),
    "batch_matmul_cumsum": ("""
    @R.function
    def main(a: R.Tensor((2, 3, 4), "float32"), b: R.Tensor((2, 4, 2), "float32")):
        m = R.matmul(a, b)
        t = R.permute_dims(m, [0, 2, 1])
        s = R.cumsum(t, axis=2)
        return R.max(s, axis=[1, 2])
""", [_x((2, 3, 4), 43), _x((2, 4, 2), 44)]),
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
