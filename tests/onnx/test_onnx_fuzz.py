"""The importer on bad input: mutated model bytes and mutated graphs give an OnnxImportError
(or a model that imports), never another exception; unsafe external data is refused."""
import random

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvmdbg.onnx import OnnxImportError, import_model  # noqa: E402
from rvmdbg.relay.diagnostics import RelayError  # noqa: E402


def small_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), "float32"), "w")
    shape = numpy_helper.from_array(np.array([1, -1], "int64"), "shape")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Reshape", ["r", "shape"], ["f"]),
             helper.make_node("Softmax", ["f"], ["y"], axis=1)]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w, shape]),
                             opset_imports=[helper.make_opsetid("", 13)])


def _imports_or_refuses(data):
    try:
        import_model(data)
    except RelayError as e:  # OnnxImportError, or a type error located in the listing
        assert e.format()


def test_mutated_model_bytes_are_refused_with_a_message():
    rng = random.Random(26)
    good = bytearray(small_model().SerializeToString())
    for _ in range(150):
        data = bytearray(good)
        for _k in range(rng.randint(1, 6)):
            i = rng.randrange(len(data))
            data[i] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[: rng.randrange(len(data))]
        _imports_or_refuses(bytes(data))


def test_mutated_graphs_are_refused_with_a_message():
    rng = random.Random(7)
    ops = ["Relu", "Conv", "Reshape", "Softmax", "Add", "Gemm", "Transpose", "NoSuchOp"]
    for _ in range(60):
        m = small_model()
        node = m.graph.node[rng.randrange(len(m.graph.node))]
        choice = rng.randrange(4)
        if choice == 0:
            node.op_type = rng.choice(ops)
        elif choice == 1 and node.input:
            node.input[rng.randrange(len(node.input))] = rng.choice(["x", "w", "nope", ""])
        elif choice == 2:
            node.attribute.append(helper.make_attribute("axis", rng.randint(-9, 9)))
        else:
            del m.graph.input[0].type.tensor_type.shape.dim[rng.randrange(4):]
        _imports_or_refuses(m.SerializeToString())


def test_external_data_leaving_the_models_folder_is_refused(tmp_path):
    m = small_model()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    del w.float_data[:]
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="../outside.bin")
    (tmp_path / "outside.bin").write_bytes(np.ones(54, "float32").tobytes())
    d = tmp_path / "model"
    d.mkdir()
    path = d / "m.onnx"
    path.write_bytes(m.SerializeToString())
    with pytest.raises(OnnxImportError, match="leaves the model's folder"):
        import_model(str(path))
    w.external_data[0].value = "w.bin"
    (d / "w.bin").symlink_to(tmp_path / "outside.bin")
    path.write_bytes(m.SerializeToString())
    with pytest.raises(OnnxImportError, match="leaves the model's folder"):
        import_model(str(path))
    (d / "w.bin").unlink()
    (d / "w.bin").write_bytes(np.ones(54, "float32").tobytes())
    imp = import_model(str(path), shapes={"x": [1, 2, 4, 4]})
    assert imp.module.functions["main"] is not None


def test_an_initializer_over_max_bytes_is_refused():
    with pytest.raises(OnnxImportError, match="more than --max-bytes"):
        import_model(small_model(), max_bytes=100)


def test_an_input_without_shape_asks_for_one():
    m = small_model()
    m.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(OnnxImportError) as e:
        import_model(m)
    assert "--shape x=" in e.value.format()
