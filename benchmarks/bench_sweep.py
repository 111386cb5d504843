#!/usr/bin/env python
"""Sweep benchmark: ovpool's numpy API over many pooling configurations against the copy
roofline and against OpenVINO CPU and onnxruntime CPU.

The twelve cases of bench_pooling.py are common network shapes; this sweep draws
configurations from a fixed random generator across what a model may hold: every dtype
(f32, f16, bf16, f64, i8, u8, i32, i64), 1-3 spatial axes, kernels 1-7, strides 1-4 (also
larger than the kernel), dilations 1-3, explicit / same / valid padding, floor / ceil /
ceil_torch rounding, exclude-pad on and off, ONNX ``count_include_pad``, max pooling with and
without indices (i32 and i64, ``axis`` 0 and 2), adaptive pooling down and up, global windows,
many tiny planes, few large planes (fewer planes than threads) and plane widths that are not a
multiple of the vector width.

Each configuration is timed with the shared harness (harness.py: warm-up, interleaved
batches, best batch) for ovpool with preallocated outputs, the copy roofline of its input plus all of
its outputs (values and indices, in their dtypes), and the peers that have the operator:
OpenVINO (one-op model, bound buffers) and onnxruntime (one-node model, io_binding), which
only has the ONNX forms (floor or ONNX rounding, indices int64 over the whole tensor, float
averages). The printed table gives per configuration ovpool / roofline and ovpool / best peer;
the summary gives the geometric mean, 90th percentile and worst of both ratios.

Usage:
    python benchmarks/bench_sweep.py [--count N] [--threads N] [--json FILE] [--quick]
                                     [--only ID ...]

The default run takes a few minutes; --quick is a smoke run with rough numbers.
"""

import argparse
import gc
import sys

import numpy as np

import harness

try:
    import ml_dtypes
except ImportError:  # bfloat16 configurations are then left out
    ml_dtypes = None

DTYPES = ("float32", "float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64")
FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")
# Elements of the input of a configuration, roughly: large enough to be timed, small enough
# for a run of a few minutes.
TARGET_ELEMENTS = 1 << 18


def _np_dtype(name):
    if name == "bfloat16":
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


# ----------------------------------------------------------------------------
# configurations
# ----------------------------------------------------------------------------
def _spatial(rng, rank, plane):
    """Spatial sizes of `rank` axes whose product is about `plane`, none below 1."""
    side = max(1.0, plane ** (1.0 / rank))
    sizes = [max(1, int(round(side * rng.uniform(0.7, 1.4)))) for _ in range(rank)]
    return sizes


def _batch(rng, plane, elements=TARGET_ELEMENTS):
    planes = max(1, elements // max(1, plane))
    n = int(rng.choice([1, 2, 4, 8]))
    n = min(n, planes)
    c = max(1, planes // n)
    return [n, c]


def _window(rng, rank, sizes, kmax=7):
    kernel, strides, dils, pb, pe = [], [], [], [], []
    for size in sizes:
        k = int(rng.integers(1, kmax + 1))
        d = int(rng.choice([1, 1, 1, 2, 3]))
        while k > 1 and (k - 1) * d + 1 > size + 2 * ((k - 1) * d // 2):
            k -= 1
        s = int(rng.integers(1, 5))
        reach = (k - 1) * d
        kernel.append(k)
        strides.append(s)
        dils.append(d)
        pb.append(int(rng.integers(0, reach // 2 + 1)))
        pe.append(int(rng.integers(0, reach // 2 + 1)))
    return kernel, strides, dils, pb, pe


def _fixed(rng, op, dtype, rank, plane=None, nc=None):
    plane = plane or int(rng.choice([64, 400, 1024, 3136, 12544]))
    sizes = _spatial(rng, rank, plane)
    shape = (nc or _batch(rng, int(np.prod(sizes)))) + sizes
    kernel, strides, dils, pb, pe = _window(rng, rank, sizes)
    cfg = dict(op=op, dtype=dtype, shape=shape, kernel=kernel, strides=strides,
               dilations=dils, pads_begin=pb, pads_end=pe,
               auto_pad=str(rng.choice(["explicit"] * 4 + ["same_upper", "same_lower",
                                                            "valid"])),
               rounding=str(rng.choice(["floor", "floor", "ceil", "ceil_torch"])))
    if op == "avg":
        cfg["exclude_pad"] = bool(rng.integers(0, 2))
    if op == "max":
        cfg["indices"] = str(rng.choice(["none", "i32", "i64"]))
        cfg["axis"] = int(rng.choice([0, 2]))
    return cfg


def _adaptive(rng, op, dtype, rank, up):
    plane = int(rng.choice([64, 400, 1024, 3136]))
    sizes = _spatial(rng, rank, plane)
    if up:  # output larger than the input on at least one axis
        osz = [int(s * rng.uniform(1.0, 2.5)) + int(rng.integers(0, 3)) for s in sizes]
    else:
        osz = [max(1, int(s / rng.uniform(1.2, 6.0))) for s in sizes]
    big = max(int(np.prod(sizes)), int(np.prod(osz)))
    cfg = dict(op=op, dtype=dtype, shape=_batch(rng, big) + sizes, output_size=osz)
    if op == "amax":
        cfg["indices"] = str(rng.choice(["i32", "i64"]))
    return cfg


def _family(rng, name):
    """One configuration of the named family."""
    dt = str(rng.choice(DTYPES))
    fl = str(rng.choice(FLOAT_DTYPES))
    rank = int(rng.choice([1, 2, 2, 2, 3]))
    if name == "max":
        return _fixed(rng, "max", dt, rank)
    if name == "max_indices":
        cfg = _fixed(rng, "max", dt, rank)
        cfg["indices"] = str(rng.choice(["i32", "i64"]))
        return cfg
    if name == "avg":
        return _fixed(rng, "avg", dt, rank)
    if name == "avg_int":
        return _fixed(rng, "avg", str(rng.choice(["int8", "uint8", "int32", "int64"])), rank)
    if name == "onnx_avg":
        cfg = _fixed(rng, "onnx_avg", fl, rank)
        cfg["rounding"] = str(rng.choice(["floor", "ceil"]))
        cfg["auto_pad"] = "explicit"
        return cfg
    if name == "strided":  # stride larger than the kernel
        cfg = _fixed(rng, str(rng.choice(["max", "avg"])), dt, rank)
        cfg["strides"] = [k + int(rng.integers(1, 3)) for k in cfg["kernel"]]
        return cfg
    if name == "adaptive_down":
        return _adaptive(rng, str(rng.choice(["aavg", "amax"])), dt, rank, up=False)
    if name == "adaptive_up":
        return _adaptive(rng, str(rng.choice(["aavg", "amax"])), dt, rank, up=True)
    if name == "global":
        plane = int(rng.choice([49, 64, 196, 1024]))
        sizes = _spatial(rng, rank, plane)
        shape = _batch(rng, int(np.prod(sizes))) + sizes
        op = str(rng.choice(["avg", "max", "aavg"]))
        if op == "aavg":
            return dict(op=op, dtype=dt, shape=shape, output_size=[1] * rank)
        cfg = dict(op=op, dtype=dt, shape=shape, kernel=list(sizes), strides=[1] * rank,
                   dilations=[1] * rank, pads_begin=[0] * rank, pads_end=[0] * rank,
                   auto_pad="explicit", rounding="floor")
        if op == "avg":
            cfg["exclude_pad"] = True
        else:
            cfg["indices"] = str(rng.choice(["none", "i64"]))
            cfg["axis"] = 0
        return cfg
    if name == "tiny_planes":
        plane = int(rng.choice([4, 9, 16, 25, 36, 64]))
        op = str(rng.choice(["max", "avg", "aavg", "amax"]))
        if op in ("aavg", "amax"):
            sizes = _spatial(rng, rank, plane)
            cfg = dict(op=op, dtype=dt, shape=_batch(rng, int(np.prod(sizes))) + sizes,
                       output_size=[max(1, s // 2) for s in sizes])
            if op == "amax":
                cfg["indices"] = "i64"
            return cfg
        return _fixed(rng, op, dt, rank, plane=plane)
    if name == "few_planes":  # N*C below the thread count
        plane = TARGET_ELEMENTS
        op = str(rng.choice(["max", "avg", "aavg"]))
        if op == "aavg":
            sizes = _spatial(rng, rank, plane)
            return dict(op=op, dtype=dt, shape=[1, 1] + sizes,
                        output_size=[max(1, s // int(rng.integers(2, 9))) for s in sizes])
        return _fixed(rng, op, dt, rank, plane=plane, nc=[1, 1])
    if name == "odd_width":  # the last axis not a multiple of the vector width
        cfg = _fixed(rng, str(rng.choice(["max", "avg"])), dt, 2)
        cfg["shape"][-1] = 8 * int(rng.integers(2, 20)) + int(rng.choice([1, 3, 5, 7]))
        return cfg
    raise ValueError(name)


FAMILIES = ("max", "max_indices", "avg", "avg_int", "onnx_avg", "strided", "adaptive_down",
            "adaptive_up", "global", "tiny_planes", "few_planes", "odd_width")


def configurations(count, seed=20261124):
    """`count` configurations drawn round-robin over the families, each one accepted by
    ovpool (a drawn configuration ovpool refuses, e.g. a pad wider than the window allows, is
    drawn again)."""
    import ovpool  # noqa: F401  (harness.import_ovpool put the checkout first)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        family = FAMILIES[len(out) % len(FAMILIES)]
        for _ in range(50):
            cfg = _family(rng, family)
            if cfg["dtype"] == "bfloat16" and ml_dtypes is None:
                continue
            cfg["family"] = family
            try:
                shapes = [a.shape for a in ovpool_outputs(cfg)]
            except Exception:
                continue
            if int(np.prod(shapes[0])) == 0:
                continue
            cfg["output_shape"] = list(shapes[0])
            break
        else:
            raise RuntimeError("no valid %s configuration drawn" % family)
        cfg["id"] = len(out) + 1
        out.append(cfg)
    return out


def describe(cfg):
    """A short one-line description of a configuration."""
    shape = "x".join(map(str, cfg["shape"]))
    if cfg["op"] in ("aavg", "amax"):
        what = "%s %s -> %s" % (cfg["op"], shape, "x".join(map(str, cfg["output_size"])))
    else:
        what = "%s %s k%s s%s d%s" % (cfg["op"], shape, ",".join(map(str, cfg["kernel"])),
                                      ",".join(map(str, cfg["strides"])),
                                      ",".join(map(str, cfg["dilations"])))
        if cfg["auto_pad"] == "explicit":
            what += " p%s/%s" % (",".join(map(str, cfg["pads_begin"])),
                                 ",".join(map(str, cfg["pads_end"])))
        else:
            what += " " + cfg["auto_pad"]
        if cfg["rounding"] != "floor":
            what += " " + cfg["rounding"]
        if cfg["op"] == "avg" and not cfg["exclude_pad"]:
            what += " incl-pad"
        if cfg["op"] == "onnx_avg":
            what += " count_include_pad"
    if cfg.get("indices", "none") != "none":
        what += " idx %s" % cfg["indices"] + (" axis%d" % cfg["axis"] if "axis" in cfg else "")
    return "%s %s" % (cfg["dtype"], what)


# ----------------------------------------------------------------------------
# ovpool
# ----------------------------------------------------------------------------
def _input(cfg):
    rng = np.random.default_rng(cfg.get("id", 0) + 5000)
    dt = _np_dtype(cfg["dtype"])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        return rng.integers(lo, hi, size=cfg["shape"], endpoint=True).astype(dt)
    return rng.standard_normal(cfg["shape"], dtype=np.float32).astype(dt)


def _fixed_args(cfg):
    return dict(strides=cfg["strides"], pads_begin=cfg["pads_begin"], pads_end=cfg["pads_end"],
                dilations=cfg["dilations"], rounding_type=cfg["rounding"],
                auto_pad=cfg["auto_pad"])


def _onnx_args(cfg):
    pads = None
    if cfg["auto_pad"] == "explicit":
        pads = list(cfg["pads_begin"]) + list(cfg["pads_end"])
    auto = {"explicit": "NOTSET", "same_upper": "SAME_UPPER", "same_lower": "SAME_LOWER",
            "valid": "VALID"}[cfg["auto_pad"]]
    return dict(kernel_shape=cfg["kernel"], auto_pad=auto,
                ceil_mode=int(cfg["rounding"] != "floor"), dilations=cfg["dilations"],
                pads=pads, strides=cfg["strides"])


def ovpool_call(cfg, x, out=None, out_indices=None):
    """ovpool's numpy API for `cfg` (the call a user makes)."""
    import ovpool
    from ovpool import onnx as ovonnx
    op = cfg["op"]
    idx = cfg.get("indices", "none")
    if op == "max":
        if idx == "none":
            return ovpool.max_pool(x, cfg["kernel"], return_indices=False, out=out,
                                   **_fixed_args(cfg))
        return ovpool.max_pool(x, cfg["kernel"], index_element_type=idx, axis=cfg["axis"],
                               out=out, out_indices=out_indices, **_fixed_args(cfg))
    if op == "avg":
        return ovpool.avg_pool(x, cfg["kernel"], exclude_pad=cfg["exclude_pad"], out=out,
                               **_fixed_args(cfg))
    if op == "onnx_avg":
        return ovonnx.average_pool(x, count_include_pad=1, out=out, **_onnx_args(cfg))
    if op == "aavg":
        return ovpool.adaptive_avg_pool(x, cfg["output_size"], out=out)
    if op == "amax":
        return ovpool.adaptive_max_pool(x, cfg["output_size"], index_element_type=idx,
                                        out=out, out_indices=out_indices)
    raise ValueError(op)


def ovpool_outputs(cfg, x=None):
    """The output arrays (values[, indices]) of one call."""
    x = _input(cfg) if x is None else x
    r = ovpool_call(cfg, x)
    return list(r) if isinstance(r, tuple) else [r]


# ----------------------------------------------------------------------------
# peers
# ----------------------------------------------------------------------------
def _ov_model(cfg, x):
    ov, o1, o8, o14, o16 = harness.ov, harness.ov_opset1, harness.ov_opset8, \
        harness.ov_opset14, harness.ov_opset16
    et = ov.Type.bf16 if cfg["dtype"] == "bfloat16" else ov.Type(x.dtype)
    param = o1.parameter(list(cfg["shape"]), et, name="x")
    op = cfg["op"]
    if op in ("max", "avg", "onnx_avg"):
        auto = {"explicit": "explicit", "same_upper": "same_upper", "same_lower": "same_lower",
                "valid": "valid"}[cfg["auto_pad"]]
        common = dict(rounding_type=cfg["rounding"], auto_pad=auto)
        if op == "max":
            it = "i64" if cfg.get("indices", "none") == "none" else cfg["indices"]
            node = o14.max_pool(param, cfg["strides"], cfg["dilations"], cfg["pads_begin"],
                                cfg["pads_end"], cfg["kernel"], index_element_type=it,
                                axis=cfg.get("axis", 0), **common)
            outs = [node.output(0)] + ([node.output(1)] if cfg.get("indices", "none") != "none"
                                       else [])
        else:
            node = o16.avg_pool(param, cfg["strides"], cfg["pads_begin"], cfg["pads_end"],
                                cfg["kernel"], exclude_pad=(op == "avg" and cfg["exclude_pad"]),
                                dilations=cfg["dilations"], **common)
            outs = [node.output(0)]
    else:
        size = o1.constant(np.array(cfg["output_size"], dtype=np.int64))
        if op == "aavg":
            node = o8.adaptive_avg_pool(param, size)
            outs = [node.output(0)]
        else:
            # the CPU plugin only implements AdaptiveMaxPool with i32 indices
            node = o8.adaptive_max_pool(param, size, index_element_type="i32")
            outs = [node.output(0), node.output(1)]
    return ov.Model(outs, [param], "sweep_%d" % cfg["id"])


def openvino_peer(cfg, x, threads):
    """(label, fn, outputs) of OpenVINO, or raises."""
    if harness.ov is None:
        raise RuntimeError("openvino not importable")
    hint = "f16" if cfg["dtype"] == "float16" else "f32"
    fn, outs, _ = harness.ov_bound(harness.ov.Core(), _ov_model(cfg, x), x, hint, threads)
    return "OpenVINO", fn, outs


ORT_MAX_DTYPES = ("float32", "float16", "float64", "int8", "uint8")
ORT_AVG_DTYPES = ("float32", "float16", "float64")


def onnxruntime_peer(cfg, x, out_shapes, threads):
    """(label, fn, outputs) of onnxruntime, or raises harness.NoOp when it has no such op."""
    if harness.ort is None:
        raise RuntimeError("onnxruntime not importable")
    op = cfg["op"]
    helper, TP = harness.onnx_helper, harness.TensorProto
    if op in ("aavg", "amax"):
        raise harness.NoOp("no ONNX adaptive pooling")
    if cfg["rounding"] == "ceil_torch" or (op != "onnx_avg" and cfg["rounding"] == "ceil"):
        raise harness.NoOp("ONNX has no %s rounding of OpenVINO's kind" % cfg["rounding"])
    if op == "max":
        if cfg["dtype"] not in ORT_MAX_DTYPES:
            raise harness.NoOp("onnxruntime MaxPool has no %s" % cfg["dtype"])
        if cfg["indices"] not in ("none", "i64") or (cfg["indices"] == "i64" and cfg["axis"]):
            raise harness.NoOp("ONNX MaxPool indices are int64 over the whole tensor")
    else:
        if cfg["dtype"] not in ORT_AVG_DTYPES:
            raise harness.NoOp("onnxruntime AveragePool has no %s" % cfg["dtype"])
        if op == "avg" and not cfg["exclude_pad"]:
            raise harness.NoOp("ONNX count_include_pad is not OpenVINO's exclude_pad=false")
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    args = _onnx_args(cfg)
    if args["pads"] is None:
        del args["pads"]
    names = ["y", "i"][:len(out_shapes)]
    if op == "max":
        node = helper.make_node("MaxPool", ["x"], names, storage_order=0, **args)
    else:
        node = helper.make_node("AveragePool", ["x"], ["y"], count_include_pad=int(
            op == "onnx_avg"), **args)
    outputs = [helper.make_tensor_value_info(n, elem if n == "y" else TP.INT64, list(s))
               for n, s in zip(names, out_shapes)]
    model = harness.onnx_model(node, [helper.make_tensor_value_info(
        "x", elem, list(cfg["shape"]))], outputs, "sweep", 22)
    # Without spinning: with it, ovpool's times in the batches after onnxruntime's read up to
    # 3.5x those of runs without the peers (ONNX-form configurations, the only ones
    # onnxruntime runs), while onnxruntime's own times read the same either way.
    sess = harness.ort.InferenceSession(model.SerializeToString(),
                                        harness.ort_options(threads, spinning=False),
                                        providers=["CPUExecutionProvider"])
    outs = [np.empty(s, dtype=x.dtype if n == "y" else np.int64)
            for n, s in zip(names, out_shapes)]
    return "onnxruntime", harness.ort_bound_call(sess, x, list(zip(names, outs))), outs


def _agree(cfg, mine, theirs):
    a, b = mine[0].astype(np.float64), np.asarray(theirs[0]).astype(np.float64)
    if a.shape != b.shape:
        return False
    tol = {"float16": 2e-3, "bfloat16": 2e-2}.get(cfg["dtype"], 1e-5)
    if np.dtype(mine[0].dtype).kind in "iu":
        tol = 0
    return bool(np.allclose(a, b, rtol=tol, atol=max(tol, 1.0 if tol == 0 and cfg["op"] != "max"
                                                          else 0), equal_nan=True))


# ----------------------------------------------------------------------------
# one configuration
# ----------------------------------------------------------------------------
def run_config(cfg, threads, batch_s, warmup_s, n_batches, peers=True):
    x = _input(cfg)
    outs = ovpool_outputs(cfg, x)
    out, out_idx = outs[0], (outs[1] if len(outs) > 1 else None)

    def fo():
        return ovpool_call(cfg, x, out=out, out_indices=out_idx)
    timers = [harness.Timer("roofline", "np.copyto in + outs", harness.copy_roofline(x, outs)),
              harness.Timer("ovpool", "ovpool out=", fo)]
    result = dict(id=cfg["id"], family=cfg["family"], config=describe(cfg),
                  settings={k: v for k, v in cfg.items() if k not in ("id", "family")},
                  bytes=int(x.nbytes + sum(o.nbytes for o in outs)), times_ms={}, notes=[],
                  peers={})
    peer_outs = []
    if peers:
        for name, make in (("openvino", lambda: openvino_peer(cfg, x, threads)),
                           ("onnxruntime", lambda: onnxruntime_peer(
                               cfg, x, [o.shape for o in outs], threads))):
            try:
                label, fn, pouts = make()
                fn()
                timers.append(harness.Timer(name, label, fn))
                peer_outs.append((name, pouts))
            except harness.NoOp as exc:
                result["peers"][name] = "no op: %s" % exc
            except Exception as exc:
                result["peers"][name] = "failed: %s: %s" % (type(exc).__name__,
                                                            str(exc).splitlines()[0][:160])
    harness.measure(timers, batch_s, warmup_s, n_batches)
    for t in timers:
        if t.error:
            result["notes"].append("%s failed while timing: %s" % (t.engine, t.error))
            continue
        result["times_ms"][t.engine] = t.best() * 1e3
    for name, pouts in peer_outs:
        if name in result["times_ms"]:
            result["peers"][name] = "ok" if _agree(cfg, outs, pouts) else "ok (results differ)"
    tm = result["times_ms"]
    peer_times = {e: tm[e] for e in ("openvino", "onnxruntime") if e in tm}
    result["best_peer"] = min(peer_times, key=peer_times.get) if peer_times else None
    ovp, roof = tm.get("ovpool"), tm.get("roofline")
    result["ratios"] = {
        "ovpool/roofline": ovp / roof if (ovp and roof) else None,
        "ovpool/best_peer": (ovp / peer_times[result["best_peer"]])
        if (ovp and peer_times) else None,
    }
    return result


# ----------------------------------------------------------------------------
# summary
# ----------------------------------------------------------------------------
def summary(values):
    """(geometric mean, 90th percentile, worst) of the positive values, or None."""
    vals = sorted(v for v in values if v is not None and v > 0)
    if not vals:
        return None
    return dict(geomean=harness.geomean(vals), p90=float(np.percentile(vals, 90)),
                worst=vals[-1], count=len(vals))


def print_table(results):
    head = ["#", "family", "configuration", "MB", "roofline ms", "ovpool ms", "OpenVINO ms",
            "onnxruntime ms", "ovp/roof", "ovp/best"]
    rows = []
    for r in results:
        tm = r["times_ms"]
        rows.append([str(r["id"]), r["family"], r["config"], "%.2f" % (r["bytes"] / 1e6),
                     harness.fmt_ms(tm.get("roofline")), harness.fmt_ms(tm.get("ovpool")),
                     harness.fmt_ms(tm.get("openvino")), harness.fmt_ms(tm.get("onnxruntime")),
                     harness.fmt_ratio(r["ratios"]["ovpool/roofline"]),
                     harness.fmt_ratio(r["ratios"]["ovpool/best_peer"])])
    harness.print_rows(head, rows, left={1, 2})


def summary_line(name, s):
    if s is None:
        return "%s: no values" % name
    return "%s: geomean %.2f, p90 %.2f, worst %.2f (%d configurations)" % (
        name, s["geomean"], s["p90"], s["worst"], s["count"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=160, help="configurations (default 160)")
    ap.add_argument("--only", action="append", metavar="ID",
                    help="run only these configuration numbers (repeatable, comma-separated)")
    ap.add_argument("--threads", type=int, default=2, help="threads for every engine (default 2)")
    ap.add_argument("--no-peers", action="store_true", help="time ovpool and the roofline only")
    ap.add_argument("--json", metavar="FILE", help="write machine-readable results to FILE")
    ap.add_argument("--quick", action="store_true", help="short batches (smoke run)")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.count < 1:
        raise SystemExit("--threads and --count must be >= 1")
    ovpool, err = harness.import_ovpool()
    if ovpool is None:
        raise SystemExit("ovpool not importable: %s" % err)
    ovpool.set_num_threads(args.threads)
    # Many short batches: on a loaded machine a batch that two threads spend waiting for a
    # core is lost whole, so the best of many small ones is the steadier figure.
    if args.quick:
        batch_s, warmup_s, n_batches = 0.001, 0.002, 3
    else:
        batch_s, warmup_s, n_batches = 0.002, 0.01, 15
    configs = configurations(args.count)
    if args.only:
        wanted = {int(p) for v in args.only for p in str(v).split(",") if p.strip()}
        configs = [c for c in configs if c["id"] in wanted]
    print("ovpool sweep benchmark: %d configurations, %d thread(s) for every engine, %s" % (
        len(configs), args.threads, "QUICK mode (rough numbers)" if args.quick else
        "best of %d batches of ~%.2f s" % (n_batches, batch_s)))
    print(harness.describe_ovpool(ovpool))
    results = []
    for cfg in configs:
        print("%d/%d %s" % (cfg["id"], len(configs), describe(cfg)), file=sys.stderr,
              flush=True)
        results.append(run_config(cfg, args.threads, batch_s, warmup_s, n_batches,
                                  peers=not args.no_peers))
        gc.collect()
    roof = summary([r["ratios"]["ovpool/roofline"] for r in results])
    peer = summary([r["ratios"]["ovpool/best_peer"] for r in results])
    worst = sorted(results, key=lambda r: -(r["ratios"]["ovpool/roofline"] or 0))[:10]
    if args.json:
        import json
        with open(args.json, "w") as fh:
            json.dump(dict(threads=args.threads, quick=args.quick, batch_seconds=batch_s,
                           batches=n_batches, configurations=results,
                           summary={"ovpool/roofline": roof, "ovpool/best_peer": peer},
                           worst_roofline=[r["id"] for r in worst]), fh, indent=2)
    print("times: best batch per call; roofline = np.copyto of the input and of every output "
          "(indices included); best = the faster of OpenVINO and onnxruntime where they have "
          "the op")
    print_table(results)
    print()
    notes = [(r["id"], e, s) for r in results for e, s in sorted(r["peers"].items())
             if s != "ok" and not s.startswith("no op")]
    notes += [(r["id"], "", n) for r in results for n in r["notes"]]
    if notes:
        print("notes:")
        for rid, engine, text in notes:
            print("  - #%d %s %s" % (rid, engine, text))
        print()
    print("ten worst against the roofline: " + ", ".join(
        "#%d %.2f" % (r["id"], r["ratios"]["ovpool/roofline"] or 0) for r in worst))
    slower = [r for r in results if (r["ratios"]["ovpool/best_peer"] or 0) > 1]
    print("slower than the best peer: %d of %d" % (
        len(slower), sum(1 for r in results if r["ratios"]["ovpool/best_peer"])))
    print(summary_line("ovpool/roofline", roof))
    print(summary_line("ovpool/best_peer", peer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
