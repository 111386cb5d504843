#!/usr/bin/env python
"""Per-call time of ovpool's pooling inside OpenVINO against OpenVINO's own.

For each case of docs/benchmarks.md (default 1, 6, 7 and 8, plus "s": a 1x64x8x8 max pool),
the one-op OpenVINO model of bench_pooling.py is compiled by the CPU plugin three ways: as built
("native" OpenVINO), after ``ovpool.openvino.replace_pooling`` swapped its pooling node for the
Python bridge's ("bridge"), and read back from IR by a Core with ovpool's native extension
library ("library", ``core.add_extension(libovpool_extension.so)``, no Python in the call). All
run on the same bound input and output buffers with the method of bench_pooling.py (same
threads, warm-up, best of 5 interleaved batches) next to the bare kernel call
``ovpool.<op>(x, out=...)`` ("kernel"), and their outputs are compared.

Usage:
    python benchmarks/bench_bridge.py [--case N ...] [--threads N] [--library PATH]

Without --library the library built by ``python -m ovpool.native.build`` is used, if any. The
last lines are the geometric means of bridge / native and library / kernel.
"""

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_pooling as bench  # noqa: E402

DEFAULT_CASES = "1,6,7,8,s"
# A small pooling, where per-call overheads dominate.
SMALL = dict(id=101, name="small max pool", shape=(1, 64, 8, 8), kind="max", kernel=(3, 3),
             strides=(2, 2), pads=(1, 1), dtype="float32")


def _through_library(core, directory):
    """A transform for bench._ov_one: the model saved as IR and read back by `core`, whose
    native extension turns the pooling node into ovpool's."""
    def transform(model):
        path = os.path.join(directory, "model.xml")
        bench.ov.save_model(model, path, compress_to_fp16=False)
        read = core.read_model(path)
        if not any(op.get_type_info().version_id == "ovpool" for op in read.get_ordered_ops()):
            raise RuntimeError("the native library did not take over the pooling node")
        return read
    return transform


def time_case(case, threads, batch_s, warmup_s, n_batches, library, ovpool):
    from ovpool.openvino import replace_pooling

    rng = np.random.default_rng(1000 + case["id"])
    x = rng.standard_normal(case["shape"], dtype=np.float32).astype(case["dtype"])
    variant, hint, label = bench._ov_variants(case)[0]
    core = bench.ov.Core()
    replaced = []
    native = bench._ov_one(core, case, x, variant, hint, label, threads)
    bridged = bench._ov_one(core, case, x, variant, hint, label, threads,
                            transform=lambda model: replaced.append(
                                replace_pooling(model, implementation="python")))
    if replaced != [1]:
        raise RuntimeError(f"replace_pooling swapped {replaced} nodes, expected one")
    timers = [bench.Timer("native", label, native[1]), bench.Timer("bridge", label, bridged[1])]
    _, kernel, _ = bench.ovpool_calls(ovpool, case, x, bench.output_shape(case))
    timers.append(bench.Timer("kernel", "ovpool out=", kernel))
    lib = None
    with tempfile.TemporaryDirectory() as directory:
        if library:
            lib_core = bench.ov.Core()
            lib_core.add_extension(library)
            lib = bench._ov_one(lib_core, case, x, variant, hint, label, threads,
                                transform=_through_library(lib_core, directory))
            timers.append(bench.Timer("library", label, lib[1]))
        bench.measure(timers, batch_s, warmup_s, n_batches)
    native[1]()
    bridged[1]()
    problems = [bench.cross_check(case, "native", native[2], "bridge", bridged[2])]
    if lib is not None:
        lib[1]()
        problems.append(bench.cross_check(case, "native", native[2], "library", lib[2]))
    times = [t.best() * 1e3 if t.best() else float("nan") for t in timers]
    return label, times, "; ".join(p for p in problems if p)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", metavar="N",
                        help=f"case number(s) or 's' (the small max pool), repeatable or "
                             f"comma-separated (default {DEFAULT_CASES})")
    parser.add_argument("--threads", type=int, default=2, help="threads (default 2)")
    parser.add_argument("--library", help="libovpool_extension.so (default: the built one)")
    args = parser.parse_args(argv)
    if bench.ov is None:
        raise SystemExit(f"openvino is needed: {bench._OV_ERR}")
    ovpool, error = bench._try_import_ovpool()
    if ovpool is None:
        raise SystemExit(f"ovpool is not importable: {error}")
    library = args.library
    if library is None:
        from ovpool.native.build import library_path
        library = library_path()
        if library is None:
            print("no native library (python -m ovpool.native.build builds it): the library "
                  "column is empty")
    ovpool.set_num_threads(args.threads)
    tokens = ",".join(args.case or [DEFAULT_CASES]).split(",")
    small = "s" in tokens
    ids = bench.parse_cases([t for t in tokens if t != "s"]) if any(t != "s" for t in tokens) else []
    cases = [next(c for c in bench.CASES if c["id"] == cid) for cid in ids] + ([SMALL] if small else [])
    print(f"ovpool's pooling inside OpenVINO vs OpenVINO's own: {args.threads} thread(s), "
          f"best of 5 batches of ~0.1 s; OpenVINO {bench.ov.get_version()}")
    rows, bridge_ratios, library_ratios = [], [], []
    for case in cases:
        label, (native_ms, bridge_ms, kernel_ms, *library_ms), problem = time_case(
            case, args.threads, 0.1, 0.05, 5, library and str(library), ovpool)
        bridge_ratios.append(bridge_ms / native_ms)
        lib_ms = library_ms[0] if library_ms else float("nan")
        if library_ms:
            library_ratios.append(lib_ms / kernel_ms)
        shape = "x".join(map(str, case["shape"]))
        rows.append(("s" if case is SMALL else str(case["id"]), case["name"], shape, label,
                     f"{native_ms:.3f}", f"{bridge_ms:.3f}", f"{lib_ms:.3f}", f"{kernel_ms:.3f}",
                     f"{bridge_ms / native_ms:.2f}", f"{lib_ms / native_ms:.2f}",
                     f"{lib_ms / kernel_ms:.2f}", problem or "outputs equal"))
    head = ("#", "case", "shape", "op", "native ms", "bridge ms", "library ms", "kernel ms",
            "bridge/native", "library/native", "library/kernel", "check")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for row in (head, tuple("-" * w for w in widths), *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    print(f"geomean bridge/native: {bench.geomean(bridge_ratios):.2f}")
    if library_ratios:
        print(f"geomean library/kernel: {bench.geomean(library_ratios):.2f}")


if __name__ == "__main__":
    main()
