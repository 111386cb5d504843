"""OnnxAveragePool and OnnxMaxPool layers of the "ovpool" opset, run by ovpool's runtime ops:
seeded random ONNX configurations against onnxruntime, unknown dims, attribute errors."""

import numpy as np
import onnxruntime  # noqa: F401  (the oracle's engine; in the test extra)
import pytest

import ovpool
from ovpool.errors import BadAttributeError, BadDtypeError, OvpoolError
from ovpool.ir.model import Attributes, Layer
from ovpool.ops import Spec, lookup

import onnx_oracle as oracle

CONFIGS_PER_OP = 150


def _text(value):
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def build(op_type, **attributes):
    layer = Layer("3", "pool", op_type, "ovpool",
                  Attributes({k: _text(v) for k, v in attributes.items()}), (), ())
    factory = lookup(layer)
    assert factory is not None
    return factory(layer)


@pytest.mark.parametrize("onnx_type, layer_type", [("AveragePool", "OnnxAveragePool"),
                                                   ("MaxPool", "OnnxMaxPool")])
def test_random_configurations_match_onnxruntime(onnx_type, layer_type):
    rng = np.random.default_rng({"AveragePool": 41, "MaxPool": 42}[onnx_type])
    n_outputs = 2 if onnx_type == "MaxPool" else 1
    mismatches = []
    for _ in range(CONFIGS_PER_OP):
        attrs, shape, dtype = oracle.random_config(rng, onnx_type, 22)
        x = oracle.random_input(rng, shape, dtype)
        op = build(layer_type, **attrs)
        specs = op.infer(Spec(shape, dtype))
        ours = list(op.run(x))
        theirs = oracle.run_onnxruntime(onnx_type, attrs, x, 22, n_outputs)
        inferred = [(s.shape, s.dtype) for s in specs]
        if inferred != [(a.shape, a.dtype) for a in theirs] or not oracle.agrees(
                onnx_type, ours, theirs, dtype):
            mismatches.append((attrs, shape, dtype.name))
    print(f"\n{layer_type}: {CONFIGS_PER_OP - len(mismatches)}/{CONFIGS_PER_OP} random "
          "configurations match onnxruntime")
    assert mismatches == []


def test_count_include_pad_with_ceil_divides_by_the_taps_inside_the_padded_extent():
    # Length 6, kernel 3, stride 2, pads 1/1, ceil: windows start at -1, 1, 3, 5. The last one
    # covers 5, the right pad (6) and 7, outside the padded extent [-1, 7): divisor 2, where
    # OpenVINO's AvgPool divides by the kernel size 3.
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    op = build("OnnxAveragePool", kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1,
               count_include_pad=1)
    np.testing.assert_array_equal(op.run(x)[0][0, 0], [3 / 3, 9 / 3, 15 / 3, 6 / 2])
    op = build("OnnxAveragePool", kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1)
    np.testing.assert_array_equal(op.run(x)[0][0, 0], [3 / 2, 9 / 3, 15 / 3, 6 / 1])


def test_storage_order_gives_column_major_indices_within_each_plane():
    x = np.zeros((2, 1, 2, 3), np.float32)
    x[0, 0, 1, 2] = 1      # row-major 5 within the plane, column-major 2*2 + 1 = 5
    x[1, 0, 1, 0] = 1      # row-major 3, column-major 1; plane 1 starts at 6
    op = build("OnnxMaxPool", kernel_shape=[2, 3], storage_order=1)
    values, indices = op.run(x)
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices.reshape(-1), [5, 6 + 1])
    values, indices = build("OnnxMaxPool", kernel_shape=[2, 3]).run(x)
    np.testing.assert_array_equal(indices.reshape(-1), [5, 6 + 3])


def test_unknown_dims_stay_unknown():
    op = build("OnnxMaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
               ceil_mode=1)
    values, indices = op.infer(Spec((None, 3, None, 9), np.dtype(np.float32)))
    assert values.shape == indices.shape == (None, 3, None, 5)
    assert indices.dtype == np.int64
    assert op.infer(Spec(None, np.dtype(np.float32)))[0].shape is None


def test_values_only_skips_the_indices():
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    op = build("OnnxMaxPool", kernel_shape=[2, 2], strides=[2, 2])
    values, = op.run_first(x)
    np.testing.assert_array_equal(values, op.run(x)[0])


def test_out_arrays_are_written():
    x = np.random.default_rng(1).standard_normal((1, 2, 6, 6)).astype(np.float32)
    op = build("OnnxAveragePool", kernel_shape=[2, 2], strides=[2, 2])
    out = np.empty((1, 2, 3, 3), np.float32)
    result, = op.run(x, out=out)
    assert result is out
    np.testing.assert_allclose(out, x.reshape(1, 2, 3, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-6)


@pytest.mark.parametrize("op_type, attributes, error, match", [
    ("OnnxAveragePool", {}, BadAttributeError, "'kernel_shape' is required"),
    ("OnnxAveragePool", {"kernel_shape": [2], "ceil_mode": 2}, BadAttributeError,
     "'ceil_mode' is '2'"),
    ("OnnxMaxPool", {"kernel_shape": [2], "storage_order": "yes"}, BadAttributeError,
     "'storage_order' is 'yes'"),
    ("OnnxMaxPool", {"kernel_shape": [2], "auto_pad": "explicit"}, BadAttributeError,
     "'auto_pad' is 'explicit'; expected one of NOTSET"),
])
def test_bad_attributes_are_refused_when_the_layer_is_built(op_type, attributes, error, match):
    with pytest.raises(error, match=match):
        build(op_type, **attributes)


@pytest.mark.parametrize("op_type, attributes, shape, dtype, match", [
    ("OnnxAveragePool", {"kernel_shape": [2, 2]}, (1, 1, 4), np.float32, "kernel_shape"),
    ("OnnxAveragePool", {"kernel_shape": [2], "pads": [2, 0]}, (1, 1, 4), np.float32,
     "must be smaller than kernel_shape"),
    ("OnnxAveragePool", {"kernel_shape": [2]}, (1, 1, 4), np.int8, "does not accept"),
    ("OnnxMaxPool", {"kernel_shape": [5]}, (1, 1, 4), np.float32, "larger than the padded"),
])
def test_shape_and_dtype_errors_at_inference(op_type, attributes, shape, dtype, match):
    op = build(op_type, **attributes)
    with pytest.raises(OvpoolError, match=match):
        op.infer(Spec(shape, np.dtype(dtype)))


def test_int8_max_pool_is_accepted_int8_average_is_not():
    x = np.array([[[-128, 5, 127, -3]]], np.int8)
    values, indices = build("OnnxMaxPool", kernel_shape=[2], strides=[2]).run(x)
    np.testing.assert_array_equal(values, [[[5, 127]]])
    with pytest.raises(BadDtypeError):
        build("OnnxAveragePool", kernel_shape=[2]).run(x)


def test_runtime_reads_and_runs_an_ir_with_onnx_layers(tmp_path):
    xml = tmp_path / "m.xml"
    xml.write_text(_IR)
    compiled = ovpool.compile_model(str(xml))
    x = np.random.default_rng(2).standard_normal((3, 2, 6, 8)).astype(np.float32)
    outputs = compiled(x)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1,
             "count_include_pad": 1}
    expected, = oracle.run_onnxruntime("AveragePool", attrs, x, 22)
    np.testing.assert_allclose(outputs["pooled"], expected, rtol=1e-6, atol=1e-7)


# A dynamic batch, so the output shape is re-inferred at run time.
_IR = """<?xml version="1.0"?>
<net name="onnx_average" version="11">
 <layers>
  <layer id="0" name="input" type="Parameter" version="opset1">
   <data shape="?,2,6,8" element_type="f32"/>
   <output><port id="0" precision="FP32" names="input">
    <dim>-1</dim><dim>2</dim><dim>6</dim><dim>8</dim></port></output>
  </layer>
  <layer id="1" name="pooled" type="OnnxAveragePool" version="ovpool">
   <data auto_pad="NOTSET" ceil_mode="1" count_include_pad="1" kernel_shape="3, 3"
         pads="1, 1, 1, 1" strides="2, 2"/>
   <input><port id="0"><dim>-1</dim><dim>2</dim><dim>6</dim><dim>8</dim></port></input>
   <output><port id="1" precision="FP32" names="pooled">
    <dim>-1</dim><dim>2</dim><dim>4</dim><dim>5</dim></port></output>
  </layer>
  <layer id="2" name="pooled/sink_port_0" type="Result" version="opset1">
   <input><port id="0"><dim>-1</dim><dim>2</dim><dim>4</dim><dim>5</dim></port></input>
  </layer>
 </layers>
 <edges>
  <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
  <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
 </edges>
</net>
"""


def test_empty_auto_pad_is_notset_in_the_ir_layers():
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 6)).astype(np.float32)
    window = dict(kernel_shape=[2, 3], pads=[1, 0, 0, 1], strides=[2, 2])
    for op_type in ("OnnxAveragePool", "OnnxMaxPool"):
        empty = build(op_type, auto_pad="", **window).run(x)
        notset = build(op_type, auto_pad="NOTSET", **window).run(x)
        for got, want in zip(empty, notset):
            np.testing.assert_array_equal(got, want)
    # and the values are ONNX's: the (1,0)+(0,1)-padded 2x3 windows of x, stride 2
    padded = np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 1)), constant_values=-np.inf)
    want = np.array([[padded[:, :, i:i + 2, j:j + 3].max(axis=(2, 3)) for j in (0, 2, 4)]
                     for i in (0, 2, 4)]).transpose(2, 3, 0, 1)
    np.testing.assert_array_equal(build("OnnxMaxPool", auto_pad="", **window).run(x)[0], want)
