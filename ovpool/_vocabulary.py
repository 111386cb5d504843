"""The words pooling attributes take, spelled once: auto_pad, rounding, flags, index types.

OpenVINO's words (``explicit``, ``floor``, ...) come from ``ovpool/core/rules.hpp`` through
:mod:`ovpool._rules`, which parses them; this module names the sets the attribute readers,
the OpenVINO bridge and the numpy API check values against.
"""

import numpy as np

from . import _rules

__all__ = ["AUTO_PADS", "IR_AUTO_PADS", "ONNX_AUTO_PADS", "ROUNDING_TYPES", "ONNX_FLAGS",
           "INDEX_TYPES", "INDEX_TYPE_NAMES", "index_dtype"]

# OpenVINO's auto_pad values (rules.hpp's order); IR files may also say "notset" (explicit).
AUTO_PADS = _rules.AUTO_PADS
IR_AUTO_PADS = AUTO_PADS + ("notset",)
# ONNX's auto_pad values (an empty string is NOTSET, as ONNX's readers take it).
ONNX_AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
# OpenVINO's rounding types (floor, ceil, ceil_torch); each op version knows a prefix of them
# (ovpool._opschema).
ROUNDING_TYPES = _rules.ROUNDING_TYPES
# An ONNX flag attribute (ceil_mode, count_include_pad, storage_order) as IR text.
ONNX_FLAGS = ("0", "1")
# OpenVINO's index element types and their numpy dtypes.
INDEX_TYPES = {"i32": np.dtype(np.int32), "i64": np.dtype(np.int64)}
# What the numpy API also takes for them: the numpy names.
INDEX_TYPE_NAMES = {**INDEX_TYPES, **{dtype.name: dtype for dtype in INDEX_TYPES.values()}}


def index_dtype(name):
    """The numpy dtype of an index element type already checked against :data:`INDEX_TYPES`."""
    return INDEX_TYPES[name]
