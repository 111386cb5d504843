"""Calls with fewer planes than threads: each plane's output rows are cut into parts pooled
on their own (core/row_split.hpp). The parts must give the oracle's results, the bits of the
unsplit call (one thread) for every thread count, and the same bits in both kernel builds."""

import ml_dtypes
import numpy as np
import pytest

import ovpool
from reference import ref_adaptive_max_pool, ref_avg_pool, ref_max_pool

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.uint8, np.int32,
          np.int64]

# (shape, kernel, strides, pads_begin, pads_end, dilations): one or two planes of 2-D and 3-D
# inputs, with edge windows, dilations, strides past the kernel and (kernel 1 with padding)
# empty windows on the first axis and on a later one.
FIXED = [
    ((1, 1, 23, 19), (3, 2), (1, 2), (1, 0), (1, 1), (1, 2)),
    ((1, 2, 17, 30), (4, 3), (2, 1), (2, 1), (1, 1), (2, 1)),
    ((1, 1, 40, 9), (2, 5), (3, 1), (0, 2), (1, 2), (1, 1)),
    ((1, 1, 9, 7, 8), (3, 2, 3), (1, 2, 1), (1, 0, 1), (1, 1, 1), (2, 1, 1)),
    ((2, 1, 12, 11), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1)),
]


@pytest.fixture(autouse=True)
def _tiny_inputs_go_parallel(monkeypatch):
    """These inputs are far below a thread's bytes (core/threads.hpp): lowered, so that a call
    gets as many workers as threads, more than it has planes."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)


def _values(rng, dtype, shape):
    """Small integers (ties) in `dtype`; for floats also NaN runs and signed zeros."""
    x = rng.integers(0 if dtype == np.uint8 else -3, 4, size=shape).astype(dtype)
    if not np.issubdtype(np.dtype(dtype), np.integer):
        x[rng.random(shape) < 0.15] = np.nan
        x.reshape(-1)[:5] = np.nan
        x[x == 0] = -0.0
        x.reshape(-1)[rng.random(x.size) < 0.1] = 0.0
    return x


def _on_threads(threads, run):
    saved = ovpool.get_num_threads()
    try:
        ovpool.set_num_threads(threads)
        result = run()
    finally:
        ovpool.set_num_threads(saved)
    return [a for r in result for a in (r if isinstance(r, tuple) else (r,))]


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def _exclude_pad_pads(pads, k, d):
    """Pads exclude_pad allows (each smaller than its dilated kernel)."""
    return [min(p, (kk - 1) * dd) for p, kk, dd in zip(pads, k, d)]


def _calls(x, shape, k, s, pb, pe, d):
    del shape
    epb, epe = _exclude_pad_pads(pb, k, d), _exclude_pad_pads(pe, k, d)
    return lambda: [
        ovpool.max_pool(x, k, s, pb, pe, d, axis=0, rounding_type="ceil_torch"),
        ovpool.max_pool(x, k, s, pb, pe, d, axis=2, index_element_type="i32"),
        ovpool.max_pool(x, k, s, pb, pe, d, return_indices=False, rounding_type="ceil"),
        ovpool.avg_pool(x, k, s, epb, epe, d, exclude_pad=True),
        ovpool.avg_pool(x, k, s, pb, pe, d, exclude_pad=False, rounding_type="ceil_torch"),
        ovpool.adaptive_max_pool(x, [max(1, n // 3) for n in x.shape[2:]]),
        ovpool.adaptive_avg_pool(x, [max(1, n // 2) + 1 for n in x.shape[2:]]),
    ]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(FIXED)))
def test_parts_of_planes_match_the_unsplit_call_and_the_oracle(dtype, case):
    shape, k, s, pb, pe, d = FIXED[case]
    x = _values(np.random.default_rng(case), dtype, shape)
    run = _calls(x, *FIXED[case])
    single = _on_threads(1, run)
    for threads in (2, 3, 5):
        for a, b in zip(_on_threads(threads, run), single):
            _same_bits(a, b)
    want, want_index = ref_max_pool(x, k, s, pb, pe, d, rounding_type="ceil_torch")
    _same_bits(single[0], want)
    np.testing.assert_array_equal(single[1], want_index)
    want2, want2_index = ref_max_pool(x, k, s, pb, pe, d, axis=2)
    _same_bits(single[2], want2)
    np.testing.assert_array_equal(single[3], want2_index)
    want_avg = ref_avg_pool(x, k, s, _exclude_pad_pads(pb, k, d), _exclude_pad_pads(pe, k, d),
                            d, exclude_pad=True)
    if np.issubdtype(np.dtype(dtype), np.integer):
        np.testing.assert_array_equal(single[5], want_avg)
    else:
        np.testing.assert_allclose(single[5].astype(np.float64), want_avg.astype(np.float64),
                                   rtol=1e-2, atol=1e-2, equal_nan=True)
    want_a, want_a_index = ref_adaptive_max_pool(x, [max(1, n // 3) for n in x.shape[2:]])
    _same_bits(single[7], want_a)
    np.testing.assert_array_equal(single[8], want_a_index)


def test_large_plane_split_keeps_the_bits_of_one_thread():
    """A plane past the thread rule's bytes (no lowered limit needed): the parts' results,
    indices included, are those of one thread."""
    from ovpool import pooling
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 1, 300, 517)).astype(np.float32)
    x[rng.random(x.shape) < 0.01] = np.nan
    saved = pooling._BYTES_PER_THREAD
    pooling._BYTES_PER_THREAD = pooling._kernels.BYTES_PER_WORKER
    try:
        run = _calls(x, x.shape, (3, 4), (2, 1), (1, 2), (1, 1), (1, 2))
        for a, b in zip(_on_threads(2, run), _on_threads(1, run)):
            _same_bits(a, b)
    finally:
        pooling._BYTES_PER_THREAD = saved


def test_kernel_builds_agree_on_split_planes(monkeypatch):
    from test_kernels import _assert_builds_agree_bitwise, _avx2_build
    if _avx2_build() is None:
        pytest.skip("no AVX2 kernel build for this CPU/platform")
    rng = np.random.default_rng(11)
    inputs = [(_values(rng, dtype, FIXED[i][0]), FIXED[i]) for dtype in DTYPES
              for i in range(len(FIXED))]
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        a for x, case in inputs for a in _on_threads(3, _calls(x, *case))])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_whole_row_windows_keep_the_bits_of_one_thread(dtype):
    """Average windows of whole rows (adaptive 2x1, a global-width kernel): a part of one
    output row would be a whole-plane window, which reduce.hpp sums in another order than
    the plane's passes, so such calls are not split; with fractional inputs, any other order
    gives other bits."""
    rng = np.random.default_rng(17)
    for shape in [(1, 1, 12, 13), (1, 1, 31, 40), (1, 1, 6, 5, 7)]:
        x = rng.standard_normal(shape).astype(dtype)
        rank = len(shape) - 2
        kernel, strides = (shape[2] // 2,) + shape[3:], (shape[2] // 2,) + (1,) * (rank - 1)
        run = lambda: [ovpool.adaptive_avg_pool(x, [2] + [1] * (rank - 1)),
                       ovpool.avg_pool(x, kernel, strides)]
        single = _on_threads(1, run)
        for threads in (2, 3):
            for a, b in zip(_on_threads(threads, run), single):
                _same_bits(a, b)
