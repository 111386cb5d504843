"""``ovpool.explain`` and ``ovpool explain``: hand-worked windows, divisors and output lengths."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ovpool
from ovpool.errors import BadArgumentError, BadAttributeError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def rows(axis):
    """(span, real, (exclude_pad, openvino_include_pad, include_padded), roundings, marks)."""
    return [((w.start, w.end), w.real,
             (w.divisors["exclude_pad"], w.divisors["openvino_include_pad"],
              w.divisors["include_padded"]), w.in_roundings, w.disagree) for w in axis.windows]


ALL = ("floor", "ceil", "ceil_torch", "onnx_ceil_mode")


def test_openvino_include_pad_with_hanging_windows():
    # L=5, k=3, s=2, pads 1/1: windows [-1,2) [1,4) [3,6); padded extent [-1,6).
    e = ovpool.explain("AvgPool-16", (1, 1, 5), kernel=3, strides=2, pads_begin=1, pads_end=1,
                       rounding_type="ceil", exclude_pad=False)
    assert e.output_shape == (1, 1, 3) and e.divisor_rule == "openvino_include_pad"
    (axis,) = e.axes
    assert (axis.pad_begin, axis.pad_end) == (1, 1)
    assert axis.lengths == {"floor": 3, "ceil": 3, "ceil_torch": 3, "onnx_ceil_mode": 3}
    assert rows(axis) == [
        ((-1, 2), 2, (2, 3, 3), ALL, ("divisor",)),
        ((1, 4), 3, (3, 3, 3), ALL, ()),
        ((3, 6), 2, (2, 3, 3), ALL, ("divisor",)),
    ]


def test_onnx_ceil_mode_with_count_include_pad():
    # L=6, k=3, s=2, pads 1/1: floor 3 outputs, ceil 4; window 3 spans [5,8): one real
    # element, two taps inside the padded extent [-1,7), three for OpenVINO's kernel volume.
    e = ovpool.explain("AveragePool", (1, 1, 6), version=19, kernel_shape=[3], strides=[2],
                       pads=[1, 1], ceil_mode=1, count_include_pad=1)
    assert e.dialect == "onnx" and e.rounding == "onnx_ceil_mode"
    assert e.divisor_rule == "include_padded" and e.output_shape == (1, 1, 4)
    (axis,) = e.axes
    assert axis.lengths == {"floor": 3, "ceil": 4, "ceil_torch": 4, "onnx_ceil_mode": 4}
    assert rows(axis) == [
        ((-1, 2), 2, (2, 3, 3), ALL, ("divisor",)),
        ((1, 4), 3, (3, 3, 3), ALL, ()),
        ((3, 6), 3, (3, 3, 3), ALL, ()),
        ((5, 8), 1, (1, 3, 2), ("ceil", "ceil_torch", "onnx_ceil_mode"), ("divisor", "rounding")),
    ]


def test_ceil_window_starting_in_the_padding_is_empty():
    # L=5, k=2, s=2, pads 1/1: ceil gives 4 windows, the last [5,7) starts in the right
    # padding; ceil_torch and ONNX ceil_mode drop it. Max pooling: divisors mark nothing.
    e = ovpool.explain("MaxPool-14", (1, 1, 5), kernel=2, strides=2, pads_begin=1, pads_end=1,
                       rounding_type="ceil")
    (axis,) = e.axes
    assert e.divisor_rule is None
    assert axis.lengths == {"floor": 3, "ceil": 4, "ceil_torch": 3, "onnx_ceil_mode": 3}
    assert [(w.start, w.end, w.real, w.in_roundings, w.disagree) for w in axis.windows] == [
        (-1, 1, 1, ALL, ()), (1, 3, 2, ALL, ()), (3, 5, 2, ALL, ()),
        (5, 7, 0, ("ceil",), ("rounding", "empty")),
    ]


def test_dilated_window_counts_taps_not_span():
    # L=5, k=2, d=2, s=1, no pads: windows read {0,2} {1,3} {2,4}; span 3, two taps each.
    e = ovpool.explain("AvgPool-16", (1, 1, 5), kernel=2, dilations=2, exclude_pad=True)
    assert [(w.start, w.end, w.real) for w in e.axes[0].windows] == [(0, 3, 2), (1, 4, 2),
                                                                     (2, 5, 2)]
    assert not e.disagreeing()


def test_whole_window_divisors_of_openvino_rule_span_all_axes():
    # Pads on H only: OpenVINO's include-pad rule divides every window by k_h*k_w = 4, while
    # ONNX's counts the padded taps: (2 or 1 along H) * 2 along W.
    e = ovpool.explain("AvgPool-16", (1, 1, 3, 4), kernel=2, strides=2, pads_begin=(1, 0),
                       pads_end=(0, 0), exclude_pad=False)
    assert e.output_shape == (1, 1, 2, 2)
    assert e.window_divisors["openvino_include_pad"] == [[4, 4], [4, 4]]
    assert e.window_divisors["exclude_pad"] == [[2, 2], [4, 4]]
    assert e.window_divisors["include_padded"] == [[4, 4], [4, 4]]


def test_refused_rounding_is_reported_not_raised():
    # ONNX refuses pads not smaller than the kernel; OpenVINO's roundings still resolve.
    e = ovpool.explain("MaxPool-14", (1, 1, 6), kernel=2, strides=2, pads_begin=2, pads_end=0)
    axis = e.axes[0]
    assert axis.lengths["onnx_ceil_mode"] is None and "kernel_shape" in axis.refused["onnx_ceil_mode"]
    assert axis.lengths["floor"] == 4


def test_bad_requests_raise_ovpool_errors():
    with pytest.raises(BadAttributeError, match="unknown attribute"):
        ovpool.explain("AvgPool-16", (1, 1, 5), kernel=3, ceil_mode=1)
    with pytest.raises(BadArgumentError, match="expected one of"):
        ovpool.explain("Conv", (1, 1, 5), kernel=3)
    with pytest.raises(BadAttributeError, match="versions"):
        ovpool.explain("AvgPool-2", (1, 1, 5), kernel=3)


def test_ir_layer_is_explained_with_its_own_attributes():
    # samples/models/avg_pool_14.xml: input 1x2x5x7, kernel 2, strides 2, pads 1/1, ceil_torch.
    e = ovpool.explanation.explain_layer(os.path.join(ROOT, "samples", "models",
                                                      "avg_pool_14.xml"), "avg_pool")
    assert e.layer == "avg_pool" and (e.op, e.version) == ("AvgPool", 14)
    assert e.rounding == "ceil_torch" and e.divisor_rule == "exclude_pad"
    h, w = e.axes
    assert h.lengths == {"floor": 3, "ceil": 4, "ceil_torch": 3, "onnx_ceil_mode": 3}
    assert w.lengths == {"floor": 4, "ceil": 5, "ceil_torch": 4, "onnx_ceil_mode": 4}
    assert rows(h)[0] == ((-1, 1), 1, (1, 2, 2), ALL, ("divisor",))
    assert rows(h)[3] == ((5, 7), 0, (0, 2, 1), ("ceil",), ("divisor", "rounding", "empty"))


def test_png_is_a_valid_image(tmp_path):
    import matplotlib.image  # the explain extra; the test extra installs it

    e = ovpool.explain("AveragePool", (1, 1, 6, 6), kernel_shape=[3, 3], strides=[2, 2],
                       pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)
    path = tmp_path / "windows.png"
    ovpool.explanation.draw(e, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(str(path))
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 600
    assert np.ptp(image[..., :3]) > 0.5  # not a blank canvas
    # the hanging ceil_mode windows have taps on the input, in the padding and beyond it:
    # each kind shows in its colour
    pixels = (image[..., :3] * 255).round().astype(int).reshape(-1, 3)
    for colour in ("#2b7bba", "#f08c00", "#8e44ad", "#c0392b", "#2e7d32"):
        rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
        assert np.count_nonzero(np.abs(pixels - rgb).max(axis=1) <= 2) > 100, colour


def test_png_without_matplotlib_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    e = ovpool.explain("MaxPool-14", (1, 1, 5), kernel=2)
    with pytest.raises(BadArgumentError, match=r"ovpool\[explain\]"):
        ovpool.explanation.draw(e, str(tmp_path / "x.png"))


def run(*args):
    return subprocess.run([sys.executable, "-m", "ovpool", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_cli_explain_attributes_json_and_png(tmp_path):
    out_json, out_png = tmp_path / "e.json", tmp_path / "e.png"
    result = run("explain", "--op", "MaxPool-14", "--input-shape", "1,1,5",
                 "--attr", "kernel=2", "--attr", "strides=2", "--attr", "pads_begin=1",
                 "--attr", "pads_end=1", "--attr", "rounding_type=ceil",
                 "--json", str(out_json), "--png", str(out_png))
    assert result.returncode == 0, result.stderr
    assert "output length: floor 3, ceil 4, ceil_torch 3, onnx_ceil_mode 3" in result.stdout
    marked = [line for line in result.stdout.splitlines() if line.strip().startswith("3 ")]
    assert marked and "* rounding, empty" in marked[0]
    data = json.loads(out_json.read_text())
    assert data["axes"][0]["windows"][3]["in_roundings"] == ["ceil"]
    assert out_png.read_bytes()[:4] == b"\x89PNG"


def test_cli_explain_onnx_node(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    node = helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[3, 3],
                            strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), str(path))
    result = run("explain", str(path), "--layer", "pool")
    assert result.returncode == 0, result.stderr
    assert "AveragePool-19 (onnx)" in result.stdout and "divisor rule include_padded" in result.stdout
    result = run("explain", str(path), "--layer", "nothing")
    assert result.returncode == 2 and "pooling nodes: pool" in result.stderr
    result = run("explain", "--op", "AvgPool-16")
    assert result.returncode == 2 and "--input-shape" in result.stderr
