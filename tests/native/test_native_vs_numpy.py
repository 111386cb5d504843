"""(b) The native library inside OpenVINO against ovpool's numpy API: identical bits on seeded
random configurations of every op and attribute, for the element types the CPU plugin hands
the op.

What the CPU plugin hands a custom op (measured with OpenVINO 2026.4): f32, bf16 (tested when
ml_dtypes is installed), i8, u8 and i32 tensors as they are; f16 converted to f32 (and the f32 result back to f16, rounding to
nearest even), f64 to f32, i64 to i32, whatever INFERENCE_PRECISION_HINT says. So an f16 model
gives exactly ``ovpool.<op>(x.astype(float32)).astype(float16)``: averages may differ from
ovpool's float16 kernels by the double rounding, and a max window without input elements gives
-inf (float32's lowest value, rounded) instead of float16's lowest, -65504.
"""

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper
from openvino import opset8, opset14, opset16

import ovpool
import ovpool.onnx as ovonnx

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2}
SEED = 20261124
PER_CASE = 24
OV_TYPES = {"float32": ov.Type.f32, "float16": ov.Type.f16, "bfloat16": ov.Type.bf16,
            "int8": ov.Type.i8, "uint8": ov.Type.u8, "int32": ov.Type.i32}


@pytest.fixture(scope="module")
def core(native_library):
    core = ov.Core()
    core.add_extension(native_library)
    return core


def _input(x):
    """`x` as OpenVINO takes it: a bfloat16 array (ml_dtypes) as a bf16 Tensor."""
    if x.dtype.name != "bfloat16":
        return x
    tensor = ov.Tensor(ov.Type.bf16, list(x.shape))
    tensor.data[...] = x.view(np.float16)
    return tensor


def _output(data, dtype):
    """An output tensor's data; bf16 memory (shown as float16) seen as bfloat16."""
    data = data.copy()
    return data.view(dtype) if np.dtype(dtype).name == "bfloat16" and data.dtype == np.float16 else data


def _dtype(name):
    if name == "bfloat16":
        return ml_dtypes.bfloat16
    return np.dtype(name)


def _run(core, model, x, tmp_path, n_outputs=1):
    """Saves `model`, reads it back with the extension (every pooling node becomes an "ovpool"
    op) and runs it on `x`."""
    path = str(tmp_path / "m.xml")
    ov.save_model(model, path, compress_to_fp16=False)
    read = core.read_model(path)
    kinds = {(op.get_type_name(), op.get_type_info().version_id) for op in read.get_ordered_ops()}
    assert any(version == "ovpool" for _, version in kinds), kinds
    compiled = core.compile_model(read, "CPU", CONFIG)
    request = compiled.create_infer_request()
    request.infer({0: _input(x)})
    return [_output(request.get_output_tensor(i).data, x.dtype)
            for i in range(len(compiled.outputs))]


def _data(rng, shape, dtype, nan=False):
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        if rng.random() < 0.3:   # small integers: ties, exact sums
            x = rng.integers(-3, 4, shape).astype(dtype)
        else:
            x = rng.standard_normal(shape).astype(np.float32).astype(dtype)
        if nan and rng.random() < 0.3:
            x.reshape(-1)[rng.random(x.size) < 0.1] = np.nan
        return x
    info = np.iinfo(dtype)
    low, high = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(low, high, shape, endpoint=True).astype(dtype)


def _window(rng, with_dilations=True):
    rank = int(rng.integers(1, 4))
    kernel = [int(rng.integers(1, 4)) for _ in range(rank)]
    dilations = [int(rng.integers(1, 3)) if with_dilations else 1 for _ in range(rank)]
    attrs = dict(
        kernel=kernel, dilations=dilations,
        strides=[int(rng.integers(1, 4)) for _ in range(rank)],
        pads_begin=[int(rng.integers(0, k)) for k in kernel],
        pads_end=[int(rng.integers(0, k)) for k in kernel],
        rounding_type=str(rng.choice(["floor", "ceil", "ceil_torch"])),
        auto_pad=str(rng.choice(["explicit", "explicit", "same_upper", "same_lower", "valid"])))
    lengths = [int(rng.integers((k - 1) * d + 1, (k - 1) * d + 8))
               for k, d in zip(kernel, dilations)]
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *lengths)
    return shape, attrs


def _cast(values, dtype):
    """float32 results as the plugin converts them back (float32's lowest becomes -inf)."""
    with np.errstate(over="ignore"):
        return values.astype(dtype)


def _expected_dtype_cast(dtype):
    """The dtype the kernels see inside the plugin for a model of `dtype`."""
    return np.float32 if np.dtype(dtype) == np.float16 else dtype


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "uint8", "int32"])
def test_avg_pool(core, tmp_path, dtype):
    dtype = _dtype(dtype)
    rng = np.random.default_rng([SEED, 1, len(np.dtype(dtype).name)])
    for case in range(PER_CASE):
        shape, attrs = _window(rng)
        exclude_pad = bool(rng.random() < 0.5)
        x = _data(rng, shape, dtype)
        param = opset8.parameter(list(shape), OV_TYPES[np.dtype(dtype).name], name="x")
        node = opset16.avg_pool(param, attrs["strides"], attrs["pads_begin"], attrs["pads_end"],
                                attrs["kernel"], exclude_pad, attrs["rounding_type"],
                                attrs["auto_pad"], attrs["dilations"])
        (got,) = _run(core, ov.Model([node], [param]), x, tmp_path)
        want = ovpool.avg_pool(x.astype(_expected_dtype_cast(dtype)), exclude_pad=exclude_pad,
                               **attrs)
        want = _cast(want, dtype)
        what = f"case {case}: {shape} {dtype} {attrs} exclude_pad={exclude_pad}"
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=what)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "uint8", "int32"])
def test_max_pool(core, tmp_path, dtype):
    dtype = _dtype(dtype)
    rng = np.random.default_rng([SEED, 2, len(np.dtype(dtype).name)])
    for case in range(PER_CASE):
        shape, attrs = _window(rng)
        axis = int(rng.integers(-len(shape), len(shape)))
        index_type = str(rng.choice(["i32", "i64"]))
        with_indices = bool(rng.random() < 0.75)
        x = _data(rng, shape, dtype, nan=True)
        param = opset8.parameter(list(shape), OV_TYPES[np.dtype(dtype).name], name="x")
        node = opset14.max_pool(param, attrs["strides"], attrs["dilations"], attrs["pads_begin"],
                                attrs["pads_end"], attrs["kernel"], attrs["rounding_type"],
                                attrs["auto_pad"], index_type, axis)
        outputs = node.outputs() if with_indices else [node.output(0)]
        got = _run(core, ov.Model(outputs, [param]), x, tmp_path)
        values, indices = ovpool.max_pool(x.astype(_expected_dtype_cast(dtype)),
                                          index_element_type=index_type, axis=axis, **attrs)
        values = _cast(values, dtype)
        what = f"case {case}: {shape} {dtype} {attrs} axis={axis} {index_type}"
        np.testing.assert_array_equal(got[0].view(np.uint8), values.view(np.uint8), err_msg=what)
        if with_indices:
            assert got[1].dtype == indices.dtype, what
            np.testing.assert_array_equal(got[1], indices, err_msg=what)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint8"])
def test_adaptive_pools(core, tmp_path, dtype):
    rng = np.random.default_rng([SEED, 3, len(dtype)])
    for case in range(PER_CASE):
        rank = int(rng.integers(1, 4))
        lengths = [int(rng.integers(1, 12)) for _ in range(rank)]
        sizes = [int(rng.integers(1, n + 3)) for n in lengths]
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *lengths)
        x = _data(rng, shape, dtype, nan=True)
        param = opset8.parameter(list(shape), OV_TYPES[np.dtype(dtype).name], name="x")
        size_const = opset8.constant(np.array(sizes, rng.choice([np.int32, np.int64])))
        what = f"case {case}: {shape} {dtype} -> {sizes}"
        if rng.random() < 0.5:
            node = opset8.adaptive_avg_pool(param, size_const)
            (got,) = _run(core, ov.Model([node], [param]), x, tmp_path)
            want = ovpool.adaptive_avg_pool(x.astype(_expected_dtype_cast(dtype)), sizes)
            want = _cast(want, dtype)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=what)
        else:
            index_type = str(rng.choice(["i32", "i64"]))
            node = opset8.adaptive_max_pool(param, size_const, index_type)
            got = _run(core, ov.Model(node.outputs(), [param]), x, tmp_path)
            values, indices = ovpool.adaptive_max_pool(x.astype(_expected_dtype_cast(dtype)), sizes,
                                                       index_element_type=index_type)
            values = _cast(values, dtype)
            np.testing.assert_array_equal(got[0].view(np.uint8), values.view(np.uint8), err_msg=what)
            np.testing.assert_array_equal(got[1], indices, err_msg=what)


def _onnx_model(op_type, attrs, shape, dtype, with_indices):
    elem = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
            "int8": TensorProto.INT8, "uint8": TensorProto.UINT8}[dtype]
    outputs = [helper.make_tensor_value_info("y", elem, None)]
    names = ["y"]
    if with_indices:
        outputs.append(helper.make_tensor_value_info("i", TensorProto.INT64, None))
        names.append("i")
    node = helper.make_node(op_type, ["x"], names, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, list(shape))],
                              outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def _onnx_window(rng):
    rank = int(rng.integers(1, 4))
    kernel = [int(rng.integers(1, 4)) for _ in range(rank)]
    dilations = [int(rng.integers(1, 3)) for _ in range(rank)]
    attrs = dict(kernel_shape=kernel, strides=[int(rng.integers(1, 4)) for _ in range(rank)],
                 dilations=dilations, ceil_mode=int(rng.integers(2)))
    auto_pad = str(rng.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    if auto_pad == "NOTSET":
        attrs["pads"] = ([int(rng.integers(0, k)) for k in kernel]
                         + [int(rng.integers(0, k)) for k in kernel])
    else:
        attrs["auto_pad"] = auto_pad
    lengths = [int(rng.integers((k - 1) * d + 1, (k - 1) * d + 8))
               for k, d in zip(kernel, dilations)]
    return (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *lengths), attrs


def _run_onnx(core, model, x, tmp_path):
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    read = core.read_model(path)
    kinds = {op.get_type_name() for op in read.get_ordered_ops()}
    assert kinds & {"OnnxAveragePool", "OnnxMaxPool"}, kinds
    compiled = core.compile_model(read, "CPU", CONFIG)
    request = compiled.create_infer_request()
    request.infer({0: x})
    return [request.get_output_tensor(i).data.copy() for i in range(len(compiled.outputs))]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_onnx_average_pool(core, tmp_path, dtype):
    rng = np.random.default_rng([SEED, 4, len(dtype)])
    for case in range(PER_CASE):
        shape, attrs = _onnx_window(rng)
        attrs["count_include_pad"] = int(rng.integers(2))
        x = _data(rng, shape, dtype)
        (got,) = _run_onnx(core, _onnx_model("AveragePool", attrs, shape, dtype, False), x, tmp_path)
        want = ovonnx.average_pool(x.astype(_expected_dtype_cast(dtype)), opset=22,
                                   **attrs)
        want = _cast(want, dtype)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8),
                                      err_msg=f"case {case}: {shape} {dtype} {attrs}")


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint8"])
def test_onnx_max_pool(core, tmp_path, dtype):
    rng = np.random.default_rng([SEED, 5, len(dtype)])
    for case in range(PER_CASE):
        shape, attrs = _onnx_window(rng)
        attrs["storage_order"] = int(rng.integers(2))
        with_indices = bool(rng.random() < 0.75)
        x = _data(rng, shape, dtype, nan=True)
        got = _run_onnx(core, _onnx_model("MaxPool", attrs, shape, dtype, with_indices), x, tmp_path)
        values, indices = ovonnx.max_pool(x.astype(_expected_dtype_cast(dtype)), opset=22, **attrs)
        values = _cast(values, dtype)
        what = f"case {case}: {shape} {dtype} {attrs}"
        np.testing.assert_array_equal(got[0].view(np.uint8), values.view(np.uint8), err_msg=what)
        if with_indices:
            np.testing.assert_array_equal(got[1], indices, err_msg=what)


@pytest.mark.skipif(os.environ.get("OVPOOL_NATIVE_ISA") == "baseline", reason="this is that run")
def test_everything_above_with_the_baseline_kernels(native_library):
    """The same comparisons with the library's baseline kernels (OVPOOL_NATIVE_ISA=baseline),
    in a fresh process: the kernel build is chosen when the library loads."""
    env = {**os.environ, "OVPOOL_NATIVE_ISA": "baseline",
           "OVPOOL_NATIVE_TEST_LIBRARY": native_library}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             os.path.abspath(__file__)], capture_output=True, text=True,
                            env=env, timeout=1200, cwd=os.path.dirname(os.path.abspath(__file__)))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
