"""Pooling whose one output per plane reads the whole plane (a window as large as the plane,
adaptive pooling to one element): the core reduces each plane as one contiguous run
(core/reduce.hpp) instead of by window tables. Plane sizes around the vector widths (the
overlapping last vector), ties, NaN and all-NaN planes, signed zeros and infinities for max;
exact integer sums at the extremes and fixed float summation order for averages."""

import numpy as np
import pytest

import ovpool
from test_kernels import _add_nan_payloads, _assert_builds_agree_bitwise, _avx2_build

@pytest.fixture(autouse=True)
def _small_inputs_on_two_threads(monkeypatch):
    """The calls here are far below the bytes a second thread is worth (core/threads.hpp):
    lowered, so that the thread-count comparisons really run two threads."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)


DTYPES = [np.float32, np.float16, "bfloat16", np.float64, np.int8, np.uint8, np.int32, np.int64]
# 1-D planes of every length around one to three vectors of every element width (4 doubles to
# 32 bytes), then 2-D and 3-D planes.
PLANES = [(n,) for n in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 97, 130)]
PLANES += [(5, 7), (13, 17), (2, 3, 4)]


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _max_data(dtype, shape, rng):
    """Few distinct values (many ties), NaN, whole-NaN planes, signed zeros, infinities."""
    floating = dtype.kind == "f" or dtype.name == "bfloat16"
    x = rng.integers(0 if dtype == np.uint8 else -3, 4, size=shape).astype(dtype)
    if floating:
        flat = x.reshape(shape[0] * shape[1], -1)
        x[rng.random(shape) < 0.2] = np.nan
        flat[0] = np.nan                                   # a whole-NaN plane
        flat[1] = -np.inf                                  # a plane of -inf
        flat[2, ::2] = np.nan                              # -inf and NaN: -inf wins
        x[x == 0] = -0.0
        x.reshape(-1)[rng.random(x.size) < 0.1] = 0.0      # +0 ties with -0
        flat[3] = -0.0
        flat[3, -1] = 0.0                                  # the first zero, -0, wins
        flat[4, -1] = np.inf
    else:
        info = np.iinfo(dtype)
        x.reshape(shape[0] * shape[1], -1)[0, -1] = info.max   # extremes, last element
        x.reshape(shape[0] * shape[1], -1)[1] = info.min
    return x


@pytest.mark.parametrize("dtype", DTYPES)
def test_whole_plane_max_matches_the_oracle(dtype):
    from reference import ref_adaptive_max_pool, ref_max_pool

    dtype = _dtype(dtype)
    rng = np.random.default_rng(61)
    for plane in PLANES:
        x = _max_data(dtype, (2, 4) + plane, rng)
        want, want_index = ref_adaptive_max_pool(x, (1,) * len(plane))
        got, got_index = ovpool.adaptive_max_pool(x, (1,) * len(plane))
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=str(plane))
        np.testing.assert_array_equal(got_index, want_index, err_msg=str(plane))
        got = ovpool.adaptive_max_pool(x, (1,) * len(plane), index_element_type="i32")[1]
        np.testing.assert_array_equal(got, want_index)
        for axis in (0, 2):
            want, want_index = ref_max_pool(x, plane, axis=axis)
            got, got_index = ovpool.max_pool(x, plane, axis=axis)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
            np.testing.assert_array_equal(got_index, want_index, err_msg=f"{plane} {axis}")
        got = ovpool.max_pool(x, plane, return_indices=False)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=str(plane))
    # A window larger than the plane, over padding only on one side: still the whole plane.
    x = _max_data(dtype, (2, 5, 6, 9), rng)
    want, want_index = ref_max_pool(x, (7, 9), 1, (1, 0), (0, 0))
    got, got_index = ovpool.max_pool(x, (7, 9), 1, (1, 0), (0, 0))
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(got_index, want_index)


@pytest.mark.parametrize("dtype", DTYPES)
def test_whole_plane_averages_match_the_oracle(dtype):
    """Small integers: every sum is exact in every order, so float averages must match the
    oracle exactly too; exclude_pad off over padding divides by the kernel's volume."""
    from reference import ref_adaptive_avg_pool, ref_avg_pool

    dtype = _dtype(dtype)
    rng = np.random.default_rng(67)
    for plane in PLANES:
        x = rng.integers(0 if dtype == np.uint8 else -50, 51, size=(2, 4) + plane).astype(dtype)
        want = ref_adaptive_avg_pool(x, (1,) * len(plane))
        np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, (1,) * len(plane)), want,
                                      err_msg=str(plane))
        np.testing.assert_array_equal(ovpool.avg_pool(x, plane), want, err_msg=str(plane))
    x = rng.integers(0, 51, size=(2, 5, 6, 9)).astype(dtype)
    for exclude_pad in (True, False):
        np.testing.assert_array_equal(
            ovpool.avg_pool(x, (7, 9), 1, (1, 0), (0, 0), exclude_pad=exclude_pad),
            ref_avg_pool(x, (7, 9), 1, (1, 0), (0, 0), exclude_pad=exclude_pad))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
def test_whole_plane_integer_averages_are_exact_at_the_extremes(dtype):
    """Sums far beyond the element type (int64: beyond 64 bits, both signs), ties rounding to
    even. (int8 / uint8 planes of 32 bytes or more are summed 32 at a time by PSADBW in the
    AVX2 build, the last n % 32 from the run's last 32 bytes, masked: lengths around it.)"""
    from reference import ref_adaptive_avg_pool

    info = np.iinfo(dtype)
    rng = np.random.default_rng(71)
    for n in (1, 2, 7, 32, 33, 66, 95, 96, 300):
        x = np.empty((1, 6, n), dtype)
        x[0, 0] = info.max
        x[0, 1] = info.min
        x[0, 2] = rng.integers(info.min, info.max, size=n, endpoint=True)
        x[0, 3] = info.max - rng.integers(0, 3, size=n)
        x[0, 4] = info.min + rng.integers(0, 3, size=n)
        x[0, 5] = rng.choice(np.array([info.min, info.max], dtype), size=n)
        if n % 2 == 0:
            x[0, 5, : n // 2] = info.min if info.min < 0 else 0
            x[0, 5, n // 2:] = 1                            # a sum with .5 to round to even
        np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, 1),
                                      ref_adaptive_avg_pool(x, 1), err_msg=f"n={n}")


def test_whole_plane_float_averages_are_close_to_the_oracle():
    """Random floats: the fixed summation order is within rounding of the float64 oracle."""
    from reference import ref_adaptive_avg_pool

    rng = np.random.default_rng(73)
    for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12), (np.float16, 2e-3)):
        x = rng.standard_normal((2, 3, 9, 31)).astype(dtype) + 3
        np.testing.assert_allclose(ovpool.adaptive_avg_pool(x, (1, 1)).astype(np.float64),
                                   ref_adaptive_avg_pool(x, (1, 1)).astype(np.float64),
                                   rtol=tol)


def _whole_plane_runs(x):
    plane = x.shape[2:]
    return [ovpool.adaptive_avg_pool(x, (1,) * len(plane)), ovpool.avg_pool(x, plane),
            ovpool.adaptive_max_pool(x, (1,) * len(plane)),
            ovpool.max_pool(x, plane, return_indices=False)]


def _signed_float_data(rng, shape):
    x = (rng.standard_normal(shape) * 1e3).astype(np.float32)
    x[rng.random(shape) < 0.2] = -0.0
    x[rng.random(shape) < 0.02] = np.inf
    x[rng.random(shape) < 0.02] = -np.inf
    _add_nan_payloads(x, rng, 0.03)
    x.reshape(-1, x.shape[-1])[:3] = -0.0                    # whole planes of -0
    return x


@pytest.mark.parametrize("shape", [(2, 700, 5, 5), (1, 40, 300), (3, 300, 4, 3, 2)])
def test_whole_plane_results_keep_their_bits_over_threads(shape):
    """Plane blocks are split between threads differently for one and two threads: the same
    bits either way (float sums in one order, NaN payloads and signed zeros kept)."""
    rng = np.random.default_rng(79)
    x = _signed_float_data(rng, shape)
    threads = ovpool.get_num_threads()
    try:
        results = []
        for n in (1, 2):
            ovpool.set_num_threads(n)
            results.append([a for r in _whole_plane_runs(x) for a in
                            (r if isinstance(r, tuple) else (r,))])
    finally:
        ovpool.set_num_threads(threads)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_whole_plane_results_keep_the_baseline_bits(monkeypatch):
    """The AVX2 reductions (vector maxima, searches, partial sums) against the baseline build's
    loops, bit for bit: float32 with signed zeros, infinities and NaN payloads, and the other
    types with random data."""
    import ml_dtypes

    rng = np.random.default_rng(83)
    cases = [_signed_float_data(rng, (2, 5, 37)), _signed_float_data(rng, (1, 3, 9, 31))]
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.uint8, np.int32,
                  np.int64):
        cases.append((rng.standard_normal((2, 3, 7, 19)) * 100).astype(dtype))
    for dtype in (np.int8, np.uint8):  # (byte planes sixteen at a time)
        cases.append((rng.standard_normal((2, 20, 50)) * 100).astype(dtype))
    _assert_builds_agree_bitwise(monkeypatch, lambda: [r for x in cases
                                                       for r in _whole_plane_runs(x)])


def _first_operand_sum(taps):
    """A window's sum as core/average.hpp's window_sum orders it (eight partial sums over 16
    or more taps, combined pairwise, then the rest in order), every addition keeping its
    first operand's NaN (quieted) when one is a NaN, as x86 does: the NaN a sum of NaNs gives."""
    dtype = taps.dtype
    bits = np.dtype(f"u{dtype.itemsize}")
    quiet = bits.type(1 << (np.finfo(dtype).nmant - 1))

    def add(a, b):
        for v in (a, b):
            if np.isnan(v):
                return (np.array([v], dtype).view(bits) | quiet).view(dtype)[0]
        with np.errstate(all="ignore"):
            return dtype.type(a + b)

    total, t, n = dtype.type(0), 0, len(taps)
    if n >= 16:
        s = [dtype.type(0)] * 8
        for t in range(0, n - n % 8, 8):
            s = [add(s[k], taps[t + k]) for k in range(8)]
        t = n - n % 8
        total = add(add(add(s[0], s[1]), add(s[2], s[3])), add(add(s[4], s[5]), add(s[6], s[7])))
    for v in taps[t:]:
        total = add(total, v)
    return total


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("plane", [(9, 31), (37,), (12,)])
def test_whole_plane_nan_sums_keep_the_first_operands_payload(monkeypatch, dtype, plane):
    """Planes of many NaNs of different payloads, infinities of both signs and signed zeros:
    a NaN average has the bits of the window's sum with every addition's first operand kept
    first (which NaN survives a sum of NaNs is otherwise up to the compiler's operand order,
    and differed between the builds), in both builds and on one or two threads."""
    rng = np.random.default_rng(97)
    x = _signed_float_data(rng, (2, 5) + plane).astype(dtype)
    flat = x.reshape(10, -1)
    bits = np.dtype(f"u{x.dtype.itemsize}")
    payloads = rng.integers(1, 1 << 20, size=flat.shape).astype(bits)
    nan_at = rng.random(flat.shape) < 0.2
    flat[nan_at] = (np.array(np.nan, dtype).view(bits) | payloads)[nan_at].view(dtype)
    expected = np.array([_first_operand_sum(row) for row in flat], dtype)
    assert np.isnan(expected).sum() >= 5  # (most planes hold two NaNs or more)
    threads = ovpool.get_num_threads()
    modules = [None] + ([_avx2_build()] if _avx2_build() is not None else [])
    try:
        for module in modules:
            if module is not None:
                from test_kernels import _use_kernels
                _use_kernels(monkeypatch, module)
            for n in (1, 2):
                ovpool.set_num_threads(n)
                got = ovpool.adaptive_avg_pool(x, (1,) * len(plane)).reshape(-1)
                nan = np.isnan(expected)
                np.testing.assert_array_equal(np.isnan(got), nan)
                np.testing.assert_array_equal(got[nan].view(bits), expected[nan].view(bits))
    finally:
        ovpool.set_num_threads(threads)


# Small planes (at most 64 elements) of float32, float16, bfloat16, int8 and uint8 are averaged
# 16 planes at a time, transposed (reduce.hpp's lanes path); 39 planes: two blocks and seven
# planes left over, which go plane by plane. (2, 16, n): the last block ends the input, where
# the tile transposes of planes shorter than a tile must not read past it. int8 and uint8 planes
# of up to eight elements go four at a time through byte shuffles in the AVX2 build, whose
# 16-byte loads must not read past the input either.
LANE_PLANES = [(n,) for n in (1, 3, 6, 7, 8, 9, 15, 16, 17, 25, 31, 40, 64)] + [(5, 5), (2, 3)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.int8, np.uint8])
def test_whole_plane_lanes_averages_match_planes_alone(monkeypatch, dtype):
    """Every plane of a lanes call: the oracle's value (integers: exact; floats: sums of small
    integers, exact in any order, with -0 planes and NaN) and the bits of that plane pooled on
    its own, with one or two threads and in both builds."""
    from reference import ref_adaptive_avg_pool

    dtype = _dtype(dtype)
    rng = np.random.default_rng(89)
    floating = dtype.kind == "f" or dtype.name == "bfloat16"
    cases = []
    for plane in LANE_PLANES:
        for batch in ((3, 13), (2, 16)):
            shape = batch + plane
            if floating:
                x = rng.integers(-9, 10, size=shape).astype(dtype)
                x[x == 0] = -0.0
                x.reshape(-1)[rng.random(x.size) < 0.02] = np.nan
                x.reshape(batch[0] * batch[1], -1)[5] = -0.0
            else:
                info = np.iinfo(dtype)
                x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
                x.reshape(batch[0] * batch[1], -1)[4] = info.max
                x.reshape(batch[0] * batch[1], -1)[20] = info.min
            cases.append(x)
    threads = ovpool.get_num_threads()
    try:
        for x in cases:
            ones = (1,) * (x.ndim - 2)
            want = ref_adaptive_avg_pool(x, ones)
            results = []
            for n in (1, 2):
                ovpool.set_num_threads(n)
                results.append(ovpool.adaptive_avg_pool(x, ones))
            ovpool.set_num_threads(1)
            alone = np.concatenate([ovpool.adaptive_avg_pool(x[i:i + 1, c:c + 1], ones)
                                    for i in range(x.shape[0]) for c in range(x.shape[1])])
            for got in results:
                np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64),
                                              err_msg=str(x.shape))
                np.testing.assert_array_equal(np.signbit(got.astype(np.float64)),
                                              np.signbit(want.astype(np.float64)))
                np.testing.assert_array_equal(got.reshape(-1).view(np.uint8),
                                              alone.reshape(-1).view(np.uint8))
    finally:
        ovpool.set_num_threads(threads)
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, lambda: [
            ovpool.adaptive_avg_pool(x, (1,) * (x.ndim - 2)) for x in cases])


def test_whole_plane_lanes_float_sums_keep_the_order_of_a_plane_alone():
    """Random floats whose sums round: the lanes' eight partial sums (planes of 16 or more) and
    sums one by one give the bits of each plane pooled alone."""
    rng = np.random.default_rng(97)
    for plane in LANE_PLANES:
        for dtype in (np.float32, np.float16):
            x = (rng.standard_normal((3, 13) + plane) * 100).astype(dtype)
            ones = (1,) * len(plane)
            got = ovpool.adaptive_avg_pool(x, ones)
            alone = np.concatenate([ovpool.adaptive_avg_pool(x[i:i + 1, c:c + 1], ones)
                                    for i in range(3) for c in range(13)])
            np.testing.assert_array_equal(got.reshape(-1).view(np.uint8),
                                          alone.reshape(-1).view(np.uint8), err_msg=str(plane))


@pytest.mark.parametrize("dtype", DTYPES)
def test_whole_plane_max_finds_the_largest_in_every_lane(dtype):
    """Plane p holds its one largest value at position p: the vector reduction's steps
    (halves, then rotations down to the element size) each bring some lane's value out."""
    dtype = _dtype(dtype)
    for n in (8, 16, 33, 50, 64, 65):
        x = np.zeros((1, n, n), dtype=dtype)
        if dtype.kind in "iu":
            x[...] = np.iinfo(dtype).min
            x[0, np.arange(n), np.arange(n)] = np.iinfo(dtype).max
        else:
            x[...] = -2.0
            x[0, np.arange(n), np.arange(n)] = 3.0
        got = ovpool.max_pool(x, n, return_indices=False)
        np.testing.assert_array_equal(got, x.max(axis=2, keepdims=True), err_msg=str(n))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_whole_byte_planes_sixteen_at_a_time_match_the_oracle(dtype):
    """Byte planes of 16 bytes and more go sixteen at a time (each folded to 16 bytes, the
    folds halved together): planes of one and of several vectors (overlapping last loads),
    plane counts that leave planes over, with and without indices (the first maximum found
    after), over one and two threads."""
    from reference import ref_adaptive_max_pool, ref_max_pool

    rng = np.random.default_rng(97)
    info = np.iinfo(dtype)
    before = ovpool.get_num_threads()
    for n in (16, 17, 31, 32, 33, 50, 64, 100, 257):
        for planes in (16, 37, 70):
            x = rng.integers(info.min, info.max, size=(1, planes, n), endpoint=True).astype(dtype)
            x[0, ::3] //= 16                                     # ties
            x[0, 5] = info.min
            x[0, 6, -1] = info.max                               # the overlapping last load
            want, want_index = ref_max_pool(x, (n,), axis=0)
            want_plane_index = ref_adaptive_max_pool(x, (1,))[1]
            for threads in (1, 2):
                ovpool.set_num_threads(threads)
                try:
                    got, got_index = ovpool.max_pool(x, n)
                    values = ovpool.max_pool(x, n, return_indices=False)
                    plane_index = ovpool.adaptive_max_pool(x, (1,), index_element_type="i32")[1]
                finally:
                    ovpool.set_num_threads(before)
                np.testing.assert_array_equal(got, want, err_msg=f"{n} {planes}")
                np.testing.assert_array_equal(values, want, err_msg=f"{n} {planes}")
                np.testing.assert_array_equal(got_index, want_index, err_msg=f"{n} {planes}")
                np.testing.assert_array_equal(plane_index, want_plane_index,
                                              err_msg=f"{n} {planes}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_whole_plane_16bit_max_by_keys_matches_the_oracle(monkeypatch, dtype):
    """float16 / bfloat16 planes are reduced as int16 keys (the largest key, then the first
    element of it): every bit pattern in planes of 130 elements (NaN payloads, both zeros, both
    infinities, ties from repeats), planes of zeros of both signs (the first zero wins, read
    from the input), all-NaN planes of different payloads (the first NaN), -inf next to NaN;
    values, int64 and int32 indices against the oracle, and the same bits from both builds."""
    from reference import ref_max_pool
    from test_kernels import _every_16bit_pattern_shuffled

    dtype = _dtype(dtype)
    x = _every_16bit_pattern_shuffled(dtype, (2, 260, 130), 89)
    bits = x.view(np.uint16)
    nan = 0x7e00 if dtype == np.float16 else 0x7fc0
    bits[0, 0] = 0x8000                                   # -0 first, then +0: -0 wins
    bits[0, 0, 50:] = 0x0000
    bits[0, 1] = 0x0000
    bits[0, 1, 7::3] = 0x8000
    bits[0, 2] = nan | 0x8000                             # all NaN: the first payload
    bits[0, 2, 1:] = nan + 5
    bits[0, 3] = nan + 3
    bits[0, 3, 99] = 0xfc00 if dtype == np.float16 else 0xff80  # -inf beats NaN
    # (The oracle gives a canonical NaN for an all-NaN plane; the kernels keep the bits of its
    # first NaN, the element at the oracle's index.)
    first = np.take_along_axis(bits, ref_max_pool(x, (130,), axis=2)[1], axis=2)
    for args in [((130,),), ((140,), 1, 4, 6)]:
        want, want_index = ref_max_pool(x, *args)
        want_bits = np.where(np.isnan(want), first, want.view(np.uint16))
        assert np.isnan(want[0, 2, 0]) and want_bits[0, 2, 0] == nan | 0x8000
        got, got_index = ovpool.max_pool(x, *args)
        np.testing.assert_array_equal(got.view(np.uint16), want_bits)
        np.testing.assert_array_equal(got_index, want_index)
        got = ovpool.max_pool(x, *args, index_element_type="i32", axis=2)[1]
        np.testing.assert_array_equal(got, ref_max_pool(x, *args, axis=2)[1])
        got = ovpool.max_pool(x, *args, return_indices=False)
        np.testing.assert_array_equal(got.view(np.uint16), want_bits)
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, lambda: [
            ovpool.max_pool(x, 130), ovpool.adaptive_max_pool(x, 1),
            ovpool.max_pool(x[:, :, :17], 17, return_indices=False)])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_whole_plane_16bit_max_keeps_the_first_offset_in_every_lane(monkeypatch, dtype):
    """The AVX2 build reduces planes of 16 to 32768 16-bit floats in one sweep, each lane of
    sixteen keeping its largest key and the offset where it first met it (the last vector
    overlapping the one before): the plane's largest value at every position of planes of
    16, 17, 31 and 141 elements (the length of a sweep configuration), repeated later in the
    plane (the first one wins), as a zero of either sign or NaN (read from the input at the
    winner), and at the ends of planes of 32768 elements and of 32769 (past the one-sweep
    limit: keys stored, then searched); the oracle's values and indices, both builds alike."""
    from reference import ref_max_pool

    dtype = _dtype(dtype)
    rng = np.random.default_rng(43)
    cases = []
    for n in (16, 17, 31, 141):
        x = np.full((3, n, n), -5.0, dtype=dtype)
        x[0, np.arange(n), np.arange(n)] = 2.0
        x[0, np.arange(n), (np.arange(n) + 7) % n] = np.where(np.arange(n) + 7 >= n, -6.0, 2.0)
        x[1] = np.where(rng.random((n, n)) < 0.5, -np.inf, np.nan).astype(dtype)
        x[1, np.arange(n), np.arange(n)] = -0.0
        x[1, np.arange(n), (np.arange(n) * 5 + 3) % n] = np.where(
            (np.arange(n) * 5 + 3) % n > np.arange(n), 0.0, -7.0)
        x[2] = np.nan
        x.view(np.uint16)[2, np.arange(n), np.arange(n)] ^= 0x8001   # the first NaN's bits
        cases.append(x)
    for n in (32768, 32769):
        x = rng.uniform(-1, 1, size=(1, 6, n)).astype(dtype)
        for plane, at in enumerate((0, 15, n - 17, n - 16, n - 2, n - 1)):
            x[0, plane, at] = 4.0
        x[0, 0, n - 1] = 4.0
        cases.append(x)
    for x in cases:
        n = x.shape[-1]
        want, want_index = ref_max_pool(x, (n,))
        nan = np.isnan(want)
        want_bits = want.view(np.uint16).copy()
        within = ref_max_pool(x, (n,), axis=2)[1]
        want_bits[nan] = np.take_along_axis(x.view(np.uint16), within, axis=2)[nan]
        got, got_index = ovpool.max_pool(x, n)
        np.testing.assert_array_equal(got_index, want_index, err_msg=str(n))
        np.testing.assert_array_equal(got.view(np.uint16), want_bits, err_msg=str(n))
        np.testing.assert_array_equal(ovpool.max_pool(x, n, return_indices=False).view(np.uint16),
                                      want_bits, err_msg=str(n))
    if _avx2_build() is not None:
        _assert_builds_agree_bitwise(monkeypatch, lambda: [ovpool.max_pool(x, x.shape[-1])
                                                           for x in cases])


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_whole_plane_sums_four_at_a_time_keep_the_baseline_bits(monkeypatch, dtype):
    """The AVX2 build sums float planes of 16 elements or more four at a time (planes the lanes
    do not take: fewer than a block, or more than 64 elements): the bits of the baseline
    build's plane-by-plane sums, for lengths around multiples of eight, numbers of planes that
    leave one to three over, NaN payloads (a NaN total is summed again in one order), signed
    zeros and infinities, on one or two threads."""
    dtype = _dtype(dtype)
    rng = np.random.default_rng(103)
    cases = [_signed_float_data(rng, (1, planes, n)).astype(dtype)
             for n, planes in ((16, 4), (17, 5), (23, 6), (65, 7), (72, 9), (140, 10),
                               (289, 11))]
    cases.append(_signed_float_data(rng, (2, 9, 17, 17)).astype(dtype))
    # Finite sums that round (the NaN and infinite totals above hide most of them).
    cases += [(rng.standard_normal((1, 7, n)) * 100).astype(dtype) for n in (16, 31, 140, 289)]

    def run():
        results = []
        threads = ovpool.get_num_threads()
        try:
            for n in (1, 2):
                ovpool.set_num_threads(n)
                for x in cases:
                    plane = x.shape[2:]
                    results += [ovpool.adaptive_avg_pool(x, (1,) * len(plane)),
                                ovpool.avg_pool(x, plane)]
        finally:
            ovpool.set_num_threads(threads)
        return results

    _assert_builds_agree_bitwise(monkeypatch, run)
