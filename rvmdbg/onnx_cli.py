"""`rvmdbg import MODEL.onnx`: an ONNX model written as the Relay module TVM's frontend made.

The command's options and handler; `cli.py` registers them. The Relay text carries the
initializers as constants in its `#[metadata]` section (TVM's `freeze_params=True`), or with
`--keep-params` as trailing parameters of `@main`, their values written beside it as an
`.npz` (bind them with `--inputs`).
"""
from __future__ import annotations

import argparse
import os
import sys

from rvmdbg.cmdline import add_onnx_options, parse_dtypes, parse_shapes
from rvmdbg.i18n import _

def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", metavar="MODEL", help=_("an .onnx file"))
    p.add_argument("-o", "--output", metavar="OUT",
                   help=_("write the Relay module to OUT (default: standard output)"))
    add_onnx_options(p)
    p.add_argument("--keep-params", action="store_true",
                   help=_("initializers as parameters of @main (their values in OUT.npz) "
                          "instead of constants"))
    p.add_argument("--max-bytes", type=int, metavar="N",
                   help=_("refuse a model or initializer larger than N bytes"))


def run(ns: argparse.Namespace) -> int:
    import numpy as np

    from rvmdbg.onnx import DEFAULT_MAX_BYTES, import_model
    from rvmdbg.relay.printer import print_module
    from rvmdbg.relay.typecheck import check_module
    imp = import_model(ns.model, shapes=parse_shapes(ns.shape), dtypes=parse_dtypes(ns.dtype),
                       opset=ns.opset, keep_params=ns.keep_params,
                       max_bytes=ns.max_bytes or DEFAULT_MAX_BYTES)
    mod = check_module(imp.module)
    text = print_module(mod)
    if ns.output:
        with open(ns.output, "w") as f:
            f.write(text)
        if ns.keep_params and imp.params:
            base = os.path.splitext(ns.output)[0]
            params = {p.name: imp.params[n] for p, n in zip(mod.functions["main"].params,
                                                            imp.inputs) if n in imp.params}
            np.savez(base + ".npz", **params)
            print(_("wrote {file} and its parameters {npz}").format(
                file=ns.output, npz=base + ".npz"), file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
