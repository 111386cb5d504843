#!/usr/bin/env python
"""Pooling benchmark for ovpool against OpenVINO CPU, onnxruntime CPU and torch.

Implements the method of docs/performance.md: the same input arrays
for every engine, the same thread count for every engine (2 unless --threads),
a memory roofline measured in the same run, warm-up followed by 5 batches of
about 0.1 s each per engine; the best batch gives the per-call time.

The batches of all engines of one case are interleaved (round 1: every engine
runs one batch, round 2: ...), so a burst of noise from other work on the
machine tends to hit every engine rather than only one of them.

Ratios use the ovpool time with a preallocated ``out=`` (and ``out_indices=``),
because that is the kernel's own cost; the call without ``out=`` is reported
too and shows the allocation cost.

The cases are data and every engine has one adapter (pooling_cases.py, which
describes how each peer is set up to be as fast as it honestly can be); the
timing, the roofline and the table come from harness.py, shared by every
script here. The runtime path's overhead is timed by bench_runtime.py.
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
import json
import math
import os
import platform
import sys

import numpy as np

import harness
import pooling_cases
from harness import NoOp

PEERS = ("openvino", "onnxruntime", "torch")


def run_case(case, adapters, threads, batch_s, warmup_s, n_batches, checks):
    """Time every engine's variants of ``case`` against the roofline, interleaved, and
    cross-check their outputs; ``checks`` counts the comparisons ("done") and mismatches
    ("bad")."""
    x = pooling_cases.case_input(case)
    oshape = pooling_cases.output_shape(case)
    result = dict(id=case["id"], name=case["name"], shape=list(case["shape"]),
                  dtype=case["dtype"], output_shape=list(oshape), times_ms={},
                  variants_ms={}, notes=[])

    timers = [harness.Timer("roofline", "np.copyto in + out",
                            pooling_cases.make_roofline(case, x, oshape))]
    outputs = []   # (name, outputs) of every variant that keeps its outputs; ovpool's first
    for adapter in adapters:
        engine = adapter.engine
        if not adapter.available():
            continue
        try:
            for label, fn, outs, info in adapter.variants(case, x, oshape, threads):
                if info:
                    result["notes"].append("%s [%s] %s" % (engine, label, info))
                if fn is None:
                    continue
                r = fn()
                if outs is None and r is not None:   # a call that allocates its result
                    rv = r[0] if isinstance(r, tuple) else r
                    if tuple(rv.shape) != tuple(oshape):
                        result["notes"].append("%s output shape %s != expected %s"
                                               % (engine, tuple(rv.shape), oshape))
                timers.append(harness.Timer(engine, label, fn))
                if outs is not None:
                    outputs.append(("ovpool" if engine == "ovpool_out" else
                                    "%s [%s]" % (engine, label), outs))
        except NoOp as exc:
            result["times_ms"][engine] = "no op"
            result["notes"].append("%s: %s" % (engine, exc))
        except Exception as exc:
            result["times_ms"][engine] = None
            result["notes"].append("%s failed: %s: %s" % (engine, type(exc).__name__, exc))

    harness.measure(timers, batch_s, warmup_s, n_batches)

    # cross-check after timing (outputs hold the last call's results)
    if outputs:
        (ref_name, ref_outs), others = outputs[0], outputs[1:]
        for name, outs in others:
            try:
                msg = pooling_cases.cross_check(case, ref_name, ref_outs, name, outs)
            except Exception as exc:
                msg = "cross-check %s vs %s raised %s" % (ref_name, name, exc)
            checks["done"] += 1
            if msg:
                checks["bad"] += 1
                result["notes"].append("WARNING " + msg)

    # collect: per engine the best over its variants
    for t in timers:
        if t.error:
            result["notes"].append("%s [%s] failed while timing: %s" % (t.engine, t.label, t.error))
            continue
        result["variants_ms"].setdefault(t.engine, {})[t.label] = t.best() * 1e3
    for engine, vs in result["variants_ms"].items():
        label = min(vs, key=vs.get)
        result["times_ms"][engine] = vs[label]
        if len(vs) > 1:
            result["notes"].append("%s: %s; column shows %s" % (
                engine, ", ".join("%s %.3f ms" % kv for kv in vs.items()), label))
    for engine in ("ovpool", "ovpool_out") + PEERS:
        result["times_ms"].setdefault(engine, None)

    tm = result["times_ms"]
    peers = {e: tm[e] for e in PEERS if isinstance(tm[e], float)}
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


def print_table(results):
    head = ["#", "case", "shape", "roofline", "ovpool", "ovpool(out=)", "OpenVINO",
            "onnxruntime", "torch", "ovp/best", "ovp/roof"]
    rows = []
    for r in results:
        tm = r["times_ms"]
        shape = "x".join(str(d) for d in r["shape"]) + (" f16" if r["dtype"] == "float16" else "")
        rows.append([str(r["id"]), r["name"], shape] +
                    [harness.fmt_ms(tm.get(e)) for e in ("roofline", "ovpool", "ovpool_out")
                     + PEERS] +
                    [harness.fmt_ratio(r["ratios"]["ovpool/best_peer"]),
                     harness.fmt_ratio(r["ratios"]["ovpool/roofline"])])
    harness.print_rows(head, rows, left={1, 2})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", action="append", metavar="N",
                    help="case number(s) to run; repeatable or comma-separated (default: all)")
    harness.add_run_arguments(ap)
    args = ap.parse_args(argv)
    batch_s, warmup_s, n_batches = harness.batches(args)
    ids = pooling_cases.parse_cases(args.case)
    threads = args.threads

    notes = []
    ovpool, ovpool_err = harness.import_ovpool()
    if ovpool is None:
        notes.append("ovpool not importable (%s): ovpool columns are '-'" % ovpool_err)
    else:
        try:
            ovpool.set_num_threads(threads)
        except Exception as exc:
            notes.append("ovpool.set_num_threads(%d) failed: %s" % (threads, exc))
    if harness.ov is None:
        notes.append("openvino not importable (%s)" % harness.MISSING["openvino"])
    if harness.ort is None:
        notes.append("onnxruntime/onnx not importable (%s)" % harness.MISSING["onnxruntime"])
    if harness.torch is None:
        notes.append("torch %s: torch column is '-'" % harness.MISSING["torch"])

    versions = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "ovpool": getattr(ovpool, "__version__", "?") if ovpool is not None else None,
        "openvino": harness.ov.get_version() if harness.ov is not None else None,
        "onnxruntime": harness.ort.__version__ if harness.ort is not None else None,
        "torch": harness.torch.__version__ if harness.torch is not None else None,
    }
    print("ovpool pooling benchmark: %d thread(s) for every engine, %s" % (
        threads, "QUICK mode (rough numbers)" if args.quick else
        "best of %d batches of ~%.1f s" % (n_batches, batch_s)))
    print("versions: " + ", ".join("%s %s" % (k, v) for k, v in versions.items() if v))
    if ovpool is not None:
        print(harness.describe_ovpool(ovpool))
    print("machine: %s, %d cpu(s)" % (platform.processor() or platform.machine(),
                                      os.cpu_count() or 0))

    adapters = pooling_cases.adapters(ovpool)
    checks = {"done": 0, "bad": 0}   # cross-checks of outputs between engines
    results = []
    for cid in ids:
        case = pooling_cases.find(cid)
        print("case %d: %s ..." % (cid, case["name"]), file=sys.stderr, flush=True)
        results.append(run_case(case, adapters, threads, batch_s, warmup_s, n_batches, checks))
        gc.collect()

    gm_peer = harness.geomean([r["ratios"]["ovpool/best_peer"] for r in results])
    gm_roof = harness.geomean([r["ratios"]["ovpool/roofline"] for r in results])

    notes.append("outputs cross-checked between engines (values; indices where both give them): "
                 "%d comparisons, %d mismatches" % (checks["done"], checks["bad"]))

    if args.json:
        doc = dict(threads=threads, quick=args.quick, versions=versions,
                   batch_seconds=batch_s, batches=n_batches, cases=results, notes=notes,
                   geomean={"ovpool/best_peer": None if math.isnan(gm_peer) else gm_peer,
                            "ovpool/roofline": None if math.isnan(gm_roof) else gm_roof})
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=2)

    print()
    print("notes:")
    for n in notes:
        print("  - " + n)
    for r in results:
        for n in r["notes"]:
            print("  - case %d: %s" % (r["id"], n))
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
