"""16-bit float averages whose first pass slides windows over the rows of an axis before the
last (core/average.hpp's sum_full_window_rows, simd::slide_windows in AVX2 builds): taps a
multiple of the stride apart, two to eight of them, each input row widened once and added
into every window that reads it. The sums must keep the passes' order (each window from +0,
its taps in order, axis by axis outermost first), so the results are checked bit for bit
against float32 sums made in that order by a slow numpy loop, with values whose float32 sums
depend on the order, and against the oracle for values whose sums are exact.
"""

import ml_dtypes
import numpy as np
import pytest

import ovpool
from helpers import assert_same_averages
from reference import _resolve, ref_avg_pool
from test_avg_pass_vectors import _assert_case_keeps_its_bits

# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding): planes of more than
# 1024 elements (the passes, not the plane blocks), rows of 17 to 192 elements (one or two
# vectors a column, the last column overlapping the one before).
SLIDING = [
    # taps two rows apart, stride 1: two classes of windows (as sweep #101), seven taps
    ((1, 3, 60, 37), (7, 7), (1, 3), (5, 0), (4, 0), (2, 1), "ceil"),
    # three adjacent taps, stride 1 (as #89), two vectors a column
    ((1, 2, 40, 61), (3, 3), (1, 3), (0, 0), (0, 0), (1, 1), "ceil"),
    # stride 2, taps 2 apart: every other row, one class (as #65)
    ((2, 3, 44, 70), (5, 3), (2, 1), (0, 0), (0, 0), (2, 1), "floor"),
    # stride 2, taps 6 apart: three classes; padding at both ends
    ((1, 2, 60, 20), (4, 2), (2, 1), (3, 1), (2, 0), (6, 1), "ceil"),
    # eight taps (one vector a column)
    ((1, 2, 40, 30), (8, 3), (1, 1), (2, 1), (2, 1), (1, 1), "floor"),
    # two taps (as #149)
    ((1, 2, 40, 33), (2, 2), (1, 1), (0, 0), (0, 0), (1, 1), "floor"),
    # three axes (in this build their passes do not slide: reached by other paths)
    ((1, 3, 24, 8, 24), (5, 2, 3), (1, 1, 3), (4, 0, 1), (4, 1, 1), (2, 1, 1), "ceil"),
    # as many full windows as taps + 2 (the fewest that slide), and one fewer (the runs)
    ((1, 2, 15, 100), (7, 3), (1, 1), (0, 0), (0, 0), (1, 1), "floor"),
    ((1, 2, 14, 100), (7, 3), (1, 1), (0, 0), (0, 0), (1, 1), "floor"),
]

DTYPES = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)]


def _float32_passes(x, case, exclude_pad, other_order=False):
    """Averages of x as the passes make them: float32 sums axis by axis, outermost first, each
    window from +0 adding its taps inside the input in order, divided in float32 and rounded
    to x's type; with other_order, the axes innermost first and each window's taps in reverse
    order (two-tap windows of two axes sum the same in reverse)."""
    _, kernel, strides, begin, end, dil, rounding = case
    axes = _resolve(x.shape, kernel, strides, begin, end, dil, rounding, "explicit")
    sums = x.astype(np.float32)
    counts = np.ones((1, 1) + x.shape[2:], np.float32)
    order = list(enumerate(axes))
    for a, ax in order[::-1] if other_order else order:
        axis = 2 + a
        summed, counted = [], []
        for j in range(ax["O"]):
            taps = [j * ax["s"] - ax["pb"] + t * ax["d"] for t in range(ax["k"])]
            taps = [p for p in taps if 0 <= p < ax["L"]]
            if other_order:
                taps = taps[::-1]
            total = np.zeros_like(np.take(sums, [0], axis=axis))
            count = np.zeros_like(np.take(counts, [0], axis=axis))
            for p in taps:
                total = total + np.take(sums, [p], axis=axis)
                count = count + np.take(counts, [p], axis=axis)
            summed.append(total)
            counted.append(count)
        sums = np.concatenate(summed, axis=axis)
        counts = np.concatenate(counted, axis=axis)
    if not exclude_pad and any(ax["pb"] or ax["pe"] for ax in axes):
        counts = np.full_like(counts, np.prod([ax["k"] for ax in axes]))
    assert counts.min() > 0  # (no window wholly in the padding in these cases)
    return (sums / counts).astype(x.dtype)


def _rounding_values(rng, shape, dtype):
    """About 30% of +-16384 among values of about 0.01 (2% of them -0): a float32 sum that
    holds one of the large ones rounds the small ones away (its unit in the last place is
    2^-9), so a window whose large values cancel averages differently in another order."""
    values = rng.standard_normal(shape) * 0.01
    large = rng.random(shape) < 0.3
    values[large] = rng.choice([-16384.0, 16384.0], size=int(large.sum()))
    values.reshape(-1)[rng.random(values.size) < 0.02] = -0.0
    return values.astype(dtype)


def _pool(x, case, exclude_pad):
    _, kernel, strides, begin, end, dil, rounding = case
    return ovpool.avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=exclude_pad,
                           rounding_type=rounding)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", SLIDING)
def test_sliding_windows_keep_the_passes_sums(dtype, case):
    """Bit for bit the float32 sums in tap order, under both divisor rules; the same values
    summed in another order give other averages (the check can tell the order)."""
    rng = np.random.default_rng(101)
    x = _rounding_values(rng, case[0], dtype)
    for exclude_pad in (True, False):
        want = _float32_passes(x, case, exclude_pad)
        got = _pool(x, case, exclude_pad)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
        other = _float32_passes(x, case, exclude_pad, other_order=True)
        assert (other.view(np.uint16) != want.view(np.uint16)).any()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", SLIDING)
def test_sliding_windows_match_the_oracle(dtype, case):
    """Small integers (exact sums) and -0: the oracle's averages under both divisor rules."""
    rng = np.random.default_rng(7)
    x = rng.integers(-8, 9, size=case[0]).astype(dtype)
    x[x == 0] = -0.0
    _, kernel, strides, begin, end, dil, rounding = case
    for exclude_pad in (True, False):
        assert_same_averages(
            _pool(x, case, exclude_pad),
            ref_avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=exclude_pad,
                         rounding_type=rounding))


@pytest.mark.parametrize("case", SLIDING)
def test_sliding_windows_keep_their_bits(monkeypatch, case):
    """Each plane the bits of the plane alone, on one or two threads, and both builds the same
    bits (the baseline build sums run by run)."""
    _assert_case_keeps_its_bits(monkeypatch, case, 20, (np.float16, ml_dtypes.bfloat16))
