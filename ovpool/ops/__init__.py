"""The ops ovpool executes, keyed by (type, opset) as they appear in IR files.

Adding an op: write one function ``f(layer) -> Op`` (see :mod:`ovpool.ops._base`) in the
module of its family and list it here. The pooling ops' versions are listed once, in
:mod:`ovpool._opschema`; a new version there runs with its op's builder.
"""

import dataclasses

from .._opschema import OPENVINO_OPS, OVPOOL_OPSET
from .._opschema import OVPOOL_ONLY as _OVPOOL_ONLY_VERSIONS
from . import elementwise, graph, onnx_pooling, pooling, reduce, shape
from ._base import Op, Spec

__all__ = ["REGISTRY", "OVPOOL_OPSET", "OVPOOL_ONLY", "Op", "Spec", "lookup", "supported_versions"]

REGISTRY = {
    ("Parameter", 1): graph.parameter,
    ("Const", 1): graph.const,
    ("Result", 1): graph.result,
    **{key: pooling.BUILDERS[key[0]] for key in OPENVINO_OPS},
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
# ovpool.openvino): OVPOOL_OPSET maps the ops standing for a native op to the native version
# whose attributes and semantics they carry; OVPOOL_ONLY has the Onnx* ops, which carry ONNX's.
OVPOOL_ONLY = {name: onnx_pooling.BUILDERS[name] for name in _OVPOOL_ONLY_VERSIONS}


def lookup(layer):
    """The implementation for a layer, or None when ovpool does not run it."""
    if layer.version == "ovpool":
        if layer.type in OVPOOL_OPSET:
            native = dataclasses.replace(layer, version=f"opset{OVPOOL_OPSET[layer.type]}")
            return lambda _layer: REGISTRY[(layer.type, native.opset)](native)
        return OVPOOL_ONLY.get(layer.type)
    return REGISTRY.get((layer.type, layer.opset))
