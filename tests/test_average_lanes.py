"""Adaptive average pooling of many planes side by side (core/average_lanes.hpp).

A call with at least a block of planes (16 for float32, float16, bfloat16, int8 and uint8; 8
for float64 and int32, whose calls the plane blocks suit take those) goes through the lanes
path; one plane alone, and int64 averages, go
through the separable passes (int64 is checked here as that path's neighbour). The lanes path must give the oracle's values and, for floats, the bits of
the passes (the same sums in the same order), in both kernel builds and on any thread count.
"""

import numpy as np
import pytest

import ovpool
from reference import ref_adaptive_avg_pool
from test_kernels import _assert_random_planes_keep_their_bits

@pytest.fixture(autouse=True)
def _small_inputs_on_two_threads(monkeypatch):
    """The calls here are far below the bytes a second thread is worth (core/threads.hpp):
    lowered, so that the thread-count comparisons really run two threads."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)


# 21 planes: at least one block for every dtype, and a part-empty last block; 11 planes:
# int32's lanes (its calls of 16 planes or more take the plane blocks, avg_blocks.hpp).
SHAPES = [(3, 7, 5), (3, 7, 4, 3), (1, 21, 3, 2, 4), (1, 11, 4, 6)]


def _sizes(spatial):
    """Output sizes through both lanes kernels: upsampling (one or two taps per axis), the
    same size, a mix of up and down, and windows of three or more taps."""
    rank = len(spatial)
    up = tuple(2 * n + 1 for n in spatial)
    mixed = tuple(n + 3 if a % 2 == 0 else max(1, n // 2) for a, n in enumerate(spatial))
    down = tuple(max(1, n // 3) for n in spatial)
    sizes = [up, spatial, mixed, down, (7,) * rank]
    return [s for s in sizes if np.prod(s) > 1]  # one output per plane goes elsewhere


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int8",
                                   "uint8", "int32", "int64"])
def test_lanes_averages_match_the_oracle(dtype):
    """Values whose sums are exact in every accumulator, so that the oracle's float64 sums
    give the same averages: signed zeros (a window of -0 averages to +0), NaN, infinities,
    and the integer extremes (int64 sums beyond 64 bits)."""
    dtype = _dtype(dtype)
    rng = np.random.default_rng(31)
    floating = dtype.kind not in "iu"
    for shape in SHAPES:
        if floating:
            x = rng.integers(-8, 9, size=shape).astype(dtype)
            x[x == 0] = -0.0
            x.reshape(-1)[rng.random(x.size) < 0.05] = np.nan
            x.reshape(-1)[rng.random(x.size) < 0.03] = np.inf
            x.reshape(shape[0] * shape[1], -1)[3] = -0.0  # a plane of -0 only
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
            x.reshape(shape[0] * shape[1], -1)[2] = info.max
            x.reshape(shape[0] * shape[1], -1)[5] = info.min
        for size in _sizes(shape[2:]):
            got = ovpool.adaptive_avg_pool(x, size)
            want = ref_adaptive_avg_pool(x, size)
            if floating:  # (compared as float64: numpy's testing misses bfloat16's NaN)
                got, want = got.astype(np.float64), want.astype(np.float64)
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
            else:
                np.testing.assert_array_equal(got, want)


def _each_size(x):
    return [ovpool.adaptive_avg_pool(x, size) for size in _sizes(x.shape[2:])]


@pytest.mark.parametrize("shape", SHAPES + [(1, 16, 40, 30)])  # the last: 2 threads, 1 block
def test_lanes_averages_keep_the_bits_of_each_plane_alone(monkeypatch, shape):
    """Random floats (sums that round): every plane of a call gets the bits of that plane
    pooled on its own (by the passes), with one or two threads and in both builds."""
    _assert_random_planes_keep_their_bits(monkeypatch, _each_size, shape, 37,
                                          (np.float32, np.float16, np.uint8, np.int64))
