"""Fixed-window averages of small planes side by side (core/avg_blocks.hpp).

A call whose planes have a last axis of at most 64 elements, with at least a block of planes
(16; 8 for float64), is pooled a block at a time: the block transposed so that every tap is a
run of whole vectors, then the same passes. It must give the oracle's values and the bits of
each plane pooled on its own (by the passes), in both kernel builds and on any thread count.
"""

import numpy as np
import pytest

import ovpool
from reference import ref_avg_pool
from test_kernels import _assert_random_planes_keep_their_bits

# 21 planes: a full block for every dtype and a part-empty last one. Last axes of 5 to 50.
SHAPES = [(3, 7, 12), (3, 7, 50), (3, 7, 7, 8), (1, 21, 9, 6), (1, 21, 5, 4, 5)]

# (kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad) per rank: 'same'
# windows, strides, dilations, padding with ceil rounding, windows longer than the axis.
WINDOWS = {
    1: [((2,), (1,), (0,), (0,), (1,), "ceil_torch", "explicit"),
        ((4,), (3,), (2,), (3,), (2,), "ceil_torch", "explicit"),
        ((5,), (1,), (0,), (0,), (1,), "floor", "same_upper")],
    2: [((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), "floor", "explicit"),
        ((6, 3), (1, 1), (0, 0), (0, 0), (1, 1), "ceil_torch", "same_lower"),
        ((2, 2), (3, 3), (0, 0), (0, 0), (2, 1), "ceil", "same_upper"),
        ((7, 4), (1, 3), (0, 0), (0, 0), (1, 1), "ceil", "same_upper"),
        ((1, 6), (1, 3), (0, 0), (0, 2), (3, 1), "ceil", "explicit")],
    3: [((5, 1, 4), (4, 4, 3), (0, 0, 0), (0, 0, 0), (3, 1, 2), "floor", "same_lower"),
        ((2, 3, 2), (1, 2, 1), (1, 0, 1), (0, 1, 1), (1, 1, 2), "ceil", "explicit")],
}

FLOATS = ["float32", "float16", "bfloat16", "float64"]
INTS = ["int8", "uint8", "int32", "int64"]


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _pool_all(x, exclude_pads=(True, False)):
    results = []
    for kernel, strides, begin, end, dil, rounding, auto in WINDOWS[x.ndim - 2]:
        for exclude_pad in exclude_pads:
            results.append(ovpool.avg_pool(x, kernel, strides, begin, end, dil,
                                           exclude_pad=exclude_pad, rounding_type=rounding,
                                           auto_pad=auto))
    return results


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_block_averages_match_the_oracle(dtype):
    """Values whose sums are exact in every accumulator, so that the oracle's float64 sums
    give the same averages: signed zeros (a window of -0 averages to +0), NaN, infinities,
    and the integer extremes (int32 / int64 blocks whose sums leave int32 take the passes)."""
    dtype = _dtype(dtype)
    rng = np.random.default_rng(41)
    floating = dtype.kind not in "iu"
    for shape in SHAPES:
        planes = shape[0] * shape[1]
        if floating:
            x = rng.integers(-8, 9, size=shape).astype(dtype)
            x[x == 0] = -0.0
            x.reshape(-1)[rng.random(x.size) < 0.05] = np.nan
            x.reshape(-1)[rng.random(x.size) < 0.03] = np.inf
            x.reshape(planes, -1)[3] = -0.0  # a plane of -0 only
        else:
            info = np.iinfo(dtype)
            x = rng.integers(-100, 101, size=shape).astype(dtype)
            x.reshape(planes, -1)[17:] = rng.integers(info.min, info.max, endpoint=True,
                                                      size=(planes - 17, x[0, 0].size))
            x.reshape(planes, -1)[18] = info.max
            x.reshape(planes, -1)[19] = info.min
            x.reshape(planes, -1)[2] = info.max if dtype.itemsize == 1 else 2**20 + 1
        for kernel, strides, begin, end, dil, rounding, auto in WINDOWS[len(shape) - 2]:
            for exclude_pad in (True, False):
                args = (kernel, strides, begin, end, dil)
                kw = dict(exclude_pad=exclude_pad, rounding_type=rounding, auto_pad=auto)
                got = ovpool.avg_pool(x, *args, **kw)
                want = ref_avg_pool(x, *args, **kw)
                if floating:  # (compared as float64: numpy's testing misses bfloat16's NaN)
                    got, want = got.astype(np.float64), want.astype(np.float64)
                    np.testing.assert_array_equal(got, want)
                    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
                else:
                    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", SHAPES + [(2, 16, 6, 7)])  # the last: 2 threads, 2 blocks
def test_block_averages_keep_the_bits_of_each_plane_alone(monkeypatch, shape):
    """Random floats (sums that round): every plane of a call gets the bits of that plane
    pooled on its own (by the passes), with one or two threads and in both builds."""
    _assert_random_planes_keep_their_bits(monkeypatch, _pool_all, shape, 43,
                                          (np.float32, np.float16, np.uint8, np.int64, np.float64))
