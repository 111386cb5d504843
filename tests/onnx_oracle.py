"""Helpers for the ONNX dialect tests: the onnx package's backend node cases, one-node models
run by onnxruntime (sessions cached), and a dispatcher from a node's attributes to ovpool.onnx.
"""

import functools
import importlib

import numpy as np
import onnx
from onnx import helper, numpy_helper

import ovpool

POOL_OPS = ("AveragePool", "MaxPool", "GlobalAveragePool", "GlobalMaxPool", "LpPool")
_CASE_MODULES = ("averagepool", "maxpool", "globalaveragepool", "globalmaxpool", "lppool")

# ovpool.onnx function and its parameter names, by operator.
_FUNCTIONS = {
    "AveragePool": ovpool.onnx.average_pool,
    "MaxPool": ovpool.onnx.max_pool,
    "LpPool": ovpool.onnx.lp_pool,
    "GlobalAveragePool": ovpool.onnx.global_average_pool,
    "GlobalMaxPool": ovpool.onnx.global_max_pool,
    "GlobalLpPool": ovpool.onnx.global_lp_pool,
}


@functools.lru_cache(maxsize=None)
def backend_cases():
    """Every node test case the installed onnx package generates for the pooling operators:
    a list of (name, model, inputs, expected outputs).

    The case generators run when their modules are imported (``onnx.backend.test.case.node``);
    importing only the pooling ones keeps this to a fraction of a second.
    """
    from onnx.backend.test.case import node as cases

    before = len(cases._NodeTestCases)
    for name in _CASE_MODULES:
        importlib.import_module(f"onnx.backend.test.case.node.{name}")
    found = cases._NodeTestCases[before:] or [
        c for c in cases._NodeTestCases
        if any(n.op_type in POOL_OPS for n in c.model.graph.node)]
    out = []
    for case in found:
        if not any(n.op_type in POOL_OPS for n in case.model.graph.node):
            continue
        (inputs, outputs), = case.data_sets
        out.append((case.name, case.model, [_array(a) for a in inputs],
                    [_array(a) for a in outputs]))
    return out


def _array(value):
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def model_opset(model):
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def node_attributes(node):
    """The node's attributes as Python values (strings decoded, lists as lists)."""
    attrs = {}
    for attribute in node.attribute:
        value = helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            value = value.decode()
        attrs[attribute.name] = list(value) if isinstance(value, (list, tuple)) else value
    return attrs


def run_ovpool(op_type, attrs, x, opset, n_outputs=1):
    """Run ``op_type`` with ONNX attributes ``attrs`` through ovpool.onnx; a list of outputs."""
    function = _FUNCTIONS[op_type]
    if op_type == "MaxPool":
        result = function(x, opset=opset, return_indices=n_outputs == 2, **attrs)
        return list(result) if n_outputs == 2 else [result]
    return [function(x, opset=opset, **attrs)]


_ONNX_TYPES = {
    np.dtype(np.float32): onnx.TensorProto.FLOAT,
    np.dtype(np.float64): onnx.TensorProto.DOUBLE,
    np.dtype(np.float16): onnx.TensorProto.FLOAT16,
    np.dtype(np.int8): onnx.TensorProto.INT8,
    np.dtype(np.uint8): onnx.TensorProto.UINT8,
}


def one_node_model(op_type, attrs, shape, dtype, opset, n_outputs=1):
    """A one-node ONNX model (ir_version 9) of ``op_type`` on an input of ``shape``."""
    elem = _ONNX_TYPES[np.dtype(dtype)]
    names = ["Y", "Indices"][:n_outputs]
    node = helper.make_node(op_type, ["X"], names, **attrs)
    outputs = [helper.make_tensor_value_info("Y", elem, None)]
    if n_outputs == 2:
        outputs.append(helper.make_tensor_value_info("Indices", onnx.TensorProto.INT64, None))
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("X", elem, shape)],
                              outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def _key(attrs):
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items()))


@functools.lru_cache(maxsize=2048)
def _session(op_type, attrs_key, shape, dtype, opset, n_outputs):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    model = one_node_model(op_type, {k: list(v) if isinstance(v, tuple) else v
                                     for k, v in attrs_key}, shape, np.dtype(dtype), opset,
                           n_outputs)
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def run_onnxruntime(op_type, attrs, x, opset, n_outputs=1):
    """Run a one-node model through onnxruntime's CPU provider; a list of outputs."""
    session = _session(op_type, _key(attrs), tuple(x.shape), x.dtype.str, opset, n_outputs)
    return session.run(None, {"X": x})
