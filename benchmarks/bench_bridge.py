#!/usr/bin/env python
"""Per-call time of ovpool's pooling inside OpenVINO (the bridge) against OpenVINO's own.

For each case of docs/benchmarks.md (default 1, 6, 7 and 8), the one-op OpenVINO model of
bench_pooling.py is compiled twice by the CPU plugin: as built, and after
``ovpool.openvino.replace_pooling`` swapped its pooling node for ovpool's. Both run on the same
bound input and output buffers with the method of bench_pooling.py (same threads for both,
warm-up, best of 5 interleaved batches), and their outputs are compared.

Usage:
    python benchmarks/bench_bridge.py [--case N ...] [--threads N]

The last line is the geometric mean of bridge / native.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_pooling as bench  # noqa: E402

DEFAULT_CASES = "1,6,7,8"


def time_case(case, threads, batch_s, warmup_s, n_batches):
    from ovpool.openvino import replace_pooling

    rng = np.random.default_rng(1000 + case["id"])
    x = rng.standard_normal(case["shape"], dtype=np.float32).astype(case["dtype"])
    variant, hint, label = bench._ov_variants(case)[0]
    core = bench.ov.Core()
    replaced = []
    native = bench._ov_one(core, case, x, variant, hint, label, threads)
    bridged = bench._ov_one(core, case, x, variant, hint, label, threads,
                            transform=lambda model: replaced.append(replace_pooling(model)))
    if replaced != [1]:
        raise RuntimeError(f"replace_pooling swapped {replaced} nodes, expected one")
    timers = [bench.Timer("native", label, native[1]), bench.Timer("bridge", label, bridged[1])]
    bench.measure(timers, batch_s, warmup_s, n_batches)
    native[1]()
    bridged[1]()
    problem = bench.cross_check(case, "native", native[2], "bridge", bridged[2])
    return label, timers[0].best() * 1e3, timers[1].best() * 1e3, problem


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", metavar="N",
                        help=f"case number(s), repeatable or comma-separated "
                             f"(default {DEFAULT_CASES})")
    parser.add_argument("--threads", type=int, default=2, help="threads (default 2)")
    args = parser.parse_args(argv)
    if bench.ov is None:
        raise SystemExit(f"openvino is needed: {bench._OV_ERR}")
    ovpool, error = bench._try_import_ovpool()
    if ovpool is None:
        raise SystemExit(f"ovpool is not importable: {error}")
    ovpool.set_num_threads(args.threads)
    ids = bench.parse_cases(args.case or [DEFAULT_CASES])
    print(f"ovpool's pooling inside OpenVINO vs OpenVINO's own: {args.threads} thread(s), "
          f"best of 5 batches of ~0.1 s; OpenVINO {bench.ov.get_version()}")
    rows, ratios = [], []
    for cid in ids:
        case = next(c for c in bench.CASES if c["id"] == cid)
        label, native_ms, bridge_ms, problem = time_case(case, args.threads, 0.1, 0.05, 5)
        ratio = bridge_ms / native_ms
        ratios.append(ratio)
        shape = "x".join(map(str, case["shape"]))
        rows.append((str(cid), case["name"], shape, label, f"{native_ms:.3f}",
                     f"{bridge_ms:.3f}", f"{ratio:.2f}", problem or "outputs equal"))
    head = ("#", "case", "shape", "op", "native ms", "bridge ms", "bridge/native", "check")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for row in (head, tuple("-" * w for w in widths), *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    print(f"geomean bridge/native: {bench.geomean(ratios):.2f}")


if __name__ == "__main__":
    main()
