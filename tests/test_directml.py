"""ovpool.directml: DML_AVERAGE_POOLING and DML_MAX_POOLING(1, 2), worked by hand from the
operator descriptions (output size ``(InputSize + StartPadding + EndPadding - WindowSize) /
Strides + 1`` in unsigned integer division; IncludePadding TRUE / FALSE)."""

import numpy as np
import pytest

import ovpool
from ovpool import directml
from ovpool.errors import BadArgumentError, BadAttributeError, BadDtypeError, BadShapeError


def _grid(*shape, dtype=np.float32):
    return np.arange(1, np.prod(shape) + 1, dtype=dtype).reshape(shape)


@pytest.mark.parametrize("size, window, stride, start, end, want", [
    (4, 3, 1, 1, 1, 4),   # (4 + 2 - 3) / 1 + 1
    (5, 2, 2, 0, 0, 2),   # (5 - 2) / 2 + 1 = 2: the last element is never read
    (5, 2, 2, 1, 0, 3),   # (6 - 2) / 2 + 1
    (4, 2, 2, 0, 1, 2),   # (5 - 2) / 2 + 1 = 2: the end padding is never reached
    (7, 3, 3, 2, 2, 3),   # (11 - 3) / 3 + 1
    (1, 1, 5, 0, 0, 1),
    (2, 2, 1, 2, 0, 3),   # padding as large as the window
])
def test_output_size_rule(size, window, stride, start, end, want):
    shape = directml.output_sizes((2, 3, size, 6), (stride, 1), (window, 1), (start, 0),
                                  (end, 0))
    assert shape == (2, 3, want, 6)
    x = np.zeros((2, 3, size, 6), np.float32)
    for include in (False, True):
        assert directml.average_pooling(x, (stride, 1), (window, 1), (start, 0), (end, 0),
                                        include).shape == shape
    assert directml.max_pooling(x, (stride, 1), (window, 1), (start, 0), (end, 0)).shape == shape


def test_include_padding_true_and_false_3x3():
    x = _grid(1, 1, 4, 4)  # 1..16, row-major
    args = ((1, 1), (3, 3), (1, 1), (1, 1))
    excluded = directml.average_pooling(x, *args, include_padding=False)
    included = directml.average_pooling(x, *args, include_padding=True)
    # Corner (0, 0): 1 + 2 + 5 + 6 = 14 over 4 real elements, or over the 9-element window.
    assert excluded[0, 0, 0, 0] == pytest.approx(14 / 4)
    assert included[0, 0, 0, 0] == pytest.approx(14 / 9)
    # Edge (0, 1): 1+2+3+5+6+7 = 24 over 6, or 9.
    assert excluded[0, 0, 0, 1] == pytest.approx(24 / 6)
    assert included[0, 0, 0, 1] == pytest.approx(24 / 9)
    # Interior (1, 1): no padding, both 6 * 9 / 9.
    assert excluded[0, 0, 1, 1] == included[0, 0, 1, 1] == pytest.approx(6.0)
    # Every window with IncludePadding=TRUE divides by 9.
    counts = 9 * directml.average_pooling(np.ones_like(x), *args, include_padding=True)
    np.testing.assert_array_equal(counts[0, 0], [[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6],
                                                 [4, 6, 6, 4]])
    np.testing.assert_allclose(included, excluded * counts / 9, rtol=1e-6)


def test_asymmetric_padding_and_strides():
    x = _grid(1, 2, 3, 5)
    # H: (3 + 0 + 1 - 2) / 2 + 1 = 2 windows, rows {0, 1} and {2, pad}; W: (5 + 1 + 0 - 3) / 2
    # + 1 = 2 windows, cols {pad, 0, 1} and {1, 2, 3}.
    excluded = directml.average_pooling(x, (2, 2), (2, 3), (0, 1), (1, 0), False)
    included = directml.average_pooling(x, (2, 2), (2, 3), (0, 1), (1, 0), True)
    plane = x[0, 0]
    want_sum = np.array([[plane[0:2, 0:2].sum(), plane[0:2, 1:4].sum()],
                         [plane[2:3, 0:2].sum(), plane[2:3, 1:4].sum()]])
    want_count = np.array([[4, 6], [2, 3]])
    np.testing.assert_allclose(excluded[0, 0], want_sum / want_count, rtol=1e-6)
    np.testing.assert_allclose(included[0, 0], want_sum / 6, rtol=1e-6)


def test_window_wholly_in_the_padding():
    x = np.array([[[[4.0, 8.0]]]], np.float32)
    # W: start padding 2 = window 2, output (2 + 2 - 2) / 1 + 1 = 3: {pad, pad}, {pad, 4},
    # {4, 8}.
    np.testing.assert_array_equal(
        directml.average_pooling(x, (1, 1), (1, 2), (0, 2), (0, 0), False), [[[[0, 4, 6]]]])
    np.testing.assert_array_equal(
        directml.average_pooling(x, (1, 1), (1, 2), (0, 2), (0, 0), True), [[[[0, 2, 6]]]])
    values, indices = directml.max_pooling(x, (1, 1), (1, 2), (0, 2), (0, 0),
                                           return_indices=True)
    np.testing.assert_array_equal(values, [[[[np.finfo(np.float32).min, 4, 8]]]])
    np.testing.assert_array_equal(indices, [[[[0, 0, 1]]]])


def test_5d_input_and_float16():
    x = _grid(1, 2, 3, 4, 5).astype(np.float16)
    out = directml.average_pooling(x, (1, 2, 2), (2, 2, 2), (0, 1, 0), (1, 0, 1), True)
    assert out.dtype == np.float16 and out.shape == (1, 2, 3, 2, 3)
    # The kernels agree with ovpool.avg_pool on the same windows (no hanging windows here, so
    # OpenVINO's include-pad divisor is the full window too).
    ref = ovpool.avg_pool(x.astype(np.float32), (2, 2, 2), (1, 2, 2), (0, 1, 0), (1, 0, 1),
                          exclude_pad=False)
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=1e-3)


def test_max_pooling_indices_and_dilations():
    x = np.random.default_rng(3).standard_normal((2, 3, 6, 7)).astype(np.float32)
    values, indices = directml.max_pooling(x, (2, 1), (2, 3), (1, 0), (0, 1), dilations=(1, 2),
                                           return_indices=True)
    # Dilated window 5 along W: (7 + 1 - 5) / 1 + 1 = 4; H: (6 + 1 - 2) / 2 + 1 = 3.
    assert values.shape == indices.shape == (2, 3, 3, 4)
    assert indices.dtype == np.uint32
    np.testing.assert_array_equal(x.ravel()[indices.astype(np.int64)], values)
    want, want_indices = ovpool.max_pool(x, (2, 3), (2, 1), (1, 0), (0, 1), (1, 2))
    np.testing.assert_array_equal(values, want)
    np.testing.assert_array_equal(indices, want_indices)
    _, wide = directml.max_pooling(x, (2, 1), (2, 3), (1, 0), (0, 1), (1, 2), True, "uint64")
    assert wide.dtype == np.uint64


def test_max_pooling_ties_and_int8():
    x = np.array([[[[3, 7, -128, -128], [7, 1, -128, -128]]]], np.int8)
    values, indices = directml.max_pooling(x, (1, 2), (2, 2), return_indices=True)
    np.testing.assert_array_equal(values, [[[[7, -128]]]])
    # First encountered wins: 7 at (0, 1) before (1, 0); -128 at (0, 2), a real element.
    np.testing.assert_array_equal(indices, [[[[1, 2]]]])


def test_out_arrays():
    x = _grid(1, 1, 4, 4)
    out = np.empty((1, 1, 2, 2), np.float32)
    assert directml.average_pooling(x, (2, 2), (2, 2), out=out) is out
    np.testing.assert_array_equal(out, [[[[3.5, 5.5], [11.5, 13.5]]]])
    out_indices = np.empty((1, 1, 2, 2), np.uint32)
    values, indices = directml.max_pooling(x, (2, 2), (2, 2), return_indices=True,
                                           out_indices=out_indices)
    assert indices is out_indices and indices.tolist() == [[[[5, 7], [13, 15]]]]
    with pytest.raises(BadArgumentError, match="out_indices"):
        directml.max_pooling(x, (2, 2), (2, 2), return_indices=True,
                             out_indices=np.empty((1, 1, 2, 2), np.int64))


@pytest.mark.parametrize("call, error, match", [
    (lambda: directml.average_pooling(np.ones((1, 1, 4), np.float32), 1, 2), BadShapeError,
     "4-D .* or 5-D"),
    (lambda: directml.average_pooling(np.ones((1, 1, 2, 2, 2, 2), np.float32), 1, 2),
     BadShapeError, "4-D"),
    (lambda: directml.average_pooling(np.ones((1, 1, 4, 4)), 1, 2), BadDtypeError, "float64"),
    (lambda: directml.average_pooling(np.ones((1, 1, 4, 4), np.int8), 1, 2), BadDtypeError,
     "int8"),
    (lambda: directml.max_pooling(np.ones((1, 1, 4, 4), np.int32), 1, 2), BadDtypeError,
     "int32"),
    (lambda: directml.average_pooling(np.ones((1, 1, 4, 4), np.float32), (1, 1), (5, 1)),
     BadAttributeError, "larger than the padded input"),
    (lambda: directml.average_pooling(np.ones((1, 1, 4, 4), np.float32), (0, 1), (2, 2)),
     BadAttributeError, "'strides' must be positive"),
    (lambda: directml.average_pooling(np.ones((1, 1, 4, 4), np.float32), (1, 1, 1), (2, 2)),
     BadAttributeError, "'strides' has 3 values"),
    (lambda: directml.max_pooling(np.ones((1, 1, 4, 4), np.float32), 1, 2, return_indices=True,
                                  index_dtype="int16"), BadAttributeError, "uint32 or uint64"),
])
def test_refused(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_matches_onnx_average_pool_without_hanging_windows():
    # Floor-mode windows never hang past the padded end, so IncludePadding=TRUE and ONNX
    # count_include_pad=1 (and FALSE / 0) divide alike.
    rng = np.random.default_rng(11)
    for _ in range(40):
        rank = int(rng.integers(2, 4))
        shape = (1, 2) + tuple(int(rng.integers(2, 7)) for _ in range(rank))
        window = [int(rng.integers(1, 3)) for _ in range(rank)]
        strides = [int(rng.integers(1, 3)) for _ in range(rank)]
        start = [int(rng.integers(0, w)) for w in window]
        end = [int(rng.integers(0, w)) for w in window]
        x = rng.standard_normal(shape).astype(np.float32)
        for include in (0, 1):
            np.testing.assert_allclose(
                directml.average_pooling(x, strides, window, start, end, bool(include)),
                ovpool.onnx.average_pool(x, window, pads=start + end, strides=strides,
                                         count_include_pad=include), rtol=1e-6)
