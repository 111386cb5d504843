"""The timing harness every benchmark script shares (the method of docs/performance.md).

  * ``Timer`` / ``measure``: warm-up, then batches of about ``batch_s`` seconds, the batches
    of all timers interleaved (round 1: every timer runs one batch, round 2: ...), so a burst
    of noise from other work on the machine tends to hit every engine rather than one; the
    best batch gives the per-call time.
  * ``copy_roofline``: the memory roofline, single-threaded ``np.copyto`` of the input and of
    every output, measured in the same run.
  * ``ov_bound`` and ``ort_bound_call``: OpenVINO and onnxruntime runs bound once to the
    benchmark's own numpy buffers, so a call is the engine's operator and not Python glue.
  * the optional engines (``ov``, ``ort``, ``torch``: each import guarded, a missing one
    leaves ``None`` and its error in ``MISSING``), ``import_ovpool`` and the table printing.

The scripts next to this file import it by name (Python puts a script's folder first on
``sys.path``).
"""

import gc
import importlib.util
import math
import os
import sys
import time

import numpy as np

MISSING = {}   # engine -> why it is not importable

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
except Exception as exc:
    ov = None
    MISSING["openvino"] = "%s: %s" % (type(exc).__name__, exc)

try:
    import onnx
    from onnx import TensorProto, helper as onnx_helper
    import onnxruntime as ort
except Exception as exc:
    onnx = ort = None
    MISSING["onnxruntime"] = "%s: %s" % (type(exc).__name__, exc)

if importlib.util.find_spec("torch") is not None:
    try:
        import torch
        import torch.nn.functional as torch_F
    except Exception as exc:
        torch = None
        MISSING["torch"] = "%s: %s" % (type(exc).__name__, exc)
else:
    torch = None
    MISSING["torch"] = "not installed"


def import_ovpool():
    """(ovpool, None), or (None, why) when it is not importable. The checkout this file lives
    in comes first on ``sys.path``, before anything installed elsewhere."""
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


def describe_ovpool(ovpool):
    """Where the timed ovpool was imported from and which kernel build it runs, for the
    header of a results table (comparing two trees means running each tree's own script)."""
    return "ovpool: %s, kernel build %s" % (os.path.dirname(os.path.abspath(ovpool.__file__)),
                                           ovpool.kernel_variant())


class NoOp(Exception):
    """The engine has no operator for this case."""


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
    # Let the previous engine's worker threads (TBB spins after a run) go idle, so they do
    # not steal one of the 2 cores from this batch; onnxruntime's spinning outlasts this
    # pause (see ort_options).
    time.sleep(0.01)
    fn()  # re-warm caches / wake this engine's thread pool after the other engines ran
    reps = timer.reps
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    timer.batches.append((time.perf_counter() - t0) / reps)


def measure(timers, batch_s, warmup_s, n_batches):
    """Calibrate every timer, then run ``n_batches`` interleaved rounds; a timer whose
    calibration raises keeps the error in ``timer.error`` and is left out."""
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


def copy_roofline(x, outputs):
    """The copy roofline: np.copyto of the input and of every output array into fresh arrays
    of their shapes and dtypes (single-threaded, as benchmarks.md defines it)."""
    copies = [(np.empty_like(a), a) for a in [x] + list(outputs)]
    copyto = np.copyto

    def fn():
        for dst, src in copies:
            copyto(dst, src)
    return fn


def add_run_arguments(parser, threads_help="threads for every engine (default 2)"):
    """--threads, --json and --quick, as every case benchmark takes them."""
    parser.add_argument("--threads", type=int, default=2, help=threads_help)
    parser.add_argument("--json", metavar="FILE", help="write machine-readable results to FILE")
    parser.add_argument("--quick", action="store_true",
                        help="short batches and fewer of them (smoke test; numbers are rough)")


def batches(args):
    """(batch_s, warmup_s, n_batches) of the method, or of a --quick smoke run."""
    if args.threads < 1:
        raise SystemExit("--threads must be >= 1")
    return (0.01, 0.005, 2) if args.quick else (0.1, 0.05, 5)


# ----------------------------------------------------------------------------
# peers bound to the benchmark's buffers
# ----------------------------------------------------------------------------
def ov_config(threads, hint="f32"):
    """The CPU plugin configuration of every OpenVINO run."""
    return {
        "INFERENCE_NUM_THREADS": threads,
        "INFERENCE_PRECISION_HINT": hint,
        "PERFORMANCE_HINT": "LATENCY",
        "NUM_STREAMS": 1,
    }


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


def ov_bound(core, model, x, hint, threads):
    """Compile ``model`` on the CPU plugin and bind ``x`` and fresh output arrays to one infer
    request: returns (fn, outputs, "executed as ..."), fn a zero-argument call of the op."""
    compiled = core.compile_model(model, "CPU", ov_config(threads, hint))
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
    return fn, tuple(outs), "executed as " + ", ".join(_ov_runtime_precisions(compiled))


def ort_options(threads, spinning=True):
    """Session options of every onnxruntime run: `threads` intra-op threads, sequential;
    `spinning` False turns off onnxruntime's idle spinning of its worker threads
    (``session.intra_op.allow_spinning``), which otherwise outlasts the pause between the
    engines' batches and takes a core from the batch that follows it."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    if not spinning:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
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


def onnx_model(node, inputs, outputs, name, opset):
    """A one-node ONNX model (ir_version 9) at ``opset``."""
    graph = onnx_helper.make_graph([node], name, inputs, outputs)
    model = onnx_helper.make_model(
        graph, opset_imports=[onnx_helper.make_opsetid("", opset)],
        producer_name="ovpool-bench")
    model.ir_version = 9
    return model


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
