"""The ONNX converters, one family per module; importing this package registers them all."""
from rvmdbg.onnx.ops import control, image, math, misc, nn, reduce, tensor  # noqa: F401
from rvmdbg.onnx.ops import bitwise, scatter, select, vision  # noqa: F401
