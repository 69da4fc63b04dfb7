"""The ONNX kind (`.onnx`): the model imported as the Relay module TVM's frontend made
(`rvmdbg.onnx.import_model`), then checked and compiled as Relay source is. The source the
debugger shows is the node listing (one line per node, its calls' spans point there); ARGs
take `@main`'s parameter types, which are the graph inputs. Without the `onnx` package the
load is one message naming the extra to install (exit 2)."""
from __future__ import annotations

from rvmdbg.i18n import _
from rvmdbg.program.base import (
    Debuggable, LoadOptions, Program, ProgramKind, ProgramLoadError, check_entry,
)
from rvmdbg.program import relax, relay_text


def _imported(path: str, options: LoadOptions):
    from rvmdbg.onnx import DEFAULT_MAX_BYTES, import_model
    return import_model(path, shapes=options.shapes, dtypes=options.dtypes,
                        opset=options.opset,
                        max_bytes=options.extra.get("max_bytes") or DEFAULT_MAX_BYTES)


def load(path: str, options: LoadOptions) -> Program:
    """Import and (unless told not to) type-check; errors are located RelayErrors. With
    `--engine tvm`: TVM's own import and build, run on the Relax VM (`program/relax.py`)."""
    if relax.wants_tvm(options):
        return relax.load_onnx(path, options)
    from rvmdbg.relay.typecheck import check_module
    imp = _imported(path, options)
    mod = check_module(imp.module) if options.check else imp.module
    return Program(path, text=None, module=mod, kind=KIND, names=_names(path, imp))


def _names(path: str, imp):
    """The debugger's names for the model (`break NODE`, `print TENSOR`)."""
    from rvmdbg.onnx.debug_names import name_table
    return name_table(path, imp)


def debuggable(path: str, entry: str, options: LoadOptions) -> Debuggable:
    """Import, check and compile for the debugger screen; the node listing is the source."""
    if relax.wants_tvm(options):
        return relax.debuggable_onnx(path, entry, options)
    from rvmdbg.relay.diagnostics import RelayError
    from rvmdbg.relay.typecheck import check_module
    from rvmdbg.vm.compiler import compile_module
    try:
        imp = _imported(path, options)
        module = check_module(imp.module)
        exe = compile_module(module, entries=("main",) if entry == "main" else ("main", entry))
    except RelayError as exc:
        raise ProgramLoadError(exc.format()) from None
    except Exception as exc:  # the compiler's own errors carry their message
        raise ProgramLoadError(f"{path}: error: " + _("cannot compile: {error}").format(
            error=exc)) from None
    check_entry(exe, entry, path)
    return Debuggable(exe, module, imp.node_lines, path, None, names=_names(path, imp))


def test_folder_inputs(path: str) -> list[str]:
    """The TensorProto inputs of the ONNX test folder the model sits in (onnx's layout:
    `model.onnx` beside `test_data_set_0/input_0.pb`, `input_1.pb`, ...), in input order, as
    paths an ARG can name (`@...`); [] when there is none."""
    import os
    import re
    folder = os.path.join(os.path.dirname(path), "test_data_set_0")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        m = re.fullmatch(r"input_(\d+)\.pb", name)
        if m and os.path.isfile(os.path.join(folder, name)):
            found.append((int(m.group(1)), os.path.join(folder, name)))
    return [p for _i, p in sorted(found)]


def sniff(head: bytes) -> bool:
    """An ONNX ModelProto: its first field is ir_version (field 1, a varint: byte 0x08) of a
    small value, then a length-delimited field (producer, graph, opset_import, ...). Text,
    Relay's or any other, never starts with byte 0x08."""
    return len(head) >= 3 and head[0] == 0x08 and head[1] < 0x80 and head[2] & 0x07 == 2


KIND = ProgramKind("onnx", (".onnx",), load, relay_text.bind, debuggable,
                   source_language=None, sniff=sniff)
