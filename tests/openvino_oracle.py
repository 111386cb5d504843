"""Run one-op OpenVINO models on the CPU plugin, as an oracle for ovpool's tests.

Each helper takes a numpy array and ovpool-style attributes (ints or per-axis sequences,
``None`` for the defaults), builds a single-op model with the Python opset API
(AvgPool-16, MaxPool-14, AdaptiveAvgPool-8, AdaptiveMaxPool-8), compiles it for "CPU" and runs
it. Compiled models are cached by (op, attributes, shape, dtype), so a test suite that repeats
a configuration pays for compilation once.

The CPU plugin is compiled with two inference threads and ``INFERENCE_PRECISION_HINT=f32`` so that
float32 models stay float32 (on CPUs with bf16/fp16 units the plugin would otherwise be free to
lower their precision).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
from openvino import opset8, opset14, opset16

from reference import per_axis

CPU_CONFIG = {"INFERENCE_NUM_THREADS": 2, "INFERENCE_PRECISION_HINT": "f32"}

_core = None
_cache: dict = {}
_requests: dict = {}
stats = {"compiled": 0, "runs": 0}

# numpy dtype name -> OpenVINO element type
_OV_TYPES = {
    "float32": ov.Type.f32,
    "float16": ov.Type.f16,
    "float64": ov.Type.f64,
    "int8": ov.Type.i8,
    "uint8": ov.Type.u8,
    "int32": ov.Type.i32,
    "int64": ov.Type.i64,
}


def core() -> ov.Core:
    global _core
    if _core is None:
        _core = ov.Core()
    return _core


def _window(x, kernel, strides, pads_begin, pads_end, dilations):
    """(kernel, strides, pads_begin, pads_end, dilations) as per-axis tuples for ``x``."""
    nsp = x.ndim - 2
    return tuple(tuple(per_axis(value, nsp, default)) for value, default in (
        (kernel, None), (strides, 1), (pads_begin, 0), (pads_end, 0), (dilations, 1)))


def _compile(key, build):
    """Return the compiled model for ``key``, building it with ``build()`` on a miss."""
    compiled = _cache.get(key)
    if compiled is None:
        model = build()
        compiled = core().compile_model(model, "CPU", CPU_CONFIG)
        _cache[key] = compiled
        stats["compiled"] += 1
    return compiled


def _param(x):
    name = np.dtype(x.dtype).name
    if name not in _OV_TYPES:
        raise TypeError(f"no OpenVINO element type for {name}")
    return opset8.parameter(list(x.shape), _OV_TYPES[name], name="x")


def _run(compiled, x):
    stats["runs"] += 1
    request = _requests.get(id(compiled))
    if request is None:
        request = _requests[id(compiled)] = compiled.create_infer_request()
    request.infer({0: np.ascontiguousarray(x)})
    return [np.array(request.get_output_tensor(i).data, copy=True)
            for i in range(len(compiled.outputs))]


def _auto_pad(auto_pad):
    return {"explicit": "explicit", "same_upper": "same_upper",
            "same_lower": "same_lower", "valid": "valid"}[auto_pad]


def ov_avg_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, dilations=None,
                exclude_pad=True, rounding_type="floor", auto_pad="explicit"):
    """AvgPool-16 on OpenVINO CPU. Returns the output array."""
    x = np.asarray(x)
    attrs = _window(x, kernel, strides, pads_begin, pads_end, dilations) + (
        bool(exclude_pad), rounding_type, _auto_pad(auto_pad))
    k, s, pb, pe, d, excl, rt, ap = attrs

    def build():
        p = _param(x)
        node = opset16.avg_pool(p, strides=list(s), pads_begin=list(pb), pads_end=list(pe),
                                kernel_shape=list(k), exclude_pad=excl, rounding_type=rt,
                                auto_pad=ap, dilations=list(d))
        return ov.Model([node.output(0)], [p], "avg_pool")

    compiled = _compile(("avg",) + attrs + (x.shape, x.dtype.str), build)
    return _run(compiled, x)[0]


def ov_max_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, dilations=None,
                rounding_type="floor", auto_pad="explicit", index_element_type="i64", axis=0):
    """MaxPool-14 on OpenVINO CPU. Returns (values, indices)."""
    x = np.asarray(x)
    attrs = _window(x, kernel, strides, pads_begin, pads_end, dilations) + (
        rounding_type, _auto_pad(auto_pad), index_element_type, int(axis))
    k, s, pb, pe, d, rt, ap, it, ax = attrs

    def build():
        p = _param(x)
        node = opset14.max_pool(p, strides=list(s), dilations=list(d), pads_begin=list(pb),
                                pads_end=list(pe), kernel_shape=list(k), rounding_type=rt,
                                auto_pad=ap, index_element_type=it, axis=ax)
        return ov.Model([node.output(0), node.output(1)], [p], "max_pool")

    compiled = _compile(("max",) + attrs + (x.shape, x.dtype.str), build)
    values, indices = _run(compiled, x)
    return values, indices


def ov_adaptive_avg_pool(x, output_size):
    """AdaptiveAvgPool-8 on OpenVINO CPU. Returns the output array."""
    x = np.asarray(x)
    out = tuple(per_axis(output_size, x.ndim - 2, None))

    def build():
        p = _param(x)
        node = opset8.adaptive_avg_pool(p, opset8.constant(np.array(out, dtype=np.int64)))
        return ov.Model([node.output(0)], [p], "adaptive_avg_pool")

    compiled = _compile(("aavg", out, x.shape, x.dtype.str), build)
    return _run(compiled, x)[0]


def ov_adaptive_max_pool(x, output_size, index_element_type="i32"):
    """AdaptiveMaxPool-8 on OpenVINO CPU. Returns (values, indices).

    The CPU plugin only implements i32 indices; ``i64`` is accepted here and computed as i32,
    then widened, so callers can compare either index type.
    """
    x = np.asarray(x)
    out = tuple(per_axis(output_size, x.ndim - 2, None))

    def build():
        p = _param(x)
        node = opset8.adaptive_max_pool(p, opset8.constant(np.array(out, dtype=np.int64)),
                                        index_element_type="i32")
        return ov.Model([node.output(0), node.output(1)], [p], "adaptive_max_pool")

    compiled = _compile(("amax", out, x.shape, x.dtype.str), build)
    values, indices = _run(compiled, x)
    return values, indices.astype(np.int64 if index_element_type == "i64" else np.int32)


def clear_cache():
    _requests.clear()
    _cache.clear()
