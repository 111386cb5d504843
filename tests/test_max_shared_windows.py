"""Max pooling with indices over stride-1 windows of 3 to 8 taps along an axis before the last,
whose runs share their combines between neighbouring windows in the AVX2 build
(simd::coded_shared_windows: suffixes and prefixes of groups of windows instead of every tap
of every window). The winners must stay the first maximum of each window, with NaN below
-inf and -0 tying +0: indices are checked against tests/reference.py and values bit by bit
against the input element at the winner's index."""
import ml_dtypes
import numpy as np
import pytest

import ovpool
from reference import ref_max_pool

BITS = {np.dtype(np.float32): np.uint32, np.dtype(np.float16): np.uint16,
        np.dtype(ml_dtypes.bfloat16): np.uint16}


def _ties_nans_and_zeros(rng, dtype, shape):
    """Few distinct values (many ties), NaNs of several payloads and signs, -inf, -0 and +0,
    and whole runs of NaN and of -inf (windows all NaN, windows whose best is -inf)."""
    x = rng.integers(-2, 3, size=shape).astype(np.float32)
    x[x == 0] = -0.0
    x[rng.random(shape) < 0.1] = 0.0
    x[rng.random(shape) < 0.1] = -np.inf
    x = x.astype(dtype)
    bits = x.view(BITS[np.dtype(dtype)])
    exponent = {np.dtype(np.float32): 0x7F800000, np.dtype(np.float16): 0x7C00,
                np.dtype(ml_dtypes.bfloat16): 0x7F80}[np.dtype(dtype)]
    sign = {np.dtype(np.float32): 0x80000000}.get(np.dtype(dtype), 0x8000)
    nan = rng.random(shape) < 0.15
    payload = rng.integers(1, 8, size=shape).astype(bits.dtype)
    negative = (rng.random(shape) < 0.5).astype(bits.dtype) * bits.dtype.type(sign)
    bits[nan] = (exponent | payload | negative)[nan]
    planes = x.reshape(shape[0] * shape[1], *shape[2:])
    planes[0, :9] = x.dtype.type(np.nan)      # whole-NaN windows along the first axis
    planes[-1, 2:11] = -np.inf                 # windows of -inf only (and NaN beside it)
    return x


def _check(x, kernel, strides, pads, dilations, auto_pad="explicit"):
    want_values, want_index = ref_max_pool(x, kernel, strides, pads[0], pads[1], dilations,
                                           auto_pad=auto_pad)
    for index_type in ("i64", "i32"):
        got, got_index = ovpool.max_pool(x, kernel, strides, pads[0], pads[1], dilations,
                                         auto_pad=auto_pad, index_element_type=index_type)
        np.testing.assert_array_equal(got_index, want_index)
        # The value is the winner's element, bit for bit (NaN payloads, the sign of zero).
        bits = BITS[x.dtype]
        np.testing.assert_array_equal(got.view(bits), x.reshape(-1)[want_index].view(bits))
        np.testing.assert_array_equal(got.astype(np.float32), want_values.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("taps", [3, 4, 5, 6, 7, 8])
def test_shared_stride1_windows_match_the_oracle(dtype, taps):
    rng = np.random.default_rng(100 + taps)
    # Rows of the second axis after its pass: 5 entries (windows less than a vector apart,
    # which stay on the taps one by one), 16 and 29; windows of the first axis stepping one
    # row, dilation 1 and 2, padded on both sides.
    for shape, last in [((2, 2, 40, 5), (1, 1, 1)), ((1, 3, 37, 32), (2, 2, 1)),
                        ((1, 2, 45, 29), (3, 1, 2))]:
        x = _ties_nans_and_zeros(rng, dtype, shape)
        k_last, s_last, d_last = last
        for dil in (1, 2):
            pad = (taps - 1) * dil // 2
            _check(x, (taps, k_last), (1, s_last), ((pad, 0), ((taps - 1) * dil - pad, 0)),
                   (dil, d_last))


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_shared_windows_over_three_axes_match_the_oracle(dtype):
    """A stride-1 first axis over planes of two more axes (its rows are the 2-D slices), and a
    stride-1 middle axis, with "same" padding."""
    rng = np.random.default_rng(7)
    x = _ties_nans_and_zeros(rng, dtype, (1, 2, 14, 12, 9))
    _check(x, (7, 5, 2), (1, 1, 2), ((0, 0, 0), (0, 0, 0)), (1, 1, 1), auto_pad="same_lower")
    _check(x, (4, 6, 3), (1, 1, 3), ((0, 0, 0), (0, 0, 0)), (1, 2, 1), auto_pad="same_upper")
