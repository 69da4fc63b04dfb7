"""TVM's `#[metadata]` section: tensors in TVM's NDArray format, `meta[...]` references, a
located error for every malformed part, and print -> parse giving bit-identical constants."""
from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from rvmdbg.relay.ast import Call, Constant, Function, Module, OpRef, Tuple, Var
from rvmdbg.relay.diagnostics import RelayError
from rvmdbg.relay.equal import structural_equal
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.metadata import (
    MetaObject, MetadataError, decode_ndarray, encode_ndarray, metadata_text,
)
from rvmdbg.relay.parser import parse
from rvmdbg.relay.printer import print_module
from rvmdbg.relay.typecheck import check_module

HEADER = '#[version = "0.0.5"]\n'
MAGIC = 0xDD5E40F096B4A13F
# The example of ../shared/reference/tvm-metadata.md: a float32 tensor of shape (5,)
REFERENCE_PREFIX = "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAA"


def ndarray_bytes(data=b"\0" * 20, shape=(5,), code=2, bits=32, lanes=1, magic=MAGIC,
                  device=1, nbytes=None) -> bytes:
    head = struct.pack("<QQiiiBBH", magic, 0, device, 0, len(shape), code, bits, lanes)
    return (head + struct.pack(f"<{len(shape)}q", *shape)
            + struct.pack("<q", len(data) if nbytes is None else nbytes) + data)


def doc_with(b64: list, tables=None) -> dict:
    """A section in TVM's layout: one relay.Constant per b64 entry."""
    doc = json.loads(metadata_text([np.zeros(1, "float32")] * len(b64)))
    doc["b64ndarrays"] = b64
    return doc


def add_table(doc, key: str, *objects: dict) -> int:
    """Append `objects` as the nodes of a new table `key` of the section; the first's index."""
    nodes = doc["nodes"]
    first = len(nodes)
    nodes.extend(objects)
    nodes.append({"type_key": "Array", "data": list(range(first, first + len(objects)))})
    nodes[1]["keys"].append(key)
    nodes[1]["data"].append(len(nodes) - 1)
    return first


VIRTUAL_DEVICE = {"type_key": "VirtualDevice", "attrs": {
    "device_type_int": "1", "memory_scope": "0", "target": "0", "virtual_device_id": "0"}}


def file_with(body: str, doc) -> str:
    section = doc if isinstance(doc, str) else json.dumps(doc, indent=2)
    return HEADER + body + "\n#[metadata]\n" + section + "\n"


USE0 = "def @main() {\n  meta[relay.Constant][0] /* ty=Tensor[(5,), float32] */\n}"


def error_of(text: str) -> MetadataError | RelayError:
    with pytest.raises(RelayError) as info:
        load_module(text, "m.relay")
    return info.value


def test_the_reference_example_encodes_bit_for_bit():
    assert encode_ndarray(np.zeros(5, "float32")).startswith(REFERENCE_PREFIX)
    a = decode_ndarray(base64.b64decode(encode_ndarray(np.arange(5, dtype="float32"))))
    assert a.dtype == np.float32 and a.tolist() == [0, 1, 2, 3, 4]


def test_a_reference_becomes_a_constant_with_the_span_of_the_reference():
    data = np.arange(5, dtype="float32") / 10
    text = file_with(USE0, doc_with([encode_ndarray(data)]))
    mod = check_module(load_module(text, "m.relay"))
    c = mod.functions["main"].body
    assert isinstance(c, Constant) and c.data.tobytes() == data.tobytes()
    assert (c.span.line, c.span.col, c.span.end_col) == (3, 3, 26)
    assert str(mod.functions["main"].checked_type) == "fn () -> Tensor[(5,), float32]"
    # the program text keeps the references as written and the #[metadata] line, no JSON
    assert mod.source.text.endswith("}\n#[metadata]") and "b64ndarrays" not in mod.source.text


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int64", "uint32",
                                   "float16", "float32", "float64"])
def test_every_dtype_round_trips_bit_identically(dtype):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((2, 3)) * 50).astype(dtype)
    if dtype == "float16":
        a[0, 0] = np.float16(0.1)
    b = decode_ndarray(base64.b64decode(encode_ndarray(a)))
    assert b.dtype == a.dtype and b.shape == a.shape and b.tobytes() == a.tobytes()


def test_a_bool_tensor_is_one_byte_per_element_and_other_bytes_read_as_true():
    raw = ndarray_bytes(bytes([0, 1, 2]), shape=(3,), code=1, bits=1)
    assert decode_ndarray(raw).tolist() == [False, True, True]


def test_zero_size_and_zero_d_tensors():
    for a in (np.zeros((0, 3), "float32"), np.array(7, "int64")):
        b = decode_ndarray(base64.b64decode(encode_ndarray(a)))
        assert b.shape == a.shape and b.tobytes() == a.tobytes()


@pytest.mark.parametrize("raw, message", [
    (ndarray_bytes(magic=0x1234), "wrong magic number"),
    (ndarray_bytes(device=2), "device type 2"),
    (ndarray_bytes(lanes=4), "4 lanes"),
    (ndarray_bytes(code=4, bits=16, data=b"\0" * 10), "unsupported dtype bfloat16"),
    (ndarray_bytes(shape=(-5,)), "negative dimension -5"),
    (ndarray_bytes(shape=(1 << 60,)), "too large"),
    (ndarray_bytes(nbytes=24, data=b"\0" * 24), "byte size 24 does not match shape (5,)"),
    (ndarray_bytes(nbytes=20, data=b"\0" * 8), "truncated: 20 bytes claimed, 8 present"),
    (ndarray_bytes()[:30], "header needs 32 bytes"),
    (ndarray_bytes() + b"xx", "2 bytes follow"),
])
def test_malformed_tensors_are_located_on_their_line(raw, message):
    doc = doc_with([encode_ndarray(np.zeros(2, "int32")), base64.b64encode(raw).decode()])
    text = file_with(USE0, doc)
    e = error_of(text)
    assert isinstance(e, MetadataError) and message in e.message, e.message
    assert e.message.startswith("metadata tensor 1: ")
    line = text.split("\n")[e.span.line - 1]
    assert line.strip().startswith('"' + base64.b64encode(raw).decode()[:20])
    out = e.format()
    assert out.startswith(f"m.relay:{e.span.line}:{e.span.col}: error: ") and "^" in out


def test_bad_base64_is_located():
    text = file_with(USE0, doc_with(["P6G0lv!!"]))
    e = error_of(text)
    assert "metadata tensor 0: bad base64" in e.message
    assert text.split("\n")[e.span.line - 1].strip() == '"P6G0lv!!"'


def test_bad_json_is_located_where_the_json_breaks():
    text = HEADER + USE0 + '\n#[metadata]\n{\n  "root": 1,\n  "nodes": [,]\n}\n'
    e = error_of(text)
    assert "bad JSON in the metadata" in e.message and (e.span.line, e.span.col) == (8, 13)


def test_an_empty_section_and_text_after_the_json():
    e = error_of(HEADER + USE0 + "\n#[metadata]\n\n")
    assert "section is empty" in e.message and e.span.line == 5
    doc = json.dumps(doc_with([encode_ndarray(np.zeros(5, "float32"))]))
    e = error_of(HEADER + USE0 + "\n#[metadata]\n" + doc + "\ndef @f() { 1 }\n")
    assert "text after the metadata" in e.message and e.span.line == 7


def test_unknown_table_and_index_past_the_end_point_at_the_reference():
    doc = doc_with([encode_ndarray(np.zeros(5, "float32"))])
    e = error_of(file_with("def @main() { meta[relay.Konstant][0] }", doc))
    assert "unknown metadata table `relay.Konstant`" in e.message
    assert (e.span.line, e.span.col, e.span.end_col) == (2, 20, 34)
    assert "relay.Constant" in e.hint
    e = error_of(file_with("def @main() { meta[relay.Constant][3] }", doc))
    assert "meta[relay.Constant][3] is past the end" in e.message and e.span.col == 36
    assert "1 entries (0 to 0)" in e.hint


def test_a_reference_without_a_section_and_a_bad_reference():
    e = error_of(HEADER + "def @main() { meta[relay.Constant][0] }\n")
    assert "this file has none" in e.message and e.span.col == 15
    doc = doc_with([encode_ndarray(np.zeros(5, "float32"))])
    e = error_of(file_with("def @main() { meta[relay.Constant][x] }", doc))
    assert "an index" in e.message


def test_a_constant_node_pointing_past_b64ndarrays():
    doc = doc_with([encode_ndarray(np.zeros(5, "float32"))])
    const = next(i for i, n in enumerate(doc["nodes"]) if n["type_key"] == "relay.Constant")
    doc["nodes"][const]["attrs"]["data"] = "9"
    text = file_with(USE0, doc)
    e = error_of(text)
    assert f"metadata node {const}: the constant's `data` 9 is past the end" in e.message
    assert '"type_key": "relay.Constant"' in "\n".join(text.split("\n")[e.span.line - 1:
                                                                    e.span.line + 1])


def test_a_root_that_is_not_a_map():
    doc = doc_with([encode_ndarray(np.zeros(5, "float32"))])
    doc["root"] = 0
    assert "the root must be a Map of tables" in error_of(file_with(USE0, doc)).message


def test_other_tables_resolve_as_attribute_objects_and_print_back():
    doc = doc_with([encode_ndarray(np.zeros(5, "float32"))])
    add_table(doc, "VirtualDevice", VIRTUAL_DEVICE)
    body = 'def @main(%x: Tensor[(5,), float32]) {\n  cast(%x, dtype="int32", ' \
           'dev=meta[VirtualDevice][0])\n}'
    with pytest.raises(RelayError) as info:
        check_module(load_module(file_with(body, doc), "m.relay"))
    assert "dev" in info.value.message  # parsed: the operator's own check refuses the attribute
    mod = parse(file_with(body, doc), "m.relay")
    obj = mod.functions["main"].body.attrs["dev"]
    assert isinstance(obj, MetaObject) and obj.type_key == "VirtualDevice"
    assert obj.attrs["device_type_int"] == "1"
    back = parse(print_module(mod))
    assert back.functions["main"].body.attrs["dev"] == obj
    e = error_of(file_with("def @main() { meta[VirtualDevice][0] }", doc))
    assert "is a VirtualDevice, not an expression" in e.message


def test_run_reads_the_section_and_errors_exit_2(tmp_path):
    w = np.arange(6, dtype="float32").reshape(3, 2) / 10
    prog = tmp_path / "m.relay"
    prog.write_text(HEADER + "def @main(%x: Tensor[(1, 2), float32]) {\n"
                    "  nn.dense(%x, meta[relay.Constant][0] /* ty=Tensor[(3, 2), float32] */)\n}\n"
                    "#[metadata]\n" + metadata_text([w]) + "\n")
    run = subprocess.run([sys.executable, "-m", "rvmdbg", "run", str(prog), "[[1, 2]]",
                          "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert np.allclose(json.loads(run.stdout)["result"]["data"], [[0.2, 0.8, 1.4]])
    bad = tmp_path / "bad.relay"
    bad.write_text(prog.read_text().replace('"P6G0', '"X6G0'))
    for cmd in ("check", "run", "compile", "trace", "graph"):
        out = subprocess.run([sys.executable, "-m", "rvmdbg", cmd, str(bad)],
                             capture_output=True, text=True)
        assert out.returncode == 2, (cmd, out.stderr)
        assert f"{bad}:" in out.stderr and "wrong magic number" in out.stderr
        assert "Traceback" not in out.stderr


# ---- print -> parse ----------------------------------------------------------------------------

_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]


@st.composite
def tensors(draw):
    dtype = draw(st.sampled_from(_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    # any bit pattern, NaNs and signed zeros included: the table must keep every bit
    return draw(hnp.arrays(dtype, shape, elements=hnp.from_dtype(np.dtype(dtype),
                                                                 allow_nan=True)
                           if dtype.startswith("float") else None))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tensors(), min_size=1, max_size=4), st.data())
def test_print_parse_keeps_every_constant_bit_for_bit(arrays, data):
    consts = [Constant(a) for a in arrays]
    # some tensors are used twice, as a model's shared weights are
    picks = consts + [consts[data.draw(st.integers(0, len(consts) - 1))]]
    mod = Module()
    x = Var("x")
    mod.functions["main"] = Function([x], Tuple([x, *picks]))
    mod.functions["g"] = Function([], Call(OpRef("shape_of"), [consts[0]], {"dtype": "int32"}))
    back = parse(print_module(mod), "<printed>")
    assert structural_equal(back, mod)
    fields = back.functions["main"].body.fields[1:]
    for got, want in zip(fields, picks):
        assert got.data.dtype == want.data.dtype and got.data.shape == want.data.shape
        assert got.data.tobytes() == want.data.tobytes()
    # and printing the parsed module again gives the same text
    assert print_module(back) == print_module(mod)


def test_a_primitive_function_holding_metadata_compiles_runs_and_saves():
    # TVM prints fused functions with their constants and virtual devices inside; the kernel
    # source carries its own #[metadata], so it parses when the kernel is built and reloaded
    from rvmdbg.vm import serialize
    from rvmdbg.vm.compiler import compile_module
    from rvmdbg.vm.machine import VirtualMachine
    doc = doc_with([encode_ndarray(np.array([1, 2, 3], "float32"))])
    add_table(doc, "VirtualDevice", VIRTUAL_DEVICE)
    body = ("def @main(%x: Tensor[(3), float32]) {\n"
            "  %0 = fn (%p0: Tensor[(3), float32], Primitive=1, "
            "virtual_device=meta[VirtualDevice][0]) {\n"
            "    add(%p0, meta[relay.Constant][0] /* ty=Tensor[(3), float32] */)\n  };\n"
            "  %0(%x)\n}")
    mod = check_module(load_module(file_with(body, doc), "m.relay"))
    exe = compile_module(mod)
    x = np.array([1, 2, 3], "float32")
    assert VirtualMachine(exe).invoke("main", [x]).tolist() == [2, 4, 6]
    again = serialize.loads(serialize.dumps(exe))
    assert VirtualMachine(again).invoke("main", [x]).tolist() == [2, 4, 6]


def test_json_errors_after_the_tensors_and_non_string_tensors_are_located():
    doc = doc_with([encode_ndarray(np.zeros(5, "float32"))])
    good = json.dumps(doc, indent=2)
    broken = good.replace('"tvm_version": "0.12.0"', '"tvm_version": ]')
    text = file_with(USE0, broken)
    e = error_of(text)
    line = text.split("\n")[e.span.line - 1]
    assert "bad JSON" in e.message and line[e.span.col - 1:].startswith("]")
    doc["b64ndarrays"] = [5]
    text = file_with(USE0, doc)
    e = error_of(text)
    assert "metadata tensor 0: expected a base64 string" in e.message
    assert text.split("\n")[e.span.line - 1].strip() == "5"


def test_an_objects_fields_that_name_other_nodes_survive_a_print_and_a_parse():
    doc = doc_with([encode_ndarray(np.arange(5, dtype="float32"))])
    # the nodes the device's fields name (tables of their own)
    scope = add_table(doc, "Strings", {"type_key": "runtime.String", "repr_str": "global.texture"})
    target = add_table(doc, "Targets", {"type_key": "Target", "attrs": {"kind": "0", "host": "0"}})
    add_table(doc, "VirtualDevice", {"type_key": "VirtualDevice", "attrs": {
        "device_type_int": "2", "memory_scope": str(scope), "target": str(target),
        "virtual_device_id": "1"}})
    body = ('def @main(%x: Tensor[(5,), float32]) {\n'
            '  cast(add(%x, meta[relay.Constant][0]), dtype="int32", dev=meta[VirtualDevice][0])\n}')
    mod = parse(file_with(body, doc), "m.relay")
    printed = print_module(mod)
    back = parse(printed)
    obj = back.functions["main"].body.attrs["dev"]
    assert obj == mod.functions["main"].body.attrs["dev"]
    # the fields still name the string and the target they named
    assert obj.origin[int(obj.attrs["memory_scope"])]["repr_str"] == "global.texture"
    assert obj.origin[int(obj.attrs["target"])]["type_key"] == "Target"
    const = back.functions["main"].body.args[0].args[1]
    assert np.array_equal(const.data, np.arange(5, dtype="float32"))
    assert parse(print_module(back)).functions["main"].body.attrs["dev"] == obj


# ---- a file pasted without its #[metadata] section (issue 28, item 18) ----

NO_SECTION = """#[version = "0.0.5"]
def @main(%data: Tensor[(1, 3, 4, 4), float32]) {
  %0 = nn.conv2d(%data, meta[relay.Constant][0] /* ty=Tensor[(2, 3, 3, 3), float32] */, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]) /* ty=Tensor[(1, 2, 4, 4), float32] */;
  %1 = nn.bias_add(%0, meta[relay.Constant][1] /* ty=Tensor[(2), float32] span=from_string:3:5 */) /* ty=Tensor[(1, 2, 4, 4), float32] */;
  %2 = nn.relu(%1) /* ty=Tensor[(1, 2, 4, 4), float32] */;
  (%2, meta[relay.Constant][1] /* ty=Tensor[(2, 1, 1), float32] */)
}
"""


def test_missing_constants_are_refused_with_a_hint_naming_the_options():
    from rvmdbg.relay.diagnostics import NameResolutionError
    from rvmdbg.relay.loader import load_module
    with pytest.raises(NameResolutionError) as info:
        load_module(NO_SECTION, "bug.relay")
    assert info.value.format().startswith("bug.relay:3:25: error: meta[relay.Constant][0] "
                                          "refers to a #[metadata] section")
    assert "--meta-inputs" in info.value.hint and "--meta-random SEED" in info.value.hint


def test_meta_inputs_make_each_constant_a_parameter_of_its_annotated_type():
    from rvmdbg.relay.diagnostics import ParseError
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.metadata import MissingConstants
    from rvmdbg.relay.typecheck import check_module
    # one index, one type: the second use of constant 1 with another type is refused, located
    with pytest.raises(ParseError) as info:
        load_module(NO_SECTION, "bug.relay", missing_meta=MissingConstants("inputs"))
    assert info.value.span.line == 6 and "annotated Tensor[(2, 1, 1), float32] here" in \
        info.value.message
    mod = check_module(load_module(NO_SECTION.replace("(2, 1, 1)", "(2)"), "bug.relay",
                                   missing_meta=MissingConstants("inputs")))
    params = mod.functions["main"].params
    assert [(p.name, str(p.type_annotation)) for p in params] == [
        ("data", "Tensor[(1, 3, 4, 4), float32]"), ("meta_const_0", "Tensor[(2, 3, 3, 3), float32]"),
        ("meta_const_1", "Tensor[(2,), float32]")]


def test_meta_random_fills_each_constant_from_its_seed():
    from rvmdbg.relay.ast import Constant
    from rvmdbg.relay.ast import children
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.metadata import MissingConstants
    from rvmdbg.relay.typecheck import check_module
    text = NO_SECTION.replace("(2, 1, 1)", "(2)")

    def constants(seed):
        mod = check_module(load_module(text, "bug.relay", missing_meta=MissingConstants("random", seed)))
        found, stack = [], [mod.functions["main"].body]
        while stack:
            e = stack.pop()
            if isinstance(e, Constant) and e.data.ndim:
                found.append(e.data)
            stack.extend(children(e))
        return sorted(found, key=lambda a: a.shape)

    a, b, c = constants(3), constants(3), constants(4)
    assert [x.shape for x in a] == [(2,), (2,), (2, 3, 3, 3)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))  # the same seed, the same values
    assert not np.array_equal(a[2], c[2])
    assert np.array_equal(a[0], a[1])  # one index, one value


def test_a_missing_constant_without_a_type_or_inside_a_primitive_is_refused():
    from rvmdbg.relay.diagnostics import NameResolutionError, ParseError
    from rvmdbg.relay.loader import load_module
    from rvmdbg.relay.metadata import MissingConstants
    bare = '#[version = "0.0.5"]\ndef @main() { meta[relay.Constant][0] }\n'
    with pytest.raises(NameResolutionError, match="no `/\\* ty=... \\*/` after it"):
        load_module(bare, missing_meta=MissingConstants("random", 0))
    prim = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) {\n'
            '  %0 = fn (%p: Tensor[(2), float32], Primitive=1) { add(%p, meta[relay.Constant][0] '
            '/* ty=Tensor[(2), float32] */) };\n  %0(%x)\n}\n')
    with pytest.raises(ParseError, match="inside a primitive function"):
        load_module(prim, missing_meta=MissingConstants("inputs"))
    load_module(prim, missing_meta=MissingConstants("random", 0))  # values can go there
