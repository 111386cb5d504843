"""ovpool.onnx: the ONNX pooling dialect, every version.

1. The onnx package's own backend node cases for AveragePool, MaxPool, GlobalAveragePool,
   GlobalMaxPool and LpPool, attributes read from each generated model.
2. Seeded random one-node models per opset against onnxruntime's CPU provider, with the corners
   where onnxruntime deviates from the spec kept out and asserted separately.
3. Hand-worked spec examples: version rules, dtypes, storage_order, NaN, the listed corners.
"""

import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import onnx.defs as onnx_defs
import onnxruntime as ort
import pytest

import onnx_oracle as oracle
import ovpool
from ovpool.errors import BadAttributeError, BadDtypeError
from ovpool.onnx import VERSIONS, op_version

ort.set_default_logger_severity(4)


# --------------------------------------------------------------------------------------------
# 1. The onnx backend node cases
# --------------------------------------------------------------------------------------------

def _close(got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind == "f":
        return np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3, atol=1e-7)
    return np.array_equal(got, want)


def test_onnx_backend_node_cases():
    cases = oracle.backend_cases()
    assert {m.graph.node[0].op_type for _, m, _, _ in cases} == set(oracle.POOL_OPS)
    failed = []
    for name, model, inputs, outputs in cases:
        node = model.graph.node[0]
        got = oracle.run_ovpool(node.op_type, oracle.node_attributes(node), inputs[0],
                                oracle.model_opset(model), len(outputs))
        if not all(_close(g, w) for g, w in zip(got, outputs)):
            failed.append(name)
    print(f"\nONNX backend node cases: {len(cases) - len(failed)}/{len(cases)} passed")
    # None contradicts semantics.md: every expected output is reproduced.
    assert failed == []


# --------------------------------------------------------------------------------------------
# 2. Random configurations against onnxruntime
# --------------------------------------------------------------------------------------------

OPSETS = (1, 7, 8, 10, 11, 12, 18, 19, 22)
CONFIGS_PER_OPSET = 250
RANDOM_OPS = ("AveragePool", "MaxPool", "LpPool", "GlobalAveragePool", "GlobalMaxPool")
# onnxruntime implements AveragePool from opset 7 and LpPool from opset 2 only.
_ORT_SINCE = {"AveragePool": 7, "LpPool": 2}
@pytest.mark.parametrize("opset", OPSETS)
def test_random_configurations_match_onnxruntime(opset):
    rng = np.random.default_rng(1000 + opset)
    ops = [op for op in RANDOM_OPS if opset >= _ORT_SINCE.get(op, 1)]
    mismatches = []
    for i in range(CONFIGS_PER_OPSET):
        op = ops[i % len(ops)]
        attrs, shape, dtype = oracle.random_config(rng, op, opset)
        x = oracle.random_input(rng, shape, dtype)
        n_outputs = 2 if op == "MaxPool" and opset >= 8 else 1
        theirs = oracle.run_onnxruntime(op, attrs, x, opset, n_outputs)
        ours = oracle.run_ovpool(op, attrs, x, opset, n_outputs)
        if not oracle.agrees(op, ours, theirs, dtype):
            mismatches.append((op, attrs, shape, dtype.name))
    matched = CONFIGS_PER_OPSET - len(mismatches)
    print(f"\nopset {opset}: {matched}/{CONFIGS_PER_OPSET} random configurations match "
          f"onnxruntime ({', '.join(ops)})")
    assert mismatches == []


# --------------------------------------------------------------------------------------------
# The listed spec-vs-onnxruntime differences: ovpool's (the spec's) answer, and a check that
# onnxruntime still differs (if one of those starts failing, onnxruntime changed: update
# docs/semantics.md and README's table).
# --------------------------------------------------------------------------------------------

def _ort_or_error(op, attrs, x, opset, n_outputs=1):
    try:
        return oracle.run_onnxruntime(op, attrs, x, opset, n_outputs)
    except Exception as error:  # noqa: BLE001 - onnxruntime raises its own types
        return str(error)


def test_same_pads_come_from_the_dilated_kernel():
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    attrs = dict(kernel_shape=[2], auto_pad="SAME_UPPER", dilations=[3])
    # Dilated kernel 4: O = 6, total pad 3 -> 1 before, 2 after; window j reads j-1 and j+2.
    values, indices = ovpool.onnx.max_pool(x, **attrs)
    np.testing.assert_array_equal(values, [[[3, 4, 5, 6, 4, 5]]])
    np.testing.assert_array_equal(indices, [[[2, 3, 4, 5, 3, 4]]])
    avg = ovpool.onnx.average_pool(x, **attrs)
    np.testing.assert_array_equal(avg, [[[3, 2.5, 3.5, 4.5, 4, 5]]])
    # onnxruntime pads for the undilated kernel: 4 outputs, not ceil(6 / 1) = 6.
    assert oracle.run_onnxruntime("MaxPool", attrs, x, 22, 2)[0].shape == (1, 1, 4)
    assert oracle.run_onnxruntime("AveragePool", attrs, x, 22)[0].shape == (1, 1, 4)


def test_same_pad_is_never_negative():
    # L=3, k=1, s=3: O = 1 and (O-1)*s + k - L = -2, clamped to 0: the window reads x[0].
    x = np.array([[[1, 2, 3]]], np.float32)
    for opset in (10, 11, 19, 22):
        for count_include_pad in (0, 1):
            for ceil_mode in (0, 1):
                attrs = dict(kernel_shape=[1], strides=[3], auto_pad="SAME_UPPER",
                             ceil_mode=ceil_mode, count_include_pad=count_include_pad)
                np.testing.assert_array_equal(
                    ovpool.onnx.average_pool(x, opset=opset, **attrs), [[[1]]])
                theirs = _ort_or_error("AveragePool", attrs, x, opset)
                # onnxruntime refuses ("padding values must be non-negative") or pads by -1
                # and reads x[1].
                assert isinstance(theirs, str) and "non-negative" in theirs or \
                    theirs[0].tolist() == [[[2.0]]], theirs
    attrs = dict(kernel_shape=[1], auto_pad="SAME_UPPER", strides=[3])
    values, indices = ovpool.onnx.max_pool(x, opset=12, **attrs)
    assert values.tolist() == [[[1]]] and indices.tolist() == [[[0]]]
    assert "non-negative" in str(_ort_or_error("MaxPool", attrs, x, 7))
    assert [a.tolist() for a in _ort_or_error("MaxPool", attrs, x, 12, 2)] == [[[[2.0]]], [[[1]]]]


def test_empty_max_window_index():
    # A dilated window that skips the whole axis: taps -1 and 1 on an axis of length 1.
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 2, 1, 3)
    attrs = dict(kernel_shape=[2, 1], dilations=[2, 1], pads=[1, 0, 1, 0])
    values, indices = ovpool.onnx.max_pool(x, **attrs)
    assert (values == np.finfo(np.float32).min).all()
    # The position of the window's own plane start (axis=0 indices), as OpenVINO does.
    np.testing.assert_array_equal(indices, [[[[0, 0, 0]], [[3, 3, 3]]]])
    theirs = oracle.run_onnxruntime("MaxPool", attrs, x, 12, 2)
    np.testing.assert_array_equal(theirs[0], values)
    assert (theirs[1] < 0).all()  # onnxruntime: a negative index, -4
    np.testing.assert_array_equal(ovpool.onnx.average_pool(x, opset=19, **attrs), 0)


# --------------------------------------------------------------------------------------------
# 3. Hand-worked examples and version rules
# --------------------------------------------------------------------------------------------

def test_import_ovpool_does_not_import_onnx():
    code = "import sys, ovpool; ovpool.onnx.max_pool; ovpool.directml; " \
           "sys.exit(1 if 'onnx' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_version_table_matches_the_specs():
    assert [v.since for v in VERSIONS["AveragePool"]] == [1, 7, 10, 11, 19, 22]
    assert [v.since for v in VERSIONS["MaxPool"]] == [1, 8, 10, 11, 12, 22]
    assert [v.since for v in VERSIONS["LpPool"]] == [1, 2, 11, 18, 22]
    assert op_version("AveragePool", 18).name == "AveragePool-11"
    assert op_version("MaxPool", 9).name == "MaxPool-8"
    assert op_version("LpPool", 28).name == "LpPool-22"
    for op, versions in VERSIONS.items():
        for v in versions:
            schema = onnx_defs.get_schema(op, v.since)
            assert schema.since_version == v.since
            assert v.attributes == set(schema.attributes), v.name
            assert v.indices == (len(schema.outputs) == 2)


def test_version_dtypes_match_onnx_defs():
    names = {"tensor(double)": "float64", "tensor(float)": "float32",
             "tensor(float16)": "float16", "tensor(bfloat16)": "bfloat16",
             "tensor(int8)": "int8", "tensor(uint8)": "uint8"}
    for op, versions in VERSIONS.items():
        for v in versions:
            schema = onnx_defs.get_schema(op, v.since)
            t = next(c for c in schema.type_constraints if c.type_param_str == "T")
            assert v.dtypes == {names[s] for s in t.allowed_type_strs}, v.name


@pytest.mark.parametrize("call, opset, name, since", [
    (lambda x, o: ovpool.onnx.average_pool(x, [2], count_include_pad=1, opset=o), 6,
     "count_include_pad", 7),
    (lambda x, o: ovpool.onnx.average_pool(x, [2], ceil_mode=1, opset=o), 9, "ceil_mode", 10),
    (lambda x, o: ovpool.onnx.average_pool(x, [2], dilations=[1], opset=o), 18, "dilations", 19),
    (lambda x, o: ovpool.onnx.max_pool(x, [2], storage_order=1, opset=o,
                                       return_indices=False), 7, "storage_order", 8),
    (lambda x, o: ovpool.onnx.max_pool(x, [2], dilations=[2], opset=o), 9, "dilations", 10),
    (lambda x, o: ovpool.onnx.max_pool(x, [2], ceil_mode=1, opset=o), 9, "ceil_mode", 10),
    (lambda x, o: ovpool.onnx.lp_pool(x, [2], ceil_mode=1, opset=o), 17, "ceil_mode", 18),
    (lambda x, o: ovpool.onnx.lp_pool(x, [2], dilations=[2], opset=o), 17, "dilations", 18),
])
def test_attributes_a_version_lacks_are_refused(call, opset, name, since):
    x = np.ones((1, 1, 4), np.float32)
    with pytest.raises(BadAttributeError, match=rf"'{name}' = .* does not exist in .*-\d+ "
                                                rf"\(opset {opset}\)"):
        call(x, opset)
    call(x, since)


def test_maxpool_indices_need_opset_8():
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    with pytest.raises(BadAttributeError, match="MaxPool-1 .*no Indices"):
        ovpool.onnx.max_pool(x, [2], opset=7)
    np.testing.assert_array_equal(
        ovpool.onnx.max_pool(x, [2], opset=1, return_indices=False), [[[1, 2, 3]]])
    values, indices = ovpool.onnx.max_pool(x, [2], opset=8)
    assert indices.dtype == np.int64 and indices.tolist() == [[[1, 2, 3]]]


@pytest.mark.parametrize("op, dtype, refused, accepted", [
    ("max_pool", np.int8, 11, 12),
    ("max_pool", np.uint8, 11, 12),
    ("max_pool", "bfloat16", 12, 22),
    ("average_pool", "bfloat16", 19, 22),
    ("lp_pool", "bfloat16", 18, 22),
    ("global_average_pool", "bfloat16", 1, 22),
    ("global_max_pool", "bfloat16", 1, 22),
    ("average_pool", np.int8, 22, None),
    ("max_pool", np.int32, 22, None),
])
def test_dtypes_per_version(op, dtype, refused, accepted):
    if dtype == "bfloat16":
        dtype = ml_dtypes.bfloat16
    x = (np.arange(8).reshape(1, 1, 8) % 5).astype(dtype)
    function = getattr(ovpool.onnx, op)
    args = () if op.startswith("global") else ([2],)
    with pytest.raises(BadDtypeError, match=rf"opset {refused}"):
        function(x, *args, opset=refused)
    if accepted is not None:
        out = function(x, *args, opset=accepted)
        out = out[0] if isinstance(out, tuple) else out
        assert out.dtype == x.dtype
        # what a newer version accepted (and remembered) is still refused by the older one
        with pytest.raises(BadDtypeError, match=rf"opset {refused}"):
            function(x, *args, opset=refused)


def test_op_version_lookups_are_checked_after_they_are_remembered():
    assert op_version("AveragePool", 19).since == 19
    assert op_version("AveragePool", np.int64(18)).since == 11
    assert op_version("AveragePool", 19) is op_version("AveragePool", np.int32(19))
    for opset in (True, 0, 29, 19.0):
        with pytest.raises(BadAttributeError, match="opset"):
            op_version("AveragePool", opset)


def test_bfloat16_average_and_max():
    bf16 = ml_dtypes.bfloat16
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    avg = ovpool.onnx.average_pool(x.astype(bf16), [3], strides=[2], pads=[1, 1], ceil_mode=1,
                                   count_include_pad=1)
    assert avg.dtype == bf16 and avg.astype(np.float32).tolist() == [[[1, 3, 5, 3]]]
    values, indices = ovpool.onnx.max_pool(x.astype(bf16), [2], strides=[2])
    assert values.astype(np.float32).tolist() == [[[2, 4, 6]]] and indices.tolist() == [[[1, 3, 5]]]


def test_average_pool_1_always_excludes_padding():
    # Not runnable in onnxruntime (no AveragePool-1 kernel): the spec's words, by hand.
    x = np.array([[[1, 2, 3, 4]]], np.float32)
    got = ovpool.onnx.average_pool(x, [3], pads=[1, 1], opset=1)
    np.testing.assert_allclose(got, [[[1.5, 2, 3, 3.5]]])
    include = ovpool.onnx.average_pool(x, [3], pads=[1, 1], count_include_pad=1, opset=7)
    np.testing.assert_allclose(include, [[[1, 2, 3, 7 / 3]]])


def test_count_include_pad_divisor_of_hanging_windows():
    # semantics.md's example: x = 1..6, k3 s2 pads 1/1, ceil: the last window covers x[5], one
    # pad tap inside the padded extent and one beyond it: 6 / 2 = 3 (onnxruntime agrees).
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    attrs = dict(kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1, count_include_pad=1)
    np.testing.assert_array_equal(ovpool.onnx.average_pool(x, **attrs), [[[1, 3, 5, 3]]])
    np.testing.assert_array_equal(oracle.run_onnxruntime("AveragePool", attrs, x, 22)[0],
                                  [[[1, 3, 5, 3]]])


def test_ceil_mode_drops_a_window_starting_in_the_right_padding():
    # L=5, k2 s2 pads 0/1: ceil gives 3 windows starting at 0, 2, 4; none starts in the pad.
    x = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
    assert ovpool.onnx.average_pool(x, [2], strides=[2], pads=[0, 1], ceil_mode=1).shape[-1] == 3
    # L=4, k2 s2 pads 0/1: ceil length 3, but window 2 would start at 4 = L + pad_begin: dropped.
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4)
    np.testing.assert_array_equal(
        ovpool.onnx.average_pool(x, [2], strides=[2], pads=[0, 1], ceil_mode=1), [[[1.5, 3.5]]])
    # VALID with ceil: L=3 k2 s2 gives 2 windows (the second hangs over the end).
    x = np.arange(3, dtype=np.float32).reshape(1, 1, 3)
    np.testing.assert_array_equal(
        ovpool.onnx.average_pool(x, [2], strides=[2], auto_pad="VALID", ceil_mode=1),
        [[[0.5, 2]]])


def test_storage_order_column_major_within_each_plane():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    _, rows = ovpool.onnx.max_pool(x, [2, 3], strides=[2, 1], pads=[1, 0, 0, 1])
    _, cols = ovpool.onnx.max_pool(x, [2, 3], strides=[2, 1], pads=[1, 0, 0, 1], storage_order=1)
    plane, within = np.divmod(rows, 20)
    h, w = np.divmod(within, 4)
    np.testing.assert_array_equal(cols, plane * 20 + w * 5 + h)
    theirs = oracle.run_onnxruntime(
        "MaxPool", dict(kernel_shape=[2, 3], strides=[2, 1], pads=[1, 0, 0, 1], storage_order=1),
        x, 12, 2)
    np.testing.assert_array_equal(cols, theirs[1])
    # 1-D: the same either way.
    y = x.reshape(2, 3, 20)
    assert np.array_equal(ovpool.onnx.max_pool(y, [3], storage_order=1)[1],
                          ovpool.onnx.max_pool(y, [3])[1])


def test_max_pool_nan_and_ties():
    x = np.array([[[np.nan, 1, np.nan, np.nan, 2, 2]]], np.float32)
    values, indices = ovpool.onnx.max_pool(x, [2], strides=[2])
    np.testing.assert_array_equal(values, [[[1, np.nan, 2]]])
    np.testing.assert_array_equal(indices, [[[1, 2, 4]]])


def test_lp_pool_versions_and_padding():
    x = np.array([[[3, -4, 0, 5, 12]]], np.float32)
    # p = 2 over k2 s1 pads 1/1: padding contributes nothing.
    want = [[[3, 5, 4, 5, 13, 12]]]
    for opset in (2, 11, 18, 22):
        np.testing.assert_allclose(ovpool.onnx.lp_pool(x, [2], pads=[1, 1], opset=opset), want)
    # LpPool-1 takes a float p; from opset 2 p is an int.
    np.testing.assert_allclose(ovpool.onnx.lp_pool(x, [2], p=1.5, opset=1)[0, 0, 0],
                               (3 ** 1.5 + 4 ** 1.5) ** (1 / 1.5), rtol=1e-6)
    with pytest.raises(BadAttributeError, match="'p' is an int"):
        ovpool.onnx.lp_pool(x, [2], p=1.5, opset=2)
    with pytest.raises(BadAttributeError, match="'p' must be a positive"):
        ovpool.onnx.lp_pool(x, [2], p=0)
    # ceil_mode and dilations from 18: the hanging window sums its input elements only.
    np.testing.assert_allclose(
        ovpool.onnx.lp_pool(x, [2], strides=[2], dilations=[2], pads=[0, 1], ceil_mode=1, p=1,
                            opset=18),
        [[[3, 12, 12]]])
    np.testing.assert_allclose(ovpool.onnx.global_lp_pool(x, p=1), [[[24]]])
    np.testing.assert_allclose(ovpool.onnx.global_lp_pool(x, p=3.0, opset=1),
                               [[[np.cbrt(27 + 64 + 125 + 1728)]]], rtol=1e-6)


def test_global_pools():
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5, 2)).astype(np.float32)
    np.testing.assert_allclose(ovpool.onnx.global_average_pool(x),
                               x.mean(axis=(2, 3, 4), keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(ovpool.onnx.global_max_pool(x),
                                  x.max(axis=(2, 3, 4), keepdims=True))


@pytest.mark.parametrize("kwargs, match", [
    (dict(kernel_shape=[2], pads=[2, 0]), r"'pads' = \[2, 0\].*smaller than kernel_shape 2"),
    (dict(kernel_shape=[2], pads=[1, 0], auto_pad="VALID"), "cannot be used with auto_pad"),
    (dict(kernel_shape=[2], auto_pad="SAME"), "'auto_pad'"),
    (dict(kernel_shape=[2, 2]), "'kernel_shape' has 2 values"),
    (dict(kernel_shape=[2], pads=[1]), "'pads' has 1 values"),
    (dict(kernel_shape=[2], strides=[0]), "'strides' must be positive"),
    (dict(kernel_shape=[2], ceil_mode=2), "'ceil_mode' must be 0 or 1"),
    (dict(kernel_shape=[9]), "larger than the padded input"),
    (dict(kernel_shape=[2], opset=29), "newer than the newest"),
    (dict(kernel_shape=[2], opset=0), "positive int"),
])
def test_bad_attributes(kwargs, match):
    x = np.ones((1, 1, 4), np.float32)
    with pytest.raises(BadAttributeError, match=match):
        ovpool.onnx.average_pool(x, **kwargs)


def test_zero_pads_with_auto_pad_are_accepted():
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    np.testing.assert_array_equal(
        ovpool.onnx.average_pool(x, [2], pads=[0, 0], auto_pad="VALID"), [[[0.5, 1.5, 2.5]]])


@pytest.mark.parametrize("op_type", ["AveragePool", "MaxPool"])
def test_empty_auto_pad_is_notset_as_onnxruntime_reads_it(op_type):
    # Exporters write auto_pad=""; onnxruntime and the onnx checker read it as NOTSET.
    x = np.random.default_rng(3).standard_normal((1, 2, 7, 6)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 2], pads=[1, 0, 1, 1], strides=[2, 1], auto_pad="")
    node = oracle.one_node_model(op_type, attrs, x.shape, x.dtype, 22).graph.node[0]
    assert oracle.node_attributes(node)["auto_pad"] in ("", b"")
    def first(result):
        return result[0] if isinstance(result, (list, tuple)) else result

    want = first(oracle.run_onnxruntime(op_type, attrs, x, 22))
    got = first(oracle.run_ovpool(op_type, attrs, x, 22))
    assert got.shape == want.shape == (1, 2, 4, 6)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    notset = first(oracle.run_ovpool(op_type, dict(attrs, auto_pad="NOTSET"), x, 22))
    np.testing.assert_array_equal(got, notset)


def test_repeated_calls_reuse_the_translated_windows_and_still_refuse_bad_attributes():
    """Windows translated from int / list / tuple attributes are kept per attribute values:
    a repeated call gets the same windows object and the same averages; other spellings of
    the same attributes (numpy ints) are translated every time with the same result; a bad
    attribute is refused on every call with the value quoted as given."""
    from ovpool import onnx as ovonnx

    rng = np.random.default_rng(89)
    x = rng.standard_normal((1, 2, 9, 11)).astype(np.float32)
    version = op_version("AveragePool", 22)
    args = (x.shape, [3, 2], "NOTSET", 1, None, [1, 0, 1, 1], (2, 1))
    first = ovonnx._windows(version, 22, *args)
    assert ovonnx._windows(version, 22, *args) is first
    numpy_ints = (x.shape, np.array([3, 2]), "NOTSET", 1, None, [1, 0, 1, 1], (2, 1))
    again = ovonnx._windows(version, 22, *numpy_ints)
    assert again == first and again is not first
    want = ovonnx.average_pool(x, [3, 2], pads=[1, 0, 1, 1], strides=(2, 1), ceil_mode=1)
    np.testing.assert_array_equal(
        ovonnx.average_pool(x, np.array([3, 2]), pads=[1, 0, 1, 1], strides=(2, 1),
                            ceil_mode=1), want)
    for pads in ([3, 0, 0, 0], (3, 0, 0, 0)):
        for _ in range(2):
            with pytest.raises(BadAttributeError, match=re.escape(repr(pads))):
                ovonnx.average_pool(x, [3, 2], pads=pads)
