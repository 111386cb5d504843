"""Kernel-level properties that the random comparisons would only hit by chance."""

import ml_dtypes
import numpy as np
import pytest

import ovpool


@pytest.fixture(autouse=True)
def _small_inputs_on_two_threads(monkeypatch):
    """The calls here are far below the bytes a second thread is worth (core/threads.hpp):
    lowered, so that the thread-count comparisons really run two threads."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)


def _all_bit_patterns(dtype):
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype).reshape(1, 1, -1)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_16bit_floats_round_trip_every_bit_pattern(dtype_name):
    import ml_dtypes

    dtype = np.dtype(np.float16) if dtype_name == "float16" else np.dtype(ml_dtypes.bfloat16)
    x = _all_bit_patterns(dtype)
    is_nan = np.isnan(x.astype(np.float32))
    identity_max = ovpool.max_pool(x, 1, return_indices=False)
    np.testing.assert_array_equal(identity_max.view(np.uint16)[~is_nan],
                                  x.view(np.uint16)[~is_nan])
    # An average starts from +0, so -0 comes back as +0: compare values, not bits.
    identity_avg = ovpool.avg_pool(x, 1)
    np.testing.assert_array_equal(identity_avg.astype(np.float32)[~is_nan],
                                  x.astype(np.float32)[~is_nan])
    for result in (identity_max, identity_avg):
        assert np.isnan(result.astype(np.float32)[is_nan]).all()


def test_float16_average_rounds_once_from_float32():
    # 2049 and 2050 average to 2049.5, not representable in float16 (spacing 2 there): the
    # float32 sum 4099 / 2 rounds to even -> 2050; summing in float16 would already round.
    x = np.array([[[2048.0, 2050.0, 1.0, 2.0]]], np.float16)
    np.testing.assert_array_equal(ovpool.avg_pool(x, 2, 2), np.array([[[2049.0, 1.5]]], np.float16))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_average_rounds_half_to_even(dtype):
    x = np.array([[[1, 2, 3, 4, -5, -6, -1, -2, 2, 2]]], dtype)
    expected = np.array([[[2, 4, -6, -2, 2]]], dtype)  # 1.5, 3.5, -5.5, -1.5, 2
    np.testing.assert_array_equal(ovpool.avg_pool(x, 2, 2), expected)


def test_int64_average_is_exact_beyond_float64():
    big = 2**60
    x = np.array([[[big, big + 2, -big, -big - 3]]], np.int64)
    expected = np.array([[[big + 1, -big - 2]]], np.int64)  # -big - 1.5 rounds to even
    np.testing.assert_array_equal(ovpool.avg_pool(x, 2, 2), expected)


def test_large_strided_view_and_zero_planes():
    x = np.random.default_rng(3).standard_normal((4, 6, 10, 12)).astype(np.float32)
    view = x.transpose(1, 0, 3, 2)[:, ::2]
    np.testing.assert_array_equal(ovpool.max_pool(view, 2, 2, return_indices=False),
                                  ovpool.max_pool(np.ascontiguousarray(view), 2, 2,
                                                  return_indices=False))
    values, indices = ovpool.max_pool(np.zeros((0, 3, 5, 5), np.float32), 2)
    assert values.shape == indices.shape == (0, 3, 4, 4)
    assert ovpool.adaptive_avg_pool(np.zeros((2, 0, 5), np.int8), 3).shape == (2, 0, 3)


@pytest.mark.parametrize("module_name", ["_kernels", "_kernels_avx2"])
def test_kernel_entry_points_refuse_buffers_they_cannot_use(module_name):
    """The kernel functions take raw buffers: one of another size, item size, contiguity or
    a read-only output is refused before a kernel reads it, and good buffers give the
    numpy API's result (a 4x4 plane, 2x2 windows, stride 2: the hand-worked maxima 5, 7,
    13, 15 at offsets 5, 7, 13, 15)."""
    import importlib

    from ovpool import pooling

    try:
        module = importlib.import_module(f"ovpool.{module_name}")
    except ImportError:  # platforms other than x86-64 build the baseline only
        pytest.skip("no such build on this platform")
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    tables, _ = pooling._fixed_plan(x.shape, 2, 2, None, None, None, "floor", "explicit", None,
                                    ovpool.get_memory_limit())
    kind = module.STORAGE_KINDS["float32"]
    out = np.empty((1, 1, 2, 2), np.float32)
    index64 = np.empty((1, 1, 2, 2), np.int64)

    def run(x=x, out=out, index64=index64, kind=kind, planes=1):
        module.max_pool_planes(x, out, index64, None, tables.packed, -np.inf, 1, 16, kind,
                               planes, 16, 4, 1, module.BYTES_PER_WORKER)

    run()
    np.testing.assert_array_equal(out.ravel(), [5, 7, 13, 15])
    np.testing.assert_array_equal(index64.ravel(), [5, 7, 13, 15])
    read_only = np.empty_like(out)
    read_only.flags.writeable = False
    for bad in (dict(x=x[..., :3]),                          # too few elements
                dict(x=x.astype(np.float64)),                # other item size
                dict(x=np.arange(32, dtype=np.float32)[::2]),  # not contiguous
                dict(out=np.empty((1, 1, 2, 1), np.float32)),
                dict(out=read_only),
                dict(index64=np.empty((1, 1, 2, 2), np.int32)),
                dict(planes=2),                              # more planes than x holds
                dict(kind=99)):
        with pytest.raises((ValueError, BufferError)):
            run(**bad)

def _avx2_build():
    try:
        from ovpool import _kernels_avx2
    except ImportError:  # platforms other than x86-64 build the baseline only
        return None
    from ovpool import _kernels

    return _kernels_avx2 if _kernels.cpu_has_avx2_f16c() else None


def _use_kernels(monkeypatch, module):
    """Route ovpool's calls to one kernel build. The per-dtype kernel functions are cached
    in pooling._STORAGE, so the cache is replaced too."""
    from ovpool import pooling

    monkeypatch.setattr(pooling, "_kernels", module)
    monkeypatch.setattr(pooling, "_STORAGE", {})
    used = pooling._storage_for(np.dtype(np.float32)).max_planes
    assert used.__module__ == module.__name__


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_kernel_builds_agree_bit_for_bit(monkeypatch):
    """The baseline and the AVX2 builds must give identical results (same summation order)."""
    import ml_dtypes

    from ovpool import _kernel_select

    rng = np.random.default_rng(7)
    cases = []
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.uint8,
                  np.int32, np.int64):
        x = (rng.standard_normal((2, 3, 13, 17)) * 50).astype(dtype)
        cases += [
            lambda x=x: ovpool.avg_pool(x, 3, 2, 1, 1, rounding_type="ceil"),
            lambda x=x: ovpool.avg_pool(x, (2, 5), 1, 0, 2, exclude_pad=False),
            lambda x=x: ovpool.max_pool(x, 3, 2, 1, 1, dilations=(1, 2)),
            lambda x=x: ovpool.max_pool(x, 3, 1, return_indices=False),
            lambda x=x: ovpool.max_pool(x, (2, 5), (3, 2), 0, 1, dilations=(2, 1)),
            lambda x=x: ovpool.max_pool(x[:, :, :9, :11], (4, 2), (1, 3),
                                        index_element_type="i32"),
            lambda x=x: ovpool.max_pool(x[..., :7], 3, 2, 1, 1),
            lambda x=x: ovpool.adaptive_avg_pool(x, (4, 5)),
            lambda x=x: ovpool.adaptive_max_pool(x, (13, 3)),
        ]
    _assert_builds_agree_bitwise(monkeypatch, lambda: [run() for run in cases])
    assert _kernel_select.kernel_variant() in ("avx2", "baseline")


@pytest.mark.parametrize("shape", [(2, 3, 40), (1, 2, 19, 37), (1, 2, 5, 11, 23)])
def test_wide_rows_match_the_oracle(shape):
    """Rows wide enough for the specialised paths, which the small random shapes of
    test_pooling_reference rarely reach: stride-2 max windows read from an even/odd split of
    the row (2 to 5 taps, dilation 1 and 2), max without indices row by row, and stride-1
    'same' averages summed as one run across the rows of a plane."""
    from reference import ref_avg_pool, ref_max_pool

    rng = np.random.default_rng(11)
    x = rng.integers(-4, 5, size=shape).astype(np.float32)  # many ties
    x[rng.random(shape) < 0.1] = np.nan
    x.reshape(-1)[:30] = np.nan                              # whole-NaN windows too
    for k, d in [(2, 1), (3, 1), (3, 2), (4, 1), (5, 1), (5, 2)]:
        p = (k - 1) * d // 2
        want, want_index = ref_max_pool(x, k, 2, p, p, d)
        np.testing.assert_array_equal(ovpool.max_pool(x, k, 2, p, p, d, return_indices=False),
                                      want)
        got, got_index = ovpool.max_pool(x, k, 2, p, p, d)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_index, want_index)
    rank = len(shape) - 2
    # Small integers: every sum is exact, so the averages must match the oracle exactly.
    for dtype in (np.float32, np.float16, np.int32):
        xi = rng.integers(-50, 51, size=shape).astype(dtype)
        for k in (3, 5, 17):
            kernel = (3,) * (rank - 1) + (k,)
            pads = tuple(a // 2 for a in kernel)
            np.testing.assert_array_equal(ovpool.avg_pool(xi, kernel, 1, pads, pads),
                                          ref_avg_pool(xi, kernel, 1, pads, pads))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16, "bfloat16",
                                   np.int8])
def test_small_planes_with_indices_match_the_oracle(dtype):
    """Small 2-D planes with indices: fixed windows by the passes that carry tap codes,
    adaptive ones (and int8 windows of more than 256 taps, whose codes do not fit a byte)
    window by window (max_plane_direct): adaptive and strided/dilated/padded windows, ties, NaN and all-NaN windows, int64 and
    int32 indices, and indices across planes (axis 0)."""
    from reference import ref_adaptive_max_pool, ref_max_pool

    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    rng = np.random.default_rng(5)
    for shape in [(2, 3, 13, 17), (1, 2, 5, 7), (2, 2, 32, 32)]:
        x = rng.integers(-3, 4, size=shape).astype(dtype)  # many ties
        if np.issubdtype(dtype, np.floating):
            x[rng.random(shape) < 0.15] = np.nan
            x[0, 0, :4, :5] = np.nan                          # whole-NaN windows
        for size in [(7, 7), (4, 9), (1, 1), (shape[2], shape[3])]:
            want, want_index = ref_adaptive_max_pool(x, size)
            got, got_index = ovpool.adaptive_max_pool(x, size)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(got_index, want_index)
        for k, s, p, d in [(3, 2, 1, 1), (2, 1, 0, 1), (3, 1, 2, 2), (2, 3, 1, 1)]:
            for axis in (0, 2):
                want, want_index = ref_max_pool(x, k, s, p, p, d, axis=axis)
                got, got_index = ovpool.max_pool(x, k, s, p, p, d, axis=axis)
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(got_index, want_index)
            got32 = ovpool.max_pool(x, k, s, p, p, d, index_element_type="i32")[1]
            np.testing.assert_array_equal(got32, ref_max_pool(x, k, s, p, p, d)[1])
            assert got32.dtype == np.int32


def _max_pool_input(rng, dtype, shape, nan_run):
    """Small integers in `dtype` (bfloat16 by name) with ties; for floats also NaN, a run of
    `nan_run` NaNs at the start of the first plane (whole-NaN windows), and signed zeros."""
    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    x = rng.integers(0 if dtype == np.uint8 else -3, 4, size=shape).astype(dtype)
    if not np.issubdtype(np.dtype(dtype), np.integer):
        x[rng.random(shape) < 0.15] = np.nan
        x.reshape(shape[0] * shape[1], -1)[0, :nan_run] = np.nan  # whole-NaN windows
        x[x == 0] = -0.0
        x.reshape(-1)[rng.random(x.size) < 0.1] = 0.0  # +0 ties with -0
    return x


def _assert_max_pool_matches(x, k, s, pb, pe, d):
    """max_pool (ceil_torch) against the oracle, values bit for bit and int64 indices, for
    indices across planes (axis 0) and within them (axis 2); returns the oracle's values."""
    from reference import ref_max_pool

    for axis in (0, 2):
        want, want_index = ref_max_pool(x, k, s, pb, pe, d, axis=axis,
                                        rounding_type="ceil_torch")
        got, got_index = ovpool.max_pool(x, k, s, pb, pe, d, axis=axis,
                                         rounding_type="ceil_torch")
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        np.testing.assert_array_equal(got_index, want_index)
    return want


def _assert_windows_match(x, windows):
    """_assert_max_pool_matches for each (kernel, strides, pads_begin, pads_end, dilations),
    and int32 indices within planes against the oracle."""
    from reference import ref_max_pool

    for k, s, pb, pe, d in windows:
        _assert_max_pool_matches(x, k, s, pb, pe, d)
        got32 = ovpool.max_pool(x, k, s, pb, pe, d, rounding_type="ceil_torch",
                                index_element_type="i32", axis=2)[1]
        np.testing.assert_array_equal(got32, ref_max_pool(
            x, k, s, pb, pe, d, axis=2, rounding_type="ceil_torch")[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.float64, np.int8,
                                   np.uint8, np.int32, np.int64])
def test_tiny_planes_match_the_oracle(dtype):
    """Planes of at most a hundred-odd elements are pooled 16 (bytes: 32) planes at a time
    through one table of every window's taps (max_planes_lanes): 1 to 3 spatial axes, plane
    counts that are not a multiple of the group or of the work item, ties, NaN and all-NaN windows,
    signed zeros, empty windows (padding past the input), adaptive windows, int64 and int32
    indices, indices across planes and within them, and values alone."""
    from reference import ref_adaptive_max_pool

    rng = np.random.default_rng(29)
    for shape in [(3, 7, 5, 7), (1, 300, 11, 11), (2, 9, 23), (2, 5, 3, 4, 5), (1, 17, 2, 3)]:
        x = _max_pool_input(rng, dtype, shape, 6)
        rank = len(shape) - 2
        for size in [(2,) * rank, (1,) * rank, shape[2:], tuple(n + 3 for n in shape[2:])]:
            want, want_index = ref_adaptive_max_pool(x, size)
            got, got_index = ovpool.adaptive_max_pool(x, size, index_element_type="i32")
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
            np.testing.assert_array_equal(got_index, want_index)
        for k, s, pb, pe, d in [(3, 2, 1, 1, 1), (2, 1, 0, 0, 1), (2, 2, 0, 3, 2), (1, 3, 0, 0, 1)]:
            want = _assert_max_pool_matches(x, k, s, pb, pe, d)
            got = ovpool.max_pool(x, k, s, pb, pe, d, return_indices=False,
                                  rounding_type="ceil_torch")
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.float64, np.int8,
                                   np.uint8, np.int32, np.int64])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_tap_code_passes_match_the_oracle(dtype):
    """Max pooling with indices by passes that carry tap codes (max_coded.hpp), on planes too
    large for the tiny path: 1 to 3 spatial axes; stride 1 along the last axis (the run is the
    result, rows keep the input's pitch) and strides 2 to 4 (every stride-1 window, then the
    strided ones picked); strided windows along the other axes over short rows (one run, then
    picked) and long rows (window by window); dilations, padding past the input (empty
    windows), ceil_torch rounding; many planes per block; ties, NaN and all-NaN windows,
    signed zeros; int64 and int32 indices, across planes and within them. The winner is the
    first maximum in row-major window order, as the oracle's."""
    from reference import ref_max_pool

    rng = np.random.default_rng(41)
    windows = {1: [(3, 1, 1, 1, 1), (4, 2, 0, 3, 2), (5, 3, 2, 2, 1), (2, 4, 0, 5, 3)],
               2: [((3, 5), (1, 1), (1, 2), (1, 2), (1, 2)), ((5, 3), (2, 3), (0, 1), (4, 3), 1),
                   ((4, 2), (3, 2), (2, 0), (3, 4), (2, 3)), ((2, 7), (4, 1), 0, 0, (3, 1)),
                   ((1, 1), (1, 2), 0, 0, 1)],
               3: [((2, 3, 2), (2, 1, 3), (0, 1, 1), (1, 0, 2), (1, 2, 1)),
                   ((3, 2, 4), (1, 3, 2), 1, 0, (2, 1, 1))]}
    for shape in [(1, 2, 301), (1, 2, 23, 29), (1, 6, 9, 59), (1, 1, 8, 80), (1, 2, 9, 7, 13)]:
        x = _max_pool_input(rng, dtype, shape, 40)
        for k, s, pb, pe, d in windows[len(shape) - 2]:
            _assert_max_pool_matches(x, k, s, pb, pe, d)
            got32 = ovpool.max_pool(x, k, s, pb, pe, d, rounding_type="ceil_torch",
                                    index_element_type="i32")[1]
            np.testing.assert_array_equal(got32, ref_max_pool(
                x, k, s, pb, pe, d, rounding_type="ceil_torch")[1])
            assert got32.dtype == np.int32


@pytest.mark.parametrize("dtype", [np.float32, "bfloat16", np.float64, np.int8, np.uint8,
                                   np.int32, np.int64])
def test_strided_last_axis_tap_codes_match_the_oracle(dtype):
    """Tap-code passes along a strided last axis: rows with enough windows for steps 2 to 4
    read their windows straight from the input (for int8 too, 128 windows and more), shorter
    rows and steps 5 and 6 pick them from the run of every stride-1 window; dilated and edge
    windows, padding past the input; codes that are the winner's offset (it fits in the code)
    and codes looked up in a table (int8 rows too long for an offset in eight bits); int64 and
    int32 indices, across planes and within them; ties, NaN and all-NaN windows, signed zeros."""
    rng = np.random.default_rng(43)
    for shape, windows in [
            ((1, 2, 3, 700), [((2, 3), (1, 2), (1, 1), (0, 1), 1), ((3, 4), (2, 4), 0, (2, 3),
                                                                    (1, 2)),
                              ((2, 5), (1, 3), (0, 2), (1, 2), (2, 1)),
                              ((1, 6), (1, 5), 0, 0, 1), ((2, 3), (2, 6), (1, 0), 0, (1, 2))]),
            ((2, 3, 44), [(3, 2, 1, 1, 1), (4, 3, 0, 1, 1), (5, 4, 0, 2, 2)])]:
        _assert_windows_match(_max_pool_input(rng, dtype, shape, 30), windows)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_strided_last_axis_tap_codes_keep_the_baseline_bits(monkeypatch):
    """Signed zeros and NaN payloads through the tap-code passes with a strided last axis
    (windows read straight from the input, and picked from a run): the same bits and indices
    from both builds."""
    rng = np.random.default_rng(47)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0], np.float32), size=(2, 3, 7, 203))
    _add_nan_payloads(x, rng, 0.3)
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.max_pool(x, k, s, p, p, dilations=d)
        for k, s, p, d in [((3, 3), 2, 1, 1), ((2, 4), (3, 3), 0, (1, 2)),
                           ((3, 2), (1, 4), 1, 1), ((2, 3), (2, 5), 0, 1)]] + [
        ovpool.max_pool(x[..., :40], (3, 3), 2, 1, 1, index_element_type="i32")])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.float64, np.int32,
                                   np.int64])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_phased_last_axis_tap_codes_match_the_oracle(dtype):
    """Strided last axes with windows of two taps or more, values of two bytes and wider: each
    row split into its phases, every tap one flat run over all rows' phases. Steps 2 to 4 (the
    vectorised splits) and 5 and 7 (any step); row lengths that are and are not multiples of
    the step and of a vector; dilations that move taps across phases; padding and ceil_torch
    rounding that give more windows than a phase holds (rows then at a wider pitch) and empty
    windows; many rows per block and 3-D planes; ties, NaN, all-NaN windows, signed zeros;
    int64 and int32 indices. (16-bit keys of windows of no more taps than the step are picked
    from the rows in AVX2 builds instead.)"""
    rng = np.random.default_rng(53)
    for shape, windows in [
            ((2, 5, 6, 37), [((2, 3), (1, 2), (1, 1), (0, 1), (1, 1)),
                             ((3, 4), (2, 3), (0, 2), (1, 4), (1, 2)),
                             ((1, 5), (1, 4), 0, (0, 9), (1, 3)),
                             ((2, 3), (2, 5), (1, 2), (0, 3), 1),
                             ((1, 4), (1, 7), 0, (0, 6), (1, 2)),
                             # (no more taps than the step: 16-bit keys picked from the
                             # rows in AVX2 builds, not split into phases)
                             ((2, 3), (1, 3), (0, 1), (0, 0), 1),
                             ((2, 4), (2, 4), (0, 2), (1, 3), (2, 2))]),
            ((1, 3, 4, 5, 64), [((2, 2, 3), (1, 2, 2), 0, (0, 1, 1), (1, 1, 2)),
                                ((1, 2, 5), (2, 1, 3), (0, 1, 2), (0, 0, 2), 1)]),
            ((3, 2, 41), [(2, 2, 0, 1, 1), (6, 4, 2, 5, 1), (3, 5, 1, 1, 3)])]:
        _assert_windows_match(_max_pool_input(rng, dtype, shape, 25), windows)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.int32, np.float64,
                                   np.int8, np.uint8])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_tap_code_edge_columns_match_the_oracle(dtype):
    """Last-axis edge windows (cut by padding or the row's end) of blocks of 16 rows and more
    (planes of 16 rows and more: such blocks for any thread count), reduced column by column:
    32-bit values copy their columns in, and the results of groups of eight windows or more
    out, eight rows by eight columns at a time (AVX2 builds); 16-bit keys (float16, bfloat16)
    copy their columns in eight rows by eight columns at a time too (AVX2 builds); the other
    rows one by one. Row counts that are and are not multiples of eight;
    rows shorter than eight (no vector copy) and longer; edge groups of more than eight
    windows (several column blocks), of fewer, and rows of edge windows only; stride 1 (in
    place) and strides 2 and 3 (phased rows and picked runs); dilated windows; empty windows;
    ties, NaN, all-NaN windows, signed zeros; int64 and int32 indices."""
    rng = np.random.default_rng(67)
    for shape, windows in [
            ((1, 4, 21, 30), [((1, 12), 1, (0, 11), (0, 11), 1),
                             ((2, 3), (1, 1), (1, 3), (0, 2), (1, 3)),
                             ((1, 4), (1, 2), (0, 3), (0, 3), (1, 2)),
                             ((2, 5), (2, 3), (0, 4), (1, 4), (1, 1))]),
            ((2, 2, 19, 7), [((1, 9), 1, (0, 8), (0, 8), 1), ((2, 3), (1, 2), 1, 1, (1, 2))]),
            ((1, 2, 16, 45), [((1, 10), 1, (0, 9), (0, 9), (1, 2)),
                              ((3, 2), (1, 1), (1, 1), (1, 1), 1)])]:
        _assert_windows_match(_max_pool_input(rng, dtype, shape, 20), windows)


def _every_16bit_pattern_shuffled(dtype, shape, seed):
    """Bit patterns of a 16-bit float in random order filling `shape`: every one of them (every
    NaN payload, both zeros, both infinities) when `shape` holds 65536 elements or more, ties
    from the repeats; else a random choice of distinct ones."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    bits = np.concatenate([np.arange(1 << 16), rng.integers(0, 1 << 16, max(0, size - (1 << 16)))])
    bits = rng.permutation(bits.astype(np.uint16))[:size]
    return bits.view(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_16bit_float_keys_match_the_oracle(dtype):
    """float16 and bfloat16 with indices go through the tap-code passes as int16 keys (magnitude,
    negated for a negative sign, every NaN below -inf): every bit pattern, NaN payloads and
    signed zeros among them, whose winners' values come back from the keys, or (zeros and
    NaNs) from the input at the winner's offset; windows of stride 1 (runs in place) and
    strided over rows shorter than 32 (picked from runs) or longer (split into their phases:
    in AVX2 builds by byte shuffles of 16 groups a vector, 8 to 15 groups by half vectors, the
    last ones overlapping, fewer than 8 and steps above 4 by the loops), runs of 16 entries and
    more, of 8 to 15 (two overlapping half vectors) and fewer than 8 (the loops), empty windows
    (padding past the input); int64 and int32 indices."""
    if dtype == "bfloat16":
        dtype = ml_dtypes.bfloat16
    x = _every_16bit_pattern_shuffled(dtype, (1, 2, 128, 260), 73)
    _assert_windows_match(x, [((3, 2), (1, 1), (1, 0), (1, 1), (1, 2)),
                              ((2, 3), (2, 3), (0, 1), (1, 2), (2, 1)),
                              ((2, 4), (1, 4), 0, (0, 3), (1, 2))])
    for shape, windows in [((1, 2, 64, 31), [((2, 3), (1, 2), (1, 1), (0, 1), (1, 2)),
                                             ((3, 2), (2, 3), 0, (1, 0), 1)]),
                           ((1, 3, 40, 12), [((3, 2), (2, 1), (1, 1), (1, 1), 1),
                                             ((2, 3), (1, 2), (0, 1), (0, 5), (1, 2))]),
                           ((2, 2, 30, 5), [((4, 2), (1, 1), (1, 0), (2, 1), (2, 1))]),
                           # phased rows of 12, 9, 7 and 18 groups (steps 3, 4, 5, 2)
                           ((1, 3, 20, 37), [((2, 3), (1, 3), (1, 1), (0, 2), (1, 2)),
                                             ((3, 2), (2, 4), 0, (1, 3), 1),
                                             ((1, 4), (1, 5), (0, 1), (0, 1), (1, 2)),
                                             ((2, 2), (1, 2), 0, 0, (2, 1))])]:
        x = _every_16bit_pattern_shuffled(dtype, shape, 79)
        x.reshape(-1)[:20] = np.nan  # whole-NaN windows
        _assert_windows_match(x, windows)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_16bit_float_keys_keep_their_bits(monkeypatch):
    """The int16-key passes of float16 and bfloat16 give the same bits and indices from both
    builds (vector keys, runs, picks and value conversions in AVX2 builds, loops in the
    baseline) on every bit pattern."""
    xs = [_every_16bit_pattern_shuffled(t, shape, 83)
          for t in (np.float16, ml_dtypes.bfloat16)
          for shape in [(1, 2, 128, 260), (1, 3, 40, 37)]]
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.max_pool(x, k, s, p, p, dilations=d, rounding_type="ceil_torch")
        for x in xs
        for k, s, p, d in [((3, 2), 1, 1, (1, 2)), ((2, 3), (2, 3), 1, 1),
                           ((2, 4), (1, 4), 0, (1, 2)), ((1, 3), (1, 2), 1, (1, 3)),
                           ((2, 2), (1, 5), 0, 1)]])


# Rows shorter than 32 whose strided windows of two taps or more are picked from the run of
# every stride-1 window, at most eight a row: (width, kernel, strides, pads_begin, pads_end,
# dilations) giving steps 2 to 8 with picks in one, two and three 16-byte blocks, edge windows
# left and right (padding), and rows of more than eight picks or picks beyond three blocks
# (the loops).
_SHORT_ROW_PICKS_16 = [
    (13, (2, 2), (1, 4), 0, 0, (1, 3)),       # 3 picks of step 4: two blocks
    (13, (2, 2), (2, 2), (0, 1), (1, 1), 1),  # step 2, an edge window on each side
    (13, (1, 3), (1, 3), (0, 1), (0, 1), (1, 2)),
    (13, (2, 2), (1, 5), 0, 0, 1),            # step 5
    (21, (1, 2), (1, 3), 0, 0, 1),            # 7 picks of step 3: three blocks
    (21, (2, 3), (1, 6), (1, 2), (0, 2), 1),  # step 6
    (29, (1, 2), (1, 7), 0, 0, (1, 2)),       # step 7
    (29, (1, 3), (1, 8), 0, 0, 1),            # step 8, four picks: beyond three blocks
    (29, (1, 2), (1, 3), 0, 0, 1),            # ten picks: the loops
    (5, (2, 2), (1, 2), 0, 0, 1),             # rows of 5: the last rows' reads past the run
    # strided windows along the first axis over rows of at most eight entries
    (5, (3, 2), (2, 2), (1, 0), (1, 0), (2, 1)),
    (13, (4, 2), (3, 4), 0, (2, 0), 1),
]


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_16bit_short_row_picks_match_the_oracle(dtype):
    """float16 / bfloat16 with indices over rows shorter than 32 with strided windows: each
    row's windows picked from the run of every stride-1 window (AVX2 builds: one byte-shuffled
    vector a row of at most eight picks, the rows whose vector would read past the run or
    write past the block by the loops), then strided windows along the first axis over rows
    of at most eight entries (AVX2 builds: each picked row one 16-byte copy while it stays
    in the run and the output); every bit pattern (NaN payloads, signed zeros, ties);
    int64 and int32 indices."""
    from reference import ref_max_pool

    if dtype == "bfloat16":
        dtype = ml_dtypes.bfloat16
    for width, k, s, pb, pe, d in _SHORT_ROW_PICKS_16:
        x = _every_16bit_pattern_shuffled(dtype, (2, 3, 70 * 32 // width, width), width)
        x.reshape(-1)[:12] = np.nan  # whole-NaN windows
        for axis, index_type in [(0, "i64"), (2, "i64"), (2, "i32")]:
            want, want_index = ref_max_pool(x, k, s, pb, pe, d, axis=axis,
                                            rounding_type="ceil_torch")
            got, got_index = ovpool.max_pool(x, k, s, pb, pe, d, axis=axis,
                                             rounding_type="ceil_torch",
                                             index_element_type=index_type)
            np.testing.assert_array_equal(got_index, want_index)
            # Windows of one or two taps are often all NaN, whose value the oracle gives as
            # the canonical NaN: the max rule's is the first NaN's, payload and sign kept,
            # which is the input's element at the winner.
            bits = got.view(np.uint16).copy()
            nan = np.isnan(want.astype(np.float32))
            winners = want_index.astype(np.int64) if axis == 0 else (
                want_index + np.arange(6).reshape(2, 3, 1, 1) * x[0, 0].size)
            np.testing.assert_array_equal(bits[nan], x.view(np.uint16).reshape(-1)[winners[nan]])
            bits[nan] = want.view(np.uint16)[nan]
            np.testing.assert_array_equal(bits, want.view(np.uint16))


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_16bit_short_row_picks_keep_their_bits(monkeypatch):
    """The short rows' strided picks of 16-bit keys and codes (byte shuffles in AVX2 builds,
    loops in the baseline) give the same bits and indices from both builds."""
    xs = {width: [_every_16bit_pattern_shuffled(t, (2, 3, 70 * 32 // width, width), 89)
                  for t in (np.float16, ml_dtypes.bfloat16)]
          for width in {case[0] for case in _SHORT_ROW_PICKS_16}}
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.max_pool(x, k, s, pb, pe, d, rounding_type="ceil_torch", axis=axis)
        for width, k, s, pb, pe, d in _SHORT_ROW_PICKS_16
        for x in xs[width]
        for axis in (0, 2)])


def _assert_16bit_cases_keep_their_bits(monkeypatch, cases, seed):
    """Each (shape, kernel, strides, pads_begin, pads_end, dilations) of `cases` on every
    16-bit bit pattern of float16 and bfloat16, with int64 indices across planes and int32
    ones within them: the same bits and indices from both builds."""
    xs = [(_every_16bit_pattern_shuffled(t, shape, seed), case)
          for t in (np.float16, ml_dtypes.bfloat16)
          for shape, *case in cases]
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.max_pool(x, k, s, pb, pe, d, rounding_type="ceil_torch", axis=axis,
                        index_element_type=index_type)
        for x, (k, s, pb, pe, d) in xs
        for axis, index_type in ((0, "i64"), (2, "i32"))])


def _assert_cases_match(cases, dtype, seed):
    """Each (shape, kernel, strides, pads_begin, pads_end, dilations) of `cases` on
    _max_pool_input's values against the oracle (_assert_windows_match)."""
    rng = np.random.default_rng(seed)
    for shape, k, s, pb, pe, d in cases:
        _assert_windows_match(_max_pool_input(rng, dtype, shape, 30), [(k, s, pb, pe, d)])


# Strided windows over short rows in many blocks, with indices: (shape, kernel, strides,
# pads_begin, pads_end, dilations). Last axes shorter than 32 with at most eight strided
# windows of two taps or more a row (16-bit keys in AVX2 builds: each tap's picks straight
# from the row, combined in registers; the last rows, whose 16-byte reads would leave the
# block, and rows of more picks by the run of every stride-1 window); strided windows along
# the other axes over rows of a few entries in blocks whose runs would be short (one run of
# every stride-1 window over all blocks at once, then the picks).
_STRIDED_SHORT_BLOCKS = [
    ((2, 5, 16, 10, 13), (6, 7, 2), (4, 2, 4), 0, 0, (1, 1, 3)),  # the sweep's #26 windows
    ((1, 3, 9, 12, 17), (2, 5, 3), (1, 3, 2), (0, 1, 1), (1, 2, 0), (2, 1, 2)),
    ((2, 2, 40, 19), (4, 4), (3, 3), (1, 0), (2, 1), (1, 2)),
    ((3, 2, 50, 15), (3, 5), (2, 3), 0, (1, 0), 1),                # five taps
    ((1, 2, 8, 30, 23), (1, 3, 2), (1, 2, 8), 0, (0, 1, 1), (1, 1, 5)),  # step 8, 3 blocks
    ((2, 2, 33, 29), (3, 2), (2, 3), 1, 1, 1),                     # ten windows a row
    # one plane of short output rows (indices row by row from the rows' first taps, no
    # table of every output's): the sweep's #119 windows
    ((1, 1, 21, 30, 28), (3, 6, 2), (1, 2, 3), (1, 1, 0), (3, 1, 0), (3, 1, 2)),
]


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32, np.int8])
def test_strided_short_rows_in_many_blocks_match_the_oracle(dtype):
    """_STRIDED_SHORT_BLOCKS against the oracle: values bit for bit, int64 and int32 indices,
    across planes and within them; ties, NaN and all-NaN windows, signed zeros."""
    _assert_cases_match(_STRIDED_SHORT_BLOCKS, dtype, 47)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_strided_short_rows_in_many_blocks_keep_their_bits(monkeypatch):
    """_STRIDED_SHORT_BLOCKS on every 16-bit bit pattern (NaN payloads, signed zeros, ties):
    the same bits and indices from both builds."""
    _assert_16bit_cases_keep_their_bits(monkeypatch, _STRIDED_SHORT_BLOCKS, 97)


# Output rows shorter than 64 whose indices are written a row at a time from the rows' first
# taps (coded_row_indices), with no table of every output's: (shape, kernel, strides,
# pads_begin, pads_end, dilations). Stride-1 last axes with edge windows, whose pass keeps the
# input's pitch (rows of 33 holding 32 outputs: the sweep's #97 windows), over many planes and
# over one plane; windows wholly in the padding (empty windows: whole output rows and last-axis
# windows); one plane of strided rows at the output's pitch.
_SHORT_OUTPUT_ROWS = [
    ((2, 5, 33, 33), (6, 3), (3, 1), (1, 3), (2, 2), (1, 3)),
    ((1, 1, 40, 21), (3, 2), (2, 1), (1, 1), (0, 1), (2, 3)),
    ((1, 3, 14, 19), (2, 2), (2, 1), (3, 3), (0, 1), 1),
    ((1, 1, 9, 17, 45), (2, 3, 2), (1, 2, 2), (2, 0, 3), (0, 1, 0), (1, 2, 1)),
]


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32, np.int8])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_short_output_rows_match_the_oracle(dtype):
    """_SHORT_OUTPUT_ROWS against the oracle: values bit for bit (16-bit floats: zeros and NaN
    winners read back from the input), int64 and int32 indices, across planes and within
    them; ties, NaN and all-NaN windows, signed zeros."""
    _assert_cases_match(_SHORT_OUTPUT_ROWS, dtype, 53)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_short_output_rows_keep_their_bits(monkeypatch):
    """_SHORT_OUTPUT_ROWS on every 16-bit bit pattern (NaN payloads, signed zeros, ties): the
    same bits and indices from both builds."""
    _assert_16bit_cases_keep_their_bits(monkeypatch, _SHORT_OUTPUT_ROWS, 101)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_tap_code_edge_columns_keep_their_bits(monkeypatch):
    """Signed zeros and NaN payloads through the last-axis edge windows of many rows (copied
    eight rows by eight columns at a time in AVX2 builds): the same bits and indices from both
    builds."""
    rng = np.random.default_rng(71)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0], np.float32), size=(2, 3, 13, 35))
    _add_nan_payloads(x, rng, 0.3)
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.max_pool(v, k, s, p, p, dilations=d, rounding_type="ceil_torch")
        for v in (x, x.astype(np.float16))
        for k, s, p, d in [((1, 12), 1, (0, 11), 1), ((2, 3), (1, 3), 1, (1, 2)),
                           ((1, 4), 1, (0, 3), (1, 3))]])


# Strided windows along the axes before the last over rows of eight entries or more (16-bit
# keys up to 63, float32 up to 31, bytes up to 127) whose windows, each read straight from its
# rows in whole vectors (the last overlapping; rows of 8 to 15 16-bit keys in two half vectors),
# take no more vector steps than the run of every stride-1 window: window by window. Last-axis
# edge windows of 16-bit keys whose taps lie within eight elements: one byte shuffle a tap for
# a side of a row (AVX2 builds), next to sides that do not fit (more than eight windows, taps
# spread wider) and rows shorter than eight; empty windows among them. Strided last axes of
# one tap (16-bit keys: picked eight at a time by shuffles for steps 2 to 8, else one by one).
# (shape, kernel, strides, pads_begin, pads_end, dilations)
_STRIDED_ROWS_AND_EDGE_PICKS = [
    ((2, 3, 33, 33), (6, 3), (3, 1), (1, 3), (2, 2), (1, 3)),  # the sweep's #97: edges 3 + 2
    ((1, 2, 50, 12), (5, 3), (4, 1), (0, 1), (3, 1), (2, 1)),  # rows of 12: half vectors
    ((1, 2, 24, 20), (2, 2), (2, 1), (1, 6), (0, 6), (1, 5)),  # empty edge windows each side
    ((1, 2, 21, 30), (3, 9), (2, 1), (1, 1), (1, 8), 1),       # left picked, right nine windows
    ((1, 2, 19, 7), (3, 3), (3, 1), 1, 1, (1, 2)),             # rows of 7: the run, no picks
    ((1, 2, 9, 8, 21), (3, 2, 2), (2, 3, 1), (1, 0, 1), (1, 1, 0), (1, 2, 3)),
    ((1, 3, 40, 61), (3, 1), (4, 3), (1, 0), (2, 0), (2, 1)),  # one tap three apart
    ((1, 2, 30, 70), (3, 1), (5, 10), 0, 0, (3, 1)),           # one tap ten apart
    # (the sweep's #119 in small: windows of six taps two apart over rows of 19 keys, all of
    # a block's in one call; then nine taps, more than that call takes, over rows of 19)
    ((1, 1, 8, 30, 56), (3, 6, 2), (1, 2, 3), (1, 2, 0), (3, 2, 0), (3, 1, 2)),
    ((1, 2, 40, 20), (9, 2), (2, 1), (1, 0), (0, 0), 1),
    # 16-bit floats keyed as they are picked (AVX2 builds): the last rows, whose 16-byte reads
    # would leave the block, keyed on their own and split into phases; edge windows picked
    # from the bits (the first), or spread too wide, all rows keyed after the picks (the
    # second)
    ((1, 2, 20, 40), (2, 3), (1, 3), 0, (0, 2), 1),
    ((1, 2, 20, 40), (2, 3), (1, 3), (0, 1), (0, 12), (1, 5)),
]


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32, np.int8])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_strided_rows_and_edge_picks_match_the_oracle(dtype):
    """_STRIDED_ROWS_AND_EDGE_PICKS against the oracle: values bit for bit, int64 and int32
    indices, across planes and within them; ties, NaN and all-NaN windows, signed zeros."""
    _assert_cases_match(_STRIDED_ROWS_AND_EDGE_PICKS, dtype, 107)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_strided_rows_and_edge_picks_keep_their_bits(monkeypatch):
    """_STRIDED_ROWS_AND_EDGE_PICKS on every 16-bit bit pattern (NaN payloads, signed zeros,
    ties): the same bits and indices from both builds."""
    _assert_16bit_cases_keep_their_bits(monkeypatch, _STRIDED_ROWS_AND_EDGE_PICKS, 109)


# Last-axis edge windows of int8 / uint8 with indices in blocks of 16 rows or more, whose
# taps lie within sixteen elements: one byte shuffle a tap for a side of two rows (AVX2
# builds), next to sides that do not fit (more than sixteen windows, taps spread wider, rows
# shorter than sixteen) and blocks of an odd number of rows (the last row on its own); empty
# edge windows; stride 1 (the run in place), strides 2 and 3 (the picks), dilated windows.
# (shape, kernel, strides, pads_begin, pads_end, dilations)
_BYTE_EDGE_PICKS = [
    ((2, 3, 23, 53), (6, 5), (1, 2), (5, 4), (5, 4), (2, 2)),  # the sweep's #156 in small
    ((1, 3, 17, 40), (2, 4), 1, (0, 3), (1, 3), (1, 2)),       # stride 1: in place
    ((1, 2, 21, 24), (2, 2), (2, 1), (1, 6), (0, 6), (1, 5)),  # empty edge windows each side
    ((2, 3, 18, 61), (3, 4), (2, 3), (1, 2), (1, 3), (1, 3)),
    ((1, 2, 21, 40), (3, 20), (2, 1), (1, 1), (1, 19), 1),     # nineteen right edge windows
    ((1, 2, 19, 50), (2, 6), (1, 2), (0, 10), (0, 10), (1, 4)),  # taps spread over 21
    ((1, 2, 30, 12), (2, 3), (1, 2), (0, 1), (0, 1), 1),       # rows of 12
]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_byte_edge_picks_match_the_oracle(dtype):
    """_BYTE_EDGE_PICKS against the oracle: values, int64 and int32 indices, across planes and
    within them; ties (small integers)."""
    _assert_cases_match(_BYTE_EDGE_PICKS, dtype, 113)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_byte_edge_picks_keep_their_bits(monkeypatch):
    """_BYTE_EDGE_PICKS on random int8 / uint8 values: the same values and indices from both
    builds."""
    rng = np.random.default_rng(127)
    xs = [(rng.integers(-128 if t == np.int8 else 0, 128 if t == np.int8 else 256,
                        size=case[0]).astype(t), case)
          for t in (np.int8, np.uint8) for case in _BYTE_EDGE_PICKS]
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.max_pool(x, k, s, pb, pe, d, rounding_type="ceil_torch", index_element_type=i)
        for x, (_, k, s, pb, pe, d) in xs for i in ("i64", "i32")])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_tap_code_table_indices_match_the_oracle(dtype):
    """One-byte values whose tap codes are looked up in a table (the winner's offset does not
    fit in eight bits; AVX2 builds gather the table eight outputs at a time): output rows of
    12 to 49 windows (blocks of eight and every kind of tail), next to rows whose offsets fit
    in a code; int64 and int32 indices, across planes and within them; ties."""
    from reference import ref_max_pool

    rng = np.random.default_rng(59)
    for width in (9, 23, 38, 51):
        x = _max_pool_input(rng, dtype, (2, 3, 70, width), 0)
        for k, s, pb, pe, d in [((5, 3), (1, 2), (2, 1), (2, 1), (3, 1)),
                                ((4, 2), (2, 1), 0, 0, (2, 2))]:
            _assert_max_pool_matches(x, k, s, pb, pe, d)
            got32 = ovpool.max_pool(x, k, s, pb, pe, d, rounding_type="ceil_torch",
                                    index_element_type="i32")[1]
            np.testing.assert_array_equal(got32, ref_max_pool(
                x, k, s, pb, pe, d, rounding_type="ceil_torch")[1])


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_phased_last_axis_tap_codes_keep_their_bits(monkeypatch):
    """Signed zeros and NaN payloads through the phased last-axis passes (float32, and float16
    as int16 keys) and int8 table indices: the same bits and indices from both builds and
    from one and two threads."""
    rng = np.random.default_rng(61)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0], np.float32), size=(2, 5, 9, 61))
    _add_nan_payloads(x, rng, 0.3)
    small = rng.integers(-3, 4, size=(2, 5, 40, 45)).astype(np.int8)

    def pool_all():
        return [ovpool.max_pool(v, k, s, p, p, dilations=d, rounding_type="ceil_torch")
                for v in (x, x.astype(np.float16))
                for k, s, p, d in [((3, 3), (1, 2), 1, (1, 2)), ((2, 4), (2, 3), 1, 1),
                                   ((2, 3), (1, 5), 0, (1, 3)), ((1, 4), (1, 4), 1, (1, 2))]] + [
            ovpool.max_pool(small, (5, 3), (1, 2), 2, 2, dilations=(3, 1),
                            index_element_type=t) for t in ("i32", "i64")]

    _assert_builds_agree_bitwise(monkeypatch, pool_all)
    threads = ovpool.get_num_threads()
    try:
        ovpool.set_num_threads(2)
        two = [a for r in pool_all() for a in r]
        ovpool.set_num_threads(1)
        one = [a for r in pool_all() for a in r]
    finally:
        ovpool.set_num_threads(threads)
    for a, b in zip(two, one):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def test_three_wide_stride2_rows_match_the_oracle():
    """The vector loop for 3-wide, stride-2 windows along the last axis (AVX2 builds): every
    row length from one window to several blocks of eight plus each tail length, with and
    without padding, ceil rounding, vertical windows of 1 to 5 rows (dilated too), 3-D planes
    (the rows then come from a depth pass) and float16, NaN and all-NaN windows, ties."""
    from reference import ref_max_pool

    rng = np.random.default_rng(23)
    for width in list(range(3, 44)) + [111, 112, 113]:
        x = rng.integers(-3, 4, size=(1, 2, 6, width)).astype(np.float32)
        x[rng.random(x.shape) < 0.1] = np.nan
        x[0, 0, :3, :5] = np.nan
        for pads, rounding in [((0, 0), "floor"), ((1, 1), "floor"), ((1, 0), "ceil"),
                               ((0, 1), "ceil")]:
            for kh, dh in [(3, 1), (1, 1), (2, 1), (5, 1), (2, 2)]:
                args = ((kh, 3), (2, 2), (pads[0], pads[0]), (pads[1], pads[1]), (dh, 1))
                want = ref_max_pool(x, *args, rounding_type=rounding)[0]
                got = ovpool.max_pool(x, *args, rounding_type=rounding, return_indices=False)
                np.testing.assert_array_equal(got, want, err_msg=f"{width} {pads} {kh} {dh}")
    for dtype in (np.float32, np.float16):
        x = rng.integers(-20, 21, size=(2, 2, 5, 6, 37)).astype(dtype)
        x[rng.random(x.shape) < 0.05] = np.nan
        want = ref_max_pool(x, 3, 2, 1, 1)[0]
        np.testing.assert_array_equal(ovpool.max_pool(x, 3, 2, 1, 1, return_indices=False), want)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_three_wide_stride2_rows_keep_the_baseline_bits(monkeypatch):
    """Signed zeros and NaN payloads: the vector loop combines rows, then taps, in the same
    order as the generic loops of the baseline build, so the same bits survive."""
    rng = np.random.default_rng(29)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0], np.float32), size=(2, 3, 9, 61))
    _add_nan_payloads(x, rng, 0.3)
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.max_pool(x, k, 2, p, p, return_indices=False)
        for k, p in [((3, 3), 1), ((3, 3), 0), ((1, 3), 1), ((5, 3), 2)]])


def _add_nan_payloads(x, rng, fraction):
    """Set about ``fraction`` of float32 ``x`` to quiet NaNs with random payloads."""
    payloads = np.uint32(0x7FC00000) | rng.integers(1, 1 << 20, size=x.shape).astype(np.uint32)
    nan_at = rng.random(x.shape) < fraction
    x[nan_at] = payloads[nan_at].view(np.float32)


def _assert_builds_agree_bitwise(monkeypatch, run):
    """``run()`` (a list of arrays, or of tuples of arrays) gives the same bytes with both
    kernel builds."""
    from ovpool import _kernels

    results = []
    for module in (_kernels, _avx2_build()):
        _use_kernels(monkeypatch, module)
        results.append([a for r in run() for a in (r if isinstance(r, tuple) else (r,))])
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def _assert_random_planes_keep_their_bits(monkeypatch, pool_all, shape, seed, build_dtypes):
    """Random floats (sums that round, 2% of them -0.0) of ``shape``: every plane of
    ``pool_all``'s results gets the bits of that plane pooled on its own, with one or two
    threads (helpers.assert_planes_keep_their_bits), and both builds agree for
    ``build_dtypes``."""
    from helpers import assert_planes_keep_their_bits

    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) * 100
    values.reshape(-1)[rng.random(values.size) < 0.02] = -0.0
    assert_planes_keep_their_bits(pool_all, values, (np.float32, np.float16,
                                                     ml_dtypes.bfloat16, np.float64, np.int32))
    if _avx2_build() is None:  # platforms other than x86-64 build the baseline only
        return
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        r for dtype in build_dtypes for r in pool_all(values.astype(dtype))])


def test_three_by_three_same_averages_match_the_oracle():
    """The vector path for 3x3 averages with stride 1 and one element of padding per side
    (AVX2 builds): every plane size from 3x3 up past two blocks of eight, with both divisor
    rules, every tail length of a row (1 to 7 past whole blocks of eight), and sizes next to
    it that take the generic path."""
    from reference import ref_avg_pool

    rng = np.random.default_rng(31)
    for rows, cols in [(3, 3), (3, 8), (4, 9), (5, 16), (7, 17), (35, 35), (2, 5), (6, 2),
                       (3, 10), (4, 11), (3, 12), (5, 13), (3, 14), (4, 15), (3, 23)]:
        x = rng.integers(-50, 51, size=(2, 3, rows, cols)).astype(np.float32)
        for exclude_pad in (True, False):
            want = ref_avg_pool(x, 3, 1, 1, 1, exclude_pad=exclude_pad)
            got = ovpool.avg_pool(x, 3, 1, 1, 1, exclude_pad=exclude_pad)
            np.testing.assert_array_equal(got, want, err_msg=f"{rows}x{cols} {exclude_pad}")


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_three_by_three_same_averages_keep_the_baseline_bits(monkeypatch):
    """Padding adds zeros where the generic path has no tap; signed zeros, infinities, NaN
    payloads and rounding must still come out bit for bit."""
    rng = np.random.default_rng(37)
    x = rng.standard_normal((2, 3, 11, 21)).astype(np.float32) * 1e3
    x[rng.random(x.shape) < 0.2] = -0.0
    x[:, :, :4, :4] = -0.0                       # all -0 windows at a corner
    x[rng.random(x.shape) < 0.02] = np.inf
    x[rng.random(x.shape) < 0.02] = -np.inf
    _add_nan_payloads(x, rng, 0.02)
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.avg_pool(x, 3, 1, 1, 1, exclude_pad=e) for e in (True, False)])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
def test_integer_averages_round_half_to_even_exactly(dtype):
    """Integer averages divide without an integer division while the sum is below 2^52 and
    exactly in 128 bits above: ties (x.5) go to the even neighbour on both signs, and int64
    sums on either side of 2^52 come out exact."""
    from reference import ref_avg_pool

    rng = np.random.default_rng(41)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -9), min(info.max, 9)
    small = rng.integers(lo, hi, size=(2, 3, 41), endpoint=True).astype(dtype)
    cases = [(small, k, s, p, e) for k in (2, 3, 4, 6) for s in (1, 2) for p in (0, 1)
             for e in (True, False)]
    if dtype == np.int64:
        big = rng.integers(-(1 << 51), 1 << 51, size=(1, 2, 64)) * 3
        big[0, 0] = (1 << 53) + rng.integers(-64, 64, size=64)   # sums far above 2^52
        big[0, 1, :32] = -(1 << 51) + rng.integers(-4, 4, size=32)
        cases += [(big.astype(np.int64), k, 1, 0, True) for k in (2, 3, 4, 5, 8)]
    for x, k, s, p, e in cases:
        want = ref_avg_pool(x, k, s, p, p, exclude_pad=e)
        got = ovpool.avg_pool(x, k, s, p, p, exclude_pad=e)
        np.testing.assert_array_equal(got, want, err_msg=f"k{k} s{s} p{p} exclude_pad={e}")


def _small_plane_averages(x):
    """Averages of many small planes that take the blocked passes: 'same' windows (one run
    across planes, edge windows of every plane at once), strided and dilated windows, and
    adaptive windows down to one output and up past the input."""
    rank = x.ndim - 2
    if rank == 2:
        return [ovpool.avg_pool(x, (6, 3), 1, auto_pad="same_lower", exclude_pad=False,
                                rounding_type="ceil_torch"),
                ovpool.avg_pool(x, (5, 3), 1, (2, 1), (2, 1)),
                ovpool.avg_pool(x, (2, 2), (2, 3), (0, 1), (0, 1), dilations=(2, 2)),
                ovpool.adaptive_avg_pool(x, (1, 1)), ovpool.adaptive_avg_pool(x, (9, 14))]
    return [ovpool.avg_pool(x, (3, 3, 3), 1, 1, 1, exclude_pad=False),
            ovpool.adaptive_avg_pool(x, (9, 3, 14)), ovpool.adaptive_avg_pool(x, (1, 2, 1))]


@pytest.mark.parametrize("shape", [(2, 700, 7, 8), (3, 400, 4, 3, 5)])  # 2 threads: > 65536
def test_small_planes_in_blocks_keep_their_bits(monkeypatch, shape):
    """Small planes go through the average passes many at a time: the results are the bits
    of each plane pooled on its own, with one or two threads and in both builds; integer
    averages match the oracle exactly."""
    import ml_dtypes
    from reference import ref_adaptive_avg_pool

    rng = np.random.default_rng(43)
    values = rng.standard_normal(shape) * 100
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16, np.uint8, np.int32):
        x = (np.abs(values) if dtype == np.uint8 else values).astype(dtype)
        threads = ovpool.get_num_threads()
        ovpool.set_num_threads(2)
        try:
            blocked = _small_plane_averages(x)
            ovpool.set_num_threads(1)
            single = _small_plane_averages(x)
            alone = [_small_plane_averages(x[n:n + 1, c:c + 1]) for n, c in [(0, 0), (1, 7)]]
        finally:
            ovpool.set_num_threads(threads)
        for i, (a, b) in enumerate(zip(blocked, single)):
            np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
            for (n, c), planes in zip([(0, 0), (1, 7)], alone):
                np.testing.assert_array_equal(a[n:n + 1, c:c + 1].view(np.uint8),
                                              planes[i].view(np.uint8))
        if dtype in (np.uint8, np.int32):
            up = (9, 14) if len(shape) == 4 else (9, 3, 14)
            np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, up),
                                          ref_adaptive_avg_pool(x, up))
    _assert_builds_agree_bitwise(monkeypatch, lambda: _small_plane_averages(
        values.astype(np.float32)) + _small_plane_averages(values.astype(np.int32)))


def _kernel_builds():
    from ovpool import _kernels

    return [m for m in (_kernels, _avx2_build()) if m is not None]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_byte_averages_match_the_oracle_at_the_extremes(monkeypatch, dtype):
    """int8 / uint8 averages of small windows sum in int32 (see sums_fit): all-lowest,
    all-highest and random planes against the oracle, in both builds."""
    from reference import ref_avg_pool

    info = np.iinfo(dtype)
    rng = np.random.default_rng(41)
    planes = [np.full((2, 3, 11, 19), info.min, dtype), np.full((2, 3, 11, 19), info.max, dtype),
              rng.integers(info.min, info.max, size=(2, 3, 11, 19), endpoint=True).astype(dtype)]
    calls = [dict(kernel=3, strides=1, pads_begin=1, pads_end=1),
             dict(kernel=(4, 7), strides=(1, 2), pads_begin=(2, 3), pads_end=(1, 3),
                  exclude_pad=False),
             dict(kernel=(11, 19), strides=1, pads_begin=0, pads_end=0),
             dict(kernel=(2, 17), strides=(3, 1), pads_begin=0, pads_end=0, dilations=(2, 1))]
    for module in _kernel_builds():
        _use_kernels(monkeypatch, module)
        for x in planes:
            for call in calls:
                np.testing.assert_array_equal(ovpool.avg_pool(x, **call), ref_avg_pool(x, **call),
                                              err_msg=f"{module.__name__} {call}")


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.float16, np.float32])
def test_windows_of_many_whole_rows_match_the_oracle(monkeypatch, dtype):
    """Windows of five or more whole rows (the outer pass's runs adjacent, one output row a
    sweep), over rows whose length is no multiple of a vector: the runs past the first four
    added to the sums already made (int32 and float16 sums: the last vector made first, from
    the sums before the sweep), six runs in one sweep (int16 sums of int8 / uint8 rows under
    1024), and rows of 1100 (int16 sums added run by run); small integers, so that every sum
    is exact and the averages must be the oracle's, in both builds."""
    from reference import ref_avg_pool

    rng = np.random.default_rng(57)
    calls = [((1, 2, 26, 138), dict(kernel=(6, 1), strides=(4, 1), pads_begin=0, pads_end=0)),
             ((1, 2, 27, 138), dict(kernel=(20, 3), strides=(3, 1), pads_begin=(0, 1),
                                    pads_end=(0, 1), exclude_pad=False)),
             ((1, 1, 13, 1100), dict(kernel=(6, 1), strides=(2, 1), pads_begin=0, pads_end=0)),
             ((1, 1, 13, 1100), dict(kernel=(9, 2), strides=(2, 2), pads_begin=(0, 1),
                                     pads_end=(0, 1)))]
    for module in _kernel_builds():
        _use_kernels(monkeypatch, module)
        for shape, call in calls:
            x = rng.integers(-50 if dtype != np.uint8 else 0, 51, size=shape).astype(dtype)
            np.testing.assert_array_equal(ovpool.avg_pool(x, **call), ref_avg_pool(x, **call),
                                          err_msg=f"{module.__name__} {shape} {call}")


def _window_averages(x, kernel):
    """Averages of the stride-1 windows of `kernel` elements along a 1-D int array (exact)."""
    from reference import round_half_even

    sums = np.concatenate([[0], np.cumsum(x, dtype=np.int64)])
    return [round_half_even(int(sums[j + kernel] - sums[j]), kernel)
            for j in range(x.size - kernel + 1)]


# Window shapes of `limit` taps (int32 sums, just short of overflowing for constant extreme
# inputs) and of limit + 1 (64-bit sums), over two axes, so that each pass sums part of them.
_HUGE_WINDOWS_2D = {np.int8: [(4095, 4097), (4096, 4096)],       # limit = 2^24 - 1
                    np.uint8: [(128, 65793), (5, 1684301)]}      # limit = 8421504


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_byte_averages_of_huge_windows_sum_in_64_bits(monkeypatch, dtype):
    """The largest window whose sums fit in int32 (INT32_MAX // 128 taps for int8,
    INT32_MAX // 255 for uint8) and the next sizes up, which sum in 64 bits (int32 sums of
    their extreme constant windows would overflow): constant rows, random rows against exact
    sums, and two-axis windows, in both builds."""
    info = np.iinfo(dtype)
    limit = np.iinfo(np.int32).max // max(-info.min, info.max)
    rng = np.random.default_rng(43)
    for module in _kernel_builds():
        _use_kernels(monkeypatch, module)
        for kernel in (limit, limit + 1, limit + 2):
            for value in (info.min, info.max):
                x = np.full((1, 1, kernel + 2), value, dtype)
                np.testing.assert_array_equal(ovpool.avg_pool(x, kernel),
                                              np.full((1, 1, 3), value, dtype))
            x = rng.integers(info.min, info.max, size=kernel + 2, endpoint=True).astype(dtype)
            got = ovpool.avg_pool(x.reshape(1, 1, -1), kernel).ravel()
            np.testing.assert_array_equal(got, np.array(_window_averages(x, kernel), dtype))
        for rows, cols in _HUGE_WINDOWS_2D[dtype]:
            assert rows * cols - limit in (0, 1)
            for value, last in ((info.min, info.max), (info.max, info.min)):
                # Window 0: rows of `value`; window 1: rows - 1 of them and one of `last`.
                x = np.full((1, 1, rows + 1, cols), value, dtype)
                x[0, 0, -1] = last
                want = np.array([value, _average_of_rows(value, last, rows)], dtype)
                np.testing.assert_array_equal(ovpool.avg_pool(x, (rows, cols)).ravel(), want,
                                              err_msg=f"{module.__name__} {rows}x{cols}")


def _average_of_rows(value, last, rows):
    """The average of rows - 1 equal rows of `value` and one of `last`."""
    from reference import round_half_even

    return round_half_even((rows - 1) * int(value) + int(last), rows)


def _blocks_of_ranges(dtype, rng, shape, magnitudes):
    """Random planes of `shape` (many small planes, so that several work items each bound
    their own inputs), plane group g holding values up to magnitudes[g] (cycling), with the
    extremes of each group present."""
    x = np.empty(shape, np.int64)
    planes = x.reshape(-1, int(np.prod(shape[2:])))
    groups = np.array_split(np.arange(planes.shape[0]), len(magnitudes))
    for group, top in zip(groups, magnitudes):
        planes[group] = rng.integers(-top, top, size=(group.size, planes.shape[1]), endpoint=True)
        planes[group[0], :2] = (top, -top)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_int_averages_sum_in_the_narrowest_accumulator_their_inputs_allow(monkeypatch, dtype):
    """int32 / int64 averages bound each work item's inputs and sum in int32, int64 or 128
    bits accordingly (float32 quotients below 2^23): blocks of planes with magnitudes on both
    sides of each switch (for 18-tap windows: 2^23 / 18, 2^31 / 18, 2^63 / 18), the type's
    extremes, against the oracle and in both builds."""
    from reference import ref_avg_pool

    info = np.iinfo(dtype)
    rng = np.random.default_rng(47)
    tops = [9, (1 << 23) // 18, (1 << 23) // 18 + 1, (1 << 31) // 18, (1 << 31) // 18 + 1,
            info.max]
    if dtype == np.int64:
        tops += [(1 << 63) // 18, (1 << 63) // 18 + 1, 1 << 53]
    x = _blocks_of_ranges(dtype, rng, (2, 900, 7, 8), tops)
    x[1, -1, :, :] = info.min
    calls = [dict(kernel=(6, 3), strides=1, auto_pad="same_lower", exclude_pad=False,
                  rounding_type="ceil_torch"),
             dict(kernel=(3, 6), strides=(1, 3), pads_begin=(1, 2), pads_end=(1, 2))]
    for call in calls:
        want = ref_avg_pool(x, **call)
        for module in _kernel_builds():
            _use_kernels(monkeypatch, module)
            np.testing.assert_array_equal(ovpool.avg_pool(x, **call), want,
                                          err_msg=f"{module.__name__} {call}")


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_int_rows_of_unit_step_windows_sum_in_place_in_the_narrowest_accumulator(
        monkeypatch, dtype):
    """int32 / int64 rows (one axis) of unit-step windows, which the passes sum where they lie
    rather than the plane blocks or lanes (ranged_rows_in_place), bound each block of rows and
    sum in int32, int64 or 128 bits accordingly: magnitudes on both sides of each switch for
    two- and three-tap windows, rows of 50 (the adaptive 50 -> 49 windows too) and of 45 in a
    call whose last block is part-full, with each group's extremes at its last element as well
    as its first (the vector bound's overlapping last load), against the oracle, both builds."""
    from reference import ref_adaptive_avg_pool, ref_avg_pool

    info = np.iinfo(dtype)
    rng = np.random.default_rng(59)
    for taps in (2, 3):
        tops = [9, (1 << 23) // taps, (1 << 23) // taps + 1, (1 << 31) // taps,
                (1 << 31) // taps + 1, info.max]
        if dtype == np.int64:
            tops += [(1 << 63) // taps, (1 << 63) // taps + 1]
        for shape in [(2, 1400, 50), (3, 301, 45)]:
            x = _blocks_of_ranges(dtype, rng, shape, tops)
            rows = x.reshape(-1, shape[-1])
            for group, top in zip(np.array_split(np.arange(rows.shape[0]), len(tops)), tops):
                rows[group[-1], -2:] = (-top, top)
            x[-1, -1, :] = info.min
            calls = [dict(kernel=(taps,), strides=1, rounding_type="ceil_torch"),
                     dict(kernel=(taps,), strides=1, pads_begin=(1,), pads_end=(taps - 1,),
                          exclude_pad=True)]
            for call in calls:
                want = ref_avg_pool(x, **call)
                for module in _kernel_builds():
                    _use_kernels(monkeypatch, module)
                    np.testing.assert_array_equal(ovpool.avg_pool(x, **call), want,
                                                  err_msg=f"{module.__name__} {shape} {call}")
            if taps == 2:
                want = ref_adaptive_avg_pool(x, (shape[-1] - 1,))
                for module in _kernel_builds():
                    _use_kernels(monkeypatch, module)
                    np.testing.assert_array_equal(
                        ovpool.adaptive_avg_pool(x, (shape[-1] - 1,)), want,
                        err_msg=f"{module.__name__} {shape} adaptive")


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_byte_averages_divide_in_float32_up_to_sums_of_2_23(monkeypatch, dtype):
    """int8 / uint8 averages whose sums stay below 2^23 divide in float32: windows just
    inside (128 x 257 uint8, 255 x 257 int8: the largest window volumes) and just outside, constant extreme
    planes with a changed last row (an average just off a half) and random planes."""
    info = np.iinfo(dtype)
    top = max(-info.min, info.max)
    rng = np.random.default_rng(53)
    for rows, cols in [(128, 257), (129, 257)] if dtype == np.uint8 else [(255, 257), (256, 256)]:
        inside = rows * cols * top < (1 << 23)
        assert inside == ((rows, cols) in [(128, 257), (255, 257)])
        for module in _kernel_builds():
            _use_kernels(monkeypatch, module)
            for value, last in ((info.min, info.max), (info.max, info.min)):
                x = np.full((1, 1, rows + 1, cols), value, dtype)
                x[0, 0, -1] = last
                want = np.array([value, _average_of_rows(value, last, rows)], dtype)
                np.testing.assert_array_equal(ovpool.avg_pool(x, (rows, cols)).ravel(), want)
            x = rng.integers(info.min, info.max, size=(1, 2, rows + 9, cols), endpoint=True)
            got = ovpool.avg_pool(x.astype(dtype), (rows, cols))
            sums = [[int(x[0, c, r:r + rows].sum()) for r in range(10)] for c in range(2)]
            from reference import round_half_even
            want = np.array([[[round_half_even(s, rows * cols) for s in row]
                              for row in sums]], dtype).reshape(got.shape)
            np.testing.assert_array_equal(got, want)


def _special_values(x, rng, nans):
    """x (float32) with -0 and infinities, and NaNs (nans) or infinities of both signs
    (whose sums are the default NaN): one NaN payload per array, as which of two payloads
    survives an addition is the documented exception to bit-identical builds."""
    x = x.astype(np.float32)
    x[rng.random(x.shape) < 0.2] = -0.0
    x[rng.random(x.shape) < 0.03] = np.inf
    x[rng.random(x.shape) < 0.03] = np.nan if nans else -np.inf
    return x


_SHORT_ROW_DTYPES = [np.float32, np.float16, "bfloat16", np.float64, np.int8, np.uint8,
                     np.int32, np.int64]


# Windows over the outer axis of planes whose inner rows are short (summed a window at a time
# in registers): full, clipped, dilated and strided.
_SHORT_ROW_CALLS = [dict(kernel=(3, 1), strides=1, pads_begin=(1, 0), pads_end=(1, 0),
                         exclude_pad=False),
                    dict(kernel=(4, 2), strides=(2, 1), pads_begin=(2, 0), pads_end=(1, 1),
                         dilations=(2, 1), rounding_type="ceil"),
                    dict(kernel=(6, 1), strides=1, auto_pad="same_lower")]


def _short_row_averages(x):
    return [ovpool.avg_pool(x, **call) for call in _SHORT_ROW_CALLS]


@pytest.mark.parametrize("width", [3, 4, 5, 7, 8, 9, 13, 15])
@pytest.mark.parametrize("dtype", _SHORT_ROW_DTYPES)
def test_short_rows_match_the_oracle(dtype, width):
    """Rows of fewer than 16 elements (chunks of eight or four, overlapping at the end, or
    element by element below four): exact small-integer sums against the oracle."""
    import ml_dtypes
    from reference import ref_avg_pool

    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    rng = np.random.default_rng(59)
    low = 0 if dtype == np.uint8 else -40
    x = rng.integers(low, 41, size=(2, 5, 7, width)).astype(dtype)
    for got, call in zip(_short_row_averages(x), _SHORT_ROW_CALLS):
        np.testing.assert_array_equal(got, ref_avg_pool(x, **call), err_msg=str(call))


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_short_rows_keep_the_baseline_bits(monkeypatch):
    """The AVX2 short-row sums add each lane's taps in the scalar order: signed zeros,
    infinities, NaNs and rounding come out bit for bit, for every float type."""
    import ml_dtypes

    rng = np.random.default_rng(61)
    cases = []
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16, np.float64):
        for width in (5, 8, 9, 13):
            for nans in (False, True):
                x = _special_values(rng.standard_normal((2, 40, 9, width)) * 1e3, rng, nans)
                cases.append(x.astype(dtype))
    _assert_builds_agree_bitwise(monkeypatch,
                                 lambda: [r for x in cases for r in _short_row_averages(x)])


# Strides 3 and 4 along the last axis with three or more taps (summed from the window sums at
# every position): short rows grouped into one run, and rows longer than the run's buffer
# (2048 positions), in pieces.
_STRIDED_ROW_CALLS = [dict(kernel=3, strides=3, pads_begin=1, pads_end=1),
                      dict(kernel=4, strides=4, pads_begin=2, pads_end=1, dilations=2,
                           rounding_type="ceil", exclude_pad=False),
                      dict(kernel=5, strides=3, pads_begin=0, pads_end=0, dilations=3)]


@pytest.mark.parametrize("width", [61, 2900, 8300])
@pytest.mark.parametrize("dtype", _SHORT_ROW_DTYPES)
def test_strided_rows_match_the_oracle(dtype, width):
    """Strided windows along the last axis (see _STRIDED_ROW_CALLS): exact small-integer
    sums against the oracle, in every type."""
    import ml_dtypes
    from reference import ref_avg_pool

    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    rng = np.random.default_rng(67)
    low = 0 if dtype == np.uint8 else -40
    x = rng.integers(low, 41, size=(1, 3 if width > 100 else 70, width)).astype(dtype)
    for call in _STRIDED_ROW_CALLS:
        np.testing.assert_array_equal(ovpool.avg_pool(x, **call), ref_avg_pool(x, **call),
                                      err_msg=str(call))


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_strided_rows_keep_the_baseline_bits(monkeypatch):
    """Strided rows in both builds: the same bits for signed zeros, infinities, NaNs and
    rounding, every float type."""
    import ml_dtypes

    rng = np.random.default_rng(71)
    cases = []
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16, np.float64):
        for shape in ((1, 70, 61), (1, 2, 8300)):
            for nans in (False, True):
                x = _special_values(rng.standard_normal(shape) * 1e3, rng, nans)
                cases.append(x.astype(dtype))
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.avg_pool(x, **call) for x in cases for call in _STRIDED_ROW_CALLS])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8, np.int64])
def test_one_tap_axes_are_skipped_with_the_same_results(dtype):
    """Axes whose windows are one input each (kernel 1, stride 1, no padding) are not summed
    unless every axis is such: the averages are those of the oracle, and -0 inputs still come
    out +0 (each value is added to +0 by another pass, or by the last axis's)."""
    from reference import ref_avg_pool

    rng = np.random.default_rng(73)
    x = rng.integers(-9, 10, size=(2, 3, 5, 6, 7)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[:, :, :2] = -0.0
    for kernel, pads in [((1, 1, 1), (0, 0, 0)), ((1, 3, 1), (0, 1, 0)),
                         ((3, 1, 1), (1, 0, 0)), ((1, 1, 2), (0, 0, 1)), ((1, 1, 1), (0, 1, 0))]:
        got = ovpool.avg_pool(x, kernel, 1, pads, pads, exclude_pad=False)
        want = ref_avg_pool(x, kernel, 1, pads, pads, exclude_pad=False)
        np.testing.assert_array_equal(got, want, err_msg=str(kernel))
        if np.dtype(dtype).kind == "f":
            assert not np.signbit(got[got == 0]).any(), kernel


# Windows along a last axis of at most eight elements with at most eight outputs (eight rows
# at a time through a transpose in the AVX2 build), from 1-D rows and after an outer pass.
_NARROW_ROW_CALLS = [dict(kernel=3, strides=1, pads_begin=1, pads_end=1, exclude_pad=False),
                     dict(kernel=2, strides=2, pads_begin=0, pads_end=1, rounding_type="ceil"),
                     dict(kernel=4, strides=1, pads_begin=2, pads_end=3, dilations=2),
                     dict(kernel=(2, 3), strides=(1, 2), pads_begin=(0, 1), pads_end=(1, 1))]


def _narrow_row_averages(x):
    calls = _NARROW_ROW_CALLS if x.ndim == 4 else _NARROW_ROW_CALLS[:3]
    return [ovpool.avg_pool(x, **call) for call in calls]


@pytest.mark.parametrize("width", [2, 3, 5, 8])
@pytest.mark.parametrize("dtype", _SHORT_ROW_DTYPES)
def test_narrow_rows_match_the_oracle(dtype, width):
    """Last axes of at most eight elements, over row counts that leave a tail of rows:
    exact small-integer sums against the oracle."""
    import ml_dtypes
    from reference import ref_avg_pool

    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    rng = np.random.default_rng(79)
    low = 0 if dtype == np.uint8 else -40
    for shape in ((1, 37, width), (2, 7, 3, width)):
        x = rng.integers(low, 41, size=shape).astype(dtype)
        for got, call in zip(_narrow_row_averages(x), _NARROW_ROW_CALLS):
            np.testing.assert_array_equal(got, ref_avg_pool(x, **call), err_msg=str(call))


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_narrow_rows_keep_the_baseline_bits(monkeypatch):
    """Narrow last axes in both builds: the same bits for signed zeros, infinities, NaNs and
    rounding, every float type."""
    import ml_dtypes

    rng = np.random.default_rng(83)
    cases = []
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        for shape in ((1, 45, 6), (3, 5, 4, 8), (2, 9, 7, 3)):
            for nans in (False, True):
                x = _special_values(rng.standard_normal(shape) * 1e3, rng, nans)
                cases.append(x.astype(dtype))
    _assert_builds_agree_bitwise(monkeypatch,
                                 lambda: [r for x in cases for r in _narrow_row_averages(x)])


def _assert_values_alone_at_oracle_index(monkeypatch, x, windows):
    """Max pooling of x without indices, for each (kernel, strides, pads_begin, pads_end,
    dilations) of `windows`, gives bit for bit the element at the oracle's index (the
    window's first maximum in row-major order), from both builds and with one and two
    threads."""
    from ovpool import _kernels
    from reference import ref_max_pool

    shape = x.shape
    flat = x.reshape(shape[0] * shape[1], -1)
    for k, s, pb, pe, d in windows:
        index = ref_max_pool(x, k, s, pb, pe, d)[1]
        want = np.take_along_axis(flat, index.reshape(flat.shape[0], -1) % flat.shape[1], 1)
        results = []
        for module in [_kernels] + ([_avx2_build()] if _avx2_build() else []):
            _use_kernels(monkeypatch, module)
            for threads in (1, 2):
                with ovpool.num_threads(threads):
                    results.append(ovpool.max_pool(x, k, s, pb, pe, d, return_indices=False))
        for got in results:
            np.testing.assert_array_equal(got.reshape(want.shape).view(np.uint8),
                                          want.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.float64])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_values_alone_keep_the_first_tie_in_row_major_order(monkeypatch, dtype):
    """Max pooling without indices reduces the first axes before the last; among equal values
    of different bits (-0 and +0, NaNs with different payloads in all-NaN windows) the output
    is still the window's first in row-major order: the element at the oracle's index. Planes
    too large for the tiny path, 2-D and 3-D, the AVX2 3x3 stride-2 row kernel, strides and
    dilations; both builds, one and two threads."""
    rng = np.random.default_rng(67)
    cases = [((1, 2, 23, 19), ((3, 2), (1, 2), (1, 0), (1, 1), (1, 2))),
             ((1, 3, 30, 30), (3, 2, 1, 1, 1)),
             ((2, 2, 30, 34), (2, 2, 0, 0, 1)),
             ((1, 2, 100, 7), ((4, 3), 2, 0, 1, (1, 2))),
             ((2, 3, 9, 10, 11), ((2, 3, 2), (1, 2, 1), 0, (1, 0, 1), 1))]
    for shape, window in cases:
        x = _max_pool_input(rng, dtype, shape, 12)
        if x.dtype == np.float32:
            _add_nan_payloads(x, rng, 0.1)
        _assert_values_alone_at_oracle_index(monkeypatch, x, [window])


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_16bit_float_values_alone_go_by_keys(monkeypatch, dtype):
    """float16 and bfloat16 without indices are pooled as int16 keys (max_plane_keys: the
    separable passes of max_plane_values on keys, sixteen to a vector, the winners' values
    the keys read back; outputs of key 0 or NaN, shared by values of different bits, read
    from the input at their window's first element holding that key). Every bit pattern
    (NaN payloads, signed zeros, infinities) and all-NaN windows through 1-D rows, 2-D planes
    with strides 1 to 5 (stride-2 rows split into phases, strided picks), dilations, padding,
    empty windows, and 3-D planes (whole passes over the first axis); both builds, one and
    two threads. (3-wide stride-2 rows keep the float32 row kernel: the test above.)"""
    if dtype == "bfloat16":
        dtype = ml_dtypes.bfloat16
    for shape, windows in [((2, 3, 301), [(3, 3, 0, 2, 2), (5, 1, 2, 2, 1), (2, 2, 0, 0, 1)]),
                           ((1, 2, 64, 70), [((3, 2), (1, 2), (1, 0), (1, 1), (1, 2)),
                                             ((2, 3), (1, 2), (0, 1), (0, 5), (1, 2)),
                                             ((1, 3), (2, 3), 0, 0, (1, 2)),
                                             ((2, 2), (2, 4), (1, 1), (1, 1), 1),
                                             ((1, 1), (1, 5), 0, 0, 1)]),
                           ((2, 2, 7, 12, 15), [((2, 3, 2), (1, 2, 1), 0, (1, 0, 1), 1),
                                                ((3, 1, 4), (2, 1, 3), (1, 0, 0), 0, (1, 1, 2))])]:
        x = _every_16bit_pattern_shuffled(dtype, shape, 89)
        x.reshape(-1)[:20] = np.nan  # whole-NaN windows
        _assert_values_alone_at_oracle_index(monkeypatch, x, windows)


# float64 windows of five to eight taps stepping one apart: the AVX2 build sums their runs in
# one sweep (sweep_rows), four at a time plus an overlapping last vector; rows of 89 and 13
# (not multiples of four) along the last axis, 18 and 11 along the first.
FLOAT64_SWEEPS = [((1, 12, 18, 89), (5, 7)), ((1, 12, 11, 13), (8, 6)), ((2, 3, 18, 89), (6, 8))]


@pytest.mark.parametrize("shape, kernel", FLOAT64_SWEEPS)
def test_float64_windows_of_five_to_eight_taps_match_the_oracle(shape, kernel):
    from helpers import assert_same_averages
    from reference import ref_avg_pool

    rng = np.random.default_rng(53)
    x = rng.integers(-8, 9, size=shape).astype(np.float64)
    x[x == 0] = -0.0
    x.reshape(-1)[rng.random(x.size) < 0.03] = np.nan
    x.reshape(-1)[rng.random(x.size) < 0.02] = -np.inf
    for auto_pad, exclude_pad in [("same_upper", False), ("valid", True), ("same_lower", True)]:
        kw = dict(auto_pad=auto_pad, exclude_pad=exclude_pad, rounding_type="ceil")
        assert_same_averages(ovpool.avg_pool(x, kernel, **kw), ref_avg_pool(x, kernel, **kw))


@pytest.mark.parametrize("shape, kernel", FLOAT64_SWEEPS)
def test_float64_windows_of_five_to_eight_taps_keep_their_bits(monkeypatch, shape, kernel):
    def pool_all(x):
        return [ovpool.avg_pool(x, kernel, auto_pad="same_upper", exclude_pad=False,
                                rounding_type="ceil"),
                ovpool.avg_pool(x, kernel, auto_pad="valid")]

    _assert_random_planes_keep_their_bits(monkeypatch, pool_all, shape, 59, (np.float64,))
