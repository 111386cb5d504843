"""OnnxAveragePool and OnnxMaxPool: ONNX's pooling semantics as layers of the "ovpool" opset.

OpenVINO's own ops cannot express everything an ONNX AveragePool or MaxPool means (the
count_include_pad divisor of windows hanging past the padding, storage_order indices, SAME
padding with ceil_mode; see docs/semantics.md), so OpenVINO's ONNX frontend approximates them.
These two layer types carry the ONNX node's attributes verbatim (names, spelling and defaults
of the operator spec) and run :mod:`ovpool.onnx`; :mod:`ovpool.openvino` writes them when it
converts ONNX models and runs them inside OpenVINO.

IR form (``version="ovpool"``)::

    <layer type="OnnxAveragePool" version="ovpool">
        <data kernel_shape="3,3" strides="2,2" pads="1,1,1,1" auto_pad="NOTSET"
              ceil_mode="1" count_include_pad="1"/>     dilations optional
    <layer type="OnnxMaxPool" version="ovpool">     two outputs: values, int64 indices
        <data kernel_shape="2,2" storage_order="1" .../>

The rules are those of the newest version of each operator (AveragePool-22, MaxPool-22): every
older version is a special case of them, with the same windows for the same attributes.
"""

import numpy as np

from .. import onnx
from .._opschema import ONNX_OPSET, version
from .._shapes import output_shape_with_unknowns
from ._base import Op, Spec
from .pooling import _check_rank



def _onnx_attributes(layer):
    """The layer's ONNX attributes (:mod:`ovpool._opschema`), as :mod:`ovpool.onnx` takes them."""
    return version(layer.type, "ovpool").read(layer.attributes)


def _output_shape(operator, shape, attributes):
    if shape is None:
        return None
    _check_rank(shape)
    window_attributes = {k: v for k, v in attributes.items()
                         if k not in ("count_include_pad", "storage_order")}
    version = onnx.op_version(operator, ONNX_OPSET)

    def output_shape(known):
        windows = onnx.resolve_windows(version, known, **window_attributes)
        return tuple(known[:2]) + tuple(w.output for w in windows)

    return output_shape_with_unknowns(shape, output_shape, attributes["kernel_shape"],
                                      attributes["dilations"])


def _check_dtype(operator, dtype):
    onnx.check_dtype(onnx.op_version(operator, ONNX_OPSET), ONNX_OPSET, dtype)


def average_pool(layer):
    """OnnxAveragePool: ONNX AveragePool (count_include_pad, ceil_mode, dilations, ...)."""
    attributes = _onnx_attributes(layer)

    def infer(data):
        _check_dtype("AveragePool", data.dtype)
        return [Spec(_output_shape("AveragePool", data.shape, attributes), data.dtype)]

    def run(x, out=None):
        return (onnx.average_pool(x, opset=ONNX_OPSET, out=out, **attributes),)

    return Op(infer, run)


def max_pool(layer):
    """OnnxMaxPool: ONNX MaxPool with its Indices output (int64, storage_order honoured)."""
    attributes = _onnx_attributes(layer)

    def infer(data):
        _check_dtype("MaxPool", data.dtype)
        shape = _output_shape("MaxPool", data.shape, attributes)
        return [Spec(shape, data.dtype), Spec(shape, np.dtype(np.int64))]

    def run_first(x, out=None):
        return (onnx.max_pool(x, opset=ONNX_OPSET, return_indices=False, out=out,
                              **attributes),)

    def run(x, out=None, out_indices=None):
        return onnx.max_pool(x, opset=ONNX_OPSET, out=out, out_indices=out_indices,
                             **attributes)

    return Op(infer, run, run_first)


# The builder of each of these ops in ovpool._opschema.
BUILDERS = {"OnnxAveragePool": average_pool, "OnnxMaxPool": max_pool}
