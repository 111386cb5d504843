"""Regenerate the sample IR models, their inputs and OpenVINO's outputs for them.

Run from anywhere with OpenVINO, onnx and numpy installed::

    python samples/make_samples.py            # writes into samples/
    python samples/make_samples.py --out DIR  # writes the same tree into DIR

Everything is deterministic: fixed seeds, fixed names, and .npz archives written with a fixed
timestamp, so running the script twice gives byte-identical files (for one OpenVINO version).

What gets written (see samples/README.md for the per-model details):

* ``models/<name>.xml`` + ``.bin``  IR v11 models saved by ``openvino.save_model`` (without fp16
  compression, except ``resnet_stem_fp16_weights``), built with OpenVINO's Python opsets or
  converted by OpenVINO from ONNX;
* ``onnx/<name>.onnx``              the small ONNX models the ``onnx_*`` IRs were converted from;
* ``inputs/<name>.npy``             one sample input per model (every model has one input);
* ``expected/<name>.npz``           OpenVINO CPU outputs for that input, keyed by output tensor
  name, computed with ``INFERENCE_PRECISION_HINT=f32``;
* ``expected/onnxruntime/<name>.npz``  ONNX Runtime's outputs for the ``onnx_*`` models, when
  onnxruntime is installed (the ONNX semantics, which OpenVINO may not follow everywhere).
"""

import argparse
import io
import os
import sys
import zipfile
import zlib

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper
from openvino import opset1, opset8, opset14, opset16

from ovpool import openvino as ovpool_openvino

HERE = os.path.dirname(os.path.abspath(__file__))
ONNX_OPSET = 13
ONNX_IR_VERSION = 9
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


# --------------------------------------------------------------------------- small helpers

def seed_for(name):
    """A fixed per-model seed, so adding a model does not change the others' inputs."""
    return zlib.crc32(name.encode("ascii"))


def sample_array(name, shape, dtype=np.float32, distinct=False):
    """Standard-normal data for one model; ``distinct`` guarantees no ties (for indices)."""
    rng = np.random.default_rng(seed_for(name))
    data = rng.standard_normal(shape).astype(dtype)
    if distinct:
        # Ties would make the argmax ambiguous; redraw until every value is different.
        while np.unique(data).size != data.size:
            data = rng.standard_normal(shape).astype(dtype)
    return data


def name_output(node, name, port=0):
    """Give output ``port`` of a node one readable tensor name."""
    node.output(port).get_tensor().set_names({name})
    return node


def named(node, friendly, tensor=None):
    """Set the layer (friendly) name and the name of output 0's tensor (default: the same)."""
    node.set_friendly_name(friendly)
    name_output(node, tensor or friendly)
    return node


def parameter(name, shape, dtype=ov.Type.f32):
    return named(opset1.parameter(ov.PartialShape(shape), dtype, name=name), name)


def constant(name, value):
    return named(opset1.constant(value), name)


def result(output, name):
    node = opset1.result(output)
    node.set_friendly_name(name)
    return node


def make_model(name, results, params):
    return ov.Model(results, params, name)


def write_npz(path, arrays):
    """Like ``np.savez`` (uncompressed, readable by ``np.load``) but with fixed zip timestamps."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for key, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            archive.writestr(info, buffer.getvalue())


# --------------------------------------------------------------------------- IR models

def avg_pool_16():
    data = parameter("input", [1, 3, 9, 10])
    pool = named(opset16.avg_pool(data, strides=[2, 2], pads_begin=[1, 0], pads_end=[0, 2],
                                  kernel_shape=[3, 3], exclude_pad=False, rounding_type="ceil",
                                  dilations=[2, 1]), "avg_pool", "pooled")
    return make_model("avg_pool_16", [result(pool, "pooled/sink_port_0")], [data])


def avg_pool_1():
    data = parameter("input", [2, 4, 7, 8])
    pool = named(opset1.avg_pool(data, strides=[2, 2], pads_begin=[0, 0], pads_end=[0, 0],
                                 kernel_shape=[3, 3], exclude_pad=True, rounding_type="floor",
                                 auto_pad="same_upper"), "avg_pool", "pooled")
    return make_model("avg_pool_1", [result(pool, "pooled/sink_port_0")], [data])


def avg_pool_14():
    data = parameter("input", [1, 2, 5, 7])
    pool = named(opset14.avg_pool(data, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
                                  kernel_shape=[2, 2], exclude_pad=True,
                                  rounding_type="ceil_torch"), "avg_pool", "pooled")
    return make_model("avg_pool_14", [result(pool, "pooled/sink_port_0")], [data])


def max_pool_1():
    data = parameter("input", [1, 3, 7, 8])
    pool = named(opset1.max_pool(data, strides=[2, 2], pads_begin=[1, 0], pads_end=[1, 1],
                                 kernel_shape=[3, 2], rounding_type="floor"), "max_pool", "pooled")
    return make_model("max_pool_1", [result(pool, "pooled/sink_port_0")], [data])


def max_pool_8():
    # Three spatial axes (NCDHW) to show that the IR ops are not limited to images.
    data = parameter("input", [2, 2, 4, 6, 6])
    pool = opset8.max_pool(data, strides=[1, 2, 2], dilations=[1, 2, 1], pads_begin=[0, 1, 0],
                           pads_end=[0, 1, 1], kernel_shape=[2, 2, 2], rounding_type="floor",
                           index_element_type="i64", axis=0)
    named(pool, "max_pool", "pooled")
    name_output(pool, "indices", port=1)
    return make_model("max_pool_8", [result(pool.output(0), "pooled/sink_port_0"),
                                     result(pool.output(1), "indices/sink_port_0")], [data])


def max_pool_14():
    data = parameter("input", [2, 3, 5, 7])
    pool = opset14.max_pool(data, strides=[2, 2], dilations=[1, 1], pads_begin=[1, 1],
                            pads_end=[1, 1], kernel_shape=[2, 2], rounding_type="ceil_torch",
                            index_element_type="i32", axis=2)
    named(pool, "max_pool", "pooled")
    name_output(pool, "indices", port=1)
    return make_model("max_pool_14", [result(pool.output(0), "pooled/sink_port_0"),
                                      result(pool.output(1), "indices/sink_port_0")], [data])


def adaptive_avg_pool_8():
    data = parameter("input", [1, 3, 7, 10])
    size = constant("output_size", np.array([3, 4], dtype=np.int64))
    pool = named(opset8.adaptive_avg_pool(data, size), "adaptive_avg_pool", "pooled")
    return make_model("adaptive_avg_pool_8", [result(pool, "pooled/sink_port_0")], [data])


def adaptive_max_pool_8():
    data = parameter("input", [2, 2, 9, 5])
    size = constant("output_size", np.array([4, 3], dtype=np.int32))
    pool = opset8.adaptive_max_pool(data, size, index_element_type="i32")
    named(pool, "adaptive_max_pool", "pooled")
    name_output(pool, "indices", port=1)
    return make_model("adaptive_max_pool_8", [result(pool.output(0), "pooled/sink_port_0"),
                                              result(pool.output(1), "indices/sink_port_0")],
                      [data])


def pooling_chain(name, dtype):
    data = parameter("input", [-1, 3, 32, 32], dtype)
    # MaxPool-8 has two outputs; only the values are used, the indices port stays unconnected.
    maxp = named(opset8.max_pool(data, strides=[2, 2], dilations=[1, 1], pads_begin=[1, 1],
                                 pads_end=[1, 1], kernel_shape=[3, 3]), "max_pool", "max_pooled")
    avgp = named(opset16.avg_pool(maxp.output(0), strides=[2, 2], pads_begin=[0, 0],
                                  pads_end=[1, 1], kernel_shape=[3, 3], exclude_pad=True,
                                  rounding_type="floor", dilations=[1, 1]), "avg_pool", "avg_pooled")
    size = constant("output_size", np.array([3, 3], dtype=np.int64))
    adap = named(opset8.adaptive_avg_pool(avgp, size), "adaptive_avg_pool", "features")
    axes = constant("spatial_axes", np.array([2, 3], dtype=np.int64))
    mean = named(opset1.reduce_mean(adap, axes, keep_dims=True), "global_mean", "mean")
    return make_model(name, [result(adap, "features/sink_port_0"),
                             result(mean, "mean/sink_port_0")], [data])


def resnet_stem(hand_compressed=True):
    data = parameter("image", [1, 3, 64, 64])
    # A per-channel scale and bias in front of the stem's max pool (a Convolution would go
    # there in a real network, but ovpool does not run convolutions).
    scale_values = np.array([0.5, 1.25, -0.75], np.float32).reshape(1, 3, 1, 1)
    if hand_compressed:
        # The scale stored as f16 and decompressed by a Convert, built by hand; save_model's own
        # compression (see resnet_stem_fp16_weights) gives the same graph plus rt_info markers.
        scale_f16 = constant("scale_f16", scale_values.astype(np.float16))
        scale = named(opset1.convert(scale_f16, ov.Type.f32), "scale")
    else:
        scale = constant("scale", scale_values)
    bias = constant("bias", np.array([0.1, -0.2, 0.3], np.float32).reshape(1, 3, 1, 1))
    scaled = named(opset1.multiply(data, scale), "scaled")
    shifted = named(opset1.add(scaled, bias), "shifted")
    pool = named(opset8.max_pool(shifted, strides=[2, 2], dilations=[1, 1], pads_begin=[1, 1],
                                 pads_end=[1, 1], kernel_shape=[3, 3]), "stem_pool", "stem_pooled")
    axes = constant("spatial_axes", np.array([2, 3], dtype=np.int64))
    mean = named(opset1.reduce_mean(pool.output(0), axes, keep_dims=False), "global_mean",
                 "embedding")
    name = "resnet_stem" if hand_compressed else "resnet_stem_fp16_weights"
    return make_model(name, [result(mean, "embedding/sink_port_0")], [data])


# name -> (builder, sample input shape, input dtype, distinct values needed)
IR_MODELS = {
    "avg_pool_16": (avg_pool_16, (1, 3, 9, 10), np.float32, False),
    "avg_pool_1": (avg_pool_1, (2, 4, 7, 8), np.float32, False),
    "avg_pool_14": (avg_pool_14, (1, 2, 5, 7), np.float32, False),
    "max_pool_1": (max_pool_1, (1, 3, 7, 8), np.float32, True),
    "max_pool_8": (max_pool_8, (2, 2, 4, 6, 6), np.float32, True),
    "max_pool_14": (max_pool_14, (2, 3, 5, 7), np.float32, True),
    "adaptive_avg_pool_8": (adaptive_avg_pool_8, (1, 3, 7, 10), np.float32, False),
    "adaptive_max_pool_8": (adaptive_max_pool_8, (2, 2, 9, 5), np.float32, True),
    "pooling_chain": (lambda: pooling_chain("pooling_chain", ov.Type.f32),
                      (2, 3, 32, 32), np.float32, False),
    "pooling_chain_f16": (lambda: pooling_chain("pooling_chain_f16", ov.Type.f16),
                          (2, 3, 32, 32), np.float16, False),
    "resnet_stem": (resnet_stem, (1, 3, 64, 64), np.float32, False),
    "resnet_stem_fp16_weights": (lambda: resnet_stem(hand_compressed=False),
                                 (1, 3, 64, 64), np.float32, False),
}

# Saved with save_model's default compress_to_fp16=True (every other model is saved without it):
# f32 Constants become f16 Constants named "<name>_compressed" plus a Convert carrying the
# layer-level rt_info attribute "decompression", which is how most users' IRs store weights.
FP16_COMPRESSED = {"resnet_stem_fp16_weights"}


# --------------------------------------------------------------------------- ONNX models

def onnx_model(name, node, input_shape, outputs):
    """One-node ONNX graph: input ``input`` -> node -> ``outputs`` (name -> (dtype, shape))."""
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(input_shape))],
        [helper.make_tensor_value_info(out, dtype, shape) for out, (dtype, shape) in outputs.items()])
    model = helper.make_model(graph, producer_name="ovpool-samples",
                              opset_imports=[helper.make_opsetid("", ONNX_OPSET)])
    model.ir_version = ONNX_IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


F32 = TensorProto.FLOAT
I64 = TensorProto.INT64

# name -> (ONNX model, sample input shape, distinct values needed)
ONNX_MODELS = {
    "global_avg_pool": (onnx_model(
        "global_avg_pool",
        helper.make_node("GlobalAveragePool", ["input"], ["pooled"], name="global_avg_pool"),
        (1, 3, 5, 6), {"pooled": (F32, [1, 3, 1, 1])}), (1, 3, 5, 6), False),
    "global_max_pool": (onnx_model(
        "global_max_pool",
        helper.make_node("GlobalMaxPool", ["input"], ["pooled"], name="global_max_pool"),
        (2, 3, 4, 5), {"pooled": (F32, [2, 3, 1, 1])}), (2, 3, 4, 5), True),
    "lp_pool": (onnx_model(
        "lp_pool",
        helper.make_node("LpPool", ["input"], ["pooled"], name="lp_pool",
                         p=2, kernel_shape=[2, 2], strides=[2, 2]),
        (1, 2, 6, 6), {"pooled": (F32, [1, 2, 3, 3])}), (1, 2, 6, 6), False),
    "max_pool_storage_order": (onnx_model(
        "max_pool_storage_order",
        helper.make_node("MaxPool", ["input"], ["pooled", "indices"], name="max_pool",
                         kernel_shape=[2, 2], strides=[2, 2], storage_order=1),
        (1, 2, 5, 6), {"pooled": (F32, [1, 2, 2, 3]), "indices": (I64, [1, 2, 2, 3])}),
        (1, 2, 5, 6), True),
    "avg_pool_include_pad_ceil": (onnx_model(
        "avg_pool_include_pad_ceil",
        helper.make_node("AveragePool", ["input"], ["pooled"], name="avg_pool",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         count_include_pad=1, ceil_mode=1),
        (1, 2, 6, 8), {"pooled": (F32, [1, 2, 4, 5])}), (1, 2, 6, 8), False),
}


# The ONNX models OpenVINO's own conversion gets wrong, converted again with ovpool's ONNX
# extensions into ovpool-opset layers (OnnxAveragePool, OnnxMaxPool).
OVPOOL_ONNX_MODELS = ("max_pool_storage_order", "avg_pool_include_pad_ceil")


# --------------------------------------------------------------------------- driver

def run_openvino(core, model, sample):
    compiled = core.compile_model(model, "CPU", CPU_CONFIG)
    outputs = compiled(sample)
    return {port.get_any_name(): np.asarray(outputs[port]) for port in compiled.outputs}


def save_sample(core, out_dir, name, model, sample):
    ov.save_model(model, os.path.join(out_dir, "models", name + ".xml"),
                  compress_to_fp16=name in FP16_COMPRESSED)
    np.save(os.path.join(out_dir, "inputs", name + ".npy"), sample)
    # Compile what was written, not the in-memory graph: this is exactly what ovpool will read.
    saved = core.read_model(os.path.join(out_dir, "models", name + ".xml"))
    expected = run_openvino(core, saved, sample)
    write_npz(os.path.join(out_dir, "expected", name + ".npz"), expected)
    return expected


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=HERE, help="output folder (default: samples/)")
    args = parser.parse_args(argv)

    for sub in ("models", "inputs", "expected", "onnx", os.path.join("expected", "onnxruntime")):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    core = ov.Core()

    for name, (build, shape, dtype, distinct) in IR_MODELS.items():
        sample = sample_array(name, shape, dtype, distinct)
        expected = save_sample(core, args.out, name, build(), sample)
        print(f"{name:32s}", ", ".join(f"{k} {v.dtype}{list(v.shape)}" for k, v in expected.items()))

    try:
        import onnxruntime
    except ImportError:
        onnxruntime = None
        print("onnxruntime not installed: expected/onnxruntime/ not refreshed", file=sys.stderr)

    for short, (proto, shape, distinct) in ONNX_MODELS.items():
        name = "onnx_" + short
        onnx_path = os.path.join(args.out, "onnx", short + ".onnx")
        onnx.save(proto, onnx_path)
        sample = sample_array(name, shape, np.float32, distinct)
        # convert_model records the source file in rt_info (conversion_parameters/input_model)
        # with its folder replaced by "DIR/", so the IR does not depend on the checkout location.
        model = ov.convert_model(onnx_path)
        expected = save_sample(core, args.out, name, model, sample)
        print(f"{name:32s}", ", ".join(f"{k} {v.dtype}{list(v.shape)}" for k, v in expected.items()))
        if onnxruntime is not None:
            session = onnxruntime.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
            names = [o.name for o in session.get_outputs()]
            reference = dict(zip(names, session.run(names, {"input": sample})))
            write_npz(os.path.join(args.out, "expected", "onnxruntime", name + ".npz"), reference)
            for key, value in reference.items():
                got = expected.get(key)
                same = got is not None and got.shape == value.shape and np.allclose(
                    got, value, rtol=1e-5, atol=1e-6)
                if not same:
                    print(f"  note: OpenVINO and ONNX Runtime differ on {key!r}")

    if onnxruntime is None:
        print("onnxruntime not installed: the ovpool_onnx_* models were not refreshed",
              file=sys.stderr)
        return 0
    extended = ov.Core()
    ovpool_openvino.add_extensions(extended)
    for short in OVPOOL_ONNX_MODELS:
        save_ovpool_onnx_sample(extended, args.out, short)
    return 0


def save_ovpool_onnx_sample(core, out_dir, short):
    """``models/ovpool_onnx_<short>.xml``: the ONNX model converted with ovpool's ONNX
    extensions, so its pooling is an ovpool-opset layer with ONNX's exact semantics. Its
    expected outputs are ONNX Runtime's; OpenVINO running ovpool's kernels must agree."""
    import onnxruntime

    name = "ovpool_onnx_" + short
    onnx_path = os.path.join(out_dir, "onnx", short + ".onnx")
    model = ov.convert_model(onnx_path, extension=ovpool_openvino.onnx_extensions())
    xml = os.path.join(out_dir, "models", name + ".xml")
    ov.save_model(model, xml, compress_to_fp16=False)
    sample = np.load(os.path.join(out_dir, "inputs", "onnx_" + short + ".npy"))
    np.save(os.path.join(out_dir, "inputs", name + ".npy"), sample)
    session = onnxruntime.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    reference = dict(zip(names, session.run(names, {"input": sample})))
    write_npz(os.path.join(out_dir, "expected", name + ".npz"), reference)
    bridged = run_openvino(core, core.read_model(xml), sample)
    for key, value in reference.items():
        if not (bridged[key].shape == value.shape and np.allclose(bridged[key], value,
                                                                  rtol=1e-5, atol=1e-6)):
            raise SystemExit(f"{name}: OpenVINO with ovpool's extensions differs from ONNX "
                             f"Runtime on {key!r}")
    print(f"{name:32s}", ", ".join(f"{k} {v.dtype}{list(v.shape)}" for k, v in reference.items()))


if __name__ == "__main__":
    sys.exit(main())
