"""The ONNX converters, one family per module; importing this package registers them all."""
from rvmdbg.onnx.ops import control, image, math, misc, nn, reduce, rnn, tensor  # noqa: F401
