"""The separable passes of fixed-window averages (core/average.hpp) on planes too large or too
few for the plane blocks, through their vector loops: 16-bit float runs widened in registers
(every float16 / bfloat16 sum of runs), dense sums for 16-bit floats strided two apart along
rows, windows strided along rows summed eight rows at a time in columns
(simd/avg_columns_avx2.hpp: float32 sums of float32 / float16 / bfloat16 rows, int32 sums
of int8 / uint8 rows and of int32 partial sums, int16 ones, sixteen rows at a time, of
int8 / uint8 rows and of int16 partial sums; groups of
eight rows and a last group of fewer, rows longer than the columns held at once, wide
dilations), float windows of one to four taps strided 2 to 4 apart summed eight windows at
a time from blends or shuffles of each tap's loads, int8 / uint8 rows strided 2 to 4 apart
summed eight windows at a time from 16-byte loads, runs of 16 summed in registers, five to eight int32 runs in one sweep,
float16 / bfloat16 averages narrowed eight at a time, and int64 inputs summed in int32 when
their range allows. Each must give the oracle's values and the same bits in both kernel
builds and on any thread count.
"""

import numpy as np
import pytest

import ovpool
from ovpool import onnx as ovonnx
from helpers import assert_same_averages
from reference import ref_avg_pool
from test_kernels import _assert_random_planes_keep_their_bits

# Few planes (no blocks): 2-D planes of long rows, rows of 16 (passes over the first axis
# summed 16 at a time in registers), 1-D rows of odd lengths (vector tails). Rows of 2665 and
# 1201 elements: blocks of six and thirteen rows made whole groups of eight (the last block
# shorter) for the columns. Rows of 70: 16-bit float runs whose last sums are an overlapping
# vector of eight, and columns whose last tile overlaps the one before.
SHAPES_2D = [(1, 3, 72, 61), (1, 2, 19, 37), (1, 2, 21, 16), (1, 2, 20, 70)]
SHAPES_1D = [(1, 3, 2665), (2, 2, 203), (3, 5, 203), (1, 9, 1201), (2, 7, 2665)]

# (kernel, strides, pads_begin, pads_end, dilations, rounding)
# Windows of seven adjacent rows (runs as long as the rows, of 64 or more elements): one
# sweep of seven runs for float sums.
WINDOWS_2D = [((3, 3), (1, 3), (0, 0), (1, 1), (1, 1), "ceil"),
              ((7, 7), (1, 3), (5, 0), (4, 0), (2, 1), "ceil"),
              ((5, 2), (2, 2), (1, 0), (1, 1), (1, 1), "floor"),
              ((7, 3), (2, 1), (0, 2), (1, 0), (1, 3), "floor")]
WINDOWS_1D = [((4,), (2,), (1,), (1,), (3,), "floor"),   # stride 2, dense sums
              ((6,), (3,), (4,), (5,), (2,), "ceil"),    # stride 3, edge windows both ends
              ((2,), (2,), (0,), (1,), (1,), "ceil"),    # stride 2, two taps
              ((5,), (1,), (1,), (0,), (1,), "ceil"),    # stride 1: five runs
              ((7,), (3,), (0,), (0,), (1,), "floor"),   # stride 3, dense sums
              ((3,), (4,), (2,), (1,), (97,), "ceil")]  # wide dilation (columns in pieces)


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _exact_floats(rng, shape, dtype):
    """Small integers as floats of dtype (sums exact in every accumulator), zeros as -0, and
    about one in a hundred elements NaN and one in a hundred -inf."""
    x = rng.integers(-8, 9, size=shape).astype(dtype)
    x[x == 0] = -0.0
    x.reshape(-1)[rng.random(x.size) < 0.01] = np.nan
    x.reshape(-1)[rng.random(x.size) < 0.01] = -np.inf
    return x


def _windows(x):
    return WINDOWS_2D if x.ndim == 4 else WINDOWS_1D


def _pool_all(x):
    results = []
    for kernel, strides, begin, end, dil, rounding in _windows(x):
        for exclude_pad in (True, False):
            results.append(ovpool.avg_pool(x, kernel, strides, begin, end, dil,
                                           exclude_pad=exclude_pad, rounding_type=rounding))
        if np.dtype(x.dtype).kind in "iu":  # (ONNX AveragePool takes floats only)
            continue
        results.append(ovonnx.average_pool(x, kernel_shape=kernel, strides=strides,
                                           pads=list(begin) + list(end), dilations=dil,
                                           ceil_mode=int(rounding != "floor"),
                                           count_include_pad=1))
    return results


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int64", "int32"])
def test_pass_averages_match_the_oracle(dtype):
    """Values whose sums are exact (small integers, -0, NaN and infinities for floats; int64
    values in int32's range and at the extremes, whose sums leave int32 and int64)."""
    dtype = _dtype(dtype)
    rng = np.random.default_rng(53)
    floating = dtype.kind not in "iu"
    for shape in SHAPES_2D + SHAPES_1D:
        if floating:
            x = _exact_floats(rng, shape, dtype)
            inputs = [x]
        else:
            info = np.iinfo(dtype)
            small = rng.integers(-1000, 1001, size=shape).astype(dtype)
            large = rng.integers(info.min, info.max, endpoint=True, size=shape).astype(dtype)
            large.reshape(-1)[:7] = info.max
            inputs = [small, large]
        for x in inputs:
            for kernel, strides, begin, end, dil, rounding in _windows(x):
                for exclude_pad in (True, False):
                    args = (kernel, strides, begin, end, dil)
                    got = ovpool.avg_pool(x, *args, exclude_pad=exclude_pad,
                                          rounding_type=rounding)
                    want = ref_avg_pool(x, *args, exclude_pad=exclude_pad,
                                        rounding_type=rounding)
                    assert_same_averages(got, want)


@pytest.mark.parametrize("shape", SHAPES_2D + SHAPES_1D)
def test_pass_averages_keep_their_bits(monkeypatch, shape):
    """Random values (float sums that round): the same bits with one or two threads, for each
    plane alone, and in both builds."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)  # two threads even for these
    import ml_dtypes
    _assert_random_planes_keep_their_bits(monkeypatch, _pool_all, shape, 59,
                                          (np.float16, ml_dtypes.bfloat16, np.float32, np.int64))


# int8 / uint8 planes of two axes whose passes go last axis first (exact sums in any order,
# core/average.hpp's cheapest_pass_order): few planes (the passes on whole planes) and many
# small ones (the plane blocks), strided last axes with stride 1 or 2 along the first, and
# one whose cheapest order is outermost first.
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
EIGHT_BIT_ORDERS = [
    ((1, 3, 43, 61), (4, 6), (1, 4), (0, 0), (0, 0), (3, 1), "ceil_torch", "same_upper"),
    ((2, 2, 72, 97), (3, 5), (1, 4), (1, 2), (1, 2), (1, 2), "ceil", "explicit"),
    ((1, 40, 17, 19), (6, 1), (1, 4), (3, 0), (5, 0), (2, 1), "ceil_torch", "explicit"),
    ((1, 2, 30, 83), (4, 6), (2, 3), (0, 0), (0, 0), (2, 2), "floor", "same_lower"),
    ((1, 20, 8, 109), (3, 4), (3, 4), (0, 0), (0, 0), (3, 1), "floor", "valid"),
]


# int8 / uint8 windows strided along rows, summed in columns (simd/avg_columns_avx2.hpp in
# AVX2 builds; in int16, sixteen rows at a time, when the window volume allows, else in int32,
# eight rows at a time, as the last two cases do): the input rows themselves (one axis, or a
# last axis summed first), and partial sums of earlier passes (three axes, outermost first);
# two taps, wide dilations, groups of fewer than eight rows and rows longer than the columns
# held at once; blocks of 16 rows or more (fewer go row by row: 2x12x854 has blocks of 19
# rows and of 5), and one-tap windows (a plain subsample: a strided copy, see SUBSAMPLES).
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
EIGHT_BIT_COLUMNS = [
    ((2, 12, 854), (2,), (2,), (0,), (0,), (3,), "floor", "same_upper"),
    ((2, 12, 854), (1,), (2,), (0,), (0,), (1,), "floor", "same_upper"),
    ((1, 40, 301), (4,), (3,), (2,), (1,), (3,), "ceil", "explicit"),
    ((1, 20, 203), (3,), (4,), (2,), (1,), (97,), "ceil", "explicit"),
    ((1, 6, 17, 19), (6, 1), (1, 4), (3, 0), (5, 0), (2, 1), "ceil_torch", "explicit"),
    ((1, 3, 31, 31, 17), (7, 7, 2), (4, 1, 2), (0, 0, 1), (0, 5, 0), (1, 2, 3),
     "ceil_torch", "explicit"),
    ((1, 2, 13, 11, 20), (6, 2, 3), (4, 4, 3), (1, 0, 0), (2, 0, 1), (1, 1, 3),
     "ceil_torch", "explicit"),
    # int32 columns: a window volume of 250 (int16 for int8, int32 for uint8) and of 300
    ((1, 2, 5, 7, 45), (5, 5, 10), (1, 1, 2), (0, 2, 1), (0, 2, 0), (1, 1, 2), "floor",
     "explicit"),
    ((1, 20, 700), (300,), (2,), (0,), (0,), (1,), "floor", "explicit"),
]

# int8 / uint8 windows strided two or more apart, of two taps or more, whose partial sums
# stay within int16 and whose last axis is summed last (or alone): the passes sum in int16,
# the last axis sixteen rows at a time in columns (simd/avg_columns_avx2.hpp's
# columns_last_axis16, AVX2 builds; int32 columns before): the sweep's planes of 31x31x17
# and of 13x11x20 (the int16 partial sums of two earlier passes; fewer than eight windows a
# row, dilated taps, windows clipped by the padding), 1-D rows of bytes (a last group of
# fewer than sixteen rows; rows longer than the columns held at once), and window volumes of
# 128 (the most in int16 for uint8) and 250 (int8 only).
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
EIGHT_BIT_SHORT_COLUMNS = [
    ((1, 4, 31, 31, 17), (7, 7, 2), (4, 1, 2), (0, 0, 1), (0, 5, 0), (1, 2, 3), "ceil_torch",
     "explicit"),
    ((1, 22, 13, 11, 20), (6, 2, 3), (4, 4, 3), (1, 0, 0), (2, 0, 1), (1, 1, 3), "ceil_torch",
     "explicit"),
    ((1, 21, 300), (3,), (2,), (1,), (2,), (5,), "floor", "explicit"),
    ((1, 20, 600), (4,), (4,), (3,), (0,), (7,), "ceil", "explicit"),
    ((1, 5, 4, 6, 41), (4, 4, 8), (1, 2, 3), (1, 0, 2), (0, 1, 3), (1, 1, 2), "floor",
     "explicit"),
    ((1, 3, 5, 7, 45), (5, 5, 10), (1, 1, 2), (0, 2, 1), (0, 2, 0), (1, 1, 2), "floor",
     "explicit"),
]


# int8 / uint8 windows strided 2 to 4 apart along rows that go row by row (fewer than 16 rows,
# one-tap windows with an empty one at the end, or two taps three or four apart, which the
# dense sums leave), summed eight windows at a time from 16-byte loads (AVX2 builds; int16
# sums when the window volume allows, int32 for the last case's 260 taps), the last windows
# of the last row one at a time (the loads would read past the input).
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
EIGHT_BIT_STRIDED = [
    ((1, 9, 203), (2,), (3,), (0,), (1,), (5,), "floor", "explicit"),
    ((1, 9, 203), (1,), (4,), (0,), (0,), (1,), "ceil", "explicit"),
    ((1, 10, 150), (5,), (2,), (2,), (2,), (1,), "floor", "explicit"),
    ((1, 9, 41), (3,), (2,), (1,), (0,), (2,), "ceil", "explicit"),
    ((1, 2, 7, 67), (2, 3), (1, 2), (0, 1), (1, 1), (1, 3), "floor", "explicit"),
    ((1, 9, 800), (260,), (2,), (0,), (0,), (1,), "floor", "explicit"),
]

# int8 / uint8 planes some of whose inputs are in no window: the plane blocks up to
# blocks_max_sparse_block elements (16 planes of 1024), the passes above (core/avg_blocks.hpp).
EIGHT_BIT_SPARSE = [
    ((1, 20, 32, 32), (1, 3), (2, 4), (0, 0), (0, 0), (1, 1), "floor", "explicit"),
    ((1, 20, 41, 25), (1, 3), (2, 4), (0, 0), (0, 0), (1, 1), "floor", "explicit"),
    ((1, 20, 12, 11, 13), (4, 3, 3), (6, 5, 5), (0, 0, 0), (0, 0, 0), (1, 1, 1), "ceil_torch",
     "same_upper"),
]


# int8 / uint8 windows of five to eight taps with stride 1, whose runs are summed in one sweep
# (AVX2 builds), on rows (a run over all rows) and down columns, edge windows of fewer taps.
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
EIGHT_BIT_RUNS = [
    ((1, 3, 40, 70), (8, 7), (1, 1), (3, 3), (4, 3), (1, 1), "floor", "explicit"),
    ((1, 2, 23, 90), (5, 6), (1, 1), (0, 2), (0, 3), (2, 1), "floor", "explicit"),
]

# int8 / uint8 windows whose partial sums stay within int16 over rows of more than 16
# elements stepping one apart (the passes then sum in int16, AVX2 builds or not): the
# sweep's 198 planes of 30x83 and 18 of 105x138 (dilated rows, strided columns), windows of
# the largest volume in int16 (128 taps: int16 for uint8 and int8 alike; 255: int8 only;
# 256 and 129 stay in int32), 1-D rows, and a 3-D plane.
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
EIGHT_BIT_SHORT = [
    ((1, 5, 30, 83), (4, 6), (2, 1), (0, 0), (0, 0), (2, 2), "ceil_torch", "same_lower"),
    ((1, 3, 105, 138), (6, 6), (4, 1), (0, 0), (0, 0), (1, 2), "ceil", "same_lower"),
    ((1, 2, 40, 70), (8, 16), (1, 1), (3, 7), (4, 8), (1, 1), "floor", "explicit"),
    ((1, 2, 40, 70), (15, 17), (2, 1), (7, 8), (7, 8), (1, 1), "floor", "explicit"),
    ((1, 2, 40, 70), (16, 16), (2, 1), (7, 8), (7, 8), (1, 1), "floor", "explicit"),
    ((1, 2, 40, 70), (3, 43), (2, 1), (1, 21), (1, 21), (1, 1), "floor", "explicit"),
    ((2, 7, 300), (9,), (1,), (4,), (4,), (3,), "ceil", "explicit"),
    ((1, 9, 40), (3,), (1,), (1,), (1,), (1,), "floor", "explicit"),  # a block's divisors
    # planes of 10x97 averages: the last ten of each plane divided as an overlapping 16
    ((1, 3, 20, 97), (3, 5), (2, 1), (0, 0), (0, 0), (1, 1), "floor", "same_upper"),
    ((1, 2, 6, 9, 33), (3, 2, 5), (2, 1, 1), (1, 0, 2), (1, 1, 2), (1, 2, 1), "ceil",
     "explicit"),
]

# int8 / uint8 windows strided 3 or 4 apart, three taps or more, on rows summed a few at a
# time (the dense sums at every position, in int16 when the window volume allows, every
# step-th picked eight (int32) or sixteen (int16) at a time in AVX2 builds): long rows in
# pieces (the sweep's 68 rows of 3813), and short rows grouped into one run (the last picks
# of a group's last row one at a time).
EIGHT_BIT_PICKED = [
    ((1, 9, 3813), (4,), (3,), (0,), (0,), (3,), "ceil", "same_lower"),
    # taps a multiple of the stride apart: one phase of the row picked, its windows summed at
    # unit step (core/average.hpp's sum_phase_windows), rows longer than one piece of phase
    ((1, 9, 13001), (4,), (3,), (0,), (0,), (3,), "ceil", "same_lower"),
    ((1, 9, 701), (3,), (3,), (2,), (1,), (6,), "ceil", "explicit"),
    ((1, 9, 355), (5,), (4,), (1,), (3,), (4,), "floor", "explicit"),
    ((1, 9, 203), (4,), (3,), (2,), (1,), (3,), "ceil", "explicit"),
    ((1, 7, 301), (3,), (4,), (0,), (2,), (2,), "floor", "explicit"),
]

# int8 / uint8 rows strided 3 or 4 apart (three taps or more) whose partial sums stay within
# int16: the passes sum them in int16 (the dense sums, sixteen picked at a time in AVX2
# builds), also over many rows, where int32 sums take the columns: the sweep's 8 planes of
# 111x136, rows of 3813 with one tap of padding either side, windows of the largest volume
# in int16 (128: uint8 and int8; 255: int8 only, uint8 in int32), a 3-D plane.
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
EIGHT_BIT_SHORT_STRIDED = [
    ((1, 3, 111, 136), (3, 6), (4, 3), (0, 4), (1, 3), (1, 2), "ceil_torch", "explicit"),
    ((1, 6, 3813), (4,), (3,), (1,), (1,), (3,), "ceil", "explicit"),
    ((1, 2, 40, 170), (8, 16), (1, 4), (3, 7), (4, 8), (1, 1), "floor", "explicit"),
    ((1, 2, 40, 170), (15, 17), (2, 3), (7, 8), (7, 8), (1, 1), "floor", "explicit"),
    ((1, 2, 7, 9, 101), (3, 2, 5), (2, 1, 4), (1, 0, 2), (1, 1, 2), (1, 2, 2), "ceil",
     "explicit"),
]

# int16 sums whose last output row's windows lie wholly in the padding (divisor 0 with
# exclude-pad): the plan's float32 divisor 1 and inverse 0 for those outputs, average 0.
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
EIGHT_BIT_EMPTY_WINDOWS = [
    ((1, 2, 36, 300), (3, 5), (4, 1), (0, 2), (2, 2), (1, 1), "ceil", "explicit"),
]


# Windows of one input each over a divisor of 1 (kernel 1 on every axis, no window in the
# padding): a strided copy of the input (core/avg_picks.hpp), one-byte rows picked by byte
# shuffles in AVX2 builds. The sweep's 304 rows of 854, steps 2 to 5 and 1 (a plain copy of
# rows), 2-D and 3-D planes with strides along every axis, many small planes (several to an
# item), "same" padding whose windows all stay inside the input, and "ceil" rounding whose
# last windows are empty (divisor 0 or 1 by the rule, so the passes).
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad)
SUBSAMPLES = [
    ((8, 38, 854), (1,), (2,), (0,), (0,), (1,), "floor", "same_upper"),
    ((1, 5, 203), (1,), (3,), (0,), (0,), (1,), "floor", "explicit"),
    ((1, 3, 131), (1,), (5,), (0,), (0,), (1,), "floor", "explicit"),
    ((2, 3, 17, 40), (1, 1), (3, 4), (0, 0), (0, 0), (1, 1), "ceil", "explicit"),
    ((2, 3, 17, 40), (1, 1), (1, 2), (0, 0), (0, 0), (2, 2), "floor", "same_lower"),
    ((1, 2, 9, 10, 37), (1, 1, 1), (2, 3, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), "floor",
     "valid"),
    ((3, 70, 5, 6), (1, 1), (2, 2), (0, 0), (0, 0), (1, 1), "floor", "explicit"),
    ((1, 4, 33), (1,), (1,), (0,), (0,), (1,), "floor", "explicit"),
]


def _pool_eight_bit(case, x):
    _shape, kernel, strides, begin, end, dil, rounding, auto = case
    return [ovpool.avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=e,
                            rounding_type=rounding, auto_pad=auto) for e in (True, False)]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("case", EIGHT_BIT_ORDERS + EIGHT_BIT_COLUMNS + EIGHT_BIT_STRIDED +
                         EIGHT_BIT_SPARSE + EIGHT_BIT_RUNS + EIGHT_BIT_SHORT +
                         EIGHT_BIT_PICKED + EIGHT_BIT_SHORT_STRIDED + EIGHT_BIT_EMPTY_WINDOWS +
                         EIGHT_BIT_SHORT_COLUMNS)
def test_eight_bit_passes_in_any_order_match_the_oracle(dtype, case):
    """Random values and whole rows and planes at the type's extremes (the largest sums),
    both divisor rules: the oracle's values, rounded half to even."""
    shape, kernel, strides, begin, end, dil, rounding, auto = case
    info = np.iinfo(dtype)
    rng = np.random.default_rng(67)
    x = rng.integers(info.min, info.max, endpoint=True, size=shape).astype(dtype)
    x[..., 5, :] = info.max
    x[..., :, 7] = info.min
    x.reshape(-1, *shape[2:])[1] = info.max
    for exclude_pad, got in zip((True, False), _pool_eight_bit(case, x)):
        want = ref_avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=exclude_pad,
                            rounding_type=rounding, auto_pad=auto)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", EIGHT_BIT_ORDERS + EIGHT_BIT_COLUMNS + EIGHT_BIT_STRIDED +
                         EIGHT_BIT_SPARSE + EIGHT_BIT_RUNS + EIGHT_BIT_SHORT +
                         EIGHT_BIT_PICKED + EIGHT_BIT_SHORT_STRIDED + EIGHT_BIT_EMPTY_WINDOWS +
                         EIGHT_BIT_SHORT_COLUMNS)
def test_eight_bit_passes_in_any_order_keep_their_bits(monkeypatch, case):
    """Each plane gets the bytes of that plane alone, with one or two threads (row parts for
    the few-plane calls), and both builds agree."""
    from ovpool import pooling
    from helpers import assert_planes_keep_their_bits
    from test_kernels import _assert_builds_agree_bitwise, _avx2_build
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)  # two threads even for these
    rng = np.random.default_rng(71)
    values = rng.integers(-128, 128, size=case[0])
    assert_planes_keep_their_bits(lambda x: _pool_eight_bit(case, x), values,
                                  (np.int8, np.uint8))
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, lambda: [
            r for dtype in (np.int8, np.uint8)
            for r in _pool_eight_bit(case, values.astype(dtype))])


# Adaptive windows along rows that follow no regular run (c or c + 1 taps starting every one,
# two or eight elements; upsampling: one or two taps), on few planes (the passes): summed
# eight rows at a time in columns (simd/avg_columns_avx2.hpp) in AVX2 builds, integer sums
# (int32, of 8-, 32- and 64-bit inputs) and float ones alike, or, int8 / uint8 windows whose
# sums fit int16, as differences of running sums sixteen rows at a time; window by window in
# the baseline. Groups of eight rows and a last group of fewer, a group of fewer than eight
# alone, rows wider than the columns held at once, and integer windows of 16 or more taps.
IRREGULAR = [((1, 2, 43, 652), (13, 81)),   # 9 or 10 taps every 8 (the sweep's 427x652)
             ((1, 3, 11, 89), (4, 165)),    # upsampling: one or two taps
             ((1, 1, 9, 1500), (5, 640)),   # 2 to 4 taps every 2, over 512 columns
             ((2, 1, 6, 40), (3, 27)),      # 2 or 3 taps every element
             ((1, 2, 5, 100), (2, 3)),      # 34 taps (floats: partial sums, not columns)
             # int8 / uint8 windows whose sums fit int16: running sums of sixteen rows at a
             # time in AVX2 builds (groups of sixteen and a last group of fewer, pieces over
             # 512 columns, pieces of fewer than eight windows, an identity first axis)
             ((1, 1, 40, 1500), (20, 130)),
             ((2, 1, 37, 300), (37, 70)),
             ((1, 3, 9, 80), (4, 18)),
             ((1, 5, 2000), (17,)),
             # int32 sums of 9 or 10 rows of bytes at a time, held in int16 lanes
             ((1, 1, 51, 47, 81), (6, 6, 10))]


@pytest.mark.parametrize("shape, size", IRREGULAR)
def test_irregular_row_windows_match_the_oracle(shape, size):
    """Integers exactly: 8-bit extremes, 32- and 64-bit values whose sums fit in int32 (the
    columns) and extremes (wider sums); floats with signed zeros, NaN and infinities."""
    from reference import ref_adaptive_avg_pool

    rng = np.random.default_rng(73)
    for dtype in ("int8", "uint8", "int32", "int64"):
        info = np.iinfo(dtype)
        for low, high in [(-1000, 1000), (info.min, info.max)]:
            x = rng.integers(max(low, info.min), min(high, info.max), size=shape,
                             endpoint=True).astype(dtype)
            x[..., 3, :] = info.max
            assert_same_averages(ovpool.adaptive_avg_pool(x, size),
                                 ref_adaptive_avg_pool(x, size))
    for dtype in ("float32", "float16", "bfloat16"):
        x = _exact_floats(rng, shape, _dtype(dtype))
        assert_same_averages(ovpool.adaptive_avg_pool(x, size), ref_adaptive_avg_pool(x, size))


@pytest.mark.parametrize("shape, size", IRREGULAR)
def test_irregular_row_windows_keep_their_bits(monkeypatch, shape, size):
    """Random values (float sums that round): the columns' sums have the bits of the
    baseline's window-by-window sums, each plane those of the plane alone, on one or two
    threads."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)  # two threads even for these
    import ml_dtypes
    _assert_random_planes_keep_their_bits(
        monkeypatch, lambda x: [ovpool.adaptive_avg_pool(x, size)], shape, 79,
        (np.float16, ml_dtypes.bfloat16, np.float32, np.int64, np.int32, np.uint8))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
@pytest.mark.parametrize("case", SUBSAMPLES)
def test_one_input_windows_are_the_inputs(dtype, case):
    """Every output is the input its window holds: the oracle's values (random values and the
    type's extremes), both divisor rules."""
    shape, kernel, strides, begin, end, dil, rounding, auto = case
    info = np.iinfo(dtype)
    rng = np.random.default_rng(73)
    x = rng.integers(info.min, info.max, endpoint=True, size=shape).astype(dtype)
    x.reshape(-1)[::7] = info.max
    x.reshape(-1)[3::11] = info.min
    results = _pool_eight_bit(case, x)
    for exclude_pad, got in zip((True, False), results):
        want = ref_avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=exclude_pad,
                            rounding_type=rounding, auto_pad=auto)
        np.testing.assert_array_equal(got, want)
    if auto == "explicit" and len(kernel) == 1:
        # (by hand: no padding, so output j is input j * stride)
        picked = x[..., ::strides[0]][..., :results[0].shape[-1]]
        np.testing.assert_array_equal(results[0], picked)


@pytest.mark.parametrize("case", SUBSAMPLES)
def test_one_input_windows_keep_their_bits(monkeypatch, case):
    """The same bytes for each plane alone, on one or two threads, in both builds."""
    from ovpool import pooling
    from helpers import assert_planes_keep_their_bits
    from test_kernels import _assert_builds_agree_bitwise, _avx2_build
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)  # two threads even for these
    rng = np.random.default_rng(79)
    values = rng.integers(-128, 128, size=case[0])
    assert_planes_keep_their_bits(lambda x: _pool_eight_bit(case, x), values,
                                  (np.int8, np.uint8, np.int32))
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, lambda: [
            r for dtype in (np.int8, np.uint8, np.int64)
            for r in _pool_eight_bit(case, values.astype(dtype))])


# Float planes with an axis of one-tap windows that keeps at most half of its inputs (kernel
# 1, stride 3 or 4), which the passes take first (core/average.hpp's subsample_axes_first):
# in the plane blocks (many small planes), and on whole planes (few), a middle axis or the
# last. (shape, kernel, strides, dilations)
SUBSAMPLE_AXES = [((2, 40, 13, 8, 7), (5, 1, 3), (1, 4, 3), (2, 1, 1)),
                  ((1, 2, 30, 40, 20), (3, 1, 2), (1, 3, 2), (1, 1, 1)),
                  ((1, 3, 50, 90), (4, 1), (1, 3), (1, 1))]


def _outermost_first_averages(x, kernel, strides, dilations):
    """Averages of full windows (no padding) summed as the specification orders them: in
    float32, axis by axis from the outermost, each window's taps in order from +0; then
    divided by the window volume in float32 and rounded to x's type."""
    sums = x.astype(np.float32)
    for axis, (k, s, d) in enumerate(zip(kernel, strides, dilations)):
        axis += 2
        n = (sums.shape[axis] - (k - 1) * d - 1) // s + 1
        out = []
        for j in range(n):
            total = np.zeros_like(np.take(sums, 0, axis=axis))
            for t in range(k):
                total = total + np.take(sums, j * s + t * d, axis=axis)
            out.append(total)
        sums = np.stack(out, axis=axis)
    return (sums / np.float32(np.prod(kernel))).astype(x.dtype)


@pytest.mark.parametrize("case", SUBSAMPLE_AXES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_subsample_axes_first_keep_the_outermost_first_sums(dtype, case):
    """Random values (sums that round, some -0): the bits of sums taken outermost axis first,
    in both builds."""
    shape, kernel, strides, dilations = case
    rng = np.random.default_rng(97)
    x = (rng.standard_normal(shape) * 100).astype(_dtype(dtype))
    x.reshape(-1)[rng.random(x.size) < 0.02] = -0.0
    want = _outermost_first_averages(x, kernel, strides, dilations)
    got = ovpool.avg_pool(x, kernel, strides, 0, 0, dilations, exclude_pad=True)
    np.testing.assert_array_equal(got.view(np.uint16 if x.itemsize == 2 else np.uint32),
                                  want.view(np.uint16 if x.itemsize == 2 else np.uint32))


@pytest.mark.parametrize("case", SUBSAMPLE_AXES)
def test_subsample_axes_first_keep_their_bits(monkeypatch, case):
    """Random values: the same bits for each plane alone, on one or two threads, and in both
    builds."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)  # two threads even for these
    import ml_dtypes
    shape, kernel, strides, dilations = case
    _assert_random_planes_keep_their_bits(
        monkeypatch,
        lambda x: [ovpool.avg_pool(x, kernel, strides, 0, 0, dilations, exclude_pad=e)
                   for e in (True, False)],
        shape, 101, (np.float16, ml_dtypes.bfloat16, np.float32))


def _assert_case_matches_the_oracle(x, case):
    """ovpool's averages of ``x`` for one (shape, kernel, strides, pads_begin, pads_end,
    dilations, rounding) case against the oracle's, under both divisor rules."""
    _, kernel, strides, begin, end, dil, rounding = case
    for exclude_pad in (True, False):
        args = (kernel, strides, begin, end, dil)
        assert_same_averages(
            ovpool.avg_pool(x, *args, exclude_pad=exclude_pad, rounding_type=rounding),
            ref_avg_pool(x, *args, exclude_pad=exclude_pad, rounding_type=rounding))


def _assert_case_keeps_its_bits(monkeypatch, case, seed, build_dtypes):
    """Random values for one case: each plane the bits of the plane alone, on one or two
    threads, and both builds' bits for ``build_dtypes``."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)  # two threads even for these
    shape, kernel, strides, begin, end, dil, rounding = case

    def pool_all(x):
        return [ovpool.avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=exclude_pad,
                                rounding_type=rounding) for exclude_pad in (True, False)]

    _assert_random_planes_keep_their_bits(monkeypatch, pool_all, shape, seed, build_dtypes)


# Float windows strided 2 to 4 apart along rows, of one to eight taps, summed eight windows at
# a time from each tap's loads gathered by blends or shuffles (simd/avg_strided_avx2.hpp, AVX2
# builds): padding at the row's start and end (edge groups whose taps outside the row add +0),
# rows whose windows are not a multiple of eight (the last group overlapping), exactly eight
# windows, dilations, first and last rows whose loads would leave the block (summed window by
# window), blocks of few long rows (row by row). 16-bit rows take it for no more taps than the
# stride, except bfloat16 rows stepping 2 apart (the others, and longer windows, keep the
# columns).
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding)
FLOAT_STRIDED = [
    ((1, 2, 23, 50), (2, 1), (1, 2), (0, 0), (0, 0), (1, 1), "floor"),
    ((1, 2, 30, 101), (1, 2), (1, 2), (0, 1), (0, 1), (1, 3), "ceil"),
    ((1, 2, 25, 61), (2, 3), (1, 3), (0, 2), (1, 2), (1, 1), "ceil"),
    ((1, 3, 20, 51), (3, 3), (2, 4), (1, 1), (1, 1), (1, 3), "floor"),
    ((1, 2, 17, 100), (1, 4), (1, 3), (0, 3), (0, 1), (1, 1), "ceil"),
    ((1, 1, 13, 64), (3, 4), (1, 4), (1, 3), (1, 3), (1, 1), "ceil"),
    ((3, 4, 16), (2,), (2,), (0,), (0,), (1,), "floor"),
    ((1, 1, 30), (3,), (3,), (2,), (2,), (1,), "ceil"),
    ((2, 3, 95), (4,), (2,), (3,), (1,), (2,), "ceil"),
    # more taps than the step: bfloat16 pairs (one load and a shift a tap) and float32 rows,
    # the first pass's sums of 16-bit planes included, up to eight taps
    ((2, 6, 300), (4,), (2,), (1,), (1,), (3,), "floor"),
    ((3, 2, 77), (5,), (2,), (2,), (2,), (1,), "ceil"),
    ((1, 2, 9, 150), (2, 7), (1, 3), (1, 3), (1, 2), (1, 1), "ceil"),
    ((1, 1, 5, 130), (1, 8), (1, 4), (0, 4), (0, 3), (1, 1), "ceil"),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("case", FLOAT_STRIDED)
def test_strided_float_rows_match_the_oracle(dtype, case):
    """Sums that are exact, with -0, NaN and infinities: the oracle's averages under both
    divisor rules."""
    rng = np.random.default_rng(89)
    x = _exact_floats(rng, case[0], _dtype(dtype))
    _assert_case_matches_the_oracle(x, case)


@pytest.mark.parametrize("case", FLOAT_STRIDED)
def test_strided_float_rows_keep_their_bits(monkeypatch, case):
    """Random values (sums that round, -0): the bits of the baseline's window-by-window sums,
    each plane those of the plane alone, on one or two threads."""
    import ml_dtypes
    _assert_case_keeps_its_bits(monkeypatch, case, 97,
                                (np.float16, ml_dtypes.bfloat16, np.float32))


# float64 windows strided 2 apart and int32 ones 2 to 4 apart along rows of 16 full windows or
# more, summed from the rows' phases (core/average.hpp's sum_phases_windows; float64 with
# strides 3 and 4 keeps the dense sums): dilations that spread a window's taps over every
# phase, or keep them in one; padding at both ends; rows of more windows than one piece of the
# phase buffer holds (float64 step 2 and int32 step 4: two pieces); few rows (int32 rows then
# skip the columns) and many; windows of up to nine taps.
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding)
WIDE_PHASED = [
    ((4, 13, 502), (4,), (2,), (0,), (1,), (1,), "floor"),
    ((1, 3, 2501), (5,), (2,), (2,), (2,), (3,), "ceil"),
    ((1, 2, 4390), (3,), (4,), (1,), (0,), (2,), "ceil"),
    ((2, 3, 611), (9,), (3,), (4,), (4,), (1,), "floor"),
    ((1, 2, 9, 97), (2, 6), (1, 3), (1, 2), (0, 3), (1, 2), "ceil"),
    ((1, 1, 5, 130), (1, 2), (1, 4), (0, 1), (0, 1), (1, 4), "floor"),
]


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("case", WIDE_PHASED)
def test_phased_wide_rows_match_the_oracle(dtype, case):
    """Sums that are exact (small integers, -0, NaN and infinities for float64; int32 values at
    the extremes, whose sums leave int32): the oracle's averages under both divisor rules."""
    rng = np.random.default_rng(113)
    shape = case[0]
    if dtype == "float64":
        x = _exact_floats(rng, shape, np.float64)
    else:
        info = np.iinfo(np.int32)
        x = rng.integers(info.min, info.max, endpoint=True, size=shape).astype(np.int32)
        x.reshape(-1)[:9] = info.max
    _assert_case_matches_the_oracle(x, case)


@pytest.mark.parametrize("case", WIDE_PHASED)
def test_phased_wide_rows_keep_their_bits(monkeypatch, case):
    """Random values (float64 sums that round, -0): the same bits in both builds, each plane
    those of the plane alone, on one or two threads."""
    _assert_case_keeps_its_bits(monkeypatch, case, 127, (np.float64, np.int32))


# Unit-step last axes with fewer outputs than inputs, or of one row (core/average.hpp's
# sum_full_window_rows and sum_edge_columns): each row's full windows one sweep of their tap
# count (one to eight taps, and more), the edge windows a column at a time for all rows:
# edges of two to eight taps (unrolled columns), of nine to fifteen (row by row) and of 16 or
# more (float partial sums, as sum_windows sums them), at the start and at the end of rows.
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding)
UNIT_STEP_ROWS = [
    ((2, 3, 20, 70), (5, 3), (2, 1), (4, 1), (0, 0), (2, 1), "ceil"),  # sweep #65's windows
    ((1, 2, 6, 59), (1, 20), (1, 1), (0, 18), (0, 0), (1, 1), "floor"),
    ((1, 1, 61), (9,), (1,), (3,), (0,), (1,), "floor"),                # one row
    ((1, 3, 4, 45), (2, 4), (1, 1), (0, 0), (1, 5), (1, 2), "ceil"),
    ((2, 5, 33), (12,), (1,), (10,), (0,), (1,), "floor"),
]


# Strided windows along an axis before the last, over rows of more than 16 elements (the
# axes after it: core/average.hpp's sum_full_window_rows with inner > 1): each full window
# one sweep of its tap count (one to eight taps, and nine, which sum_rows takes), the edge
# windows a run each; 2-D and 3-D planes, strides 2 to 4, dilations.
# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding)
STRIDED_OUTER_AXES = [
    ((2, 3, 61, 42), (2, 1), (3, 2), (1, 0), (0, 0), (3, 1), "ceil"),  # sweep #113's windows
    ((1, 2, 40, 70), (8, 3), (3, 1), (2, 1), (3, 1), (1, 1), "floor"),
    ((1, 2, 30, 33), (1, 2), (2, 1), (0, 0), (0, 1), (1, 1), "floor"),
    ((1, 1, 50, 20), (9, 3), (2, 1), (4, 1), (4, 1), (1, 1), "floor"),
    ((1, 2, 23, 5, 7), (3, 2, 2), (2, 1, 1), (1, 0, 0), (1, 0, 0), (2, 1, 1), "ceil"),
    ((1, 3, 41, 17), (5, 3), (4, 2), (0, 1), (2, 1), (1, 1), "ceil"),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("case", UNIT_STEP_ROWS)
def test_unit_step_rows_with_edge_columns_match_the_oracle(dtype, case):
    """Small integers (exact sums), -0, NaN and infinities for floats, with both divisor
    rules and ONNX's count_include_pad."""
    _assert_rows_match_the_oracle(dtype, case)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("case", STRIDED_OUTER_AXES)
def test_strided_outer_axes_match_the_oracle(dtype, case):
    """The same values as above through windows strided along the first axes."""
    _assert_rows_match_the_oracle(dtype, case)


def _assert_rows_match_the_oracle(dtype, case):
    shape, kernel, strides, begin, end, dil, rounding = case
    dtype = _dtype(dtype)
    rng = np.random.default_rng(61)
    x = rng.integers(-8, 9, size=shape).astype(dtype)
    if dtype.kind == "f" or dtype.itemsize == 2:
        x[x == 0] = -0.0
        x.reshape(-1)[rng.random(x.size) < 0.02] = np.nan
        x.reshape(-1)[rng.random(x.size) < 0.02] = np.inf
    args = (kernel, strides, begin, end, dil)
    for exclude_pad in (True, False):
        got = ovpool.avg_pool(x, *args, exclude_pad=exclude_pad, rounding_type=rounding)
        assert_same_averages(got, ref_avg_pool(x, *args, exclude_pad=exclude_pad,
                                               rounding_type=rounding))


@pytest.mark.parametrize("case", UNIT_STEP_ROWS)
def test_unit_step_rows_with_edge_columns_keep_their_bits(monkeypatch, case):
    """Random values (float sums that round): the same bits with one or two threads, for each
    plane alone, and in both builds."""
    _assert_rows_keep_their_bits(monkeypatch, case)


@pytest.mark.parametrize("case", STRIDED_OUTER_AXES)
def test_strided_outer_axes_keep_their_bits(monkeypatch, case):
    """As above, through windows strided along the first axes."""
    _assert_rows_keep_their_bits(monkeypatch, case)


def _assert_rows_keep_their_bits(monkeypatch, case):
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)  # two threads even for these
    shape, kernel, strides, begin, end, dil, rounding = case

    def pool_all(x):
        return [ovpool.avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=exclude_pad,
                                rounding_type=rounding) for exclude_pad in (True, False)]

    import ml_dtypes
    _assert_random_planes_keep_their_bits(monkeypatch, pool_all, shape, 67,
                                          (np.float16, ml_dtypes.bfloat16, np.float32))


def test_unit_step_rows_keep_the_first_nan_of_each_edge_window(monkeypatch):
    """float32 rows of one pass, a third of the inputs NaNs of distinct payloads: an edge
    window (2 to 11 taps, cut by the padding; summed a column at a time, a NaN sum summed
    again with each addition's first operand kept) that holds NaNs averages to the first of
    them in tap order, in both builds. (Full windows, summed in vectors whose additions the
    compiler may commute, keep some NaN of theirs.) Every output otherwise the oracle's."""
    from test_kernels import _add_nan_payloads, _avx2_build, _use_kernels
    from ovpool import _kernels

    rng = np.random.default_rng(71)
    length, kernel, pad = 33, 12, 10
    x = rng.integers(-8, 9, size=(2, 5, length)).astype(np.float32)
    _add_nan_payloads(x, rng, 0.3)
    args = ((kernel,), (1,), (pad,), (0,), (1,))
    want = ref_avg_pool(x, *args, exclude_pad=True)
    bits = x.view(np.uint32)
    checked = 0
    for module in (_kernels, _avx2_build()):
        if module is None:  # platforms other than x86-64 build the baseline only
            continue
        _use_kernels(monkeypatch, module)
        got = ovpool.avg_pool(x, *args, exclude_pad=True)
        assert_same_averages(got, want)
        got_bits = got.view(np.uint32)
        for j in range(pad):  # the windows cut by pads_begin
            taps = range(max(j - pad, 0), j - pad + kernel)
            for n, c in np.ndindex(2, 5):
                nans = [i for i in taps if np.isnan(x[n, c, i])]
                if nans:
                    assert got_bits[n, c, j] == bits[n, c, nans[0]], (module, n, c, j)
                    checked += 1
    assert checked > 100
