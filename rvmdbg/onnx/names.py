"""Names and dtypes shared by the importer and the converters: Relay's dtypes, the dtype of an
ONNX element type, a Relay name for an ONNX tensor name, and the lazy `onnx` import."""
from __future__ import annotations

import re

import numpy as np

from rvmdbg.onnx.errors import MissingOnnx

# the dtypes a Relay tensor can have (ONNX's others: strings, bfloat16, float8, int4, ...)
RELAY_DTYPES = frozenset({
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64"})
_NAME_OK = re.compile(r"[A-Za-z_][A-Za-z0-9_/]*")


def _onnx():
    try:
        import onnx
    except ImportError:
        raise MissingOnnx() from None
    return onnx


def legal_name(name: str) -> str:
    """A Relay local name for an ONNX tensor name (kept when already legal)."""
    if _NAME_OK.fullmatch(name or ""):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_/]", "_", name or "")
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "v" + cleaned
    return cleaned


def dtype_name(elem_type: int) -> str | None:
    """The NumPy/Relay dtype of an ONNX element type, or None when Relay has none for it."""
    onnx = _onnx()
    try:
        dt = str(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)))
    except Exception:
        return None
    return dt if dt in RELAY_DTYPES else None
