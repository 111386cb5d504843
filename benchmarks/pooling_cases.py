"""The cases of docs/performance.md as data, and one adapter per engine that runs them.

A case names its operator (``op``: max, avg, adaptive_avg, adaptive_max), whether it has
int64 indices, its input shape and dtype and its window (``kernel``, ``strides``, ``pads``) or
``output_size``. An adapter turns a case into variants, each a zero-argument call of the
engine's operator on the benchmark's own arrays: one method per operator (an engine without
the operator has no such method and raises ``NoOp``).

Peers are set up to be as fast as they honestly can be, so that each one's time is its
operator and not Python glue:
  * OpenVINO: one-op model, compiled once; one InferRequest whose input and output tensors
    wrap the benchmark's numpy arrays (shared memory), run through the pybind infer() so no
    result dict is built per call. Where two formulations exist (MaxPool-14 values-only vs
    MaxPool-1; AvgPool vs ReduceMean for a global window; f16 vs f32 precision hint for the
    f16 case) both are timed and the faster is the OpenVINO figure.
  * onnxruntime: one-node model (ir_version 9, opset 22 or the highest accepted), io_binding
    to the benchmark's arrays. A global window also times GlobalAveragePool next to
    AveragePool; the faster is reported.
  * torch (if installed): torch.nn.functional on tensors sharing the arrays.
"""

from collections import namedtuple
from functools import partial

import numpy as np

import harness
from harness import NoOp


def case(**fields):
    """A case with the defaults filled in (float32, no indices)."""
    return dict(dict(dtype="float32", indices=False), **fields)


CASES = [
    case(id=1, name="ResNet stem max pool", shape=(1, 64, 112, 112), op="max",
         kernel=(3, 3), strides=(2, 2), pads=(1, 1)),
    case(id=2, name="ResNet stem max pool b32", shape=(32, 64, 112, 112), op="max",
         kernel=(3, 3), strides=(2, 2), pads=(1, 1)),
    case(id=3, name="VGG max pool", shape=(1, 64, 224, 224), op="max",
         kernel=(2, 2), strides=(2, 2), pads=(0, 0)),
    case(id=4, name="Inception avg pool", shape=(1, 192, 35, 35), op="avg",
         kernel=(3, 3), strides=(1, 1), pads=(1, 1)),
    case(id=5, name="global avg pool", shape=(32, 2048, 7, 7), op="avg",
         kernel=(7, 7), strides=(1, 1), pads=(0, 0)),
    case(id=6, name="adaptive avg, uneven", shape=(32, 512, 13, 17), op="adaptive_avg",
         output_size=(7, 7)),
    case(id=7, name="adaptive avg, large", shape=(8, 64, 224, 224), op="adaptive_avg",
         output_size=(7, 7)),
    case(id=8, name="adaptive max, uneven", shape=(32, 512, 13, 17), op="adaptive_max",
         output_size=(7, 7), indices=True),
    case(id=9, name="1-D avg pool", shape=(32, 256, 1024), op="avg",
         kernel=(5,), strides=(1,), pads=(2,)),
    case(id=10, name="3-D video max pool", shape=(2, 64, 16, 56, 56), op="max",
         kernel=(3, 3, 3), strides=(2, 2, 2), pads=(1, 1, 1)),
    case(id=11, name="max pool + i64 indices", shape=(1, 64, 112, 112), op="max",
         kernel=(3, 3), strides=(2, 2), pads=(1, 1), indices=True),
    case(id=12, name="adaptive avg f16", shape=(8, 64, 224, 224), op="adaptive_avg",
         output_size=(7, 7), dtype="float16"),
]


def find(case_id):
    return next(c for c in CASES if c["id"] == case_id)


def parse_cases(values):
    """Case ids from repeatable, comma-separated arguments (all cases when there are none)."""
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


def output_shape(case):
    """Output shape (floor rounding, explicit pads, unit dilation)."""
    n, c = case["shape"][:2]
    if "output_size" in case:
        return (n, c) + tuple(case["output_size"])
    sp = []
    for size, k, s, p in zip(case["shape"][2:], case["kernel"], case["strides"], case["pads"]):
        sp.append((size + 2 * p - k) // s + 1)
    return (n, c) + tuple(sp)


def case_input(case):
    """The input every engine of the case reads."""
    rng = np.random.default_rng(1000 + case["id"])
    return rng.standard_normal(case["shape"], dtype=np.float32).astype(case["dtype"])


def is_global(case):
    return (case["op"] == "avg" and tuple(case["kernel"]) == tuple(case["shape"][2:])
            and not any(case["pads"]))


def make_roofline(case, x, out_shape):
    """Copy an input-sized array and an output-sized array (values, plus the int64 indices
    when the case produces indices: every byte the op writes)."""
    outputs = [np.ones(out_shape, dtype=x.dtype)]
    if case["indices"]:
        outputs.append(np.ones(out_shape, dtype=np.int64))
    return harness.copy_roofline(x, outputs)


def cross_check(case, ref_name, ref_outs, other_name, other_outs):
    """None when the two engines' outputs agree (values; indices where both give them), else
    what differs."""
    ref = list(ref_outs)
    oth = list(other_outs)
    v0, v1 = ref[0], oth[0]
    if v0.shape != v1.shape:
        return "%s vs %s: value shapes differ %s vs %s" % (ref_name, other_name, v0.shape, v1.shape)
    a = v0.astype(np.float64)
    b = v1.astype(np.float64)
    if case["op"] in ("max", "adaptive_max"):
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
# adapters
# ----------------------------------------------------------------------------
# label: the variant's description; fn: the zero-argument call; outputs: the arrays (values[,
# indices]) fn fills, for the cross-check, or None; info: a note, or None.
Variant = namedtuple("Variant", "label fn outputs info")


class Adapter:
    engine = None                  # the key of the engine's column
    no_op = "no such operator"     # why NoOp, for an operator the adapter has no method for

    def available(self):
        return True

    def variants(self, case, x, out_shape, threads):
        build = getattr(self, case["op"], None)
        if build is None:
            raise NoOp(self.no_op)
        return build(case, x, out_shape, threads)


def _window(case):
    return list(case["kernel"]), list(case["strides"]), list(case["pads"])


class Ovpool(Adapter):
    """ovpool's numpy API; with ``out=True`` on preallocated ``out=`` / ``out_indices=``
    (the kernel's own cost), else allocating its result on every call."""

    def __init__(self, ovpool, out):
        self.ovpool = ovpool
        self.out = out
        self.engine = "ovpool_out" if out else "ovpool"

    def available(self):
        return self.ovpool is not None

    def variants(self, case, x, out_shape, threads):
        outs = {}
        if self.out:
            outs["out"] = np.empty(out_shape, dtype=x.dtype)
            if case["indices"]:
                outs["out_indices"] = np.empty(out_shape, dtype=np.int64)
        fn = getattr(self, case["op"])(case, x, outs)
        return [Variant("ovpool out=" if self.out else "ovpool", fn,
                        tuple(outs.values()) if self.out else None, None)]

    def max(self, case, x, outs):
        k, s, p = _window(case)
        idx = (dict(index_element_type="i64", return_indices=True) if case["indices"]
               else dict(return_indices=False))
        return partial(self.ovpool.max_pool, x, k, strides=s, pads_begin=p, pads_end=p,
                       **idx, **outs)

    def avg(self, case, x, outs):
        k, s, p = _window(case)
        return partial(self.ovpool.avg_pool, x, k, strides=s, pads_begin=p, pads_end=p,
                       exclude_pad=True, **outs)

    def adaptive_avg(self, case, x, outs):
        return partial(self.ovpool.adaptive_avg_pool, x, list(case["output_size"]), **outs)

    def adaptive_max(self, case, x, outs):
        return partial(self.ovpool.adaptive_max_pool, x, list(case["output_size"]),
                       index_element_type="i64", return_indices=True, **outs)


class OpenVINO(Adapter):
    engine = "openvino"

    def available(self):
        return harness.ov is not None

    def formulations(self, case):
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
        f16 = case["dtype"] == "float16"
        hints = ["f16", "f32"] if f16 else ["f32"]
        base = {
            ("max", False): [("opset14", "MaxPool-14 (values only)"), ("opset1", "MaxPool-1")],
            ("max", True): [("opset14", "MaxPool-14 + i64 indices")],
            ("avg", False): [("opset16", "AvgPool-16")],
            ("adaptive_avg", False): [("opset8", "AdaptiveAvgPool-8")],
            ("adaptive_max", True): [("opset8", "AdaptiveMaxPool-8 + i32 indices")],
        }[case["op"], case["indices"]]
        if is_global(case):
            base = base + [("reduce_mean", "ReduceMean (global)")]
        return [(variant, hint, label + (" hint=%s" % hint if f16 else ""))
                for hint in hints for variant, label in base]

    def model(self, case, x_dtype, variant):
        """The one-op model of one formulation of the case."""
        param = harness.ov_opset1.parameter(list(case["shape"]), x_dtype, name="x")
        results = getattr(self, "_" + case["op"])(case, param, variant)
        return harness.ov.Model(results, [param], "bench_case_%d" % case["id"])

    def _max(self, case, param, variant):
        k, s, p = _window(case)
        if variant == "opset1":
            return [harness.ov_opset1.max_pool(param, s, p, p, k, rounding_type="floor").output(0)]
        node = harness.ov_opset14.max_pool(param, s, [1] * len(k), p, p, k, rounding_type="floor",
                                           index_element_type="i64", axis=0)
        return [node.output(0), node.output(1)] if case["indices"] else [node.output(0)]

    def _avg(self, case, param, variant):
        k, s, p = _window(case)
        if variant == "reduce_mean":
            axes = harness.ov_opset1.constant(np.arange(2, 2 + len(k), dtype=np.int64))
            return [harness.ov_opset1.reduce_mean(param, axes, keep_dims=True).output(0)]
        # dilations must be passed explicitly: AvgPool-16 without them crashes the CPU plugin
        return [harness.ov_opset16.avg_pool(param, s, p, p, k, exclude_pad=True,
                                            rounding_type="floor",
                                            dilations=[1] * len(k)).output(0)]

    def _adaptive_avg(self, case, param, variant):
        size = harness.ov_opset1.constant(np.array(case["output_size"], dtype=np.int64))
        return [harness.ov_opset8.adaptive_avg_pool(param, size).output(0)]

    def _adaptive_max(self, case, param, variant):
        size = harness.ov_opset1.constant(np.array(case["output_size"], dtype=np.int64))
        # the CPU plugin only implements AdaptiveMaxPool with i32 indices
        node = harness.ov_opset8.adaptive_max_pool(param, size, index_element_type="i32")
        return [node.output(0), node.output(1)]

    def variants(self, case, x, out_shape, threads):
        core = harness.ov.Core()
        variants = []
        for variant, hint, label in self.formulations(case):
            try:
                fn, outs, info = harness.ov_bound(core, self.model(case, x.dtype, variant), x,
                                                  hint, threads)
                variants.append(Variant(label, fn, outs, info))
            except Exception as exc:
                # keep the other formulations; report this one as failed
                variants.append(Variant(label, None, None, "failed: %s: %s" % (
                    type(exc).__name__, exc)))
        return variants


class Onnxruntime(Adapter):
    engine = "onnxruntime"
    no_op = "no ONNX operator for adaptive pooling"

    def __init__(self):
        self.opsets = {}   # (op, indices, variant) -> the opset onnxruntime accepted

    def available(self):
        return harness.ort is not None

    def max(self, case, x, out_shape, threads):
        outs = ["y", "i"] if case["indices"] else ["y"]
        k, s, p = _window(case)
        node = harness.onnx_helper.make_node(
            "MaxPool", ["x"], outs, kernel_shape=k, strides=s, pads=p * 2,
            dilations=[1] * len(k), ceil_mode=0, storage_order=0)
        return [self._bound(case, x, out_shape, threads, "plain", "MaxPool", node)]

    def avg(self, case, x, out_shape, threads):
        k, s, p = _window(case)
        node = harness.onnx_helper.make_node(
            "AveragePool", ["x"], ["y"], kernel_shape=k, strides=s, pads=p * 2,
            count_include_pad=0, ceil_mode=0)
        variants = [self._bound(case, x, out_shape, threads, "plain", "AveragePool", node)]
        if is_global(case):
            node = harness.onnx_helper.make_node("GlobalAveragePool", ["x"], ["y"])
            variants.append(self._bound(case, x, out_shape, threads, "global",
                                        "GlobalAveragePool", node))
        return variants

    def _bound(self, case, x, out_shape, threads, variant, opname, node):
        """A session at opset 22, or the highest opset onnxruntime accepts, bound to the
        benchmark's own buffers with io_binding: no output allocation and no conversion of
        results per call (checked to be cheaper than run(), which allocates the output and
        builds a list each call)."""
        helper, TP = harness.onnx_helper, harness.TensorProto
        elem = TP.FLOAT16 if x.dtype == np.float16 else TP.FLOAT
        inputs = [helper.make_tensor_value_info("x", elem, list(case["shape"]))]
        outputs = [helper.make_tensor_value_info("y", elem, list(out_shape))]
        if case["indices"]:
            outputs.append(helper.make_tensor_value_info("i", TP.INT64, list(out_shape)))
        key = (case["op"], case["indices"], variant)
        opsets = [self.opsets[key]] if key in self.opsets else list(range(22, 10, -1))
        last = None
        for opset in opsets:
            model = harness.onnx_model(node, inputs, outputs, "bench_case_%d" % case["id"], opset)
            try:
                sess = harness.ort.InferenceSession(model.SerializeToString(),
                                                    harness.ort_options(threads),
                                                    providers=["CPUExecutionProvider"])
                self.opsets[key] = opset
                break
            except Exception as exc:
                last = exc
        else:
            raise RuntimeError("onnxruntime rejected every opset 22..11: %s" % last)
        outs = [np.empty(out_shape, dtype=x.dtype)]
        if case["indices"]:
            outs.append(np.empty(out_shape, dtype=np.int64))
        fn = harness.ort_bound_call(sess, x, list(zip(("y", "i"), outs)))
        return Variant("%s opset %d" % (opname, opset), fn, tuple(outs), None)


class Torch(Adapter):
    engine = "torch"

    def available(self):
        return harness.torch is not None

    def variants(self, case, x, out_shape, threads):
        harness.torch.set_num_threads(threads)
        t = harness.torch.from_numpy(x)
        holder = {}
        fn = getattr(self, case["op"])(case, t, holder, len(case["shape"]) - 2)
        return [Variant("torch %s" % harness.torch.__version__, fn, _TorchOutputs(case, holder),
                        None)]

    def max(self, case, t, holder, rank):
        f = getattr(harness.torch_F, "max_pool%dd" % rank)
        k, s, p, ri = case["kernel"], case["strides"], case["pads"], case["indices"]

        def fn():
            holder["r"] = f(t, k, s, p, return_indices=ri)
        return fn

    def avg(self, case, t, holder, rank):
        f = getattr(harness.torch_F, "avg_pool%dd" % rank)
        k, s, p = case["kernel"], case["strides"], case["pads"]

        def fn():
            holder["r"] = f(t, k, s, p, count_include_pad=False)
        return fn

    def adaptive_avg(self, case, t, holder, rank):
        f = getattr(harness.torch_F, "adaptive_avg_pool%dd" % rank)
        osz = case["output_size"]

        def fn():
            holder["r"] = f(t, osz)
        return fn

    def adaptive_max(self, case, t, holder, rank):
        f = getattr(harness.torch_F, "adaptive_max_pool%dd" % rank)
        osz = case["output_size"]

        def fn():
            holder["r"] = f(t, osz, return_indices=True)
        return fn


class _TorchOutputs:
    """torch's outputs for the cross-check, fetched after the timed calls. torch's max-pool
    indices count within each (n, c) plane, so they are shifted to the whole-tensor numbering
    (MaxPool-14 axis=0) that ovpool, OpenVINO and onnxruntime use here. Adaptive max pool
    indices are per plane in OpenVINO's AdaptiveMaxPool-8 as in torch: no shift."""

    def __init__(self, case, holder):
        self.case, self.holder = case, holder

    def __iter__(self):
        case = self.case
        r = self.holder["r"]
        r = r if isinstance(r, tuple) else (r,)
        vals = [v.numpy() for v in r]
        if len(vals) > 1 and case["op"] == "max":
            plane = int(np.prod(case["shape"][2:]))
            nc = case["shape"][0] * case["shape"][1]
            offs = (np.arange(nc, dtype=np.int64) * plane).reshape(
                case["shape"][:2] + (1,) * (len(case["shape"]) - 2))
            vals[1] = vals[1].astype(np.int64) + offs
        return iter(vals)


def adapters(ovpool):
    """Every engine's adapter, in the table's column order."""
    return [Ovpool(ovpool, out=False), Ovpool(ovpool, out=True), OpenVINO(), Onnxruntime(),
            Torch()]
