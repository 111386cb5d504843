"""IR element type names (``f32``, ``FP32``, ...) and the numpy dtypes that hold them."""

import numpy as np

from ..errors import UnsupportedError

__all__ = ["SUPPORTED", "dtype_for", "element_type_of", "precision_to_element_type"]


def _bfloat16():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


_DTYPES = {
    "f64": np.dtype(np.float64),
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "i64": np.dtype(np.int64),
    "i32": np.dtype(np.int32),
    "i16": np.dtype(np.int16),
    "i8": np.dtype(np.int8),
    "u64": np.dtype(np.uint64),
    "u32": np.dtype(np.uint32),
    "u16": np.dtype(np.uint16),
    "u8": np.dtype(np.uint8),
    "boolean": np.dtype(np.bool_),
}
_BF16 = _bfloat16()
if _BF16 is not None:
    _DTYPES["bf16"] = _BF16

SUPPORTED = tuple(_DTYPES)

# Port `precision` attributes use the legacy spelling; map them onto element type names.
_PRECISIONS = {
    "FP64": "f64", "FP32": "f32", "FP16": "f16", "BF16": "bf16",
    "I64": "i64", "I32": "i32", "I16": "i16", "I8": "i8",
    "U64": "u64", "U32": "u32", "U16": "u16", "U8": "u8", "BOOL": "boolean",
}

_NAMES = {dtype: name for name, dtype in _DTYPES.items()}


def dtype_for(element_type):
    """The numpy dtype of an IR element type name; UnsupportedError for packed or exotic types."""
    dtype = _DTYPES.get(element_type)
    if dtype is not None:
        return dtype
    if element_type == "bf16":
        raise UnsupportedError("element type 'bf16' needs the ml_dtypes package (pip install ml_dtypes)")
    raise UnsupportedError(
        f"element type {element_type!r} is not supported; supported: {', '.join(SUPPORTED)}"
    )


def element_type_of(dtype):
    """The IR element type name of a numpy dtype (``None`` if the IR has no such type)."""
    return _NAMES.get(np.dtype(dtype))


def precision_to_element_type(precision):
    """``FP32`` -> ``f32``; unknown precisions are returned lower-cased, for error messages."""
    return _PRECISIONS.get(precision.upper(), precision.lower())
