"""Helpers for the ONNX dialect tests: the onnx package's backend node cases, one-node models
run by onnxruntime (sessions cached), a dispatcher from a node's attributes to ovpool.onnx, and
seeded random node configurations that onnxruntime runs by the spec.
"""

import functools
import importlib

import numpy as np
import onnx
from onnx import helper, numpy_helper

import ovpool
from ovpool.onnx import op_version

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

    # Quiet: onnxruntime warns where its shape inference and its kernels disagree on ceil_mode
    # output lengths; the tests compare against what its kernels compute.
    ort.set_default_logger_severity(4)
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


# ---- seeded random configurations ----------------------------------------------------------

TOLERANCE = {"float32": (1e-5, 1e-6), "float16": (2e-3, 2e-3), "float64": (1e-12, 1e-12)}


def ort_dtypes(op, opset):
    """Element types onnxruntime's CPU provider runs for ``op`` at ``opset`` (float16 below
    opset 7 fails: onnxruntime inserts a Cast that does not exist there)."""
    dtypes = ["float32"]
    if opset >= 7:
        dtypes.append("float16")
    if op == "MaxPool" and opset >= 8:
        dtypes.append("float64")
    if op == "MaxPool" and opset >= 12:
        dtypes += ["int8", "uint8"]
    return dtypes


def same_pad_negative(shape, attrs):
    """SAME_* where (ceil(L/s) - 1)*s + dilated kernel - L < 0 (see the listed differences)."""
    if attrs.get("auto_pad", "NOTSET") not in ("SAME_UPPER", "SAME_LOWER"):
        return False
    rank = len(shape) - 2
    strides = attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    for length, k, s, d in zip(shape[2:], attrs["kernel_shape"], strides, dilations):
        out = -(-length // s)
        if (out - 1) * s + (k - 1) * d + 1 - length < 0:
            return True
    return False


def has_empty_window(version, shape, attrs):
    windows = ovpool.onnx.resolve_windows(
        version, shape, attrs["kernel_shape"], attrs.get("auto_pad", "NOTSET"),
        attrs.get("ceil_mode", 0), attrs.get("dilations"), attrs.get("pads"),
        attrs.get("strides"))
    for w in windows:
        starts = np.arange(w.output) * w.stride - w.pad_begin
        taps = starts[:, None] + np.arange(w.kernel) * w.dilation
        if (((taps >= 0) & (taps < w.length)).sum(axis=1) == 0).any():
            return True
    return False


def random_config(rng, op, opset):
    """Attributes, input shape and dtype of one ONNX pooling node that onnxruntime runs by the
    spec: the corners where it deviates (docs/semantics.md) are kept out."""
    version = op_version(op, opset)
    while True:
        rank = int(rng.integers(1, 4))
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + tuple(
            int(rng.integers(1, 8)) for _ in range(rank))
        dtype = np.dtype(str(rng.choice([d for d in ort_dtypes(op, opset)
                                         if d in version.dtypes])))
        if op.startswith("Global"):
            return {}, shape, dtype
        kernel = [int(rng.integers(1, 4)) for _ in range(rank)]
        attrs = {"kernel_shape": kernel}
        if rng.random() < 0.8:
            attrs["strides"] = [int(rng.integers(1, 4)) for _ in range(rank)]
        dilated = False
        if "dilations" in version.attributes and rng.random() < 0.5:
            attrs["dilations"] = [int(rng.integers(1, 3)) for _ in range(rank)]
            dilated = any(d > 1 for d in attrs["dilations"])
        r = rng.random()
        if r < 0.6:
            if rng.random() < 0.8:
                attrs["pads"] = [int(rng.integers(0, k)) for k in kernel * 2]
        elif r < 0.75:
            attrs["auto_pad"] = "VALID"
        else:
            if dilated:
                continue  # onnxruntime: SAME pads from the undilated kernel (listed)
            attrs["auto_pad"] = str(rng.choice(["SAME_UPPER", "SAME_LOWER"]))
        if "ceil_mode" in version.attributes and rng.random() < 0.5:
            attrs["ceil_mode"] = 1
        if "count_include_pad" in version.attributes and rng.random() < 0.5:
            attrs["count_include_pad"] = 1
        if "storage_order" in version.attributes and rng.random() < 0.3:
            attrs["storage_order"] = 1
        if op == "LpPool":
            attrs["p"] = int(rng.integers(1, 4))
        if same_pad_negative(shape, attrs):
            continue  # onnxruntime refuses or shifts the window (listed)
        try:
            empty = has_empty_window(version, shape, attrs)
        except ovpool.errors.OvpoolError:
            continue  # nothing to pool: the dilated kernel is larger than the padded input
        if op == "MaxPool" and empty:
            continue  # onnxruntime reports a negative index there (listed)
        return attrs, shape, dtype


def random_input(rng, shape, dtype):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def agrees(op, ours, theirs, dtype):
    """Same shapes and dtypes; max values and indices equal; averages within TOLERANCE."""
    if [(a.shape, a.dtype) for a in ours] != [(b.shape, b.dtype) for b in theirs]:
        return False
    if dtype.kind == "f" and op not in ("MaxPool", "GlobalMaxPool"):
        rtol, atol = TOLERANCE[dtype.name]
        return np.allclose(ours[0].astype(np.float64), theirs[0].astype(np.float64),
                           rtol=rtol, atol=atol)
    return all(np.array_equal(a, b) for a, b in zip(ours, theirs))
