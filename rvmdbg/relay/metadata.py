"""TVM's `#[metadata]` section: reading it, and writing it back.

A module TVM prints with tensor constants ends with a `#[metadata]` line and one JSON document
(TVM's object-graph serialization): a flat `nodes` list, a `root` Map from table names
(`relay.Constant`, `VirtualDevice`, ...) to Arrays of objects, and `b64ndarrays`, each tensor in
TVM's NDArray save format as base64. The program text refers to the objects as
`meta[KEY][INDEX]`. Layout facts: ../../../shared/reference/tvm-metadata.md (and TVM's
`serialization.cc`, `ndarray.cc`, `meta_ref.cc`).

The section is split off the text before lexing (the lexer never sees the JSON); the
`b64ndarrays` strings are sliced out of the text one at a time and decoded (base64 -> bytes ->
a NumPy view of those bytes, no further copy), so the JSON decoder reads only the small node
graph; every malformed part is a located `MetadataError` on the line of the section that holds
it.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from dataclasses import dataclass, field

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.jsondepth import nesting
from rvmdbg.relay.diagnostics import RelayError, Source, Span

MARK = "#[metadata]"
NDARRAY_MAGIC = 0xDD5E40F096B4A13F
CPU = 1  # DLPack's kDLCPU
TVM_VERSION = "0.12.0"  # written into printed sections; any 0.8+ layout reads the same
# magic, reserved, device type and id, ndim, dtype code, bits, lanes
_HEAD = struct.Struct("<QQiiiBBH")
_I64 = struct.Struct("<q")
_MAX_NDIM = 32
# DLPack type codes (int, uint, float, bfloat) and bit widths -> NumPy dtypes
_DTYPE_OF = {
    (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 1): "bool", (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
}
_CODE_OF = {name: key for key, name in _DTYPE_OF.items()}
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 4: "bfloat"}
_MARK_LINE = re.compile(r"[ \t]*#\[[ \t]*metadata[ \t]*\][ \t]*\r?$")
# a top-level "b64ndarrays" key (a quote inside a JSON string is escaped, so this cannot match
# inside one), its list's end, and one plain base64 string of it
_B64_KEY = re.compile(r'[{,]\s*"b64ndarrays"\s*:\s*\[')
_LIST_END = re.compile(r"\s*\]")
_B64_ITEM = re.compile(r'\s*"([A-Za-z0-9+/=]*)"\s*([,\]])')


# levels of JSON arrays and objects a section may nest (TVM's layout uses four)
MAX_JSON_NESTING = 64
# digits of an integer in the section's JSON (node indices, counts: TVM's are int64)
_MAX_DIGITS = 40


class _BadNumber(ValueError):
    """A number the section's JSON cannot hold: its text and what is wrong."""

    def __init__(self, text: str, message: str):
        super().__init__(message)
        self.text, self.message = text, message


def _whole(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise _BadNumber(text, _("an integer of {n} digits in the metadata (at most {most})")
                         .format(n=len(text.lstrip("-")), most=_MAX_DIGITS))
    return int(text)


def _constant(text: str):
    raise _BadNumber(text, _("{word} in the metadata: JSON has no such number").format(
        word=text))


# TVM writes plain JSON: integers of int64 size, no NaN or Infinity
_DECODER = json.JSONDecoder(parse_int=_whole, parse_constant=_constant)


def _node_problem(nd, count: int) -> str | None:
    """What is wrong with one node of the section's `nodes` (None: nothing) in TVM's layout:
    a string `type_key`, `attrs` an object of strings, `keys` a list of strings, `data` a list
    of node indices, `repr_str` a string."""
    if not isinstance(nd, dict) or not isinstance(nd.get("type_key", ""), str):
        return _("expected an object with a `type_key`")
    attrs = nd.get("attrs", {})
    if not isinstance(attrs, dict) or not all(isinstance(v, str) for v in attrs.values()):
        return _("`attrs` must be an object whose values are strings, as TVM writes them")
    data = nd.get("data", [])
    if not isinstance(data, list) or not all(
            type(v) is int and 0 <= v < count for v in data):
        return _("`data` must be a list of node indices (0 to {last})").format(last=count - 1)
    keys = nd.get("keys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        return _("`keys` must be a list of strings")
    if not isinstance(nd.get("repr_str", ""), str):
        return _("`repr_str` must be a string")
    return None


class MetadataError(RelayError):
    """A malformed `#[metadata]` section or a `meta[...]` reference it cannot satisfy."""

    kind = "metadata"


@dataclass(eq=False)
class MetaObject:
    """A non-tensor object of a metadata table (a `VirtualDevice`, an attribute object), as an
    attribute value: its table and index, its TVM type key and its fields as TVM wrote them
    (strings; a field holding another object is that object's node index)."""

    key: str
    index: int
    type_key: str
    attrs: dict = field(default_factory=dict)
    # the section it was read from (its node list, shared) and its node there: printing
    # writes those nodes back at the same indices, so fields naming other nodes stay true
    origin: list | None = field(default=None, repr=False)
    node: int = -1

    def __eq__(self, other) -> bool:
        return isinstance(other, MetaObject) and (self.key, self.type_key, self.attrs) == \
            (other.key, other.type_key, other.attrs)

    def __hash__(self) -> int:
        return hash((self.key, self.type_key))

    def __repr__(self) -> str:
        return f"meta[{self.key}][{self.index}]"


# ---------------------------------------------------------------------------- the NDArray format

def decode_ndarray(buf: bytes) -> np.ndarray:
    """One tensor in TVM's NDArray save format -> a read-only NumPy array over `buf` (no copy).
    Raises ValueError saying what is wrong."""
    if len(buf) < _HEAD.size:
        raise ValueError(_("the tensor header needs {need} bytes, found {have}").format(
            need=_HEAD.size, have=len(buf)))
    magic, _reserved, dev_type, _dev_id, ndim, code, bits, lanes = _HEAD.unpack_from(buf, 0)
    if magic != NDARRAY_MAGIC:
        raise ValueError(_("wrong magic number {magic} (a TVM NDArray starts with {want})")
                         .format(magic=f"0x{magic:016X}", want=f"0x{NDARRAY_MAGIC:016X}"))
    if dev_type != CPU:
        raise ValueError(_("the tensor was saved from device type {dev}; TVM saves metadata "
                           "from the CPU (device type 1)").format(dev=dev_type))
    if not 0 <= ndim <= _MAX_NDIM:
        raise ValueError(_("ndim {ndim} is out of range (0 to {max})").format(ndim=ndim,
                                                                             max=_MAX_NDIM))
    if lanes != 1:
        raise ValueError(_("vector dtype with {lanes} lanes: rvmdbg reads scalar element types "
                           "(lanes 1) only").format(lanes=lanes))
    dtype = _DTYPE_OF.get((code, bits))
    if dtype is None:
        kind = _CODE_NAMES.get(code) or _("type code {code}").format(code=code)
        raise ValueError(_("unsupported dtype {dtype}").format(dtype=f"{kind}{bits}"))
    pos = _HEAD.size
    if len(buf) < pos + 8 * ndim + 8:
        raise ValueError(_("the data is truncated inside the tensor's shape"))
    shape = struct.unpack_from(f"<{ndim}q", buf, pos)
    pos += 8 * ndim
    for d in shape:
        if d < 0:
            raise ValueError(_("negative dimension {d} in shape {shape}").format(
                d=d, shape=tuple(shape)))
        if d > 1 << 48:
            raise ValueError(_("dimension {d} in shape {shape} is too large").format(
                d=d, shape=tuple(shape)))
    nbytes = _I64.unpack_from(buf, pos)[0]
    pos += 8
    count = 1
    for d in shape:
        count *= d
    expect = count * ((bits * lanes + 7) // 8)
    if nbytes != expect:
        raise ValueError(_("the byte size {nbytes} does not match shape {shape} of {dtype} "
                           "({expect} bytes)").format(nbytes=nbytes, shape=tuple(shape),
                                                      dtype=dtype, expect=expect))
    have = len(buf) - pos
    if have < nbytes:
        raise ValueError(_("the data is truncated: {nbytes} bytes claimed, {have} present")
                         .format(nbytes=nbytes, have=have))
    if have > nbytes:
        raise ValueError(_("{extra} bytes follow the tensor's {nbytes} bytes of data").format(
            extra=have - nbytes, nbytes=nbytes))
    if dtype == "bool":
        raw = np.frombuffer(buf, np.uint8, count, pos)
        # TVM stores one byte per bool; any byte other than 0/1 is normalised, as a C++ bool is
        a = raw.view(np.bool_) if not (raw > 1).any() else raw.astype(np.bool_)
    else:
        a = np.frombuffer(buf, np.dtype(dtype).newbyteorder("<"), count, pos)
        if a.dtype.byteorder not in ("=", "|") and not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
    return a.reshape(shape)


def encode_ndarray(a) -> str:
    """A tensor in TVM's NDArray save format, as base64 (the inverse of decode_ndarray)."""
    a = np.asarray(a)
    code, bits = _CODE_OF[a.dtype.name]
    data = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
    head = _HEAD.pack(NDARRAY_MAGIC, 0, CPU, 0, a.ndim, code, bits, 1)
    shape = struct.pack(f"<{a.ndim}q", *a.shape)
    return base64.b64encode(head + shape + _I64.pack(len(data)) + data).decode("ascii")


# ---------------------------------------------------------------------------- reading a section

def split_metadata(text: str, filename: str):
    """(program text, MetadataSection or None). The program text keeps the `#[metadata]` line
    itself, so lines are numbered as in the file, and nothing after it."""
    i = text.find(MARK)
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        m = _MARK_LINE.match(text, start, end)
        if m is not None and m.end() == end:
            return text[:end], MetadataSection(text, end, filename)
        i = text.find(MARK, i + 1)
    return text, None


class MetadataSection:
    """The decoded tables of one `#[metadata]` section; `resolve` answers `meta[KEY][i]`."""

    def __init__(self, text: str, offset: int, filename: str):
        self._text = text  # the whole file, dropped once decoded
        self.offset = offset  # where the JSON starts (just after the #[metadata] line)
        self.filename = filename
        self.mark_line = text.count("\n", 0, offset) + 1
        self.tables: dict[str, list[int]] = {}
        self.nodes: list = []
        self.arrays: list = []
        self._objects: dict[tuple, object] = {}

    # ---- errors, located lazily ----

    def _span_at(self, pos: int, length: int = 1) -> Span:
        text = self._text
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        end = text.find("\n", pos)
        length = max(1, min(length, 80, (end if end >= 0 else len(text)) - pos))
        return Span(line, col, line, col + length, self.filename)

    def _error(self, message: str, pos: int | None = None, length: int = 1,
               hint: str | None = None) -> MetadataError:
        if pos is None:  # the #[metadata] line itself
            span = Span(self.mark_line, 1, self.mark_line, 1 + len(MARK), self.filename)
        else:
            span = self._span_at(pos, length)
        return MetadataError(message, span, hint, _Quoted(self._text, span, self.filename))

    def _key_pos(self, key: str) -> int | None:
        i = self._text.find(f'"{key}"', self.offset)
        return None if i < 0 else i

    def _element_pos(self, key: str, index: int) -> tuple[int | None, int]:
        """Where element `index` of the top-level list `key` starts, and its length."""
        text = self._text
        at = self._key_pos(key)
        if at is None:
            return None, 1
        at = text.find("[", at)
        dec = json.JSONDecoder()
        pos = at + 1
        try:
            for i in range(index + 1):
                while text[pos] in " \t\r\n,":
                    pos += 1
                _, end = dec.raw_decode(text, pos)
                if i == index:
                    nl = text.find("\n", pos, end)
                    return pos, (nl if nl >= 0 else end) - pos
                pos = end
        except (ValueError, IndexError):
            pass
        return at, 1

    def _node_error(self, index: int, message: str) -> MetadataError:
        pos, length = self._element_pos("nodes", index)
        return self._error(_("metadata node {index}: {message}").format(index=index,
                                                                       message=message),
                           pos, length)

    # ---- decoding ----

    def load(self) -> None:
        """Decode the JSON and every tensor; raise a located MetadataError on the first fault."""
        text = self._text
        pos = self.offset
        n = len(text)
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            raise self._error(_("the #[metadata] section is empty"),
                              hint=_("TVM writes one JSON document after #[metadata]"))
        # The tensors' base64 is sliced out of the text one string at a time, so the JSON
        # decoder never makes a second copy of it; a list of anything but plain strings falls
        # back to decoding it with the rest (and its errors are found there).
        region = self._b64_region(pos)
        if region is None:
            reduced, cut, skip, spans = text, 0, 0, None
            start = pos
        else:
            open_at, close, spans = region
            reduced = text[pos:open_at] + text[close:]
            cut, skip, start = open_at - pos, close - open_at, 0

        def absolute(p: int) -> int:
            if region is None:
                return p
            return pos + p if p < cut else pos + p + skip
        depth, deepest = nesting(reduced[start:])
        if depth > MAX_JSON_NESTING:
            raise self._error(_("the metadata is nested {depth} levels deep; TVM's layout "
                                "needs a few, rvmdbg reads at most {most}").format(
                                    depth=depth, most=MAX_JSON_NESTING),
                              absolute(start + deepest))
        try:
            doc, end = _DECODER.raw_decode(reduced, start)
        except json.JSONDecodeError as e:
            # i18n: {reason} is Python's JSON decoder's own words, in English
            raise self._error(_("bad JSON in the metadata: {reason}").format(reason=e.msg),
                              absolute(e.pos)) from None
        except _BadNumber as e:
            at = reduced.find(e.text, start)
            raise self._error(e.message, absolute(at) if at >= 0 else pos,
                              len(e.text)) from None
        del reduced
        end = absolute(end)
        rest = text[end:end + 64].strip() if end < n else ""
        if rest:
            while text[end] in " \t\r\n":
                end += 1
            raise self._error(_("text after the metadata's JSON document"), end,
                              hint=_("#[metadata] must be the last part of the file"))
        if not isinstance(doc, dict):
            raise self._error(_("the metadata must be a JSON object"), pos)
        nodes = doc.get("nodes")
        root = doc.get("root")
        if not isinstance(nodes, list) or not nodes:
            raise self._error(_("the metadata has no `nodes` list"),
                              self._key_pos("nodes") or pos)
        if not isinstance(root, int) or not 0 <= root < len(nodes):
            raise self._error(_("the metadata's `root` {root} is not a node index").format(
                root=repr(root)), self._key_pos("root") or pos)
        for i, nd in enumerate(nodes):
            problem = _node_problem(nd, len(nodes))
            if problem is not None:
                raise self._node_error(i, problem)
        self.nodes = nodes
        self.tables = self._read_tables(root)
        b64 = doc.get("b64ndarrays", [])
        del doc
        if not isinstance(b64, list):
            raise self._error(_("`b64ndarrays` must be a list"), self._key_pos("b64ndarrays"))
        arrays: list = []
        if spans is not None:
            for i, (a, b) in enumerate(spans):
                arrays.append(self._decode(i, text[a:b], (a - 1, b - a + 2)))
        else:
            for i in range(len(b64)):
                s = b64[i]
                b64[i] = None  # each base64 string is freed as soon as it is decoded
                arrays.append(self._decode(i, s))
        self.arrays = arrays
        self._check_constants()

    def _read_tables(self, root: int) -> dict:
        nd = self.nodes[root]
        tk = nd.get("type_key")
        if tk not in ("Map", "StrMap"):
            raise self._node_error(root, _("the root must be a Map of tables, found {key}")
                                   .format(key=repr(tk)))
        data = nd.get("data", [])
        keys = nd.get("keys")
        if keys is None:  # a Map with object keys: [key node, value node, ...]
            pairs = list(zip(data[0::2], data[1::2]))
            keys = [self._string_node(k) for k, _ in pairs]
            data = [v for _, v in pairs]
        if not isinstance(keys, list) or not isinstance(data, list) or len(keys) != len(data):
            raise self._node_error(root, _("the root Map's `keys` and `data` do not pair up"))
        tables: dict = {}
        for key, arr in zip(keys, data):
            items = self._node_list(arr)
            if not isinstance(key, str) or items is None:
                raise self._node_error(root, _("table {key} is not an Array of objects").format(
                    key=repr(key)))
            tables[key] = items
        return tables

    def _string_node(self, i):
        nd = self.nodes[i] if isinstance(i, int) and 0 <= i < len(self.nodes) else {}
        return nd.get("repr_str")

    def _node_list(self, i) -> list | None:
        if not isinstance(i, int) or not 0 <= i < len(self.nodes):
            return None
        nd = self.nodes[i]
        data = nd.get("data", [])
        if nd.get("type_key") != "Array" or not isinstance(data, list):
            return None
        if not all(isinstance(x, int) and 0 <= x < len(self.nodes) for x in data):
            return None
        return data

    def _b64_region(self, pos: int):
        """(after the `[`, at the `]`, [(start, end) of each string's content]) of a top-level
        `b64ndarrays` list of plain base64 strings; None when there is none such."""
        text = self._text
        m = _B64_KEY.search(text, pos)
        if m is None:
            return None
        open_at = k = m.end()
        spans: list = []
        empty = _LIST_END.match(text, k)
        if empty is not None:
            return open_at, empty.end() - 1, spans
        while True:
            item = _B64_ITEM.match(text, k)
            if item is None:
                return None
            spans.append(item.span(1))
            k = item.end()
            if item.group(2) == "]":
                return open_at, k - 1, spans

    def _decode(self, i: int, s, where: tuple | None = None) -> np.ndarray:
        def fail(message: str):
            pos, length = where if where is not None else self._element_pos("b64ndarrays", i)
            return self._error(_("metadata tensor {index}: {message}").format(index=i,
                                                                             message=message),
                               pos, length)
        if not isinstance(s, str):
            raise fail(_("expected a base64 string"))
        try:
            buf = base64.b64decode(s, validate=True)
        except (binascii.Error, ValueError) as e:
            # i18n: {reason} is Python's base64 decoder's own words, in English
            raise fail(_("bad base64 ({reason})").format(reason=e)) from None
        try:
            return decode_ndarray(buf)
        except ValueError as e:
            raise fail(str(e)) from None

    def _check_constants(self) -> None:
        for i in self.tables.get("relay.Constant", ()):
            self._constant_data(i)

    def _constant_data(self, node: int) -> np.ndarray:
        nd = self.nodes[node]
        if nd.get("type_key") != "relay.Constant":
            raise self._node_error(node, _("expected a relay.Constant, found {key}").format(
                key=repr(nd.get("type_key"))))
        ref = nd.get("attrs", {}).get("data")
        try:
            k = int(ref)
        except (TypeError, ValueError):
            raise self._node_error(node, _("the constant's `data` {ref} is not a tensor index")
                                   .format(ref=repr(ref))) from None
        if not 0 <= k < len(self.arrays):
            raise self._node_error(node, _("the constant's `data` {k} is past the end of "
                                           "b64ndarrays ({n} tensors)").format(
                                               k=k, n=len(self.arrays)))
        return self.arrays[k]

    def release_text(self) -> None:
        """Drop the file text once every reference is resolved (errors after this are rare and
        quote the program part only)."""
        self._text = self._text[:self.offset]

    # ---- references ----

    def resolve(self, key: str, index: int, key_span: Span, index_span: Span, source: Source,
                as_expr: bool):
        """The object `meta[key][index]` names: a NumPy array for a relay.Constant, a
        MetaObject otherwise."""
        table = self.tables.get(key)
        if table is None:
            known = ", ".join(sorted(self.tables)) or _("none")
            raise MetadataError(_("unknown metadata table `{key}`").format(key=key), key_span,
                                _("this file's #[metadata] has the tables: {known}").format(
                                    known=known), source)
        if not 0 <= index < len(table):
            raise MetadataError(_("{ref} is past the end of its table").format(
                ref=f"meta[{key}][{index}]"), index_span,
                _("the table {key} has {n} entries (0 to {last})").format(
                    key=key, n=len(table), last=len(table) - 1)
                if table else _("the table {key} is empty").format(key=key), source)
        node = table[index]
        if key == "relay.Constant" or self.nodes[node].get("type_key") == "relay.Constant":
            return self._constant_data(node)
        if as_expr:
            raise MetadataError(_("{ref} is a {type_key}, not an expression").format(
                ref=f"meta[{key}][{index}]", type_key=self.nodes[node].get("type_key")), key_span,
                _("only relay.Constant entries can be used as values"), source)
        got = self._objects.get((key, index))
        if got is None:
            nd = self.nodes[node]
            got = self._objects[(key, index)] = MetaObject(
                key, index, nd.get("type_key", ""), dict(nd.get("attrs", {})),
                origin=self.nodes, node=node)
        return got


class _Quoted(Source):
    """A Source holding only the line an error quotes (the file may be 20 MB), cut short after
    the spot when it is long (one base64 string can be megabytes on one line)."""

    def __init__(self, text: str, span: Span, name: str):
        self.name = name
        self.text = ""
        start = 0
        for _line in range(span.line - 1):
            start = text.find("\n", start) + 1
        end = text.find("\n", start)
        keep = max(span.col + 80, 160)
        stop = min(end if end >= 0 else len(text), start + keep)
        line = text[start:stop]
        if stop - start == keep:
            line += " ..."
        self.lines = [""] * (span.line - 1) + [line]


# ---------------------------------------------------------------------------- writing a section

def metadata_text(constants: list, objects: list = ()) -> str:
    """The JSON document TVM writes after `#[metadata]`, for tensor constants (in table order)
    and other table objects (MetaObject, in table order per key).

    Objects read from a section keep their nodes at their own indices, so every field that
    names another node (a target, a string, an array of them) still names it. Which fields are
    node indices depends on TVM's schema of each type, so every non-negative integer a kept
    node holds is taken as a possible reference: the nodes reachable that way are kept, the
    rest of that section (its tensor constants, its tables) is blanked or dropped, and the
    nodes written anew (the constants, the tables) go after them where no kept field's integer
    points. Printing a parsed print therefore gives the same text again."""
    origin = next((o.origin for o in objects if o.origin is not None), None)
    if origin is not None:
        # its tensor constants are written anew below
        base: list = [_BLANK if n.get("type_key") == "relay.Constant" else n for n in origin]
    else:
        base = [_BLANK, None]
    # TVM writes the root Map of tables as node 1; an origin's own root there is replaced
    root_at_1 = base[1] is None or base[1].get("type_key") in ("Map", "StrMap")
    by_key: dict = {}
    for obj in objects:
        if origin is None or obj.origin is not origin:
            # an object made here (or from another section) has no nodes to point at: such
            # fields become null
            node = {"type_key": obj.type_key}
            if obj.attrs:
                node["attrs"] = {k: (v if not _is_node_field(k) else "0")
                                 for k, v in obj.attrs.items()}
            where = len(base)
            base.append(node)
        else:
            where = obj.node
        by_key.setdefault(obj.key, []).append(where)
    kept, values = _reachable([n for items in by_key.values() for n in items], base,
                              1 if root_at_1 else -1)
    # the nodes written anew: the constants' device and scope, the constants, one Array per
    # table, and the root unless it goes at 1
    n_tables = (1 if constants else 0) + len(by_key)
    fresh = (2 + len(constants) if constants else 0) + n_tables + (0 if root_at_1 else 1)
    start = max(kept | {1}) + 1
    while any(start <= v < start + fresh for v in values):
        start += 1
    nodes = [n if i == 0 or i in kept else _BLANK for i, n in enumerate(base[:start])]
    nodes += [_BLANK] * (start - len(nodes))
    b64: list = []
    keys: list = []
    arrays: list = []
    if constants:
        vd = len(nodes)
        nodes.append({"type_key": "VirtualDevice", "attrs": {
            "device_type_int": "-1", "memory_scope": str(vd + 1), "target": "0",
            "virtual_device_id": "-1"}})
        nodes.append({"type_key": "runtime.String"})
        items = []
        for a in constants:
            items.append(len(nodes))
            nodes.append({"type_key": "relay.Constant", "attrs": {
                "_checked_type_": "0", "data": str(len(b64)), "span": "0",
                "virtual_device_": str(vd)}})
            b64.append(encode_ndarray(a))
        keys.append("relay.Constant")
        arrays.append(items)
    for key, items in by_key.items():
        keys.append(key)
        arrays.append(items)
    data = []
    for items in arrays:
        data.append(len(nodes))
        nodes.append({"type_key": "Array", "data": items})
    root = {"type_key": "Map", "keys": keys, "data": data}
    if root_at_1:
        nodes[1] = root
        at = 1
    else:  # an origin whose node 1 is no Map may have objects naming it: the root goes last
        at = len(nodes)
        nodes.append(root)
    doc = {"root": at, "nodes": nodes, "b64ndarrays": b64, "attrs": {"tvm_version": TVM_VERSION}}
    return json.dumps(doc, indent=2)


_BLANK = {"type_key": ""}


def _reachable(starts: list, nodes: list, skip: int) -> tuple[set, set]:
    """The nodes reachable from `starts` through every integer a node holds (an `attrs` value
    written as digits, an element of `data`), never entering `skip`; and every such integer."""
    kept: set = set()
    values: set = set()
    todo = [i for i in starts if 0 < i < len(nodes)]
    while todo:
        i = todo.pop()
        if i in kept or i == skip:
            continue
        kept.add(i)
        nd = nodes[i] or {}
        # a digit string longer than an index is a value, never a node
        found = [int(v) for v in (nd.get("attrs") or {}).values()
                 if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) <= 18]
        found += [v for v in nd.get("data") or () if isinstance(v, int) and v >= 0]
        values.update(found)
        todo += [v for v in found if 0 < v < len(nodes)]
    return kept, values


# Fields of TVM objects that hold another object (a node index), not a plain value.
_NODE_FIELDS = frozenset({"span", "_checked_type_", "virtual_device_", "target", "memory_scope",
                          "source_name", "shape", "fields", "type_annotation"})


def _is_node_field(name: str) -> bool:
    return name in _NODE_FIELDS


__all__ = ["MARK", "MetaObject", "MetadataError", "MetadataSection", "decode_ndarray",
           "encode_ndarray", "metadata_text", "split_metadata"]


# ---------------------------------------------------------------------------- attribute objects

def is_attrs_object(obj) -> bool:
    """Is obj an attribute object TVM printed as `meta[relay.attrs.X][i]` in a call's
    attribute place (TVM 0.8 did so when a call's attrs type was not its operator's)?"""
    return isinstance(obj, MetaObject) and (obj.type_key.startswith("relay.attrs.") or
                                            obj.type_key == "DictAttrs")


_NULLABLE = ("int_or_none", "int_list_or_none", "float_or_none", "dtype_or_none")


def attrs_fields(obj: MetaObject, kinds: dict) -> dict:
    """The attribute dict an attrs object's fields stand for. TVM writes plain fields (int,
    bool, double, DataType, std::string) as text and object fields (Integer, Array, String) as
    node indices; `kinds` (field name -> an operator's attribute kind) says which to expect.
    A field the operator does not declare is decoded as best it can be, for the checker's
    message about it."""
    nodes = obj.origin or []
    out = {}
    for name, raw in obj.attrs.items():
        out[name] = _field_value(nodes, raw, kinds.get(name, "any"))
    return out


def _node(nodes: list, raw):
    """The node a field's text names, or None when it is no node index."""
    if isinstance(raw, str) and raw.isdigit() and int(raw) < len(nodes):
        return nodes[int(raw)]
    return None


def _field_value(nodes: list, raw, kind: str):
    node = _node(nodes, raw)
    if kind == "bool":
        return raw not in ("0", "false", "False", "")
    if kind in ("dtype", "dtype_or_none"):
        # DataType is a plain field; TVM writes the unset (void) one as ""
        return None if kind == "dtype_or_none" and raw in ("", "void") else raw
    if kind in ("int", "float") and node is not None and \
            node.get("type_key") not in ("IntImm", "FloatImm"):
        return _number(raw)  # a plain int or double field
    if raw == "0" and kind in _NULLABLE:
        return None  # node 0 is TVM's null: an unset Integer, Array or String
    if node is not None:
        return _object_value(nodes, node, 0)
    return _number(raw)


def _number(raw):
    for conv in (int, float):
        try:
            return conv(raw)
        except (TypeError, ValueError):
            pass
    return raw


def _object_value(nodes: list, node: dict, depth: int):
    """An IntImm, FloatImm, String or Array node as a Python value."""
    key = node.get("type_key", "")
    attrs = node.get("attrs", {})
    if key == "IntImm":
        dtype = attrs.get("dtype", "")
        value = int(attrs.get("value", "0"))
        return bool(value) if dtype == "bool" else value
    if key == "FloatImm":
        return float(attrs.get("value", "0"))
    if key == "runtime.String":
        return node.get("repr_str", "")
    if key == "Array" and depth < 8:
        return [_object_value(nodes, nodes[i], depth + 1)
                for i in node.get("data", []) if 0 <= i < len(nodes)]
    if key == "":
        return None
    return key  # another object: its type key, for the message that refuses it


# ---------------------------------------------------------------------------- missing sections

class MissingConstants:
    """What `meta[relay.Constant][i]` stands for in a file pasted without its `#[metadata]`
    section (as in bug reports), typed by the `/* ty=... */` TVM prints after it.

    mode "inputs" (--meta-inputs): a parameter `%meta_const_<i>` of the global that uses it,
    after its own parameters, so ARGs or `--inputs` bind it by that name; mode "random"
    (--meta-random SEED): a constant of seeded values, each index drawn from its own stream so
    a value does not depend on the order of the references."""

    def __init__(self, mode: str, seed: int = 0):
        if mode not in ("inputs", "random"):
            raise ValueError(f"unknown mode {mode!r}")  # not shown to users
        self.mode = mode
        self.seed = seed
        self._values: dict = {}

    @staticmethod
    def name(index: int) -> str:
        return f"meta_const_{index}"

    def value(self, index: int, t) -> np.ndarray:
        """Seeded values of tensor type t for constant `index` (one array per index and type):
        floats standard normal, integers in [-4, 4] ([0, 8] unsigned), bools half true."""
        key = (index, str(t))
        got = self._values.get(key)
        if got is None:
            rng = np.random.default_rng([self.seed, index])
            shape, dtype = tuple(t.shape), np.dtype(t.dtype)
            if dtype.kind == "f":
                data = rng.standard_normal(shape).astype(dtype)
            elif dtype.kind == "b":
                data = rng.random(shape) < 0.5
            elif dtype.kind == "u":
                data = rng.integers(0, 9, shape).astype(dtype)
            else:
                data = rng.integers(-4, 5, shape).astype(dtype)
            data = np.asarray(data)
            data.flags.writeable = False
            got = self._values[key] = data
        return got
