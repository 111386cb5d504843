"""Fixed-window averages of small planes side by side (core/avg_blocks.hpp).

A call whose planes have a last axis of at most 64 elements, with at least a block of planes
(16; 8 for float64), is pooled a block at a time: the block transposed so that every tap is a
run of whole vectors, then the same passes. It must give the oracle's values and the bits of
each plane pooled on its own (by the passes), in both kernel builds and on any thread count.
"""

import numpy as np
import pytest

import ovpool
from helpers import assert_same_averages
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
                assert_same_averages(ovpool.avg_pool(x, *args, **kw), ref_avg_pool(x, *args, **kw))


@pytest.mark.parametrize("shape", SHAPES + [(2, 16, 6, 7)])  # the last: 2 threads, 2 blocks
def test_block_averages_keep_the_bits_of_each_plane_alone(monkeypatch, shape):
    """Random floats (sums that round): every plane of a call gets the bits of that plane
    pooled on its own (by the passes), with one or two threads and in both builds."""
    _assert_random_planes_keep_their_bits(monkeypatch, _pool_all, shape, 43,
                                          (np.float32, np.float16, np.uint8, np.int64, np.float64))


# int8 / uint8 rows strided along the last axis take larger blocks (rows up to 128, blocks up
# to 65536 elements: strided_rows_suit_blocks) when every input is read; the third geometry
# leaves rows unread (dilation 3 over 8 rows) and keeps the passes.
STRIDED = [((1, 19, 77), (4,), (3,), (2,), (2,), (3,), "ceil_torch"),
           ((1, 17, 128), (3,), (2,), (0,), (0,), (1,), "floor"),
           ((1, 17, 43, 61), (4, 6), (1, 4), (1, 2), (2, 3), (3, 1), "ceil_torch"),
           ((1, 17, 8, 109), (3, 4), (3, 4), (0, 0), (0, 0), (3, 1), "floor")]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_strided_rows_in_larger_blocks_match_the_oracle(dtype):
    """The extremes of the type and random values, both divisor rules."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(47)
    for shape, kernel, strides, begin, end, dil, rounding in STRIDED:
        x = rng.integers(info.min, info.max, endpoint=True, size=shape).astype(dtype)
        x.reshape(shape[1], -1)[3] = info.max
        x.reshape(shape[1], -1)[4] = info.min
        for exclude_pad in (True, False):
            args = (kernel, strides, begin, end, dil)
            kw = dict(exclude_pad=exclude_pad, rounding_type=rounding)
            np.testing.assert_array_equal(ovpool.avg_pool(x, *args, **kw),
                                          ref_avg_pool(x, *args, **kw))


@pytest.mark.parametrize("case", STRIDED[:3])
def test_strided_rows_in_larger_blocks_keep_their_bits(monkeypatch, case):
    """Each plane gets the bytes of that plane alone, with one or two threads, in both
    builds."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)  # two threads even for these
    shape, kernel, strides, begin, end, dil, rounding = case

    def pool(x):
        return [ovpool.avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=e,
                                rounding_type=rounding) for e in (True, False)]
    _assert_random_planes_keep_their_bits(monkeypatch, pool, shape, 61, (np.int8, np.uint8))


@pytest.mark.parametrize("shape", [(2, 9, 50), (1, 21, 7, 6), (1, 16, 40, 30)])
def test_int32_adaptive_windows_take_the_blocks(shape):
    """int32 planes the blocks suit take them even when the windows are adaptive ones (fixed
    windows k2 s1 are; so are adaptive_avg_pool's): the oracle's values for inputs whose sums
    fit in int32 and for the extremes, whose blocks leave int32 and take the passes."""
    from reference import ref_adaptive_avg_pool
    rng = np.random.default_rng(67)
    info = np.iinfo(np.int32)
    planes = shape[0] * shape[1]
    small = rng.integers(-1000, 1001, size=shape).astype(np.int32)
    large = small.copy()
    large.reshape(planes, -1)[planes - 3:] = info.max
    large.reshape(planes, -1)[0] = info.min
    spatial = shape[2:]
    for x in (small, large):
        kernel = (2,) * len(spatial)
        ones = (1,) * len(spatial)
        zeros = (0,) * len(spatial)
        np.testing.assert_array_equal(
            ovpool.avg_pool(x, kernel, ones, zeros, zeros, ones, rounding_type="ceil_torch"),
            ref_avg_pool(x, kernel, ones, zeros, zeros, ones, rounding_type="ceil_torch"))
        for size in (tuple(n - 1 for n in spatial), tuple(2 * n + 1 for n in spatial),
                     tuple(max(1, n // 3) + 1 for n in spatial)):
            np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, size),
                                          ref_adaptive_avg_pool(x, size))


# int8 / uint8 blocks sum in int16 lanes when no partial sum can leave int16: a window volume
# of at most 128 for uint8 (128 * 255 = 32640), 255 for int8 (255 * 128); one more tap and the
# blocks keep int32. Planes of 16x20 (a block of 5120 elements), stride 1, padded: windows at
# the limit and one past it, over the type's extremes (the largest sums of each sign).
SHORT_LIMITS = {"uint8": [(8, 16), (9, 16), (4, 32)], "int8": [(15, 17), (16, 16), (5, 51)]}


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_int16_block_sums_at_their_limit_match_the_oracle(monkeypatch, dtype):
    """All-max and all-min planes (the sums of the largest magnitude a window allows), random
    ones, both divisor rules, the oracle's values; both builds give the same bytes."""
    from test_kernels import _assert_builds_agree_bitwise, _avx2_build
    info = np.iinfo(dtype)
    rng = np.random.default_rng(71)
    x = rng.integers(info.min, info.max, endpoint=True, size=(1, 20, 16, 20)).astype(dtype)
    x[0, :6] = info.max
    x[0, 6:12] = info.min
    x[0, 12, ::2] = info.max

    def pool():
        results = []
        for kernel in SHORT_LIMITS[dtype]:
            pads = tuple(k // 2 for k in kernel)
            for exclude_pad in (True, False):
                results.append(ovpool.avg_pool(x, kernel, (1, 1), pads, pads, (1, 1),
                                               exclude_pad=exclude_pad, rounding_type="ceil"))
        return results

    got = pool()
    at = 0
    for kernel in SHORT_LIMITS[dtype]:
        pads = tuple(k // 2 for k in kernel)
        for exclude_pad in (True, False):
            want = ref_avg_pool(x, kernel, (1, 1), pads, pads, (1, 1), exclude_pad=exclude_pad,
                                rounding_type="ceil")
            np.testing.assert_array_equal(got[at], want, err_msg=f"{kernel} {exclude_pad}")
            at += 1
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, pool)


# int16 blocks in the AVX2 build: each window of a block's axis is a few vectors' additions
# with the tap count unrolled (one to eight taps, a loop beyond), and the averages are taken in
# the lanes from each divisor's inverse (q0 = s * y, then one fused correction) rather than by
# a division. Windows of 1 to 12 taps along each axis, divisors of every size up to 60 (the
# kernel volume with padding, or the taps without), and sums of every residue: half-way sums
# (a sum that is an odd multiple of half its divisor) must round to even as the scalar rule
# does, and an empty window (its taps all in padding, divisor 0) must average to 0.
SHORT_WINDOWS = [((k0, k1), (1, 1), (k0 // 2, k1 // 2), ((k0 - 1) // 2, (k1 - 1) // 2))
                 for k0, k1 in [(1, 1), (2, 3), (3, 4), (5, 6), (7, 8), (9, 2), (1, 12),
                                (12, 1), (4, 11), (6, 10)]]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_int16_block_averages_of_every_tap_count_and_divisor(monkeypatch, dtype):
    from test_kernels import _assert_builds_agree_bitwise, _avx2_build
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    x = rng.integers(info.min, info.max, endpoint=True, size=(2, 19, 13, 14)).astype(dtype)
    # Half-way sums: planes of one value v, whose window of n taps sums to n * v, and of
    # alternating v and v + 1, whose sums are odd multiples of half of many divisors.
    for p, v in enumerate(range(1, 9)):
        x[0, p] = v if p % 2 else np.add.outer(np.arange(13), np.arange(14)) % 2 + v

    def pool():
        results = []
        for kernel, strides, begin, end in SHORT_WINDOWS:
            for exclude_pad in (True, False):
                results.append(ovpool.avg_pool(x, kernel, strides, begin, end, (1, 1),
                                               exclude_pad=exclude_pad, rounding_type="floor"))
        # The last window of each row past the end, all in padding (ceil rounding): divisor 0
        # with exclude_pad, an average of 0.
        for exclude_pad in (True, False):
            results.append(ovpool.avg_pool(x, (2, 2), (3, 3), (0, 0), (1, 1), (1, 1),
                                           exclude_pad=exclude_pad, rounding_type="ceil"))
        return results

    got = pool()
    at = 0
    for kernel, strides, begin, end in SHORT_WINDOWS:
        for exclude_pad in (True, False):
            want = ref_avg_pool(x, kernel, strides, begin, end, (1, 1), exclude_pad=exclude_pad,
                                rounding_type="floor")
            np.testing.assert_array_equal(got[at], want, err_msg=f"{kernel} {exclude_pad}")
            at += 1
    for exclude_pad in (True, False):
        want = ref_avg_pool(x, (2, 2), (3, 3), (0, 0), (1, 1), (1, 1), exclude_pad=exclude_pad,
                            rounding_type="ceil")
        np.testing.assert_array_equal(got[at], want, err_msg=f"past the end {exclude_pad}")
        at += 1
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, pool)


# float32 / float16 / bfloat16 blocks leave the lanes as averages, divided and narrowed in the
# tile transposes (unstage_float_averages): planes of fewer and of more than eight outputs, a
# full block and a part-empty one (21 and 37 planes).
@pytest.mark.parametrize("shape", [(1, 21, 9, 6), (1, 37, 7, 8), (3, 7, 50)])
def test_block_averages_divided_in_the_lanes_keep_their_bits(monkeypatch, shape):
    """Random floats (sums that round): every plane gets the bits of that plane pooled on its
    own, with one or two threads, and both builds agree, bfloat16 included."""
    import ml_dtypes

    _assert_random_planes_keep_their_bits(monkeypatch, _pool_all, shape, 47,
                                          (np.float32, np.float16, ml_dtypes.bfloat16))


# Planes of fewer than eight outputs: each group of eight planes leaves the lanes through one
# 8x8 transpose and overlapping row stores (simd::untranspose_few), for every output count
# one to seven; 21 planes end with a group of five, which the scalar loop copies.
FEW_OUTPUTS = [((1, 21, 8, 6), (6, 6), (3, 1), (1, 2), (2, 0)),    # 2x3: ONNX-like #5
               ((1, 21, 4, 4), (4, 4), (1, 1), (0, 0), (0, 0)),    # 1x1
               ((1, 21, 5, 7), (3, 3), (2, 2), (0, 0), (0, 0)),    # 2x3 = 6
               ((1, 21, 5, 9), (5, 3), (1, 2), (0, 0), (0, 0)),    # 1x4
               ((1, 21, 9, 5), (3, 5), (1, 1), (0, 0), (0, 0)),    # 7x1
               ((1, 21, 6, 6), (5, 2), (1, 2), (0, 0), (0, 0))]    # 2x3


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("case", FEW_OUTPUTS)
def test_planes_of_few_outputs_leave_the_lanes_as_the_oracle_says(dtype, case):
    shape, kernel, strides, begin, end = case
    rng = np.random.default_rng(47)
    x = rng.integers(-50, 51, size=shape).astype(dtype)
    for exclude_pad in (True, False):
        kw = dict(exclude_pad=exclude_pad)
        got = ovpool.avg_pool(x, kernel, strides, begin, end, **kw)
        assert 0 < got[0, 0].size < 8
        assert_same_averages(got, ref_avg_pool(x, kernel, strides, begin, end, **kw))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_float_block_windows_of_every_tap_count_match_the_oracle(dtype):
    """Float blocks' windows along the last axis, 16 lanes each (simd::sum_rows16, one to
    eight taps unrolled, more in a loop): every count from 1 to 11 at the rows' padded edges
    and in their full windows, both divisor rules; small integers (exact sums), -0, NaN and
    infinities."""
    dt = _dtype(dtype)
    rng = np.random.default_rng(73)
    x = rng.integers(-8, 9, size=(1, 21, 3, 14)).astype(dt)
    x[x == 0] = -0.0
    x.reshape(-1)[rng.random(x.size) < 0.03] = np.nan
    x.reshape(-1)[rng.random(x.size) < 0.03] = -np.inf
    for k in range(2, 12):
        args = ((1, k), (1, 1), (0, k - 1), (0, k - 1), (1, 1))
        for exclude_pad in (True, False):
            assert_same_averages(ovpool.avg_pool(x, *args, exclude_pad=exclude_pad),
                                 ref_avg_pool(x, *args, exclude_pad=exclude_pad))


# int16 blocks in the AVX2 build, windows strided along the last axis (a pass whose rows are
# the sixteen lanes): the full windows summed with their tap count picked once for the whole
# pass (one to eight taps unrolled), the edge windows one column at a time, their count picked
# once too; other counts (none, nine or more) go run by run. Tap counts 1 to 10, steps 2 and 3,
# dilations 1 and 2, padding on both sides as far as allowed (edge windows of every count; with
# ceil rounding, windows that start past the end); 1-D planes (35: two full blocks and a
# part-empty one) and 2-D planes.
STRIDED_LANE_WINDOWS = [(k, s, d, (k - 1) * d // 2, (k - 1) * d)
                        for k in range(1, 11) for s in (2, 3) for d in (1, 2)]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("shape", [(1, 35, 29), (2, 17, 5, 23)])
def test_int16_block_windows_strided_along_the_lanes_match_the_oracle(monkeypatch, dtype, shape):
    from test_kernels import _assert_builds_agree_bitwise, _avx2_build
    info = np.iinfo(dtype)
    rng = np.random.default_rng(83)
    x = rng.integers(info.min, info.max, endpoint=True, size=shape).astype(dtype)
    x.reshape(-1, shape[-1])[:3] = info.max
    x.reshape(-1, shape[-1])[3:5] = info.min
    lead = len(shape) - 3  # spatial axes before the last: kernel 2, stride 1, no padding

    def windows():
        for k, s, d, begin, end in STRIDED_LANE_WINDOWS:
            yield ((2,) * lead + (k,), (1,) * lead + (s,), (0,) * lead + (begin,),
                   (0,) * lead + (end,), (1,) * lead + (d,))

    def pool():
        return [ovpool.avg_pool(x, *args, exclude_pad=e, rounding_type="ceil")
                for args in windows() for e in (True, False)]

    got = pool()
    want = [ref_avg_pool(x, *args, exclude_pad=e, rounding_type="ceil")
            for args in windows() for e in (True, False)]
    for at, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"window {at // 2}")
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, pool)


# int16 blocks in the AVX2 build: undilated windows of many taps that move by fewer rows than
# half their taps sum each window from the one before (rows entering added, rows leaving
# subtracted, simd::sliding_window_sums16) along the axes before the lanes, and along the
# lanes' own axis for more than eight taps. Padding on each side (edge windows of fewer
# taps), ceil_torch's dropped last window, stride 1 and 2, and the sums' extremes (255s,
# int8's -128s) where wrapping int16 partial results must still give the exact sums.
SLIDING_WINDOWS = [
    # (shape, kernel, strides, pads_begin, pads_end, dilations, rounding)
    ((1, 21, 7, 8), (6, 3), (1, 1), (3, 1), (2, 1), (1, 1), "ceil_torch"),
    ((1, 21, 7, 8), (6, 3), (2, 1), (3, 1), (3, 1), (1, 2), "ceil_torch"),
    ((1, 21, 9, 5), (5, 2), (1, 1), (0, 0), (4, 1), (1, 1), "ceil"),
    # ceil's last window of the first axis wholly in the padding (no taps, divisor 0)
    ((1, 21, 8, 6), (5, 3), (2, 1), (0, 1), (4, 1), (1, 1), "ceil"),
    ((1, 21, 12, 6), (9, 1), (1, 1), (4, 0), (4, 0), (1, 1), "floor"),
    ((1, 21, 5, 6, 4), (4, 5, 2), (1, 2, 1), (2, 2, 1), (1, 2, 0), (1, 1, 2), "ceil_torch"),
    ((2, 17, 40), (11,), (1,), (5,), (5,), (1,), "floor"),
    ((2, 17, 40), (12,), (2,), (6,), (6,), (1,), "ceil_torch"),
]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("case", SLIDING_WINDOWS)
def test_int16_block_windows_summed_sliding_match_the_oracle(monkeypatch, dtype, case):
    from test_kernels import _assert_builds_agree_bitwise, _avx2_build
    shape, kernel, strides, begin, end, dil, rounding = case
    info = np.iinfo(dtype)
    rng = np.random.default_rng(97)
    x = rng.integers(info.min, info.max, endpoint=True, size=shape).astype(dtype)
    planes = x.reshape(-1, int(np.prod(shape[2:])))
    planes[:3] = info.max
    planes[3:5] = info.min
    planes[5, ::2] = info.max

    def pool():
        return [ovpool.avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=e,
                                rounding_type=rounding) for e in (True, False)]

    got = pool()
    for g, e in zip(got, (True, False)):
        want = ref_avg_pool(x, kernel, strides, begin, end, dil, exclude_pad=e,
                            rounding_type=rounding)
        np.testing.assert_array_equal(g, want, err_msg=f"exclude_pad={e}")
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, pool)


# int16 blocks of sixteen planes go into the lanes 32 elements of each plane a tile (AVX2; the
# last tile overlapping the one before), planes shorter than 32 in tiles of eight: planes of
# no rest, rests of 3, 8, 13, 16 and 17, and planes shorter than one tile of 32, with their
# sums over windows at both edges. 33 planes: two full blocks and one of a single plane.
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("n", [8, 13, 32, 35, 40, 45, 48, 49, 64])
def test_int16_block_planes_of_every_rest_match_the_oracle(dtype, n):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(89 + n)
    x = rng.integers(info.min, info.max, endpoint=True, size=(1, 33, n)).astype(dtype)
    x[0, 3] = info.max
    x[0, 4] = info.min
    for exclude_pad in (True, False):
        args = ((3,), (1,), (1,), (1,), (1,))
        np.testing.assert_array_equal(ovpool.avg_pool(x, *args, exclude_pad=exclude_pad),
                                      ref_avg_pool(x, *args, exclude_pad=exclude_pad),
                                      err_msg=f"exclude_pad={exclude_pad}")
