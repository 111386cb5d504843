#!/usr/bin/env python
"""Streaming and Dask benchmark: ``ovpool run --batch-size`` over an input larger than a
comfortable in-memory run, against the in-memory run, and a two-worker LocalCluster against
one process.

It writes a float32 input of ``--size`` bytes (default 4 GB) for ``samples/models/
pooling_chain.xml`` (dynamic batch, 3x32x32 items, two outputs) into ``--dir``, plus an
in-memory-sized file (``--fit``, default 1 GB, the first items of the big one), then runs the
``ovpool run`` command in child processes and reports for each run: items/s over the whole
command (reading the input, running, writing the outputs; interpreter start-up excluded) and
the child's peak resident memory (``VmHWM``, which counts mapped file pages; Linux only). For
streaming runs the rate of the chunk loop alone is shown too ("loop items/s": without reading
the model, and for the cluster without starting it).

    python benchmarks/bench_streaming.py                      # 4 GB in /tmp
    python benchmarks/bench_streaming.py --size 1G --fit 256M --dir /scratch

Runs, in order:
  in-memory    ovpool run MODEL -i fit.npy -o out.npz           (the whole input loaded)
  streaming    ovpool run MODEL -i big.npy --batch-size B -o out.npz
  one process  the streaming run with one kernel thread (--threads 1)
  LocalCluster the streaming run with --dask local:2 (two single-threaded worker processes)

The last lines are the figures: streaming/in-memory throughput, streaming peak RSS, and
LocalCluster/one-process throughput. The generated files are deleted at the end.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL = os.path.join(ROOT, "samples", "models", "pooling_chain.xml")
ITEM = (3, 32, 32)

# Run in the child: time the command itself, not the interpreter's start-up.
CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from ovpool.cli import main
start = time.perf_counter()
code = main(sys.argv[1:])
seconds = time.perf_counter() - start
# VmHWM: this process's peak resident memory (mapped file pages included). Unlike wait4's
# ru_maxrss it does not inherit the parent's peak across fork and exec.
peak = next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]
print(f"BENCH_SECONDS {{seconds:.6f}} BENCH_PEAK_KB {{peak}}", flush=True)
sys.exit(code)
"""


def parse_size(text):
    match = re.fullmatch(r"([0-9.]+)\s*([KMGT]?)B?", text.strip().upper())
    if not match:
        raise argparse.ArgumentTypeError(f"expected a size like 4G or 512M, got {text!r}")
    return int(float(match.group(1)) * 1000 ** " KMGT".index(match.group(2) or " "))


def write_input(path, items, seed=0, block=16384):
    """A float32 .npy of ``items`` x 3x32x32, written block by block (never whole in memory)."""
    rng = np.random.default_rng(seed)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(items, *ITEM))
    for start in range(0, items, block):
        stop = min(start + block, items)
        out[start:stop] = rng.random((stop - start, *ITEM), dtype=np.float32)
    out.flush()
    del out


def copy_head(source, target, items):
    big = np.load(source, mmap_mode="r")
    np.save(target, big[:items])
    del big


def run_measured(args, label, threads=None):
    """(seconds of the command, peak RSS in bytes, items/s of the chunk loop or None)."""
    command = [sys.executable, "-c", CHILD.format(root=ROOT), "run", MODEL, *args]
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"{label} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    measured = re.search(r"BENCH_SECONDS ([0-9.]+) BENCH_PEAK_KB ([0-9]+)", result.stdout)
    loop = re.search(r"streamed [0-9]+ items in chunks of [0-9]+: [0-9.]+ s, ([0-9.]+) items/s",
                     result.stdout)
    return (float(measured.group(1)), int(measured.group(2)) * 1024,
            float(loop.group(1)) if loop else None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=parse_size, default=parse_size("4G"),
                        help="bytes of the streamed input (default 4G = 4e9)")
    parser.add_argument("--fit", type=parse_size, default=parse_size("1G"),
                        help="bytes of the in-memory run's input (default 1G)")
    parser.add_argument("--batch-size", type=int, default=4096,
                        help="items per chunk (default 4096: 50 MB of input)")
    parser.add_argument("--dir", default=tempfile.gettempdir(),
                        help="where the inputs and outputs go (default: the temp directory)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()

    item_bytes = int(np.prod(ITEM)) * 4
    items, fit_items = args.size // item_bytes, args.fit // item_bytes
    work = tempfile.mkdtemp(prefix="ovpool-bench-streaming-", dir=args.dir)
    big, fit = os.path.join(work, "big.npy"), os.path.join(work, "fit.npy")
    try:
        start = time.perf_counter()
        write_input(big, items)
        copy_head(big, fit, fit_items)
        print(f"inputs: {big} {items} x {ITEM} float32 ({os.path.getsize(big) / 1e9:.2f} GB), "
              f"{fit} {fit_items} items ({os.path.getsize(fit) / 1e9:.2f} GB); written in "
              f"{time.perf_counter() - start:.1f} s")
        print(f"model: {MODEL}; cores: {len(os.sched_getaffinity(0))}; chunks of "
              f"{args.batch_size} items ({args.batch_size * item_bytes / 1e6:.0f} MB)")
        out = os.path.join(work, "out.npz")

        results = {}
        runs = [
            ("in-memory", ["-i", fit, "-o", out], None, fit_items),
            ("streaming", ["-i", big, "--batch-size", str(args.batch_size), "-o", out], None,
             items),
            ("streaming, in-memory size", ["-i", fit, "--batch-size", str(args.batch_size),
                                           "-o", out], None, fit_items),
            ("one process, 1 thread", ["-i", big, "--batch-size", str(args.batch_size), "-o",
                                       out, "--threads", "1"], 1, items),
            ("LocalCluster, 2 workers", ["-i", big, "--batch-size", str(args.batch_size), "-o",
                                         out, "--dask", "local:2"], 1, items),
        ]
        print(f"{'run':<26} {'items':>9} {'seconds':>8} {'items/s':>9} {'GB/s':>6} "
              f"{'peak RSS':>9} {'loop items/s':>13}")
        for label, run_args, threads, count in runs:
            seconds, rss, loop = run_measured(run_args, label, threads)
            rate = count / seconds
            results[label] = (rate, rss, loop)
            print(f"{label:<26} {count:>9} {seconds:>8.2f} {rate:>9.0f} "
                  f"{rate * item_bytes / 1e9:>6.2f} {rss / 2**20:>7.0f} M "
                  f"{'-' if loop is None else f'{loop:.0f}':>13}", flush=True)
            if os.path.exists(out):
                os.unlink(out)

        ratio = results["streaming"][0] / results["in-memory"][0]
        rss = results["streaming"][1]
        cluster = results["LocalCluster, 2 workers"][2] / results["one process, 1 thread"][2]
        cluster_whole = results["LocalCluster, 2 workers"][0] / \
            results["one process, 1 thread"][0]
        print(f"streaming/in-memory throughput: {ratio:.2f} (target >= 0.8)")
        print(f"streaming peak RSS: {rss / 2**20:.0f} MiB for a {os.path.getsize(big) / 1e9:.1f} "
              f"GB input (target < 1024 MiB)")
        print(f"LocalCluster(2 workers)/one process throughput: {cluster:.2f} over the chunk "
              f"loop, {cluster_whole:.2f} including the cluster's start-up")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
