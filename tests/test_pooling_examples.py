"""Worked examples with literal, hand-derived expected arrays.

* MaxPool examples 1-8 of OpenVINO's "Shape calculation rules for pooling operators" page (the
  same examples, minus the ceil_torch one, appear on the MaxPool-8 / MaxPool-14 pages). Every
  expected array below was re-derived by hand from the window definition in
  docs/semantics.md; the derivation is in the comments.
* The output shapes given in the XML examples of the AvgPool-1/-14/-16 and MaxPool-8/-14 pages.
* Hand-worked AvgPool examples (divisor rules, ceil-mode hanging windows, same_* pads, dilation,
  integer rounding, empty windows).
* Hand-worked AdaptiveAvgPool-8 / AdaptiveMaxPool-8 examples from the window formulas of the
  AdaptiveAvgPool-8 spec: window i of O over L is [floor(i*L/O), ceil((i+1)*L/O)).

Where a documentation example disagrees with semantics.md, semantics.md wins and the comment
says so (MaxPool example 1, and the same_upper XML shape examples).
"""

import ml_dtypes
import numpy as np
import pytest

import ovpool

from reference import lowest_value

BF16 = [np.dtype(ml_dtypes.bfloat16)]

# dtypes that can hold every value of the MaxPool examples (-7 .. 18) exactly
SIGNED_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int8, np.int32,
                                       np.int64)] + BF16


def _ids(dtype):
    return np.dtype(dtype).name


X_A = [[[[-1, 2, 3],
         [4, 5, -6],
         [-7, 8, 9]]]]          # (1, 1, 3, 3), the input of examples 1, 3, 4, 6

X_B = [[[[1, 2, 3],
         [4, 5, 6],
         [7, 8, 9]]]]           # (1, 1, 3, 3), the input of examples 5, 7


def _check_max(dtype, x, expected_values, expected_indices, **kwargs):
    x = np.array(x).astype(dtype)
    values, indices = ovpool.max_pool(x, **kwargs)
    want = np.array(expected_values, dtype=np.float64).astype(dtype)
    assert values.dtype == np.dtype(dtype)
    assert values.shape == want.shape
    np.testing.assert_array_equal(values.astype(np.float64), want.astype(np.float64))
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, np.array(expected_indices, dtype=np.int64))
    # return_indices=False gives the same values
    only = ovpool.max_pool(x, return_indices=False, **kwargs)
    np.testing.assert_array_equal(only.astype(np.float64), want.astype(np.float64))


# ------------------------------------------------------------------------------------------------
# MaxPool examples 1-8 (pooling shape rules page)
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_1_explicit_pads(dtype):
    # k=2, s=1, pads 1/1, floor: O = floor((3 + 2 - 2) / 1) + 1 = 4 per axis.
    # Window j covers rows/cols {j-1, j}. Row windows: {0}, {0,1}, {1,2}, {2}.
    # Output (1, 3) covers rows {0,1} x cols {2}: x[0,2]=3, x[1,2]=-6 -> 3 at flat index 2.
    # NOTE: the OpenVINO page prints -6 / index 5 for (1, 3); that is a typo in the doc (the
    # window holds 3 as well, and OpenVINO's CPU plugin itself returns 3 / 2). semantics.md's
    # window rule decides: 3 / 2.
    _check_max(dtype, X_A,
               [[[[-1, 2, 3, 3],
                  [4, 5, 5, 3],
                  [4, 8, 9, 9],
                  [-7, 8, 9, 9]]]],
               [[[[0, 1, 2, 2],
                  [3, 4, 4, 2],
                  [3, 7, 8, 8],
                  [6, 7, 8, 8]]]],
               kernel=[2, 2], strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1],
               rounding_type="floor", auto_pad="explicit")


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_2_valid_1d(dtype):
    # k=3, s=1, valid: O = 7 - 3 + 1 = 5. Windows [-1,2,3] [2,3,5] [3,5,-7] [5,-7,9] [-7,9,1].
    _check_max(dtype, [[[-1, 2, 3, 5, -7, 9, 1]]],
               [[[3, 5, 5, 9, 9]]],
               [[[2, 3, 3, 5, 5]]],
               kernel=[3], strides=[1], rounding_type="floor", auto_pad="valid")


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_3_same_lower(dtype):
    # k=2, s=1, same_lower: O = 3, total pad 1, at the start. Window j covers {j-1, j}.
    _check_max(dtype, X_A,
               [[[[-1, 2, 3],
                  [4, 5, 5],
                  [4, 8, 9]]]],
               [[[[0, 1, 2],
                  [3, 4, 4],
                  [3, 7, 8]]]],
               kernel=[2, 2], strides=[1, 1], rounding_type="floor", auto_pad="same_lower")


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_4_same_upper_two_channels(dtype):
    # k=2, s=1, same_upper: O = 3, total pad 1, at the end. Window j covers {j, j+1}.
    # Channel 1 indices are flat over the whole tensor (axis=0): plane offset 9.
    # Channel 1 = [[2,-1,5],[6,-7,1],[8,2,-3]]: (0,0) {2,-1,6,-7} -> 6 @ 9+3=12;
    # (0,1) {-1,5,-7,1} -> 5 @ 11; (0,2) {5,1} -> 5 @ 11; (1,0) {6,-7,8,2} -> 8 @ 15;
    # (1,1) {-7,1,2,-3} -> 2 @ 16; (1,2) {1,-3} -> 1 @ 14; (2,0) {8,2} -> 8 @ 15;
    # (2,1) {2,-3} -> 2 @ 16; (2,2) {-3} -> -3 @ 17.
    x = [[[[-1, 2, 3], [4, 5, -6], [-7, 8, 9]],
          [[2, -1, 5], [6, -7, 1], [8, 2, -3]]]]
    _check_max(dtype, x,
               [[[[5, 5, 3],
                  [8, 9, 9],
                  [8, 9, 9]],
                 [[6, 5, 5],
                  [8, 2, 1],
                  [8, 2, -3]]]],
               [[[[4, 4, 2],
                  [7, 8, 8],
                  [7, 8, 8]],
                 [[12, 11, 11],
                  [15, 16, 14],
                  [15, 16, 17]]]],
               kernel=[2, 2], strides=[1, 1], rounding_type="floor", auto_pad="same_upper")


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_5_ceil_torch(dtype):
    # k=2, s=2, pads 1/1: ceil gives ceil((3+2-2)/2)+1 = 3 windows starting at padded
    # positions 0, 2, 4; the third starts at 4 = L + pb (inside the right pad), so ceil_torch
    # drops it: O = 2. Row windows {0} and {1,2}.
    _check_max(dtype, X_B,
               [[[[1, 3],
                  [7, 9]]]],
               [[[[0, 2],
                  [6, 8]]]],
               kernel=[2, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
               rounding_type="ceil_torch")


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_5b_ceil_keeps_window_in_pad(dtype):
    # Not in the docs: example 5 with OpenVINO's plain ceil keeps the third window (padded
    # start 4, input position 3 = outside), which holds no input element: an empty window
    # gives the dtype's lowest finite value and position 0 of the plane (index 0 here).
    low = float(lowest_value(dtype))
    _check_max(dtype, X_B,
               [[[[1, 3, low],
                  [7, 9, low],
                  [low, low, low]]]],
               [[[[0, 2, 0],
                  [6, 8, 0],
                  [0, 0, 0]]]],
               kernel=[2, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
               rounding_type="ceil")


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_6_valid_ceil(dtype):
    # k=2, s=2, valid + ceil: O = ceil((3-2)/2)+1 = 2 (semantics.md: both engines agree, though
    # the shape-rules "valid" formula gives 1). Row windows {0,1} and {2}.
    _check_max(dtype, X_A,
               [[[[5, 3],
                  [8, 9]]]],
               [[[[4, 2],
                  [7, 8]]]],
               kernel=[2, 2], strides=[2, 2], rounding_type="ceil", auto_pad="valid")


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_7_dilated(dtype):
    # k=2, d=2 (effective 3), s=1, pads 1/1: O = 3 + 2 - 3 + 1 = 3.
    # Window j covers {j-1, j+1}: {1}, {0, 2}, {1}.
    _check_max(dtype, X_B,
               [[[[5, 6, 5],
                  [8, 9, 8],
                  [5, 6, 5]]]],
               [[[[4, 5, 4],
                  [7, 8, 7],
                  [4, 5, 4]]]],
               kernel=[2, 2], strides=[1, 1], dilations=[2, 2], pads_begin=[1, 1],
               pads_end=[1, 1], rounding_type="floor", auto_pad="explicit")


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=_ids)
def test_maxpool_example_8_axis(dtype):
    # k=2, s=1, no pads, 2 channels 1..9 and 10..18. With axis=2 indices count within each
    # (n, c) plane, so both channels report 4 5 7 8; with axis=0 the second channel is offset
    # by 9; with axis=1 (modulo C*H*W = 18) it is the same as axis=0 here (N = 1).
    x = [[[[1, 2, 3], [4, 5, 6], [7, 8, 9]],
          [[10, 11, 12], [13, 14, 15], [16, 17, 18]]]]
    values = [[[[5, 6], [8, 9]], [[14, 15], [17, 18]]]]
    kw = dict(kernel=[2, 2], strides=[1, 1], dilations=[1, 1], rounding_type="floor",
              auto_pad="explicit", pads_begin=[0, 0], pads_end=[0, 0])
    _check_max(dtype, x, values, [[[[4, 5], [7, 8]], [[4, 5], [7, 8]]]], axis=2, **kw)
    _check_max(dtype, x, values, [[[[4, 5], [7, 8]], [[4, 5], [7, 8]]]], axis=-2, **kw)
    _check_max(dtype, x, values, [[[[4, 5], [7, 8]], [[13, 14], [16, 17]]]], axis=0, **kw)
    _check_max(dtype, x, values, [[[[4, 5], [7, 8]], [[13, 14], [16, 17]]]], axis=1, **kw)
    # axis=3 (-1): modulo the last dim (3): 4%3, 5%3, 7%3, 8%3 = 1 2 1 2
    _check_max(dtype, x, values, [[[[1, 2], [1, 2]], [[1, 2], [1, 2]]]], axis=-1, **kw)


def test_maxpool_example_8_two_batches_axis():
    # N=2: axis=1 indices are taken modulo C*H*W, so batch 1 repeats batch 0's indices.
    x = np.arange(2 * 2 * 3 * 3, dtype=np.float32).reshape(2, 2, 3, 3)
    _, i1 = ovpool.max_pool(x, 2, 1, axis=1)
    _, i0 = ovpool.max_pool(x, 2, 1, axis=0)
    plane = np.array([[4, 5], [7, 8]])
    np.testing.assert_array_equal(i0[1, 1], plane + 27)
    np.testing.assert_array_equal(i1[1, 1], plane + 9)
    np.testing.assert_array_equal(i1[1, 0], plane)
    _, i32 = ovpool.max_pool(x, 2, 1, axis=1, index_element_type="i32")
    assert i32.dtype == np.int32
    np.testing.assert_array_equal(i32, i1)


# ------------------------------------------------------------------------------------------------
# output shapes of the XML examples (AvgPool-1/-14/-16, MaxPool-8/-14 pages)
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs,expected_hw", [
    # NOTE: the pages list same_upper with strides 2 as 32x32 -> 32x32; semantics.md (and
    # OpenVINO itself) give ceil(32 / 2) = 16.
    (dict(kernel=[2, 2], strides=[2, 2], pads_begin=[0, 0], pads_end=[1, 1],
          auto_pad="same_upper"), (16, 16)),
    (dict(kernel=[5, 5], strides=[2, 2], pads_begin=[0, 0], pads_end=[1, 1],
          auto_pad="same_upper"), (16, 16)),
    (dict(kernel=[2, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
          auto_pad="same_upper"), (16, 16)),
    # explicit: floor((32 + 2 - 5) / 3) + 1 = 10
    (dict(kernel=[5, 5], strides=[3, 3], pads_begin=[1, 1], pads_end=[1, 1],
          auto_pad="explicit"), (10, 10)),
    # explicit: floor((32 + 2 - 5) / 2) + 1 = 15
    (dict(kernel=[5, 5], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
          auto_pad="explicit"), (15, 15)),
    # explicit: floor((32 + 2 - 2) / 2) + 1 = 17
    (dict(kernel=[2, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
          auto_pad="explicit"), (17, 17)),
    # valid ignores the pads: floor((32 - 5) / 2) + 1 = 14
    (dict(kernel=[5, 5], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
          auto_pad="valid"), (14, 14)),
    # valid: floor((32 - 2) / 2) + 1 = 16
    (dict(kernel=[2, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
          auto_pad="valid"), (16, 16)),
    # dilated (AvgPool-16): effective kernel 9, floor((32 + 2 - 9) / 2) + 1 = 13
    (dict(kernel=[5, 5], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
          dilations=[2, 2], auto_pad="explicit"), (13, 13)),
])
def test_spec_xml_output_shapes(attrs, expected_hw):
    shape = (1, 3, 32, 32)
    assert ovpool.pool_output_shape(shape, **attrs) == (1, 3) + expected_hw
    x = np.zeros(shape, dtype=np.float32)
    assert ovpool.avg_pool(x, **attrs, exclude_pad=False).shape == (1, 3) + expected_hw
    assert ovpool.max_pool(x, **attrs)[0].shape == (1, 3) + expected_hw


# ------------------------------------------------------------------------------------------------
# AvgPool, hand-worked
# ------------------------------------------------------------------------------------------------

AVG_FLOAT_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16)] + BF16


def _check_avg(dtype, x, expected, **kwargs):
    x = np.array(x).astype(dtype)
    got = ovpool.avg_pool(x, **kwargs)
    assert got.dtype == np.dtype(dtype)
    want = np.array(expected, dtype=np.float64)
    assert got.shape == want.shape
    # every expected value here is a multiple of 1/4 (exact in every float dtype) or a third
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-2 if x.itemsize == 2
                               else 1e-6, atol=0)


@pytest.mark.parametrize("dtype", AVG_FLOAT_DTYPES, ids=_ids)
def test_avgpool_semantics_example_full_kernel_divisor(dtype):
    # semantics.md: x = 1..6, k=3, s=2, pads 1/1, ceil: O = ceil((6+2-3)/2)+1 = 4.
    # Windows {-1,0,1} {1,2,3} {3,4,5} {5,6,7} -> real sums 3, 9, 15, 6.
    x = [[[1, 2, 3, 4, 5, 6]]]
    kw = dict(kernel=3, strides=2, pads_begin=1, pads_end=1)
    # exclude_pad=False with non-zero pads: always the full kernel (3): last window 6/3 = 2
    _check_avg(dtype, x, [[[1, 3, 5, 2]]], exclude_pad=False, rounding_type="ceil", **kw)
    # exclude_pad=True: real elements 2, 3, 3, 1
    _check_avg(dtype, x, [[[1.5, 3, 5, 6]]], exclude_pad=True, rounding_type="ceil", **kw)
    # ceil_torch keeps the last window: it starts at padded 6 < L + pb = 7
    _check_avg(dtype, x, [[[1, 3, 5, 2]]], exclude_pad=False, rounding_type="ceil_torch", **kw)
    # floor: floor(5/2)+1 = 3 windows
    _check_avg(dtype, x, [[[1, 3, 5]]], exclude_pad=False, rounding_type="floor", **kw)
    _check_avg(dtype, x, [[[1.5, 3, 5]]], exclude_pad=True, rounding_type="floor", **kw)


@pytest.mark.parametrize("dtype", AVG_FLOAT_DTYPES, ids=_ids)
def test_avgpool_2d_pads(dtype):
    # X_B with k=2, s=1, pads 1/1: 4x4 windows as in MaxPool example 1.
    # exclude_pad=True: mean of the real elements
    _check_avg(dtype, X_B,
               [[[[1, 1.5, 2.5, 3],
                  [2.5, 3, 4, 4.5],
                  [5.5, 6, 7, 7.5],
                  [7, 7.5, 8.5, 9]]]],
               kernel=2, strides=1, pads_begin=1, pads_end=1, exclude_pad=True)
    # exclude_pad=False: sums / 4. Sums: corners 1, 3, 7, 9; edges 3, 5, 5, 9, 11, 15, 15, 17;
    # centre 12, 16, 24, 28.
    _check_avg(dtype, X_B,
               [[[[0.25, 0.75, 1.25, 0.75],
                  [1.25, 3, 4, 2.25],
                  [2.75, 6, 7, 3.75],
                  [1.75, 3.75, 4.25, 2.25]]]],
               kernel=2, strides=1, pads_begin=1, pads_end=1, exclude_pad=False)


@pytest.mark.parametrize("dtype", AVG_FLOAT_DTYPES, ids=_ids)
def test_avgpool_hanging_window_without_pads(dtype):
    # x = 1..5, k=2, s=2, ceil, no pads: O = ceil(3/2)+1 = 3; windows {0,1} {2,3} {4,(5)}.
    # Every pad is zero, so even exclude_pad=False divides by the real count: last = 5.
    x = [[[1, 2, 3, 4, 5]]]
    for exclude_pad in (True, False):
        _check_avg(dtype, x, [[[1.5, 3.5, 5]]], kernel=2, strides=2, rounding_type="ceil",
                   exclude_pad=exclude_pad)
    # with pads_end=1 (a non-zero pad) exclude_pad=False divides by the kernel: 5/2 = 2.5
    _check_avg(dtype, x, [[[1.5, 3.5, 2.5]]], kernel=2, strides=2, pads_end=1,
               rounding_type="ceil", exclude_pad=False)
    _check_avg(dtype, x, [[[1.5, 3.5, 5]]], kernel=2, strides=2, pads_end=1,
               rounding_type="ceil", exclude_pad=True)


@pytest.mark.parametrize("dtype", AVG_FLOAT_DTYPES, ids=_ids)
def test_avgpool_same_pads(dtype):
    # x = 1..5, k=2, s=2: O = ceil(5/2) = 3, total pad (3-1)*2 + 2 - 5 = 1.
    x = [[[1, 2, 3, 4, 5]]]
    # same_upper: pad at the end, windows {0,1} {2,3} {4,5}
    _check_avg(dtype, x, [[[1.5, 3.5, 5]]], kernel=2, strides=2, auto_pad="same_upper",
               exclude_pad=True)
    _check_avg(dtype, x, [[[1.5, 3.5, 2.5]]], kernel=2, strides=2, auto_pad="same_upper",
               exclude_pad=False)
    # same_lower: pad at the start, windows {-1,0} {1,2} {3,4}
    _check_avg(dtype, x, [[[1, 2.5, 4.5]]], kernel=2, strides=2, auto_pad="same_lower",
               exclude_pad=True)
    _check_avg(dtype, x, [[[0.5, 2.5, 4.5]]], kernel=2, strides=2, auto_pad="same_lower",
               exclude_pad=False)
    # the given pads are ignored by same_* and valid
    _check_avg(dtype, x, [[[0.5, 2.5, 4.5]]], kernel=2, strides=2, auto_pad="same_lower",
               pads_begin=0, pads_end=3, exclude_pad=False)
    _check_avg(dtype, x, [[[1.5, 3.5]]], kernel=2, strides=2, auto_pad="valid",
               pads_begin=1, pads_end=1, exclude_pad=False)


@pytest.mark.parametrize("dtype", AVG_FLOAT_DTYPES, ids=_ids)
def test_avgpool_same_pads_use_dilated_kernel(dtype):
    # x = 1..4, k=2, d=2 (effective 3), s=1, same_upper: O = ceil(4/1) = 4, total pad
    # (4-1)*1 + 3 - 4 = 2 -> pads 1/1 (the undilated kernel would give 1). Window j covers
    # {j-1, j+1}:
    # {1} -> 2, {0,2} -> 2, {1,3} -> 3, {2} -> 3 (exclude_pad=True).
    x = [[[1, 2, 3, 4]]]
    _check_avg(dtype, x, [[[2, 2, 3, 3]]], kernel=2, strides=1, dilations=2,
               auto_pad="same_upper", exclude_pad=True)
    # exclude_pad=False: divisor 2 everywhere: 1, 2, 3, 1.5
    _check_avg(dtype, x, [[[1, 2, 3, 1.5]]], kernel=2, strides=1, dilations=2,
               auto_pad="same_upper", exclude_pad=False)


@pytest.mark.parametrize("dtype", AVG_FLOAT_DTYPES, ids=_ids)
def test_avgpool_dilated(dtype):
    # x = 1..7, k=2, d=3 (effective 4), s=2: O = floor(3/2)+1 = 2; windows {0,3} {2,5}.
    _check_avg(dtype, [[[1, 2, 3, 4, 5, 6, 7]]], [[[2.5, 4.5]]], kernel=2, strides=2,
               dilations=3)


@pytest.mark.parametrize("dtype", AVG_FLOAT_DTYPES + [np.dtype(np.int32)], ids=_ids)
def test_avgpool_empty_window_is_zero(dtype):
    # x = [1, 2], k=1, s=3, ceil: O = ceil(1/3)+1 = 2; the second window reads position 3,
    # outside the input: an empty window averages to 0 (OpenVINO's CPU plugin: 0/0 = NaN).
    x = np.array([[[1, 2]]]).astype(dtype)
    got = ovpool.avg_pool(x, 1, 3, rounding_type="ceil")
    np.testing.assert_array_equal(got.astype(np.float64), [[[1, 0]]])
    values, indices = ovpool.max_pool(x, 1, 3, rounding_type="ceil")
    np.testing.assert_array_equal(values.astype(np.float64),
                                  [[[1, float(lowest_value(dtype))]]])
    np.testing.assert_array_equal(indices, [[[0, 0]]])


def test_avgpool_empty_window_index_is_plane_start():
    # Two channels, L=2, k=1, s=3, ceil: channel 1's empty window reports position 0 of its
    # own plane: flat index 2 with axis=0, 0 with axis=2.
    x = np.array([[[1, 2], [5, 6]]], dtype=np.float32)
    _, i0 = ovpool.max_pool(x, 1, 3, rounding_type="ceil", axis=0)
    _, i2 = ovpool.max_pool(x, 1, 3, rounding_type="ceil", axis=2)
    np.testing.assert_array_equal(i0, [[[0, 0], [2, 2]]])
    np.testing.assert_array_equal(i2, [[[0, 0], [0, 0]]])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64], ids=_ids)
def test_avgpool_integer_rounding(dtype):
    # pairs: 1.5 -> 2, 2.5 -> 2, -1.5 -> -2, -2.5 -> -2, 5.5 -> 6, 0.5 -> 0 (half to even)
    x = np.array([[[1, 2, 2, 3, -1, -2, -2, -3, 5, 6, 0, 1]]], dtype=dtype)
    np.testing.assert_array_equal(ovpool.avg_pool(x, 2, 2), [[[2, 2, -2, -2, 6, 0]]])
    # thirds: (1+1+2)/3 = 1.33 -> 1, (1+2+2)/3 = 1.67 -> 2, (-1-1-2)/3 -> -1, (-1-2-2)/3 -> -2
    y = np.array([[[1, 1, 2, 1, 2, 2, -1, -1, -2, -1, -2, -2]]], dtype=dtype)
    np.testing.assert_array_equal(ovpool.avg_pool(y, 3, 3), [[[1, 2, -1, -2]]])
    # exclude_pad=False with pads: [pad, 3] / 2 = 1.5 -> 2; [4, 5] -> 4.5 -> 4; [6, pad] -> 3
    z = np.array([[[3, 4, 5, 6]]], dtype=dtype)
    np.testing.assert_array_equal(
        ovpool.avg_pool(z, 2, 2, pads_begin=1, pads_end=1, exclude_pad=False), [[[2, 4, 3]]])


def test_avgpool_uint8_rounding():
    x = np.array([[[1, 2, 2, 3, 254, 255, 0, 1]]], dtype=np.uint8)
    # 1.5 -> 2, 2.5 -> 2, 254.5 -> 254, 0.5 -> 0
    np.testing.assert_array_equal(ovpool.avg_pool(x, 2, 2), [[[2, 2, 254, 0]]])


# ------------------------------------------------------------------------------------------------
# AdaptiveAvgPool-8 / AdaptiveMaxPool-8, hand-worked from the window formulas
# ------------------------------------------------------------------------------------------------

def test_adaptive_1d_l5_o3():
    # L=5, O=3: i=0 [0, ceil(5/3)=2); i=1 [floor(5/3)=1, ceil(10/3)=4); i=2 [3, 5).
    x = np.array([[[2, 7, 7, 1, 1]]], dtype=np.float32)
    np.testing.assert_allclose(ovpool.adaptive_avg_pool(x, [3]),
                               [[[4.5, 5.0, 1.0]]], rtol=1e-6)
    v, i = ovpool.adaptive_max_pool(x, [3])
    # window 1 = {7, 7, 1}: first 7 wins (position 1); window 2 = {1, 1}: position 3
    np.testing.assert_array_equal(v, [[[7, 7, 1]]])
    np.testing.assert_array_equal(i, [[[1, 1, 3]]])
    assert i.dtype == np.int64


def test_adaptive_2d_two_channels():
    # x[c, r, col] = 100*c + 4*r + col on 4x4, O = (3, 2).
    # rows (L=4, O=3): [0,2) [1,3) [2,4); cols (L=4, O=2): [0,2) [2,4).
    # mean = 100c + 4*rowmean + colmean with rowmeans 0.5 1.5 2.5, colmeans 0.5 2.5.
    # max at the last row / col of each window; indices within each (n, c) plane.
    x = (np.arange(16).reshape(4, 4) + np.array([0, 100]).reshape(2, 1, 1)).reshape(1, 2, 4, 4)
    x = x.astype(np.float32)
    avg = [[[2.5, 4.5], [6.5, 8.5], [10.5, 12.5]]]
    want_avg = np.array([avg[0], (np.array(avg[0]) + 100).tolist()]).reshape(1, 2, 3, 2)
    np.testing.assert_allclose(ovpool.adaptive_avg_pool(x, (3, 2)), want_avg, rtol=1e-6)
    v, i = ovpool.adaptive_max_pool(x, (3, 2))
    plane = np.array([[5, 7], [9, 11], [13, 15]])
    np.testing.assert_array_equal(v, np.stack([plane, plane + 100])[None].astype(np.float32))
    np.testing.assert_array_equal(i, np.stack([plane, plane])[None])


def test_adaptive_output_larger_than_input():
    # L=2, O=3: [0, ceil(2/3)=1) [floor(2/3)=0, ceil(4/3)=2) [floor(4/3)=1, 2)
    x = np.array([[[4, 10]]], dtype=np.float64)
    np.testing.assert_allclose(ovpool.adaptive_avg_pool(x, 3), [[[4, 7, 10]]], rtol=1e-12)
    v, i = ovpool.adaptive_max_pool(x, 3, index_element_type="i32")
    np.testing.assert_array_equal(v, [[[4, 10, 10]]])
    np.testing.assert_array_equal(i, [[[0, 1, 1]]])
    assert i.dtype == np.int32


def test_adaptive_3d_global():
    # (1, 1, 2, 2, 2) -> (1, 1, 1): mean of 0..7 = 3.5, max 7 at plane position 7.
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2)
    np.testing.assert_allclose(ovpool.adaptive_avg_pool(x, (1, 1, 1)),
                               np.full((1, 1, 1, 1, 1), 3.5), rtol=1e-6)
    v, i = ovpool.adaptive_max_pool(x, 1)
    assert v.shape == (1, 1, 1, 1, 1) and v.item() == 7 and i.item() == 7


def test_adaptive_seed_example_shape():
    # The spec's IR example: (1, 3, 32, 32) with output_size (16, 16) -> (1, 3, 16, 16);
    # each window is then exactly 2x2: [2i, 2i+2).
    x = np.arange(1 * 3 * 32 * 32, dtype=np.float32).reshape(1, 3, 32, 32)
    got = ovpool.adaptive_avg_pool(x, (16, 16))
    assert got.shape == (1, 3, 16, 16)
    np.testing.assert_allclose(got, ovpool.avg_pool(x, 2, 2), rtol=1e-6)


def test_adaptive_integer_rounding():
    # L=5, O=3 windows [0,2) [1,4) [3,5): x = [1,2,2,3,4]: 1.5 -> 2, 7/3 -> 2, 3.5 -> 4
    x = np.array([[[1, 2, 2, 3, 4]]], dtype=np.int32)
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, 3), [[[2, 2, 4]]])
    # one window over [-16, 7, 19, 12, 7]: 29/5 = 5.8 -> 6 (OpenVINO's CPU plugin gives 5)
    y = np.array([[[-16, 7, 19, 12, 7]]], dtype=np.int32)
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(y, 1), [[[6]]])
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(-y, 1), [[[-6]]])
    # 2.5 -> 2 and -2.5 -> -2 (half to even)
    z = np.array([[[2, 3, -2, -3]]], dtype=np.int8)
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(z, 2), [[[2, -2]]])


def test_adaptive_max_nan():
    # [nan, 1 | nan, nan]: NaN is ignored in the first window; the all-NaN window gives NaN
    # and the position of its first NaN.
    x = np.array([[[np.nan, 1.0, np.nan, np.nan]]], dtype=np.float32)
    v, i = ovpool.adaptive_max_pool(x, 2)
    assert v[0, 0, 0] == 1.0 and np.isnan(v[0, 0, 1])
    np.testing.assert_array_equal(i, [[[1, 2]]])
