#!/usr/bin/env python
"""Pooling benchmark for ovpool against OpenVINO CPU, onnxruntime CPU and torch.

Implements the method of docs/benchmarks.md (shared docs): the same input arrays
for every engine, the same thread count for every engine (2 unless --threads),
a memory roofline measured in the same run, warm-up followed by 5 batches of
about 0.1 s each per engine; the best batch gives the per-call time.

The batches of all engines of one case are interleaved (round 1: every engine
runs one batch, round 2: ...), so a burst of noise from other work on the
machine tends to hit every engine rather than only one of them.

Ratios use the ovpool time with a preallocated ``out=`` (and ``out_indices=``),
because that is the kernel's own cost; the call without ``out=`` is reported
too and shows the allocation cost.

Peers are set up to be as fast as they honestly can be, so that each one's
time is its operator and not Python glue:
  * OpenVINO: one-op model, compiled once; one InferRequest whose input and
    output tensors wrap the benchmark's numpy arrays (shared memory), run
    through the pybind infer() so no result dict is built per call. Where two
    formulations exist (MaxPool-14 values-only vs MaxPool-1; AvgPool vs
    ReduceMean for a global window; f16 vs f32 precision hint for the f16
    case) both are timed and the faster is the OpenVINO figure.
  * onnxruntime: one-node model (ir_version 9, opset 22 or the highest
    accepted), io_binding to the benchmark's arrays. Case 5 also times
    GlobalAveragePool next to AveragePool k7; the faster is reported.
  * torch (if installed): torch.nn.functional on tensors sharing the arrays.
Every variant's time is kept in the --json output, and the engines' outputs
are cross-checked against ovpool's after timing.

The roofline is single-threaded np.copyto, as benchmarks.md defines it; a
2-thread kernel that only reads its input (a copy also reads the destination
lines before writing them) can come in under it on a large input.

Usage:
    python benchmarks/bench_pooling.py [--case N ...] [--threads N] [--json FILE] [--quick]

The last two printed lines are always
    geomean ovpool/best_peer: X.XX
    geomean ovpool/roofline: X.XX
"""

import argparse
import gc
import importlib.util
import json
import math
import os
import platform
import sys
import tempfile
import time

import numpy as np

# ----------------------------------------------------------------------------
# optional engines (each import is guarded; a missing engine becomes a note)
# ----------------------------------------------------------------------------
NOTES = []
CHECKS = {"done": 0, "bad": 0}   # cross-checks of outputs between engines


def note(msg):
    NOTES.append(msg)


def _try_import_ovpool():
    # Prefer the checkout this script lives in over anything installed elsewhere.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        import ovpool
    except Exception as exc:  # ImportError, or a broken extension build
        return None, "%s: %s" % (type(exc).__name__, exc)
    missing = [n for n in ("max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool",
                           "set_num_threads") if not hasattr(ovpool, n)]
    if missing:  # e.g. a half-written package directory imported as a namespace package
        return None, "ovpool has no %s" % ", ".join(missing)
    return ovpool, None


try:
    import openvino as ov
    import openvino.opset1 as ov_opset1
    import openvino.opset8 as ov_opset8
    import openvino.opset14 as ov_opset14
    import openvino.opset16 as ov_opset16
    try:
        # The pybind base class of InferRequest: calling its infer() directly
        # skips the Python wrapper's input dispatch and OVDict construction
        # (~3 us per call). Inputs and outputs are bound once beforehand.
        from openvino._pyopenvino import InferRequest as _OVBaseRequest
    except Exception:
        _OVBaseRequest = None
    _OV_ERR = None
except Exception as exc:
    ov = None
    _OV_ERR = "%s: %s" % (type(exc).__name__, exc)

try:
    import onnx
    from onnx import TensorProto, helper as onnx_helper
    import onnxruntime as ort
    _ORT_ERR = None
except Exception as exc:
    onnx = ort = None
    _ORT_ERR = "%s: %s" % (type(exc).__name__, exc)

if importlib.util.find_spec("torch") is not None:
    try:
        import torch
        import torch.nn.functional as torch_F
        _TORCH_ERR = None
    except Exception as exc:
        torch = None
        _TORCH_ERR = "%s: %s" % (type(exc).__name__, exc)
else:
    torch = None
    _TORCH_ERR = "not installed"

# ----------------------------------------------------------------------------
# the cases of benchmarks.md
# ----------------------------------------------------------------------------
# kind: "max"      MaxPool, values only (no index work for anybody)
#       "max_idx"  MaxPool with int64 indices
#       "avg"      AvgPool, exclude-pad
#       "aavg"     AdaptiveAvgPool
#       "amax"     AdaptiveMaxPool with indices
CASES = [
    dict(id=1, name="ResNet stem max pool", shape=(1, 64, 112, 112), kind="max",
         kernel=(3, 3), strides=(2, 2), pads=(1, 1)),
    dict(id=2, name="ResNet stem max pool b32", shape=(32, 64, 112, 112), kind="max",
         kernel=(3, 3), strides=(2, 2), pads=(1, 1)),
    dict(id=3, name="VGG max pool", shape=(1, 64, 224, 224), kind="max",
         kernel=(2, 2), strides=(2, 2), pads=(0, 0)),
    dict(id=4, name="Inception avg pool", shape=(1, 192, 35, 35), kind="avg",
         kernel=(3, 3), strides=(1, 1), pads=(1, 1)),
    dict(id=5, name="global avg pool", shape=(32, 2048, 7, 7), kind="avg",
         kernel=(7, 7), strides=(1, 1), pads=(0, 0)),
    dict(id=6, name="adaptive avg, uneven", shape=(32, 512, 13, 17), kind="aavg",
         output_size=(7, 7)),
    dict(id=7, name="adaptive avg, large", shape=(8, 64, 224, 224), kind="aavg",
         output_size=(7, 7)),
    dict(id=8, name="adaptive max, uneven", shape=(32, 512, 13, 17), kind="amax",
         output_size=(7, 7)),
    dict(id=9, name="1-D avg pool", shape=(32, 256, 1024), kind="avg",
         kernel=(5,), strides=(1,), pads=(2,)),
    dict(id=10, name="3-D video max pool", shape=(2, 64, 16, 56, 56), kind="max",
         kernel=(3, 3, 3), strides=(2, 2, 2), pads=(1, 1, 1)),
    dict(id=11, name="max pool + i64 indices", shape=(1, 64, 112, 112), kind="max_idx",
         kernel=(3, 3), strides=(2, 2), pads=(1, 1)),
    dict(id=12, name="adaptive avg f16", shape=(8, 64, 224, 224), kind="aavg",
         output_size=(7, 7), dtype="float16"),
]
for _c in CASES:
    _c.setdefault("dtype", "float32")


def output_shape(case):
    """Output shape (floor rounding, explicit pads, unit dilation)."""
    n, c = case["shape"][:2]
    if case["kind"] in ("aavg", "amax"):
        return (n, c) + tuple(case["output_size"])
    sp = []
    for size, k, s, p in zip(case["shape"][2:], case["kernel"], case["strides"], case["pads"]):
        sp.append((size + 2 * p - k) // s + 1)
    return (n, c) + tuple(sp)


def has_indices(case):
    return case["kind"] in ("max_idx", "amax")


# ----------------------------------------------------------------------------
# timing
# ----------------------------------------------------------------------------
class Timer:
    """One thing to time: a zero-argument callable plus bookkeeping."""

    def __init__(self, engine, label, fn):
        self.engine = engine      # "roofline", "ovpool", "ovpool_out", "openvino", ...
        self.label = label        # variant description
        self.fn = fn
        self.reps = 1
        self.batches = []         # per-call seconds of each batch
        self.error = None

    def best(self):
        return min(self.batches) if self.batches else None


def calibrate(timer, batch_s, warmup_s):
    """Warm up and choose the repeat count that makes one batch ~batch_s long."""
    fn = timer.fn
    fn()  # first call: lazy initialisation, page faults of fresh buffers
    calls = 0
    t0 = time.perf_counter()
    while True:
        fn()
        calls += 1
        el = time.perf_counter() - t0
        if (el >= warmup_s and calls >= 2) or calls >= 10000:
            break
    per_call = el / calls
    timer.reps = max(1, int(round(batch_s / max(per_call, 1e-9))))


def run_batch(timer):
    fn = timer.fn
    # Let the previous engine's worker threads (onnxruntime and TBB spin after
    # a run) go idle, so they do not steal one of the 2 cores from this batch.
    time.sleep(0.01)
    fn()  # re-warm caches / wake this engine's thread pool after the other engines ran
    reps = timer.reps
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    timer.batches.append((time.perf_counter() - t0) / reps)


def measure(timers, batch_s, warmup_s, n_batches):
    live = []
    for t in timers:
        try:
            calibrate(t, batch_s, warmup_s)
            live.append(t)
        except Exception as exc:
            t.error = "%s: %s" % (type(exc).__name__, exc)
    gc.collect()
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(n_batches):
            for t in live:
                run_batch(t)
    finally:
        if gc_was:
            gc.enable()


# ----------------------------------------------------------------------------
# engines: each builder returns a list of (label, fn, check) variants, where
# check() returns the outputs (values[, indices]) of the last call for a
# cross-check, or raises a _NoOp / other exception.
# ----------------------------------------------------------------------------
class NoOp(Exception):
    """The engine has no operator for this case."""


def make_roofline(case, x, out_shape):
    # Copy an input-sized array and an output-sized array (values, plus the
    # int64 indices when the case produces indices: every byte the op writes).
    outputs = [np.ones(out_shape, dtype=x.dtype)]
    if has_indices(case):
        outputs.append(np.ones(out_shape, dtype=np.int64))
    return copy_roofline(x, outputs)


def copy_roofline(x, outputs):
    """The copy roofline: np.copyto of the input and of every output array into fresh arrays
    of their shapes and dtypes (single-threaded, as benchmarks.md defines it)."""
    copies = [(np.empty_like(a), a) for a in [x] + list(outputs)]
    copyto = np.copyto

    def fn():
        for dst, src in copies:
            copyto(dst, src)
    return fn


# ---------------------------- ovpool ----------------------------------------
def ovpool_calls(ovpool, case, x, out_shape):
    """Return (fn_alloc, fn_out, outputs_of_fn_out)."""
    kind = case["kind"]
    out = np.empty(out_shape, dtype=x.dtype)
    idx = np.empty(out_shape, dtype=np.int64) if has_indices(case) else None
    if kind in ("max", "max_idx"):
        k = list(case["kernel"])
        s = list(case["strides"])
        p = list(case["pads"])
        mp = ovpool.max_pool
        if kind == "max":
            def fa():
                return mp(x, k, strides=s, pads_begin=p, pads_end=p, return_indices=False)

            def fo():
                return mp(x, k, strides=s, pads_begin=p, pads_end=p, return_indices=False,
                          out=out)
        else:
            def fa():
                return mp(x, k, strides=s, pads_begin=p, pads_end=p,
                          index_element_type="i64", return_indices=True)

            def fo():
                return mp(x, k, strides=s, pads_begin=p, pads_end=p,
                          index_element_type="i64", return_indices=True,
                          out=out, out_indices=idx)
    elif kind == "avg":
        k = list(case["kernel"])
        s = list(case["strides"])
        p = list(case["pads"])
        ap = ovpool.avg_pool

        def fa():
            return ap(x, k, strides=s, pads_begin=p, pads_end=p, exclude_pad=True)

        def fo():
            return ap(x, k, strides=s, pads_begin=p, pads_end=p, exclude_pad=True, out=out)
    elif kind == "aavg":
        osz = list(case["output_size"])
        aap = ovpool.adaptive_avg_pool

        def fa():
            return aap(x, osz)

        def fo():
            return aap(x, osz, out=out)
    elif kind == "amax":
        osz = list(case["output_size"])
        amp = ovpool.adaptive_max_pool

        def fa():
            return amp(x, osz, index_element_type="i64", return_indices=True)

        def fo():
            return amp(x, osz, index_element_type="i64", return_indices=True,
                       out=out, out_indices=idx)
    else:
        raise ValueError(kind)
    outputs = (out, idx) if idx is not None else (out,)
    return fa, fo, outputs


# ---------------------------- OpenVINO --------------------------------------
def _ov_model(case, x_dtype, variant):
    kind = case["kind"]
    rank = len(case["shape"]) - 2
    param = ov_opset1.parameter(list(case["shape"]), x_dtype, name="x")
    ones = [1] * rank
    if kind in ("max", "max_idx"):
        k = list(case["kernel"])
        s = list(case["strides"])
        p = list(case["pads"])
        if variant == "opset1":
            node = ov_opset1.max_pool(param, s, p, p, k, rounding_type="floor")
            results = [node.output(0)]
        else:
            node = ov_opset14.max_pool(param, s, ones, p, p, k, rounding_type="floor",
                                       index_element_type="i64", axis=0)
            results = [node.output(0)] if kind == "max" else [node.output(0), node.output(1)]
    elif kind == "avg":
        k = list(case["kernel"])
        s = list(case["strides"])
        p = list(case["pads"])
        if variant == "reduce_mean":
            axes = ov_opset1.constant(np.arange(2, 2 + rank, dtype=np.int64))
            node = ov_opset1.reduce_mean(param, axes, keep_dims=True)
        else:
            # dilations must be passed explicitly: AvgPool-16 without them crashes the CPU plugin
            node = ov_opset16.avg_pool(param, s, p, p, k, exclude_pad=True,
                                       rounding_type="floor", dilations=ones)
        results = [node.output(0)]
    elif kind == "aavg":
        size = ov_opset1.constant(np.array(case["output_size"], dtype=np.int64))
        node = ov_opset8.adaptive_avg_pool(param, size)
        results = [node.output(0)]
    elif kind == "amax":
        size = ov_opset1.constant(np.array(case["output_size"], dtype=np.int64))
        # the CPU plugin only implements AdaptiveMaxPool with i32 indices
        node = ov_opset8.adaptive_max_pool(param, size, index_element_type="i32")
        results = [node.output(0), node.output(1)]
    else:
        raise ValueError(kind)
    return ov.Model(results, [param], "bench_case_%d" % case["id"])


def _ov_variants(case):
    """(variant, precision_hint, label) triples to try for this case.

    f32 cases: INFERENCE_PRECISION_HINT=f32. On CPUs with AMX/AVX512-BF16 the
    plugin's default hint is bf16, which may run nodes on rounded data; the f32
    hint pins the computation to ovpool's. (For these one-op models the plugin
    was seen to keep the pooling node in f32 even under the bf16 default; the
    notes print the executed precisions so a change would show.)

    f16 case: we time both hints and report the faster. The CPU plugin has no
    f16 AdaptivePooling kernel: with either hint it converts the f16 input to
    f32, pools in f32 and converts back (hint f16 does the conversions as
    Reorder nodes, hint f32 as JIT Convert subgraphs). Neither is a "native"
    f16 kernel, so the fair figure is the best OpenVINO can do with an f16
    model, whichever hint gives it.
    """
    kind = case["kind"]
    f16 = case["dtype"] == "float16"
    hints = ["f16", "f32"] if f16 else ["f32"]
    base = {
        "max": [("opset14", "MaxPool-14 (values only)"), ("opset1", "MaxPool-1")],
        "max_idx": [("opset14", "MaxPool-14 + i64 indices")],
        "avg": [("opset16", "AvgPool-16")],
        "aavg": [("opset8", "AdaptiveAvgPool-8")],
        "amax": [("opset8", "AdaptiveMaxPool-8 + i32 indices")],
    }[kind]
    if kind == "avg" and tuple(case["kernel"]) == tuple(case["shape"][2:]) and not any(case["pads"]):
        base = base + [("reduce_mean", "ReduceMean (global)")]
    out = []
    for hint in hints:
        for variant, label in base:
            lab = label + (" hint=%s" % hint if f16 else "")
            out.append((variant, hint, lab))
    return out


def _ov_runtime_precisions(compiled):
    """Layer type -> runtime precision of the executed graph, for notes."""
    res = []
    try:
        for op in compiled.get_runtime_model().get_ordered_ops():
            rt = op.get_rt_info()
            lt = rt["layerType"].astype(str)
            if lt in ("Input", "Output", "Const"):
                continue
            res.append("%s:%s" % (lt, rt["runtimePrecision"].astype(str)))
    except Exception:
        pass
    return res


def openvino_variants(case, x, out_shape, threads):
    if ov is None:
        raise RuntimeError("openvino not importable (%s)" % _OV_ERR)
    core = ov.Core()
    variants = []
    for variant, hint, label in _ov_variants(case):
        try:
            variants.append(_ov_one(core, case, x, variant, hint, label, threads))
        except Exception as exc:
            # keep the other formulations; report this one as failed
            variants.append((label, None, None, "failed: %s: %s" % (type(exc).__name__, exc)))
    return variants


def _ov_one(core, case, x, variant, hint, label, threads, transform=None, model=None):
    """Compile one OpenVINO formulation of the case and bind its buffers. ``transform(model)``
    may change the model first, or return the model to compile instead (bench_bridge.py swaps
    in ovpool's pooling). ``model``, if given, is compiled instead of the case's own."""
    if model is None:
        model = _ov_model(case, x.dtype, variant)
    if transform is not None:
        # A transform changes the model in place, or returns another one to compile.
        model = transform(model) or model
    cfg = {
        "INFERENCE_NUM_THREADS": threads,
        "INFERENCE_PRECISION_HINT": hint,
        "PERFORMANCE_HINT": "LATENCY",
        "NUM_STREAMS": 1,
    }
    compiled = core.compile_model(model, "CPU", cfg)
    req = compiled.create_infer_request()
    # Bind the benchmark's own numpy buffers once; OpenVINO reads the input
    # and writes the outputs in place, so a call is the op and nothing else.
    # The ov.Tensor wrappers must stay alive as long as the request uses
    # them: letting them be collected while the request keeps running on
    # the shared buffers corrupted the heap in our runs (seen as random
    # crashes in later, unrelated allocations).
    keep = [compiled, req]
    t_in = ov.Tensor(x, shared_memory=True)
    keep.append(t_in)
    req.set_input_tensor(t_in)
    outs = []
    for i, port in enumerate(compiled.outputs):
        et = port.get_element_type()
        if et == ov.Type.bf16:
            np_dt = x.dtype  # ml_dtypes.bfloat16, the only bfloat16 numpy knows
        else:
            np_dt = {ov.Type.f32: np.float32, ov.Type.f16: np.float16, ov.Type.f64: np.float64,
                     ov.Type.i8: np.int8, ov.Type.u8: np.uint8,
                     ov.Type.i32: np.int32, ov.Type.i64: np.int64}[et]
        buf = np.empty(tuple(port.get_shape()), dtype=np_dt)
        t_out = ov.Tensor(buf, shared_memory=True)
        keep.append(t_out)
        req.set_output_tensor(i, t_out)
        outs.append(buf)
    if _OVBaseRequest is not None:
        base_infer = _OVBaseRequest.infer
        empty = {}

        def fn(req=req, base_infer=base_infer, empty=empty, keep=keep):
            base_infer(req, empty, True, False)
    else:
        def fn(req=req, keep=keep):
            req.infer()
    prec = _ov_runtime_precisions(compiled)
    return (label, fn, tuple(outs), "executed as " + ", ".join(prec))


# ---------------------------- onnxruntime -----------------------------------
ORT_OPSET_CACHE = {}


def _onnx_model(case, x_dtype, variant, opset):
    kind = case["kind"]
    elem = TensorProto.FLOAT16 if x_dtype == np.float16 else TensorProto.FLOAT
    oshape = list(output_shape(case))
    inputs = [onnx_helper.make_tensor_value_info("x", elem, list(case["shape"]))]
    outputs = [onnx_helper.make_tensor_value_info("y", elem, oshape)]
    rank = len(case["shape"]) - 2
    if kind in ("max", "max_idx"):
        outs = ["y"]
        if kind == "max_idx":
            outs.append("i")
            outputs.append(onnx_helper.make_tensor_value_info("i", TensorProto.INT64, oshape))
        node = onnx_helper.make_node(
            "MaxPool", ["x"], outs, kernel_shape=list(case["kernel"]),
            strides=list(case["strides"]), pads=list(case["pads"]) * 2,
            dilations=[1] * rank, ceil_mode=0, storage_order=0)
    elif kind == "avg":
        if variant == "global":
            node = onnx_helper.make_node("GlobalAveragePool", ["x"], ["y"])
        else:
            node = onnx_helper.make_node(
                "AveragePool", ["x"], ["y"], kernel_shape=list(case["kernel"]),
                strides=list(case["strides"]), pads=list(case["pads"]) * 2,
                count_include_pad=0, ceil_mode=0)
    else:
        raise NoOp("no ONNX operator")
    graph = onnx_helper.make_graph([node], "bench_case_%d" % case["id"], inputs, outputs)
    model = onnx_helper.make_model(
        graph, opset_imports=[onnx_helper.make_opsetid("", opset)],
        producer_name="ovpool-bench")
    model.ir_version = 9
    return model


def ort_options(threads):
    """Session options of every onnxruntime run: `threads` intra-op threads, sequential."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    return so


def ort_bound_call(sess, x, outputs):
    """A zero-argument call running `sess` on input "x" = `x` with its outputs bound to the
    arrays of `outputs` ((name, array) pairs): no allocation or result list per call."""
    bind = sess.io_binding()
    bind.bind_cpu_input("x", x)
    for name, arr in outputs:
        bind.bind_output(name, "cpu", 0, arr.dtype, list(arr.shape), arr.ctypes.data)
    raw_sess = sess._sess
    raw_bind = bind._iobinding

    # The wrappers (sess, bind) stay referenced by the closure: they own
    # objects the C++ session and binding point to.
    def fn(raw_sess=raw_sess, raw_bind=raw_bind, keep=(sess, bind)):
        raw_sess.run_with_iobinding(raw_bind, None)
    return fn


def _ort_session(case, x_dtype, variant, threads):
    """Build a session at opset 22, or the highest opset onnxruntime accepts."""
    so = ort_options(threads)
    key = (case["kind"], variant)
    opsets = [ORT_OPSET_CACHE[key]] if key in ORT_OPSET_CACHE else list(range(22, 10, -1))
    last = None
    for opset in opsets:
        model = _onnx_model(case, x_dtype, variant, opset)
        try:
            sess = ort.InferenceSession(model.SerializeToString(), so,
                                        providers=["CPUExecutionProvider"])
            ORT_OPSET_CACHE[key] = opset
            return sess, opset
        except Exception as exc:
            last = exc
    raise RuntimeError("onnxruntime rejected every opset 22..11: %s" % last)


def onnxruntime_variants(case, x, out_shape, threads):
    if ort is None:
        raise RuntimeError("onnxruntime/onnx not importable (%s)" % _ORT_ERR)
    kind = case["kind"]
    if kind in ("aavg", "amax"):
        raise NoOp("no ONNX operator for adaptive pooling")
    names = [("plain", "MaxPool" if kind.startswith("max") else "AveragePool")]
    if kind == "avg" and tuple(case["kernel"]) == tuple(case["shape"][2:]) and not any(case["pads"]):
        names.append(("global", "GlobalAveragePool"))
    variants = []
    for variant, opname in names:
        sess, opset = _ort_session(case, x.dtype, variant, threads)
        # io_binding with the benchmark's own buffers: no output allocation and
        # no conversion of results per call. Checked to be cheaper than run()
        # (which allocates the output and builds a list each call).
        outs = [np.empty(out_shape, dtype=x.dtype)]
        if kind == "max_idx":
            outs.append(np.empty(out_shape, dtype=np.int64))
        fn = ort_bound_call(sess, x, list(zip(("y", "i"), outs)))
        variants.append(("%s opset %d" % (opname, opset), fn, tuple(outs), None))
    return variants


# ---------------------------- torch -----------------------------------------
def torch_variants(case, x, out_shape, threads):
    if torch is None:
        raise RuntimeError("torch %s" % _TORCH_ERR)
    torch.set_num_threads(threads)
    t = torch.from_numpy(x)
    kind = case["kind"]
    rank = len(case["shape"]) - 2
    holder = {}
    if kind in ("max", "max_idx"):
        f = {1: torch_F.max_pool1d, 2: torch_F.max_pool2d, 3: torch_F.max_pool3d}[rank]
        k, s, p = case["kernel"], case["strides"], case["pads"]
        ri = kind == "max_idx"

        def fn():
            holder["r"] = f(t, k, s, p, return_indices=ri)
    elif kind == "avg":
        f = {1: torch_F.avg_pool1d, 2: torch_F.avg_pool2d, 3: torch_F.avg_pool3d}[rank]
        k, s, p = case["kernel"], case["strides"], case["pads"]

        def fn():
            holder["r"] = f(t, k, s, p, count_include_pad=False)
    elif kind == "aavg":
        f = {1: torch_F.adaptive_avg_pool1d, 2: torch_F.adaptive_avg_pool2d,
             3: torch_F.adaptive_avg_pool3d}[rank]
        osz = case["output_size"]

        def fn():
            holder["r"] = f(t, osz)
    elif kind == "amax":
        f = {1: torch_F.adaptive_max_pool1d, 2: torch_F.adaptive_max_pool2d,
             3: torch_F.adaptive_max_pool3d}[rank]
        osz = case["output_size"]

        def fn():
            holder["r"] = f(t, osz, return_indices=True)
    else:
        raise ValueError(kind)

    class _Lazy:
        # outputs for the cross-check, fetched after the timed calls. torch's
        # max-pool indices count within each (n, c) plane, so they are shifted
        # to the whole-tensor numbering (MaxPool-14 axis=0) that ovpool,
        # OpenVINO and onnxruntime use here. Adaptive max pool indices are
        # per plane in OpenVINO's AdaptiveMaxPool-8 as in torch: no shift.
        def __iter__(self):
            r = holder["r"]
            r = r if isinstance(r, tuple) else (r,)
            vals = [v.numpy() for v in r]
            if len(vals) > 1 and kind == "max_idx":
                plane = int(np.prod(case["shape"][2:]))
                nc = case["shape"][0] * case["shape"][1]
                offs = (np.arange(nc, dtype=np.int64) * plane).reshape(
                    case["shape"][:2] + (1,) * rank)
                vals[1] = vals[1].astype(np.int64) + offs
            return iter(vals)
    label = "torch %s" % torch.__version__
    return [(label, fn, _Lazy(), None)]


# ----------------------------------------------------------------------------
# cross-check: are the engines computing the same thing?
# ----------------------------------------------------------------------------
def cross_check(case, ref_name, ref_outs, other_name, other_outs):
    ref = list(ref_outs)
    oth = list(other_outs)
    v0, v1 = ref[0], oth[0]
    if v0.shape != v1.shape:
        return "%s vs %s: value shapes differ %s vs %s" % (ref_name, other_name, v0.shape, v1.shape)
    a = v0.astype(np.float64)
    b = v1.astype(np.float64)
    if case["kind"] in ("max", "max_idx", "amax"):
        ok = np.array_equal(a, b, equal_nan=True)
    else:
        rtol = 2e-3 if case["dtype"] == "float16" else 1e-5
        ok = np.allclose(a, b, rtol=rtol, atol=rtol * 1e-2, equal_nan=True)
    if not ok:
        return "%s vs %s: values differ (max abs diff %.3g)" % (
            ref_name, other_name, float(np.nanmax(np.abs(a - b))))
    if len(ref) > 1 and len(oth) > 1:
        if not np.array_equal(ref[1].astype(np.int64), oth[1].astype(np.int64)):
            return "%s vs %s: indices differ" % (ref_name, other_name)
    return None


# ----------------------------------------------------------------------------
# one case
# ----------------------------------------------------------------------------
def run_case(case, ovpool, threads, batch_s, warmup_s, n_batches):
    rng = np.random.default_rng(1000 + case["id"])
    x = rng.standard_normal(case["shape"], dtype=np.float32).astype(case["dtype"])
    oshape = output_shape(case)
    result = dict(id=case["id"], name=case["name"], shape=list(case["shape"]),
                  dtype=case["dtype"], output_shape=list(oshape), times_ms={},
                  variants_ms={}, notes=[])

    timers = [Timer("roofline", "np.copyto in + out", make_roofline(case, x, oshape))]

    ovp_outputs = None
    if ovpool is not None:
        try:
            fa, fo, ovp_outputs = ovpool_calls(ovpool, case, x, oshape)
            r = fa()
            rv = r[0] if isinstance(r, tuple) else r
            if tuple(rv.shape) != tuple(oshape):
                result["notes"].append("ovpool output shape %s != expected %s"
                                       % (tuple(rv.shape), oshape))
            fo()
            timers.append(Timer("ovpool", "ovpool", fa))
            timers.append(Timer("ovpool_out", "ovpool out=", fo))
        except Exception as exc:
            result["notes"].append("ovpool failed: %s: %s" % (type(exc).__name__, exc))
            ovp_outputs = None

    peer_outputs = []
    for engine, builder in (("openvino", openvino_variants),
                            ("onnxruntime", onnxruntime_variants),
                            ("torch", torch_variants)):
        try:
            for label, fn, outs, info in builder(case, x, oshape, threads):
                if info:
                    result["notes"].append("%s [%s] %s" % (engine, label, info))
                if fn is None:
                    continue
                fn()
                timers.append(Timer(engine, label, fn))
                peer_outputs.append(("%s [%s]" % (engine, label), outs))
        except NoOp as exc:
            result["times_ms"][engine] = "no op"
            result["notes"].append("%s: %s" % (engine, exc))
        except Exception as exc:
            if engine == "torch" and torch is None:
                result["times_ms"][engine] = None
            else:
                result["times_ms"][engine] = None
                result["notes"].append("%s failed: %s: %s" % (engine, type(exc).__name__, exc))

    measure(timers, batch_s, warmup_s, n_batches)

    # cross-check after timing (outputs hold the last call's results)
    ref_name, ref_outs = ("ovpool", ovp_outputs) if ovp_outputs is not None else (None, None)
    for name, outs in peer_outputs:
        if ref_outs is None:
            ref_name, ref_outs = name, outs
            continue
        try:
            msg = cross_check(case, ref_name, ref_outs, name, outs)
        except Exception as exc:
            msg = "cross-check %s vs %s raised %s" % (ref_name, name, exc)
        CHECKS["done"] += 1
        if msg:
            CHECKS["bad"] += 1
            result["notes"].append("WARNING " + msg)

    # collect: per engine the best over its variants
    for t in timers:
        if t.error:
            result["notes"].append("%s [%s] failed while timing: %s" % (t.engine, t.label, t.error))
            continue
        ms = t.best() * 1e3
        result["variants_ms"].setdefault(t.engine, {})[t.label] = ms
    for engine, vs in result["variants_ms"].items():
        label = min(vs, key=vs.get)
        result["times_ms"][engine] = vs[label]
        if len(vs) > 1:
            result["notes"].append("%s: %s; column shows %s" % (
                engine, ", ".join("%s %.3f ms" % kv for kv in vs.items()), label))
    for engine in ("ovpool", "ovpool_out", "openvino", "onnxruntime", "torch"):
        result["times_ms"].setdefault(engine, None)

    tm = result["times_ms"]
    peers = {e: tm[e] for e in ("openvino", "onnxruntime", "torch") if isinstance(tm[e], float)}
    result["best_peer"] = min(peers, key=peers.get) if peers else None
    roof = tm.get("roofline")
    ovp = tm.get("ovpool_out")
    result["ratios"] = {
        "ovpool/best_peer": (ovp / peers[result["best_peer"]]) if (ovp and peers) else None,
        "ovpool/roofline": (ovp / roof) if (ovp and roof) else None,
        "ovpool_alloc/roofline": (tm["ovpool"] / roof) if (tm.get("ovpool") and roof) else None,
    }
    for e in peers:
        result["ratios"]["%s/roofline" % e] = peers[e] / roof if roof else None
    return result


# ----------------------------------------------------------------------------
# the IR runtime path: ovpool.compile_model(one-layer IR)(x) vs the bare kernel
# ----------------------------------------------------------------------------
def _runtime_one(ovpool, case, tmp, batch_s, warmup_s, n_batches):
    """Time compiled(x) for a one-layer IR of ``case`` against the bare kernel call."""
    x = np.random.default_rng(7).standard_normal(case["shape"], dtype=np.float32)
    k, s, p = list(case["kernel"]), list(case["strides"]), list(case["pads"])
    info = {"shape": list(case["shape"])}
    compiled = None
    errors = []
    # MaxPool-14 with only the values output connected is what OpenVINO's
    # converters emit for a plain max pool; MaxPool-1 is the fallback.
    for variant in ("opset14", "opset1"):
        model = _ov_model(case, np.float32, variant)
        path = os.path.join(tmp, "maxpool_%s_%s.xml" % (
            "x".join(map(str, case["shape"])), variant))
        ov.save_model(model, path, compress_to_fp16=False)
        try:
            compiled = ovpool.compile_model(path)
            info["ir_op"] = "MaxPool-14" if variant == "opset14" else "MaxPool-1"
            break
        except Exception as exc:
            errors.append("%s: %s: %s" % (variant, type(exc).__name__, exc))
    if compiled is None:
        raise RuntimeError("ovpool.compile_model failed (%s)" % "; ".join(errors))

    call = None
    forms = (("x", lambda: compiled(x)), ("[x]", lambda: compiled([x])),
             ("{'x': x}", lambda: compiled({"x": x})))
    for form, cand in forms:
        try:
            cand()
            call = cand
            info["call"] = "compiled(%s)" % form
            break
        except Exception as exc:
            errors.append("compiled(%s): %s: %s" % (form, type(exc).__name__, exc))
    if call is None:
        raise RuntimeError("calling the compiled model failed (%s)" % "; ".join(errors))

    out = np.empty(output_shape(case), np.float32)
    mp = ovpool.max_pool

    def bare():
        return mp(x, k, strides=s, pads_begin=p, pads_end=p, return_indices=False)

    def bare_out():
        return mp(x, k, strides=s, pads_begin=p, pads_end=p, return_indices=False, out=out)

    timers = [Timer("compiled", info["call"], call), Timer("bare", "max_pool", bare),
              Timer("bare_out", "max_pool out=", bare_out)]
    measure(timers, batch_s, warmup_s, n_batches)
    for t in timers:
        if t.error:
            raise RuntimeError("%s failed: %s" % (t.label, t.error))
    us = {t.engine: t.best() * 1e6 for t in timers}
    info.update(compiled_us=us["compiled"], bare_us=us["bare"], bare_out_us=us["bare_out"],
                overhead_us=us["compiled"] - us["bare"])
    return info


def runtime_path(ovpool, threads, batch_s, warmup_s, n_batches):
    """Returns (info or None, printable lines)."""
    if ovpool is None:
        return None, ["runtime path: skipped (ovpool not importable)"]
    if not hasattr(ovpool, "compile_model"):
        return None, ["runtime path: skipped (ovpool.compile_model does not exist yet)"]
    if ov is None:
        return None, ["runtime path: skipped (openvino needed to write the IR: %s)" % _OV_ERR]
    case = dict(CASES[0])
    # The case-1 kernel takes ~0.1-1 ms, so on a shared machine its noise can
    # exceed the ~10 us being measured; the same layer on a tiny input shows
    # the fixed per-call cost of the runtime path on its own.
    tiny = dict(case, shape=(1, 64, 8, 8))
    info = {}
    lines = []
    with tempfile.TemporaryDirectory(prefix="ovpool_bench_") as tmp:
        for key, c in (("case1", case), ("tiny", tiny)):
            try:
                r = _runtime_one(ovpool, c, tmp, batch_s, warmup_s, n_batches)
            except Exception as exc:
                lines.append("runtime path (%s): %s: %s" % (
                    "x".join(map(str, c["shape"])), type(exc).__name__, exc))
                continue
            info[key] = r
            lines.append(
                "runtime path (one-layer %s IR, input %s): %s %.1f us, bare ovpool.max_pool "
                "%.1f us (out= %.1f us) -> overhead %.1f us per call (target <= 20 us)"
                % (r["ir_op"], "x".join(map(str, c["shape"])), r["call"], r["compiled_us"],
                   r["bare_us"], r["bare_out_us"], r["overhead_us"]))
    return (info or None), lines


# ----------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------
def fmt_ms(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return "%.3f" % v if v < 100 else "%.1f" % v


def fmt_ratio(v):
    return "-" if v is None else "%.2f" % v


def geomean(vals):
    vals = [v for v in vals if v is not None and v > 0]
    if not vals:
        return float("nan")
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def print_table(results):
    head = ["#", "case", "shape", "roofline", "ovpool", "ovpool(out=)", "OpenVINO",
            "onnxruntime", "torch", "ovp/best", "ovp/roof"]
    rows = []
    for r in results:
        tm = r["times_ms"]
        shape = "x".join(str(d) for d in r["shape"]) + (" f16" if r["dtype"] == "float16" else "")
        rows.append([str(r["id"]), r["name"], shape, fmt_ms(tm.get("roofline")),
                     fmt_ms(tm.get("ovpool")), fmt_ms(tm.get("ovpool_out")),
                     fmt_ms(tm.get("openvino")), fmt_ms(tm.get("onnxruntime")),
                     fmt_ms(tm.get("torch")),
                     fmt_ratio(r["ratios"]["ovpool/best_peer"]),
                     fmt_ratio(r["ratios"]["ovpool/roofline"])])
    print_rows(head, rows, left={1, 2})


def print_rows(head, rows, left):
    """Print a table: columns as wide as their widest cell, those in `left` left-aligned."""
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]

    def line(cells):
        return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    print(line(head))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


def parse_cases(values):
    if not values:
        return [c["id"] for c in CASES]
    ids = []
    for v in values:
        for part in str(v).split(","):
            part = part.strip()
            if not part:
                continue
            n = int(part)
            if n not in [c["id"] for c in CASES]:
                raise SystemExit("unknown case %d (cases are 1..%d)" % (n, len(CASES)))
            if n not in ids:
                ids.append(n)
    return sorted(ids)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", action="append", metavar="N",
                    help="case number(s) to run; repeatable or comma-separated (default: all)")
    ap.add_argument("--threads", type=int, default=2, help="threads for every engine (default 2)")
    ap.add_argument("--json", metavar="FILE", help="write machine-readable results to FILE")
    ap.add_argument("--quick", action="store_true",
                    help="short batches and fewer of them (smoke test; numbers are rough)")
    args = ap.parse_args(argv)
    if args.threads < 1:
        raise SystemExit("--threads must be >= 1")
    ids = parse_cases(args.case)
    threads = args.threads
    if args.quick:
        batch_s, warmup_s, n_batches = 0.01, 0.005, 2
    else:
        batch_s, warmup_s, n_batches = 0.1, 0.05, 5

    ovpool, ovpool_err = _try_import_ovpool()
    if ovpool is None:
        note("ovpool not importable (%s): ovpool columns are '-'" % ovpool_err)
    else:
        try:
            ovpool.set_num_threads(threads)
        except Exception as exc:
            note("ovpool.set_num_threads(%d) failed: %s" % (threads, exc))
    if ov is None:
        note("openvino not importable (%s)" % _OV_ERR)
    if ort is None:
        note("onnxruntime/onnx not importable (%s)" % _ORT_ERR)
    if torch is None:
        note("torch %s: torch column is '-'" % _TORCH_ERR)

    versions = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "ovpool": getattr(ovpool, "__version__", "?") if ovpool is not None else None,
        "openvino": ov.get_version() if ov is not None else None,
        "onnxruntime": ort.__version__ if ort is not None else None,
        "torch": torch.__version__ if torch is not None else None,
    }
    print("ovpool pooling benchmark: %d thread(s) for every engine, %s" % (
        threads, "QUICK mode (rough numbers)" if args.quick else
        "best of %d batches of ~%.1f s" % (n_batches, batch_s)))
    print("versions: " + ", ".join("%s %s" % (k, v) for k, v in versions.items() if v))
    print("machine: %s, %d cpu(s)" % (platform.processor() or platform.machine(),
                                      os.cpu_count() or 0))

    results = []
    for cid in ids:
        case = next(c for c in CASES if c["id"] == cid)
        print("case %d: %s ..." % (cid, case["name"]), file=sys.stderr, flush=True)
        res = run_case(case, ovpool, threads, batch_s, warmup_s, n_batches)
        results.append(res)
        gc.collect()

    runtime_info = None
    if 1 in ids:
        runtime_info, rt_lines = runtime_path(ovpool, threads, batch_s, warmup_s, n_batches)
    else:
        rt_lines = ["runtime path: not run (it uses case 1, which was not selected)"]

    gm_peer = geomean([r["ratios"]["ovpool/best_peer"] for r in results])
    gm_roof = geomean([r["ratios"]["ovpool/roofline"] for r in results])

    note("outputs cross-checked between engines (values; indices where both give them): "
         "%d comparisons, %d mismatches" % (CHECKS["done"], CHECKS["bad"]))

    if args.json:
        doc = dict(threads=threads, quick=args.quick, versions=versions,
                   batch_seconds=batch_s, batches=n_batches, cases=results,
                   runtime_path=runtime_info, runtime_path_lines=rt_lines, notes=list(NOTES),
                   geomean={"ovpool/best_peer": None if math.isnan(gm_peer) else gm_peer,
                            "ovpool/roofline": None if math.isnan(gm_roof) else gm_roof})
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=2)

    print()
    print("notes:")
    for n in NOTES:
        print("  - " + n)
    for r in results:
        for n in r["notes"]:
            print("  - case %d: %s" % (r["id"], n))
    print()
    for line in rt_lines:
        print(line)
    print()
    print("per-call times in ms (best batch); roofline = np.copyto of input-sized + output-sized "
          "arrays (+ int64 indices where the op has them)")
    print("ratios use ovpool(out=) (preallocated out= / out_indices=); best peer = fastest of "
          "OpenVINO, onnxruntime, torch; 'no op' = the engine has no such operator")
    print_table(results)
    print("geomean ovpool/best_peer: %.2f" % gm_peer)
    print("geomean ovpool/roofline: %.2f" % gm_roof)
    return 0


if __name__ == "__main__":
    sys.exit(main())
