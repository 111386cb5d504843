"""16-bit float max pooling with indices (int16 keys, max_coded.hpp) in the AVX2 build:
strided windows of an axis before the last whose taps span two or more strides share each
stride's combines between the windows that hold it (simd::coded_stride_groups16), a first
such pass over rows wider than their outputs keeps only the outputs (coded_narrow_windows16),
and the last axis's edge windows are picked two rows to a vector (simd::coded_edge_picks16).
The winners must stay the first maximum of each window, with NaN below -inf and -0 tying
+0: indices against tests/reference.py, values bit by bit against the input element at the
winner's index (as in test_max_shared_windows)."""
import ml_dtypes
import numpy as np
import pytest

from test_max_shared_windows import _check, _ties_nans_and_zeros

DTYPES = [np.float16, ml_dtypes.bfloat16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel, stride, dilation", [
    (6, 3, 1),   # groups of three, two a window
    (7, 3, 1),   # ... and one tap after them
    (6, 2, 1),   # groups of two, three a window
    (7, 2, 1),
    (8, 2, 1),   # four groups of two
    (8, 4, 1),   # two groups of four
    (7, 4, 2),   # dilated: taps two rows apart, windows four: groups of two taps
    (5, 2, 1),   # two groups of two: tap by tap
])
def test_stride_groups_match_the_oracle(dtype, kernel, stride, dilation):
    rng = np.random.default_rng(1000 * kernel + 10 * stride + dilation)
    span = (kernel - 1) * dilation + 1
    # Rows of the second axis after its pass: 10 keys (two half vectors), 19 and 33 (whole
    # vectors, the last overlapping), plus a padded first axis (edge windows around). Planes
    # of more than 1024 elements (smaller ones may go side by side in lanes instead).
    for width in (10, 19, 33):
        length = max(span + 6 * stride, 1024 // width + 1)
        x = _ties_nans_and_zeros(rng, dtype, (2, 3, length, width))
        _check(x, (kernel, 1), (stride, 1), ((0, 0), (0, 0)), (dilation, 1))
        _check(x, (kernel, 2), (stride, 1), ((1, 0), (2, 1)), (dilation, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_narrowed_rows_match_the_oracle(dtype):
    """Last-axis passes whose rows are wider than their outputs (stride 1 in place, and the
    phases of strided windows), then a strided first axis read window by window."""
    rng = np.random.default_rng(97)
    x = _ties_nans_and_zeros(rng, dtype, (2, 5, 33, 33))
    # bfloat16 2x120x33x33 k6,3 s3,1 d1,3 p1,3/2,2 (sweep #97): rows of 33, 32 outputs.
    _check(x, (6, 3), (3, 1), ((1, 3), (2, 2)), (1, 3))
    # Stride 1, no padding: rows of 33, 31 outputs; groups of two.
    _check(x, (6, 3), (2, 1), ((0, 0), (0, 0)), (1, 1))
    # Rows of 41 split into phases of 21 for windows of three taps two apart: 20 outputs.
    y = _ties_nans_and_zeros(rng, dtype, (1, 3, 30, 41))
    _check(y, (7, 3), (3, 2), ((0, 0), (0, 0)), (1, 1))
    _check(y, (5, 3), (2, 2), ((2, 1), (1, 0)), (1, 1))
    # Three axes: the middle axis narrows, the first takes its rows after.
    z = _ties_nans_and_zeros(rng, dtype, (1, 2, 7, 20, 27))
    _check(z, (3, 6, 2), (2, 3, 1), ((0, 0, 0), (0, 0, 0)), (1, 1, 2))
    _check(z, (2, 8, 3), (1, 4, 1), ((1, 2, 1), (0, 1, 1)), (1, 1, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_edge_picks_of_row_pairs_match_the_oracle(dtype):
    """Last-axis edge windows picked two rows to a vector: odd and even row counts (the last
    row then on its own), both sides padded, dilated taps."""
    rng = np.random.default_rng(13)
    # (Planes of more than 1024 elements, as above; 35, 36 and 74 rows in all.)
    for shape in ((1, 1, 35, 30), (1, 1, 36, 30), (1, 2, 37, 30)):
        x = _ties_nans_and_zeros(rng, dtype, shape)
        _check(x, (1, 3), (1, 1), ((0, 3), (0, 2)), (1, 3))
        _check(x, (1, 4), (1, 1), ((0, 2), (0, 1)), (1, 1))
