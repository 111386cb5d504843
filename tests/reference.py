"""A slow, deliberately plain pooling oracle for the tests.

Everything here is written for the reader, not for speed: one Python loop per output element
(each window listed once, then read in every (n, c) plane),
one inner loop per window tap, no vectorisation and no code shared with the ``ovpool`` package.
The rules are those of ``docs/semantics.md`` (OpenVINO AvgPool-16, MaxPool-14,
AdaptiveAvgPool-8, AdaptiveMaxPool-8 semantics):

* window ``j`` of an axis reads input positions ``j*s - pb + t*d`` for ``t = 0 .. k-1``;
  positions outside ``[0, L)`` are padding;
* averages: float inputs are summed in float64 and the quotient cast to the input dtype;
  integer inputs are summed exactly (Python ints) and divided with round-half-to-even;
* max: padding is -inf, the first maximum in row-major window order wins, NaN is ignored
  unless the whole window is NaN, an empty window gives the dtype's lowest finite value and
  position 0 of its (n, c) plane (see ``ref_max_pool``).

Inputs are (N, C, spatial...) arrays of any spatial rank >= 1.
"""

import functools
import math

import numpy as np

import ml_dtypes

__all__ = [
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "ALL_DTYPES",
    "ref_output_len",
    "ref_output_shape",
    "ref_avg_pool",
    "ref_max_pool",
    "ref_adaptive_avg_pool",
    "ref_adaptive_max_pool",
    "lowest_value",
    "is_float_dtype",
    "round_half_even",
    "per_axis",
]

FLOAT_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)]
FLOAT_DTYPES.append(np.dtype(ml_dtypes.bfloat16))
INT_DTYPES = [np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32), np.dtype(np.int64)]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES


# ----------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)    # called once per window: the dtype tests are slow
def is_float_dtype(dtype):
    """True for float16/32/64 and bfloat16, False for the integer dtypes."""
    dtype = np.dtype(dtype)
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return True
    return np.issubdtype(dtype, np.floating)


def lowest_value(dtype):
    """The most negative finite value of ``dtype`` (what an empty max window yields)."""
    dtype = np.dtype(dtype)
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return ml_dtypes.finfo(dtype).min
    if np.issubdtype(dtype, np.floating):
        return np.finfo(dtype).min
    return np.iinfo(dtype).min


def per_axis(value, rank, default):
    """An attribute as one value per spatial axis: an int -> that int on every axis; a
    sequence -> a tuple (of ``rank`` ints); None -> the default."""
    if value is None:
        value = default
    if isinstance(value, (int, np.integer)):
        return (int(value),) * rank
    value = tuple(int(v) for v in value)
    if len(value) != rank:
        raise ValueError(f"expected {rank} values, got {value}")
    return value


def _ceil_div(a, b):
    """ceil(a / b) for integers, b > 0."""
    return -((-a) // b)


def round_half_even(numerator, denominator):
    """Round the exact rational numerator/denominator (denominator > 0) to the nearest
    integer, ties to even."""
    numerator, denominator = int(numerator), int(denominator)   # exact, never numpy's wrap
    assert denominator > 0
    lower, remainder = divmod(numerator, denominator)   # floor: remainder in [0, denominator)
    # Compare the fraction remainder / denominator with 1/2 in integers.
    if 2 * remainder > denominator:
        return lower + 1
    if 2 * remainder < denominator:
        return lower
    return lower if lower % 2 == 0 else lower + 1


def _flat_index(position, shape):
    """Row-major flat index of ``position`` in an array of ``shape`` (plain arithmetic)."""
    index = 0
    for p, n in zip(position, shape):
        index = index * n + p
    return index


# ----------------------------------------------------------------------------------------------
# output length and padding
# ----------------------------------------------------------------------------------------------

def ref_output_len(L, k, s, d, pb, pe, rounding, auto_pad):
    """Output length of one spatial axis and the pads actually used.

    Returns ``(O, pb, pe)`` after auto_pad resolution. Raises ``ValueError`` when the dilated
    kernel does not fit in the padded input (nothing to pool).
    """
    ek = (k - 1) * d + 1
    if auto_pad in ("same_upper", "same_lower"):
        # Output length ceil(L / s); the total pad is computed from the dilated kernel and an
        # odd pad puts its extra element at the end (upper) or at the start (lower).
        O = _ceil_div(L, s)
        total = max(0, (O - 1) * s + ek - L)
        half = total // 2
        if auto_pad == "same_upper":
            pb, pe = half, total - half
        else:
            pb, pe = total - half, half
        return O, pb, pe
    if auto_pad == "valid":
        pb, pe = 0, 0
    elif auto_pad != "explicit":
        raise ValueError(f"unknown auto_pad {auto_pad!r}")
    padded = L + pb + pe
    if ek > padded:
        raise ValueError(f"dilated kernel {ek} larger than padded input {padded}")
    span = padded - ek
    if rounding == "floor":
        O = span // s + 1
    elif rounding in ("ceil", "ceil_torch"):
        O = _ceil_div(span, s) + 1
        if rounding == "ceil_torch":
            # The last window may not begin inside the right padding. In padded coordinates
            # window j begins at j*s and the right padding begins at L + pb.
            last_start = (O - 1) * s
            if last_start >= L + pb:
                O -= 1
    else:
        raise ValueError(f"unknown rounding {rounding!r}")
    return O, pb, pe


def _resolve(shape, kernel, strides, pads_begin, pads_end, dilations, rounding_type, auto_pad):
    """Per-axis (L, k, s, d, pb, O) after resolving every attribute."""
    rank = len(shape) - 2
    if rank < 1:
        raise ValueError("need at least one spatial axis")
    kernel = per_axis(kernel, rank, None)
    strides = per_axis(strides, rank, 1)
    dilations = per_axis(dilations, rank, 1)
    pads_begin = per_axis(pads_begin, rank, 0)
    pads_end = per_axis(pads_end, rank, 0)
    axes = []
    for a in range(rank):
        L = shape[2 + a]
        O, pb, pe = ref_output_len(L, kernel[a], strides[a], dilations[a], pads_begin[a],
                                   pads_end[a], rounding_type, auto_pad)
        axes.append(dict(L=L, k=kernel[a], s=strides[a], d=dilations[a], pb=pb, pe=pe, O=O))
    return axes


def ref_output_shape(shape, kernel, strides=None, pads_begin=None, pads_end=None,
                     dilations=None, rounding_type="floor", auto_pad="explicit"):
    """Full output shape (N, C, O...) for an input of ``shape``."""
    axes = _resolve(tuple(shape), kernel, strides, pads_begin, pads_end, dilations,
                    rounding_type, auto_pad)
    return tuple(shape[:2]) + tuple(ax["O"] for ax in axes)


def _window_taps(axes, out_pos):
    """Per-axis list of (tap position, inside input?) for the window at ``out_pos``."""
    taps = []
    for ax, j in zip(axes, out_pos):
        positions = [j * ax["s"] - ax["pb"] + t * ax["d"] for t in range(ax["k"])]
        taps.append([(p, 0 <= p < ax["L"]) for p in positions])
    return taps


def _window_elements(axes, out_pos):
    """Input spatial positions of the real elements of a window, in row-major window order."""
    taps = _window_taps(axes, out_pos)
    kernel = tuple(len(t) for t in taps)
    elements = []
    for tap_index in np.ndindex(*kernel):      # row-major over the kernel
        pos = []
        inside = True
        for a, t in enumerate(tap_index):
            p, ok = taps[a][t]
            inside = inside and ok
            pos.append(p)
        if inside:
            elements.append(tuple(pos))
    return elements


# ----------------------------------------------------------------------------------------------
# shared reductions
# ----------------------------------------------------------------------------------------------

def _average(values, divisor, dtype):
    """Average of the python scalars ``values`` with ``divisor``, as a scalar of ``dtype``."""
    if len(values) == 0 or divisor == 0:
        return np.zeros((), dtype=dtype)[()]
    if is_float_dtype(dtype):
        total = 0.0
        for v in values:
            total += float(v)          # float64 accumulation
        return np.array(total / divisor, dtype=np.float64).astype(dtype)[()]
    total = 0
    for v in values:
        total += int(v)                # exact accumulation
    return np.array(round_half_even(total, divisor), dtype=dtype)[()]


def _max_with_index(values, indices, dtype, empty_index=0):
    """Max of ``values`` (scalars of ``dtype``) with the index of the winner.

    The first maximum wins; NaN is skipped unless every value is NaN (then NaN and the index of
    the first NaN); no value at all gives the dtype's lowest finite value and ``empty_index``.
    """
    is_float = is_float_dtype(dtype)
    best = None
    best_index = None
    first_nan_index = None
    for v, i in zip(values, indices):
        fv = float(v) if is_float else int(v)
        if is_float and math.isnan(fv):
            if first_nan_index is None:
                first_nan_index = i
            continue
        if best is None or fv > best:
            best, best_index = fv, i
    if best is not None:
        if is_float:
            return np.array(best, dtype=np.float64).astype(dtype)[()], best_index
        return np.array(best, dtype=dtype)[()], best_index
    if first_nan_index is not None:
        return np.array(np.nan, dtype=np.float64).astype(dtype)[()], first_nan_index
    return np.array(lowest_value(dtype)).astype(dtype)[()], empty_index


# ----------------------------------------------------------------------------------------------
# fixed-window pooling
# ----------------------------------------------------------------------------------------------

def ref_avg_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, dilations=None,
                 exclude_pad=True, rounding_type="floor", auto_pad="explicit"):
    """OpenVINO AvgPool-16.

    Divisor: with ``exclude_pad`` the number of real elements in the window; without it the
    full kernel volume whenever any resolved pad is non-zero, else the number of real elements.
    A window with no real element averages to 0.
    """
    x = np.asarray(x)
    axes = _resolve(x.shape, kernel, strides, pads_begin, pads_end, dilations,
                    rounding_type, auto_pad)
    any_pad = any(ax["pb"] != 0 or ax["pe"] != 0 for ax in axes)
    volume = 1
    for ax in axes:
        volume *= ax["k"]
    out_shape = x.shape[:2] + tuple(ax["O"] for ax in axes)
    out = np.zeros(out_shape, dtype=x.dtype)
    # Windows are the same in every (n, c) plane: each is listed once, then read per plane.
    for out_pos in np.ndindex(*out_shape[2:]):
        elements = _window_elements(axes, out_pos)
        if exclude_pad or not any_pad:
            divisor = len(elements)
        else:
            divisor = volume
        for n, c in np.ndindex(*x.shape[:2]):
            values = [x[(n, c) + pos] for pos in elements]
            out[(n, c) + out_pos] = _average(values, divisor, x.dtype)
    return out


def ref_max_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, dilations=None,
                 rounding_type="floor", auto_pad="explicit", axis=0):
    """OpenVINO MaxPool-14: returns ``(values, indices)`` with int64 indices.

    An index is the row-major flat index of the winner in the unpadded input, taken modulo
    the product of the input dims from ``axis`` on. An empty window (no input element) reports
    position 0 *of its own (n, c) plane*, i.e. the flat index of ``x[n, c, 0, ..., 0]`` taken
    modulo the same product: OpenVINO's reference kernel and CPU plugin both start every window
    at local index 0 and add the plane's offset, which is what semantics.md's "index 0" means.
    """
    x = np.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} out of range for rank {x.ndim}")
    if axis < 0:
        axis += x.ndim
    modulus = 1
    for dim in x.shape[axis:]:
        modulus *= dim
    axes = _resolve(x.shape, kernel, strides, pads_begin, pads_end, dilations,
                    rounding_type, auto_pad)
    out_shape = x.shape[:2] + tuple(ax["O"] for ax in axes)
    values_out = np.zeros(out_shape, dtype=x.dtype)
    indices_out = np.zeros(out_shape, dtype=np.int64)
    for out_pos in np.ndindex(*out_shape[2:]):
        elements = _window_elements(axes, out_pos)    # the same in every (n, c) plane
        for n, c in np.ndindex(*x.shape[:2]):
            values = [x[(n, c) + pos] for pos in elements]
            flat = [_flat_index((n, c) + pos, x.shape) % modulus for pos in elements]
            plane_start = _flat_index((n, c) + (0,) * len(axes), x.shape) % modulus
            v, i = _max_with_index(values, flat, x.dtype, empty_index=plane_start)
            values_out[(n, c) + out_pos] = v
            indices_out[(n, c) + out_pos] = i
    return values_out, indices_out


# ----------------------------------------------------------------------------------------------
# adaptive pooling
# ----------------------------------------------------------------------------------------------

def _adaptive_bounds(i, L, O):
    """Window i of O over L: [floor(i*L/O), ceil((i+1)*L/O))."""
    return (i * L) // O, _ceil_div((i + 1) * L, O)


def _adaptive_elements(spatial_shape, output_size, out_pos):
    ranges = []
    for L, O, i in zip(spatial_shape, output_size, out_pos):
        start, end = _adaptive_bounds(i, L, O)
        ranges.append(range(start, end))
    elements = []
    for offset in np.ndindex(*[len(r) for r in ranges]):
        elements.append(tuple(r[o] for r, o in zip(ranges, offset)))
    return elements


def ref_adaptive_avg_pool(x, output_size):
    """OpenVINO AdaptiveAvgPool-8 (integer averages round half to even)."""
    x = np.asarray(x)
    output_size = per_axis(output_size, x.ndim - 2, None)
    out = np.zeros(x.shape[:2] + output_size, dtype=x.dtype)
    for out_pos in np.ndindex(*output_size):
        elements = _adaptive_elements(x.shape[2:], output_size, out_pos)    # same in every plane
        for n, c in np.ndindex(*x.shape[:2]):
            values = [x[(n, c) + pos] for pos in elements]
            out[(n, c) + out_pos] = _average(values, len(values), x.dtype)
    return out


def ref_adaptive_max_pool(x, output_size):
    """OpenVINO AdaptiveMaxPool-8: ``(values, indices)``, indices within each (n, c) plane."""
    x = np.asarray(x)
    output_size = per_axis(output_size, x.ndim - 2, None)
    out_shape = x.shape[:2] + output_size
    values_out = np.zeros(out_shape, dtype=x.dtype)
    indices_out = np.zeros(out_shape, dtype=np.int64)
    for out_pos in np.ndindex(*output_size):
        elements = _adaptive_elements(x.shape[2:], output_size, out_pos)    # same in every plane
        flat = [_flat_index(pos, x.shape[2:]) for pos in elements]
        for n, c in np.ndindex(*x.shape[:2]):
            values = [x[(n, c) + pos] for pos in elements]
            v, i = _max_with_index(values, flat, x.dtype)
            values_out[(n, c) + out_pos] = v
            indices_out[(n, c) + out_pos] = i
    return values_out, indices_out
