"""The ONNX converters, one family per module; importing this package registers them all."""
from rvmdbg.onnx.ops import math, nn, tensor  # noqa: F401
