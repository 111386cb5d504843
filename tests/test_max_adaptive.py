"""Max pooling over irregular windows, a group of planes side by side (core/max_adaptive.hpp).

The path takes calls whose window tables have some axis with mostly irregular windows
(adaptive sizes that do not divide the input), at least half a group of planes (a group is 32
planes of bytes, 8 of 8-byte values, 16 otherwise), plane offsets that fit the value's width
(bytes: planes of at most 256 elements) and buffers within 1 MiB per worker (512 KiB for
values alone).
"""

import numpy as np
import pytest

import ovpool
from test_kernels import _add_nan_payloads, _assert_builds_agree_bitwise, _avx2_build
from test_kernels import _assert_max_pool_matches, _max_pool_input

# (Their planes reach the passes and the irregular-window lanes, not the tap table.)
pytestmark = pytest.mark.usefixtures("max_passes_on_small_planes")

DTYPES = [np.float32, np.float16, "bfloat16", np.float64, np.int8, np.uint8, np.int32, np.int64]

# (input shape, adaptive output sizes): planes of more than 128 elements (smaller ones go
# through max_lanes.hpp's tap tables); plane counts below, at and past a group (and not a
# multiple of it); last axes shorter than a vector transpose (5), a multiple of one (16) and
# past one (17, 15, 23); 1 to 3 spatial axes; downsampling and upsampling.
SHAPES = [
    ((2, 20, 13, 17), [(7, 7), (4, 9), (13, 5)]),
    ((1, 9, 14, 11, 16), [(2, 3, 4), (5, 4, 7)]),
    ((3, 11, 150), [(11,), (37,)]),
    ((1, 40, 29, 5), [(4, 3), (7, 2)]),
    ((1, 35, 6, 23), [(4, 5), (9, 17)]),
    ((2, 9, 15, 16), [(12, 7), (4, 6)]),
]


def _input(rng, dtype, shape):
    return _max_pool_input(rng, dtype, shape, 9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_irregular_windows_match_the_oracle(dtype):
    """Values bit for bit (NaN, all-NaN windows, +0 against -0) and int64 / int32 indices
    against the oracle, ties going to the first element in row-major window order; values
    alone too."""
    from reference import ref_adaptive_max_pool

    rng = np.random.default_rng(41)
    for shape, sizes in SHAPES:
        x = _input(rng, dtype, shape)
        for size in sizes:
            want, want_index = ref_adaptive_max_pool(x, size)
            got, got_index = ovpool.adaptive_max_pool(x, size)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
            np.testing.assert_array_equal(got_index, want_index)
            got32 = ovpool.adaptive_max_pool(x, size, index_element_type="i32")[1]
            assert got32.dtype == np.int32
            np.testing.assert_array_equal(got32, want_index)
            alone = ovpool.adaptive_max_pool(x, size, return_indices=False)
            np.testing.assert_array_equal(alone.view(np.uint8), want.view(np.uint8))


def test_first_maximum_wins_across_rows_and_columns():
    """A hand-made plane whose windows each hold the maximum twice, the later one earlier in
    its column (so a column-first order would pick it): the row-major first one wins."""
    x = np.zeros((1, 16, 5, 7), np.float32)
    x[:, :, 0, 2] = 1.0  # window (0, 0) of 5x7 -> 2x2 reads rows 0..2, columns 0..3
    x[:, :, 1, 0] = 1.0
    x[:, :, 4, 6] = np.nan  # window (1, 1): rows 2..4, columns 3..6
    x[:, :, 2, 3] = -0.0    # ties with +0: first in windows (1, 1); (0, 1) and (1, 0) start with +0
    values, index = ovpool.adaptive_max_pool(x, (2, 2))
    np.testing.assert_array_equal(index, np.broadcast_to([[2, 3], [14, 17]], index.shape))
    np.testing.assert_array_equal(values, np.broadcast_to([[1.0, 0.0], [0.0, 0.0]], values.shape))
    np.testing.assert_array_equal(np.signbit(values[0, :, :, :]),
                                  np.broadcast_to([[False, False], [False, True]], (16, 2, 2)))


def test_fixed_windows_with_empty_ones():
    """Fixed windows whose table is mostly edge windows (padding past the input leaves some
    empty) take the path too: empty windows give the lowest value and index 0."""
    rng = np.random.default_rng(43)
    for dtype in (np.float32, np.int8, np.int64):
        x = _input(rng, dtype, (2, 12, 17, 9))
        for k, s, pb, pe, d in [(3, 4, 1, 5, 1), (2, 5, 0, 6, 2), (4, 3, 2, 2, 1)]:
            _assert_max_pool_matches(x, k, s, pb, pe, d)


def test_indices_across_planes():
    """Indices counted across planes (max_pool's axis 0)."""
    from reference import ref_max_pool

    rng = np.random.default_rng(47)
    x = _input(rng, np.float32, (2, 24, 13, 11))
    # Along the last axis two windows, both cut short (by the padding, by the input's end).
    args = ((3, 7), (2, 6), 1, 3, 1)
    want, want_index = ref_max_pool(x, *args, axis=0, rounding_type="ceil_torch")
    got, got_index = ovpool.max_pool(x, *args, axis=0, rounding_type="ceil_torch")
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(got_index, want_index)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_irregular_windows_keep_the_baseline_bits(monkeypatch):
    """The AVX2 build moves planes into and out of lanes by vector transposes: the same bits
    as the baseline build's scalar copies (NaN payloads, signed zeros), for every dtype, and
    for one and two threads."""
    rng = np.random.default_rng(53)
    inputs = [_input(rng, dtype, shape) for dtype in DTYPES for shape, _ in SHAPES[:3]]
    payloads = rng.choice(np.array([0.0, -0.0, 1.0], np.float32), size=(2, 20, 13, 17))
    _add_nan_payloads(payloads, rng, 0.3)
    inputs.append(payloads)

    def run():
        results = []
        for x in inputs:
            for size in ((5, 3, 7)[:x.ndim - 2], (3, 9, 2)[:x.ndim - 2]):
                results.append(ovpool.adaptive_max_pool(x, size, index_element_type="i32"))
        return results

    _assert_builds_agree_bitwise(monkeypatch, run)
    with ovpool.num_threads(1):
        one = run()
    with ovpool.num_threads(2):
        two = run()
    for (a, ai), (b, bi) in zip(one, two):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
        np.testing.assert_array_equal(ai, bi)


# (shape, adaptive output sizes) of 16-bit floats in the lanes as int16 keys.
KEYED_SHAPES = [
    ((2, 20, 13, 17), [(7, 7), (4, 9)]),
    ((1, 9, 14, 11, 16), [(5, 4, 7)]),
    ((3, 11, 150), [(37,)]),
]


def _every_16bit_pattern(dtype, shape, seed):
    """_every_16bit_pattern_shuffled (bfloat16 by name) with its first 40 elements NaN, so
    that some windows hold only NaNs."""
    from test_kernels import _every_16bit_pattern_shuffled

    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    x = _every_16bit_pattern_shuffled(dtype, shape, seed)
    x.reshape(-1)[:40] = np.nan
    return x


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_16bit_float_keys_in_lanes_match_the_oracle(dtype):
    """float16 and bfloat16 go into the lanes as int16 keys: on distinct bit patterns (NaN
    payloads, signed zeros, infinities) and whole-NaN windows, the oracle's indices (int64 and
    int32), and as each value the bits of the input's element at its index (a zero or NaN
    winner read back from the input, the others from their keys); values alone the same."""
    from reference import ref_adaptive_max_pool

    for shape, sizes in KEYED_SHAPES:
        x = _every_16bit_pattern(dtype, shape, 113)
        bits = x.view(np.uint16).reshape(shape[0] * shape[1], -1)
        for size in sizes:
            want_index = ref_adaptive_max_pool(x, size)[1]
            got, got_index = ovpool.adaptive_max_pool(x, size)
            np.testing.assert_array_equal(got_index, want_index)
            flat_index = got_index.reshape(bits.shape[0], -1)
            want_bits = np.take_along_axis(bits, flat_index, axis=1).reshape(got.shape)
            np.testing.assert_array_equal(got.view(np.uint16), want_bits)
            got32 = ovpool.adaptive_max_pool(x, size, index_element_type="i32")[1]
            np.testing.assert_array_equal(got32, want_index)
            alone = ovpool.adaptive_max_pool(x, size, return_indices=False)
            np.testing.assert_array_equal(alone.view(np.uint16), want_bits)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_16bit_float_keys_in_lanes_keep_the_baseline_bits(monkeypatch):
    """The keys' lanes (16-bit transposes in and out in AVX2 builds, copies in the baseline)
    give the same bits and indices from both builds."""
    inputs = [_every_16bit_pattern(dtype, shape, 127)
              for dtype in (np.float16, "bfloat16") for shape, _ in KEYED_SHAPES]
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.adaptive_max_pool(x, size, index_element_type="i32")
        for x in inputs for size in ((5, 3, 7)[:x.ndim - 2], (3, 9, 2)[:x.ndim - 2])])
