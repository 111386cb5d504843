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
from helpers import assert_same_averages
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
            assert_same_averages(ovpool.adaptive_avg_pool(x, size), ref_adaptive_avg_pool(x, size))


def _each_size(x):
    return [ovpool.adaptive_avg_pool(x, size) for size in _sizes(x.shape[2:])]


@pytest.mark.parametrize("shape", SHAPES + [(1, 16, 40, 30)])  # the last: 2 threads, 1 block
def test_lanes_averages_keep_the_bits_of_each_plane_alone(monkeypatch, shape):
    """Random floats (sums that round): every plane of a call gets the bits of that plane
    pooled on its own (by the passes), with one or two threads and in both builds."""
    _assert_random_planes_keep_their_bits(monkeypatch, _each_size, shape, 37,
                                          (np.float32, np.float16, np.uint8, np.int64))


# Upsampling shapes (one or two taps per axis: the averages are taken in the lanes, each divisor
# a power of two) of 1 to 3 axes, with at least two blocks of planes and a part-empty one.
# The last, 11 planes: int32's lanes (64-bit sums, eight to a block), which its calls of 16
# planes or more leave for the plane blocks.
UP = [((2, 19, 7), (11,)), ((1, 40, 5, 4), (9, 7)), ((3, 7, 3, 2, 4), (5, 3, 7)),
      ((1, 17, 6, 9), (6, 17)), ((1, 11, 3, 5, 4), (5, 9, 7))]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32"])
def test_upsampling_integer_averages_round_half_to_even(dtype):
    """Integer upsampling averages by the lanes' shifts: sums of two, four and eight inputs of
    every parity (ties to even, negative ties included) and the type's extremes."""
    dtype = _dtype(dtype)
    rng = np.random.default_rng(41)
    info = np.iinfo(dtype)
    for shape, size in UP:
        for low, high in [(-5, 5), (info.min, info.max)]:
            x = rng.integers(max(low, info.min), high, size=shape, endpoint=True).astype(dtype)
            x.reshape(shape[0] * shape[1], -1)[1] = info.max
            x.reshape(shape[0] * shape[1], -1)[4] = info.min
            np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, size),
                                          ref_adaptive_avg_pool(x, size))


def _isolated_nans(shape, dtype, payloads):
    """Random values with NaNs of the given bit patterns at positions whose coordinates are
    all multiples of 4, so that no upsampling window holds two of them (which payload a sum
    of two NaNs keeps is the hardware's choice, see core/average.hpp)."""
    rng = np.random.default_rng(43)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    bits = x.view(np.uint16 if dtype.itemsize == 2 else np.uint32)
    spots = bits[(slice(None), slice(None)) + (slice(None, None, 4),) * (len(shape) - 2)]
    spots[...] = np.resize(np.asarray(payloads, bits.dtype), spots.shape)
    return x


@pytest.mark.skipif(__import__("test_kernels")._avx2_build() is None,
                    reason="no AVX2 kernel build for this CPU/platform")
def test_upsampling_averages_keep_their_bits_in_both_builds(monkeypatch):
    """The averages taken in the lanes and narrowed to 16-bit floats eight at a time (AVX2)
    have the baseline build's bits: NaNs (quiet, signalling, negative) keep their payloads,
    bfloat16 rounds to even, and the integer shifts match the baseline's."""
    from test_kernels import _assert_builds_agree_bitwise

    import ml_dtypes
    cases = []
    for shape, size in UP:
        cases.append((_isolated_nans(shape, np.dtype(ml_dtypes.bfloat16),
                                     [0x7fc1, 0x7f81, 0xffa0, 0x7f80]), size))
        cases.append((_isolated_nans(shape, np.dtype(np.float16), [0x7e01, 0x7c01, 0xfe10]),
                      size))
        cases.append((_isolated_nans(shape, np.dtype(np.float32),
                                     [0x7fc00001, 0x7f800001, 0xffc01000]), size))
        rng = np.random.default_rng(47)
        for dtype in (np.int8, np.uint8, np.int32):
            info = np.iinfo(dtype)
            cases.append((rng.integers(info.min, info.max, size=shape, endpoint=True)
                          .astype(dtype), size))
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.adaptive_avg_pool(x, size) for x, size in cases])
    for x, size in cases[:3]:  # and the oracle's values (NaN where it has NaN)
        got = ovpool.adaptive_avg_pool(x, size).astype(np.float64)
        np.testing.assert_array_equal(got, ref_adaptive_avg_pool(x, size).astype(np.float64))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "uint8", "int32"])
def test_padded_windows_like_adaptive_ones_keep_their_divisors(dtype):
    """Fixed windows whose clipped tables are those of adaptive upsampling (kernel 2, stride
    1, one element of padding per side; kernel 3 over one element), averaged with the
    padding counted: the divisors are the caller's (4 for a window of one element; 6, not a
    power of two, for the other shape), not the windows' sizes."""
    from reference import ref_avg_pool

    dtype = _dtype(dtype)
    rng = np.random.default_rng(53)
    x = rng.integers(-60, 61 if dtype.kind != "u" else 0, size=(2, 17, 3, 4), endpoint=True)
    x = (x + (128 if dtype.kind == "u" else 0)).astype(dtype)
    for kernel, begin, end, planes in [((2, 2), (1, 1), (1, 1), x),
                                       ((3, 2), (1, 1), (2, 1), x[:, :, :1])]:
        for exclude_pad in (False, True):
            got = ovpool.avg_pool(planes, kernel, 1, begin, end, exclude_pad=exclude_pad)
            want = ref_avg_pool(planes, kernel, 1, begin, end, exclude_pad=exclude_pad)
            np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


# Adaptive windows along the last axis of c or c + 1 taps (a length that is no multiple of the
# output, so no uniform run of windows): the passes sum them window by window, the lanes path
# (a call of at least a block of small planes) across planes; one plane of 427x652 pooled to
# 213x81 in the sweep.
VARIED = [((1, 20, 3, 11), (2, 4)), ((1, 17, 2, 40), (1, 6)), ((2, 9, 6, 23), (3, 5)),
          ((1, 1, 40, 300), (7, 37)), ((1, 1, 2, 3, 652), (2, 1, 81))]


@pytest.mark.parametrize("shape, size", VARIED)
def test_windows_of_two_lengths_match_the_oracle(shape, size):
    """Integers exactly (extremes included), floats within the dtype's tolerance."""
    from helpers import assert_avg_close

    rng = np.random.default_rng(61)
    for dtype in (np.int8, np.uint8, np.int32, np.int64):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        x.reshape(-1)[: shape[-1]] = info.max
        np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, size),
                                      ref_adaptive_avg_pool(x, size))
    for dtype in (np.float32, np.float16, _dtype("bfloat16"), np.float64):
        x = (rng.standard_normal(shape) * 100).astype(dtype)
        assert_avg_close(ovpool.adaptive_avg_pool(x, size), ref_adaptive_avg_pool(x, size), x)


@pytest.mark.parametrize("shape, size", VARIED[:3])
def test_windows_of_two_lengths_keep_the_order_of_the_lanes(monkeypatch, shape, size):
    """Random floats: each plane alone (the passes) gets the bits of the whole call (the
    lanes' sums for the first two shapes), with one or two threads and in both builds."""
    _assert_random_planes_keep_their_bits(
        monkeypatch, lambda x: [ovpool.adaptive_avg_pool(x, size)], shape, 59,
        (np.float32, np.float16, np.uint8))


# int32 calls the lanes take (rows too long for the plane blocks, or fewer planes than a
# block of theirs): sixteen planes to a block of int32 lanes, or eight in calls of fewer
# planes, when the block's inputs keep every sum within int32, else int64 lanes, eight planes
# at a time. Upsampling (the averages in the lanes) and windows of three taps.
INT32_LANES = [((1, 37, 100), (150,)), ((2, 19, 100), (41,)), ((1, 11, 3, 5, 4), (5, 9, 7)),
               ((1, 40, 2, 70), (3, 101))]


@pytest.mark.parametrize("shape, size", INT32_LANES)
def test_int32_lanes_match_the_oracle(shape, size):
    """Small values (int32 lanes), the type's extremes (int64 lanes), and a call whose blocks
    differ: extremes in two planes of the second block of sixteen (and of the first of
    eight) only, so that one block takes int64 lanes and the others int32 ones."""
    rng = np.random.default_rng(83)
    info = np.iinfo(np.int32)
    small = rng.integers(-1000, 1000, size=shape, endpoint=True).astype(np.int32)
    large = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(np.int32)
    mixed = small.copy()
    flat = mixed.reshape(shape[0] * shape[1], -1)
    first = 20 if flat.shape[0] >= 32 else 3
    flat[first] = info.max
    flat[first + 1] = info.min
    for x in (small, large, mixed):
        np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, size),
                                      ref_adaptive_avg_pool(x, size))


@pytest.mark.parametrize("shape, size", INT32_LANES)
def test_int32_lanes_keep_their_bits(monkeypatch, shape, size):
    """The same values with one or two threads, for each plane alone, and in both builds."""
    _assert_random_planes_keep_their_bits(
        monkeypatch, lambda x: [ovpool.adaptive_avg_pool(x, size)], shape, 89, (np.int32,))


# Tiny planes pooled to two or four outputs (1x2, 2x2, 2 or 4 along one axis): the lanes'
# sums of a block go back to the planes by 64- / 128-bit stores per plane (AVX2 builds), into
# the output's layout (one item per block) or into rows of sums (a block's outputs in shares,
# on two threads); 21, 40 and 9 planes: whole groups of eight planes and a part-empty block.
TINY = [((3, 7, 3, 5), (1, 2)), ((1, 40, 5, 5), (2, 2)), ((3, 3, 13), (4,)),
        ((1, 21, 9), (2,)), ((1, 9, 6, 4), (2, 1))]


def _exact_inputs(shape, dtype, rng):
    """Inputs whose sums are exact in every accumulator: the integer type's whole range, or
    small integers with -0 for every zero and 2% NaN."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    x = rng.integers(-8, 9, size=shape).astype(dtype)
    x[x == 0] = -0.0
    x.reshape(-1)[rng.random(x.size) < 0.02] = np.nan
    return x


@pytest.mark.parametrize("shape, size", TINY)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "uint8", "int8", "int32"])
def test_tiny_planes_of_two_or_four_outputs_match_the_oracle(shape, size, dtype):
    x = _exact_inputs(shape, _dtype(dtype), np.random.default_rng(53))
    for threads in (1, 2):
        previous = ovpool.get_num_threads()
        ovpool.set_num_threads(threads)
        try:
            assert_same_averages(ovpool.adaptive_avg_pool(x, size),
                                 ref_adaptive_avg_pool(x, size))
        finally:
            ovpool.set_num_threads(previous)


@pytest.mark.parametrize("shape, size", TINY)
def test_tiny_planes_of_two_or_four_outputs_keep_their_bits(monkeypatch, shape, size):
    """Random floats: each plane's bits are those of the plane alone, on one or two threads,
    in both builds."""
    _assert_random_planes_keep_their_bits(
        monkeypatch, lambda x: [ovpool.adaptive_avg_pool(x, size)], shape, 59,
        (np.float32, np.float16, np.uint8, np.int32))


@pytest.mark.skipif(__import__("test_kernels")._avx2_build() is None,
                    reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_upsampled_half_averages_narrowed_in_the_transpose(monkeypatch, dtype):
    """16-bit float upsampling averages go from the lanes straight into the output, narrowed
    as the 8x8 tiles are transposed (unstage_half): 21 planes (a full block of two groups of
    eight, then five planes the portable loop stores), chunks of 4 x 11 outputs (the last
    tile overlapping the one before), with -0, NaNs and sums that round. The baseline build
    (which has no tiles) and the oracle agree."""
    from test_kernels import _assert_builds_agree_bitwise

    dt = _dtype(dtype)
    payloads = [0x7fc1, 0xffa0] if dtype == "bfloat16" else [0x7e01, 0xfe10]
    x = _isolated_nans((3, 7, 6, 5), dt, payloads)
    x.reshape(-1)[1::7] = -0.0
    size = (11, 11)
    _assert_builds_agree_bitwise(monkeypatch, lambda: [ovpool.adaptive_avg_pool(x, size)])
    got = ovpool.adaptive_avg_pool(x, size).astype(np.float64)
    np.testing.assert_array_equal(got, ref_adaptive_avg_pool(x, size).astype(np.float64))
    assert np.signbit(got[got == 0]).sum() == 0  # every zero average is +0


# int8 / uint8 upsampling in int16 lanes, the averages back as bytes (unstage_bytes): sixteen
# planes read by one 16x8 tile (planes of 7 and 12 elements: runs shorter than a tile, and
# the last tile overlapping the one before), blocks cut into shares of a few rows on one
# thread (16 planes of 8x5 outputs: shares of 10 outputs, fewer than a 32-byte store, into
# planes 40 apart), chunks of 1024 outputs of planes of 2400 (rows stored 2400 apart), a
# part-empty last block, and an axis of one tap per window at its own position (not copied)
# between upsampled ones.
BYTE_UP = [((2, 19, 7), (11,)), ((1, 16, 4, 3), (8, 5)), ((1, 16, 6, 9), (60, 40)),
           ((1, 33, 3), (5,)), ((2, 9, 2, 3, 2), (3, 5, 4)), ((1, 20, 3, 3), (3, 5)),
           ((1, 32, 4, 3, 5), (9, 3, 14))]


@pytest.mark.parametrize("shape, size", BYTE_UP)
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_byte_upsampling_in_short_lanes_matches_the_oracle(monkeypatch, shape, size, dtype):
    """Sums of one to eight inputs of every parity (ties to even, negative ties included) and
    the type's extremes, on one and two threads; the baseline build (int16 sums stored one by
    one) agrees bit for bit."""
    from test_kernels import _assert_builds_agree_bitwise

    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(67)
    cases = []
    for low, high in [(-3, 3), (info.min, info.max)]:
        x = rng.integers(max(low, info.min), high, size=shape, endpoint=True).astype(dtype)
        x.reshape(shape[0] * shape[1], -1)[1] = info.max
        x.reshape(shape[0] * shape[1], -1)[-1] = info.min
        cases.append(x)
    for threads in (1, 2):
        previous = ovpool.get_num_threads()
        ovpool.set_num_threads(threads)
        try:
            for x in cases:
                np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, size),
                                              ref_adaptive_avg_pool(x, size))
        finally:
            ovpool.set_num_threads(previous)
    if __import__("test_kernels")._avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, lambda: [
            ovpool.adaptive_avg_pool(x, size) for x in cases])


# Windows of one to five taps along axis 0 (1 and 2 -> 2, 3 -> 2, 5 -> 2, 7 -> 2, 9 -> 2 give
# 1, 2, 3, 4 and 5 taps: add_lane_rows' unrolled counts and its loop) under axes of one to
# three taps, so that both the first partial sum of axes 1 and 2 (taken as it is) and the
# later ones (added) occur; 20 planes of at most 128 elements, shrinking: the lanes path
# (AvgLanes::suits), one full block and a part-empty one.
AXIS0_TAPS = [((1, 20, 2, 5, 3), (2, 2, 2)), ((1, 20, 3, 7), (2, 3)),
              ((1, 20, 5, 5), (2, 2)), ((1, 20, 7, 4, 2), (2, 2, 1)), ((1, 20, 9), (2,)),
              ((2, 10, 9, 3, 2), (2, 2, 2))]
# Eight outputs per plane or more: float32 sums of whole tiles or of 32 outputs or more leave
# the lanes as averages, divided and narrowed in the tile transposes (unstage_float_averages):
# 8 outputs, one tile; 35, a last tile overlapping the one before; 9 and 12, the sums' rows and
# write_averages (float_averages_unstage).
DIVIDED = [((1, 20, 120), (35,)), ((2, 10, 30), (8,)), ((1, 20, 12, 10), (3, 4)),
           ((1, 20, 51), (9,)), ((1, 20, 5, 4, 5), (2, 1, 4))]


@pytest.mark.parametrize("shape, size", AXIS0_TAPS + DIVIDED)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "uint8"])
def test_axis0_windows_of_one_to_five_taps_match_the_oracle(shape, size, dtype):
    """Exact sums (small integers, -0, NaN, infinities in float planes; the extremes in integer
    ones), so the oracle's averages are the lanes' to the bit; a plane of -0 averages to +0."""
    dtype = _dtype(dtype)
    rng = np.random.default_rng(67)
    x = _exact_inputs(shape, dtype, rng)
    if dtype.kind == "f":
        x.reshape(-1)[rng.random(x.size) < 0.02] = -np.inf
        x.reshape(20, -1)[4] = -0.0
    got = ovpool.adaptive_avg_pool(x, size)
    assert_same_averages(got, ref_adaptive_avg_pool(x, size))
    if dtype.kind == "f":
        zeros = got.reshape(20, -1)[4].astype(np.float64)
        assert (zeros == 0).all() and not np.signbit(zeros).any()


@pytest.mark.parametrize("shape, size", AXIS0_TAPS + DIVIDED)
def test_axis0_windows_of_one_to_five_taps_keep_their_bits(monkeypatch, shape, size):
    """Random floats (sums that round): each plane's bits are those of the plane pooled alone
    by the passes, on one or two threads, and both builds agree."""
    import ml_dtypes

    _assert_random_planes_keep_their_bits(
        monkeypatch, lambda x: [ovpool.adaptive_avg_pool(x, size)], shape, 71,
        (np.float32, np.float16, ml_dtypes.bfloat16, np.int8))



@pytest.mark.skipif(__import__("test_kernels")._avx2_build() is None,
                    reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_upsampling_averages_of_tiny_sums_keep_their_bits(monkeypatch, dtype):
    """The AVX2 build takes float32 lanes' upsampling averages as one fused multiply-add,
    (a + b) * 2^-shift + 0, where the baseline adds the +0 first and then multiplies: the same
    bits also where the product underflows (the smallest subnormals, halved to a tie that
    rounds to a zero of the sum's sign), for -0 and +0 sums, and NaN payloads."""
    from test_kernels import _assert_builds_agree_bitwise

    dt = _dtype(dtype)
    bits = np.uint16 if dt.itemsize == 2 else np.uint32
    smallest = 1                                     # the smallest subnormal's bits
    sign = bits(0x8000) if dt.itemsize == 2 else bits(0x80000000)
    rng = np.random.default_rng(97)
    shape, size = (2, 9, 5, 4), (13, 11)
    x = np.zeros(shape, dt)
    pattern = rng.integers(0, 4, size=x.size)
    view = x.reshape(-1).view(bits)
    view[pattern == 0] = smallest
    view[pattern == 1] = smallest | sign
    view[pattern == 2] = sign                        # -0
    payload = [0x7fc1, 0xffa0] if dt.itemsize == 2 else [0x7fc00001, 0xffc01000]
    view[::41] = payload[0]
    view[17::41] = payload[1]
    _assert_builds_agree_bitwise(monkeypatch, lambda: [ovpool.adaptive_avg_pool(x, size)])
    got = ovpool.adaptive_avg_pool(x, size).astype(np.float64)
    want = ref_adaptive_avg_pool(x, size).astype(np.float64)
    np.testing.assert_array_equal(got, want)


# Upsampling by more than two along axis 0 (L rows to more than 2L - 1): some output rows have
# the window and divisors of the row before, and the lanes copy each plane's row from the one
# before rather than average it again (AvgLanes' repeats_), when the rows hold 32 outputs or
# more. Two and three axes; the sweep's #140 shape with a part-empty block; rows of 600
# outputs (one row a chunk, so the copies come between chunks); int32's lanes (11 planes);
# and rows too short to be copied (one axis; 2-D rows of 9), which average every row.
REPEATED = [((2, 9, 3, 5), (10, 40)), ((1, 17, 4, 3, 5), (9, 3, 14)),
            ((1, 16, 4, 300), (13, 600)), ((1, 11, 5, 4), (14, 33)), ((1, 18, 4), (13,)),
            ((1, 17, 5, 4), (14, 9))]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "uint8", "int32"])
def test_repeated_upsampled_rows_match_the_oracle(dtype):
    """Exact sums (small integers as floats, -0.0 and infinities among them; the integer
    extremes) against the oracle, every repeated row included."""
    dtype = _dtype(dtype)
    rng = np.random.default_rng(67)
    for shape, size in REPEATED:
        if dtype.kind == "f" or dtype.kind == "V":
            x = rng.integers(-8, 9, size=shape).astype(dtype)
            x[x == 0] = -0.0
            x.reshape(-1)[rng.random(x.size) < 0.03] = np.inf
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
            x.reshape(shape[0] * shape[1], -1)[1] = info.max
        assert_same_averages(ovpool.adaptive_avg_pool(x, size), ref_adaptive_avg_pool(x, size))


@pytest.mark.parametrize("shape, size", REPEATED)
def test_repeated_upsampled_rows_keep_their_bits(monkeypatch, shape, size):
    """Random floats: each plane alone (the passes) gets the bits of the whole call, with one
    or two threads (two: a repeated row may open a thread's share of the rows, which then
    averages it) and in both builds."""
    _assert_random_planes_keep_their_bits(
        monkeypatch, lambda x: [ovpool.adaptive_avg_pool(x, size)], shape, 71,
        (np.float32, np.float16, np.uint8, np.int8, np.int32))
