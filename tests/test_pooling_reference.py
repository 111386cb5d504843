"""ovpool's public API against the slow pure-numpy oracle in ``tests/reference.py``.

Part 1: seeded random configurations of the four ops (spatial ranks 1-4, every supported dtype,
strides, dilations, asymmetric pads, every auto_pad and rounding mode, exclude_pad both ways,
windows hanging over the padded end, kernels covering the whole padded extent, max-pool axis
and index type, ``out=`` / ``out_indices=``, non-contiguous inputs, zero-size batch/channel,
NaN-containing inputs and many ties). Each configuration is one test id, e.g.
``avg-017-r2-float16``; configurations whose dilated kernel does not fit the padded input are
generated too and must raise ``BadAttributeError`` (ids ending in ``-raises``).

Part 2: error handling: every bad attribute, shape, dtype and ``out=`` argument raises the
right ``ovpool.errors`` class with a message naming the attribute and the offending value.

Tolerances: max values and indices and integer averages exactly; float32 averages rtol 1e-5,
float64 rtol 1e-12 (each with an absolute floor of the same size relative to the largest input
magnitude, for windows whose sum cancels); float16/bfloat16 averages within one ulp of the
dtype of the oracle's float64 result cast to the dtype.

A summary line with the number of configurations checked per op is printed at the end.
"""

import collections

import numpy as np
import pytest

import ovpool
from ovpool.errors import (
    BadArgumentError,
    BadAttributeError,
    BadDtypeError,
    BadShapeError,
    OvpoolError,
)

from reference import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    ref_adaptive_avg_pool,
    ref_adaptive_max_pool,
    ref_avg_pool,
    ref_max_pool,
    ref_output_len,
    ref_output_shape,
)

from helpers import assert_avg_close, assert_max_equal, summary_line

SEED = 61_2024
N_AVG = 320
N_MAX = 320
N_ADAPTIVE_AVG = 160
N_ADAPTIVE_MAX = 160

ROUNDINGS = ("floor", "ceil", "ceil_torch")

# ------------------------------------------------------------------------------------------------
# counting, for the lead's report
# ------------------------------------------------------------------------------------------------

CHECKED = collections.Counter()


@summary_line
def _checked_line():
    if CHECKED:
        text = ", ".join(f"{k}: {v}" for k, v in sorted(CHECKED.items()))
        return f"reference comparisons passed: {text}"
    return None


# ------------------------------------------------------------------------------------------------
# random data and layouts
# ------------------------------------------------------------------------------------------------

def _dtype_name(dtype):
    return np.dtype(dtype).name


def _random_values(rng, shape, dtype, op="max"):
    """Random data of ``dtype``: often small integers (ties), sometimes NaN / inf for floats."""
    dtype = np.dtype(dtype)
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        style = rng.integers(0, 3)
        if style == 0:       # small range: many ties, including the dtype's lowest value
            lo = max(int(info.min), -3)
            # (int64 averages near the dtype's limits need a >64-bit sum: they have their own
            # test, test_integer_average_accumulates_exactly)
            if rng.random() < 0.3 and not (dtype == np.int64 and op in ("avg", "aavg")):
                lo = int(info.min)
            values = rng.integers(lo, lo + 5, size=shape, endpoint=True)
            return values.astype(dtype)
        if style == 1:       # whole range (int32 window sums overflow int32)
            lo, hi = int(info.min), int(info.max)
            if dtype == np.int64:
                # int64 sums beyond 64 bits are tested on their own
                # (test_integer_average_accumulates_exactly); stay within 2**59 here
                lo, hi = -(2 ** 59), 2 ** 59
            values = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)
            return values.astype(dtype)
        values = rng.integers(-100, 100, size=shape, endpoint=True)
        if dtype == np.uint8:
            values = values + 100
        return values.astype(dtype)
    # floats
    style = rng.integers(0, 3)
    if style == 0:
        values = rng.integers(-3, 3, size=shape, endpoint=True).astype(np.float64)
    elif style == 1:
        values = rng.standard_normal(size=shape) * 4.0
    else:
        values = rng.uniform(-100.0, 100.0, size=shape)
    if rng.random() < 0.25:                                     # NaN, sometimes whole windows
        values[rng.random(size=shape) < rng.choice([0.2, 0.6, 0.95])] = np.nan
    if rng.random() < 0.1:
        values[rng.random(size=shape) < 0.1] = -np.inf
    return values.astype(dtype)


def _layout(rng, x, kind):
    """Return an array equal to ``x`` laid out as ``kind`` ('c', 'transposed', 'strided',
    'reversed')."""
    if kind == "c" or x.size == 0:
        return x
    if kind == "transposed":
        perm = list(range(x.ndim))[::-1]
        base = np.ascontiguousarray(np.transpose(x, perm))
        view = np.transpose(base, perm)
    elif kind == "strided":
        axis = int(rng.integers(0, x.ndim))
        big_shape = list(x.shape)
        big_shape[axis] *= 2
        base = np.zeros(big_shape, dtype=x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, 2)
        base[tuple(index)] = x
        view = base[tuple(index)]
    elif kind == "reversed":
        axis = int(rng.integers(0, x.ndim))
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, -1)
        base = np.ascontiguousarray(x[tuple(index)])
        view = base[tuple(index)]
    else:  # pragma: no cover
        raise ValueError(kind)
    assert view.shape == x.shape
    return view


MAX_SPATIAL = {1: 9, 2: 6, 3: 4, 4: 3}


def _random_shape(rng, rank):
    n = int(rng.choice([0, 1, 1, 1, 2, 2]) if rng.random() < 0.1 else rng.integers(1, 3))
    c = int(rng.choice([0, 1, 2, 3]) if rng.random() < 0.1 else rng.integers(1, 4))
    spatial = tuple(int(rng.integers(1, MAX_SPATIAL[rank] + 1)) for _ in range(rank))
    return (n, c) + spatial


def _pick(rng, options):
    return options[int(rng.integers(0, len(options)))]


def _per_axis_or_scalar(rng, values):
    """Give an attribute as an int when every axis agrees (sometimes), else as a list/tuple."""
    if len(set(values)) == 1 and rng.random() < 0.3:
        return values[0]
    return list(values) if rng.random() < 0.5 else tuple(values)


def _fixed_config(rng, index, op):
    rank = int(_pick(rng, (1, 1, 2, 2, 2, 3, 3, 4)))
    shape = _random_shape(rng, rank)
    dtype = ALL_DTYPES[index % len(ALL_DTYPES)]
    auto_pad = _pick(rng, ("explicit", "explicit", "explicit", "same_upper", "same_lower",
                           "valid"))
    rounding = ROUNDINGS[int(rng.integers(0, 3))]
    exclude_pad = bool(rng.integers(0, 2))
    kernel, strides, dilations, pb, pe = [], [], [], [], []
    for a in range(rank):
        L = shape[2 + a]
        k = int(rng.integers(1, 5))
        d = int(_pick(rng, (1, 1, 1, 2, 3)))
        s = int(_pick(rng, (1, 1, 2, 2, 3, 4)))
        # pads: below the kernel as a rule; max pool and exclude_pad=False averages also get
        # pads at or beyond the kernel (windows lying wholly in the padding)
        pad_limit = k
        if op == "max" or (op == "avg" and not exclude_pad):
            pad_limit = k + 2 if rng.random() < 0.15 else k
        b = int(rng.integers(0, pad_limit))
        e = int(rng.integers(0, pad_limit))
        if (k - 1) * d + 1 > L + b + e and rng.random() < 0.7:
            # mostly keep the dilated kernel inside the padded input (the rest must raise)
            d = 1
            k = min(k, L + b + e)
        if rng.random() < 0.12:
            # a kernel covering the whole padded extent exactly (one output window in floor)
            d = 1
            k = L + b + e
        kernel.append(k)
        strides.append(s)
        dilations.append(d)
        pb.append(b)
        pe.append(e)
    cfg = dict(
        kernel=_per_axis_or_scalar(rng, kernel),
        strides=_per_axis_or_scalar(rng, strides),
        dilations=_per_axis_or_scalar(rng, dilations),
        pads_begin=_per_axis_or_scalar(rng, pb),
        pads_end=_per_axis_or_scalar(rng, pe),
        rounding_type=rounding,
        auto_pad=auto_pad,
    )
    # defaults are used sometimes, to exercise None
    for key, default in (("strides", 1), ("dilations", 1), ("pads_begin", 0), ("pads_end", 0)):
        vals = cfg[key]
        flat = [vals] if isinstance(vals, int) else list(vals)
        if all(v == default for v in flat) and rng.random() < 0.5:
            cfg[key] = None
    extra = {}
    if op == "avg":
        extra["exclude_pad"] = exclude_pad
    else:
        extra["axis"] = int(_pick(rng, (0, 0, 1, 2, -1)))
        extra["index_element_type"] = _pick(rng, ("i64", "i32"))
        extra["return_indices"] = bool(rng.random() >= 0.15)
    layout = _pick(rng, ("c", "c", "c", "transposed", "strided", "reversed"))
    give_out = bool(rng.random() < 0.2)
    data_seed = int(rng.integers(0, 2 ** 31))
    return dict(op=op, shape=shape, dtype=dtype, cfg=cfg, extra=extra, layout=layout,
                give_out=give_out, data_seed=data_seed, rank=rank)


def _resolved_pads(case):
    """Per-axis resolved (pb, pe, k) or None when the kernel does not fit."""
    cfg = case["cfg"]
    rank = case["rank"]

    def per_axis(v, default):
        if v is None:
            return [default] * rank
        return [v] * rank if isinstance(v, int) else list(v)

    k = per_axis(cfg["kernel"], None)
    s = per_axis(cfg["strides"], 1)
    d = per_axis(cfg["dilations"], 1)
    b = per_axis(cfg["pads_begin"], 0)
    e = per_axis(cfg["pads_end"], 0)
    out = []
    for a in range(rank):
        try:
            _, rb, re_ = ref_output_len(case["shape"][2 + a], k[a], s[a], d[a], b[a], e[a],
                                        cfg["rounding_type"], cfg["auto_pad"])
        except ValueError:
            return None
        out.append((rb, re_, k[a]))
    return out


def _make_cases(op, count, seed):
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        index = len(cases)
        case = _fixed_config(rng, index, op)
        pads = _resolved_pads(case)
        if pads is None:
            case["raises"] = True
        else:
            case["raises"] = False
            # OpenVINO refuses exclude_pad=True with an explicit pad >= the *dilated* kernel;
            # the random cases stay below the undilated kernel, and the band in between
            # (explicit, or computed by same_* from a dilated kernel) has its own tests:
            # test_avg_exclude_pad_limit_uses_dilated_kernel, test_avg_same_pads_beyond_kernel.
            if op == "avg" and case["extra"]["exclude_pad"] and any(
                    b >= k or e >= k for b, e, k in pads):
                continue
        cases.append(case)
    return cases


def _case_id(case, index):
    tail = "-raises" if case["raises"] else ""
    return f"{case['op']}-{index:03d}-r{case['rank']}-{_dtype_name(case['dtype'])}{tail}"


AVG_CASES = _make_cases("avg", N_AVG, SEED)
MAX_CASES = _make_cases("max", N_MAX, SEED + 1)


def _describe(case):
    return (f"shape={case['shape']} dtype={_dtype_name(case['dtype'])} layout={case['layout']} "
            f"out={case['give_out']} {case['cfg']} {case['extra']}")


# ------------------------------------------------------------------------------------------------
# Part 1: random configurations
# ------------------------------------------------------------------------------------------------

def _case_input(case):
    """The case's data (x) and the array handed to ovpool (xin: x in the case's layout)."""
    rng = np.random.default_rng(case["data_seed"])
    x = _random_values(rng, case["shape"], case["dtype"], case["op"])
    return x, _layout(rng, x, case["layout"])


@pytest.mark.parametrize("case", AVG_CASES, ids=[_case_id(c, i) for i, c in enumerate(AVG_CASES)])
def test_avg_pool_matches_reference(case):
    x, xin = _case_input(case)
    cfg, extra = case["cfg"], case["extra"]
    if case["raises"]:
        with pytest.raises(BadAttributeError):
            ovpool.avg_pool(xin, **cfg, **extra)
        with pytest.raises(BadAttributeError):
            ovpool.pool_output_shape(case["shape"], **cfg)
        CHECKED["avg (must raise)"] += 1
        return
    want = ref_avg_pool(x, **cfg, **extra)
    assert ovpool.pool_output_shape(case["shape"], **cfg) == want.shape, _describe(case)
    before = xin.copy()
    if case["give_out"]:
        out = np.full(want.shape, 7, dtype=x.dtype)
        got = ovpool.avg_pool(xin, **cfg, **extra, out=out)
        assert got is out or out.size == 0 or np.shares_memory(got, out), \
            "result does not live in out="
        got = out
    else:
        got = ovpool.avg_pool(xin, **cfg, **extra)
    try:
        assert_avg_close(got, want, x)
    except AssertionError as err:
        raise AssertionError(f"{err}\n  case: {_describe(case)}") from None
    assert np.array_equal(before.astype(np.float64), xin.astype(np.float64), equal_nan=True), \
        "input was modified"
    CHECKED["avg"] += 1


@pytest.mark.parametrize("case", MAX_CASES, ids=[_case_id(c, i) for i, c in enumerate(MAX_CASES)])
def test_max_pool_matches_reference(case):
    x, xin = _case_input(case)
    cfg, extra = case["cfg"], case["extra"]
    if case["raises"]:
        with pytest.raises(BadAttributeError):
            ovpool.max_pool(xin, **cfg, **extra)
        CHECKED["max (must raise)"] += 1
        return
    want, want_idx = ref_max_pool(x, **cfg, axis=extra["axis"])
    index_dtype = np.int32 if extra["index_element_type"] == "i32" else np.int64
    kwargs = dict(cfg, **extra)
    if case["give_out"]:
        out = np.full(want.shape, 3, dtype=x.dtype)
        kwargs["out"] = out
        if extra["return_indices"]:
            out_idx = np.full(want.shape, -5, dtype=index_dtype)
            kwargs["out_indices"] = out_idx
    result = ovpool.max_pool(xin, **kwargs)
    try:
        if extra["return_indices"]:
            assert isinstance(result, tuple) and len(result) == 2, "expected (values, indices)"
            got, got_idx = result
            if case["give_out"]:
                assert out.size == 0 or (np.shares_memory(got, out)
                                         and np.shares_memory(got_idx, out_idx))
                got, got_idx = out, out_idx
            assert_max_equal(got, want, got_idx, want_idx, index_dtype)
        else:
            assert isinstance(result, np.ndarray), "return_indices=False must return one array"
            got = out if case["give_out"] else result
            assert_max_equal(got, want)
    except AssertionError as err:
        raise AssertionError(f"{err}\n  case: {_describe(case)}") from None
    CHECKED["max"] += 1


def _adaptive_cases(op, count, seed):
    rng = np.random.default_rng(seed)
    cases = []
    for index in range(count):
        rank = int(_pick(rng, (1, 1, 2, 2, 2, 3, 3, 4)))
        shape = _random_shape(rng, rank)
        dtype = ALL_DTYPES[index % len(ALL_DTYPES)]
        # output sizes below, equal to and above the input length
        sizes = []
        for a in range(rank):
            L = shape[2 + a]
            sizes.append(int(_pick(rng, (1, max(1, L // 2), max(1, L - 1), L, L + 1,
                                         2 * L + 1, int(rng.integers(1, 8))))))
        output_size = _per_axis_or_scalar(rng, sizes)
        extra = {}
        if op == "amax":
            extra["index_element_type"] = _pick(rng, ("i64", "i32"))
            extra["return_indices"] = bool(rng.random() >= 0.15)
        cases.append(dict(op=op, rank=rank, shape=shape, dtype=dtype, output_size=output_size,
                          extra=extra, layout=_pick(rng, ("c", "c", "transposed", "strided",
                                                          "reversed")),
                          give_out=bool(rng.random() < 0.2), data_seed=int(rng.integers(0, 2**31)),
                          raises=False))
    return cases


ADAPTIVE_AVG_CASES = _adaptive_cases("aavg", N_ADAPTIVE_AVG, SEED + 2)
ADAPTIVE_MAX_CASES = _adaptive_cases("amax", N_ADAPTIVE_MAX, SEED + 3)


def _adescribe(case):
    return (f"shape={case['shape']} dtype={_dtype_name(case['dtype'])} layout={case['layout']} "
            f"out={case['give_out']} output_size={case['output_size']} {case['extra']}")


@pytest.mark.parametrize("case", ADAPTIVE_AVG_CASES,
                         ids=[_case_id(c, i) for i, c in enumerate(ADAPTIVE_AVG_CASES)])
def test_adaptive_avg_pool_matches_reference(case):
    x, xin = _case_input(case)
    want = ref_adaptive_avg_pool(x, case["output_size"])
    if case["give_out"]:
        out = np.full(want.shape, 1, dtype=x.dtype)
        got = ovpool.adaptive_avg_pool(xin, case["output_size"], out=out)
        assert out.size == 0 or np.shares_memory(got, out)
        got = out
    else:
        got = ovpool.adaptive_avg_pool(xin, case["output_size"])
    try:
        assert_avg_close(got, want, x)
    except AssertionError as err:
        raise AssertionError(f"{err}\n  case: {_adescribe(case)}") from None
    CHECKED["adaptive_avg"] += 1


@pytest.mark.parametrize("case", ADAPTIVE_MAX_CASES,
                         ids=[_case_id(c, i) for i, c in enumerate(ADAPTIVE_MAX_CASES)])
def test_adaptive_max_pool_matches_reference(case):
    x, xin = _case_input(case)
    want, want_idx = ref_adaptive_max_pool(x, case["output_size"])
    extra = case["extra"]
    index_dtype = np.int32 if extra["index_element_type"] == "i32" else np.int64
    kwargs = dict(extra)
    if case["give_out"]:
        out = np.full(want.shape, 2, dtype=x.dtype)
        kwargs["out"] = out
        if extra["return_indices"]:
            out_idx = np.full(want.shape, -1, dtype=index_dtype)
            kwargs["out_indices"] = out_idx
    result = ovpool.adaptive_max_pool(xin, case["output_size"], **kwargs)
    try:
        if extra["return_indices"]:
            got, got_idx = result
            if case["give_out"]:
                assert out.size == 0 or (np.shares_memory(got, out)
                                         and np.shares_memory(got_idx, out_idx))
                got, got_idx = out, out_idx
            assert_max_equal(got, want, got_idx, want_idx, index_dtype)
        else:
            assert isinstance(result, np.ndarray)
            assert_max_equal(out if case["give_out"] else result, want)
    except AssertionError as err:
        raise AssertionError(f"{err}\n  case: {_adescribe(case)}") from None
    CHECKED["adaptive_max"] += 1


# ------------------------------------------------------------------------------------------------
# Part 1b: targeted corners the random generator reaches only rarely
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_dtype_name)
def test_ceil_hanging_windows_all_dtypes(dtype):
    """ceil keeps a last window starting in the right pad; ceil_torch drops it; windows past
    the input are empty (max: lowest value, index 0; avg: 0)."""
    x = np.arange(1, 6).reshape(1, 1, 5).astype(dtype)
    for rounding in ROUNDINGS:
        for exclude_pad in (True, False):
            for kw in (dict(kernel=1, strides=3), dict(kernel=2, strides=2, pads_begin=1,
                                                       pads_end=1),
                       dict(kernel=3, strides=2, pads_begin=1, pads_end=1)):
                want = ref_avg_pool(x, **kw, exclude_pad=exclude_pad, rounding_type=rounding)
                got = ovpool.avg_pool(x, **kw, exclude_pad=exclude_pad, rounding_type=rounding)
                assert_avg_close(got, want, x)
                wv, wi = ref_max_pool(x, **kw, rounding_type=rounding)
                gv, gi = ovpool.max_pool(x, **kw, rounding_type=rounding)
                assert_max_equal(gv, wv, gi, wi)
                CHECKED["corners"] += 2


def test_avg_same_pads_beyond_kernel():
    """same_upper/same_lower compute pads from the dilated kernel; with exclude_pad=True they
    may reach the kernel size. OpenVINO accepts this (its pad check applies to explicit pads)
    and the window lying wholly in the padding averages to 0 (OpenVINO's CPU plugin gives NaN
    there, 0/0)."""
    x = np.array([[[1.0, 2.0]]], dtype=np.float32)
    for auto_pad, want in (("same_upper", [0.0, 1.0]), ("same_lower", [2.0, 0.0])):
        got = ovpool.avg_pool(x, 2, 1, dilations=3, exclude_pad=True, auto_pad=auto_pad)
        np.testing.assert_array_equal(got, np.array([[want]], dtype=np.float32))
        ref = ref_avg_pool(x, 2, 1, dilations=3, exclude_pad=True, auto_pad=auto_pad)
        np.testing.assert_array_equal(ref, got)


def test_avg_exclude_pad_limit_uses_dilated_kernel():
    """OpenVINO's exclude-pad check compares each pad with the *dilated* kernel: with k=2, d=3
    (effective 4) pads up to 3 are accepted, 4 is refused."""
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    kw = dict(kernel=2, strides=1, dilations=3, exclude_pad=True)
    # pads 2/0: O = 5, window j reads {j-2, j+1}: {1} {2} {0,3} {1,4} {2,5}
    np.testing.assert_array_equal(ovpool.avg_pool(x, pads_begin=2, pads_end=0, **kw),
                                  [[[2, 3, 2.5, 3.5, 4.5]]])
    # pads 0/3: O = 6, window j reads {j, j+3}: {0,3} {1,4} {2,5} {3} {4} {5}
    np.testing.assert_array_equal(ovpool.avg_pool(x, pads_begin=0, pads_end=3, **kw),
                                  [[[2.5, 3.5, 4.5, 4, 5, 6]]])
    for pads in ((4, 0), (0, 4)):
        with pytest.raises(BadAttributeError):
            ovpool.avg_pool(x, pads_begin=pads[0], pads_end=pads[1], **kw)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=_dtype_name)
def test_integer_average_rounds_half_to_even(dtype):
    signed = np.dtype(dtype) != np.uint8
    pairs = [(1, 2), (2, 3), (3, 4), (5, 6), (0, 1)]
    if signed:
        pairs += [(-1, -2), (-2, -3), (-3, -4), (-1, 0)]
    x = np.array(pairs, dtype=dtype).reshape(1, 1, -1)
    got = ovpool.avg_pool(x, 2, 2)
    want = [[round((a + b) / 2) for a, b in pairs]]   # Python's round is half-to-even
    np.testing.assert_array_equal(got, np.array([want], dtype=dtype))
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, len(pairs)), got)
    # three elements: 1/3 and 2/3 fractions round to nearest
    y = np.array([1, 1, 2, 1, 2, 2] + ([-1, -1, -2, -1, -2, -2] if signed else []),
                 dtype=dtype).reshape(1, 1, -1)
    np.testing.assert_array_equal(ovpool.avg_pool(y, 3, 3), ref_avg_pool(y, 3, 3))


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=_dtype_name)
def test_integer_average_accumulates_exactly(dtype):
    """Sums that overflow the dtype itself must still be exact (int32: 4 * 2**31 - 4; int64:
    sums beyond 2**63)."""
    info = np.iinfo(dtype)
    x = np.array([info.max, info.max, info.max - 1, info.max - 3,
                  info.min, info.min, info.min + 1, info.min + 2], dtype=dtype).reshape(1, 1, 8)
    got = ovpool.avg_pool(x, 4, 4)
    np.testing.assert_array_equal(got, ref_avg_pool(x, 4, 4))
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, 2), ref_adaptive_avg_pool(x, 2))


def test_max_index_for_lowest_value():
    """A window whose max equals the dtype's lowest value reports its true position."""
    for dtype in (np.uint8, np.int8, np.int32, np.int64):
        low = np.iinfo(dtype).min
        x = np.full((1, 2, 4), low, dtype=dtype)
        x[0, 1, 3] = low + 1
        v, i = ovpool.max_pool(x, 2, 2)
        wv, wi = ref_max_pool(x, 2, 2)
        assert_max_equal(v, wv, i, wi)
        assert wi.tolist() == [[[0, 2], [4, 7]]]
    x = np.array([[[-np.inf, -np.inf, 1.0, -np.inf]]], dtype=np.float32)
    v, i = ovpool.max_pool(x, 2, 2)
    assert v.tolist() == [[[-np.inf, 1.0]]] and i.tolist() == [[[0, 2]]]
    x = np.array([[[0.0, -np.inf, -np.inf, -np.inf]]], dtype=np.float32)
    v, i = ovpool.max_pool(x, 2, 2, pads_begin=1)
    assert v.tolist() == [[[0.0, -np.inf]]] and i.tolist() == [[[0, 1]]]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_dtype_name)
def test_nan_rules(dtype):
    nan = np.nan
    x = np.array([[[nan, 1.0, nan, nan, 2.0, nan, nan, nan]]]).astype(dtype)
    v, i = ovpool.max_pool(x, 2, 2)
    np.testing.assert_array_equal(v.astype(np.float64), [[[1.0, nan, 2.0, nan]]])
    assert i.tolist() == [[[1, 2, 4, 6]]]
    v, i = ovpool.adaptive_max_pool(x, 4)
    np.testing.assert_array_equal(v.astype(np.float64), [[[1.0, nan, 2.0, nan]]])
    assert i.tolist() == [[[1, 2, 4, 6]]]
    a = ovpool.avg_pool(x, 2, 2)
    assert np.isnan(a.astype(np.float64)).all()


def test_zero_size_batch_and_channel():
    for shape in [(0, 3, 5), (2, 0, 4, 4), (0, 0, 3, 3, 3)]:
        x = np.zeros(shape, dtype=np.float32)
        want_shape = ref_output_shape(shape, 2)
        assert ovpool.avg_pool(x, 2).shape == want_shape
        v, i = ovpool.max_pool(x, 2)
        assert v.shape == want_shape and i.shape == want_shape and i.dtype == np.int64
        assert ovpool.adaptive_avg_pool(x, 2).shape == shape[:2] + (2,) * (len(shape) - 2)
        v, i = ovpool.adaptive_max_pool(x, 2, index_element_type="i32")
        assert v.shape == shape[:2] + (2,) * (len(shape) - 2) and i.dtype == np.int32
        CHECKED["corners"] += 4


def test_contiguous_input_is_not_copied_into_result():
    """The result never aliases the input, and a C-contiguous input is left untouched."""
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5)
    keep = x.copy()
    out = ovpool.avg_pool(x, 2)
    assert not np.shares_memory(out, x)
    np.testing.assert_array_equal(x, keep)


def test_rank6_input_pools_over_four_axes():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 3, 2, 4, 3)).astype(np.float32)
    kw = dict(kernel=(2, 1, 2, 2), strides=(1, 1, 2, 1), pads_begin=(0, 0, 1, 0),
              pads_end=(1, 0, 0, 1), rounding_type="ceil")
    assert_avg_close(ovpool.avg_pool(x, **kw, exclude_pad=False),
                     ref_avg_pool(x, **kw, exclude_pad=False), x)
    wv, wi = ref_max_pool(x, **kw, axis=3)
    gv, gi = ovpool.max_pool(x, **kw, axis=3)
    assert_max_equal(gv, wv, gi, wi)


# ------------------------------------------------------------------------------------------------
# Part 2: errors
# ------------------------------------------------------------------------------------------------

X3 = np.arange(12, dtype=np.float32).reshape(1, 2, 6)
X4 = np.arange(2 * 5 * 5, dtype=np.float32).reshape(1, 2, 5, 5)


def _raises(exc_class, fn, *words):
    """``fn()`` raises ``exc_class`` (an OvpoolError) whose message contains every word."""
    with pytest.raises(exc_class) as info:
        fn()
    assert isinstance(info.value, OvpoolError)
    message = str(info.value)
    for word in words:
        assert str(word) in message, f"{word!r} not in message {message!r}"
    return info.value


BAD_FIXED_ATTRIBUTES = [
    # (kwargs, words that must appear in the message)
    (dict(kernel=0), ("kernel", "0")),
    (dict(kernel=(2, 0)), ("kernel", "0")),
    (dict(kernel=-2), ("kernel", "-2")),
    (dict(kernel=2, strides=0), ("strides", "0")),
    (dict(kernel=2, strides=(1, 0)), ("strides", "0")),
    (dict(kernel=2, dilations=0), ("dilations", "0")),
    (dict(kernel=2, dilations=(0, 1)), ("dilations", "0")),
    (dict(kernel=2, pads_begin=-3), ("pads_begin", "-3")),
    (dict(kernel=2, pads_end=(0, -7)), ("pads_end", "-7")),
    (dict(kernel=(2, 2, 2)), ("kernel", "2, 2, 2")),
    (dict(kernel=(2,)), ("kernel",)),
    (dict(kernel=2, strides=(1, 1, 1)), ("strides",)),
    (dict(kernel=2, dilations=(1,)), ("dilations",)),
    (dict(kernel=2, pads_begin=(0, 0, 0)), ("pads_begin",)),
    (dict(kernel=2, pads_end=(1,)), ("pads_end",)),
    (dict(kernel=2, auto_pad="same"), ("auto_pad", "same")),
    (dict(kernel=2, auto_pad="notset-ish"), ("auto_pad", "notset-ish")),
    (dict(kernel=2, rounding_type="round"), ("rounding_type", "round")),
    (dict(kernel=2, rounding_type="ceil-torch"), ("rounding_type", "ceil-torch")),
    (dict(kernel=6), ("kernel", "6")),                                   # 6 > 5
    (dict(kernel=3, dilations=3), ("kernel", "3")),                     # dilated 7 > 5
    (dict(kernel=(7, 2), pads_begin=(1, 0), pads_end=(0, 0)), ("kernel", "7")),  # 7 > 6
    (dict(kernel=6, auto_pad="valid", pads_begin=1, pads_end=1), ("kernel", "6")),
    (dict(kernel=2.5), ("kernel", "2.5")),
]


@pytest.mark.parametrize("kwargs,words", BAD_FIXED_ATTRIBUTES,
                         ids=[repr(b[0]) for b in BAD_FIXED_ATTRIBUTES])
def test_bad_fixed_attributes(kwargs, words):
    _raises(BadAttributeError, lambda: ovpool.avg_pool(X4, **kwargs), *words)
    _raises(BadAttributeError, lambda: ovpool.max_pool(X4, **kwargs), *words)
    _raises(BadAttributeError, lambda: ovpool.pool_output_shape(X4.shape, **kwargs), *words)


def test_exclude_pad_with_pad_not_below_kernel():
    # OpenVINO refuses exclude-pad=true with a pad >= kernel; ovpool follows it.
    _raises(BadAttributeError, lambda: ovpool.avg_pool(X3, 2, pads_begin=2), "pads_begin", "2")
    _raises(BadAttributeError, lambda: ovpool.avg_pool(X3, 2, pads_end=3), "pads_end", "3")
    # with exclude_pad=False it is allowed, and so for max pool
    np.testing.assert_array_equal(ovpool.avg_pool(X3, 2, pads_begin=2, exclude_pad=False),
                                  ref_avg_pool(X3, 2, pads_begin=2, exclude_pad=False))
    wv, wi = ref_max_pool(X3, 2, pads_begin=3, pads_end=3)
    gv, gi = ovpool.max_pool(X3, 2, pads_begin=3, pads_end=3)
    assert_max_equal(gv, wv, gi, wi)


@pytest.mark.parametrize("axis", [3, 4, -4, 100])
def test_bad_axis(axis):
    _raises(BadAttributeError, lambda: ovpool.max_pool(X3, 2, axis=axis), "axis", axis)


def test_good_axis_range():
    for axis in (-3, -2, -1, 0, 1, 2):
        wv, wi = ref_max_pool(X3, 2, axis=axis)
        gv, gi = ovpool.max_pool(X3, 2, axis=axis)
        assert_max_equal(gv, wv, gi, wi)


@pytest.mark.parametrize("value", [64, [1], b"i32", None, 3.5])
def test_malformed_index_element_type_is_a_bad_argument(value):
    for call in (lambda: ovpool.max_pool(X3, 2, index_element_type=value),
                 lambda: ovpool.adaptive_max_pool(X3, 2, index_element_type=value)):
        _raises(BadArgumentError, call, "index_element_type", repr(value))


@pytest.mark.parametrize("value", ["i16", "u32", "f32", "i8"])
def test_bad_index_element_type(value):
    _raises(BadAttributeError, lambda: ovpool.max_pool(X3, 2, index_element_type=value),
            "index_element_type", value)
    _raises(BadAttributeError,
            lambda: ovpool.adaptive_max_pool(X3, 2, index_element_type=value),
            "index_element_type", value)


@pytest.mark.parametrize("output_size,words", [
    (0, ("output_size", "0")),
    ((3, 0), ("output_size", "0")),
    (-2, ("output_size", "-2")),
    ((2, 2, 2), ("output_size", "3")),
    ((2,), ("output_size",)),
])
def test_bad_output_size(output_size, words):
    _raises(BadAttributeError, lambda: ovpool.adaptive_avg_pool(X4, output_size), *words)
    _raises(BadAttributeError, lambda: ovpool.adaptive_max_pool(X4, output_size), *words)


@pytest.mark.parametrize("shape", [(6,), (2, 6), (), (1, 2, 0), (1, 2, 3, 0)])
def test_bad_input_shape(shape):
    x = np.zeros(shape, dtype=np.float32)
    for fn in (lambda: ovpool.avg_pool(x, 1), lambda: ovpool.max_pool(x, 1),
               lambda: ovpool.adaptive_avg_pool(x, 1), lambda: ovpool.adaptive_max_pool(x, 1)):
        _raises(BadShapeError, fn)
    _raises(BadShapeError, lambda: ovpool.pool_output_shape(shape, 1))


BAD_DTYPES = [np.complex64, np.bool_, np.uint16, np.int16, np.uint32, np.uint64, object]
if np.dtype(np.longdouble).itemsize > 8:
    BAD_DTYPES.append(np.longdouble)


@pytest.mark.parametrize("dtype", BAD_DTYPES, ids=lambda d: np.dtype(d).name)
def test_bad_dtype(dtype):
    x = np.zeros((1, 1, 4), dtype=dtype)
    name = np.dtype(dtype).name
    for fn in (lambda: ovpool.avg_pool(x, 2), lambda: ovpool.max_pool(x, 2),
               lambda: ovpool.adaptive_avg_pool(x, 2), lambda: ovpool.adaptive_max_pool(x, 2)):
        _raises(BadDtypeError, fn, name)


def _bad_outs(shape, dtype):
    good = np.zeros(shape, dtype=dtype)
    wrong_dtype = np.zeros(shape, dtype=np.float64 if dtype != np.float64 else np.float32)
    wrong_shape = np.zeros(shape[:-1] + (shape[-1] + 1,), dtype=dtype)
    non_contig = np.zeros(shape[:-1] + (shape[-1] * 2,), dtype=dtype)[..., ::2]
    read_only = np.zeros(shape, dtype=dtype)
    read_only.flags.writeable = False
    fortran = np.asfortranarray(np.zeros(shape[::-1], dtype=dtype).T) \
        if sum(n > 1 for n in shape) > 1 else None
    bad = [("dtype", wrong_dtype), ("shape", wrong_shape), ("contiguous", non_contig),
           ("read-only", read_only), ("list", good.tolist())]
    if fortran is not None:
        bad.append(("fortran", fortran))
    return bad


@pytest.mark.parametrize("which", ["dtype", "shape", "contiguous", "read-only", "list",
                                   "fortran"])
def test_bad_out_argument(which):
    x = np.arange(2 * 3 * 6 * 6, dtype=np.float32).reshape(2, 3, 6, 6)
    shape = ref_output_shape(x.shape, 2, 2)
    bad = dict(_bad_outs(shape, np.float32))
    out = bad[which]
    _raises(BadArgumentError, lambda: ovpool.avg_pool(x, 2, 2, out=out), "out")
    _raises(BadArgumentError, lambda: ovpool.max_pool(x, 2, 2, out=out), "out")
    _raises(BadArgumentError, lambda: ovpool.max_pool(x, 2, 2, return_indices=False, out=out),
            "out")
    _raises(BadArgumentError, lambda: ovpool.adaptive_avg_pool(x, 3, out=out), "out")
    _raises(BadArgumentError, lambda: ovpool.adaptive_max_pool(x, 3, out=out), "out")


@pytest.mark.parametrize("which", ["dtype", "shape", "contiguous", "read-only", "list",
                                   "fortran"])
def test_bad_out_indices_argument(which):
    x = np.arange(2 * 3 * 6 * 6, dtype=np.float32).reshape(2, 3, 6, 6)
    shape = ref_output_shape(x.shape, 2, 2)
    bad = dict(_bad_outs(shape, np.int64))
    out_indices = bad[which]
    if which == "dtype":
        out_indices = np.zeros(shape, dtype=np.int32)   # i64 requested
    _raises(BadArgumentError, lambda: ovpool.max_pool(x, 2, 2, out_indices=out_indices),
            "out_indices")
    _raises(BadArgumentError,
            lambda: ovpool.adaptive_max_pool(x, 3, out_indices=out_indices), "out_indices")
    if which == "dtype":
        with pytest.raises(BadArgumentError):
            ovpool.max_pool(x, 2, 2, index_element_type="i32",
                            out_indices=np.zeros(shape, dtype=np.int64))


def test_error_classes_are_builtin_compatible():
    assert issubclass(BadAttributeError, ValueError)
    assert issubclass(BadShapeError, ValueError)
    assert issubclass(BadArgumentError, ValueError)
    for cls in (BadAttributeError, BadShapeError, BadDtypeError, BadArgumentError):
        assert issubclass(cls, OvpoolError)
