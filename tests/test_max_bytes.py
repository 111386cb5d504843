"""Max pooling of int8 / uint8 planes through the byte paths of the AVX2 build: values alone
over rows of 16 bytes and more (max_plane_bytes: vertical windows with every tap in
registers, windows along the row as one vector run, with the row padded by the type's lowest
value when padding clips the windows, edge windows one by one otherwise), strided picks by
byte shuffles (simd::pick_bytes: windows of one tap picked from the input, strided windows
of several taps picked straight from the rows, tap by tap, sixteen windows at a time, the
even/odd split of values-only rows), one-tap
strided windows along outer axes, and tiny planes whose results and indices leave the lanes by
vector stores. Every case against the oracle, on one and two threads, and both builds against
each other."""

import numpy as np
import pytest

import ovpool
from test_kernels import _assert_builds_agree_bitwise, _avx2_build


@pytest.fixture(autouse=True)
def _small_inputs_on_two_threads(monkeypatch):
    """Calls far below the bytes a second thread is worth: lowered, so that the thread-count
    comparisons really run two threads."""
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_BYTES_PER_THREAD", 1)


def _bytes(rng, dtype, shape, extremes=False):
    """Few distinct values (ties); with `extremes`, mostly the type's lowest and highest, so
    that a window reading the lowest-value padding of the byte rows would show it."""
    info = np.iinfo(dtype)
    if extremes:
        choices = np.array([info.min, info.min, info.min, info.min + 1, info.max], dtype)
        return rng.choice(choices, size=shape)
    low = 0 if dtype == np.uint8 else -3
    return rng.integers(low, low + 5, size=shape).astype(dtype)


def _assert_matches(x, k, s, pb, pe, d, rounding="ceil_torch", index_type="i64", axis=0):
    from reference import ref_max_pool

    want, want_index = ref_max_pool(x, k, s, pb, pe, d, axis=axis, rounding_type=rounding)
    before = ovpool.get_num_threads()
    for threads in (1, 2):
        ovpool.set_num_threads(threads)
        try:
            values = ovpool.max_pool(x, k, s, pb, pe, d, rounding_type=rounding,
                                     return_indices=False)
            got, got_index = ovpool.max_pool(x, k, s, pb, pe, d, rounding_type=rounding,
                                             index_element_type=index_type, axis=axis)
        finally:
            ovpool.set_num_threads(before)
        np.testing.assert_array_equal(values, want)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_index, want_index)
        assert got_index.dtype == (np.int64 if index_type == "i64" else np.int32)


# (shape, kernel, strides, pads_begin, pads_end, dilations, rounding)
VALUE_ROWS = [
    # 1-D rows (the plane is one row): 3-wide stride-2 windows with one element of padding
    # before, dilated strided windows, steps 1 to 8 and a step past the vector kernel's.
    ((2, 3, 379), 3, 2, 1, 0, 1, "ceil"),
    ((1, 2, 200), 4, 3, 2, 3, 2, "ceil_torch"),
    ((1, 3, 131), 2, 5, 0, 1, 3, "floor"),
    ((1, 1, 300), 3, 8, 1, 1, 1, "ceil"),
    ((1, 1, 300), 2, 9, 0, 0, 1, "floor"),
    ((1, 2, 77), 5, 1, 2, 2, 1, "floor"),
    # 2-D planes: windows clipped by padding on both sides (the padded row), dilated along
    # the row, strided along it (picks out of the run of stride-1 windows), rows of 16 bytes.
    ((2, 3, 64, 52), (6, 5), (2, 1), (0, 4), (0, 5), (1, 3), "ceil"),
    ((1, 2, 20, 70), (3, 4), (1, 2), (1, 3), (1, 3), (2, 2), "ceil"),
    ((1, 2, 9, 100), (2, 3), (2, 3), 1, 2, (1, 3), "ceil_torch"),
    ((1, 2, 7, 129), (2, 7), (1, 7), 0, 3, 1, "floor"),
    ((1, 1, 6, 16), (2, 2), 1, 0, 1, 1, "floor"),
    # Windows wholly in the padding (empty: the rows' edge windows one by one instead).
    ((1, 2, 5, 40), (2, 2), (3, 2), (0, 1), (4, 3), 1, "ceil"),
    # Three spatial axes: the first by a pass, the last two by the byte rows.
    ((1, 2, 3, 10, 33), (2, 3, 3), (1, 2, 1), 1, 1, (1, 1, 2), "ceil"),
    # Vertical windows of one row, read in place (not copied) when the row's windows all lie
    # inside it: no padding (the last plane's last row read up to the input's end), padding
    # along the row (the padded copy), windows wholly in the padding (edge windows one by
    # one, from the row in place).
    ((2, 3, 23, 70), (1, 2), (4, 2), 0, 0, (3, 1), "floor"),
    ((1, 2, 21, 35), (1, 3), (2, 3), 0, 0, (1, 1), "ceil_torch"),
    ((1, 2, 23, 70), (1, 3), (4, 2), (0, 1), (0, 1), 1, "ceil"),
    ((1, 2, 5, 40), (1, 2), (3, 2), (0, 1), (4, 3), 1, "ceil"),
]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.usefixtures("max_passes_on_small_planes")
def test_byte_rows_match_the_oracle(dtype):
    rng = np.random.default_rng(61)
    for shape, k, s, pb, pe, d, rounding in VALUE_ROWS:
        for extremes in (False, True):
            x = _bytes(rng, dtype, shape, extremes)
            _assert_matches(x, k, s, pb, pe, d, rounding)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_byte_rows_of_the_lowest_value_stay_the_lowest(dtype):
    """A plane of nothing but the type's lowest value: the padding of the byte rows, the
    same value, is no window's result beyond what the plane gives; windows wholly in the
    padding get the lowest value too (the empty value of max pooling)."""
    x = np.full((1, 2, 8, 48), np.iinfo(dtype).min, dtype)
    for k, s, pb, pe in [((3, 5), (1, 2), 2, 4), ((2, 2), (3, 3), 0, 5)]:
        _assert_matches(x, k, s, pb, pe, 1, "ceil")


# Strided last axes with indices: (shape, kernel, strides, pads_begin, pads_end, dilations).
PICKS = [
    # One tap a window: every step-th element picked from the input (steps 2 to 17, rows of
    # fewer than 16, 16 to 31, and 32 or more picks).
    ((1, 1, 258), 1, 2, 0, 0, 1),
    ((2, 3, 11, 66), (1, 1), (3, 2), 0, 0, 1),
    ((1, 2, 3, 150), (1, 1), (1, 5), 0, 0, 1),
    ((1, 2, 3, 41), (1, 1), (1, 3), 0, 0, 1),
    ((1, 2, 3, 300), (1, 1), (2, 16), 0, 0, 1),
    ((1, 2, 3, 300), (1, 1), (2, 17), 0, 0, 1),
    # Windows of several taps picked from the run of every stride-1 window (steps 2 to 9).
    ((2, 3, 30, 121), (4, 4), (5, 5), (2, 1), (3, 1), (2, 1)),
    ((1, 3, 25, 69), (3, 3), (4, 5), 0, 1, 1),
    ((2, 2, 40, 143), (6, 3), (3, 3), (3, 1), (3, 0), (3, 1)),
    ((1, 2, 20, 120), (4, 2), (6, 3), 0, 0, (1, 2)),
    ((1, 2, 13, 53), (6, 5), (1, 2), (2, 2), (0, 4), (2, 2)),
    ((1, 2, 6, 200), (2, 3), (1, 9), 1, 1, (1, 2)),
    ((1, 2, 6, 200), (2, 2), (1, 7), 0, 0, 1),
    # Strided windows straight from the rows (steps 2 to 8, sixteen windows a row at a
    # time, two rows to a vector): rows of at most 16 windows whose picks lie in one, two or
    # all S blocks of 16 bytes, more than 16 windows (whole groups, the last one past the
    # row's windows), an odd number of rows (the last one alone), steps 6 to 8.
    ((1, 3, 7, 31), (2, 3), (1, 2), 0, 0, (1, 2)),
    ((1, 1, 5, 40), (1, 4), (1, 3), 0, 0, 1),
    ((1, 1, 3, 140), (2, 2), (1, 8), 1, 1, (1, 3)),
    ((1, 3, 9, 150), (3, 6), (2, 6), 1, 2, 1),
    ((1, 1, 7, 203), (2, 5), (3, 7), 0, 3, (2, 1)),
    ((2, 1, 11, 37), (3, 2), (2, 2), 1, 1, (1, 5)),
    # The blocks of a group held (loaded once, each tap's picks shuffled out of them): one
    # to eight blocks, taps of a group spread past the step's blocks (dilated), up to 16
    # taps; 17 taps and taps spread over more than twice the step's blocks load each tap's
    # blocks instead.
    ((1, 2, 5, 160), (1, 16), (1, 2), 0, 0, 1),
    ((1, 2, 5, 160), (1, 17), (1, 2), 0, 0, 1),
    ((1, 2, 5, 200), (1, 3), (1, 2), 0, 0, 20),
    ((1, 3, 5, 300), (2, 4), (1, 8), 0, 0, (1, 2)),
    ((1, 3, 5, 300), (2, 4), (1, 8), 0, 0, (1, 3)),
    ((2, 1, 5, 290), (1, 8), (1, 7), 1, 1, (1, 2)),
    ((1, 1, 5, 90), (1, 5), (1, 2), 0, 0, (1, 4)),
    ((1, 2, 12, 25), (1, 2), (1, 2), 0, 0, 1),
    ((1, 3, 24, 13), (1, 2), (1, 2), 0, 0, 1),
    # Codes as bit fields (offsets past a byte, the fields' widths within one): three axes;
    # and windows whose fields would not fit (9 x 10 taps: mixed-radix codes).
    ((1, 2, 6, 10, 40), (2, 3, 3), (1, 2, 3), 0, 1, (2, 1, 2)),
    ((1, 2, 30, 64), (9, 10), (3, 4), 0, 0, 1),
    # Stride-1 rows with edge windows on both sides (the edge columns, 32 rows at a time by
    # byte transposes, and the rows left over one by one), rows of 8 to 15 outputs.
    ((1, 3, 12, 63), (5, 7), (2, 1), (2, 6), (2, 6), (1, 2)),
    ((2, 3, 13, 20), (3, 3), (3, 1), 1, 1, 1),
    ((2, 3, 30, 41), (7, 1), (3, 3), (3, 0), (1, 0), (2, 1)),
]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_strided_byte_picks_match_the_oracle(dtype, index_type):
    rng = np.random.default_rng(67)
    for shape, k, s, pb, pe, d in PICKS:
        x = _bytes(rng, dtype, shape)
        _assert_matches(x, k, s, pb, pe, d, "ceil_torch", index_type, axis=0)
        _assert_matches(x, k, s, pb, pe, d, "floor", index_type, axis=2)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_one_tap_strided_columns_match_the_oracle(dtype):
    """Windows of one tap along an outer axis, with a stride: the rows they read copied."""
    rng = np.random.default_rng(71)
    for shape, k, s in [((2, 3, 25, 33), (1, 1), (3, 2)), ((1, 2, 4, 9, 40), (1, 2, 1),
                                                           (2, 3, 1))]:
        x = _bytes(rng, dtype, shape)
        _assert_matches(x, k, s, 0, 0, 1, "floor", "i64", axis=2)
        _assert_matches(x, k, s, 0, 0, 1, "ceil", "i32", axis=0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_tiny_byte_planes_leave_their_lanes_whole(dtype, index_type):
    """Tiny planes of fewer than 8 and of 8 to 15 outputs, back to back in groups of 32
    planes (plane counts that end a group early): results and indices stored 16 (indices 8 or
    4) at a time, the bytes past a plane's being the next plane's."""
    rng = np.random.default_rng(73)
    for shape, k, s, pb, pe, d in [((1, 75, 8, 7), (6, 1), (3, 1), (5, 0), (4, 0), (3, 3)),
                                   ((2, 41, 24), 5, 3, 3, 0, 3),
                                   ((1, 70, 5, 6), (2, 2), (2, 3), 0, 0, 1),
                                   ((3, 13, 2, 2), (1, 1), 1, 0, 0, 1),
                                   ((1, 66, 4, 15), (2, 1), (2, 1), 0, 0, 1)]:
        x = _bytes(rng, dtype, shape)
        _assert_matches(x, k, s, pb, pe, d, "ceil_torch", index_type, axis=0)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_byte_paths_keep_the_baseline_bits(monkeypatch):
    rng = np.random.default_rng(79)
    x = _bytes(rng, np.int8, (2, 3, 30, 121), extremes=True)
    u = _bytes(rng, np.uint8, (1, 70, 8, 7))
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        ovpool.max_pool(x, (6, 5), (2, 1), (0, 4), (0, 5), (1, 3), return_indices=False),
        ovpool.max_pool(x[..., :40], 3, 2, 1, 1, return_indices=False),
        ovpool.max_pool(x, (4, 4), (5, 5), (2, 1), (3, 1), (2, 1)),
        ovpool.max_pool(x, (1, 1), (3, 2), index_element_type="i32"),
        ovpool.max_pool(u, (6, 1), (3, 1), (5, 0), (4, 0), (3, 3), index_element_type="i32"),
        ovpool.max_pool(x, (6, 5), (1, 2), (2, 2), (0, 4), (2, 2), index_element_type="i32"),
        ovpool.max_pool(x, (3, 6), (2, 6), 1, 2, 1),
        ovpool.max_pool(x[:1, :2, :, :64], (9, 10), (3, 4)),
        ovpool.max_pool(x, (1, 2), (4, 2), 0, 0, (3, 1), return_indices=False),
        ovpool.max_pool(x, (1, 8), (1, 7), 1, 1, (1, 2), index_element_type="i32"),
        ovpool.max_pool(x, (2, 16), (1, 2)),
    ])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_every_tap_count_of_the_byte_runs_matches_the_oracle(dtype):
    """Runs of every stride-1 window with 2 to 8 taps (the tap count a constant: code
    increments made once, the loop unrolled) and with 9 and 10 (the general loop), along the
    row (codes from the tap number alone) and along the columns (codes carried from the row
    pass), rows of 32 entries and more."""
    rng = np.random.default_rng(83)
    x = _bytes(rng, dtype, (1, 2, 24, 75), extremes=True)
    for taps in range(2, 11):
        _assert_matches(x, (taps, taps), 1, 0, 0, 1, "floor", "i32", axis=0)
        _assert_matches(x, (taps, 2), (1, 2), 1, 0, (2, 1), "ceil", "i64", axis=2)


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_byte_runs_of_every_tap_count_keep_the_baseline_bits(monkeypatch):
    rng = np.random.default_rng(89)
    x = _bytes(rng, np.uint8, (1, 2, 24, 75), extremes=True)
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        out for taps in range(2, 11) for out in (
            ovpool.max_pool(x, (taps, taps), 1, index_element_type="i32"),
            ovpool.max_pool(x, (taps, taps), 1, return_indices=False))])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_irregular_byte_rows_pick_sixteen_windows_at_a_time(dtype):
    """Irregular last axes of 16 windows or more (one run per tap count): each group of
    sixteen windows picked from the runs by byte shuffles, the last group overlapping the one
    before; adaptive windows of two tap counts, fixed windows mostly cut by padding (three
    tap counts) with windows wholly in the padding (empty: the lowest value, index 0), rows
    of exactly 16 windows."""
    from reference import ref_adaptive_max_pool

    rng = np.random.default_rng(101)
    for shape, size in [((1, 3, 300), (61,)), ((1, 2, 5, 100), (3, 16)), ((1, 2, 47), (17,))]:
        x = _bytes(rng, dtype, shape, extremes=True)
        want, want_index = ref_adaptive_max_pool(x, size)
        for index_type in ("i64", "i32"):
            got, got_index = ovpool.adaptive_max_pool(x, size, index_element_type=index_type)
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} {size}")
            np.testing.assert_array_equal(got_index, want_index, err_msg=f"{shape} {size}")
    x = _bytes(rng, dtype, (1, 2, 3, 20))
    _assert_matches(x, (1, 3), 1, (0, 17), (0, 17), (1, 8), "floor", "i32", axis=2)
