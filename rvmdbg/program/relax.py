"""The Relax kind: a TVMScript module file, what `mod.script()` prints (`# from tvm.script
import ...`, then `@I.ir_module class Module: ...`), built by TVM for the CPU
(`relax.build(mod, target="llvm")`) and stepped on `rvmdbg.relax.RelaxMachine`.

Suffix `.relax.py`: the file is Python (TVMScript is Python syntax, so editors highlight it)
and `.relax` names the dialect; a file of any name that starts as `mod.script()` output does
(`# from tvm.script import`) is recognised by its content too. Reading it runs the user's
code: `tvm.script.from_source` evaluates the Python expressions in it, as the docs say.
apache-tvm is imported only here, when such a file is opened (`rvmdbg[tvm]`).
"""
from __future__ import annotations

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.program.base import (
    Debuggable, LoadOptions, Program, ProgramKind, ProgramLoadError, UsageError, check_entry,
)

HEADER = b"# from tvm.script import"


def sniff(head: bytes) -> bool:
    return head.startswith(HEADER)


def build(path: str, text: str | None = None):
    """The `RelaxExecutable` of the TVMScript module at `path` (UsageError when it cannot be
    read, parsed or built; MissingTvm, a UsageError too, without apache-tvm)."""
    from rvmdbg.relax import MissingTvm, require_tvm
    try:
        tvm = require_tvm()
    except MissingTvm as exc:
        raise UsageError(f"{path}: " + str(exc)) from None
    from tvm import relax
    from rvmdbg.relax.executable import from_tvm
    if text is None:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise UsageError(f"{path}: error: {exc.strerror or exc}") from None
    try:
        mod = tvm.script.from_source(text)
    except Exception as exc:  # TVM's parser reports its located diagnostics as its own errors
        raise UsageError(f"{path}: " + _("not a TVMScript module: {why}").format(
            why=_first_lines(exc))) from None
    if not isinstance(mod, tvm.IRModule):
        raise UsageError(f"{path}: " + _("not a TVMScript module (an IRModule): it defines a {what}")
                         .format(what=type(mod).__name__))
    try:
        tvm_exe = relax.build(mod, target="llvm")
    except Exception as exc:  # TVM's build errors
        raise UsageError(f"{path}: " + _("TVM cannot build it: {why}").format(why=_first_lines(exc))) from None
    exe = from_tvm(tvm_exe, source_text=text, source_name=path)
    exe.param_types = _param_types(mod)
    exe.tvm_mod = mod
    return exe


def _first_lines(exc, n: int = 12) -> str:
    return "\n".join(str(exc).strip().splitlines()[:n])


def _param_types(mod) -> dict:
    from tvm import relax
    out = {}
    for gv, fn in mod.functions.items():
        if not isinstance(fn, relax.Function):
            continue
        types = []
        for p in fn.params:
            t = getattr(p, "ty", None)   # TVM 0.27: a parameter's declared type (TensorType)
            if type(t).__name__ == "TensorType":
                shape = None
                dims = getattr(t.shape, "values", None) if t.shape is not None else None
                if dims is not None:
                    shape = tuple(int(d.value) if type(d).__name__ == "IntImm" else None for d in dims)
                types.append((str(t.dtype), shape))
            else:
                types.append(None)
        out[gv.name_hint] = types
    return out


def load(path: str, options: LoadOptions) -> Program:
    return Program(path, executable=build(path), kind=KIND)


def bind(program: Program, entry: str, texts: list[str]) -> list:
    """ARG texts as NumPy values of the entry's declared dtypes (a static shape is checked)."""
    from rvmdbg.args import parse_untyped_args
    exe = program.executable
    types = exe.param_types.get(entry)
    if types is None:
        raise UsageError(f"{program.path}: " + _("no function @{entry}").format(entry=entry))
    values = parse_untyped_args(entry, texts, len(types), after_program=True)
    out = []
    for i, (v, t) in enumerate(zip(values, types)):
        if t is None:
            out.append(v)
            continue
        dtype, shape = t
        a = np.asarray(v).astype(dtype)
        if shape is not None and (len(shape) != a.ndim or any(
                d is not None and d != s for d, s in zip(shape, a.shape))):
            raise UsageError(f"{program.path}: " + _("argument {i} of @{entry} has shape {got}, the "
                                                     "function takes {want}").format(
                i=i + 1, entry=entry, got=list(a.shape),
                want="[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"))
        out.append(a)
    return out


def debuggable(path: str, entry: str, options: LoadOptions) -> Debuggable:
    try:
        exe = build(path)
    except UsageError as exc:
        raise ProgramLoadError(str(exc)) from None
    check_entry(exe, entry, path)
    return Debuggable(exe, None, exe.source_text, path, None, saved=True)


KIND = ProgramKind("relax", (".relax.py",), load, bind, debuggable, machine="relax",
                   compiled=True, source_language="python", sniff=sniff)


# ------------------------------------------------------------------ --engine tvm: an ONNX model

def _tvm_or_usage(path: str):
    from rvmdbg.relax import MissingTvm, require_tvm
    try:
        return require_tvm()
    except MissingTvm as exc:
        raise UsageError(f"{path}: " + str(exc)) from None


def build_onnx(path: str, options: LoadOptions):
    """`--engine tvm`: the ONNX model imported by TVM's own frontend
    (`tvm.relax.frontend.onnx.from_onnx`), optimised by TVM's "zero" pipeline (legalize,
    fold constants, fuse) and built for the CPU; UsageError when TVM refuses it."""
    _tvm_or_usage(path)
    from tvm import relax
    try:
        import onnx
        from tvm.relax.frontend.onnx import from_onnx
    except ImportError as exc:
        raise UsageError(f"{path}: " + _("an ONNX model needs the onnx package ({why})").format(
            why=exc)) from None
    from rvmdbg.relax.executable import from_tvm
    try:
        model = onnx.load(path)
    except OSError as exc:
        raise UsageError(f"{path}: error: {exc.strerror or exc}") from None
    except Exception as exc:  # onnx's protobuf decoder raises its own error types
        raise UsageError(f"{path}: " + _("not an ONNX model: {why}").format(why=_first_lines(exc, 3))) from None
    # an unknown dim (None) becomes a symbolic one of its own name
    shapes = {k: [d if isinstance(d, int) else f"{k}_{i}" for i, d in enumerate(v)]
              for k, v in (options.shapes or {}).items()} or None
    try:
        mod = from_onnx(model, shape_dict=shapes, dtype_dict=options.dtypes or "float32",
                        opset=options.opset)
        types = _param_types(mod)
        tvm_exe = relax.build(relax.get_pipeline("zero")(mod), target="llvm")
    except Exception as exc:  # TVM's frontend and build errors
        raise UsageError(f"{path}: " + _("TVM cannot import or build it: {why}").format(
            why=_first_lines(exc))) from None
    exe = from_tvm(tvm_exe, source_text=mod.script(), source_name=path)
    exe.param_types = types
    exe.tvm_mod = mod
    return exe


def load_onnx(path: str, options: LoadOptions) -> Program:
    return Program(path, executable=build_onnx(path, options), kind=KIND)


def debuggable_onnx(path: str, entry: str, options: LoadOptions) -> Debuggable:
    try:
        exe = build_onnx(path, options)
    except UsageError as exc:
        raise ProgramLoadError(str(exc)) from None
    check_entry(exe, entry, path)
    return Debuggable(exe, None, exe.source_text, path, None, saved=True)


def wants_tvm(options: LoadOptions) -> bool:
    return (options.extra or {}).get("engine") == "tvm"
