"""Max pooling with indices over windows with no common tap count and stride (adaptive windows,
the edge windows of fixed ones), which the core reduces without a data-dependent branch and,
for float32 rows, eight windows at a time with gathers (max_windows_by_tap): rows of windows
past one and two blocks of eight, 1-D planes too large for the tiny-plane path (the last-axis
pass), 2-D planes of the direct path, ties, NaN, all-NaN windows and signed zeros."""

import numpy as np
import pytest

import ovpool
from test_kernels import _add_nan_payloads, _assert_builds_agree_bitwise, _avx2_build

# (Their planes reach the passes and the irregular-window lanes, not the tap table.)
pytestmark = pytest.mark.usefixtures("max_passes_on_small_planes")


def _data(dtype, shape, rng):
    x = rng.integers(0 if dtype == np.uint8 else -3, 4, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16":
        x[rng.random(shape) < 0.15] = np.nan
        x.reshape(-1, shape[-1])[0, :40] = np.nan            # whole-NaN windows
        x[x == 0] = -0.0
        x.reshape(-1)[rng.random(x.size) < 0.1] = 0.0      # +0 ties with -0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.float64, np.int8,
                                   np.uint8, np.int32, np.int64])
def test_irregular_windows_match_the_oracle(dtype):
    from reference import ref_adaptive_max_pool, ref_max_pool

    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    rng = np.random.default_rng(89)
    for shape, sizes in [((1, 3, 301), [(37,), (9,), (150,), (17,)]),
                         ((2, 2, 13, 40), [(7, 7), (5, 19), (6, 9), (13, 17)]),
                         ((1, 2, 4, 7, 45), [(3, 3, 11)])]:
        x = _data(dtype, shape, rng)
        for size in sizes:
            want, want_index = ref_adaptive_max_pool(x, size)
            got, got_index = ovpool.adaptive_max_pool(x, size)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8),
                                          err_msg=f"{shape} {size}")
            np.testing.assert_array_equal(got_index, want_index, err_msg=f"{shape} {size}")
        # Fixed windows whose edge windows are cut by padding (ceil rounding adds a last one).
        rank = len(shape) - 2
        for k, s, p in [(5, 3, 2), (4, 2, 3)]:
            args = ((k,) * rank, (s,) * rank, (p,) * rank, (p,) * rank)
            want, want_index = ref_max_pool(x, *args, rounding_type="ceil_torch")
            got, got_index = ovpool.max_pool(x, *args, rounding_type="ceil_torch")
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
            np.testing.assert_array_equal(got_index, want_index)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_irregular_windows_keep_the_baseline_bits(monkeypatch):
    """The gathered windows (AVX2, float32) and the branch-free loop (int32) against the
    baseline build's loop: NaN payloads, signed zeros, infinities, ties, the int32 extremes."""
    rng = np.random.default_rng(97)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.inf], np.float32), size=(2, 3, 13, 37))
    _add_nan_payloads(x, rng, 0.3)
    x[0, 0, :5, :9] = np.nan
    ints = rng.integers(-(1 << 31), 1 << 31, size=(2, 3, 13, 37)).astype(np.int32)
    ties = rng.random(ints.shape) < 0.5
    ints[ties] = rng.choice(np.array([-(1 << 31), 0, 7], np.int32), size=int(ties.sum()))
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        run(a) for a in (x, ints) for run in (
            lambda a: ovpool.adaptive_max_pool(a, (7, 7)),
            lambda a: ovpool.adaptive_max_pool(a, (5, 16)),
            lambda a: ovpool.adaptive_max_pool(a.reshape(1, 6, -1), 53),
            lambda a: ovpool.max_pool(a, 5, 3, 2, 2))])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.float64, np.int8,
                                   np.uint8, np.int32, np.int64])
def test_irregular_last_axis_runs_match_the_oracle(dtype):
    """Irregular last axes of the tap-code passes taken as one flat run per tap count, each
    window picked from the run of its count: adaptive windows down (2938 -> 619: five or six
    taps) and up (62 -> 151: one or two), on planes too large for byte codes of the lanes and
    on too few planes for the lanes; blocks of several planes and a partial last block;
    fixed windows mostly cut by padding, with dilation, and windows wholly in the padding
    (empty: index 0). int32 and int64 indices; ties, NaN, all-NaN windows, signed zeros."""
    from reference import ref_adaptive_max_pool, ref_max_pool

    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    rng = np.random.default_rng(131)
    for shape, size in [((1, 7, 2938), (619,)), ((1, 3, 1000), (333,)), ((2, 3, 62), (151,)),
                        ((1, 2, 19, 62), (23, 151)), ((1, 2, 3, 41, 62), (2, 9, 25))]:
        x = _data(dtype, shape, rng)
        want, want_index = ref_adaptive_max_pool(x, size)
        for index_type in ("i64", "i32"):
            got, got_index = ovpool.adaptive_max_pool(x, size, index_element_type=index_type)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8),
                                          err_msg=f"{shape} {size}")
            np.testing.assert_array_equal(got_index, want_index, err_msg=f"{shape} {size}")
            assert got_index.dtype == np.dtype(index_type.replace("i", "int"))
    # Rows of 7 and 9 whose windows are mostly cut by the padding: 1 to 4 taps, dilation 2,
    # and windows wholly in the padding.
    x = _data(dtype, (1, 3, 4, 6, 7), rng)
    for k, s, pb, pe, d in [((2, 2, 4), 1, (0, 0, 3), (0, 1, 3), 1),
                            ((1, 2, 3), 1, (0, 0, 4), (0, 0, 4), 1),
                            ((2, 1, 3), (1, 2, 1), (1, 0, 3), (0, 0, 4), (1, 1, 2))]:
        want, want_index = ref_max_pool(x, k, s, pb, pe, d)
        got, got_index = ovpool.max_pool(x, k, s, pb, pe, d)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=f"{k}")
        np.testing.assert_array_equal(got_index, want_index, err_msg=f"{k}")


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_irregular_last_axis_runs_keep_the_baseline_bits(monkeypatch):
    """The runs of every tap count (vector sweeps under AVX2) against the baseline build, and
    one plane split across two threads against one thread: NaN payloads, signed zeros, ties,
    the int8 extremes."""
    rng = np.random.default_rng(137)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.inf], np.float32), size=(1, 3, 40, 62))
    _add_nan_payloads(x, rng, 0.3)
    small = rng.integers(-128, 128, size=(1, 5, 2938)).astype(np.int8)
    small[rng.random(small.shape) < 0.5] = 127
    runs = lambda: [ovpool.adaptive_max_pool(x, (17, 151)), ovpool.adaptive_max_pool(x[:, :1], (17, 151)),
                    ovpool.adaptive_max_pool(small, 619), ovpool.adaptive_max_pool(small, 1500)]
    _assert_builds_agree_bitwise(monkeypatch, runs)
    threads = ovpool.get_num_threads()
    try:
        ovpool.set_num_threads(1)
        one = runs()
        ovpool.set_num_threads(2)
        two = runs()
    finally:
        ovpool.set_num_threads(threads)
    for a, b in zip(one, two):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u.view(np.uint8), v.view(np.uint8))
