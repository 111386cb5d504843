#!/usr/bin/env python
"""Per-call time of ovpool's pooling inside OpenVINO against OpenVINO's own.

For each case of docs/performance.md (default 1, 6, 7 and 8, plus "s": a 1x64x8x8 max pool),
the one-op OpenVINO model of pooling_cases.py is compiled by the CPU plugin three ways: as built
("native" OpenVINO), after ``ovpool.openvino.replace_pooling`` swapped its pooling node for the
Python bridge's ("bridge"), and read back from IR by a Core with ovpool's native extension
library ("library", ``core.add_extension(libovpool_extension.so)``, no Python in the call). All
run on the same bound input and output buffers with the shared harness (harness.py: same
threads, warm-up, best of 5 interleaved batches) next to the bare kernel call
``ovpool.<op>(x, out=...)`` ("kernel"), and their outputs are compared.

Usage:
    python benchmarks/bench_bridge.py [--case N ...] [--threads N] [--library PATH]

Without --library the library built by ``python -m ovpool.native.build`` is used, if any. The
last lines are the geometric means of bridge / native and library / kernel.
"""

import argparse
import os
import tempfile

import harness
import pooling_cases

DEFAULT_CASES = "1,6,7,8,s"
# A small pooling, where per-call overheads dominate.
SMALL = pooling_cases.case(id=101, name="small max pool", shape=(1, 64, 8, 8), op="max",
                           kernel=(3, 3), strides=(2, 2), pads=(1, 1))


def _through_library(core, model, directory):
    """The model saved as IR and read back by `core`, whose native extension turns the
    pooling node into ovpool's."""
    path = os.path.join(directory, "model.xml")
    harness.ov.save_model(model, path, compress_to_fp16=False)
    read = core.read_model(path)
    if not any(op.get_type_info().version_id == "ovpool" for op in read.get_ordered_ops()):
        raise RuntimeError("the native library did not take over the pooling node")
    return read


def time_case(case, threads, batch_s, warmup_s, n_batches, library, ovpool):
    from ovpool.openvino import replace_pooling

    x = pooling_cases.case_input(case)
    openvino = pooling_cases.OpenVINO()
    variant, hint, label = openvino.formulations(case)[0]
    core = harness.ov.Core()
    native = harness.ov_bound(core, openvino.model(case, x.dtype, variant), x, hint, threads)
    model = openvino.model(case, x.dtype, variant)
    replaced = replace_pooling(model, implementation="python")
    if replaced != 1:
        raise RuntimeError(f"replace_pooling swapped {replaced} nodes, expected one")
    bridged = harness.ov_bound(core, model, x, hint, threads)
    timers = [harness.Timer("native", label, native[0]),
              harness.Timer("bridge", label, bridged[0])]
    (kernel,) = pooling_cases.Ovpool(ovpool, out=True).variants(
        case, x, pooling_cases.output_shape(case), threads)
    timers.append(harness.Timer("kernel", kernel.label, kernel.fn))
    lib = None
    with tempfile.TemporaryDirectory() as directory:
        if library:
            lib_core = harness.ov.Core()
            lib_core.add_extension(library)
            lib = harness.ov_bound(lib_core, _through_library(
                lib_core, openvino.model(case, x.dtype, variant), directory), x, hint, threads)
            timers.append(harness.Timer("library", label, lib[0]))
        harness.measure(timers, batch_s, warmup_s, n_batches)
    native[0]()
    bridged[0]()
    problems = [pooling_cases.cross_check(case, "native", native[1], "bridge", bridged[1])]
    if lib is not None:
        lib[0]()
        problems.append(pooling_cases.cross_check(case, "native", native[1], "library", lib[1]))
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
    if harness.ov is None:
        raise SystemExit(f"openvino is needed: {harness.MISSING['openvino']}")
    ovpool, error = harness.import_ovpool()
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
    ids = pooling_cases.parse_cases([t for t in tokens if t != "s"]) \
        if any(t != "s" for t in tokens) else []
    cases = [pooling_cases.find(cid) for cid in ids] + ([SMALL] if small else [])
    print(f"ovpool's pooling inside OpenVINO vs OpenVINO's own: {args.threads} thread(s), "
          f"best of 5 batches of ~0.1 s; OpenVINO {harness.ov.get_version()}")
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
    harness.print_rows(head, rows, left=set(range(len(head))))
    print(f"geomean bridge/native: {harness.geomean(bridge_ratios):.2f}")
    if library_ratios:
        print(f"geomean library/kernel: {harness.geomean(library_ratios):.2f}")


if __name__ == "__main__":
    main()
