"""`call_lowered(@f, (args...), metadata={...})`: TVM's LowerTE form of a kernel call.

The corpus holds the programs of TVM's AOT tests that use it (tests/corpus/tvm/aot_lower_main_*);
here: the printed form with its `metadata` map reads, checks and prints back; a Primitive
global called this way is one kernel on the VM; a tuple that is no literal is evaluated once;
every misuse is a located error; a callee TVM lowered to TIR (absent from the file) is named.
"""
from __future__ import annotations

import numpy as np
import pytest
from corpus_run import agree, run_everywhere

from rvmdbg.relay.ast import AttrMap, Call, OpRef
from rvmdbg.relay.diagnostics import RelayError
from rvmdbg.relay.equal import structural_equal
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.printer import print_module
from rvmdbg.relay.typecheck import check_module
from rvmdbg.vm.compiler import compile_module

HEADER = '#[version = "0.0.5"]\n'

# the call as TVM prints it after LowerTE (its metadata map, `__dict__` bare, a list of
# single-quoted names); the callee is defined here as the Relay function it was lowered from
PRINTED = HEADER + """\
def @default_fused_nn_upsampling(%p0: Tensor[(1, 2, 3, 3), float32], Primitive=1) -> Tensor[(1, 2, 6, 6), float32] {
  nn.upsampling(%p0, scale_h=2f, scale_w=2f)
}
def @main(%data: Tensor[(1, 2, 3, 3), float32]) -> Tensor[(1, 2, 6, 6), float32] {
  %0 = (%data,) /* ty=(Tensor[(1, 2, 3, 3), float32],) */;
  call_lowered(@default_fused_nn_upsampling, %0, metadata={"relay_attrs"={__dict__={"Primitive"=1}}, "all_prim_fn_vars"=['default_fused_nn_upsampling']}) /* ty=Tensor[(1, 2, 6, 6), float32] */
}
"""


def _main_call(mod) -> Call:
    body = mod.functions["main"].body
    assert isinstance(body, Call) and isinstance(body.op, OpRef)
    return body


def test_the_printed_form_reads_with_its_metadata_map():
    mod = check_module(load_module(PRINTED, "printed.relay"))
    call = _main_call(mod)
    assert call.op.name == "call_lowered"
    meta = call.attrs["metadata"]
    assert isinstance(meta, AttrMap)
    assert meta["relay_attrs"] == {"__dict__": {"Primitive": 1}}
    assert meta["relay_attrs"].bare == {"__dict__"}
    assert meta["all_prim_fn_vars"] == ["default_fused_nn_upsampling"]
    assert str(call.checked_type) == "Tensor[(1, 2, 6, 6), float32]"


def test_the_printed_form_prints_back_and_reads_again_equal():
    mod = load_module(PRINTED, "printed.relay", prelude=False)
    text = print_module(mod)
    assert '{__dict__={"Primitive"=1}}' in text and "call_lowered(@default_fused" in text
    again = load_module(text, "again.relay", prelude=False)
    assert structural_equal(mod, again)
    assert print_module(again) == text
    # a differing map value makes the modules differ
    other = load_module(text.replace('"Primitive"=1}}', '"Primitive"=0}}'), "o", prelude=False)
    assert not structural_equal(mod, other)


def test_a_primitive_global_called_lowered_is_one_kernel_on_the_vm():
    mod = check_module(load_module(PRINTED, "printed.relay"))
    exe = compile_module(mod)
    main = exe.function("main")
    ops = [type(i).__name__ for i in main.instructions]
    assert ops.count("InvokePacked") == 1 and "Invoke" not in ops
    x = np.arange(18, dtype="float32").reshape(1, 2, 3, 3)
    results = run_everywhere(PRINTED, "printed.relay", args=[x])
    assert set(results) == {"interp", "vm", "graph"}
    want = x.repeat(2, axis=2).repeat(2, axis=3)
    for value in results.values():
        assert agree(value, want)


def test_a_tuple_that_is_no_literal_is_evaluated_once():
    # @pair's tuple passes through call_lowered: projected twice, made once (the VM invokes
    # @pair once, the interpreter counts the same result)
    text = HEADER + """\
def @pair(%x: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32]) {
  (add(%x, 1f), multiply(%x, 2f))
}
def @sub2(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) -> Tensor[(2), float32] {
  subtract(%a, %b)
}
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  call_lowered(@sub2, @pair(%x))
}
"""
    x = np.array([1.0, 5.0], dtype="float32")
    results = run_everywhere(text, "nolit.relay", args=[x])
    for value in results.values():
        assert agree(value, (x + 1) - (x * 2))
    exe = compile_module(check_module(load_module(text, "nolit.relay")))
    main = exe.function("main")
    invokes = [i for i in main.instructions if type(i).__name__ == "Invoke"]
    assert len(invokes) == 2  # @pair once, @sub2 once


BAD = [
    # (the call, a piece of the message)
    ("call_lowered(add, (%x,))", "the callee must be a global function"),
    ("call_lowered(%x, (%x,))", "the callee must be a global function"),
    ("call_lowered(@id, %x)", "the arguments must be a tuple"),
    ("call_lowered(@id, (%x, %x))", "takes 1 argument, the tuple holds 2"),
    ("call_lowered(@id, (1i,))", "type mismatch in argument 1 of @id"),
    ("call_lowered(@id)", "call_lowered takes 2 arguments, 1 given"),
]


@pytest.mark.parametrize("call,message", BAD)
def test_misuses_are_located_errors(call, message):
    text = HEADER + ("def @id(%y: Tensor[(2), float32]) { %y }\n"
                     "def @main(%x: Tensor[(2), float32]) {\n  " + call + "\n}\n")
    with pytest.raises(RelayError) as info:
        check_module(load_module(text, "bad.relay"))
    err = info.value
    assert message in err.message
    assert err.span is not None and err.span.line == 4


def test_a_callee_lowered_to_tir_is_named_with_a_hint():
    text = HEADER + """\
def @main(%data: Tensor[(1, 10, 5, 5), float32]) {
  %0 = (%data,);
  call_lowered(@default_fused_nn_upsampling, %0, metadata={"all_prim_fn_vars"=['default_fused_nn_upsampling']})
}
"""
    with pytest.raises(RelayError) as info:
        load_module(text, "tir.relay")
    err = info.value
    assert "undefined global function @default_fused_nn_upsampling" in err.message
    assert (err.span.line, err.span.col) == (4, 16)
    assert "lowered to TIR" in err.hint


def test_maps_sets_and_single_quoted_strings_as_attribute_values():
    text = HEADER + """\
def @main(%x: Tensor[(2), float32], target={"kind"='llvm', keys={'cpu', 'arm'}, opt={}}) {
  %x
}
"""
    mod = load_module(text, "attrs.relay", prelude=False)
    target = mod.functions["main"].attrs["target"]
    assert target == {"kind": "llvm", "keys": ["cpu", "arm"], "opt": {}}
    again = load_module(print_module(mod), "again.relay", prelude=False)
    assert structural_equal(mod, again)


@pytest.mark.parametrize("value,message", [
    ('{"a"=1 "b"=2}', "`,` or `}` in a map"),
    ('{"a"=1, "a"=2}', "duplicate key a in a map"),
    ('{"a"=1, 2}', "a map entry"),
])
def test_malformed_maps_are_located(value, message):
    text = HEADER + "def @main(%x: Tensor[(2), float32], t=" + value + ") {\n  %x\n}\n"
    with pytest.raises(RelayError) as info:
        load_module(text, "map.relay", prelude=False)
    assert message in info.value.message
    assert info.value.span.line == 2


# device placement as TVM's printer writes it inline (the repr of VirtualDevice and Target),
# object addresses included
INLINE_DEVICES = HEADER + """\
def @main(%data {virtual_device=VirtualDevice(device_type=11, virtual_device_id=0, target=Target(kind='lwc', keys={'x330'}, host=Target(kind='llvm', keys={'cpu'}, attrs={'link-params': (bool)0})))}: Tensor[(1, 2, 3, 3), float32], virtual_device=VirtualDevice(device_type=1, virtual_device_id=0, target=Target(id=1d233c937a0, kind='llvm', keys={'cpu'}, host=Target(id=55e1f2a8b3c0, kind='llvm', keys={'cpu'})))) -> Tensor[(1, 2, 6, 6), float32] {
  nn.upsampling(%data, scale_h=2f, scale_w=2f)
}
"""


def test_objects_written_inline_read_print_back_and_run():
    from rvmdbg.relay.ast import AttrObject
    mod = load_module(INLINE_DEVICES, "inline.relay", prelude=False)
    main = mod.functions["main"]
    device = main.attrs["virtual_device"]
    assert isinstance(device, AttrObject) and device.name == "VirtualDevice"
    target = device.fields["target"]
    assert target.name == "Target" and target.fields["id"] == "1d233c937a0"
    assert target.fields["host"].fields["id"] == "55e1f2a8b3c0"  # not the float 55e1
    assert target.fields["keys"] == ["cpu"]
    host = main.params[0].attrs["virtual_device"].fields["target"].fields["host"]
    assert host.fields["attrs"] == {"link-params": False}
    text = print_module(mod)
    again = load_module(text, "again.relay", prelude=False)
    assert structural_equal(mod, again) and print_module(again) == text
    x = np.ones((1, 2, 3, 3), dtype="float32")
    for value in run_everywhere(INLINE_DEVICES, "inline.relay", args=[x]).values():
        assert agree(value, np.ones((1, 2, 6, 6), dtype="float32"))


def test_an_attribute_named_id_keeps_its_numbers():
    from rvmdbg.relay.lexer import tokenize
    kinds = [t[0] for t in tokenize("f(id=5, id=123456, x=1e5, id=2f)")]
    assert kinds.count("NUM") == 4 and "STR" not in kinds


def test_a_cast_needs_a_number():
    text = HEADER + "def @main(%x: Tensor[(2), float32], t=T(a=(bool)\"x\")) {\n  %x\n}\n"
    with pytest.raises(RelayError) as info:
        load_module(text, "cast.relay", prelude=False)
    assert "a number after the cast `(bool)`" in info.value.message
    assert (info.value.span.line, info.value.span.col) == (2, 49)  # the "x"


def test_a_tir_function_after_the_relay_part_is_named_before_lexing():
    # as TVM's PrettyPrint shows a module after LowerTE: its kernels follow as TIR, whose text
    # (`&&`, buffers) is no Relay
    text = HEADER + """\
def @main(%x: Tensor[(2), float32]) {
  %0 = (%x,);
  call_lowered(@tvmgen_default_fused_add, %0)
}

@tvmgen_default_fused_add = primfn(p0_1: handle, T_add_1: handle) -> ()
  buffers = {p0: Buffer(p0_2: Pointer(float32), float32, [2], []) && x}
"""
    with pytest.raises(RelayError) as info:
        load_module(text, "tir.relay")
    err = info.value
    assert err.message == "@tvmgen_default_fused_add is a TIR function (primfn), which rvmdbg " \
        "does not read"
    assert (err.span.line, err.span.col) == (7, 1)
    assert "before LowerTE" in err.hint
    # the word alone, in a comment, is no definition
    load_module(HEADER + "// a primfn( in a comment\ndef @main() { 1f }\n", "c.relay")


def test_a_polymorphic_or_recursive_callee_is_typed_as_a_direct_call_would_be():
    text = HEADER + """\
def @first[A, B](%p: A, %q: B) -> A { %p }
def @count(%n: int32) {
  if (less(%n, 1)) { %n } else { call_lowered(@count, (subtract(%n, 1),)) }
}
def @main(%x: Tensor[(2), float32]) {
  (call_lowered(@first, (%x, 1i)), @count(3))
}
"""
    mod = check_module(load_module(text, "poly.relay"))
    first = mod.functions["main"].body.fields[0]
    assert [str(t) for t in first.type_args] == ["Tensor[(2,), float32]", "int32"]
    x = np.array([4.0, 5.0], dtype="float32")
    for value in run_everywhere(text, "poly.relay", args=[x], graph=False).values():
        assert agree(value.fields[0], x) and int(value.fields[1]) == 0


def test_a_mismatch_is_reported_at_the_tuples_field():
    text = HEADER + ("def @id(%y: Tensor[(2), float32]) { %y }\n"
                     "def @main(%x: Tensor[(2), float32]) {\n  call_lowered(@id, (1i,))\n}\n")
    with pytest.raises(RelayError) as info:
        check_module(load_module(text, "field.relay"))
    assert (info.value.span.line, info.value.span.col) == (4, 22)  # the `1i`
