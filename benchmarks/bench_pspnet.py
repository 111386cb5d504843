#!/usr/bin/env python
"""End to end: a small PSPNet-style network run by OpenVINO with and without ovpool's pooling.

The network (built with torch, converted by ``openvino.convert_model``): three convolutions,
then a pyramid pooling module (adaptive average pooling to 1, 2, 3 and 6 bins, a 1x1
convolution and bilinear upsampling per bin, concatenated with the features) and a 3x3
convolution head; input 1x3x473x473 float32. OpenVINO turns the 2-, 3- and 6-bin poolings into
AdaptiveAvgPool-8 layers (the 1-bin one into ReduceMean, which ovpool leaves alone).

Engines, each a Core compiling the same IR on the CPU plugin with the same threads:
  openvino   OpenVINO's own pooling
  python     ovpool's Python bridge (ovpool.openvino.add_extensions(core, implementation="python"))
  native     ovpool's native extension library (core.add_extension(extension_path()))
Timed with the shared harness (harness.py: warm-up, best of 5 interleaved batches); outputs are
compared with OpenVINO's own. Needs torch (pip install torch) and openvino.

Usage:
    python benchmarks/bench_pspnet.py [--threads N]
"""

import argparse
import os
import tempfile

import numpy as np

import harness

SHAPE = (1, 3, 473, 473)
BINS = (1, 2, 3, 6)


def build_ir(folder):
    """Write the network as IR into ``folder``; returns the .xml path."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class PyramidPooling(nn.Module):
        def __init__(self, channels=64):
            super().__init__()
            self.stem = nn.Sequential(
                nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, channels, 3, 2, 1),
                nn.ReLU(), nn.Conv2d(channels, channels, 3, 1, 1), nn.ReLU())
            self.reduce = nn.ModuleList(nn.Conv2d(channels, channels // 4, 1) for _ in BINS)
            self.head = nn.Conv2d(2 * channels, 8, 3, 1, 1)

        def forward(self, x):
            features = self.stem(x)
            size = features.shape[2:]
            parts = [features] + [
                F.interpolate(conv(F.adaptive_avg_pool2d(features, bins)), size=size,
                              mode="bilinear", align_corners=False)
                for bins, conv in zip(BINS, self.reduce)]
            return self.head(torch.cat(parts, 1))

    torch.manual_seed(0)
    network = PyramidPooling().eval()
    model = harness.ov.convert_model(network, example_input=torch.zeros(SHAPE), input=[SHAPE])
    path = os.path.join(folder, "pspnet.xml")
    harness.ov.save_model(model, path, compress_to_fp16=False)
    return path


def compiled_runner(core, path, x, threads):
    """A zero-argument callable running the model on ``x`` (harness.ov_bound), the output
    buffer it fills, and how many of the model's nodes are ovpool's."""
    model = core.read_model(path)
    ovpool_nodes = sum(op.get_type_info().version_id == "ovpool" for op in model.get_ops())
    run, outputs, _ = harness.ov_bound(core, model, x, "f32", threads)
    return run, outputs[0], ovpool_nodes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="threads (default 2)")
    args = parser.parse_args(argv)
    if harness.ov is None:
        raise SystemExit(f"openvino is needed: {harness.MISSING['openvino']}")
    import ovpool
    import ovpool.openvino as bridge

    ovpool.set_num_threads(args.threads)
    x = np.random.default_rng(0).standard_normal(SHAPE, dtype=np.float32)
    with tempfile.TemporaryDirectory(prefix="ovpool-pspnet-") as folder:
        path = build_ir(folder)
        cores = {"openvino": harness.ov.Core(), "python": harness.ov.Core()}
        bridge.add_extensions(cores["python"], implementation="python")
        try:
            library = bridge.extension_path()
            cores["native"] = harness.ov.Core()
            cores["native"].add_extension(library)
        except ovpool.errors.UnsupportedError as error:
            print(f"native: skipped ({error})")
        runs = {name: compiled_runner(core, path, x, args.threads) for name, core in cores.items()}
        timers = [harness.Timer(name, "pspnet", run[0]) for name, run in runs.items()]
        harness.measure(timers, 0.5, 0.2, 5)
        reference = runs["openvino"][1]
        print(f"PSPNet-style network {'x'.join(map(str, SHAPE))}, {args.threads} thread(s), "
              f"OpenVINO {harness.ov.get_version()}")
        base = timers[0].best()
        for timer in timers:
            run = runs[timer.engine]
            difference = float(np.max(np.abs(run[1] - reference)))
            print(f"{timer.engine:9s} {timer.best() * 1e3:8.3f} ms  {timer.best() / base:5.2f} of "
                  f"openvino  max |diff| {difference:.2e}  ovpool nodes: {run[2]}")


if __name__ == "__main__":
    main()
