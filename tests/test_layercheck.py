"""``ovpool check MODEL --layers``: each pooling layer as OpenVINO runs it against its spec,
with the cause of every difference. The models are small CNNs (convolutions before the
pooling), built with onnx's helper and with OpenVINO's opset API, whose pooling layers hit one
cause each; the layers that agree must be reported as agreeing.

Every cause is hit by an ONNX model: divisor, ceil_window_in_padding, index_layout, nan_rule,
lowest_value_index (onnx_cnn), empty_window and precision (onnx_cnn_f16). An IR is checked
against OpenVINO's own spec, which OpenVINO follows on divisors, roundings and index layouts
(sweeps of AvgPool-14/16 and MaxPool-14 over kernels, strides, dilations, pads, roundings,
exclude-pad, auto_pad and the index axis found none), so the OpenVINO-opset models hit the
causes an IR can have: nan_rule, empty_window, lowest_value_index (ir_cnn) and precision
(ir_cnn_f16)."""

import csv
import json
import re
import os
import subprocess
import sys

import numpy as np
import onnx
import openvino as ov
import openvino.opset8 as op8
import pytest
from onnx import TensorProto as T, helper, numpy_helper

from ovpool.layercheck import CAUSES, check_layers

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def onnx_cnn(path):
    w = numpy_helper.from_array(np.ones((2, 1, 1, 1), np.float32), "w")
    b = numpy_helper.from_array(np.zeros((2,), np.float32), "b")
    w2 = numpy_helper.from_array(np.full((2, 2, 1, 1), 0.5, np.float32), "w2")
    node = helper.make_node
    nodes = [
        node("Conv", ["x", "w", "b"], ["c"], name="conv", group=2, kernel_shape=[1, 1]),
        node("MaxPool", ["c"], ["ceil_out"], name="max_ceil", kernel_shape=[2, 2],
             strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1),
        node("AveragePool", ["c"], ["avg_out"], name="avg_include_pad", kernel_shape=[3, 3],
             strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1),
        node("MaxPool", ["c"], ["so_out", "so_idx"], name="max_storage_order",
             kernel_shape=[2, 3], strides=[2, 2], storage_order=1),
        node("MaxPool", ["c"], ["nan_out"], name="max_agrees", kernel_shape=[3, 3],
             strides=[3, 3]),
        node("GlobalMaxPool", ["c"], ["gmax_out"], name="global_max"),
        node("AveragePool", ["c"], ["plain_out"], name="avg_plain", kernel_shape=[2, 2],
             strides=[2, 2]),
        node("Conv", ["plain_out", "w2"], ["c2"], name="conv2", kernel_shape=[1, 1]),
        node("MaxPool", ["q"], ["i8_out", "i8_idx"], name="max_int8", kernel_shape=[2, 2],
             strides=[2, 2]),
    ]
    outs = [helper.make_tensor_value_info(n, T.FLOAT, None)
            for n in ["ceil_out", "avg_out", "so_out", "nan_out", "gmax_out", "c2"]]
    outs += [helper.make_tensor_value_info("so_idx", T.INT64, None),
             helper.make_tensor_value_info("i8_out", T.INT8, None),
             helper.make_tensor_value_info("i8_idx", T.INT64, None)]
    graph = helper.make_graph(nodes, "cnn", [
        helper.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6]),
        helper.make_tensor_value_info("q", T.INT8, [1, 1, 4, 4])], outs, [w, b, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    x = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
    x[0, 0, 0, 0] = np.nan          # in global_max's window (and max_agrees', which ignores it)
    x[0, 1, 4, 4] = np.nan
    q = np.random.default_rng(1).integers(-100, 100, (1, 1, 4, 4)).astype(np.int8)
    q[0, 0, 2:, 2:] = -128          # the last window's maximum is the lowest int8
    return x, q


def ir_cnn(path):
    x = op8.parameter([1, 2, 5, 5], np.float32, name="x")
    conv = op8.group_convolution(x, op8.constant(np.ones((2, 1, 1, 1, 1), np.float32)),
                                 [1, 1], [0, 0], [0, 0], [1, 1])
    conv.set_friendly_name("conv")
    avg = op8.avg_pool(conv, [1, 1], [0, 0], [0, 0], [2, 2], True, "floor")
    avg.set_friendly_name("avg_ok")
    amax = op8.adaptive_max_pool(conv, op8.constant(np.array([2, 2], np.int32)), "i32")
    amax.set_friendly_name("adaptive_max")
    # ceil rounding on L=5, k=2, s=2, pads 1/1: the last window [5, 7) holds no element
    mx = op8.max_pool(conv, [2, 2], [1, 1], [1, 1], [1, 1], [2, 2], "ceil", "explicit", "i32")
    mx.set_friendly_name("max_f32")
    half = op8.convert(conv, "f16")
    half.set_friendly_name("to_f16")
    mx16 = op8.max_pool(half, [2, 2], [1, 1], [1, 1], [1, 1], [2, 2], "ceil", "explicit", "i32")
    mx16.set_friendly_name("max_empty_f16")
    q = op8.parameter([1, 1, 4, 4], np.int8, name="q")
    mx8 = op8.max_pool(q, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], "floor", "explicit", "i64")
    mx8.set_friendly_name("max_int8")
    model = ov.Model([avg.output(0), amax.output(0), mx.output(0), mx16.output(0),
                      *mx8.outputs()], [x, q], "cnn")
    ov.save_model(model, str(path), compress_to_fp16=False)
    q = np.random.default_rng(1).integers(-100, 100, (1, 1, 4, 4)).astype(np.int8)
    q[0, 0, 2:, 2:] = -128          # the last window's maximum is the lowest int8
    return q


def onnx_cnn_f16(path, dtype=np.float16):
    """A float16 (or, for the comparison, float32) CNN: a 3x3 convolution, then an average
    pooling (OpenVINO computes it in float32 from the convolution's unrounded output), a max
    pooling (exact in any precision) and a dilated average pooling whose window of taps at
    -1 and 2 misses the 2x2 input (ONNX's empty window is a NaN, 0/0)."""
    w = numpy_helper.from_array(
        np.random.default_rng(2).standard_normal((4, 2, 3, 3)).astype(dtype), "w")
    node = helper.make_node
    nodes = [
        node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("AveragePool", ["c"], ["avg_out"], name="avg_f16", kernel_shape=[4, 4],
             strides=[2, 2]),
        node("MaxPool", ["c"], ["max_out"], name="max_f16", kernel_shape=[2, 2], strides=[2, 2]),
        node("MaxPool", ["c"], ["small"], name="shrink", kernel_shape=[4, 4], strides=[4, 4]),
        node("AveragePool", ["small"], ["empty_out"], name="avg_dilated", kernel_shape=[2, 2],
             pads=[1, 1, 1, 1], dilations=[3, 3]),
    ]
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        nodes, "cnn16", [helper.make_tensor_value_info("x", element, [1, 2, 8, 8])],
        [helper.make_tensor_value_info(n, element, None)
         for n in ("avg_out", "max_out", "empty_out")], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return np.random.default_rng(0).standard_normal((1, 2, 8, 8)).astype(dtype)


def ir_cnn_f16(path, dtype=np.float16):
    """The OpenVINO-opset twin: a float16 convolution, an average and a max pooling."""
    x = op8.parameter([1, 4, 16, 16], dtype, name="x")
    w = op8.constant(np.random.default_rng(2).standard_normal((4, 4, 3, 3)).astype(dtype))
    conv = op8.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
    conv.set_friendly_name("conv")
    avg = op8.avg_pool(conv, [1, 1], [0, 0], [0, 0], [4, 4], True, "floor")
    avg.set_friendly_name("avg_f16")
    mx = op8.max_pool(conv, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], "floor", "explicit", "i32")
    mx.set_friendly_name("max_f16")
    model = ov.Model([avg.output(0), mx.output(0)], [x], "cnn16")
    ov.save_model(model, str(path), compress_to_fp16=False)
    return np.random.default_rng(0).standard_normal((1, 4, 16, 16)).astype(dtype)


def openvino_outputs(path, x):
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return [np.array(v) for v in compiled(x).values()]


@pytest.mark.parametrize("build", [onnx_cnn_f16, ir_cnn_f16])
def test_float16_model_differs_by_precision_only(tmp_path, build):
    path = tmp_path / ("cnn16.onnx" if build is onnx_cnn_f16 else "cnn16.xml")
    x = build(path)
    reports = by_name(check_layers(path, inputs=[x]))
    avg, mx = reports["avg_f16"], reports["max_f16"]
    assert avg.cause == "precision" and avg.mismatches > 0
    assert mx.cause is None and mx.mismatches == 0 and mx.max_abs_error == 0
    # Independently: OpenVINO's float16 model gives the float32 model's result (same weights,
    # the input widened exactly) up to float16 rounding, and the spec on the captured float16
    # input differs from it by no more than a couple of such roundings: precision, nothing else.
    wide = tmp_path / ("wide" + path.suffix)
    build(wide, np.float32)
    half = openvino_outputs(path, x)[0].astype(np.float64)
    full = openvino_outputs(wide, x.astype(np.float32))[0].astype(np.float64)
    step = float(np.spacing(np.float16(np.abs(full).max())))
    assert np.abs(half - full).max() <= step
    assert 1e-4 < avg.max_abs_error <= 2 * step    # beyond float16's tolerance: a finding


def test_onnx_empty_dilated_window(tmp_path):
    path = tmp_path / "cnn16.onnx"
    x = onnx_cnn_f16(path, np.float32)
    reports = by_name(check_layers(path, inputs=[x]))
    empty = reports["avg_dilated"]
    # the one output per plane: taps at -1 and 2 on a 2-long axis, 4 planes
    assert empty.cause == "empty_window" and empty.mismatches == 4
    assert empty.output_shapes == empty.reference_shapes == [[1, 4, 1, 1]]
    assert empty.onnxruntime == "ok"         # onnxruntime agrees with the spec
    assert {n: r.cause for n, r in reports.items() if n != "avg_dilated"} == {
        "avg_f16": None, "max_f16": None, "shrink": None}


def by_name(reports):
    return {r.name: r for r in reports}


def test_onnx_model_names_each_layer_and_cause(tmp_path):
    path = tmp_path / "cnn.onnx"
    reports = by_name(check_layers(path, inputs=list(onnx_cnn(path))))
    causes = {name: r.cause for name, r in reports.items()}
    assert causes == {
        "max_ceil": "ceil_window_in_padding",     # OpenVINO keeps the window in the padding
        "avg_include_pad": "divisor",             # OpenVINO divides by the kernel volume
        "max_storage_order": "index_layout",      # OpenVINO transposes row-major indices
        "max_agrees": None,
        "global_max": "nan_rule",
        "avg_plain": None,
        "max_int8": "lowest_value_index",
    }
    assert set(causes.values()) - {None} <= set(CAUSES)
    ceil = reports["max_ceil"]
    assert ceil.output_shapes == [[1, 2, 4, 4]] and ceil.reference_shapes == [[1, 2, 3, 3]]
    avg = reports["avg_include_pad"]
    # the hanging windows: row 3 or column 3 of each 4x4 plane, and the top-left corners
    assert avg.mismatches == 14 and avg.elements == 32
    assert avg.where == "edge 8, corner 6"
    for name in ("max_agrees", "avg_plain"):
        assert reports[name].mismatches == 0 and reports[name].where == ""
    assert reports["max_int8"].mismatches == 1
    assert all(r.onnxruntime is not None for r in reports.values())
    assert reports["avg_include_pad"].onnxruntime == "ok"


def test_ir_model_nan_and_empty_windows(tmp_path):
    path = tmp_path / "cnn.xml"
    q = ir_cnn(path)
    clean = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    reports = by_name(check_layers(path, inputs=[clean, q]))
    # f16 max pooling: OpenVINO gives -inf for the empty windows, the spec the lowest f16;
    # int8: OpenVINO's index of the all -128 window is not the spec's first element
    assert {n: r.cause for n, r in reports.items()} == {
        "max_empty_f16": "empty_window", "max_f32": None, "adaptive_max": None, "avg_ok": None,
        "max_int8": "lowest_value_index"}
    assert reports["max_empty_f16"].mismatches == 14  # 7 empty windows per plane, 2 planes
    assert reports["max_int8"].mismatches == 1 and reports["max_int8"].max_abs_error > 0
    nan = clean.copy()
    nan[0, 0, 0, 0] = np.nan
    reports = by_name(check_layers(path, inputs=[nan, q]))
    assert reports["adaptive_max"].cause == "nan_rule"   # OpenVINO: NaN when first is NaN
    assert reports["max_f32"].cause == "nan_rule"
    assert reports["max_f32"].where == "corner 1"
    assert reports["avg_ok"].cause is None
    assert all(r.onnxruntime is None for r in reports.values())


def run(*args):
    return subprocess.run([sys.executable, "-m", "ovpool", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def test_cli_layers_table_json_csv_and_exit_codes(tmp_path):
    path = tmp_path / "cnn.onnx"
    x, q = onnx_cnn(path)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "q.npy", q)
    report, table = tmp_path / "r.json", tmp_path / "r.csv"
    result = run("check", str(path), "--layers", "--input", str(tmp_path / "x.npy"),
                 "--input", str(tmp_path / "q.npy"), "--json", str(report), "--csv", str(table))
    assert result.returncode == 3, result.stderr
    assert "5 of 7 pooling layer(s) differ" in result.stdout
    line = next(l for l in result.stdout.splitlines() if l.startswith("avg_include_pad"))
    assert "divisor" in line and "14/32" in line
    data = json.loads(report.read_text())
    assert data["model"] == str(path)
    fields = {"name", "type", "version", "input_shape", "max_abs_error", "max_rel_error",
              "mismatches", "elements", "where", "cause"}
    assert all(fields <= set(layer) for layer in data["layers"])
    assert {l["name"]: l["cause"] for l in data["layers"]}["max_storage_order"] == "index_layout"
    rows = list(csv.reader(table.open()))
    assert rows[0][0] == "layer" and len(rows) == 8
    # the IR model with clean random inputs: the f32 layers agree
    ir = tmp_path / "cnn.xml"
    ir_cnn(ir)
    result = run("check", str(ir), "--layers")
    assert result.returncode == 3 and "1 of 5 pooling layer(s) differ" in result.stdout
    result = run("check", str(ir), "--json", str(report))
    assert result.returncode == 2 and "--layers" in result.stderr


def save_chain(path, nodes, shape, weights, opset):
    """An ONNX model of ``nodes`` from a float input "x" of ``shape`` to the output "y"."""
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info(
        "x", T.FLOAT, shape)], [helper.make_tensor_value_info("y", T.FLOAT, None)], [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_cli_layers_exit_0_when_every_layer_agrees(tmp_path):
    w = numpy_helper.from_array(np.full((3, 3, 3, 3), 0.1, np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["m"], name="pool", kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["m"], ["y"], name="gap")]
    path = save_chain(tmp_path / "ok.onnx", nodes, [1, 3, 9, 9], w, opset=17)
    result = run("check", str(path), "--layers")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every pooling layer agrees with its spec" in result.stdout
    assert [l.split()[0] for l in result.stdout.splitlines()[2:4]] == ["pool", "gap"]


@pytest.mark.parametrize("op, message", [
    # OpenVINO's ONNX frontend refuses an average whose window can lie wholly in the padding
    ("AveragePool", "OpenVINO cannot read the model: .*entirely in the padding area"),
    # OpenVINO runs this max pooling, the ONNX spec (onnxruntime's rule) refuses its pads
    ("MaxPool", "layer 'pool' \\(MaxPool, opset13\\): .*pads.*must be smaller than"),
])
def test_cli_layers_refusals_are_one_line_errors(tmp_path, op, message):
    w = numpy_helper.from_array(np.ones((2, 2, 1, 1), np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
             helper.make_node(op, ["c"], ["y"], name="pool", kernel_shape=[2, 2],
                              strides=[2, 2], pads=[2, 2, 0, 0])]
    path = save_chain(tmp_path / "refused.onnx", nodes, [1, 2, 6, 6], w, opset=13)
    result = run("check", str(path), "--layers")
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ovpool: error: {path}: ")
    assert re.search(message, lines[0]), lines[0]
