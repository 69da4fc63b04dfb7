"""Type inference as TVM's solver does it: relations that assign the types of unknown arguments
(a printed relay.testing workload leaves its weights unannotated), and a note where rvmdbg
accepts what TVM refuses."""
import numpy as np
import pytest

from rvmdbg.relay.diagnostics import RelayTypeError
from rvmdbg.relay.interpreter import Interpreter
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.ops.solvers import SOLVERS
from rvmdbg.relay.typecheck import TypeNote, check_module
from rvmdbg.relay.types import TensorType
from rvmdbg.values import values_equal
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.machine import VirtualMachine

HEADER = '#[version = "0.0.5"]\n'

# relay.testing.mlp's network as TVM prints it before InferType (small sizes)
MLP = HEADER + """\
def @main(%data: Tensor[(1, 1, 4, 4), float32], %fc1_weight, %fc1_bias, %fc2_weight, %fc2_bias) {
  %0 = nn.batch_flatten(%data);
  %1 = nn.dense(%0, %fc1_weight, units=8);
  %2 = nn.bias_add(%1, %fc1_bias, axis=-1);
  %3 = nn.relu(%2);
  %4 = nn.dense(%3, %fc2_weight, units=3);
  %5 = nn.bias_add(%4, %fc2_bias, axis=-1);
  nn.softmax(%5)
}
"""


def check(text, filename="t.relay"):
    return check_module(load_module(text, filename))


def test_unannotated_weights_are_typed_by_dense_and_bias_add():
    main = check(MLP).functions["main"]
    types = {p.name: str(p.checked_type) for p in main.params}
    assert types == {"data": "Tensor[(1, 1, 4, 4), float32]",
                     "fc1_weight": "Tensor[(8, 16), float32]", "fc1_bias": "Tensor[(8,), float32]",
                     "fc2_weight": "Tensor[(3, 8), float32]", "fc2_bias": "Tensor[(3,), float32]"}
    assert str(main.checked_type.ret) == "Tensor[(1, 3), float32]"


def test_the_inferred_mlp_runs_alike_on_the_vm_and_the_interpreter():
    mod = check(MLP)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(tuple(p.checked_type.shape)).astype("float32")
            for p in mod.functions["main"].params]
    expected = Interpreter(mod).run("main", args)
    got = VirtualMachine(compile_module(mod)).invoke("main", args)
    assert values_equal(expected, got)


def test_dense_without_units_cannot_type_its_weight_as_in_tvm():
    with pytest.raises(RelayTypeError) as info:
        check(HEADER + "def @main(%x: Tensor[(1, 4), float32], %w) { nn.dense(%x, %w) }",
              "d.relay")
    assert info.value.format().splitlines()[0] == (
        "d.relay:2:40: error: cannot infer the type of %w; add an annotation")


def test_an_assigned_type_must_agree_with_the_other_uses():
    with pytest.raises(RelayTypeError) as info:
        check(HEADER + "def @main(%x: Tensor[(1, 4), float32], %w) {\n"
              "  %0 = nn.dense(%x, %w, units=2);\n  (%0, add(%w, ones(shape=[3, 4])))\n}")
    assert "Tensor[(2, 4), float32]" in info.value.message


@pytest.mark.parametrize("op, known, attrs, want", [
    ("nn.dense", [TensorType((2, 5), "float16"), None], {"units": 7}, {1: "Tensor[(7, 5), float16]"}),
    ("nn.dense", [TensorType((2, 5), "float32"), None], {"units": None}, {}),
    ("nn.bias_add", [TensorType((2, 5, 3), "float32"), None], {"axis": 1},
     {1: "Tensor[(5,), float32]"}),
    ("nn.batch_norm", [TensorType((1, 6, 4, 4), "float32"), None, None, None, None], {"axis": 1},
     {i: "Tensor[(6,), float32]" for i in (1, 2, 3, 4)}),
    ("nn.layer_norm", [TensorType((2, 5), "float32"), None, None], {"axis": -1},
     {1: "Tensor[(5,), float32]", 2: "Tensor[(5,), float32]"}),
    ("nn.conv2d", [TensorType((1, 6, 8, 8), "float32"), None],
     {"channels": 4, "kernel_size": [3, 3], "groups": 2}, {1: "Tensor[(4, 3, 3, 3), float32]"}),
    ("nn.conv2d", [TensorType((1, 8, 8, 6), "float32"), None],
     {"channels": 4, "kernel_size": [3, 1], "data_layout": "NHWC", "kernel_layout": "HWIO"},
     {1: "Tensor[(3, 1, 6, 4), float32]"}),
    ("nn.conv2d", [TensorType((1, 6, 8, 8), "float32"), None], {"channels": None}, {}),
])
def test_what_each_relation_assigns(op, known, attrs, want):
    got = SOLVERS[op](known, attrs)
    assert {i: str(t) for i, t in got.items()} == want


def test_check_notes_a_generalised_signature_tvm_refuses():
    mod = check(HEADER + "def @id(%x) { %x }\ndef @main() -> int32 { @id(1) }\n", "n.relay")
    (note,) = mod.warnings
    assert isinstance(note, TypeNote)
    assert note.format().splitlines()[0] == (
        "n.relay:2:9: note: TVM refuses @id: its type inference is unable to infer a type here "
        "(nothing constrains it); rvmdbg generalises @id to fn [A](A) -> A")


def test_no_note_when_the_signature_is_inferred_from_its_uses():
    mod = check(HEADER + "def @inc(%x) { add(%x, 1) }\ndef @main() -> int32 { @inc(1) }\n")
    assert mod.warnings == []


# relay.testing's convolutional blocks as printed before InferType (small sizes)
CNN = HEADER + """\
def @main(%data: Tensor[(1, 3, 8, 8), float32], %conv0_weight, %bn0_gamma, %bn0_beta, %bn0_moving_mean, %bn0_moving_var, %fc_weight, %fc_bias) {
  %0 = nn.conv2d(%data, %conv0_weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.batch_norm(%0, %bn0_gamma, %bn0_beta, %bn0_moving_mean, %bn0_moving_var, epsilon=2e-05f);
  %2 = nn.relu(%1.0);
  %3 = nn.global_avg_pool2d(%2);
  %4 = nn.batch_flatten(%3);
  %5 = nn.dense(%4, %fc_weight, units=2);
  nn.bias_add(%5, %fc_bias)
}
"""


def test_unannotated_conv_and_batch_norm_parameters_are_typed_and_run_alike():
    mod = check(CNN)
    types = {p.name: str(p.checked_type) for p in mod.functions["main"].params}
    assert types["conv0_weight"] == "Tensor[(4, 3, 3, 3), float32]"
    assert types["bn0_moving_var"] == "Tensor[(4,), float32]"
    assert types["fc_weight"] == "Tensor[(2, 4), float32]"
    rng = np.random.default_rng(1)
    args = [np.abs(rng.standard_normal(tuple(p.checked_type.shape))).astype("float32") + 0.1
            for p in mod.functions["main"].params]
    expected = Interpreter(mod).run("main", args)
    got = VirtualMachine(compile_module(mod)).invoke("main", args)
    assert values_equal(expected, got)


@pytest.mark.parametrize("body", [
    "def @main(%x) -> Tensor[(2), float32] { nn.relu(%x) }",
    "def @main(%x) { let %y: Tensor[(2), float32] = exp(negative(%x)); %y }",
])
def test_an_identity_relation_types_its_input_from_a_known_result_as_in_tvm(body):
    main = check(HEADER + body).functions["main"]
    assert str(main.params[0].checked_type) == "Tensor[(2,), float32]"


def test_a_broadcast_still_needs_both_inputs_as_in_tvm():
    with pytest.raises(RelayTypeError) as info:
        check(HEADER + "def @main(%x, %y: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
              "  add(%x, %y)\n}")
    assert info.value.message == "cannot infer the type of %x; add an annotation"


def test_check_notes_a_type_it_defaults_to_unit_where_tvm_refuses():
    mod = check(HEADER + "def @main() -> int32 {\n  let %x = Nil;\n  1\n}\n", "u.relay")
    (note,) = mod.warnings
    assert note.format().splitlines()[0] == (
        "u.relay:3:7: note: TVM refuses this: its type inference is unable to infer a type for "
        "this expression; rvmdbg takes () for the part nothing constrains")
