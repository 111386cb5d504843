#!/usr/bin/env python
"""Per-call overhead of ovpool's IR runtime path: ``ovpool.compile_model(one-layer IR)(x)``
against the bare kernel call ``ovpool.max_pool(x, ...)`` it ends in.

The layer is case 1 of docs/performance.md (the ResNet stem max pool, 1x64x112x112), written
as IR by OpenVINO (MaxPool-14 with only the values output connected, as OpenVINO's converters
emit it; MaxPool-1 if that fails), and the same layer on a 1x64x8x8 input: the case-1 kernel
takes ~0.1-1 ms, so on a shared machine its noise can exceed the ~10 us being measured, while
the tiny input shows the fixed per-call cost on its own. Timed with the method of
bench_pooling.py (harness.py: warm-up, interleaved batches, best batch).

Usage:
    python benchmarks/bench_runtime.py [--threads N] [--json FILE] [--quick]

One line per input: the compiled call, the bare call (and with out=), and the overhead.
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np

import harness
import pooling_cases


def runtime_one(ovpool, case, tmp, batch_s, warmup_s, n_batches):
    """Time compiled(x) for a one-layer IR of ``case`` against the bare kernel call."""
    x = np.random.default_rng(7).standard_normal(case["shape"], dtype=np.float32)
    k, s, p = list(case["kernel"]), list(case["strides"]), list(case["pads"])
    info = {"shape": list(case["shape"])}
    compiled = None
    errors = []
    # MaxPool-14 with only the values output connected is what OpenVINO's
    # converters emit for a plain max pool; MaxPool-1 is the fallback.
    for variant in ("opset14", "opset1"):
        model = pooling_cases.OpenVINO().model(case, np.float32, variant)
        path = os.path.join(tmp, "maxpool_%s_%s.xml" % (
            "x".join(map(str, case["shape"])), variant))
        harness.ov.save_model(model, path, compress_to_fp16=False)
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

    out = np.empty(pooling_cases.output_shape(case), np.float32)
    mp = ovpool.max_pool

    def bare():
        return mp(x, k, strides=s, pads_begin=p, pads_end=p, return_indices=False)

    def bare_out():
        return mp(x, k, strides=s, pads_begin=p, pads_end=p, return_indices=False, out=out)

    timers = [harness.Timer("compiled", info["call"], call),
              harness.Timer("bare", "max_pool", bare),
              harness.Timer("bare_out", "max_pool out=", bare_out)]
    harness.measure(timers, batch_s, warmup_s, n_batches)
    for t in timers:
        if t.error:
            raise RuntimeError("%s failed: %s" % (t.label, t.error))
    us = {t.engine: t.best() * 1e6 for t in timers}
    info.update(compiled_us=us["compiled"], bare_us=us["bare"], bare_out_us=us["bare_out"],
                overhead_us=us["compiled"] - us["bare"])
    return info


def runtime_path(ovpool, batch_s, warmup_s, n_batches):
    """Returns (info or None, printable lines)."""
    case = pooling_cases.find(1)
    tiny = dict(case, shape=(1, 64, 8, 8))
    info = {}
    lines = []
    with tempfile.TemporaryDirectory(prefix="ovpool_bench_") as tmp:
        for key, c in (("case1", case), ("tiny", tiny)):
            try:
                r = runtime_one(ovpool, c, tmp, batch_s, warmup_s, n_batches)
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    harness.add_run_arguments(ap, threads_help="kernel threads (default 2)")
    args = ap.parse_args(argv)
    batch_s, warmup_s, n_batches = harness.batches(args)
    ovpool, err = harness.import_ovpool()
    if ovpool is None:
        raise SystemExit("ovpool not importable: %s" % err)
    if harness.ov is None:
        raise SystemExit("openvino is needed to write the IR: %s" % harness.MISSING["openvino"])
    ovpool.set_num_threads(args.threads)
    info, lines = runtime_path(ovpool, batch_s, warmup_s, n_batches)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(threads=args.threads, quick=args.quick, runtime_path=info,
                           runtime_path_lines=lines), fh, indent=2)
    for line in lines:
        print(line)
    return 0 if info else 1


if __name__ == "__main__":
    sys.exit(main())
