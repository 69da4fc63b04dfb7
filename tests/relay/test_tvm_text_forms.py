"""Forms TVM's printer writes and its parser reads: type and span comments, primitive functions
with dotted and codegen attributes, attributes on calls of functions, a file that is one
expression, the `i` suffix, float literals out of range, a global defined twice. The texts are
written the way TVM 0.18's `mod.astext()` lays them out."""
import pytest

from rvmdbg.relay.ast import Call, Function, Let
from rvmdbg.relay.diagnostics import LexError, ParseError
from rvmdbg.relay.equal import structural_equal
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.parser import parse
from rvmdbg.relay.printer import print_module
from rvmdbg.relay.typecheck import check_module

HEADER = '#[version = "0.0.5"]\n'

# the layout of TVM's printer with types and spans annotated (`print(mod)` after a frontend)
ANNOTATED = HEADER + """\
def @main(%data: Tensor[(1, 4), float32] /* ty=Tensor[(1, 4), float32] span=from_string:2:11 */) -> Tensor[(2, 2), float32] {
  %0 = fn (%p0: Tensor[(1, 4), float32] /* ty=Tensor[(1, 4), float32] */, Primitive=1, relay.reshape_only=1) -> Tensor[(2, 2), float32] {
    reshape(%p0, newshape=[2, 2]) /* ty=Tensor[(2, 2), float32] span=aten::reshape_0:0:0 */
  } /* ty=fn (Tensor[(1, 4), float32]) -> Tensor[(2, 2), float32] */;
  %1 = fn (%p01: Tensor[(2, 2), float32] /* ty=Tensor[(2, 2), float32] */, Primitive=1, Compiler="ccompiler", global_symbol="tvmgen_default_ccompiler_main_0", Inline=1) -> Tensor[(2, 2), float32] {
    %2 = exp(%p01 /* ty=Tensor[(2, 2), float32] */) /* ty=Tensor[(2, 2), float32] */;
    add(%2, 1f /* ty=float32 */) /* ty=Tensor[(2, 2), float32] */
  } /* ty=fn (Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] */;
  %3 = %0(%data) /* ty=Tensor[(2, 2), float32] */;
  %1(%3) /* ty=Tensor[(2, 2), float32] */
}
"""


def test_type_and_span_comments_anywhere_tvm_puts_them():
    mod = check_module(parse(ANNOTATED, "m.relay"))
    body = mod.functions["main"].body
    assert isinstance(body, Call) and isinstance(body.op, Function)
    assert str(body.checked_type) == "Tensor[(2, 2), float32]"


def test_from_string_comments_and_comments_inside_types_and_tuples():
    text = HEADER + """/* from_string */
def @main(%x: Tensor[(2 /* rows */, 2), float32] /* ty=Tensor[(2, 2), float32] */) /* ret */ -> (Tensor[(2, 2), float32], /* second */ int32) {
  (%x /* ty=Tensor[(2, 2), float32] */, 1 /* ty=int32 */) /* ty=(Tensor[(2, 2), float32], int32) */
} /* from_string */
"""
    mod = check_module(parse(text))
    assert str(mod.functions["main"].checked_type.ret) == "(Tensor[(2, 2), float32], int32)"


def test_primitive_attributes_parse_and_print_back():
    mod = parse(ANNOTATED)
    outer = mod.functions["main"].body
    assert outer.op.attrs == {"Primitive": 1, "Compiler": "ccompiler",
                              "global_symbol": "tvmgen_default_ccompiler_main_0", "Inline": 1}
    assert outer.args[0].op.attrs == {"Primitive": 1, "relay.reshape_only": 1}
    text = print_module(mod)
    assert "relay.reshape_only=1" in text and 'Compiler="ccompiler"' in text
    assert structural_equal(parse(text), mod)


def test_dotted_attribute_keys_on_operator_calls():
    mod = parse(HEADER + 'def @main(%x: Tensor[(2), float32]) { nn.relu(%x, a.b.c=2) }')
    assert mod.functions["main"].body.attrs == {"a.b.c": 2}


def test_a_dotted_key_must_end_in_a_name():
    with pytest.raises(ParseError) as info:
        parse(HEADER + "def @main(%x: int32, relay.=1) { %x }", "k.relay")
    assert info.value.format().splitlines()[0].startswith("k.relay:2:22: error: expected")


def test_non_operator_call_attributes_with_their_type_key():
    text = (HEADER + 'def @f(%x: int32) -> int32 { %x }\n'
            'def @main() -> int32 { @f(1, relay.k=2, attrs_type_key="DictAttrs") }\n')
    mod = parse(text)
    assert mod.functions["main"].body.attrs == {"relay.k": 2, "attrs_type_key": "DictAttrs"}
    assert structural_equal(parse(print_module(mod)), mod)


def test_non_operator_call_attributes_without_type_key_are_refused_located():
    with pytest.raises(ParseError) as info:
        parse(HEADER + "def @f(%x: int32) { %x }\ndef @main() { @f(1, k=2) }", "c.relay")
    lines = info.value.format().splitlines()
    assert lines[0] == ("c.relay:3:21: error: unable to determine the 'attrs_type_key' with "
                        "which to represent the call attributes")


def test_a_file_that_is_a_bare_function_is_main():
    mod = load_module(HEADER + "fn (%x: int32) -> int32 { %x + 1 }\n", "e.relay")
    main = mod.functions["main"]
    assert [p.name for p in main.params] == ["x"]
    check_module(mod)


def test_a_file_that_is_an_expression_with_free_vars_takes_them_as_parameters():
    mod = load_module(HEADER + "free_var %a: int32;\nfree_var %b: int32;\n%a * %b\n", "e.relay")
    main = mod.functions["main"]
    assert [p.name for p in main.params] == ["a", "b"]
    assert str(check_module(mod).functions["main"].checked_type) == "fn (int32, int32) -> int32"


def test_the_i_suffix_is_int32():
    mod = parse(HEADER + "def @main() { -42i }")
    c = mod.functions["main"].body
    assert c.data.dtype.name == "int32" and int(c.data) == -42


@pytest.mark.parametrize("literal, width", [("1e39f", "32"), ("70000f16", "16"),
                                            ("-1e39f32", "32")])
def test_a_float_literal_out_of_its_dtype_range_is_refused_located(literal, width):
    with pytest.raises(LexError) as info:
        parse(HEADER + f"def @main() {{\n  {literal}\n}}", "f.relay")
    assert info.value.format().splitlines()[0] == (
        f"f.relay:3:3: error: floating point number `{literal}` unrepresentable in width {width}")


def test_a_global_defined_twice_keeps_the_last_with_a_warning():
    mod = load_module(HEADER + "def @f() -> int32 { 1 }\ndef @f() -> int32 { 2 }\n"
                      "def @main() -> int32 { @f() }\n", "w.relay")
    assert int(mod.functions["f"].body.data) == 2
    assert [w.format().splitlines()[0] for w in mod.warnings] == [
        "w.relay:3:5: warning: @f is defined twice: this definition replaces the one at "
        "line 2, as in TVM"]


def test_let_bound_primitive_parses_as_a_let():
    mod = parse(HEADER + """def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %f = fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] { negative(%p0) };
  %f(%x)
}""")
    body = mod.functions["main"].body
    assert isinstance(body, Let) and body.value.is_primitive


# TVM's printer writes a parameter placed on a device as `%x {virtual_device=...}: t` (its
# AllocVar), and its parser reads that on `def` and `fn` parameters (test_pass_plan_devices.py
# is written so); the devices are metadata objects
VIRTUAL_DEVICES = """
#[metadata]
{"root": 1, "nodes": [{"type_key": ""},
  {"type_key": "Map", "keys": ["VirtualDevice"], "data": [2]},
  {"type_key": "Array", "data": [3, 5]},
  {"type_key": "VirtualDevice", "attrs": {"device_type_int": "1", "memory_scope": "4",
   "target": "0", "virtual_device_id": "0"}},
  {"type_key": "runtime.String", "repr_str": ""},
  {"type_key": "VirtualDevice", "attrs": {"device_type_int": "1", "memory_scope": "4",
   "target": "0", "virtual_device_id": "0"}}],
 "b64ndarrays": [], "attrs": {"tvm_version": "0.12.0"}}
"""
PLACED = HEADER + """\
def @main(%a {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32], %b {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32],
          virtual_device=meta[VirtualDevice][1]) {
  %0 = fn (%x {virtual_device=meta[VirtualDevice][0]}, %y {virtual_device=meta[VirtualDevice][0]},
           virtual_device=meta[VirtualDevice][1], Primitive=1) {
    add(%x, %y)
  };
  %1 = %0(%a, %b);
  on_device(%1, virtual_device=meta[VirtualDevice][1], constrain_result=True)
}
""" + VIRTUAL_DEVICES


def test_parameters_placed_on_a_device_parse_check_and_print_back():
    mod = load_module(PLACED, "placed.relay")
    main = mod.functions["main"]
    assert [p.attrs["virtual_device"].key for p in main.params] == ["VirtualDevice"] * 2
    checked = check_module(mod)
    assert str(checked.functions["main"].checked_type.ret) == "Tensor[(5, 7), float32]"
    text = print_module(mod)
    assert "def @main(%a {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32]," in text
    assert "fn (%x {virtual_device=meta[VirtualDevice][0]}, %y {virtual_device=" in text
    again = load_module(text, "again.relay")
    assert structural_equal(again.functions["main"], main)
    assert [p.attrs for p in again.functions["main"].params] == [p.attrs for p in main.params]


def test_parameter_attributes_are_located_when_malformed():
    with pytest.raises(ParseError, match=r"2:15: error: expected an attribute"):
        parse(HEADER + "def @main(%a {7}: int32) { %a }", "bad.relay")


def test_an_unknown_dimension_in_a_shape_attribute_reads_as_none():
    # ManifestAlloc's alloc_tensor for a `?` output: TVM prints `assert_shape=[?, 4]`
    mod = parse(HEADER + """def @main(%s: Storage[], %shape: Tensor[(2), int64]) {
  memory.alloc_tensor(%s, 0i64, %shape, dtype="float32", assert_shape=[?, 4])
}""")
    call = mod.functions["main"].body
    assert call.attrs["assert_shape"] == [None, 4]
    checked = check_module(mod)
    assert str(checked.functions["main"].body.checked_type) == "Tensor[(?, 4), float32]"


# ---- a file without a version header, and TVM 0.6's `v0.0.4` (issue 28, item 17) ----

def _notes(mod):
    return [w for w in mod.warnings if w.kind == "note"]


def test_an_expression_file_without_a_header_reads_with_a_note():
    # what print(func) writes for a fn (docs/arch/convert_layout.rst in TVM v0.14.0 shows one)
    text = "fn (%x: Tensor[(2), float32]) {\n  nn.relu(%x)\n}\n"
    mod = check_module(load_module(text, "f.relay"))
    assert str(mod.functions["main"].checked_type) == "fn (Tensor[(2,), float32]) -> " \
        "Tensor[(2,), float32]"
    [note] = _notes(mod)
    shown = note.format()
    assert shown.splitlines()[0] == "f.relay:1:1: note: no version header: the file is read " \
        "as one expression, as TVM's parse_expr reads it"
    assert '#[version = "0.0.5"]' in shown
    free = load_module("free_var %x: int32;\nadd(%x, 1)\n", "g.relay")
    assert [p.name for p in free.functions["main"].params] == ["x"] and len(_notes(free)) == 1


def test_definitions_without_a_header_are_still_refused_as_tvms_module_parser_does():
    with pytest.raises(ParseError, match="missing version header"):
        parse("def @main() { 1 }", "m.relay")
    assert _notes(parse(HEADER + "fn () { 1 }")) == []


def test_tvm_06_header_reads_with_a_note_and_keeps_its_columns():
    text = "v0.0.4\ndef @main(%x: int32) -> (int32) {\n  add(%x, 1)\n}\n"
    mod = check_module(load_module(text, "old.relay"))
    # text format 0.0.4's grammar reads `(T)` as T in parentheses, 0.0.5's as a 1-tuple
    assert str(mod.functions["main"].checked_type) == "fn (int32) -> int32"
    [note] = _notes(mod)
    assert note.format().splitlines()[0] == "old.relay:1:1: note: text format v0.0.4 (TVM 0.6) " \
        "read as 0.0.5: the syntax they share reads the same"
    with pytest.raises(ParseError) as info:
        parse("v0.0.4\ndef @main() { 1 +* 2 }", "old.relay")
    assert info.value.span.line == 2  # positions are the file's own
    assert str(check_module(parse(HEADER + "def @main(%x: int32) -> (int32) { (%x,) }"))
               .functions["main"].checked_type) == "fn (int32) -> (int32,)"


# ---- vector dtypes (issue 28, item 22) ----

VECTORS = HEADER + """\
def @main(%x: Tensor[(2, 3), int8x4], %m: uint1x4, %h: Tensor[(4), float16x4]) -> (Tensor[(2, 3), int8x4], uint1x4) {
  (%x, %m)
}
"""


def test_vector_dtypes_parse_print_and_check_where_no_operator_meets_them():
    from rvmdbg.relay.types import TensorType, dtype_bytes, is_vector_dtype
    mod = check_module(parse(VECTORS, "v.relay"))
    params = mod.functions["main"].params
    assert [p.type_annotation for p in params] == [
        TensorType((2, 3), "int8x4"), TensorType((), "uint1x4"), TensorType((4,), "float16x4")]
    text = print_module(mod)
    assert "Tensor[(2, 3), int8x4]" in text and "%m: uint1x4" in text
    assert structural_equal(parse(text), mod)
    assert [is_vector_dtype(d) for d in ("int8x4", "uint1x4", "float16x4", "int8", "int8x1",
                                         "x4", "boolx4")] == [True] * 3 + [False] * 4
    assert [dtype_bytes(d) for d in ("int8x4", "uint1x4", "float16x4", "float32")] == [4, 1, 8, 4]


def test_an_operator_refuses_a_vector_dtype_located():
    from rvmdbg.relay.diagnostics import RelayTypeError
    text = HEADER + "def @main(%x: Tensor[(2), int8x4]) {\n  nn.relu(%x)\n}\n"
    with pytest.raises(RelayTypeError) as info:
        check_module(parse(text, "v.relay"))
    lines = info.value.format().splitlines()
    assert lines[0] == "v.relay:3:3: error: argument 1 of operator `nn.relu` has the vector " \
        "dtype int8x4, which no operator kernel here takes"
    assert lines[2].strip().startswith("^") and "int8" in info.value.hint
    with pytest.raises(RelayTypeError, match="vector dtype float16x4"):
        check_module(parse(HEADER + "def @main(%a: float16, %b: float16x4) { (%a, %b).1 + %a }"))


def test_a_vector_argument_is_a_usage_error_not_a_crash():
    from rvmdbg.args import ArgumentError, parse_program_args
    mod = check_module(load_module(VECTORS, "v.relay"))
    with pytest.raises(ArgumentError, match="vector dtype int8x4, which no value here can hold"):
        parse_program_args(mod, "main", ["[[1, 2, 3], [4, 5, 6]]", "True", "[1, 2, 3, 4]"])


# ---- attribute objects of the metadata section (issue 28, item 19) ----

# TVM 0.8 printed a call's attributes as `meta[relay.attrs.X][i]` when their type was not the
# operator's; the section lists every field of the class (include/tvm/relay/attrs/nn.h and
# transform.h at v0.8.0): plain fields as text, Integer/Array/String fields as node indices
ATTRS_SECTION = """
#[metadata]
{
  "root": 1,
  "nodes": [
    {"type_key": ""},
    {"type_key": "Map", "keys": ["relay.attrs.BatchMatmulAttrs", "relay.attrs.ReshapeAttrs", "relay.Constant"], "data": [2, 5, 12]},
    {"type_key": "Array", "data": [3]},
    {"type_key": "relay.attrs.BatchMatmulAttrs", "attrs": {"auto_scheduler_rewritten_layout": "4", "out_dtype": "", "transpose_a": "0", "transpose_b": "1"}},
    {"type_key": "runtime.String"},
    {"type_key": "Array", "data": [6]},
    {"type_key": "relay.attrs.ReshapeAttrs", "attrs": {"allowzero": "0", "newshape": "7"}},
    {"type_key": "Array", "data": [8, 9, 13]},
    {"type_key": "IntImm", "attrs": {"dtype": "int32", "span": "0", "value": "2"}},
    {"type_key": "IntImm", "attrs": {"dtype": "int32", "span": "0", "value": "-1"}},
    {"type_key": "relay.Constant", "attrs": {"_checked_type_": "0", "data": "0", "span": "0", "virtual_device_": "0"}},
    {"type_key": "runtime.String"},
    {"type_key": "Array", "data": [10]},
    {"type_key": "IntImm", "attrs": {"dtype": "int32", "span": "0", "value": "5"}}
  ],
  "b64ndarrays": [%s],
  "attrs": {"tvm_version": "0.8.0"}
}
"""


def _attrs_program(body: str, params: str) -> str:
    from rvmdbg.relay.metadata import encode_ndarray
    import numpy as np
    section = ATTRS_SECTION % f'"{encode_ndarray(np.ones((2, 5, 4), np.float32))}"'
    return HEADER + f"def @main({params}) {{\n  {body}\n}}\n" + section


def test_an_attrs_object_closing_a_call_is_its_attributes():
    import numpy as np
    from rvmdbg.relay.interpreter import Interpreter
    params = "%x: Tensor[(2, 3, 4), float32], %y: Tensor[(2, 5, 4), float32]"
    text = _attrs_program("nn.batch_matmul(%x, %y, meta[relay.attrs.BatchMatmulAttrs][0])",
                          params)
    mod = check_module(parse(text, "bmm.relay"))
    call = mod.functions["main"].body
    assert (call.attrs["transpose_a"], call.attrs["transpose_b"], call.attrs["out_dtype"]) == \
        (False, True, None)
    inline = check_module(parse(HEADER + f"def @main({params}) {{ nn.batch_matmul(%x, %y, "
                                          "transpose_b=True) }"))
    assert structural_equal(mod, inline)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.ones((2, 5, 4), np.float32)
    assert np.array_equal(Interpreter(mod).run("main", [x, y]), x @ y.transpose(0, 2, 1))


def test_attrs_objects_with_array_fields_and_constants_as_last_arguments():
    text = _attrs_program("%0 = reshape(%x, meta[relay.attrs.ReshapeAttrs][0]);\n"
                          "  nn.batch_matmul(%0, meta[relay.Constant][0])",
                          "%x: Tensor[(6, 5), float32]")
    mod = check_module(parse(text))
    inner = mod.functions["main"].body.args[0]
    assert inner.attrs["newshape"] == [2, -1, 5] and inner.attrs["allowzero"] is False
    assert str(mod.functions["main"].checked_type.ret) == "Tensor[(2, 3, 4), float32]"
    # a tensor constant closing the list is an argument, as in TVM's parser
    assert len(mod.functions["main"].body.args) == 2
    # an attrs object where a value is needed is refused, located
    from rvmdbg.relay.metadata import MetadataError
    with pytest.raises(MetadataError, match="not an expression"):
        parse(_attrs_program("add(meta[relay.attrs.ReshapeAttrs][0], %x)", "%x: float32"))
