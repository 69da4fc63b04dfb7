"""ONNX models as Relay programs: the importer (TVM's `relay.frontend.onnx`, on rvmdbg's Relay).

`import_model(model_or_path, shapes=None, dtypes=None, opset=None, keep_params=False,
max_bytes=...) -> Imported` (`.module` the Relay module, `.node_lines` the node listing shown as
the program's source, `.nodes` node name -> line, `.tensors` ONNX tensor name -> expression);
`OnnxImportError` (located at a node), `MissingOnnx` (the `onnx` package is absent). The
`onnx` package is imported only when a model is opened. Engine layer: never imports Textual.
"""
from rvmdbg.onnx.errors import MissingOnnx, OnnxImportError
from rvmdbg.onnx.importer import DEFAULT_MAX_BYTES, Imported, import_model

__all__ = ["import_model", "Imported", "OnnxImportError", "MissingOnnx", "DEFAULT_MAX_BYTES"]
