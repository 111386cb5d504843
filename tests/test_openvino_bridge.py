"""ovpool's OpenVINO bridge (ovpool.openvino) against OpenVINO's own CPU plugin.

The central comparison reads the same IR file twice, with a plain ``openvino.Core`` (native
pooling) and with one given ``ovpool.openvino.add_extensions`` (ovpool's pooling inside the CPU
plugin), and runs both on the same input: max values and indices must be equal, float32
averages within rtol 1e-5, float16 averages within one float16 ulp.

The random data keeps out of the corners where OpenVINO deviates from its spec (README
"Differences", docs/semantics.md): no NaN or infinity, no max input equal to the dtype's lowest
value, no average window without an input element, no same_* + ceil configuration with a
clamped pad. ``test_corner_*`` assert ovpool's answer there, through the bridge.
"""

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import onnxruntime  # noqa: F401  (the ONNX tests compare with it, through onnx_oracle)
import openvino as ov
import pytest
from openvino import opset1, opset8, opset14, opset16

import ovpool
import ovpool.openvino as bridge
from ovpool import _openvino_ops
from ovpool.errors import OvpoolError

import onnx_oracle

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2}
SEED = 20260404
COUNTS = {}


@pytest.fixture(scope="module")
def cores():
    # This module tests the Python bridge; tests/native tests the extension library.
    native, extended = ov.Core(), ov.Core()
    assert bridge.add_extensions(extended, implementation="python").implementation == "python"
    return native, extended


def _run_both(cores, model, tmp_path, inputs):
    """Save ``model`` as IR, read and run it natively and with ovpool's extensions."""
    path = str(tmp_path / "model.xml")
    ov.save_model(model, path, compress_to_fp16=False)
    results = []
    for core in cores:
        compiled = core.compile_model(core.read_model(path), "CPU", CONFIG)
        request = compiled.create_infer_request()
        request.infer({i: x for i, x in enumerate(inputs)})
        results.append([np.array(request.get_output_tensor(i).data, copy=True)
                        for i in range(len(compiled.outputs))])
    return results


def _ov_type(dtype):
    return {"float32": ov.Type.f32, "float16": ov.Type.f16, "int8": ov.Type.i8,
            "uint8": ov.Type.u8}[np.dtype(dtype).name]


# ---- random configurations ------------------------------------------------------------------

OPS = ["AvgPool-1", "AvgPool-14", "AvgPool-16", "MaxPool-1", "MaxPool-8", "MaxPool-14",
       "AdaptiveAvgPool-8", "AdaptiveMaxPool-8"]
PER_OP = 32   # 8 ops x 32 = 256 seeded configurations


def _fixed_config(rng, op, version):
    rank = int(rng.integers(1, 4))
    has_dilations = (op, version) in (("AvgPool", 16), ("MaxPool", 8), ("MaxPool", 14))
    roundings = ["floor", "ceil"] + (["ceil_torch"] if version >= 14 else [])
    kernel = [int(rng.integers(1, 4)) for _ in range(rank)]
    dilations = [int(rng.integers(1, 3)) if has_dilations else 1 for _ in range(rank)]
    strides = [int(rng.integers(1, 4)) for _ in range(rank)]
    pads_begin = [int(rng.integers(0, k)) for k in kernel]
    pads_end = [int(rng.integers(0, k)) for k in kernel]
    lengths = [int(rng.integers((k - 1) * d + 1, (k - 1) * d + 7))
               for k, d in zip(kernel, dilations)]
    attrs = dict(kernel=kernel, strides=strides, pads_begin=pads_begin, pads_end=pads_end,
                 dilations=dilations,
                 rounding_type=roundings[int(rng.integers(len(roundings)))],
                 auto_pad=["explicit", "explicit", "same_upper", "same_lower", "valid"][
                     int(rng.integers(5))])
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *lengths)
    if attrs["auto_pad"].startswith("same") and attrs["rounding_type"] == "ceil":
        # OpenVINO appends an empty window when the same-pad is clamped (a listed
        # difference, test_corner_same_ceil_clamped_pad); floor has no such window.
        attrs["rounding_type"] = "floor"
    if op == "AvgPool" and _has_empty_window(shape, attrs):
        # OpenVINO divides 0 by 0 there (test_corner_empty_average_window).
        attrs.update(rounding_type="floor", pads_begin=[0] * rank, pads_end=[0] * rank)
    return shape, attrs


def _has_empty_window(shape, attrs):
    # A max over ones is the dtype's lowest value exactly where a window holds no element.
    ones = np.ones((1, 1, *shape[2:]), np.float32)
    return bool((ovpool.max_pool(ones, return_indices=False, **attrs) < 0).any())


def _data(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        if rng.random() < 0.4:   # small integers: ties for the max indices, exact sums
            return rng.integers(-3, 4, shape).astype(dtype)
        return rng.standard_normal(shape).astype(np.float32).astype(dtype)
    # No max input equal to the dtype's lowest value (OpenVINO's index-0 corner).
    low = 1 if dtype == np.uint8 else -127
    return rng.integers(low, 100, shape, endpoint=True).astype(dtype)


def _build(op, version, shape, dtype, attrs, rng):
    param = opset8.parameter(list(shape), _ov_type(dtype), name="x")
    if op == "AvgPool":
        exclude_pad = bool(rng.random() < 0.5)
        common = dict(strides=attrs["strides"], pads_begin=attrs["pads_begin"],
                      pads_end=attrs["pads_end"], kernel_shape=attrs["kernel"],
                      exclude_pad=exclude_pad, rounding_type=attrs["rounding_type"],
                      auto_pad=attrs["auto_pad"])
        if version == 16:
            node = opset16.avg_pool(param, dilations=attrs["dilations"], **common)
        else:
            node = {1: opset1, 14: opset14}[version].avg_pool(param, **common)
    elif op == "MaxPool":
        common = dict(strides=attrs["strides"], pads_begin=attrs["pads_begin"],
                      pads_end=attrs["pads_end"], kernel_shape=attrs["kernel"],
                      rounding_type=attrs["rounding_type"], auto_pad=attrs["auto_pad"])
        if version == 1:
            node = opset1.max_pool(param, **common)
        else:
            axis = int(rng.integers(-len(shape), len(shape)))
            index_type = ["i32", "i64"][int(rng.integers(2))]
            node = {8: opset8, 14: opset14}[version].max_pool(
                param, dilations=attrs["dilations"], index_element_type=index_type,
                axis=axis, **common)
    else:
        sizes = np.array(attrs, np.int64)
        if op == "AdaptiveAvgPool":
            node = opset8.adaptive_avg_pool(param, opset8.constant(sizes))
        else:
            # The CPU plugin implements i32 indices only.
            node = opset8.adaptive_max_pool(param, opset8.constant(sizes), "i32")
    return ov.Model(node.outputs(), [param], "config")


def _assert_agree(native, ours, dtype, what, exact=False):
    assert ours.shape == native.shape and ours.dtype == native.dtype, what
    if exact or dtype.kind in "iu" or ours.dtype.kind in "iu":
        np.testing.assert_array_equal(ours, native, err_msg=what)
    elif ours.dtype == np.float16:
        # One float16 ulp of the larger magnitude.
        ulp = np.spacing(np.maximum(np.abs(ours), np.abs(native)).astype(np.float16))
        diff = np.abs(ours.astype(np.float32) - native.astype(np.float32))
        assert (diff <= ulp.astype(np.float32)).all(), what
    else:
        np.testing.assert_allclose(ours, native, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("name", OPS)
def test_random_configs_match_openvino(cores, tmp_path, name):
    op, version = name.split("-")
    version = int(version)
    rng = np.random.default_rng([SEED, OPS.index(name)])
    dtypes = ["float32", "float16"] + (["int8", "uint8"] if "Max" in op else [])
    for i in range(PER_OP):
        dtype = np.dtype(dtypes[int(rng.integers(len(dtypes)))])
        if op.startswith("Adaptive"):
            rank = int(rng.integers(1, 4))
            shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)),
                     *(int(rng.integers(1, 9)) for _ in range(rank)))
            attrs = [int(rng.integers(1, 6)) for _ in range(rank)]
        else:
            shape, attrs = _fixed_config(rng, op, version)
        x = _data(rng, shape, dtype)
        model = _build(op, version, shape, dtype, attrs, rng)
        native, ours = _run_both(cores, model, tmp_path, [x])
        what = f"{name} #{i}: shape {shape} {dtype} {attrs}"
        for theirs, mine in zip(native, ours):
            _assert_agree(theirs, mine, dtype, what, exact="Max" in op)
        COUNTS[name] = COUNTS.get(name, 0) + 1
    assert COUNTS[name] == PER_OP


def test_the_bridge_really_runs_ovpool(cores, tmp_path, monkeypatch):
    """The comparison above is meaningful only if the extended Core runs ovpool's kernels."""
    calls = []
    real = ovpool.pooling.avg_pool
    monkeypatch.setattr(ovpool.pooling, "avg_pool", lambda *a, **k: calls.append(k) or real(*a, **k))
    param = opset8.parameter([1, 2, 6, 6], ov.Type.f32, name="x")
    node = opset1.avg_pool(param, [2, 2], [0, 0], [0, 0], [2, 2], True)
    x = np.arange(72, dtype=np.float32).reshape(1, 2, 6, 6)
    native, ours = _run_both(cores, ov.Model([node.output(0)], [param]), tmp_path, [x])
    assert len(calls) == 1 and calls[0]["out"] is not None
    np.testing.assert_array_equal(ours[0], native[0])


# ---- evaluate: zero copy, dtypes ------------------------------------------------------------

def test_evaluate_writes_into_the_output_tensor(monkeypatch):
    seen = []
    real = ovpool.pooling.max_pool
    monkeypatch.setattr(ovpool.pooling, "max_pool",
                        lambda x, **k: seen.append((x, k)) or real(x, **k))
    param = opset8.parameter([1, 1, 4, 4], ov.Type.f32, name="x")
    node = bridge.op_classes()["MaxPool"](
        [param], dict(strides=[2, 2], dilations=[1, 1], pads_begin=[0, 0], pads_end=[0, 0],
                      kernel=[2, 2], rounding_type="floor", auto_pad="explicit",
                      index_element_type="i32", axis=0))
    model = ov.Model([node.output(0), node.output(1)], [param])   # both outputs are read
    x = ov.Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    values, indices = ov.Tensor(ov.Type.f32, [1, 1, 2, 2]), ov.Tensor(ov.Type.i32, [1, 1, 2, 2])
    assert node.evaluate([values, indices], [x])
    (array, kwargs), = seen
    assert np.shares_memory(array, x.data)                   # the input is not copied
    assert np.shares_memory(kwargs["out"], values.data)      # outputs are written in place
    assert np.shares_memory(kwargs["out_indices"], indices.data)
    np.testing.assert_array_equal(values.data.ravel(), [5, 7, 13, 15])
    np.testing.assert_array_equal(indices.data.ravel(), [5, 7, 13, 15])
    del model


def test_indices_nothing_reads_are_not_computed(monkeypatch):
    seen = []
    real = ovpool.pooling.max_pool
    monkeypatch.setattr(ovpool.pooling, "max_pool",
                        lambda x, **k: seen.append(k) or real(x, **k))
    param = opset8.parameter([1, 1, 4, 4], ov.Type.f32, name="x")
    node = bridge.op_classes()["MaxPool"](
        [param], dict(strides=[2, 2], dilations=[1, 1], pads_begin=[0, 0], pads_end=[0, 0],
                      kernel=[2, 2], rounding_type="floor", auto_pad="explicit"))
    model = ov.Model([node.output(0)], [param])
    compiled = ov.Core().compile_model(model, "CPU", CONFIG)
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    np.testing.assert_array_equal(compiled(x)[0].ravel(), [5, 7, 13, 15])
    assert seen and all(k["return_indices"] is False for k in seen)


def test_bfloat16_tensors_are_read_as_bfloat16():
    param = opset8.parameter([1, 1, 4], ov.Type.bf16, name="x")
    node = bridge.op_classes()["AdaptiveAvgPool"](
        [param, opset8.constant(np.array([2], np.int64))])
    data = np.array([[[1.5, 2.5, -3.0, 8.0]]], ml_dtypes.bfloat16)
    x = ov.Tensor(ov.Type.bf16, [1, 1, 4])
    x.data[...] = data.view(np.uint16).view(x.data.dtype)
    out = ov.Tensor(ov.Type.bf16, [1, 1, 2])
    node.evaluate([out], [x, ov.Tensor(np.array([2], np.int64))])
    got = out.data.view(np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(got.ravel(), [2.0, 2.5])


# ---- shapes, errors -------------------------------------------------------------------------

def test_dynamic_batch_through_the_bridge(cores, tmp_path):
    param = opset8.parameter([-1, 3, 12, 10], ov.Type.f32, name="x")
    a = opset8.max_pool(param, [2, 2], [1, 1], [1, 0], [0, 1], [3, 3], "ceil", "explicit", "i64", 1)
    b = opset16.avg_pool(a.output(0), [1, 2], [0, 1], [1, 0], [2, 2], False, "ceil_torch",
                         dilations=[2, 1])
    c = opset8.adaptive_avg_pool(b, opset8.constant(np.array([3, 2], np.int64)))
    d = opset8.adaptive_max_pool(b, opset8.constant(np.array([2, 3], np.int64)), "i32")
    model = ov.Model([a.output(1), c.output(0), *d.outputs()], [param])
    path = str(tmp_path / "dynamic.xml")
    ov.save_model(model, path)
    native, extended = cores
    read = extended.read_model(path)
    assert str(read.outputs[1].get_partial_shape()) == "[?,3,3,2]"
    compiled = [core.compile_model(core.read_model(path), "CPU", CONFIG) for core in cores]
    for batch in (1, 3, 2):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 12, 10)).astype(np.float32)
        theirs, ours = (list(c(x).values()) for c in compiled)
        for t, o in zip(theirs, ours):
            assert o.shape[0] == batch
            _assert_agree(t, o, t.dtype, f"batch {batch}")


def _pooling_zoo():
    param = opset8.parameter([2, 3, 9, 10], ov.Type.f32, name="x")
    nodes = [
        opset1.avg_pool(param, [2, 2], [1, 0], [1, 1], [3, 2], False, "ceil"),
        opset14.avg_pool(param, [2, 2], [0, 0], [0, 0], [2, 2], True, "ceil_torch", "same_upper"),
        opset16.avg_pool(param, [2, 1], [1, 0], [0, 2], [3, 3], False, "ceil", "explicit", [2, 1]),
        opset1.max_pool(param, [2, 2], [0, 0], [0, 0], [2, 2], "floor", "same_lower"),
        opset8.max_pool(param, [2, 2], [1, 1], [0, 1], [1, 0], [2, 2], "floor", "explicit", "i32", 2),
        opset14.max_pool(param, [2, 2], [1, 2], [0, 0], [0, 0], [2, 2], "ceil_torch"),
        opset8.adaptive_avg_pool(param, opset8.constant(np.array([3, 4]))),
        opset8.adaptive_max_pool(param, opset8.constant(np.array([4, 3])), "i32"),
    ]
    for i, node in enumerate(nodes):
        node.set_friendly_name(f"pool{i}")
        for j, output in enumerate(node.outputs()):
            output.get_tensor().set_names({f"out{i}_{j}"})
    return ov.Model([o for n in nodes for o in n.outputs()], [param], "zoo")


def _assert_zoo_runs_as_native(model, seed):
    """``model``, a pooling zoo whose nodes were replaced, keeps its output names and gives
    OpenVINO's native results when a plain Core runs it."""
    core = ov.Core()
    x = np.random.default_rng(seed).standard_normal((2, 3, 9, 10)).astype(np.float32)
    expected = core.compile_model(_pooling_zoo(), "CPU", CONFIG)(x)
    assert [o.get_any_name() for o in model.outputs] == [
        "out0_0", "out1_0", "out2_0", "out3_0", "out4_0", "out4_1", "out5_0", "out5_1",
        "out6_0", "out7_0", "out7_1"]
    got = core.compile_model(model, "CPU", CONFIG)(x)
    for (name, theirs), ours in zip(expected.items(), got.values()):
        _assert_agree(theirs, ours, theirs.dtype, str(name))


def test_replace_pooling_on_an_in_memory_model():
    model = _pooling_zoo()
    assert bridge.replace_pooling(model, implementation="python") == 8
    assert bridge.replace_pooling(model) == 0           # already ovpool's
    kinds = {op.get_friendly_name(): type(op).__name__ for op in model.get_ordered_ops()}
    assert kinds["pool0"] == "OvpoolAvgPool" and kinds["pool7"] == "OvpoolAdaptiveMaxPool"
    _assert_zoo_runs_as_native(model, seed=1)
    assert bridge.replace_pooling(_pooling_zoo(), ops="MaxPool") == 3
    assert bridge.replace_pooling(_pooling_zoo(), ops=["AvgPool-16", "AdaptiveMaxPool-8"]) == 2
    with pytest.raises(OvpoolError, match="unknown ovpool OpenVINO op 'Softmax'"):
        bridge.replace_pooling(_pooling_zoo(), ops="Softmax")


def test_replace_pooling_with_the_native_library():
    """The native library's nodes swapped into an in-memory model, run by a plain Core."""
    model = _pooling_zoo()
    assert bridge.replace_pooling(model, implementation="native") == 8
    assert bridge.replace_pooling(model, implementation="native") == 0
    nodes = {op.get_friendly_name(): op for op in model.get_ordered_ops()}
    for i in range(8):
        info = nodes[f"pool{i}"].get_type_info()
        assert info.version_id == "ovpool", (i, info.name, info.version_id)
        assert not isinstance(nodes[f"pool{i}"], ov.Op)      # C++ nodes, not the Python ops
    _assert_zoo_runs_as_native(model, seed=2)
    with pytest.raises(OvpoolError, match="takes over every pooling op"):
        bridge.replace_pooling(_pooling_zoo(), ops="MaxPool", implementation="native")


def test_add_extensions_says_which_implementation_runs(tmp_path):
    path = bridge.extension_path()
    assert os.path.isfile(path)
    taken = bridge.add_extensions(ov.Core())
    assert (taken.implementation, taken.path) == ("native", path)
    assert taken == list(bridge.OPS)
    assert bridge.add_extensions(ov.Core(), ops="MaxPool").implementation == "python"
    assert bridge.add_extensions(ov.Core(), onnx=False).implementation == "python"
    assert bridge.add_extensions(ov.Core(), implementation="python").implementation == "python"
    with pytest.raises(OvpoolError, match="implementation='bogus'"):
        bridge.add_extensions(ov.Core(), implementation="bogus")
    path = os.path.join(ROOT, "samples", "models", "max_pool_8.xml")
    compiled = bridge.compile_with_openvino(path, implementation="python")
    assert compiled.implementation == "python"
    assert bridge.compile_with_openvino(path, ovpool_pooling=False).implementation is None


def test_save_model_writes_ovpool_layers_that_read_back_unchanged(cores, tmp_path):
    native, extended = cores
    ov.save_model(_pooling_zoo(), str(tmp_path / "zoo.xml"))
    model = extended.read_model(str(tmp_path / "zoo.xml"))
    ov.save_model(model, str(tmp_path / "saved.xml"))
    saved = (tmp_path / "saved.xml").read_text()
    assert saved.count('version="ovpool"') == 8 and 'version="opset1"' in saved
    assert 'type="AvgPool" version="ovpool"' in saved
    # AvgPool-1 becomes the ovpool AvgPool with its attributes and unit dilations.
    assert ('kernel="3, 2" strides="2, 2" pads_begin="1, 0" pads_end="1, 1" exclude-pad="false" '
            'auto_pad="explicit" rounding_type="ceil" dilations="1, 1"') in saved
    again = extended.read_model(str(tmp_path / "saved.xml"))
    ov.save_model(again, str(tmp_path / "again.xml"))
    assert (tmp_path / "again.xml").read_text() == saved
    x = np.random.default_rng(2).standard_normal((2, 3, 9, 10)).astype(np.float32)
    theirs = native.compile_model(str(tmp_path / "zoo.xml"), "CPU", CONFIG)(x)
    ours = extended.compile_model(again, "CPU", CONFIG)(x)
    for t, o in zip(theirs.values(), ours.values()):
        _assert_agree(t, o, t.dtype, "round trip")
    with pytest.raises(RuntimeError):                # a plain Core does not know the opset
        ov.Core().read_model(str(tmp_path / "saved.xml"))
    # ovpool's own runtime reads the ovpool-opset layers too.
    pure = ovpool.compile_model(str(tmp_path / "saved.xml"))(x)
    assert len(pure) == len(theirs)
    for t, o in zip(theirs.values(), pure.values()):
        _assert_agree(t, o, t.dtype, "ovpool runtime on ovpool-opset layers")


def test_bad_attributes_name_the_layer_and_attribute(cores, tmp_path):
    param = opset8.parameter([1, 1, 4, 4], ov.Type.f32, name="x")
    node = bridge.op_classes()["AvgPool"]()
    node.set_friendly_name("smooth")
    attributes = dict(kernel=[2, 2], strides=[0, 1], pads_begin=[0, 0], pads_end=[0, 0],
                      dilations=[1, 1])
    with pytest.raises(ovpool.errors.BadAttributeError) as error:
        bridge.op_classes()["AvgPool"]([param], attributes)
    assert "attribute 'strides'" in str(error.value) and "type=AvgPool" in str(error.value)
    # Through read_model: OpenVINO wraps the error, the message survives.
    ov.save_model(ov.Model([opset1.avg_pool(param, [1, 1], [0, 0], [0, 0], [2, 2], True)],
                           [param]), str(tmp_path / "m.xml"))
    text = (tmp_path / "m.xml").read_text()
    (tmp_path / "m.xml").write_text(text.replace('strides="1, 1"', 'strides="1, 0"'))
    with pytest.raises(RuntimeError, match=r"layer 'AvgPool_\d+' type=AvgPool.*attribute 'strides'"):
        cores[1].read_model(str(tmp_path / "m.xml"))
    # Version rules are the native version's: AvgPool-1 has no ceil_torch.
    (tmp_path / "m.xml").write_text(text.replace('rounding_type="floor"', 'rounding_type="ceil_torch"'))
    with pytest.raises(RuntimeError, match="version=opset1.*attribute 'rounding_type'"):
        cores[1].read_model(str(tmp_path / "m.xml"))


def test_exclude_pad_refusal_matches_openvino(cores, tmp_path):
    """exclude-pad with a pad reaching the dilated kernel: OpenVINO refuses the IR; the bridge
    refuses it too (when it runs: ovpool checks this rule in pooling.avg_pool, not in shape
    inference)."""
    param = opset8.parameter([1, 1, 6], ov.Type.f32, name="x")
    node = opset1.avg_pool(param, [1], [1], [0], [2], True)
    path = tmp_path / "refused.xml"
    ov.save_model(ov.Model([node], [param]), str(path))
    path.write_text(path.read_text().replace('pads_begin="1"', 'pads_begin="2"'))
    path = str(path)
    for core in cores:
        with pytest.raises(RuntimeError):
            core.compile_model(core.read_model(path), "CPU", CONFIG)(np.ones((1, 1, 6), np.float32))


# ---- the corners where OpenVINO deviates from its spec --------------------------------------

def _one_op(cores, tmp_path, node_fn, x):
    param = opset8.parameter(list(x.shape), _ov_type(x.dtype), name="x")
    node = node_fn(param)
    return _run_both(cores, ov.Model(node.outputs(), [param]), tmp_path, [x])


def test_corner_all_nan_max_window(cores, tmp_path):
    x = np.array([[[np.nan, np.nan, 1.0, np.nan]]], np.float32)
    native, ours = _one_op(cores, tmp_path, lambda p: opset8.max_pool(
        p, [2], [1], [0], [0], [2], index_element_type="i64"), x)
    assert native[0][0, 0, 0] == np.finfo(np.float32).min          # OpenVINO: -FLT_MAX
    assert np.isnan(ours[0][0, 0, 0]) and ours[1][0, 0, 0] == 0   # semantics.md: NaN, first NaN
    assert ours[0][0, 0, 1] == 1.0 and ours[1][0, 0, 1] == 2


def test_corner_lowest_value_index(cores, tmp_path):
    x = np.array([[[5, 0, 0, 0, 0, 7]]], np.uint8)
    native, ours = _one_op(cores, tmp_path, lambda p: opset8.max_pool(
        p, [2], [1], [0], [0], [2], index_element_type="i64"), x)
    np.testing.assert_array_equal(native[1].ravel(), [0, 0, 5])
    np.testing.assert_array_equal(ours[1].ravel(), [0, 2, 5])


def test_corner_empty_average_window(cores, tmp_path):
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    native, ours = _one_op(cores, tmp_path, lambda p: opset1.avg_pool(
        p, [2], [0], [1], [2], True, "ceil"), x)
    assert np.isnan(native[0][0, 0, 2])
    np.testing.assert_array_equal(ours[0].ravel(), [0.5, 2.5, 0.0])


def test_corner_adaptive_max_nan_first(cores, tmp_path):
    x = np.array([[[np.nan, 2.0, 1.0, 0.5]]], np.float32)
    native, ours = _one_op(cores, tmp_path, lambda p: opset8.adaptive_max_pool(
        p, opset8.constant(np.array([1], np.int64)), "i32"), x)
    assert np.isnan(native[0].ravel()[0])
    assert ours[0].ravel()[0] == 2.0 and ours[1].ravel()[0] == 1


def test_corner_same_ceil_clamped_pad(cores, tmp_path):
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    native, ours = _one_op(cores, tmp_path, lambda p: opset1.max_pool(
        p, [2], [0], [0], [1], "ceil", "same_upper"), x)
    assert native[0].shape == (1, 1, 3)                             # one extra, empty window
    assert ours[0].shape == (1, 1, 2)                               # the spec's ceil(L / s)
    np.testing.assert_array_equal(ours[0].ravel(), [0, 2])


# ---- a CNN through the CLI ------------------------------------------------------------------

def _cnn(batch=1):
    rng = np.random.default_rng(7)
    param = opset8.parameter([batch, 3, 32, 32], ov.Type.f32, name="image")
    weights = opset8.constant(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3)
    conv = opset8.convolution(param, weights, [1, 1], [1, 1], [1, 1], [1, 1])
    relu = opset8.relu(conv)
    pool = opset14.max_pool(relu, [2, 2], [1, 1], [0, 0], [1, 1], [3, 3], "ceil_torch")
    conv2 = opset8.convolution(pool.output(0), opset8.constant(
        rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2), [1, 1], [1, 1], [1, 1],
        [1, 1])
    avg = opset1.avg_pool(opset8.relu(conv2), [2, 2], [0, 0], [0, 0], [2, 2], True)
    gap = opset8.adaptive_avg_pool(avg, opset8.constant(np.array([1, 1], np.int64)))
    flat = opset8.reshape(gap, opset8.constant(np.array([-1, 16], np.int64)), False)
    logits = opset8.matmul(flat, opset8.constant(
        rng.standard_normal((16, 10)).astype(np.float32)), False, False)
    logits.output(0).get_tensor().set_names({"logits"})
    return ov.Model([logits.output(0)], [param], "cnn")


def test_cnn_runs_with_engine_openvino_and_matches_native(tmp_path):
    path = str(tmp_path / "cnn.xml")
    ov.save_model(_cnn(), path, compress_to_fp16=False)
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    command = [sys.executable, "-m", "ovpool", "run", path, "--engine", "openvino", "--input",
               str(tmp_path / "x.npy"), "--output", str(tmp_path / "out.npz")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "engine: openvino (CPU plugin, pooling by ovpool)" in result.stdout
    theirs = ov.Core().compile_model(path, "CPU", CONFIG)(x)[0]
    ours = np.load(tmp_path / "out.npz")["logits"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    # auto picks OpenVINO for a model with Convolution, and check agrees.
    result = subprocess.run(command[:5] + ["--input", str(tmp_path / "x.npy")],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0 and "pooling by ovpool" in result.stdout, result.stderr
    result = subprocess.run([sys.executable, "-m", "ovpool", "check", path], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ovpool runtime: skipped" in result.stdout and "all engines agree" in result.stdout


def test_import_ovpool_never_imports_openvino():
    code = ("import sys, ovpool, ovpool.openvino, ovpool.cli\n"
            "assert 'openvino' not in sys.modules, 'openvino was imported'\n"
            "assert ovpool.openvino.available()\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr


# ---- ONNX semantics: OnnxAveragePool and OnnxMaxPool ----------------------------------------

ONNX_CONFIGS_PER_OP = 40
# ONNX opsets with different pooling versions; float64 is left out because OpenVINO's CPU
# plugin computes it in float32.
_ONNX_OPSETS = (7, 8, 10, 11, 12, 19, 22)
_ONNX_DTYPES = ("float32", "float16", "int8", "uint8")


def _onnx_file(tmp_path, op_type, attrs, shape, dtype, opset, n_outputs, name="m.onnx"):
    import onnx

    model = onnx_oracle.one_node_model(op_type, attrs, ["N", *shape[1:]], dtype, opset,
                                       n_outputs)
    path = str(tmp_path / name)
    onnx.save(model, path)
    return path


def _pool_op_types(model):
    return sorted(op.get_type_name() for op in model.get_ordered_ops()
                  if "Pool" in op.get_type_name())


@pytest.mark.parametrize("op_type", ["AveragePool", "MaxPool"])
def test_onnx_models_read_by_an_extended_core_match_onnxruntime(cores, tmp_path, op_type):
    _, extended = cores
    rng = np.random.default_rng(SEED + len(op_type))
    mismatches = []
    for i in range(ONNX_CONFIGS_PER_OP):
        opset = int(rng.choice([o for o in _ONNX_OPSETS if op_type == "MaxPool" or o >= 7]))
        while True:
            attrs, shape, dtype = onnx_oracle.random_config(rng, op_type, opset)
            if dtype.name in _ONNX_DTYPES:
                break
        n_outputs = 2 if op_type == "MaxPool" and opset >= 8 else 1
        x = onnx_oracle.random_input(rng, shape, dtype)
        path = _onnx_file(tmp_path, op_type, attrs, shape, dtype, opset, n_outputs)
        model = extended.read_model(path)
        assert _pool_op_types(model) == [f"Onnx{op_type}"]
        compiled = extended.compile_model(model, "CPU", CONFIG)
        ours = [np.asarray(v) for v in compiled(x).values()]
        theirs = onnx_oracle.run_onnxruntime(op_type, attrs, x, opset, n_outputs)
        if not onnx_oracle.agrees(op_type, ours, theirs, dtype):
            mismatches.append((opset, attrs, shape, dtype.name))
    print(f"\n{op_type} ONNX models through OpenVINO with ovpool's extensions: "
          f"{ONNX_CONFIGS_PER_OP - len(mismatches)}/{ONNX_CONFIGS_PER_OP} match onnxruntime")
    assert mismatches == []


ONNX_SAMPLES = ("avg_pool_include_pad_ceil", "max_pool_storage_order")


@pytest.mark.parametrize("short", ONNX_SAMPLES)
def test_onnx_conversion_saves_ovpool_layers_that_both_runtimes_read(cores, tmp_path, short):
    native, extended = cores
    onnx_path = os.path.join(ROOT, "samples", "onnx", f"{short}.onnx")
    x = np.load(os.path.join(ROOT, "samples", "inputs", f"onnx_{short}.npy"))
    onnx_says = np.load(os.path.join(ROOT, "samples", "expected", "onnxruntime",
                                     f"onnx_{short}.npz"))
    model = ov.convert_model(onnx_path, extension=bridge.onnx_extensions())
    ov.save_model(model, str(tmp_path / "m.xml"), compress_to_fp16=False)
    saved = (tmp_path / "m.xml").read_text()
    op_type = "OnnxMaxPool" if "max" in short else "OnnxAveragePool"
    assert f'type="{op_type}" version="ovpool"' in saved
    # Read back by an extended Core and saved again: the same file.
    ov.save_model(extended.read_model(str(tmp_path / "m.xml")), str(tmp_path / "again.xml"),
                  compress_to_fp16=False)
    assert (tmp_path / "again.xml").read_text() == saved
    runs = {"ovpool runtime": ovpool.compile_model(str(tmp_path / "m.xml"))(x),
            "openvino+ovpool": {k.get_any_name(): np.asarray(v) for k, v in
                                extended.compile_model(str(tmp_path / "m.xml"), "CPU",
                                                       CONFIG)(x).items()}}
    for label, outputs in runs.items():
        assert sorted(outputs) == sorted(onnx_says.files), label
        for key in onnx_says.files:
            assert outputs[key].shape == onnx_says[key].shape, (label, key)
            np.testing.assert_allclose(outputs[key], onnx_says[key], rtol=1e-6, atol=1e-7,
                                       err_msg=label)
    # OpenVINO's own conversion of the same ONNX model does not give ONNX's answer.
    plain = native.compile_model(ov.convert_model(onnx_path), "CPU", CONFIG)(x)
    assert any(np.asarray(v).shape != onnx_says[k.get_any_name()].shape
               or not np.allclose(np.asarray(v), onnx_says[k.get_any_name()])
               for k, v in plain.items())


def test_dynamic_batch_onnx_model_through_an_extended_core(cores, tmp_path):
    _, extended = cores
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1,
             "storage_order": 1}
    path = _onnx_file(tmp_path, "MaxPool", attrs, (1, 3, 7, 6), np.float32, 22, 2)
    compiled = extended.compile_model(extended.read_model(path), "CPU", CONFIG)
    for batch in (1, 4):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 7, 6)).astype(np.float32)
        ours = [np.asarray(v) for v in compiled(x).values()]
        theirs = onnx_oracle.run_onnxruntime("MaxPool", attrs, x, 22, 2)
        assert onnx_oracle.agrees("MaxPool", ours, theirs, x.dtype)


def test_onnx_extensions_are_optional_and_named(tmp_path):
    path = _onnx_file(tmp_path, "AveragePool", {"kernel_shape": [2]}, (1, 1, 4), np.float32,
                      22, 1)
    core = ov.Core()
    bridge.add_extensions(core, onnx=False)
    assert _pool_op_types(core.read_model(path)) == ["AvgPool"]
    assert len(bridge.onnx_extensions("MaxPool")) == 1
    with pytest.raises(OvpoolError, match="unknown ONNX pooling operator 'LpPool'"):
        bridge.onnx_extensions(["AveragePool", "LpPool"])


def test_bad_onnx_attributes_name_the_attribute(cores, tmp_path):
    _, extended = cores
    path = _onnx_file(tmp_path, "AveragePool", {"kernel_shape": [2], "pads": [2, 0]},
                      (1, 1, 6), np.float32, 22, 1)
    with pytest.raises(Exception, match=r"attribute 'pads' = \(2, 0\): the pads of spatial axis"):
        extended.read_model(path)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin to one")
def test_kernels_run_unpinned_when_openvino_pinned_the_thread():
    everything = os.sched_getaffinity(0)
    one = {min(everything)}
    seen = []
    os.sched_setaffinity(0, one)           # as OpenVINO's ENABLE_CPU_PINNING leaves it
    try:
        with ovpool.num_threads(2), _openvino_ops._unpinned():
            seen.append(os.sched_getaffinity(0))
        with ovpool.num_threads(1), _openvino_ops._unpinned():
            seen.append(os.sched_getaffinity(0))
        seen.append(os.sched_getaffinity(0))
    finally:
        os.sched_setaffinity(0, everything)
    assert seen == [everything, one, one]
