"""The command line's shared parts, below `cli.py`, `serve.py` and `dap/`: the exit codes of the
contract (../shared/reference/cli-contract.md) and the option sets several commands take
(the limits, PROGRAM and its ARGs, --meta-inputs / --meta-random, the screen's), so `serve` rebuilds the screen's options
without importing the command line.
"""
from __future__ import annotations

import argparse
import dataclasses

from rvmdbg.i18n import _
from rvmdbg.limits import DEFAULT_LIMITS, LimitValueError, Limits
from rvmdbg.program.base import UsageError

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
# The reader of stdout went away (`| head`): as a process ended by SIGPIPE, 128 + 13. Not 1,
# which says the program failed.
EXIT_BROKEN_PIPE = 141


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("not a whole number: {text}").format(
            text=repr(text))) from None


def whole_number(text: str) -> int:
    """argparse type of a count that may be 0 (`--warmup`)."""
    n = _integer(text)
    if n < 0:
        raise argparse.ArgumentTypeError(_("must be 0 or more: {text}").format(text=text))
    return n


def positive(text: str) -> int:
    try:
        n = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a positive whole number, got {text}").format(text=repr(text)))
    if n <= 0:
        raise argparse.ArgumentTypeError(
            _("expected a positive whole number, got {text}").format(text=repr(text)))
    return n


def add_limit_options(p: argparse.ArgumentParser) -> None:
    """--max-steps, --max-depth, --max-bytes (shared by every command that runs a program)."""
    d = DEFAULT_LIMITS
    p.add_argument("--max-steps", type=positive, metavar="N",
                   help=_("stop after N instructions or evaluation steps (default {n})").format(
                       n=d.max_steps))
    p.add_argument("--max-depth", type=positive, metavar="N",
                   help=_("stop beyond N nested calls (default {n})").format(n=d.max_depth))
    p.add_argument("--max-bytes", type=positive, metavar="N",
                   help=_("stop when tensors would take more than N bytes (default {n})").format(
                       n=d.max_bytes))


def threads_count(text: str) -> int:
    """argparse type of --threads: a thread count from 1 to 1024."""
    from rvmdbg.threads import check_threads
    try:
        return check_threads(_integer(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_threads_option(p: argparse.ArgumentParser) -> None:
    """--threads N: BLAS/OpenMP threads for the kernels (rvmdbg/threads.py)."""
    p.add_argument("--threads", type=threads_count, metavar="N",
                   help=_("let kernels use N BLAS/OpenMP threads (default: 2 at most, 1 when "
                          "the machine's load average says the cores are busy)"))


def limits_from(ns: argparse.Namespace) -> Limits:
    given = {name: getattr(ns, name) for name in ("max_steps", "max_depth", "max_bytes")
             if getattr(ns, name, None) is not None}
    try:
        return dataclasses.replace(DEFAULT_LIMITS, **given)
    except LimitValueError as e:
        raise UsageError(str(e)) from None


def add_meta_options(p: argparse.ArgumentParser) -> None:
    """--meta-inputs / --meta-random SEED: a file whose meta[relay.Constant][i] references have
    no #[metadata] section (every command that loads a program takes them)."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--meta-inputs", action="store_true",
                       help=_("make each meta[relay.Constant][i] of a file without its "
                              "#[metadata] section a parameter %%meta_const_I of its ty= type "
                              "(ARGs or --inputs bind it)"))
    group.add_argument("--meta-random", type=int, metavar="SEED",
                       help=_("fill each meta[relay.Constant][i] of a file without its "
                              "#[metadata] section with values of its ty= type drawn from SEED"))
    add_onnx_options(p)


_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64")


class ImportUsageError(UsageError):
    """A bad --shape or --dtype (exit 2)."""


def _pairs(items: list, what: str) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            raise ImportUsageError(_("--{what} expects NAME=VALUE, got {text}").format(
                what=what, text=repr(item)))
        out[name] = value
    return out


def parse_shapes(items: list) -> dict:
    """NAME=D,D,... a tensor's shape; NAME=D,D;D,D;... a sequence's element shapes (`;`
    between elements, a trailing one allowed), a list of shapes (sequences are tuples)."""
    shapes = {}
    for name, text in _pairs(items, "shape").items():
        if ";" in text:
            parts = text.split(";")
            if parts and not parts[-1].strip():
                parts = parts[:-1]
            shapes[name] = [parse_shapes([f"{name}={part}"])[name] for part in parts]
            continue
        dims = []
        for d in (text.split(",") if text.strip() else []):
            d = d.strip()
            if d in ("?", "-1"):
                dims.append(None)
            elif d.isdigit():
                dims.append(int(d))
            else:
                raise ImportUsageError(_("--shape {name}: {dim} is no dimension (a whole number, "
                                         "or ? for unknown)").format(name=name, dim=repr(d)))
        shapes[name] = dims
    return shapes


def parse_dtypes(items: list) -> dict:
    dtypes = _pairs(items, "dtype")
    for name, dt in dtypes.items():
        if dt not in _DTYPES:
            raise ImportUsageError(_("--dtype {name}: {dtype} is not a Relay dtype ({known})").format(
                name=name, dtype=repr(dt), known=", ".join(_DTYPES)))
    return dtypes


def add_onnx_options(p: argparse.ArgumentParser) -> None:
    """--shape NAME=D,D,... / --dtype NAME=DTYPE / --opset N: what an ONNX model leaves open
    (every command that loads a program takes them; on another kind of program they are a
    usage error)."""
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D,D,...",
                   help=_("the shape of graph input NAME (? or -1 for a dimension left "
                          "unknown; a sequence's element shapes separated by ;); may be "
                          "repeated"))
    p.add_argument("--dtype", action="append", default=[], metavar="NAME=DTYPE",
                   help=_("the dtype of graph input NAME; may be repeated"))
    p.add_argument("--opset", type=int, metavar="N",
                   help=_("convert as opset N of the default domain (default: the model's)"))


def missing_meta_from(ns: argparse.Namespace):
    """The `MissingConstants` policy the options ask for, or None."""
    from rvmdbg.relay.metadata import MissingConstants
    if getattr(ns, "meta_inputs", False):
        return MissingConstants("inputs")
    seed = getattr(ns, "meta_random", None)
    return None if seed is None else MissingConstants("random", seed)


def load_options_from(ns) -> "LoadOptions":
    """The `LoadOptions` the options ask for (--meta-inputs / --meta-random, --shape,
    --dtype, --opset); `ns` is a command line's namespace or the DAP's launch configuration,
    whose `shape` / `dtype` are lists of NAME=VALUE texts too. UsageError for a bad one."""
    from rvmdbg.program.base import LoadOptions
    shapes = parse_shapes(ns.shape) if getattr(ns, "shape", None) else None
    dtypes = parse_dtypes(ns.dtype) if getattr(ns, "dtype", None) else None
    return LoadOptions(missing_meta=missing_meta_from(ns), shapes=shapes, dtypes=dtypes,
                       opset=getattr(ns, "opset", None))


def add_program_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("program", metavar="PROGRAM",
                   help=_("a .relay file, a saved .rvmx executable, or a MiniVM .mvm program"))
    p.add_argument("args", metavar="ARG", nargs="*", default=[],
                   help=_("arguments of the entry function: a Relay value (10, -3, 2.5f, "
                          "Cons(1, Nil), (1, 2f)), a JSON number or list, @file.npy, "
                          "@file.npz:NAME, or a tuple of these; "
                          "default: the program's `// args:` line"))
    p.add_argument("--inputs", metavar="FILE.npz",
                   help=_("bind the entry's parameters by name from a NumPy archive, as TVM's "
                          "set_input(name=...); positional ARGs bind the first parameters"))
    add_meta_options(p)


def configure_screen(p: argparse.ArgumentParser) -> None:
    """The options of `rvmdbg screen` (and of `serve`, which passes them on to each tab)."""
    add_program_args(p)
    p.add_argument("--entry", default="main", metavar="NAME",
                   help=_("the function to debug (default main)"))
    p.add_argument("--no-mouse", action="store_true", help=_("do not capture the mouse"))
    p.add_argument("--ascii", action="store_const", const=True, default=None,
                   help=_("draw with ASCII characters only (the default where the locale is "
                          "not UTF-8 or TERM=linux)"))
    p.add_argument("--unicode", dest="ascii", action="store_const", const=False,
                   help=_("draw with Unicode symbols even where --ascii would be the default"))
    p.add_argument("--history-mb", type=positive, default=256, metavar="MB",
                   help=_("memory for reverse-execution history (default 256)"))
    p.add_argument("--keys", metavar="FILE",
                   help=_("rebind keys from FILE (default: $XDG_CONFIG_HOME/rvmdbg/keys.conf "
                          "when it exists; `rvmdbg keys` prints one to start from)"))
    add_threads_option(p)
    add_limit_options(p)
