"""Program arguments on the command line: text to runtime values of the entry's parameter types.

The syntax is "Arguments" of the CLI contract. Each argument is one of
- `@path.npy`: a NumPy file (0-d included), loaded without pickle; `@path.npz:NAME`: the array
  NAME of a NumPy archive; `@path.pb`: an ONNX TensorProto file (an ONNX test folder's
  `input_0.pb`), read with the `onnx` package;
- a tuple of arguments in parentheses, `(@a.npy, @b.npy)`, `([1, 2], 3f)`;
- a JSON number or nested list (a tensor): `3`, `[1.5, -1]`, `[[1, 2], [3, 4]]`;
- a Relay value: a literal (`-3`, `2.5f`, `5i64`, `True`), a constructor application
  (`Cons(1, Nil)`), a tuple (`(1, 2f)`), `negative(...)` of one of these, or `ref(...)`.
The value is then converted along the parameter's declared type: an int literal for a
`float32` parameter becomes float32, a nested list for `Tensor[(2, 3), float32]` becomes that
array; a value that does not fit (shape, dtype range, constructor of another type) is an
`ArgumentError` saying which argument and why.

`bind_inputs` is `--inputs FILE.npz`: parameters bound by name, as TVM's
`set_input(name=array)`, after the positional arguments.
"""
from __future__ import annotations

import difflib
import io
import json
import re

import numpy as np

from rvmdbg.fileio import FileRefused, read_file
from rvmdbg.limits import DEFAULT_LIMITS
from rvmdbg.npyio import ArrayFileError, NpzArchive, kind_of, read_npy
from rvmdbg.relay.ast import (
    Call, Constant, ConstructorRef, Function, GlobalVar, Module, OpRef, RefCreate, Tuple, Var,
)
from rvmdbg.relay.diagnostics import RelayError
from rvmdbg.relay.types import (
    FuncType, IncompleteType, RefType, TensorType, TupleType, TypeCall, is_vector_dtype,
    substitute,
)
from rvmdbg.values import ADTValue, RefCell, format_value
from rvmdbg.i18n import N_, _, ngettext

__all__ = ["ArgumentError", "argument_where", "bind_inputs", "parse_untyped_args", "parse_program_args", "parse_value", "convert_value",
           "param_types", "set_array_limit"]


class ArgumentError(Exception):
    """A command-line argument that cannot become a value of its parameter's type."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


_NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float
_IDENT = re.compile(r"(?<![\w.%@\"])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
# words the parser knows that are no constructors: left to it (and to _evaluate's message)
_KEYWORDS = frozenset(("True", "False", "ref", "ref_read", "ref_write", "fn", "let", "if",
                       "else", "match", "def", "type", "free_var", "Tensor"))
# TVM's spellings of non-finite floats (`inff`, `nanf16`, ...): literals, not names
_SPECIAL_FLOAT = re.compile(r"(?:inf|nan)f(?:16|32|64)?")


def param_types(fn: Function) -> list:
    """The entry's parameter types: inferred when the module is checked, else as annotated."""
    ft = fn.checked_type
    if isinstance(ft, FuncType) and len(ft.params) == len(fn.params):
        return list(ft.params)
    return [p.checked_type or p.type_annotation for p in fn.params]


def _signature(fn: Function, types: list) -> str:
    return ", ".join(f"%{p.name}: {t}" if t is not None and not isinstance(t, IncompleteType)
                     else f"%{p.name}" for p, t in zip(fn.params, types))


def parse_program_args(mod: Module, entry: str, texts: list[str]) -> list:
    """The runtime values for `@entry(texts...)`, converted to its parameter types."""
    fn = mod.functions.get(entry)
    if fn is None:
        known = ", ".join("@" + n for n in mod.functions) or "none"
        raise ArgumentError(_("no function @{entry} in this program (functions: {known})").format(
            entry=entry, known=known))
    types = param_types(fn)
    if len(texts) != len(fn.params):
        n = len(fn.params)
        raise ArgumentError(
            ngettext("@{entry} takes {n} argument ({signature}), got {given}",
                     "@{entry} takes {n} arguments ({signature}), got {given}", n).format(
                entry=entry, n=n, signature=_signature(fn, types), given=len(texts)))
    values = []
    for i, (text, param, t) in enumerate(zip(texts, fn.params, types)):
        typed = t is not None and not isinstance(t, IncompleteType)
        where = _("argument {n} ({param})").format(
            n=i + 1, param=f"%{param.name}: {t}" if typed else f"%{param.name}")
        raw = parse_value(text, mod, where)
        values.append(convert_value(raw, t, mod, where))
    return values


# ------------------------------------------------------------------------------------ parsing

def argument_where(i: int) -> str:
    """How messages name the argument at 0-based position i when its parameter is unknown."""
    return _("argument {n}").format(n=i + 1)


def parse_untyped_args(entry: str, texts: list[str], count: int,
                       after_program: bool = False) -> list:
    """The values for `@entry(texts...)` when only the parameter count is known (a saved
    executable): each text in Relay's default dtypes. `after_program` adds where to give
    them (the command line)."""
    if len(texts) != count:
        if not texts and after_program:
            message = ngettext("@{entry} takes {n} argument, got {given}; give them after "
                               "PROGRAM", "@{entry} takes {n} arguments, got {given}; give them "
                               "after PROGRAM", count)
        else:
            message = ngettext("@{entry} takes {n} argument, got {given}",
                               "@{entry} takes {n} arguments, got {given}", count)
        raise ArgumentError(message.format(entry=entry, n=count, given=len(texts)))
    return [convert_value(parse_value(t, None, argument_where(i)), None, None,
                          argument_where(i)) for i, t in enumerate(texts)]


def _field_where(where: str, i: int) -> str:
    return _("{where}, field {i}").format(where=where, i=i)


def parse_value(text: str, mod: Module | None, where: str | None = None):
    """One argument's text as a raw value: an ndarray, a JSON number/list (Python objects),
    or an ADTValue/RefCell of those. No conversion to a declared type yet. `where` names the
    argument in messages (translated; "argument" when None)."""
    if where is None:
        where = _("argument")
    text = text.strip()
    if not text:
        raise ArgumentError(_("{where}: empty argument").format(where=where))
    if text.startswith("@"):
        return _load_npy(text[1:], where)
    if text[0] == "(" and text[-1] == ")":
        fields = _split_fields(text[1:-1])
        if fields is not None and (len(fields) > 1 or text[1:-1].rstrip().endswith(",")):
            # a tuple of arguments, each in any argument syntax (`(@a.npy, [1, 2])`)
            return ADTValue(0, None, [parse_value(f, mod, _field_where(where, i))
                                      for i, f in enumerate(fields)])
        if fields is not None and len(fields) == 1:
            return parse_value(fields[0], mod, where)  # `(v)` is v, as in Relay
    if text[0] in "[-+.0123456789" or text in ("NaN", "Infinity", "-Infinity"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, (int, float, list)) and not isinstance(data, bool):
            return _JSON(data)
        if text[0] == "[":
            raise ArgumentError(_("{where}: {text} is not a valid JSON list of numbers").format(
                where=where, text=repr(text)))
    return _parse_relay(text, mod, where)


def _split_fields(text: str) -> list[str] | None:
    """Split at commas outside brackets, parentheses and strings; empty parts dropped (a
    trailing comma). None when the brackets do not balance (left to the parser to report)."""
    out, cur, depth, quoted = [], [], 0, False
    for c in text:
        if quoted:
            quoted = c != '"'
        elif c == '"':
            quoted = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(c)
    if depth or quoted:
        return None
    out.append("".join(cur).strip())
    return [f for f in out if f]


class _JSON:
    """A JSON number or list from the command line, awaiting its parameter's dtype."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data


def _load_npy(path: str, where: str) -> np.ndarray:
    if not path:
        raise ArgumentError(_("{where}: `@` must be followed by the path of a .npy file").format(
            where=where))
    head, sep, member = path.rpartition(":")
    if sep and head.endswith(".npz"):
        return _numeric(_npz_member(head, member, where), head, where)
    if path.lower().endswith(".pb"):
        return _numeric(_load_tensor_proto(path, where), path, where)
    loaded = _np_load(path, where, npz=False)
    if not isinstance(loaded, np.ndarray):
        names = list(loaded.files) if hasattr(loaded, "files") else []
        if hasattr(loaded, "close"):
            loaded.close()
        if names:
            message = _("{where}: {path}: expected a .npy file holding one array, found an .npz "
                        "archive; name one of its arrays: {member}").format(
                            where=where, path=path, member=f"@{path}:{names[0]}")
        else:
            message = _("{where}: {path}: expected a .npy file holding one array, found an .npz "
                        "archive").format(where=where, path=path)
        raise ArgumentError(message)
    return _numeric(loaded, path, where)


# a NumPy file larger than this is refused before it is read
NUMPY_FILE_LIMIT = 4 << 30


# the most bytes one compressed archive member may declare, checked before it is
# decompressed: --max-bytes once the command line or a DAP launch has set it
# (set_array_limit), else the default limit
_array_limit = DEFAULT_LIMITS.max_bytes


def set_array_limit(max_bytes: int | None) -> None:
    """Compressed .npz members read from now on may declare at most `max_bytes` bytes (None:
    the default limit). Called with --max-bytes before the arguments are read."""
    global _array_limit
    _array_limit = max_bytes if isinstance(max_bytes, int) and max_bytes > 0 \
        else DEFAULT_LIMITS.max_bytes


def _np_load(path: str, where: str, npz: bool):
    """The array of a .npy file, or the archive of a .npz, read through fileio (a FIFO, a
    device or an oversized file is a message, not a hang) and `rvmdbg.npyio` (headers checked
    and sizes bounded before any data is read or decompressed, never unpickling); every
    failure an ArgumentError naming the file."""
    data = _read_bounded(path, where, NUMPY_FILE_LIMIT,
                         N_("NumPy archive") if npz else N_("NumPy file"))
    if not data:
        message = (_("{where}: {path}: is empty, not a .npz archive") if npz
                   else _("{where}: {path}: is empty, not a .npy file"))
        raise ArgumentError(message.format(where=where, path=path))
    kind = kind_of(data)
    if kind is None:
        message = (_("{where}: {path}: not a .npz archive (it is not a zip file)") if npz
                   else _("{where}: {path}: not a .npy file (it does not start with the .npy "
                          "header)"))
        raise ArgumentError(message.format(where=where, path=path))
    try:
        if kind == "npz":
            return NpzArchive(data, _array_limit)
        # a plain .npy holds its data: the file's size bounds it, as for an argument typed
        # on the command line (arguments are not the program's allocations)
        return read_npy(io.BytesIO(data), len(data))
    except ArrayFileError as e:
        message = (_("{where}: {path}: not a plain .npz archive ({reason})") if npz
                   else _("{where}: {path}: not a plain .npy file ({reason})"))
        raise ArgumentError(message.format(where=where, path=path, reason=e)) from None


def _read_bounded(path: str, where: str, limit: int, what: str) -> bytes:
    """The file's bytes through fileio (its size checked against `limit` before its data is
    read); every failure an ArgumentError naming the file."""
    try:
        return read_file(path, limit, what)
    except FileNotFoundError:
        raise ArgumentError(_("{where}: {path}: file not found").format(where=where, path=path)) \
            from None
    except FileRefused as e:
        raise ArgumentError(_("{where}: {path}: {reason}").format(where=where, path=path,
                                                                  reason=e.reason)) from None
    except OSError as e:
        # i18n: {reason} is the operating system's words (strerror), in English
        raise ArgumentError(_("{where}: {path}: cannot read it: {reason}").format(
            where=where, path=path, reason=e.strerror or e)) from None


def _load_tensor_proto(path: str, where: str) -> np.ndarray:
    """An ONNX TensorProto file (`test_data_set_0/input_0.pb`) as an array: the file no larger
    than --max-bytes, its declared size checked before any array is made, its data held in
    the file itself (external data is refused: it would name another file)."""
    try:
        from onnx import TensorProto, numpy_helper
    except ImportError:
        raise ArgumentError(_("{where}: {path}: reading a TensorProto (.pb) file needs the onnx "
                              "package: pip install 'rvmdbg[onnx]'").format(
                                  where=where, path=path)) from None
    data = _read_bounded(path, where, _array_limit, N_("TensorProto file"))
    if not data:
        raise ArgumentError(_("{where}: {path}: is empty, not a TensorProto file").format(
            where=where, path=path))
    tensor = TensorProto()
    try:
        tensor.ParseFromString(data)
    except Exception:  # protobuf's DecodeError (its class depends on the protobuf build)
        raise ArgumentError(_("{where}: {path}: not a TensorProto file (its bytes do not parse "
                              "as one)").format(where=where, path=path)) from None
    if tensor.data_location == TensorProto.EXTERNAL or tensor.external_data:
        raise ArgumentError(_("{where}: {path}: the tensor's data is in another file (external "
                              "data), which is not read").format(where=where, path=path))
    if tensor.data_type == TensorProto.UNDEFINED or not TensorProto.DataType.Name(
            tensor.data_type):
        raise ArgumentError(_("{where}: {path}: not a TensorProto file (no element type)").format(
            where=where, path=path))
    if any(d < 0 for d in tensor.dims):
        raise ArgumentError(_("{where}: {path}: the tensor declares a negative dimension").format(
            where=where, path=path))
    count = 1
    for d in tensor.dims:
        count *= d
    try:
        itemsize = np.dtype(_tensor_dtype(tensor.data_type)).itemsize
    except (TypeError, ValueError, KeyError):
        itemsize = 1
    if count * itemsize > _array_limit:
        raise ArgumentError(_("{where}: {path}: the tensor declares {n} bytes, more than "
                              "--max-bytes ({limit})").format(
                                  where=where, path=path, n=count * itemsize, limit=_array_limit))
    try:
        return numpy_helper.to_array(tensor)
    except Exception as e:  # the data does not match the declared dims or type
        raise ArgumentError(_("{where}: {path}: not a valid TensorProto ({reason})").format(
            where=where, path=path, reason=str(e)[:200] or type(e).__name__)) from None


def _tensor_dtype(data_type: int):
    from onnx import helper
    return helper.tensor_dtype_to_np_dtype(data_type)


def _numeric(loaded: np.ndarray, path: str, where: str) -> np.ndarray:
    if loaded.dtype.kind not in _NUMERIC_KINDS:
        raise ArgumentError(_("{where}: {path}: holds {dtype} data; only numbers and booleans "
                              "can be Relay tensors").format(where=where, path=path,
                                                             dtype=loaded.dtype))
    # np.array, not ascontiguousarray: that one makes a 0-d array 1-d
    return np.array(loaded, order="C", copy=True)


def _open_npz(path: str, where: str):
    """The archive's arrays by name (loaded without pickle; read through fileio, so a FIFO or
    a device is a message, not a hang)."""
    archive = _np_load(path, where, npz=True)
    if not hasattr(archive, "files"):
        raise ArgumentError(_("{where}: {path}: expected an .npz archive of named arrays, found "
                              "a single .npy array").format(where=where, path=path))
    return archive


def _npz_member(path: str, name: str, where: str) -> np.ndarray:
    with _open_npz(path, where) as archive:
        if name not in archive.files:
            close = difflib.get_close_matches(name, archive.files, 1)
            if close:
                message = _("{where}: {path} has no array named {name}; did you mean {close}?")
            else:
                message = _("{where}: {path} has no array named {name} (it holds {names})")
            raise ArgumentError(message.format(where=where, path=path, name=name,
                                               close=close[0] if close else "",
                                               names=", ".join(archive.files) or _("nothing")))
        try:
            return archive[name]
        except ArrayFileError as e:
            raise ArgumentError(_("{where}: {member}: not a plain array ({reason})").format(
                where=where, member=f"{path}:{name}", reason=e)) from None


def _legal(name: str) -> str:
    """The Relay parameter name the ONNX importer gives a graph input of this name."""
    from rvmdbg.onnx.names import legal_name
    return legal_name(name)


# Names an --inputs message lists before "and N more".
NAMES_SHOWN = 5


def bind_inputs(params: list[str], texts: list[str], path: str, entry: str = "main") -> list[str]:
    """`--inputs FILE.npz` as argument texts: the positional `texts` bind the first parameters,
    the archive's arrays the others by name (`@FILE.npz:NAME`), as TVM's `set_input(name=...)`.
    A name that is no parameter, a parameter given twice, or one left without a value is an
    ArgumentError naming it."""
    where = f"--inputs {path}"
    with _open_npz(path, where) as archive:
        names = list(archive.files)
    by_param = {}
    for key in names:
        name = key[1:] if key.startswith("%") else key  # TVM's names carry no `%`
        if name not in params and _legal(name) in params:
            name = _legal(name)  # an ONNX input name (`input.1`), as its parameter (%input_1)
        if name not in params:
            close = difflib.get_close_matches(name, params, 1)
            if close:
                message = _("{where}: {key} is not a parameter of @{entry} (its parameters: "
                            "{params}); did you mean {close}?")
            else:
                message = _("{where}: {key} is not a parameter of @{entry} (its parameters: "
                            "{params})")
            raise ArgumentError(message.format(
                where=where, key=key, entry=entry, close=close[0] if close else "",
                params=", ".join("%" + p for p in params) or _("none")))
        by_param[name] = key
    if len(texts) > len(params):
        return list(texts)  # the count check names the mismatch
    out = list(texts)
    for i, name in enumerate(params):
        if i < len(texts):
            if name in by_param:
                raise ArgumentError(_("{where}: {param} is given twice: as positional argument "
                                      "{n} and by name in the archive").format(
                                          where=where, param="%" + name, n=i + 1))
            continue
        if name not in by_param:
            missing = ["%" + p for p in params[i:] if p not in by_param]
            if texts:
                message = _("{where}: no value for {missing} of @{entry}: the archive holds "
                            "{names} and {n} positional")
            else:
                message = _("{where}: no value for {missing} of @{entry}: the archive holds "
                            "{names}")
            if len(missing) > NAMES_SHOWN:
                # a model whose weights are parameters misses hundreds: a few, a count, and
                # where the whole list is
                missing = ngettext("{names} and {n} more ({total} parameter in all; `rvmdbg "
                                   "check PROGRAM` prints every parameter of @{entry})",
                                   "{names} and {n} more ({total} parameters in all; `rvmdbg "
                                   "check PROGRAM` prints every parameter of @{entry})",
                                   len(missing)).format(
                    names=", ".join(missing[:NAMES_SHOWN]), n=len(missing) - NAMES_SHOWN,
                    total=len(missing), entry=entry)
            else:
                missing = ", ".join(missing)
            held = ", ".join(names[:NAMES_SHOWN]) or _("nothing")
            if len(names) > NAMES_SHOWN:
                held = ngettext("{names} and {n} more", "{names} and {n} more",
                                len(names) - NAMES_SHOWN).format(
                    names=held, n=len(names) - NAMES_SHOWN)
            raise ArgumentError(message.format(
                where=where, missing=missing, entry=entry, names=held, n=len(texts)))
        out.append(f"@{path}:{by_param[name]}")
    return out


def _parse_relay(text: str, mod: Module | None, where: str):
    from rvmdbg.relay.parser import parse_expr

    _check_constructor_names(text, mod, where)
    try:
        expr = parse_expr(text, mod, filename="<argument>")
    except RelayError as e:
        message = (_("{where}: cannot read {text}: {message} ({hint})") if e.hint
                   else _("{where}: cannot read {text}: {message}"))
        raise ArgumentError(message.format(where=where, text=repr(text), message=e.message,
                                           hint=e.hint)) from None
    return _evaluate(expr, mod, where, text)


def _check_constructor_names(text: str, mod: Module | None, where: str) -> None:
    """Name an unknown constructor before the parser calls it an unknown operator."""
    from rvmdbg.relay.ops import OPS

    ctors = mod.constructors if mod is not None else {}
    bare = re.sub(r'"[^"]*"', '""', text)
    for m in _IDENT.finditer(bare):
        name = m.group(1)
        if name in ctors or name in OPS or name in _KEYWORDS or _SPECIAL_FLOAT.fullmatch(name):
            continue
        near = difflib.get_close_matches(name, list(ctors), n=1)
        if near:
            message = _("{where}: unknown constructor {name}; did you mean {near}?")
        elif ctors:
            message = _("{where}: unknown constructor {name}; this program's constructors are "
                        "{ctors}")
        else:
            message = _("{where}: unknown constructor {name}; this program defines no "
                        "constructors")
        raise ArgumentError(message.format(where=where, name=name, near=near[0] if near else "",
                                           ctors=", ".join(ctors)))


def _evaluate(e, mod, where: str, text: str):
    """Evaluate the value forms allowed in an argument: literals, constructors, tuples,
    negation and ref(...)."""
    if isinstance(e, Constant):
        return e.data
    if isinstance(e, Tuple):
        return ADTValue(0, None, [_evaluate(f, mod, where, text) for f in e.fields])
    if isinstance(e, ConstructorRef):
        c = e.constructor or mod.constructors.get(e.name)
        if c.inputs:
            raise ArgumentError(_("{where}: constructor {name} needs {n} argument(s): write "
                                  "{name}(...)").format(where=where, name=c.name,
                                                        n=len(c.inputs)))
        return ADTValue(c.tag, c.name, ())
    if isinstance(e, Call) and isinstance(e.op, ConstructorRef):
        c = e.op.constructor or mod.constructors.get(e.op.name)
        if len(e.args) != len(c.inputs):
            raise ArgumentError(_("{where}: constructor {name} takes {n} argument(s), got "
                                  "{given}").format(where=where, name=c.name, n=len(c.inputs),
                                                    given=len(e.args)))
        return ADTValue(c.tag, c.name, [_evaluate(a, mod, where, text) for a in e.args])
    if isinstance(e, Call) and isinstance(e.op, OpRef) and e.op.name == "negative" \
            and len(e.args) == 1 and not e.attrs:
        v = _evaluate(e.args[0], mod, where, text)
        if isinstance(v, np.ndarray) and v.dtype.kind in "iuf":
            return np.asarray(np.negative(v))  # a 0-d array, not a NumPy scalar
        raise ArgumentError(_("{where}: only a number can be negated, not {value}").format(
            where=where, value=format_value(v)))
    if isinstance(e, RefCreate):
        return RefCell(_evaluate(e.value, mod, where, text))
    what = {Var: N_("a variable"), GlobalVar: N_("a global function"), Function: N_("a function"),
            OpRef: N_("an operator")}.get(type(e))
    if what is None:
        what = N_("a call") if isinstance(e, Call) else N_("an expression")
    raise ArgumentError(_("{where}: {text} is {what}; an argument must be a literal, a "
                          "constructor value, a tuple or a JSON number or list").format(
                              where=where, text=repr(text), what=_(what)))


# ------------------------------------------------------------------------------------ converting

def convert_value(value, t, mod: Module, where: str | None = None):
    """value (from parse_value) converted to type t; None or a type variable keeps it as is."""
    if where is None:
        where = _("argument")
    if isinstance(t, TensorType):
        return _to_tensor(value, t, where)
    if isinstance(t, TupleType):
        if isinstance(value, _JSON) and isinstance(value.data, list):
            fields = [_JSON(x) for x in value.data]
        elif isinstance(value, ADTValue) and value.con is None:
            fields = list(value.fields)
        else:
            raise ArgumentError(_("{where}: expected a tuple of {n}, got {what}").format(
                where=where, n=len(t.fields), what=_describe(value)))
        if len(fields) != len(t.fields):
            raise ArgumentError(_("{where}: expected a tuple of {n}, got one of {given}").format(
                where=where, n=len(t.fields), given=len(fields)))
        return ADTValue(0, None, [convert_value(v, ft, mod, _field_where(where, i))
                                  for i, (v, ft) in enumerate(zip(fields, t.fields))])
    if isinstance(t, TypeCall):
        return _to_adt(value, t, mod, where)
    if isinstance(t, RefType):
        if not isinstance(value, RefCell):
            raise ArgumentError(_("{where}: expected a reference, written ref(...), got "
                                  "{what}").format(where=where, what=_describe(value)))
        return RefCell(convert_value(value.value, t.value, mod, where))
    if isinstance(t, FuncType):
        raise ArgumentError(_("{where}: a function cannot be given on the command line").format(
            where=where))
    # no declared type (a type parameter or unknown): tensors take Relay's default dtypes
    return _default(value, mod, where)


def _default(value, mod, where):
    if isinstance(value, _JSON):
        return _json_array(value.data, None, where)
    if isinstance(value, ADTValue):
        return ADTValue(value.tag, value.con, [_default(f, mod, where) for f in value.fields])
    if isinstance(value, RefCell):
        return RefCell(_default(value.value, mod, where))
    return value


def _describe(value) -> str:
    """How messages name a value (a translated noun phrase)."""
    if isinstance(value, _JSON):
        if isinstance(value.data, list):
            return _("a JSON list")
        return _("the number {value}").format(value=value.data)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _("the {dtype} value {value}").format(dtype=value.dtype,
                                                         value=format_value(value))
        return _("a {dtype} tensor of shape {shape}").format(dtype=value.dtype,
                                                             shape=list(value.shape))
    if isinstance(value, ADTValue):
        if value.con is None:
            return _("a tuple")
        return _("the constructor {name}").format(name=value.con)
    if isinstance(value, RefCell):
        return _("a reference")
    return type(value).__name__


def _to_adt(value, t: TypeCall, mod: Module, where: str):
    td = mod.type_defs.get(t.name)
    if td is None:
        raise ArgumentError(_("{where}: type {name} is not defined in this program").format(
            where=where, name=t.name))
    if not isinstance(value, ADTValue) or value.con is None:
        names = ", ".join(c.name for c in td.constructors)
        raise ArgumentError(_("{where}: expected a value of type {type} (constructors: {names}), "
                              "got {what}").format(where=where, type=t, names=names,
                                                   what=_describe(value)))
    ctor = next((c for c in td.constructors if c.name == value.con), None)
    if ctor is None:
        raise _not_a_constructor(where, value.con, t, td)
    mapping = dict(zip(td.type_params, t.args))
    # long lists nest one constructor per element: walk the spine of a recursive type in a loop
    out_cells: list = []
    cur = value
    while True:
        fields = list(cur.fields)
        inputs = [substitute(i, mapping) for i in ctor.inputs]
        if len(fields) != len(inputs):
            raise ArgumentError(_("{where}: constructor {name} takes {n} argument(s), got "
                                  "{given}").format(where=where, name=ctor.name, n=len(inputs),
                                                    given=len(fields)))
        spine = None
        converted = []
        for k, (f, ft) in enumerate(zip(fields, inputs)):
            if (ft == t and isinstance(f, ADTValue) and f.con is not None and spine is None):
                spine = k
                converted.append(None)
            else:
                converted.append(convert_value(f, ft, mod, where))
        out_cells.append((ctor, converted, spine))
        if spine is None:
            break
        cur = fields[spine]
        ctor = next((c for c in td.constructors if c.name == cur.con), None)
        if ctor is None:
            raise _not_a_constructor(where, cur.con, t, td)
    result = None
    for ctor, converted, spine in reversed(out_cells):
        if spine is not None:
            converted[spine] = result
        result = ADTValue(ctor.tag, ctor.name, converted)
    return result


def _not_a_constructor(where: str, name: str, t: TypeCall, td) -> ArgumentError:
    names = ", ".join(c.name for c in td.constructors)
    return ArgumentError(_("{where}: {name} is not a constructor of {type} (its constructors: "
                           "{names})").format(where=where, name=name, type=t, names=names))


def _to_tensor(value, t: TensorType, where: str) -> np.ndarray:
    if is_vector_dtype(t.dtype):
        raise ArgumentError(_("{where}: its type {type} has the vector dtype {dtype}, which no "
                              "value here can hold").format(where=where, type=t, dtype=t.dtype))
    dtype = np.dtype(t.dtype)
    if isinstance(value, _JSON):
        arr = _json_array(value.data, dtype, where)
    elif isinstance(value, np.ndarray):
        arr = _cast(value, dtype, where)
    else:
        raise ArgumentError(_("{where}: expected a tensor, got {what}").format(
            where=where, what=_describe(value)))
    _check_shape(arr, t, where)
    return arr


def _json_array(data, dtype: np.dtype | None, where: str) -> np.ndarray:
    try:
        raw = np.array(data)
    except ValueError:
        raise ArgumentError(_("{where}: the nested lists are ragged; every row of a tensor "
                              "must have the same length").format(where=where)) from None
    if raw.dtype == object or raw.dtype.kind not in _NUMERIC_KINDS:
        raise ArgumentError(_("{where}: a tensor holds numbers only, and its rows must have "
                              "equal lengths").format(where=where))
    if dtype is None:
        # Relay's defaults: integers are int32 (int64 when too big), other numbers float32
        if raw.dtype.kind in "iu":
            dtype = np.dtype("int32") if _fits(raw, np.dtype("int32")) else np.dtype("int64")
        elif raw.dtype.kind == "b":
            dtype = raw.dtype
        else:
            dtype = np.dtype("float32")
    if raw.size == 0 and raw.dtype.kind == "f":
        return raw.astype(dtype)  # an empty list: NumPy calls it float64
    return _cast(raw, dtype, where)


def _fits(raw: np.ndarray, dtype: np.dtype) -> bool:
    if raw.size == 0:
        return True
    info = np.iinfo(dtype)
    return bool(raw.min() >= info.min and raw.max() <= info.max)


def _cast(arr: np.ndarray, dtype: np.dtype, where: str) -> np.ndarray:
    """arr as dtype, refusing conversions that would change a value's meaning."""
    if arr.dtype == dtype:
        return np.array(arr, copy=True)
    src, dst = arr.dtype.kind, dtype.kind
    shown = format_value(arr.reshape(-1)[0]) if arr.size else ""
    if dst == "b":
        message = (_("{where}: expected True or False (bool), got {dtype} data such as {value}")
                   if shown else _("{where}: expected True or False (bool), got {dtype} data"))
        raise ArgumentError(message.format(where=where, dtype=arr.dtype, value=shown))
    if src == "b":
        raise ArgumentError(_("{where}: expected {dtype} numbers, got a boolean").format(
            where=where, dtype=dtype))
    if dst in "iu":
        if src == "f":
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
            if np.any(bad):
                example = format_value(np.asarray(arr[bad].reshape(-1)[0]))
                what = f"{example} ({arr.dtype})" if arr.ndim == 0 else \
                    _("a {dtype} tensor holding {value}").format(dtype=arr.dtype, value=example)
                raise ArgumentError(_("{where}: expected {dtype} integers, got {what}").format(
                    where=where, dtype=dtype, what=what))
        if arr.size:
            info = np.iinfo(dtype)
            lo, hi = arr.min(), arr.max()
            if lo < info.min or hi > info.max:
                bad = lo if lo < info.min else hi
                raise ArgumentError(_("{where}: {value} does not fit in {dtype} ({lo} to {hi})")
                                    .format(where=where, value=bad, dtype=dtype, lo=info.min,
                                            hi=info.max))
    # a float too large for float16 becomes inf, as in TVM; NumPy's warning is no message of ours
    with np.errstate(over="ignore"):
        return arr.astype(dtype)


def _check_shape(arr: np.ndarray, t: TensorType, where: str) -> None:
    if len(arr.shape) != len(t.shape) or any(
            d is not None and d != a for d, a in zip(t.shape, arr.shape)):
        want = "(" + ", ".join("?" if d is None else str(d) for d in t.shape) + \
            ("," if len(t.shape) == 1 else "") + ")"
        got = "(" + ", ".join(str(a) for a in arr.shape) + ("," if arr.ndim == 1 else "") + ")"
        what = _("a scalar") if arr.ndim == 0 else _("shape {shape}").format(shape=got)
        need = _("a scalar") if not t.shape else _("shape {shape}").format(shape=want)
        raise ArgumentError(_("{where}: expected {need}, got {what}").format(
            where=where, need=need, what=what))
