"""The numpy-level pooling API with OpenVINO's semantics.

Each function validates its input and attributes, resolves them into per-axis window tables
(cached, so repeated calls with the same shape and attributes do no Python work per window),
allocates or checks the outputs, and hands everything to the typed kernels.
"""

import functools
from dataclasses import astuple
import math

import numpy as np

from . import _rules
from ._kernel_select import kernels as _kernels
from ._shapes import (
    AxisWindow,
    adaptive_output_shape,
    check_input_shape,
    check_exclude_pad_pads,
    normalize_auto_pad,
    normalize_rounding,
    _is_int,
    per_axis_key,
    resolve_pool_axes,
)
from ._limits import check_allocation
from ._opschema import defaults
from ._vocabulary import INDEX_TYPE_NAMES
from .config import get_memory_limit, get_num_threads
from .errors import BadArgumentError, BadAttributeError, BadDtypeError, BadShapeError

__all__ = ["avg_pool", "max_pool", "adaptive_avg_pool", "adaptive_max_pool",
           "avg_pool_windows", "max_pool_windows", "DIVISOR_RULES"]

_INDEX_TYPES = INDEX_TYPE_NAMES
# The attributes' defaults, those of the newest version of each OpenVINO op.
_AVG, _MAX, _ADAPTIVE_MAX = (defaults(op) for op in ("AvgPool", "MaxPool", "AdaptiveMaxPool"))
_SUPPORTED = "float32, float64, float16, bfloat16, int8, uint8, int32, int64"


class _Storage:
    """How one dtype is handed to the kernels: the dtype its arrays are viewed as (None:
    their own; bfloat16 as uint16, as numpy has no buffer format for it), the kernels'
    storage kind, the lowest value, and the kernel functions."""

    __slots__ = ("view", "kind", "lowest", "avg_planes", "max_planes")

    def __init__(self, view, name):
        self.view = view
        self.kind = _kernels.STORAGE_KINDS[name]
        self.lowest = _rules.lowest_value(name)
        self.avg_planes = _kernels.avg_pool_planes
        self.max_planes = _kernels.max_pool_planes


_STORAGE = {}


def _storage_for(dtype):
    """The :class:`_Storage` of ``dtype`` (None if unsupported), cached: building one costs
    more than a small pooling call."""
    try:
        return _STORAGE[dtype]
    except KeyError:
        storage = _STORAGE[dtype] = _new_storage(dtype)
        return storage


def _new_storage(dtype):
    if dtype.name == "bfloat16" and dtype.itemsize == 2:
        return _Storage(np.dtype(np.uint16), "bfloat16")
    if dtype == np.float16:
        return _Storage(None, "float16")
    if dtype in (np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64):
        return _Storage(None, dtype.name)
    return None


def _prepare_input(x, op):
    """Return ``x`` as a C-contiguous array of a supported dtype (copied only if needed)."""
    if not isinstance(x, np.ndarray):
        try:
            x = np.asarray(x)
        except (ValueError, TypeError) as error:
            raise BadArgumentError(f"{op}: the input is not an array: {error}") from None
    storage = _STORAGE.get(x.dtype) or _storage_for(x.dtype)
    if storage is None:
        raise BadDtypeError(f"{op}: input dtype {x.dtype} is not supported; use one of {_SUPPORTED}")
    if x.ndim < 3 or 0 in x.shape[2:]:
        check_input_shape(x.shape)   # an array's dims are ints >= 0: only these can fail
    if not x.flags.c_contiguous:
        check_allocation(x.shape, x.dtype, f"{op}: a contiguous copy of the input")
    elif type(x) is np.ndarray:
        return x, storage       # what np.ascontiguousarray would return, without the call
    return np.ascontiguousarray(x), storage


# np.may_share_memory's C function without its __array_function__ dispatch (a third of a
# small call's output check): the arrays' memory is what matters, whatever their class.
_may_share_memory = getattr(np.may_share_memory, "_implementation", np.may_share_memory)


def _output(out, name, tables, dtype, x):
    """Allocate an output of ``tables``' output shape, or check that a caller-given ``out``
    can be written in place."""
    shape = tables.out_shape
    if out is None:
        if dtype not in tables.allocatable:
            check_allocation(shape, dtype, name)
            tables.allocatable.add(dtype)
        return np.empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise BadArgumentError(f"'{name}' must be a numpy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise BadArgumentError(f"'{name}' has dtype {out.dtype}, expected {np.dtype(dtype)}")
    if out.shape != shape:
        raise BadArgumentError(f"'{name}' has shape {list(out.shape)}, expected {list(shape)}")
    flags = out.flags
    if not flags.c_contiguous:
        raise BadArgumentError(f"'{name}' must be C-contiguous, got strides {out.strides}")
    if not flags.writeable:
        raise BadArgumentError(f"'{name}' is read-only")
    if _may_share_memory(out, x):
        raise BadArgumentError(f"'{name}' overlaps the input; pooling cannot run in place")
    return out


def _buffer(array, storage):
    """``array`` as the kernels take it: itself, or its uint16 view for bfloat16."""
    return array if storage.view is None else array.view(storage.view)


# Bytes read and written per kernel thread (core/threads.hpp; tests lower it to run tiny
# inputs on several threads).
_BYTES_PER_THREAD = _kernels.BYTES_PER_WORKER

# Whether max pooling may take planes of more than 128 elements side by side through the tap
# table (core/max_lanes.hpp) where that is faster; tests turn it off to reach the separable
# passes on small planes (both give the same results).
_MID_PLANES_IN_LANES = True


class _WindowTables:
    """The kernels' window tables of one pooling, built by ``ovpool/core/rules.hpp``: the packed
    array in the layout the kernels' make_geometry reads (one array: every array argument of
    a kernel call costs a buffer request), the plane sizes, and what a call needs of the input
    shape: the number of planes and the output shape."""

    __slots__ = ("packed", "in_plane", "out_plane", "planes", "out_shape", "allocatable")

    def __init__(self, shape, packed, in_plane, out_plane, output_spatial):
        self.packed = packed
        self.in_plane = in_plane
        self.out_plane = out_plane
        self.planes = math.prod(shape[:2])
        self.out_shape = tuple(shape[:2]) + output_spatial
        # The output dtypes whose allocation passed check_allocation (under the memory limit
        # of the plan's key, so the check holds for every call that finds this plan).
        self.allocatable = set()


# How an average divides each window's sum (see semantics.md and rules.hpp's DivisorRule):
#   "exclude_pad"           the number of input elements in the window;
#   "openvino_include_pad"  the kernel volume whenever any pad is non-zero, else as exclude_pad;
#   "include_padded"        the taps inside the padded extent [-pad_begin, length + pad_end)
#                           (ONNX count_include_pad=1, DirectML IncludePadding=TRUE);
#   "sum"                   1: the window sums themselves (for LpPool).
DIVISOR_RULES = _rules.DIVISOR_RULES


def avg_divisor_rule(exclude_pad):
    """The divisor rule of OpenVINO AvgPool's ``exclude_pad`` attribute."""
    return "exclude_pad" if exclude_pad else "openvino_include_pad"


def _plan_result(shape, plan):
    """(tables, divisors or None) from a core plan: the divisors as the average kernels take
    them (every form in one array, whether they are all small)."""
    packed, in_plane, out_plane, divisor, divisor_real, output_spatial, floats, small = plan
    divisors = None
    if divisor is not None:
        divisors = (_kernels.pack_divisors(divisor, divisor_real, floats), small)
    return _WindowTables(shape, packed, in_plane, out_plane, output_spatial), divisors


@functools.lru_cache(maxsize=256)
def _window_plan(shape, windows, divisor_rule, memory_limit):
    """Kernel tables (and divisors when ``divisor_rule`` is given) for resolved windows,
    refused when they would exceed ``memory_limit`` (part of the key: a lowered limit is
    checked again)."""
    plan = _rules.fixed_plan([astuple(w) for w in windows], divisor_rule, memory_limit)
    return _plan_result(shape, plan)


@functools.lru_cache(maxsize=256)
def _fixed_plan(shape, kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad,
                divisor_rule, memory_limit):
    """:func:`_window_plan` of the windows the attributes resolve to, whose exclude_pad pads
    are checked too (a plan in the cache is one that passed every check of its key)."""
    axes = resolve_pool_axes(shape, kernel, strides, pads_begin, pads_end, dilations,
                             rounding, auto_pad)
    plan = _window_plan(shape, axes, divisor_rule, memory_limit)
    if divisor_rule == "exclude_pad":
        check_exclude_pad_pads(len(shape) - 2, kernel, pads_begin, pads_end, dilations, auto_pad)
    return plan


@functools.lru_cache(maxsize=256)
def _adaptive_plan(shape, output_size, memory_limit):
    out_shape = adaptive_output_shape(shape, output_size)
    return _plan_result(shape, _rules.adaptive_plan(shape[2:], out_shape[2:], memory_limit))


def _window_keys(x, kernel, strides, pads_begin, pads_end, dilations, rounding_type, auto_pad):
    """The attributes of a fixed-window pooling, type-checked on every call before any cache
    lookup and made into keys whose equality means equal meaning (``2.0``, ``True`` and ``2``
    compare equal in Python, so only real ints get here)."""
    keys = _rules.attribute_key((kernel, strides, pads_begin, pads_end, dilations), False)
    if keys is None:
        rank = x.ndim - 2
        keys = (per_axis_key("kernel", kernel, rank, None, 1),
                per_axis_key("strides", strides, rank, 1, 1),
                per_axis_key("pads_begin", pads_begin, rank, 0, 0),
                per_axis_key("pads_end", pads_end, rank, 0, 0),
                per_axis_key("dilations", dilations, rank, 1, 1))
    return keys + (normalize_rounding(rounding_type), normalize_auto_pad(auto_pad))


def _output_size_key(x, output_size):
    return per_axis_key("output_size", output_size, x.ndim - 2, minimum=1)


def check_flag(name, value):
    """``value`` as a bool; anything but a real boolean (1, "yes", None) is refused."""
    if value is True or value is False:
        return value
    if not isinstance(value, (bool, np.bool_)):
        raise BadArgumentError(f"'{name}' must be a bool, got {value!r}")
    return bool(value)


def _run_avg(x, storage, out, tables, divisors):
    out = _output(out, "out", tables, x.dtype, x)
    if tables.planes:
        storage.avg_planes(
            _buffer(x, storage), _buffer(out, storage), tables.packed, *divisors, storage.kind,
            tables.planes, tables.in_plane, tables.out_plane, get_num_threads(),
            _BYTES_PER_THREAD)
    return out


def _index_dtype(index_element_type):
    key = index_element_type
    if not isinstance(key, str):
        if not isinstance(key, (np.dtype, type)):
            raise BadArgumentError(
                f"'index_element_type' must be a string (i32 or i64) or a numpy integer dtype, "
                f"got {index_element_type!r}")
        try:
            key = np.dtype(key).name
        except Exception:  # noqa: BLE001 - numpy raises several kinds for a non-dtype type
            key = repr(index_element_type)
    dtype = _INDEX_TYPES.get(key.lower())
    if dtype is None:
        raise BadAttributeError(
            f"attribute 'index_element_type' is {index_element_type!r}; expected i32 or i64"
        )
    return dtype


def _check_index_range(index_dtype, largest_index):
    if index_dtype is not None:
        _rules.check_index_range(index_dtype == np.int32, largest_index)


def _run_max(x, storage, out, out_indices, tables, index_dtype, plane_modulus,
             offset_modulus):
    values = _output(out, "out", tables, x.dtype, x)
    index64 = index32 = indices = None
    if index_dtype is not None:
        indices = _output(out_indices, "out_indices", tables, index_dtype, x)
        # (only two given arrays can overlap: a new one overlaps nothing)
        if out is not None and out_indices is not None and _may_share_memory(indices, out):
            raise BadArgumentError("'out_indices' overlaps 'out'")
        if index_dtype is _INDEX_TYPES["i64"]:
            index64 = indices
        else:
            index32 = indices
    if tables.planes:
        storage.max_planes(
            _buffer(x, storage), _buffer(values, storage), index64, index32, tables.packed,
            storage.lowest, plane_modulus, offset_modulus, storage.kind, tables.planes,
            tables.in_plane, tables.out_plane, get_num_threads(), _BYTES_PER_THREAD,
            _MID_PLANES_IN_LANES)
    return values if indices is None else (values, indices)


def _check_windows(x, windows):
    windows = tuple(windows)
    # (an AxisWindow checks its own fields when it is made)
    # (the types' set, not all() over a generator: this runs on every call of a dialect)
    if len(windows) != x.ndim - 2 or not set(map(type, windows)) <= {AxisWindow}:
        raise BadAttributeError(
            f"expected one AxisWindow per spatial axis ({x.ndim - 2}), got {windows!r}")
    for a, w in enumerate(windows):
        if w.length != x.shape[2 + a]:
            raise BadShapeError(
                f"window of spatial axis {a} is for length {w.length}, the input has "
                f"{x.shape[2 + a]}")
    return windows


def avg_pool_windows(x, windows, divisor_rule, out=None):
    """Average pooling over already-resolved windows (one :class:`AxisWindow` per spatial
    axis, e.g. from :func:`ovpool._shapes.resolve_pool_axes` or a dialect's own rules) with
    one of :data:`DIVISOR_RULES`. The dialects call this; validation of their attributes is
    theirs."""
    x, storage = _prepare_input(x, "avg_pool")
    if divisor_rule not in DIVISOR_RULES:
        raise BadAttributeError(f"divisor rule {divisor_rule!r} is not one of {DIVISOR_RULES}")
    tables, divisors = _window_plan(x.shape, _check_windows(x, windows), divisor_rule,
                                    get_memory_limit())
    return _run_avg(x, storage, out, tables, divisors)


def max_pool_windows(x, windows, index_element_type="i64", axis=0, return_indices=True,
                     out=None, out_indices=None):
    """Max pooling over already-resolved windows; indices as in :func:`max_pool`."""
    x, storage = _prepare_input(x, "max_pool")
    tables, _ = _window_plan(x.shape, _check_windows(x, windows), None, get_memory_limit())
    return _run_fixed_max(x, storage, out, out_indices, tables, index_element_type, axis,
                          return_indices)


@functools.lru_cache(maxsize=256)
def _index_plan(shape, index_dtype, axis):
    """(index dtype or None, plane modulus, offset modulus) for max pooling, once the largest
    index is known to fit the index dtype."""
    plane_modulus, offset_modulus, largest_index = _rules.index_layout(shape, axis)
    _check_index_range(index_dtype, largest_index)
    return index_dtype, plane_modulus, offset_modulus


def _index_arguments(index_element_type, return_indices):
    """The index dtype (None without indices), checked on every call before any cache."""
    if not check_flag("return_indices", return_indices):
        return None
    if type(index_element_type) is str and index_element_type in _INDEX_TYPES:
        return _INDEX_TYPES[index_element_type]     # a spelling as _index_dtype keys them
    return _index_dtype(index_element_type)


def _index_layout(shape, index_element_type, axis, return_indices):
    """:func:`_index_plan` for the arguments as given, type-checked before the cache."""
    index_dtype = _index_arguments(index_element_type, return_indices)
    if type(axis) is not int and not _is_int(axis):
        rank = len(shape)
        raise BadAttributeError(f"attribute 'axis' is {axis!r}; expected an int in "
                                f"[{-rank}, {rank - 1}]")
    return _index_plan(tuple(shape), index_dtype, int(axis))


def _run_fixed_max(x, storage, out, out_indices, tables, index_element_type, axis,
                   return_indices):
    return _run_max(x, storage, out, out_indices, tables,
                    *_index_layout(x.shape, index_element_type, axis, return_indices))


def avg_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, dilations=None,
             exclude_pad=True, rounding_type=_AVG["rounding_type"], auto_pad=_AVG["auto_pad"],
             out=None):
    """Average pooling with the semantics of OpenVINO AvgPool-16 (-1 and -14 are special cases).

    Parameters
    ----------
    x : ndarray, shape (N, C, *spatial)
        Input with one or more spatial axes; float32, float64, float16, bfloat16, int8, uint8,
        int32 or int64.
    kernel : int or sequence of int
        Window size per spatial axis (an int applies to every axis).
    strides, dilations : int or sequence of int, optional
        Default 1.
    pads_begin, pads_end : int or sequence of int, optional
        Explicit padding; default 0. Ignored unless ``auto_pad`` is "explicit".
    exclude_pad : bool
        True: divide by the number of input elements in the window. False: divide by the
        kernel volume whenever any pad is non-zero (OpenVINO's rule).
    rounding_type : {"floor", "ceil", "ceil_torch"}
    auto_pad : {"explicit", "same_upper", "same_lower", "valid"}
    out : ndarray, optional
        C-contiguous array of the output's shape and dtype to write into.

    Returns
    -------
    ndarray of the input's dtype. Integer averages round half to even.
    """
    x, storage = _prepare_input(x, "avg_pool")
    if not isinstance(exclude_pad, (bool, np.bool_)):
        raise BadAttributeError(f"attribute 'exclude_pad' must be a bool, got {exclude_pad!r}")
    keys = _window_keys(x, kernel, strides, pads_begin, pads_end, dilations, rounding_type,
                        auto_pad)
    tables, divisors = _fixed_plan(x.shape, *keys, avg_divisor_rule(exclude_pad),
                                   get_memory_limit())
    return _run_avg(x, storage, out, tables, divisors)


def max_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, dilations=None,
             rounding_type=_MAX["rounding_type"], auto_pad=_MAX["auto_pad"],
             index_element_type=_MAX["index_element_type"], axis=_MAX["axis"],
             return_indices=True, out=None, out_indices=None):
    """Max pooling with the semantics of OpenVINO MaxPool-14 (-1 and -8 are special cases).

    Parameters are those of :func:`avg_pool`, plus:

    index_element_type : {"i32", "i64"}
        Element type of the indices.
    axis : int
        Indices are flat positions in the unpadded input counted from this dimension on
        (0: the whole tensor; 2: within each (n, c) plane; negative counts from the end).
    return_indices : bool
        False returns the values only and does no index work.
    out, out_indices : ndarray, optional
        C-contiguous arrays to write the values and indices into.

    Returns
    -------
    (values, indices), or values when ``return_indices`` is False. Ties pick the first element
    in row-major window order; NaN is ignored unless the whole window is NaN; a window with no
    input element gives the dtype's lowest finite value and index 0.
    """
    x, storage = _prepare_input(x, "max_pool")
    keys = _window_keys(x, kernel, strides, pads_begin, pads_end, dilations, rounding_type,
                        auto_pad)
    tables, _ = _fixed_plan(x.shape, *keys, None, get_memory_limit())
    return _run_fixed_max(x, storage, out, out_indices, tables, index_element_type, axis,
                          return_indices)


def adaptive_avg_pool(x, output_size, out=None):
    """Adaptive average pooling (OpenVINO AdaptiveAvgPool-8).

    Output position ``i`` of an axis of length ``L`` pooled to ``O`` averages input positions
    ``floor(i*L/O)`` to ``ceil((i+1)*L/O) - 1``.

    Parameters
    ----------
    x : ndarray, shape (N, C, *spatial)
    output_size : int or sequence of int
        Output length per spatial axis, each at least 1.
    out : ndarray, optional

    Returns
    -------
    ndarray of the input's dtype.
    """
    x, storage = _prepare_input(x, "adaptive_avg_pool")
    tables, divisors = _adaptive_plan(x.shape, _output_size_key(x, output_size),
                                      get_memory_limit())
    return _run_avg(x, storage, out, tables, divisors)


def adaptive_max_pool(x, output_size, index_element_type=_ADAPTIVE_MAX["index_element_type"],
                      return_indices=True, out=None, out_indices=None):
    """Adaptive max pooling (OpenVINO AdaptiveMaxPool-8), windows as in :func:`adaptive_avg_pool`.

    Returns (values, indices) with indices flat within each (n, c) plane, or values only when
    ``return_indices`` is False.
    """
    x, storage = _prepare_input(x, "adaptive_max_pool")
    index_dtype = _index_arguments(index_element_type, return_indices)
    tables, _ = _adaptive_plan(x.shape, _output_size_key(x, output_size), get_memory_limit())
    _check_index_range(index_dtype, tables.in_plane - 1)
    return _run_max(x, storage, out, out_indices, tables, index_dtype, 1, tables.in_plane)
