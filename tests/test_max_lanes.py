"""Max pooling of tiny planes side by side (core/max_lanes.hpp): planes go into lanes and the
results out of them by transposes (AVX2: 16x16 byte transposes for int8 / uint8 planes of 16
or more elements, 8x8 and 4x4 blocks for 2-, 4- and 8-byte lanes; 16-bit floats as int16 keys),
outputs taken out lanes_out_chunk (64) at a time, indices of eight or fewer outputs by 8x8
transposes of 16-bit codes where the plane terms allow (AVX2), else read in place. Plane
counts that leave the last group of lanes part-filled, planes below and above 16 elements,
outputs below 8, below 16, and above 64 (two chunks), both index types and plane_modulus
(axis), against the numpy oracle and the baseline build. Planes of 129-1024 elements (bytes:
256) of two or three axes whose windows hold few taps take the same path: against the oracle,
the separable passes and the baseline build."""

import numpy as np
import pytest

import ovpool
from test_kernels import _add_nan_payloads, _assert_builds_agree_bitwise, _avx2_build

DTYPES = [np.float32, np.float16, "bfloat16", np.float64, np.int8, np.uint8, np.int32, np.int64]


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _data(dtype, shape, rng):
    """Many ties, NaN, whole-NaN planes, signed zeros (floats); the extremes (integers)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np.int64).astype(dtype)
        x[rng.random(shape) < 0.3] = info.max
        x.reshape(-1)[:7] = info.min
        return x
    x = rng.integers(-3, 4, size=shape).astype(dtype)
    x[rng.random(shape) < 0.2] = np.nan
    x.reshape(shape[0] * shape[1], -1)[-1] = np.nan     # a whole-NaN plane
    x[x == 0] = -0.0
    x.reshape(-1)[rng.random(x.size) < 0.1] = 0.0       # +0 ties with -0
    return x


# (plane shape, output size of adaptive pooling): outputs 1, 6, 15, 16, 20 and 99 (> 64).
ADAPTIVE = [((7, 5), (3, 2)), ((11, 11), (5, 3)), ((4, 3), (2, 1)), ((6, 8), (4, 4)),
            ((10, 12), (9, 11)), ((3, 4), (1, 1)), ((5, 9), (4, 5)), ((40,), (20,))]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiny_planes_match_the_oracle(dtype):
    from reference import ref_adaptive_max_pool, ref_max_pool

    dtype = _dtype(dtype)
    rng = np.random.default_rng(113)
    for plane, size in ADAPTIVE:
        for planes in (1, 2 * 17 + 3, 70):   # part-filled groups of 16 and 32 lanes
            x = _data(dtype, (1, planes) + plane, rng)
            want, want_index = ref_adaptive_max_pool(x, size)
            got, got_index = ovpool.adaptive_max_pool(x, size)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8),
                                          err_msg=f"{plane} {size} {planes}")
            np.testing.assert_array_equal(got_index, want_index,
                                          err_msg=f"{plane} {size} {planes}")
            got32 = ovpool.adaptive_max_pool(x, size, index_element_type="i32")[1]
            np.testing.assert_array_equal(got32, want_index)
    # Fixed windows with padding, values alone and indices over the whole tensor (axis 0).
    x = _data(dtype, (3, 13, 9, 7), rng)
    for kernel, strides, pads in [((3, 3), (2, 2), (1, 1)), ((2, 4), (1, 3), (0, 2))]:
        for axis in (0, 2):
            want, want_index = ref_max_pool(x, kernel, strides, pads, pads, axis=axis)
            got, got_index = ovpool.max_pool(x, kernel, strides, pads, pads, axis=axis)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
            np.testing.assert_array_equal(got_index, want_index, err_msg=f"{kernel} {axis}")
        got = ovpool.max_pool(x, kernel, strides, pads, pads, return_indices=False)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_tiny_planes_keep_the_baseline_bits(monkeypatch):
    """The transposed lanes (AVX2) against the baseline build's element-by-element copies:
    NaN payloads, signed zeros, ties, the integer extremes."""
    rng = np.random.default_rng(127)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.inf], np.float32), size=(2, 37, 10, 12))
    _add_nan_payloads(x, rng, 0.3)
    bytes_ = rng.integers(-128, 128, size=(2, 37, 10, 12)).astype(np.int8)
    bytes_[rng.random(bytes_.shape) < 0.4] = 127
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        run(a) for a in (x, bytes_, bytes_.view(np.uint8), x.astype(np.float64)) for run in (
            lambda a: ovpool.adaptive_max_pool(a, (9, 11)),
            lambda a: ovpool.adaptive_max_pool(a, (3, 2), index_element_type="i32"),
            lambda a: ovpool.max_pool(a, 3, 2, 1, 1, axis=0),
            lambda a: ovpool.max_pool(a, 3, 2, 1, 1, return_indices=False))])


# Planes of 129-1024 elements (bytes: up to 256) of two and three axes, with windows whose taps
# are few against the plane (about one tap per input element), so that they go side by side
# through the tap table too: part-filled groups of lanes, padding past the input (empty
# windows), dilation, ceil rounding, adaptive windows; work items of fewer planes than 256.
MID_PLANES = [((2, 37, 12, 20), True), ((1, 45, 16, 16), True), ((2, 33, 5, 6, 7), True),
              ((1, 19, 30, 33), False), ((2, 21, 6, 7, 9), False)]
MID_WINDOWS = [(2, 2, 0, 0, 1, "floor"), (3, 3, 1, 2, 1, "ceil"),
               ((1, 2), (2, 2), 0, (0, 3), (1, 2), "ceil_torch")]


@pytest.mark.parametrize("dtype", DTYPES)
def test_mid_planes_match_the_oracle(dtype):
    from reference import ref_adaptive_max_pool, ref_max_pool

    dtype = _dtype(dtype)
    rng = np.random.default_rng(131)
    for shape, bytes_too in MID_PLANES:
        if dtype.itemsize == 1 and not bytes_too:
            continue
        x = _data(dtype, shape, rng)
        rank = len(shape) - 2
        for k, s, pb, pe, d, rounding in MID_WINDOWS:
            if rank == 3 and isinstance(k, tuple):
                k, s, pe, d = k + (2,), s + (2,), pe + (1,), d + (1,)
            for axis in (0, 2):
                want, want_index = ref_max_pool(x, k, s, pb, pe, d, rounding, axis=axis)
                got, got_index = ovpool.max_pool(x, k, s, pb, pe, d, rounding, axis=axis)
                np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8),
                                              err_msg=f"{shape} {k} {s} {d} {axis}")
                np.testing.assert_array_equal(got_index, want_index,
                                              err_msg=f"{shape} {k} {s} {d} {axis}")
            got32 = ovpool.max_pool(x, k, s, pb, pe, d, rounding, index_element_type="i32")[1]
            np.testing.assert_array_equal(got32, ref_max_pool(x, k, s, pb, pe, d, rounding)[1])
            values = ovpool.max_pool(x, k, s, pb, pe, d, rounding, return_indices=False)
            np.testing.assert_array_equal(values.view(np.uint8), want.view(np.uint8))
        size = tuple(max(1, n // 2) for n in shape[2:])
        want, want_index = ref_adaptive_max_pool(x, size)
        got, got_index = ovpool.adaptive_max_pool(x, size)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        np.testing.assert_array_equal(got_index, want_index)


def test_mid_planes_give_the_passes_bits(monkeypatch):
    """The tap table against the separable passes on the same planes, bit for bit: NaN
    payloads, signed zeros, ties, the integer extremes; values alone and both index types."""
    from ovpool import pooling
    from test_kernels import _add_nan_payloads

    rng = np.random.default_rng(137)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.inf], np.float32), size=(2, 37, 12, 20))
    _add_nan_payloads(x, rng, 0.3)
    wide = rng.choice(np.array([0.0, -0.0, 2.0, -np.inf], np.float64), size=(1, 23, 6, 7, 9))
    _add_nan_payloads(wide, rng, 0.3)
    bytes_ = rng.integers(-128, 128, size=(1, 45, 16, 16)).astype(np.int8)
    bytes_[rng.random(bytes_.shape) < 0.4] = 127
    inputs = [x, x.astype(np.float16), _data(_dtype("bfloat16"), (2, 37, 12, 20), rng), wide,
              bytes_, bytes_.view(np.uint8), _data(np.dtype(np.int64), (1, 19, 30, 33), rng)]

    def run():
        out = []
        for a in inputs:
            out.append(ovpool.max_pool(a, 2, 2, axis=2))
            out.append(ovpool.max_pool(a, 3, 3, 1, 2, index_element_type="i32",
                                       rounding_type="ceil"))
            out.append(ovpool.max_pool(a, 2, 2, 0, 1, return_indices=False))
            out.append(ovpool.adaptive_max_pool(a, tuple(n // 2 for n in a.shape[2:])))
        return [b for r in out for b in (r if isinstance(r, tuple) else (r,))]

    lanes = run()
    monkeypatch.setattr(pooling, "_MID_PLANES_IN_LANES", False)
    passes = run()
    for a, b in zip(lanes, passes):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.skipif(_avx2_build() is None, reason="no AVX2 kernel build for this CPU/platform")
def test_mid_planes_keep_the_baseline_bits(monkeypatch):
    rng = np.random.default_rng(139)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.inf], np.float32), size=(1, 35, 24, 30))
    _add_nan_payloads(x, rng, 0.3)
    bytes_ = rng.integers(-128, 128, size=(2, 37, 12, 20)).astype(np.int8)
    _assert_builds_agree_bitwise(monkeypatch, lambda: [
        run(a) for a in (x, x.astype(np.float16), bytes_, x.astype(np.float64)) for run in (
            lambda a: ovpool.max_pool(a, 2, 2, axis=0),
            lambda a: ovpool.max_pool(a, 3, 3, 1, 1, index_element_type="i32"),
            lambda a: ovpool.max_pool(a, 2, 2, return_indices=False))])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_tiny_half_planes_on_keys(dtype):
    """16-bit floats go through the lanes as int16 keys (max_half_planes_lanes). Their winners
    of keys shared by values of different bits come from the input at the winner's offset as
    the float32 lanes gave them: -0 / +0 ties keep the first, and a NaN winner (all-NaN
    windows, signalling and quiet payloads, either sign) is the first NaN made quiet. Worked
    out from the oracle's indices, in both builds: planes 4x3 to 2x1 (six taps, two outputs)
    and 5x5 to 3x3."""
    from reference import ref_adaptive_max_pool
    from ovpool import _kernels, pooling

    dt = _dtype(dtype)
    quiet = 0x0200 if dtype == "float16" else 0x0040
    nan_bits = ([0x7c01, 0xfd10, 0x7e03, 0x7c80] if dtype == "float16"
                else [0x7f81, 0xffa0, 0x7fc3, 0x7f90])
    rng = np.random.default_rng(131)
    for shape, size in [((1, 37, 4, 3), (2, 1)), ((2, 19, 5, 5), (3, 3))]:
        bits = rng.choice(np.array([0x0000, 0x8000, 0x3c00, 0xbc00], np.uint16), size=shape)
        nan_at = rng.random(shape) < 0.5
        bits[nan_at] = rng.choice(np.array(nan_bits, np.uint16), size=shape)[nan_at]
        x = bits.view(dt)
        _, want_index = ref_adaptive_max_pool(x, size)
        flat = bits.reshape(shape[0] * shape[1], -1)
        planes = np.arange(flat.shape[0]).reshape(shape[:2] + (1,) * len(size))
        raw = flat[planes, want_index.astype(np.int64)]
        want = raw
        is_nan = (want & 0x7fff) > (0x7c00 if dtype == "float16" else 0x7f80)
        want = np.where(is_nan, want | quiet, want).astype(np.uint16)
        assert (want != raw).any() and (want == 0x8000).any() and (want == 0).any()
        tables, _ = pooling._adaptive_plan(shape, size, ovpool.get_memory_limit())
        for module in (_kernels, _avx2_build()):
            if module is None:
                continue
            out = np.empty(shape[:2] + size, dt)
            index = np.empty(shape[:2] + size, np.int64)
            module.max_pool_planes(x, out, index, None, tables.packed, -np.inf, 1,
                                   tables.in_plane, module.STORAGE_KINDS[dtype],
                                   shape[0] * shape[1], tables.in_plane, int(np.prod(size)), 2, 1)
            np.testing.assert_array_equal(out.view(np.uint16), want, err_msg=module.__name__)
            np.testing.assert_array_equal(index, want_index, err_msg=module.__name__)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_tiny_half_planes_with_an_empty_value_of_shared_key(dtype):
    """An empty value whose key is shared (0, NaN) keeps tiny 16-bit float planes in float32
    lanes: the empty windows (padding past the input) get it, the others the winners the keys
    give with -inf, in both builds."""
    from ovpool import _kernels, pooling

    dt = _dtype(dtype)
    rng = np.random.default_rng(137)
    shape = (2, 21, 5, 5)
    x = _data(dt, shape, rng)
    tables, _ = pooling._fixed_plan(shape, 2, 3, 0, 5, 2, "floor", "explicit", None,
                                    ovpool.get_memory_limit())
    out_shape = tables.out_shape
    for module in (_kernels, _avx2_build()):
        if module is None:
            continue
        got = {}
        for empty in (-np.inf, 0.0, np.nan):
            out = np.empty(out_shape, dt)
            index = np.empty(out_shape, np.int32)
            module.max_pool_planes(x, out, None, index, tables.packed, empty, 1, tables.in_plane,
                                   module.STORAGE_KINDS[dtype], shape[0] * shape[1],
                                   tables.in_plane, int(np.prod(out_shape[2:])), 2, 1)
            got[empty] = out.view(np.uint16).copy(), index
        keyed, keyed_index = got[-np.inf]
        empty_at = keyed == np.array(-np.inf, dt).view(np.uint16)
        assert empty_at.any() and not empty_at.all()
        for empty in (0.0, np.nan):
            values, index = got[empty]
            np.testing.assert_array_equal(values[~empty_at], keyed[~empty_at])
            assert (values[empty_at] == np.array(empty, dt).view(np.uint16)).all()
            np.testing.assert_array_equal(index, keyed_index)


def _assert_indexed_on_every_axis(x, kernel, strides, bits=None):
    """max_pool of x with indices on every index axis, both index types, one and two threads
    (the caller restores the thread count), against the oracle; values compared as `bits`
    when given (a 16-bit float's bits)."""
    from reference import ref_max_pool

    for axis in (0, 1, 2, 3):
        want, want_index = ref_max_pool(x, kernel, strides, axis=axis)
        for threads, index_type in ((1, "i64"), (2, "i64"), (1, "i32"), (2, "i32")):
            ovpool.set_num_threads(threads)
            got, got_index = ovpool.max_pool(x, kernel, strides, axis=axis,
                                             index_element_type=index_type)
            where = f"{threads} {x.shape} {kernel} {axis}"
            if bits is not None:
                got, want = got.view(bits), want.view(bits)
            np.testing.assert_array_equal(got, want, err_msg=where)
            assert got_index.dtype == (np.int64 if index_type == "i64" else np.int32)
            np.testing.assert_array_equal(got_index, want_index, err_msg=where)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_tiny_half_planes_of_few_outputs_index_every_axis(dtype):
    """Tiny 16-bit float planes of eight or fewer outputs (2, 4, 6, 8; and 25, through the
    8x8 blocks) leave the lanes sixteen planes at a time by 8x8 transposes of their keys and of
    their codes plus each plane's offset in the group, the indices one run a group (AVX2),
    when the plane terms are 0 (axis 2, adaptive pooling) or do not wrap within the group
    (axis 0; axis 1 with 16 or 32 channels); groups crossing a channel boundary (axis 1, 5 and
    37 channels) and wrapped offsets (axis 3) take the loops over planes. Against the oracle,
    both index types, part-filled last groups, one and two threads."""
    from reference import ref_adaptive_max_pool

    dt = _dtype(dtype)
    rng = np.random.default_rng(139)
    windows = [((4, 3), (2, 3), (2, 2)), ((5, 5), 3, 2), ((6, 6), 2, (2, 3)), ((4, 8), 2, 2),
               ((6, 6), 2, 1)]
    previous = ovpool.get_num_threads()
    try:
        for batch, channels in [(7, 5), (2, 16), (3, 32), (2, 37), (1, 3)]:
            for plane, kernel, strides in windows:
                x = _data(dt, (batch, channels) + plane, rng)
                _assert_indexed_on_every_axis(x, kernel, strides, bits=np.uint16)
            x = _data(dt, (batch, channels, 4, 3), rng)
            want, want_index = ref_adaptive_max_pool(x, (2, 1))
            for threads in (1, 2):
                ovpool.set_num_threads(threads)
                got, got_index = ovpool.adaptive_max_pool(x, (2, 1))
                np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
                np.testing.assert_array_equal(got_index, want_index)
    finally:
        ovpool.set_num_threads(previous)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_tiny_byte_planes_of_few_outputs_index_every_axis(dtype):
    """Tiny int8 / uint8 planes of eight or fewer outputs (2, 4, 6, 8; and 25, through the
    16x16 byte blocks) get their indices out of the 32 byte lanes as two halves of sixteen
    planes (codes widened to 16 bits plus each plane's offset in the group, 8x8 transposes,
    one run of indices a group; AVX2), when the plane terms are 0 (axis 2) or do not wrap
    within the group (axis 0; axis 1 with 32 or 64 channels); groups crossing a channel
    boundary (axis 1 with 5, 16, 20 and 37 channels) and wrapped offsets (axis 3) take the
    loops over planes. Groups of 3, 10 and 20 planes (the second half part-filled or unused).
    Against the oracle (ties at the type's largest value: the first one wins), both index
    types, one and two threads."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(149)
    windows = [((4, 3), (2, 3), (2, 2)), ((5, 5), 3, 2), ((6, 6), 2, (2, 3)), ((4, 8), 2, 2),
               ((6, 6), 2, 1)]
    previous = ovpool.get_num_threads()
    try:
        for batch, channels in [(7, 5), (2, 32), (3, 64), (2, 37), (1, 3), (1, 20), (2, 16)]:
            for plane, kernel, strides in windows:
                x = _data(dt, (batch, channels) + plane, rng)
                _assert_indexed_on_every_axis(x, kernel, strides)
    finally:
        ovpool.set_num_threads(previous)
