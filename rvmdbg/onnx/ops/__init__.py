"""The ONNX converters, one family per module; importing this package registers them all."""
from rvmdbg.onnx.ops import (  # noqa: F401
    control, image, math, misc, nn, reduce, rnn, sequence, tensor)
from rvmdbg.onnx.ops import bitwise, quant, scatter, select, signal, unpool, vision  # noqa: F401
