"""The window-level entry points the dialects use (ovpool.pooling.*_windows)."""

import numpy as np
import pytest

from ovpool import pooling
from ovpool._shapes import AxisWindow, resolve_pool_axes
from ovpool.errors import BadAttributeError, BadShapeError


def test_divisor_rules_on_the_semantics_example():
    # x = 1..6, k3 s2 pads 1/1, ceil: the last window covers x[5] = 6, one pad tap inside the
    # padded extent and one tap beyond it.
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    windows = resolve_pool_axes(x.shape, 3, 2, 1, 1, rounding_type="ceil")
    assert [w.output for w in windows] == [4]
    expected = {
        "exclude_pad": [1.5, 3.0, 5.0, 6.0],           # (1+2)/2, (2+3+4)/3, (4+5+6)/3, 6/1
        "openvino_include_pad": [1.0, 3.0, 5.0, 2.0],  # everything / 3
        "include_padded": [1.0, 3.0, 5.0, 3.0],        # last window: 6 / 2 taps in [-1, 7)
    }
    for rule, want in expected.items():
        got = pooling.avg_pool_windows(x, windows, rule)
        np.testing.assert_array_equal(got, np.array([[want]], np.float32), err_msg=rule)


def test_max_pool_windows_matches_max_pool():
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 9)).astype(np.float32)
    windows = resolve_pool_axes(x.shape, (3, 2), (2, 2), (1, 0), (1, 1), (1, 2), "ceil")
    values, indices = pooling.max_pool_windows(x, windows, axis=2)
    want_values, want_indices = pooling.max_pool(x, (3, 2), (2, 2), (1, 0), (1, 1), (1, 2), "ceil",
                                                 axis=2)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)


def test_windows_must_fit_the_input():
    x = np.zeros((1, 1, 5), np.float32)
    with pytest.raises(BadShapeError, match="length 4"):
        pooling.avg_pool_windows(x, (AxisWindow(4, 2, 1, 1, 0, 0, 3),), "exclude_pad")
    with pytest.raises(BadAttributeError, match="divisor rule"):
        pooling.avg_pool_windows(x, resolve_pool_axes(x.shape, 2), "ceil")


def test_axis_windows_hold_plain_ints():
    window = AxisWindow(np.int64(5), 2, np.int32(1), 1, 0, 0, 4)
    assert all(type(v) is int for v in vars(window).values())
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    np.testing.assert_array_equal(pooling.avg_pool_windows(x, (window,), "exclude_pad"),
                                  [[[0.5, 1.5, 2.5, 3.5]]])
    for bad in (2.0, True, "2", None):
        with pytest.raises(BadAttributeError, match="field 'kernel' must be an int"):
            AxisWindow(5, bad, 1, 1, 0, 0, 4)


def test_windows_must_be_axis_windows():
    x = np.zeros((1, 1, 5), np.float32)
    with pytest.raises(BadAttributeError, match="one AxisWindow per spatial axis"):
        pooling.avg_pool_windows(x, ((5, 2, 1, 1, 0, 0, 4),), "exclude_pad")
    with pytest.raises(BadAttributeError, match="one AxisWindow per spatial axis"):
        pooling.max_pool_windows(x, resolve_pool_axes(x.shape, 2) * 2)
