"""ovpool's pooling inside OpenVINO: a small CNN built with OpenVINO's opset API, saved as IR,
then run by OpenVINO's CPU plugin natively and with ovpool's pooling extensions; and an ONNX
model converted with ovpool's ONNX extensions, which keep ONNX's exact pooling semantics.

    python samples/openvino_extension.py [--out DIR]

Needs openvino (pip install 'ovpool[openvino]').
"""

import argparse
import os
import tempfile

import numpy as np
import openvino as ov
from openvino import opset1, opset8, opset14

import ovpool.errors
import ovpool.openvino as bridge

HERE = os.path.dirname(os.path.abspath(__file__))
CPU = {"INFERENCE_PRECISION_HINT": "f32"}   # keep f32 models in f32 on bf16-capable CPUs


def build_cnn(seed=0):
    """Convolution -> Relu -> MaxPool-14 -> Convolution -> Relu -> AvgPool-1 ->
    AdaptiveAvgPool-8 (global) -> Reshape -> MatMul, with seeded weights and a dynamic batch."""
    rng = np.random.default_rng(seed)

    def weights(*shape, scale):
        return opset8.constant((rng.standard_normal(shape) * scale).astype(np.float32))

    image = opset8.parameter([-1, 3, 64, 64], ov.Type.f32, name="image")
    x = opset8.relu(opset8.convolution(image, weights(16, 3, 3, 3, scale=0.3), [2, 2], [1, 1],
                                       [1, 1], [1, 1]))
    x = opset14.max_pool(x, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3], "ceil_torch").output(0)
    x = opset8.relu(opset8.convolution(x, weights(32, 16, 3, 3, scale=0.1), [1, 1], [1, 1],
                                       [1, 1], [1, 1]))
    x = opset1.avg_pool(x, [2, 2], [0, 0], [0, 0], [2, 2], True)
    x = opset8.adaptive_avg_pool(x, opset8.constant(np.array([1, 1], np.int64)))
    x = opset8.reshape(x, opset8.constant(np.array([-1, 32], np.int64)), False)
    logits = opset8.matmul(x, weights(32, 10, scale=0.5), False, False)
    logits.output(0).get_tensor().set_names({"logits"})
    return ov.Model([logits.output(0)], [image], "small_cnn")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="directory for small_cnn.xml/.bin (default: a temp dir)")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="ovpool-")
    path = os.path.join(out, "small_cnn.xml")
    ov.save_model(build_cnn(), path, compress_to_fp16=False)
    print(f"saved {path}")

    x = np.random.default_rng(1).standard_normal((4, 3, 64, 64)).astype(np.float32)

    native = ov.Core()
    expected = native.compile_model(path, "CPU", CPU)(x)["logits"]

    # 1. Register the extensions on a Core: read_model builds ovpool's ops for every pooling
    #    layer (a Core keeps its extensions; use another Core for native pooling). The Python
    #    bridge's ops are openvino.Op subclasses, shown here by their class names.
    core = ov.Core()
    bridge.add_extensions(core, implementation="python")
    model = core.read_model(path)
    print("pooling nodes:", [type(op).__name__ for op in model.get_ordered_ops()
                             if type(op).__name__.startswith("Ovpool")])
    got = core.compile_model(model, "CPU", CPU)(x)["logits"]
    print(f"read_model + extensions: max |difference| from native {np.abs(got - expected).max():.2g}")

    # 1b. The native extension library (C++, built by `ovpool build-extension`) does the same
    #     with no Python per call; any OpenVINO process can load it, C++ programs too.
    #     add_extensions(core) picks it by itself when it is built.
    try:
        library = bridge.extension_path()
    except ovpool.errors.UnsupportedError as error:
        print(f"native library: not available ({error})")
    else:
        fast = ov.Core()
        fast.add_extension(library)
        model = fast.read_model(path)
        print("native library nodes:", [op.get_type_info().name for op in model.get_ordered_ops()
                                        if op.get_type_info().version_id == bridge.OPSET])
        got = fast.compile_model(model, "CPU", CPU)(x)["logits"]
        print(f"native library: max |difference| from native {np.abs(got - expected).max():.2g}")

    # 2. Or swap the pooling nodes of a model already in memory.
    in_memory = build_cnn()
    print("replace_pooling replaced", bridge.replace_pooling(in_memory), "nodes")
    got = native.compile_model(in_memory, "CPU", CPU)(x)["logits"]
    print(f"replace_pooling: max |difference| from native {np.abs(got - expected).max():.2g}")

    # 3. ONNX models: ovpool's ONNX frontend extensions turn AveragePool / MaxPool nodes into
    #    ovpool ops with ONNX's exact semantics, which OpenVINO's own conversion lacks here
    #    (count_include_pad=1 windows hanging past the padding).
    onnx_path = os.path.join(HERE, "onnx", "avg_pool_include_pad_ceil.onnx")
    sample = np.load(os.path.join(HERE, "inputs", "onnx_avg_pool_include_pad_ceil.npy"))
    onnx_says = np.load(os.path.join(HERE, "expected", "onnxruntime",
                                     "onnx_avg_pool_include_pad_ceil.npz"))["pooled"]
    plain = native.compile_model(ov.convert_model(onnx_path), "CPU", CPU)(sample)["pooled"]
    converted = ov.convert_model(onnx_path, extension=bridge.onnx_extensions())
    exact = core.compile_model(converted, "CPU", CPU)(sample)["pooled"]
    print(f"ONNX AveragePool vs ONNX Runtime: OpenVINO's conversion max |difference| "
          f"{np.abs(plain - onnx_says).max():.2g}, with ovpool's extensions "
          f"{np.abs(exact - onnx_says).max():.2g}")
    onnx_xml = os.path.join(out, "avg_pool_include_pad_ceil.xml")
    ov.save_model(converted, onnx_xml, compress_to_fp16=False)
    print(f"saved {onnx_xml} (an OnnxAveragePool layer of the ovpool opset)")

    # 4. The same from the command line:
    print(f"try: ovpool run {path} --engine openvino --shape image=2,3,64,64")
    print(f"     ovpool check {path} --shape image=2,3,64,64")
    print(f"     ovpool run {onnx_xml}      (ovpool's runtime, no OpenVINO needed)")


if __name__ == "__main__":
    main()
