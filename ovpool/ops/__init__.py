"""The ops ovpool executes, keyed by (type, opset) as they appear in IR files.

Adding an op: write one function ``f(layer) -> Op`` (see :mod:`ovpool.ops._base`) in the
module of its family and list it here.
"""

import dataclasses

from . import elementwise, graph, onnx_pooling, pooling, reduce, shape
from ._base import Op, Spec

__all__ = ["REGISTRY", "OVPOOL_OPSET", "OVPOOL_ONLY", "Op", "Spec", "lookup", "supported_versions"]

REGISTRY = {
    ("Parameter", 1): graph.parameter,
    ("Const", 1): graph.const,
    ("Result", 1): graph.result,
    ("AvgPool", 1): pooling.avg_pool,
    ("AvgPool", 14): pooling.avg_pool,
    ("AvgPool", 16): pooling.avg_pool,
    ("MaxPool", 1): pooling.max_pool,
    ("MaxPool", 8): pooling.max_pool,
    ("MaxPool", 14): pooling.max_pool,
    ("AdaptiveAvgPool", 8): pooling.adaptive_avg_pool,
    ("AdaptiveMaxPool", 8): pooling.adaptive_max_pool,
    ("Convert", 1): elementwise.convert,
    ("ConvertLike", 1): elementwise.convert_like,
    ("Abs", 1): elementwise.abs_,
    ("Sqrt", 1): elementwise.sqrt,
    ("Add", 1): elementwise.add,
    ("Subtract", 1): elementwise.subtract,
    ("Multiply", 1): elementwise.multiply,
    ("Divide", 1): elementwise.divide,
    ("Power", 1): elementwise.power,
    ("Maximum", 1): elementwise.maximum,
    ("Minimum", 1): elementwise.minimum,
    ("ReduceMean", 1): reduce.reduce_mean,
    ("ReduceMax", 1): reduce.reduce_max,
    ("ReduceMin", 1): reduce.reduce_min,
    ("ReduceSum", 1): reduce.reduce_sum,
    ("Transpose", 1): shape.transpose,
    ("Reshape", 1): shape.reshape,
    ("Squeeze", 1): shape.squeeze,
    ("Squeeze", 15): shape.squeeze,
    ("Unsqueeze", 1): shape.unsqueeze,
    ("Concat", 1): shape.concat,
    ("ShapeOf", 1): shape.shape_of,
    ("ShapeOf", 3): shape.shape_of,
}


def supported_versions(op_type):
    """The opset versions ovpool implements for ``op_type`` (empty if none)."""
    return sorted(opset for name, opset in REGISTRY if name == op_type)


# The "ovpool" opset (layers with version="ovpool"), which the OpenVINO bridge writes (see
# ovpool.openvino). AvgPool, MaxPool, AdaptiveAvgPool and AdaptiveMaxPool carry the attributes
# and semantics of the newest native version of their op; the Onnx* ops carry ONNX's.
OVPOOL_OPSET = {"AvgPool": 16, "MaxPool": 14, "AdaptiveAvgPool": 8, "AdaptiveMaxPool": 8}
OVPOOL_ONLY = {"OnnxAveragePool": onnx_pooling.average_pool,
               "OnnxMaxPool": onnx_pooling.max_pool}


def lookup(layer):
    """The implementation for a layer, or None when ovpool does not run it."""
    if layer.version == "ovpool":
        if layer.type in OVPOOL_OPSET:
            native = dataclasses.replace(layer, version=f"opset{OVPOOL_OPSET[layer.type]}")
            return lambda _layer: REGISTRY[(layer.type, native.opset)](native)
        return OVPOOL_ONLY.get(layer.type)
    return REGISTRY.get((layer.type, layer.opset))
