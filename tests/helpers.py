"""Helpers shared by the test modules.

Imports. ``pyproject.toml`` puts ``tests/`` (and ``tests/fuzz/``, ``benchmarks/``) on
``sys.path`` for pytest, so a test module in any folder imports the shared modules by name:
``helpers`` (this one), ``reference`` (the slow numpy oracle), ``openvino_oracle``,
``onnx_oracle``, ``fuzz_ir`` and the benchmark scripts. Per-axis attributes are read
by ``reference.per_axis`` everywhere. No test module changes ``sys.path``
and no test module imports another test module: what two of them share lives here.

Dependencies. Everything of the ``test`` extra (openvino, onnx, onnxruntime, ml_dtypes,
hypothesis, dask) is imported plainly at the top of the module that needs it, never through
``pytest.importorskip`` or a guarded import: CI installs the extra, and a missing package must
fail the run rather than skip the tests that would have caught a missing feature.

Summary lines. A module that counts what it checked registers a function with
``@summary_line``; ``conftest.py`` prints the lines those functions return at the end of the
run (a function returning ``None`` prints nothing, e.g. when its tests were not selected).
"""

import ml_dtypes
import numpy as np

from reference import INT_DTYPES, is_float_dtype

SUMMARY_LINES = []


def summary_line(function):
    """Register ``function`` (no arguments, returns a line or None) for the end of the run."""
    SUMMARY_LINES.append(function)
    return function


# ------------------------------------------------------------------------------------------------
# comparing results with the oracle's
# ------------------------------------------------------------------------------------------------

def _ulp(values, dtype):
    """Spacing of ``dtype`` at each of ``values`` (float64 array of dtype-representable
    numbers)."""
    dtype = np.dtype(dtype)
    if dtype == np.dtype(ml_dtypes.bfloat16):
        info = ml_dtypes.finfo(dtype)
    else:
        info = np.finfo(dtype)
    nmant = int(info.nmant)
    tiny = float(info.smallest_subnormal)
    mag = np.abs(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
    spacing = np.exp2(exponent - nmant)
    spacing = np.where(np.isfinite(mag) & (mag > 0), np.maximum(spacing, tiny), tiny)
    return spacing


def _assert_same_nan(got, want, what):
    gn, wn = np.isnan(got), np.isnan(want)
    bad = np.argwhere(gn != wn)
    assert bad.size == 0, (f"{what}: NaN positions differ, first at {tuple(bad[0])}: "
                           f"got {got[tuple(bad[0])]}, expected {want[tuple(bad[0])]}")


def assert_avg_close(got, want, x):
    """Compare an average result with the oracle's, with the dtype's tolerance."""
    dtype = np.dtype(want.dtype)
    assert got.dtype == dtype, f"dtype {got.dtype}, expected {dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    if got.size == 0:
        return
    if dtype in INT_DTYPES:
        bad = np.argwhere(got != want)
        assert bad.size == 0, (f"integer average differs at {tuple(bad[0])}: got "
                               f"{got[tuple(bad[0])]}, expected {want[tuple(bad[0])]} "
                               f"({bad.shape[0]} of {got.size} differ)")
        return
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    _assert_same_nan(g, w, "average")
    finite_x = np.abs(x.astype(np.float64))
    finite_x = finite_x[np.isfinite(finite_x)]
    scale = float(finite_x.max()) if finite_x.size else 0.0
    both = ~np.isnan(w)
    g, w = g[both], w[both]
    inf = np.isinf(w) | np.isinf(g)
    assert np.array_equal(g[inf], w[inf]), "infinite averages differ"
    g, w = g[~inf], w[~inf]
    if dtype == np.float32:
        tol = 1e-5 * np.abs(w) + 1e-5 * scale + 1e-30
    elif dtype == np.float64:
        tol = 1e-12 * np.abs(w) + 1e-12 * scale + 1e-300
    else:
        # one ulp of the dtype (at either value) plus float32 accumulation noise
        tol = np.maximum(_ulp(w, dtype), _ulp(g, dtype)) + 1e-6 * scale
    err = np.abs(g - w)
    worst = int(np.argmax(err - tol)) if err.size else 0
    assert np.all(err <= tol), (f"{dtype} average off by {err[worst]:.3g} (tolerance "
                                f"{tol[worst]:.3g}): got {g[worst]!r}, expected {w[worst]!r}; "
                                f"{int(np.sum(err > tol))} of {err.size} outside")


def assert_same_averages(got, want):
    """Averages equal exactly; for floats also the sign of every zero (compared as float64:
    numpy's testing misses bfloat16's NaN)."""
    if np.issubdtype(got.dtype, np.integer):
        np.testing.assert_array_equal(got, want)
        return
    got, want = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def assert_max_equal(got, want, got_idx=None, want_idx=None, index_dtype=np.int64):
    dtype = np.dtype(want.dtype)
    assert got.dtype == dtype, f"dtype {got.dtype}, expected {dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    if is_float_dtype(dtype):
        g, w = got.astype(np.float64), want.astype(np.float64)
        _assert_same_nan(g, w, "max")
        same = (g == w) | (np.isnan(g) & np.isnan(w))
    else:
        same = got == want
    bad = np.argwhere(~same)
    assert bad.size == 0, (f"max value differs at {tuple(bad[0])}: got {got[tuple(bad[0])]}, "
                           f"expected {want[tuple(bad[0])]} ({bad.shape[0]} of {got.size})")
    if want_idx is not None:
        assert got_idx is not None
        assert got_idx.dtype == np.dtype(index_dtype), \
            f"index dtype {got_idx.dtype}, expected {np.dtype(index_dtype)}"
        assert got_idx.shape == want_idx.shape
        bad = np.argwhere(got_idx != want_idx)
        assert bad.size == 0, (f"max index differs at {tuple(bad[0])}: got "
                               f"{got_idx[tuple(bad[0])]}, expected {want_idx[tuple(bad[0])]} "
                               f"(value {want[tuple(bad[0])]}; {bad.shape[0]} of "
                               f"{got_idx.size} differ)")


# ------------------------------------------------------------------------------------------------
# hand-written IR files (tests/ir)
# ------------------------------------------------------------------------------------------------

# A valid model: Parameter -> MaxPool-1 -> Result, plus a Const -> Result. Each bad IR below is
# this text with one targeted edit, so every test shows exactly the rule it breaks.
GOOD = """<?xml version="1.0"?>
<net name="good" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="?,2,4,4" element_type="f32"/>
      <output><port id="0" precision="FP32" names="x"><dim>-1</dim><dim>2</dim><dim>4</dim><dim>4</dim></port></output>
    </layer>
    <layer id="1" name="pool" type="MaxPool" version="opset1">
      <data kernel="2, 2" strides="2, 2" pads_begin="0, 0" pads_end="0, 0" rounding_type="floor" auto_pad="explicit"/>
      <input><port id="0" precision="FP32"><dim>-1</dim><dim>2</dim><dim>4</dim><dim>4</dim></port></input>
      <output><port id="1" precision="FP32" names="pooled"><dim>-1</dim><dim>2</dim><dim>2</dim><dim>2</dim></port></output>
    </layer>
    <layer id="2" name="pooled/sink" type="Result" version="opset1">
      <input><port id="0" precision="FP32"><dim>-1</dim><dim>2</dim><dim>2</dim><dim>2</dim></port></input>
    </layer>
    <layer id="3" name="weights" type="Const" version="opset1">
      <data element_type="f32" shape="3" offset="0" size="12"/>
      <output><port id="0" precision="FP32" names="w"><dim>3</dim></port></output>
    </layer>
    <layer id="4" name="w/sink" type="Result" version="opset1">
      <input><port id="0" precision="FP32"><dim>3</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
    <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
    <edge from-layer="3" from-port="0" to-layer="4" to-port="0"/>
  </edges>
  <rt_info><info name="OpenVINO Runtime" value="test"/></rt_info>
</net>
"""
WEIGHTS = np.array([1.5, -2.0, 3.25], np.float32).tobytes()


def write(tmp_path, xml, weights=WEIGHTS, name="model"):
    path = tmp_path / f"{name}.xml"
    path.write_text(xml) if isinstance(xml, str) else path.write_bytes(xml)
    if weights is not None:
        (tmp_path / f"{name}.bin").write_bytes(weights)
    return str(path)


def edit(old, new, text=GOOD):
    assert old in text, old
    return text.replace(old, new, 1)


def assert_planes_keep_their_bits(pool_all, values, dtypes):
    """For each dtype: ``pool_all(x)`` (a list of arrays, x = ``values`` of that dtype, shaped
    (N, C, ...)) gives the same bytes with two threads and with one, and every plane of its
    results the bytes of that plane pooled on its own (a call of one plane takes the passes)."""
    import ovpool

    n, c = values.shape[:2]
    planes = [(0, 0), (0, c - 1), (n - 1, c // 2)]
    for dtype in dtypes:
        x = values.astype(dtype)
        threads = ovpool.get_num_threads()
        try:
            ovpool.set_num_threads(2)
            together = pool_all(x)
            ovpool.set_num_threads(1)
            single = pool_all(x)
        finally:
            ovpool.set_num_threads(threads)
        alone = [pool_all(x[i:i + 1, j:j + 1]) for i, j in planes]
        for k, (a, b) in enumerate(zip(together, single)):
            np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
            for (i, j), results in zip(planes, alone):
                np.testing.assert_array_equal(a[i:i + 1, j:j + 1].view(np.uint8),
                                              results[k].view(np.uint8))
