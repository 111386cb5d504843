"""ovpool against OpenVINO's CPU plugin.

Part 1 runs a few hundred seeded random configurations of the four ops (AvgPool-16, MaxPool-14,
AdaptiveAvgPool-8, AdaptiveMaxPool-8) through one-op OpenVINO models and through ovpool's public
API and compares them: exactly for max values and indices and for integer averages, rtol 1e-5
for float32 averages, about one float16 ulp for float16 averages. When OpenVINO refuses a
configuration, ovpool must refuse it too (with an ``OvpoolError``), and the other way round.

Part 2 covers the corners where the CPU plugin deviates from its spec (docs/semantics.md). The random
configurations never produce them (each place that steers around one names the difference), and
dedicated tests assert ovpool's semantics.md answer there instead, computed by hand or by the
slow oracle in ``tests/reference.py``:

* an all-NaN MaxPool window: OpenVINO gives -FLT_MAX and index 0, we give NaN and the index of
  the first NaN; AdaptiveMaxPool returns NaN for any window whose *first* element is NaN;
* a MaxPool window whose max equals the dtype's lowest value (u8 0, i8 -128, i32 min, f32
  -FLT_MAX) or is -inf: OpenVINO reports index 0 (and -FLT_MAX for -inf); we report the true
  position and value;
* an average over a window with no input element and a real-element divisor: OpenVINO 0/0 = NaN,
  we give 0;
* empty max windows in float16 / float64: OpenVINO gives -inf / -FLT_MAX (it computes them in
  float32), we give the dtype's lowest finite value;
* float64 is computed in float32 and int64 in int32 by the plugin; int32 averages and
  AdaptiveMaxPool on int32 go through float32; AdaptiveAvgPool on int8/uint8 saturates its
  window sum in the 8-bit type. We compute all of these exactly;
* auto_pad same_upper/same_lower with rounding ceil, when the computed pad is clamped to 0:
  OpenVINO appends an empty window (ceil((L - ek) / s) + 1 outputs), semantics.md says
  ceil(L / s);
* AdaptiveAvgPool on integers with every output size 1 (global pooling): the plugin truncates
  toward zero instead of rounding half to even;
* a zero-size batch or channel: OpenVINO's AvgPool/MaxPool refuse it, we return an empty array.

Two more plugin facts the comparison relies on: AvgPool with exclude_pad=True is refused when an
explicit pad reaches the *dilated* kernel (pad >= (k - 1) * d + 1), and ovpool follows that; the
plugin cannot compile AvgPool on int32/int64 with a dilation > 1 at all, so those random
configurations are checked against ``tests/reference.py`` instead (and counted separately).
"""

import numpy as np
import pytest

import ovpool
from ovpool.errors import OvpoolError

import openvino_oracle as ovo
from helpers import summary_line
from reference import (
    per_axis,
    ref_adaptive_avg_pool,
    ref_adaptive_max_pool,
    ref_avg_pool,
    ref_max_pool,
    ref_output_len,
)

SEED = 20240611
N_AVG = 170
N_MAX = 170
N_ADAPTIVE_AVG = 70
N_ADAPTIVE_MAX = 70

F32_RTOL, F32_ATOL = 1e-5, 1e-6
# One float16 ulp: OpenVINO and ovpool both accumulate float16 in float32 and round once, but
# in different orders, so a result sitting on a rounding boundary may land one ulp apart.
F16_RTOL, F16_ATOL = 1e-3, 1e-4

# ------------------------------------------------------------------------------------------------
# counting, for the lead's report
# ------------------------------------------------------------------------------------------------

COUNTS = {}


def _count(kind, key):
    COUNTS.setdefault(kind, {"compared": 0, "matched": 0, "both_rejected": 0,
                             "vs_reference": 0})[key] += 1


@summary_line
def _summary_line():
    if not COUNTS:
        return None
    parts = []
    for kind in sorted(COUNTS):
        c = COUNTS[kind]
        parts.append(f"{kind} {c['matched']}/{c['compared']} matched"
                     f" ({c['both_rejected']} refused by both, {c['vs_reference']} checked"
                     " against reference.py because the plugin cannot compile them)")
    return ("OpenVINO CPU comparison of random configurations: " + "; ".join(parts)
            + f". {ovo.stats['compiled']} OpenVINO models compiled, {ovo.stats['runs']} runs.")


# ------------------------------------------------------------------------------------------------
# random configurations
# ------------------------------------------------------------------------------------------------

FLOAT_CHOICES = ["float32"] * 5 + ["float16"] * 3 + ["float64"]
INT_CHOICES = ["int8", "uint8", "int32", "int64"]
LENGTH_MAX = {1: 14, 2: 8, 3: 5}
KERNEL_MAX = {1: 5, 2: 4, 3: 3}


def _rng(op, i):
    return np.random.default_rng([SEED, {"avg": 1, "max": 2, "aavg": 3, "amax": 4}[op], i])


def _pick_dtype(rng):
    if rng.random() < 0.7:
        return np.dtype(FLOAT_CHOICES[rng.integers(len(FLOAT_CHOICES))])
    return np.dtype(INT_CHOICES[rng.integers(len(INT_CHOICES))])


def _attr(rng, values, default):
    """Pass an attribute the ways a user would: None for the default, an int, or a list."""
    if all(v == default for v in values) and rng.random() < 0.4:
        return None
    if len(set(values)) == 1 and rng.random() < 0.5:
        return int(values[0])
    return [int(v) for v in values]


def _empty_windows(shape, attrs):
    """(mask, any_pad): a boolean mask over the spatial output marking the windows that hold
    no input element, and whether any resolved pad is non-zero."""
    rank = len(shape) - 2

    k = per_axis(attrs["kernel"], rank, None)
    s = per_axis(attrs["strides"], rank, 1)
    d = per_axis(attrs["dilations"], rank, 1)
    pb = per_axis(attrs["pads_begin"], rank, 0)
    pe = per_axis(attrs["pads_end"], rank, 0)
    counts = []
    any_pad = False
    for a in range(rank):
        L = shape[2 + a]
        O, b, e = ref_output_len(L, k[a], s[a], d[a], pb[a], pe[a], attrs["rounding_type"],
                                 attrs["auto_pad"])
        any_pad = any_pad or b != 0 or e != 0
        starts = np.arange(O)[:, None] * s[a] - b + np.arange(k[a])[None, :] * d[a]
        counts.append(((starts >= 0) & (starts < L)).sum(axis=1))
    volume = counts[0]
    for c in counts[1:]:
        volume = np.multiply.outer(volume, c)
    return volume == 0, any_pad


def _same_ceil_extra_window(shape, attrs):
    """True when OpenVINO's same_* + ceil output is longer than semantics.md's ceil(L / s).

    That happens when the same-pad computed from the dilated kernel is clamped to 0 with room
    to spare, i.e. (O - 1) * s + ek < L with O = ceil(L / s): OpenVINO then applies the ceil
    formula to the unpadded input and appends a window that starts past the end.
    """
    if attrs["auto_pad"] not in ("same_upper", "same_lower") or attrs["rounding_type"] != "ceil":
        return False
    rank = len(shape) - 2

    k = per_axis(attrs["kernel"], rank, None)
    s = per_axis(attrs["strides"], rank, 1)
    d = per_axis(attrs["dilations"], rank, 1)
    for a in range(rank):
        L = shape[2 + a]
        ek = (k[a] - 1) * d[a] + 1
        O = -(-L // s[a])
        if (O - 1) * s[a] + ek < L:
            return True
    return False


def _fixed_config(rng, with_exclude_pad):
    rank = int(rng.choice([1, 2, 3], p=[0.35, 0.4, 0.25]))
    kernel, strides, dilations, pads_begin, pads_end, lengths = [], [], [], [], [], []
    auto_pad = ["explicit", "same_upper", "same_lower", "valid"][
        int(rng.choice(4, p=[0.55, 0.15, 0.15, 0.15]))]
    for _ in range(rank):
        k = int(rng.integers(1, KERNEL_MAX[rank] + 1))
        s = int(rng.integers(1, 4))
        d = 1 if rng.random() < 0.6 else int(rng.integers(2, 4))
        ek = (k - 1) * d + 1
        if rng.random() < 0.35:
            pb = pe = 0
        else:
            # Mostly pads below the kernel; sometimes up to the dilated kernel and beyond, where
            # AvgPool with exclude_pad refuses and MaxPool makes windows lying in the padding.
            top = k if rng.random() < 0.8 else ek + 1
            pb, pe = int(rng.integers(0, top + 1)), int(rng.integers(0, top + 1))
        L = int(rng.integers(1, LENGTH_MAX[rank] + 1))
        if rng.random() < 0.92:   # keep most configurations valid
            L = max(L, ek - (pb + pe if auto_pad == "explicit" else 0))
        kernel.append(k)
        strides.append(s)
        dilations.append(d)
        pads_begin.append(pb)
        pads_end.append(pe)
        lengths.append(L)
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + tuple(lengths)
    attrs = dict(
        kernel=_attr(rng, kernel, None),
        strides=_attr(rng, strides, 1),
        pads_begin=_attr(rng, pads_begin, 0),
        pads_end=_attr(rng, pads_end, 0),
        dilations=_attr(rng, dilations, 1),
        rounding_type=["floor", "ceil", "ceil_torch"][int(rng.integers(3))],
        auto_pad=auto_pad,
    )
    if attrs["auto_pad"] != "explicit" and rng.random() < 0.5:
        # Pads are ignored unless auto_pad is explicit: pass zeros, as OpenVINO IR files do.
        attrs["pads_begin"] = attrs["pads_end"] = [0] * rank
    if with_exclude_pad:
        attrs["exclude_pad"] = bool(rng.random() < 0.5)
    # Difference (same_* + ceil with a clamped pad, see the module docstring): steer around it
    # here; test_same_ceil_clamped_pad_keeps_ceil_l_over_s asserts our answer.
    if _same_ceil_extra_window(shape, attrs):
        attrs["rounding_type"] = "ceil_torch"
    return shape, attrs


def _data(rng, shape, dtype, for_max, window_volume=None):
    """Random input. Avoids the deviation corners listed in the module docstring:

    * no NaN or infinity (OpenVINO's all-NaN and -inf max windows);
    * for max, no value equal to the dtype's lowest (OpenVINO's index-0 bug);
    * float64 data exactly representable in float32 (the plugin computes float64 in float32);
    * integers small enough that int32 / int64 sums stay exact in float32 and int32, and that
      AdaptiveAvgPool's int8 / uint8 window sums do not saturate.
    """
    if dtype.kind == "f":
        if rng.random() < 0.4:
            # small integers: exact sums and plenty of ties for the max indices
            x = rng.integers(-3, 4, size=shape).astype(np.float32)
        else:
            x = rng.standard_normal(shape).astype(np.float32)
        return x.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min + 1, -1000), min(info.max, 1000)
    if dtype == np.uint8:
        lo = 1 if for_max else 0
    if window_volume is not None and dtype.itemsize == 1:
        # AdaptiveAvgPool-8 on int8/uint8: keep every window sum inside the 8-bit range.
        bound = max(1, (127 if dtype == np.int8 else 255) // window_volume)
        lo, hi = (-bound if dtype == np.int8 else 0), bound
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def _maybe_strided(rng, x):
    """Sometimes hand ovpool a non-contiguous view holding the same values."""
    if rng.random() < 0.12 and x.ndim >= 4:
        order = list(range(x.ndim))
        order[-1], order[-2] = order[-2], order[-1]
        return np.ascontiguousarray(x.transpose(order)).transpose(order)
    return x


def _repro(op, shape, dtype, attrs, extra=""):
    args = ", ".join(f"{k}={v!r}" for k, v in attrs.items())
    return f"ovpool.{op}(x[shape={tuple(shape)}, dtype={np.dtype(dtype).name}], {args}){extra}"


def _first_mismatch(ours, theirs, ok):
    where = np.argwhere(~ok)
    if where.size == 0:
        return ""
    pos = tuple(int(v) for v in where[0])
    return (f"; first mismatch at {pos}: OpenVINO {theirs[pos]!r} vs ovpool {ours[pos]!r}"
            f" ({int((~ok).sum())} of {ok.size} differ)")


def _assert_values(ours, theirs, dtype, what, repro, exact):
    assert ours.dtype == dtype, f"{what}: dtype {ours.dtype}, expected {dtype}: {repro}"
    assert ours.shape == theirs.shape, (
        f"{what}: shape {ours.shape}, OpenVINO {theirs.shape}: {repro}")
    if exact or dtype.kind in "iu":
        ok = (ours == theirs) | (np.isnan(ours.astype(np.float64)) & np.isnan(theirs.astype(np.float64)))
    else:
        rtol, atol = (F16_RTOL, F16_ATOL) if dtype == np.float16 else (F32_RTOL, F32_ATOL)
        ok = np.isclose(ours.astype(np.float64), theirs.astype(np.float64), rtol=rtol, atol=atol)
    assert ok.all(), f"{what} differ from OpenVINO: {repro}{_first_mismatch(ours, theirs, ok)}"


# The CPU plugin cannot compile some valid models at all (AvgPool on int32/int64 with a
# dilation > 1: "Supported primitive descriptors list is empty"). Those configurations are
# compared with tests/reference.py instead, and counted as such.
_PLUGIN_UNSUPPORTED = "Supported primitive descriptors list is empty"


def _call_both(ov_fn, our_fn, repro, kind, ref_fn=None):
    """Run OpenVINO and ovpool; return (theirs, ours), or None when both refuse."""
    try:
        theirs = ov_fn()
        ov_error = None
    except RuntimeError as exc:
        theirs, ov_error = None, exc
    if ov_error is not None and _PLUGIN_UNSUPPORTED in str(ov_error) and ref_fn is not None:
        theirs, ov_error = ref_fn(), None
        _count(kind, "vs_reference")
    try:
        ours = our_fn()
        our_error = None
    except OvpoolError as exc:
        ours, our_error = None, exc
    if ov_error is not None and our_error is not None:
        _count(kind, "both_rejected")
        return None
    if ov_error is not None:
        last = [l for l in str(ov_error).splitlines() if l.strip()][-1]
        pytest.fail(f"OpenVINO refuses but ovpool accepts: {repro}\n  OpenVINO: {last}")
    if our_error is not None:
        pytest.fail(f"ovpool refuses but OpenVINO accepts: {repro}\n  ovpool: {our_error}")
    return theirs, ours


# ------------------------------------------------------------------------------------------------
# Part 1: random configurations against OpenVINO
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("i", range(N_AVG), ids=lambda i: f"avg{i:03d}")
def test_avg_pool_matches_openvino(i):
    rng = _rng("avg", i)
    shape, attrs = _fixed_config(rng, with_exclude_pad=True)
    dtype = _pick_dtype(rng)
    x = _data(rng, shape, dtype, for_max=False)
    repro = _repro("avg_pool", shape, dtype, attrs)
    _count("avg_pool", "compared")
    xin = _maybe_strided(rng, x)
    result = _call_both(lambda: ovo.ov_avg_pool(x, **attrs),
                        lambda: ovpool.avg_pool(xin, **attrs),
                        repro, "avg_pool", ref_fn=lambda: ref_avg_pool(x, **attrs))
    if result is not None:
        theirs, ours = result
        empty, any_pad = _empty_windows(shape, attrs)
        if attrs["exclude_pad"] or not any_pad:
            # Difference: a window with no input element and a real-element divisor is 0/0
            # (NaN) on OpenVINO; semantics.md says 0.
            mask = np.broadcast_to(empty, ours.shape)
            assert (ours[mask] == 0).all(), f"empty windows must average to 0: {repro}"
            theirs = np.where(mask, ours, theirs)
        _assert_values(ours, theirs, dtype, "averages", repro, exact=False)
    _count("avg_pool", "matched")


@pytest.mark.parametrize("i", range(N_MAX), ids=lambda i: f"max{i:03d}")
def test_max_pool_matches_openvino(i):
    rng = _rng("max", i)
    shape, attrs = _fixed_config(rng, with_exclude_pad=False)
    dtype = _pick_dtype(rng)
    attrs["index_element_type"] = ["i32", "i64"][int(rng.integers(2))]
    rank = len(shape)
    attrs["axis"] = int(rng.choice([0, 0, 1, 2, -1, int(rng.integers(-rank, rank))]))
    x = _data(rng, shape, dtype, for_max=True)
    repro = _repro("max_pool", shape, dtype, attrs)
    _count("max_pool", "compared")
    xin = _maybe_strided(rng, x)
    result = _call_both(lambda: ovo.ov_max_pool(x, **attrs),
                        lambda: ovpool.max_pool(xin, **attrs), repro, "max_pool")
    if result is not None:
        (values_ov, indices_ov), (values, indices) = result
        if dtype in (np.float16, np.float64, np.int64):
            # Difference: an empty window gives -inf (float16), -FLT_MAX (float64) or INT32_MIN
            # (int64) on OpenVINO, which computes these dtypes in float32 / int32; semantics.md
            # says the dtype's own lowest value.
            empty, _ = _empty_windows(shape, attrs)
            mask = np.broadcast_to(empty, values.shape)
            lowest = np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min
            assert (values[mask] == lowest).all(), f"empty windows: {repro}"
            # the index of an empty window is position 0 of its (n, c) plane, as on OpenVINO
            np.testing.assert_array_equal(indices[mask], indices_ov[mask], err_msg=repro)
            values_ov = np.where(mask, values, values_ov)
        _assert_values(values, values_ov, dtype, "max values", repro, exact=True)
        want = np.dtype(np.int32 if attrs["index_element_type"] == "i32" else np.int64)
        _assert_values(indices, indices_ov, want, "max indices", repro, exact=True)
        if rng.random() < 0.2:
            only = ovpool.max_pool(xin, return_indices=False, **attrs)
            assert isinstance(only, np.ndarray), repro
            np.testing.assert_array_equal(only, values, err_msg=repro)
    _count("max_pool", "matched")


def _adaptive_config(rng, integer=False):
    rank = int(rng.choice([1, 2, 3], p=[0.35, 0.4, 0.25]))
    lengths = [int(rng.integers(1, LENGTH_MAX[rank] + 1)) for _ in range(rank)]
    # outputs from 1 to a bit beyond the input length (overlapping windows)
    outputs = [int(rng.integers(1, L + 3)) for L in lengths]
    if integer and all(o == 1 for o in outputs):
        # Difference: the plugin's AdaptiveAvgPool truncates integer averages toward zero when
        # every output size is 1 (global pooling) instead of rounding half to even;
        # test_global_integer_adaptive_average_rounds_half_to_even asserts our answer.
        outputs[-1] = 2
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + tuple(lengths)
    size = outputs[0] if len(set(outputs)) == 1 and rng.random() < 0.5 else outputs
    volume = 1
    for L, O in zip(lengths, outputs):
        volume *= max(-(-((i + 1) * L) // O) - (i * L) // O for i in range(O))
    return shape, size, volume


@pytest.mark.parametrize("i", range(N_ADAPTIVE_AVG), ids=lambda i: f"aavg{i:03d}")
def test_adaptive_avg_pool_matches_openvino(i):
    rng = _rng("aavg", i)
    dtype = _pick_dtype(rng)
    shape, size, volume = _adaptive_config(rng, integer=dtype.kind in "iu")
    x = _data(rng, shape, dtype, for_max=False, window_volume=volume)
    repro = _repro("adaptive_avg_pool", shape, dtype, {"output_size": size})
    _count("adaptive_avg_pool", "compared")
    xin = _maybe_strided(rng, x)
    theirs, ours = _call_both(lambda: ovo.ov_adaptive_avg_pool(x, size),
                              lambda: ovpool.adaptive_avg_pool(xin, size),
                              repro, "adaptive_avg_pool")
    _assert_values(ours, theirs, dtype, "adaptive averages", repro, exact=False)
    _count("adaptive_avg_pool", "matched")


@pytest.mark.parametrize("i", range(N_ADAPTIVE_MAX), ids=lambda i: f"amax{i:03d}")
def test_adaptive_max_pool_matches_openvino(i):
    rng = _rng("amax", i)
    dtype = _pick_dtype(rng)
    shape, size, _ = _adaptive_config(rng)
    index_type = ["i32", "i64"][int(rng.integers(2))]
    x = _data(rng, shape, dtype, for_max=True)
    repro = _repro("adaptive_max_pool", shape, dtype,
                   {"output_size": size, "index_element_type": index_type})
    _count("adaptive_max_pool", "compared")
    # OpenVINO's CPU plugin only produces i32 indices; the oracle widens them for i64.
    xin = _maybe_strided(rng, x)
    (values_ov, indices_ov), (values, indices) = _call_both(
        lambda: ovo.ov_adaptive_max_pool(x, size, index_element_type=index_type),
        lambda: ovpool.adaptive_max_pool(xin, size, index_element_type=index_type),
        repro, "adaptive_max_pool")
    _assert_values(values, values_ov, dtype, "adaptive max values", repro, exact=True)
    want = np.dtype(np.int32 if index_type == "i32" else np.int64)
    _assert_values(indices, indices_ov, want, "adaptive max indices", repro, exact=True)
    _count("adaptive_max_pool", "matched")


# ------------------------------------------------------------------------------------------------
# Part 1b: targeted configurations where OpenVINO and semantics.md agree
# ------------------------------------------------------------------------------------------------

def _compare_avg(x, **attrs):
    theirs = ovo.ov_avg_pool(x, **attrs)
    ours = ovpool.avg_pool(x, **attrs)
    _assert_values(ours, theirs, x.dtype, "averages", _repro("avg_pool", x.shape, x.dtype, attrs),
                   exact=x.dtype.kind in "iu")
    return ours


def _compare_max(x, **attrs):
    values_ov, indices_ov = ovo.ov_max_pool(x, **attrs)
    values, indices = ovpool.max_pool(x, **attrs)
    repro = _repro("max_pool", x.shape, x.dtype, attrs)
    _assert_values(values, values_ov, x.dtype, "max values", repro, exact=True)
    _assert_values(indices, indices_ov, indices_ov.dtype, "max indices", repro, exact=True)
    return values, indices


def test_include_pad_divisor_is_full_kernel_volume():
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    # semantics.md's example: the hanging last window divides by 3, not by 2.
    out = _compare_avg(x, kernel=3, strides=2, pads_begin=1, pads_end=1, exclude_pad=False,
                       rounding_type="ceil")
    np.testing.assert_array_equal(out.ravel(), [1, 3, 5, 2])
    # no pads at all: the number of real elements, even for the hanging window
    out = _compare_avg(x, kernel=3, strides=2, exclude_pad=False, rounding_type="ceil")
    np.testing.assert_array_equal(out.ravel(), [2, 4, 5.5])
    # dilations: the kernel volume is the number of taps (2), not the dilated extent
    out = _compare_avg(x, kernel=2, strides=1, pads_begin=1, pads_end=1, dilations=2,
                       exclude_pad=False)
    np.testing.assert_array_equal(out.ravel(), [1, 2, 3, 4, 5, 2.5])
    # a pad on one axis only still switches every window of every axis to the full volume
    x2 = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)
    out = _compare_avg(x2, kernel=2, pads_begin=[1, 0], pads_end=[0, 0], exclude_pad=False)
    np.testing.assert_array_equal(out[0, 0, 0], [0.75, 1.25, 1.75])


@pytest.mark.parametrize("rounding", ["floor", "ceil", "ceil_torch"])
def test_ceil_and_ceil_torch_last_window(rounding):
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4)
    # window 3 of the ceil length starts at 5, inside the right pad: ceil keeps it (empty),
    # ceil_torch drops it
    values, indices = _compare_max(x, kernel=2, strides=2, pads_begin=1, pads_end=2,
                                   rounding_type=rounding)
    expected = {"floor": 3, "ceil": 4, "ceil_torch": 3}[rounding]
    assert values.shape[-1] == expected
    # integral division with a long right pad: ceil_torch still drops one window
    x2 = np.array([[[1.0, 2.0]]], np.float32)
    values, _ = _compare_max(x2, kernel=1, strides=1, pads_end=3, rounding_type=rounding)
    assert values.shape[-1] == {"floor": 5, "ceil": 5, "ceil_torch": 4}[rounding]


def test_valid_ceil_keeps_partial_window():
    x = np.arange(1, 4, dtype=np.float32).reshape(1, 1, 3)
    for rounding in ("ceil", "ceil_torch"):
        values, indices = _compare_max(x, kernel=2, strides=2, auto_pad="valid",
                                       rounding_type=rounding)
        np.testing.assert_array_equal(values.ravel(), [2, 3])
        np.testing.assert_array_equal(indices.ravel(), [1, 2])
        out = _compare_avg(x, kernel=2, strides=2, auto_pad="valid", rounding_type=rounding)
        np.testing.assert_array_equal(out.ravel(), [1.5, 3])


def test_same_pads_come_from_the_dilated_kernel():
    x = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
    # ek = 4, total pad 3: upper puts 1/2, lower 2/1
    up, _ = _compare_max(x, kernel=2, dilations=3, auto_pad="same_upper")
    explicit, _ = ovpool.max_pool(x, kernel=2, dilations=3, pads_begin=1, pads_end=2)
    np.testing.assert_array_equal(up, explicit)
    low, _ = _compare_max(x, kernel=2, dilations=3, auto_pad="same_lower")
    explicit, _ = ovpool.max_pool(x, kernel=2, dilations=3, pads_begin=2, pads_end=1)
    np.testing.assert_array_equal(low, explicit)


def test_exclude_pad_refusal_uses_the_dilated_kernel():
    """OpenVINO refuses exclude_pad=True when a pad reaches the *dilated* kernel; follow it."""
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    # pad 2 >= kernel 2 but < dilated kernel 4: accepted by OpenVINO
    _compare_avg(x, kernel=2, dilations=3, pads_begin=2, pads_end=0, exclude_pad=True)
    _compare_avg(x, kernel=2, dilations=3, pads_begin=3, pads_end=3, exclude_pad=True)
    # auto_pad same with dilations computes pads 1/2 >= kernel 2: accepted too
    x7 = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
    _compare_avg(x7, kernel=2, dilations=3, auto_pad="same_upper", exclude_pad=True)
    # pad 4 >= dilated kernel 4: refused by both
    for pads in [(4, 0), (0, 4)]:
        with pytest.raises(RuntimeError):
            ovo.ov_avg_pool(x, kernel=2, dilations=3, pads_begin=pads[0], pads_end=pads[1])
        with pytest.raises(OvpoolError):
            ovpool.avg_pool(x, kernel=2, dilations=3, pads_begin=pads[0], pads_end=pads[1])
    # without dilation: pad 2 >= kernel 2 refused; exclude_pad=False and max pool accept it
    with pytest.raises(OvpoolError):
        ovpool.avg_pool(x, kernel=2, pads_begin=2, exclude_pad=True)
    _compare_avg(x, kernel=2, pads_begin=2, pads_end=3, exclude_pad=False)
    _compare_max(x, kernel=2, pads_begin=3, pads_end=3)


def test_kernel_larger_than_padded_input_is_refused():
    x = np.arange(1, 4, dtype=np.float32).reshape(1, 1, 3)
    for kwargs in [dict(kernel=5), dict(kernel=3, dilations=2), dict(kernel=5, auto_pad="valid"),
                   dict(kernel=5, rounding_type="ceil")]:
        with pytest.raises(RuntimeError):
            ovo.ov_max_pool(x, **kwargs)
        with pytest.raises(OvpoolError, match="kernel"):
            ovpool.max_pool(x, **kwargs)
        with pytest.raises(OvpoolError, match="kernel"):
            ovpool.avg_pool(x, **kwargs)
    # the padding makes room; same_upper pads as needed
    _compare_max(x, kernel=5, pads_begin=1, pads_end=1)
    _compare_max(x, kernel=5, auto_pad="same_upper")


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -2, -3, -4])
@pytest.mark.parametrize("index_type", ["i32", "i64"])
def test_max_pool_index_axis(axis, index_type):
    x = np.random.default_rng(0).permutation(2 * 3 * 4 * 4).astype(np.float32).reshape(2, 3, 4, 4)
    values, indices = _compare_max(x, kernel=2, strides=2, index_element_type=index_type,
                                   axis=axis, pads_begin=[1, 0], pads_end=[0, 1])
    assert indices.dtype == np.dtype(np.int32 if index_type == "i32" else np.int64)


def test_ties_pick_first_in_row_major_order():
    x = np.array([[[[1, 3, 3, 0], [3, 3, 2, 3], [0, 0, 0, 0]]]], np.float32)
    _, indices = _compare_max(x, kernel=2, strides=1)
    np.testing.assert_array_equal(indices[0, 0], [[1, 1, 2], [4, 5, 7]])
    values, indices = ovpool.adaptive_max_pool(x, [2, 2])
    values_ov, indices_ov = ovo.ov_adaptive_max_pool(x, [2, 2])
    np.testing.assert_array_equal(values, values_ov)
    np.testing.assert_array_equal(indices, indices_ov)
    z = np.zeros((1, 1, 6), np.float32)
    _, indices = _compare_max(z, kernel=3, pads_begin=1, pads_end=1)
    np.testing.assert_array_equal(indices.ravel(), [0, 0, 1, 2, 3, 4])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_integer_average_rounds_half_to_even(dtype):
    if dtype == "uint8":
        x = np.array([[[0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 254, 255, 255, 255, 0, 0]]], dtype)
    else:
        x = np.array([[[0, 1, 1, 2, 2, 3, 0, -1, -1, -2, -2, -3, 3, 4, 50, 51]]], dtype)
    out = _compare_avg(x, kernel=2, strides=2)
    np.testing.assert_array_equal(out, ref_avg_pool(x, 2, 2))
    thirds = np.array([[[0, 0, 1, 0, 1, 1, 1, 1, 2, 1, 2, 2]]], dtype)
    _compare_avg(thirds, kernel=3, strides=3)
    ours = ovpool.adaptive_avg_pool(x, 8)
    np.testing.assert_array_equal(ours, ovo.ov_adaptive_avg_pool(x, 8))


def test_float16_average_accumulates_in_float32():
    x = np.array([[[2048, 1, 1, 1, 1, 1, 1, 1]]], np.float16)
    # exact mean 256.875 rounds to 257 in float16; float16 accumulation would give 256
    assert _compare_avg(x, kernel=8, strides=8).ravel()[0] == 257
    assert ovpool.adaptive_avg_pool(x, 1).ravel()[0] == 257


@pytest.mark.parametrize("shape", [(1, 2, 3, 4, 5), (2, 1, 9)])
def test_rank_3_and_5_inputs(shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    _compare_max(x, kernel=2, strides=1, pads_begin=1, pads_end=0)
    _compare_avg(x, kernel=2, strides=2, pads_begin=1, pads_end=1, exclude_pad=False,
                 rounding_type="ceil")
    size = [2] * (len(shape) - 2)
    np.testing.assert_allclose(ovpool.adaptive_avg_pool(x, size), ovo.ov_adaptive_avg_pool(x, size),
                               rtol=F32_RTOL, atol=F32_ATOL)
    values, indices = ovpool.adaptive_max_pool(x, size)
    values_ov, indices_ov = ovo.ov_adaptive_max_pool(x, size, index_element_type="i64")
    np.testing.assert_array_equal(values, values_ov)
    np.testing.assert_array_equal(indices, indices_ov)


# ------------------------------------------------------------------------------------------------
# Part 2: where OpenVINO deviates, assert semantics.md
# ------------------------------------------------------------------------------------------------

NAN = np.nan


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_max_pool_all_nan_window(dtype):
    """OpenVINO MaxPool: an all-NaN window gives -FLT_MAX (f16: -inf) and index 0.
    semantics.md: NaN and the index of the first NaN; NaN is ignored in mixed windows."""
    x = np.array([[[NAN, NAN, 1, NAN, NAN, NAN, 3, NAN]]], dtype)
    values, indices = ovpool.max_pool(x, kernel=2, strides=2)
    np.testing.assert_array_equal(values.ravel(), [NAN, 1, NAN, 3])
    np.testing.assert_array_equal(indices.ravel(), [0, 2, 4, 6])
    values, indices = ovpool.max_pool(x, kernel=3, strides=1, pads_begin=1, pads_end=0)
    ref_v, ref_i = ref_max_pool(x, 3, 1, 1, 0)
    np.testing.assert_array_equal(values, ref_v)
    np.testing.assert_array_equal(indices, ref_i)
    # windows with at least one number agree with OpenVINO
    mixed = np.array([[[NAN, 2, 5, NAN, NAN, 4, NAN, 1]]], dtype)
    _compare_max(mixed, kernel=2, strides=2)
    _compare_max(mixed, kernel=3, strides=1)


def test_max_pool_random_nan_windows():
    """Random NaN-heavy inputs: all-NaN windows as semantics.md says, every other window as
    OpenVINO computes it."""
    for seed in range(6):
        rng = np.random.default_rng([SEED, 99, seed])
        x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
        x[rng.random(x.shape) < 0.6] = NAN
        attrs = dict(kernel=[2, 3], strides=[1, 2], pads_begin=[1, 0], pads_end=[0, 1])
        values, indices = ovpool.max_pool(x, **attrs)
        ref_v, ref_i = ref_max_pool(x, **attrs)
        np.testing.assert_array_equal(values, ref_v)
        np.testing.assert_array_equal(indices, ref_i)
        values_ov, indices_ov = ovo.ov_max_pool(x, **attrs)
        all_nan = np.isnan(ref_v)
        np.testing.assert_array_equal(values[~all_nan], values_ov[~all_nan])
        np.testing.assert_array_equal(indices[~all_nan], indices_ov[~all_nan])


def test_adaptive_max_pool_nan():
    """OpenVINO AdaptiveMaxPool returns NaN whenever a window's *first* element is NaN and
    ignores later NaNs; semantics.md ignores NaN unless the whole window is NaN."""
    x = np.array([[[NAN, 2, 5, NAN, NAN, NAN, NAN, 1]]], np.float32)
    values, indices = ovpool.adaptive_max_pool(x, 4)
    np.testing.assert_array_equal(values.ravel(), [2, 5, NAN, 1])
    np.testing.assert_array_equal(indices.ravel(), [1, 2, 4, 7])
    ref_v, ref_i = ref_adaptive_max_pool(x, 3)
    values, indices = ovpool.adaptive_max_pool(x, 3)
    np.testing.assert_array_equal(values, ref_v)
    np.testing.assert_array_equal(indices, ref_i)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "float32"])
@pytest.mark.parametrize("axis", [0, 2])
def test_max_pool_lowest_value_index(dtype, axis):
    """OpenVINO MaxPool reports index 0 when a window's max equals the dtype's lowest value;
    semantics.md: the true position (as AdaptiveMaxPool and the reference do)."""
    lowest = np.finfo(dtype).min if dtype == "float32" else np.iinfo(dtype).min
    x = np.array([[[5, lowest, lowest, lowest, lowest, 7]], [[lowest, 1, lowest, lowest, 2, 3]]],
                 dtype)
    values, indices = ovpool.max_pool(x, kernel=2, strides=2, axis=axis)
    ref_v, ref_i = ref_max_pool(x, 2, 2, axis=axis)
    np.testing.assert_array_equal(values, ref_v)
    np.testing.assert_array_equal(indices, ref_i)
    plane = 0 if axis == 2 else 6
    np.testing.assert_array_equal(indices[:, 0, 1], [2, plane + 2])
    # AdaptiveMaxPool has no such bug: compare with OpenVINO there (int32/int64 excluded:
    # the plugin runs them through float32 / int32)
    if dtype in ("uint8", "int8", "float32"):
        v, i = ovpool.adaptive_max_pool(x, 3)
        v_ov, i_ov = ovo.ov_adaptive_max_pool(x, 3)
        np.testing.assert_array_equal(v, v_ov)
        np.testing.assert_array_equal(i, i_ov)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_max_pool_minus_infinity_windows(dtype):
    """OpenVINO MaxPool turns a window of -inf values into -FLT_MAX with index 0 (f16: -inf,
    index 0). Padding acts as -inf and the window holds real -inf elements, so semantics.md's
    answer is -inf at the first of them."""
    x = np.array([[[-np.inf, -np.inf, np.inf, 1, -np.inf, 4]]], dtype)
    values, indices = ovpool.max_pool(x, kernel=2, strides=2, pads_begin=1, pads_end=1)
    ref_v, ref_i = ref_max_pool(x, 2, 2, 1, 1)
    np.testing.assert_array_equal(values, ref_v)
    np.testing.assert_array_equal(indices, ref_i)
    np.testing.assert_array_equal(values.ravel(), [-np.inf, np.inf, 1, 4])
    np.testing.assert_array_equal(indices.ravel(), [0, 2, 3, 5])
    # AdaptiveMaxPool keeps -inf and agrees with OpenVINO
    if dtype != "float64":
        v, i = ovpool.adaptive_max_pool(x, 3)
        v_ov, i_ov = ovo.ov_adaptive_max_pool(x, 3)
        np.testing.assert_array_equal(v, v_ov)
        np.testing.assert_array_equal(i, i_ov)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "uint8", "int32",
                                   "int64"])
def test_empty_max_windows(dtype):
    """Empty windows: the dtype's lowest finite value and index 0. OpenVINO agrees for
    float32, int8, uint8 and int32; for float16 it gives -inf, for float64 -FLT_MAX and for
    int64 INT32_MIN (it computes them in float32 / int32)."""
    x = np.ones((1, 1, 4), dtype)
    values, indices = ovpool.max_pool(x, kernel=2, strides=2, pads_end=1, rounding_type="ceil")
    lowest = np.finfo(dtype).min if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min
    np.testing.assert_array_equal(values.ravel(), np.array([1, 1, lowest], dtype))
    np.testing.assert_array_equal(indices.ravel(), [0, 2, 0])
    if dtype in ("float32", "int8", "uint8", "int32"):
        _compare_max(x, kernel=2, strides=2, pads_end=1, rounding_type="ceil")
    # a window that lies in the padding (pads beyond the kernel) is empty too
    values, indices = ovpool.max_pool(x, kernel=1, pads_begin=2, pads_end=1)
    np.testing.assert_array_equal(values.ravel(), np.array([lowest] * 2 + [1] * 4 + [lowest],
                                                           dtype))
    np.testing.assert_array_equal(indices.ravel(), [0, 0, 0, 1, 2, 3, 0])


def test_empty_average_windows_are_zero():
    """OpenVINO divides 0 by 0 (NaN) for a window with no element and a real-element divisor;
    semantics.md says 0."""
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4)
    out = ovpool.avg_pool(x, kernel=2, strides=2, pads_end=1, rounding_type="ceil")
    np.testing.assert_array_equal(out.ravel(), [1.5, 3.5, 0])
    # with exclude_pad=False the full-kernel divisor applies: 0 / 2, as OpenVINO gives
    out = _compare_avg(x, kernel=2, strides=2, pads_end=1, rounding_type="ceil",
                       exclude_pad=False)
    np.testing.assert_array_equal(out.ravel(), [1.5, 3.5, 0])
    # no pads, ceil, stride beyond the kernel: the last window starts past the end
    out = ovpool.avg_pool(x, kernel=1, strides=5, rounding_type="ceil", exclude_pad=False)
    np.testing.assert_array_equal(out.ravel(), [1, 0])
    for dtype in ("int32", "uint8", "float16"):
        xi = x.astype(dtype)
        out = ovpool.avg_pool(xi, kernel=2, strides=2, pads_end=1, rounding_type="ceil")
        np.testing.assert_array_equal(out, ref_avg_pool(xi, 2, 2, 0, 1, rounding_type="ceil"))


def test_empty_average_window_from_dilation_gap():
    """The dilation steps over the only element (taps -1 and 2 of a length-1 input): OpenVINO
    accepts the pads (1/2 < dilated kernel 4) and gives NaN; semantics.md says 0."""
    one = np.array([[[5.0]]], np.float32)
    out = ovpool.avg_pool(one, kernel=2, dilations=3, pads_begin=1, pads_end=2)
    np.testing.assert_array_equal(out.ravel(), [0])
    two = np.array([[[5.0, 7.0]]], np.float32)
    out = ovpool.avg_pool(two, kernel=2, dilations=3, pads_begin=2, pads_end=2)
    np.testing.assert_array_equal(out, ref_avg_pool(two, 2, 1, 2, 2, 3))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_global_integer_adaptive_average_rounds_half_to_even(dtype):
    """The plugin's AdaptiveAvgPool truncates toward zero when every output size is 1
    ([3, 4] -> 3, 12.7 -> 12, -1.5 -> -1); with other sizes it rounds half to even."""
    cases = [[3, 4], [13] * 9 + [10], [5, 6, 6, 6], [1, 2]]
    if dtype != "uint8":
        cases += [[-1, -2], [-3, -4], [-2, -2, -2, -1]]
    for values in cases:
        x = np.array([[values]], dtype)
        out = ovpool.adaptive_avg_pool(x, 1)
        np.testing.assert_array_equal(out, ref_adaptive_avg_pool(x, 1), err_msg=str(values))
    x2 = np.array([[[[3, 4], [4, 4]]]], dtype)
    assert ovpool.adaptive_avg_pool(x2, [1, 1]).ravel()[0] == 4   # 3.75


def test_same_ceil_clamped_pad_keeps_ceil_l_over_s():
    """auto_pad same_* with rounding ceil: semantics.md says ceil(L / s) outputs; OpenVINO
    appends an empty window when the computed pad is clamped to 0 (L=4, k=1, s=2 gives 3)."""
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4)
    for auto_pad in ("same_upper", "same_lower"):
        values, indices = ovpool.max_pool(x, kernel=1, strides=2, auto_pad=auto_pad,
                                          rounding_type="ceil")
        np.testing.assert_array_equal(values.ravel(), [1, 3])
        np.testing.assert_array_equal(indices.ravel(), [0, 2])
        out = ovpool.avg_pool(x, kernel=1, strides=2, auto_pad=auto_pad, rounding_type="ceil")
        np.testing.assert_array_equal(out.ravel(), [1, 3])
        # ceil_torch agrees with OpenVINO
        _compare_max(x, kernel=1, strides=2, auto_pad=auto_pad, rounding_type="ceil_torch")
    x5 = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
    ref_v, ref_i = ref_max_pool(x5, 1, 3, auto_pad="same_upper", rounding_type="ceil")
    values, indices = ovpool.max_pool(x5, kernel=1, strides=3, auto_pad="same_upper",
                                      rounding_type="ceil")
    np.testing.assert_array_equal(values, ref_v)
    np.testing.assert_array_equal(indices, ref_i)


def test_float64_is_computed_in_float64():
    """The plugin computes float64 in float32; ovpool in float64."""
    x = np.array([[[1.0, 1e-9, 1 + 2.0 ** -40, 3.0, 0.1, 0.2]]], np.float64)
    np.testing.assert_allclose(ovpool.avg_pool(x, kernel=2, strides=2), ref_avg_pool(x, 2, 2),
                               rtol=1e-15, atol=0)
    assert ovpool.avg_pool(x, kernel=2, strides=2).ravel()[0] == (1.0 + 1e-9) / 2
    values, indices = ovpool.max_pool(x, kernel=3, strides=1)
    np.testing.assert_array_equal(values.ravel(), [1 + 2.0 ** -40, 3, 3, 3])
    np.testing.assert_array_equal(indices.ravel(), [2, 3, 3, 3])
    np.testing.assert_allclose(ovpool.adaptive_avg_pool(x, 2), ref_adaptive_avg_pool(x, 2),
                               rtol=1e-15, atol=0)
    values, indices = ovpool.adaptive_max_pool(x, 2)
    np.testing.assert_array_equal(values.ravel(), [1 + 2.0 ** -40, 3])


def test_int64_beyond_int32():
    """The plugin computes int64 in int32 (2**40 becomes 0); ovpool keeps int64."""
    x = np.array([[[2 ** 40, 3, -2 ** 40, -2 ** 41, 2 ** 33 + 5, 2 ** 33 + 4]]], np.int64)
    values, indices = ovpool.max_pool(x, kernel=2, strides=2)
    np.testing.assert_array_equal(values.ravel(), [2 ** 40, -2 ** 40, 2 ** 33 + 5])
    np.testing.assert_array_equal(indices.ravel(), [0, 2, 4])
    np.testing.assert_array_equal(ovpool.avg_pool(x, kernel=2, strides=2), ref_avg_pool(x, 2, 2))
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, 3), ref_adaptive_avg_pool(x, 3))
    values, indices = ovpool.adaptive_max_pool(x, 3)
    ref_v, ref_i = ref_adaptive_max_pool(x, 3)
    np.testing.assert_array_equal(values, ref_v)
    np.testing.assert_array_equal(indices, ref_i)


def test_int64_average_near_the_range_limits():
    """"Accumulate exactly" taken literally: window sums beyond the int64 range still average
    correctly (the plugin cannot be asked: it computes int64 in int32)."""
    big = np.array([[[2 ** 62, 2 ** 62 - 1, -2 ** 63, -2 ** 63 + 1]]], np.int64)
    np.testing.assert_array_equal(ovpool.avg_pool(big, kernel=2, strides=2),
                                  ref_avg_pool(big, 2, 2))


def test_int32_averages_are_exact():
    """The plugin sums int32 in float32 (2**24 + 1 is lost, 2**31 wraps); ovpool sums exactly."""
    x = np.array([[[16777217, 16777217, 2 ** 30, 2 ** 30, 2 ** 31 - 1, 2 ** 31 - 1]]], np.int32)
    np.testing.assert_array_equal(ovpool.avg_pool(x, kernel=2, strides=2).ravel(),
                                  [16777217, 2 ** 30, 2 ** 31 - 1])
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, 3).ravel(),
                                  [16777217, 2 ** 30, 2 ** 31 - 1])
    # AdaptiveMaxPool on int32 goes through float32 in the plugin: 2**24 + 1 == 2**24 there
    y = np.array([[[16777216, 16777217]]], np.int32)
    values, indices = ovpool.adaptive_max_pool(y, 1)
    assert values.ravel()[0] == 16777217 and indices.ravel()[0] == 1


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_adaptive_avg_pool_8bit_sums_do_not_saturate(dtype):
    """The plugin's AdaptiveAvgPool clamps an 8-bit window sum to the dtype's range before
    dividing (u8 200, 200, 201 -> 85); ovpool sums exactly."""
    values = [100, 100, 100, 120, 127, 126] if dtype == "int8" else [200, 200, 201, 255, 255, 254]
    x = np.array([[values]], dtype)
    out = ovpool.adaptive_avg_pool(x, 2)
    np.testing.assert_array_equal(out, ref_adaptive_avg_pool(x, 2))
    np.testing.assert_array_equal(out.ravel(), [100, 124] if dtype == "int8" else [200, 255])
    neg = np.array([[[-100, -100, -100]]], np.int8)
    if dtype == "int8":
        assert ovpool.adaptive_avg_pool(neg, 1).ravel()[0] == -100
    # AvgPool does not saturate on the plugin: it agrees
    _compare_avg(x, kernel=3, strides=3)


@pytest.mark.parametrize("shape", [(0, 2, 5), (2, 0, 5), (0, 1, 4, 4), (0, 3, 2, 3, 4)])
def test_zero_size_batch_or_channel(shape):
    """OpenVINO's AvgPool/MaxPool refuse a zero batch or channel count ("Batch size is zero");
    ovpool returns empty outputs of the right shape. The adaptive ops agree with OpenVINO."""
    x = np.zeros(shape, np.float32)
    spatial = len(shape) - 2
    with pytest.raises(RuntimeError):
        ovo.ov_max_pool(x, kernel=2)
    expected = shape[:2] + tuple(L - 1 for L in shape[2:])
    values, indices = ovpool.max_pool(x, kernel=2)
    assert values.shape == expected and indices.shape == expected
    assert ovpool.avg_pool(x, kernel=2, pads_begin=1, pads_end=1,
                           exclude_pad=False).shape == shape[:2] + tuple(L + 1 for L in shape[2:])
    out = ovpool.adaptive_avg_pool(x, [2] * spatial)
    assert out.shape == ovo.ov_adaptive_avg_pool(x, [2] * spatial).shape
    values, indices = ovpool.adaptive_max_pool(x, [2] * spatial)
    assert values.shape == ovo.ov_adaptive_max_pool(x, [2] * spatial)[0].shape
