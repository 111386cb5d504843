"""Adaptive max pooling with indices that upsamples (every window one or two elements along an
axis), through the passes carrying tap codes (core/max_coded.hpp).

Those passes take planes of two or three axes with indices outside the irregular-window lanes
(fewer planes than half a group) and, for two axes, planes of more than 1024 elements (smaller
ones take each window on its own). When the values are kept in their own type (not 16-bit
floats) the pass over axis 0 writes them straight into the output rather than into a buffer
copied out after; one axis, and 16-bit floats, still go through the buffer.
"""

import numpy as np
import pytest

import ovpool
from test_kernels import _assert_builds_agree_bitwise, _avx2_build, _max_pool_input

pytestmark = pytest.mark.usefixtures("max_passes_on_small_planes")

DTYPES = [np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64, np.float16]

# (input shape, adaptive output sizes): outputs not multiples of the inputs (70 of 31), exact
# multiples (66 of 33, 96 of 32), upsampling along one axis and downsampling along the other,
# an axis kept at its length, three axes, and one axis (the buffer's path).
SHAPES = [
    ((1, 3, 31, 37), [(70, 54), (62, 111)]),
    ((1, 2, 33, 32), [(66, 96)]),
    ((1, 3, 26, 44), [(57, 13), (9, 100)]),
    ((2, 1, 6, 9, 7), [(13, 9, 15), (12, 18, 14)]),
    ((1, 3, 200), [(450,)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_upsampling_matches_the_oracle(dtype):
    """Values bit for bit (NaN, all-NaN windows, +0 against -0) and int64 / int32 indices
    against the oracle, ties (small integers) going to the first element in row-major window
    order, for one and two threads."""
    from reference import ref_adaptive_max_pool

    rng = np.random.default_rng(71)
    for shape, sizes in SHAPES:
        x = _max_pool_input(rng, dtype, shape, 5)
        for size in sizes:
            want, want_index = ref_adaptive_max_pool(x, size)
            for threads in (1, 2):
                with ovpool.num_threads(threads):
                    got, got_index = ovpool.adaptive_max_pool(x, size)
                    got32 = ovpool.adaptive_max_pool(x, size, index_element_type="i32")[1]
                np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
                np.testing.assert_array_equal(got_index, want_index)
                np.testing.assert_array_equal(got32, want_index)


def test_upsampling_into_an_output_that_held_other_values():
    """The values written straight into the output replace whatever it held (a caller's
    `out` filled with a sentinel first), indices as the oracle's."""
    from reference import ref_adaptive_max_pool

    rng = np.random.default_rng(72)
    x = _max_pool_input(rng, np.int32, (1, 3, 31, 37), 0)
    want, want_index = ref_adaptive_max_pool(x, (70, 54))
    out = np.full(want.shape, 99, np.int32)
    out_index = np.full(want.shape, -1, np.int64)
    ovpool.adaptive_max_pool(x, (70, 54), out=out, out_indices=out_index)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(out_index, want_index)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_upsampling_keeps_the_baseline_bits(monkeypatch):
    """The same bytes from both kernel builds, NaNs included."""
    rng = np.random.default_rng(73)
    inputs = [(_max_pool_input(rng, dtype, shape, 5), sizes[0])
              for dtype in DTYPES for shape, sizes in SHAPES]

    def run():
        return [ovpool.adaptive_max_pool(x, size, index_element_type="i32")
                for x, size in inputs]

    _assert_builds_agree_bitwise(monkeypatch, run)
