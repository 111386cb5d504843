"""The ONNX pooling dialect: AveragePool, MaxPool, LpPool and their Global forms, every version.

Each function's signature is the operator's spec (ONNX attribute names and defaults) plus
``opset=``, the model's ``ai.onnx`` opset; the version in force is the newest one not after it.
Version differences are data (:data:`VERSIONS`): which attributes a version has and which
element types it accepts. One translation function (:func:`resolve_windows`) turns the
attributes of every version into the canonical windows of :mod:`ovpool.pooling`, whose kernels
do all the work. Corners follow ``docs/semantics.md``.

This module does not import the ``onnx`` package: it needs nothing from it.
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np

from . import _rules, pooling
from ._shapes import AxisWindow, check_input_shape, normalize_per_axis
from ._vocabulary import ONNX_AUTO_PADS
from .errors import BadAttributeError, BadDtypeError, OvpoolError

__all__ = [
    "VERSIONS",
    "LATEST_OPSET",
    "average_pool",
    "max_pool",
    "lp_pool",
    "global_average_pool",
    "global_max_pool",
    "global_lp_pool",
    "op_version",
    "check_dtype",
    "resolve_windows",
]

# The newest ai.onnx opset whose pooling rules ovpool knows (onnx 1.23); the pooling
# operators last changed in opset 22.
LATEST_OPSET = 28

_FLOATS = frozenset({"float16", "float32", "float64"})
_WITH_BF16 = _FLOATS | {"bfloat16"}
_WITH_INT8 = _FLOATS | {"int8", "uint8"}


# eq=False: each version is made once, in VERSIONS, so it is its own identity; and a call's
# cache lookups keyed by it then hash it in C, not through a generated __hash__.
@dataclass(frozen=True, eq=False)
class Version:
    """One version of an ONNX pooling operator: its attributes and input element types."""

    op: str
    since: int
    attributes: frozenset
    dtypes: frozenset
    indices: bool = False  # MaxPool: has the optional Indices output

    @property
    def name(self):
        return f"{self.op}-{self.since}"


def _versions(op, rows):
    """Build an op's versions from (since, attributes added, dtypes[, has Indices]) rows."""
    attributes, out = set(), []
    for since, added, dtypes, *extra in rows:
        attributes |= set(added)
        out.append(Version(op, since, frozenset(attributes), frozenset(dtypes), *extra))
    return tuple(out)


_WINDOW = ("auto_pad", "kernel_shape", "pads", "strides")

# Everything that differs between versions, from the operator specs (the seed documents for
# AveragePool and MaxPool; onnx.defs for LpPool and the Global ops).
VERSIONS = {
    "AveragePool": _versions("AveragePool", [
        (1, _WINDOW, _FLOATS),                 # always excludes padding from the divisor
        (7, ("count_include_pad",), _FLOATS),
        (10, ("ceil_mode",), _FLOATS),
        (11, (), _FLOATS),                     # documents the dilated formulas, default strides 1
        (19, ("dilations",), _FLOATS),
        (22, (), _WITH_BF16),
    ]),
    "MaxPool": _versions("MaxPool", [
        (1, _WINDOW, _FLOATS, False),
        (8, ("storage_order",), _FLOATS, True),
        (10, ("ceil_mode", "dilations"), _FLOATS, True),
        (11, (), _FLOATS, True),
        (12, (), _WITH_INT8, True),
        (22, (), _WITH_INT8 | {"bfloat16"}, True),
    ]),
    "LpPool": _versions("LpPool", [
        (1, _WINDOW + ("p",), _FLOATS),        # p is a float
        (2, (), _FLOATS),                      # p becomes an int
        (11, (), _FLOATS),
        (18, ("ceil_mode", "dilations"), _FLOATS),
        (22, (), _WITH_BF16),
    ]),
    "GlobalAveragePool": _versions("GlobalAveragePool", [(1, (), _FLOATS), (22, (), _WITH_BF16)]),
    "GlobalMaxPool": _versions("GlobalMaxPool", [(1, (), _FLOATS), (22, (), _WITH_BF16)]),
    "GlobalLpPool": _versions("GlobalLpPool", [
        (1, ("p",), _FLOATS), (2, (), _FLOATS), (22, (), _WITH_BF16)]),
}


# (op, opset) -> Version, for opsets given as plain ints that passed op_version's checks.
_IN_FORCE = {}


def op_version(op, opset):
    """The :class:`Version` of ``op`` in force at ai.onnx ``opset``."""
    if type(opset) is int:
        version = _IN_FORCE.get((op, opset))
        if version is not None:
            return version
    if isinstance(opset, bool) or not isinstance(opset, numbers.Integral) or opset < 1:
        raise BadAttributeError(f"opset must be a positive int, got {opset!r}")
    if opset > LATEST_OPSET:
        raise BadAttributeError(
            f"opset {opset} is newer than the newest ONNX opset ovpool knows ({LATEST_OPSET})")
    versions = VERSIONS[op]
    if opset < versions[0].since:
        raise BadAttributeError(f"{op} does not exist in opset {opset}")
    version = [v for v in versions if v.since <= opset][-1]
    if type(opset) is int:
        _IN_FORCE[(op, opset)] = version
    return version


def _check_attributes(version, opset, given):
    """Refuse attributes ``version`` lacks. ``given`` maps name -> (value, signature default);
    a value equal to the default is the same as the attribute being absent."""
    for name, (value, default) in given.items():
        if name in version.attributes:
            continue
        unset = value is None if default is None else _same(value, default)
        if not unset:
            raise BadAttributeError(
                f"attribute '{name}' = {value!r} does not exist in {version.name} "
                f"(opset {opset})")


def _same(value, default):
    try:
        return bool(value == default)
    except Exception:  # noqa: BLE001 - arrays and odd objects are simply "given"
        return False


def _flag(version, name, value):
    if type(value) is int and (value == 0 or value == 1):
        return value
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral)
                                                and value in (0, 1)):
        return int(value)
    raise BadAttributeError(f"{version.name}: attribute '{name}' must be 0 or 1, got {value!r}")


# (version, dtype) pairs check_dtype accepted (a dtype's name is slow to ask for).
_ACCEPTED = set()


def check_dtype(version, opset, dtype):
    """Refuse an input element type that ``version`` (in force at ``opset``) does not accept."""
    if (version, dtype) in _ACCEPTED:
        return
    dtype = np.dtype(dtype)
    if dtype.name in version.dtypes:
        _ACCEPTED.add((version, dtype))
    else:
        raise BadDtypeError(
            f"{version.name} (opset {opset}) does not accept input dtype {dtype}; "
            f"it accepts {', '.join(sorted(version.dtypes))}")


def _check_dtype(version, opset, x):
    x = np.asarray(x)
    check_dtype(version, opset, x.dtype)
    return x


def resolve_windows(version, shape, kernel_shape, auto_pad="NOTSET", ceil_mode=0,
                    dilations=None, pads=None, strides=None):
    """Translate one ONNX pooling node's attributes into canonical windows.

    The single translation function of the ONNX dialect, for every operator and version
    (attributes a version lacks are refused before this is called). Rules
    (``docs/semantics.md``): explicit pads, ``O = floor`` or, with ``ceil_mode``, the ceil
    length minus a last window that would start in the right padding; SAME_* pads computed from
    the dilated kernel with ``O = ceil(L / s)`` whatever ``ceil_mode`` is; VALID is zero pads
    and then the explicit rule (for every opset: the floor formulas that opset 11's text gives
    for auto_pad are implemented by no engine). Explicit pads not smaller than the kernel are
    refused, as onnxruntime does.
    """
    shape = check_input_shape(shape)
    rank = len(shape) - 2
    if kernel_shape is None:
        raise BadAttributeError(f"{version.name}: attribute 'kernel_shape' is required")
    kernel = normalize_per_axis("kernel_shape", kernel_shape, rank, minimum=1)
    strides = normalize_per_axis("strides", strides, rank, default=1, minimum=1)
    dilations = normalize_per_axis("dilations", dilations, rank, default=1, minimum=1)
    if not isinstance(auto_pad, str):
        raise BadAttributeError(
            f"{version.name}: attribute 'auto_pad' is {auto_pad!r}; expected one of "
            f"{', '.join(ONNX_AUTO_PADS)}")
    mode = _rules.parse_onnx_auto_pad(version.name, auto_pad)
    ceil_mode = _flag(version, "ceil_mode", ceil_mode)
    both = normalize_per_axis("pads", pads, 2 * rank, default=0, minimum=0)
    return tuple(AxisWindow(*w) for w in _rules.resolve_onnx_windows(
        version.name, shape[2:], kernel, strides, dilations, both, repr(pads), mode, auto_pad,
        ceil_mode))


def _prepare(op, opset, x, given):
    version = op_version(op, opset)
    _check_attributes(version, opset, given)
    return version, _check_dtype(version, opset, x)


def _context(version, opset):
    return f"{version.name} (opset {opset})"


def _with_context(function):
    """Prefix ovpool errors raised while translating with the operator's versioned name."""
    def call(version, opset, *args):
        try:
            return function(version, opset, *args)
        except OvpoolError as error:
            if error.message.startswith(version.name):
                raise
            raise error.with_context(_context(version, opset)) from None
    return call


@_with_context
def _resolve_windows(version, opset, shape, kernel_shape, auto_pad, ceil_mode, dilations, pads,
                     strides):
    return resolve_windows(version, shape, kernel_shape, auto_pad, ceil_mode, dilations, pads,
                           strides)


# Resolved windows by attribute values, for calls whose attributes are ints, strings, None
# and lists or tuples of ints (translating them again costs more than a small pooling).
_WINDOWS = {}
_WINDOWS_KEPT = 256


def _windows(version, opset, *attributes):
    """:func:`resolve_windows` (errors prefixed with the operator's versioned name), kept for
    the calls whose attributes :func:`ovpool._rules.attribute_key` can key."""
    key = _rules.attribute_key(attributes, True)
    if key is None:
        return _resolve_windows(version, opset, *attributes)
    key = (version.op, version.since, opset) + key
    windows = _WINDOWS.get(key)
    if windows is None:
        windows = _resolve_windows(version, opset, *attributes)
        if len(_WINDOWS) >= _WINDOWS_KEPT:
            _WINDOWS.clear()
        _WINDOWS[key] = windows
    return windows


def _global_windows(shape):
    shape = check_input_shape(shape)
    return tuple(AxisWindow(n, n, 1, 1, 0, 0, 1) for n in shape[2:])


def average_divisor_rule(count_include_pad):
    """The divisor rule of ONNX AveragePool's ``count_include_pad`` (0 before opset 7)."""
    return "include_padded" if count_include_pad else "exclude_pad"


def average_pool(x, kernel_shape, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0,
                 dilations=None, pads=None, strides=None, opset=22, out=None):
    """ONNX AveragePool (versions 1, 7, 10, 11, 19, 22).

    Parameters
    ----------
    x : ndarray, shape (N, C, D1, ..., Dn)
        float16, float32, float64; bfloat16 from opset 22.
    kernel_shape : sequence of int
        Required; one per spatial axis.
    auto_pad : {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}
    ceil_mode : {0, 1}
        From opset 10. A last window that would start in the right padding is dropped.
    count_include_pad : {0, 1}
        From opset 7. 1 divides by the taps inside the padded extent ``[-pad_begin,
        length + pad_end)`` (a window hanging past it does not count the overhang); 0 by the
        number of input elements.
    dilations : sequence of int, optional
        From opset 19.
    pads : sequence of int, optional
        ``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]``; each smaller than the kernel.
    strides : sequence of int, optional
        Default 1.
    opset : int
        The model's ai.onnx opset; attributes the version in force lacks are refused.
    out : ndarray, optional
        C-contiguous array of the output's shape and the input's dtype to write into.

    Returns
    -------
    ndarray of the input's dtype.
    """
    version, x = _prepare("AveragePool", opset, x, {
        "count_include_pad": (count_include_pad, 0), "ceil_mode": (ceil_mode, 0),
        "dilations": (dilations, None)})
    include = _flag(version, "count_include_pad", count_include_pad)
    windows = _windows(version, opset, x.shape, kernel_shape, auto_pad, ceil_mode, dilations,
                       pads, strides)
    return pooling.avg_pool_windows(x, windows, average_divisor_rule(include), out=out)


def max_pool(x, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, pads=None,
             storage_order=0, strides=None, opset=22, return_indices=True, out=None,
             out_indices=None):
    """ONNX MaxPool (versions 1, 8, 10, 11, 12, 22).

    Parameters are those of :func:`average_pool` (``ceil_mode`` and ``dilations`` from opset
    10), plus:

    storage_order : {0, 1}
        From opset 8. 1 makes each index's position within its spatial plane column-major
        (``(n*C + c)*H*W + w*H + h`` in 2-D).
    return_indices : bool
        Also return the Indices output (opset 8 on; pass False for opsets 1-7, which have none).
    out, out_indices : ndarray, optional
        C-contiguous arrays to write the values (input dtype) and indices (int64) into.

    Element types: float16, float32, float64; int8 and uint8 from opset 12; bfloat16 from 22.

    Returns
    -------
    (values, indices) with int64 indices flat over the whole input (padding not counted), or
    values only. Padding is -inf; NaN is ignored unless a window is all NaN; ties keep the first
    element in row-major window order.
    """
    version, x = _prepare("MaxPool", opset, x, {
        "storage_order": (storage_order, 0), "ceil_mode": (ceil_mode, 0),
        "dilations": (dilations, None)})
    return_indices = pooling.check_flag("return_indices", return_indices)
    if return_indices and not version.indices:
        raise BadAttributeError(
            f"{version.name} (opset {opset}) has no Indices output; pass return_indices=False "
            "or use opset 8 or later")
    column_major = _flag(version, "storage_order", storage_order)
    windows = _windows(version, opset, x.shape, kernel_shape, auto_pad, ceil_mode, dilations,
                       pads, strides)
    result = pooling.max_pool_windows(x, windows, "i64", 0, bool(return_indices), out=out,
                                      out_indices=out_indices)
    if not return_indices:
        return result
    values, indices = result
    if column_major and x.ndim > 3:
        # (n*C + c)*P + ravel_multi_index(coords, order='F') within each spatial plane
        indices = _rules.to_column_major(indices, x.shape[2:])
    return values, indices


def _lp_exponent(version, opset, p):
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not math.isfinite(p) or p <= 0:
        raise BadAttributeError(
            f"{version.name} (opset {opset}): attribute 'p' must be a positive number, got {p!r}")
    if version.since >= 2:
        if float(p) != int(p):
            raise BadAttributeError(
                f"{version.name} (opset {opset}): attribute 'p' is an int from opset 2, got {p!r}")
        return int(p)
    return float(p)


def _lp(x, windows, p):
    """``(sum over each window of |x|^p) ** (1/p)``, padding contributing 0.

    Computed in float64 (the pooling kernel's "sum" divisor rule gives the window sums),
    then cast back to the input's dtype."""
    powered = np.abs(np.asarray(x, dtype=np.float64)) ** p
    total = pooling.avg_pool_windows(powered, windows, "sum")
    return (total ** (1.0 / p)).astype(x.dtype)


def lp_pool(x, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, p=2, pads=None,
            strides=None, opset=22):
    """ONNX LpPool (versions 1, 2, 11, 18, 22): ``(sum |x|^p) ** (1/p)`` over each window.

    ``p`` is a float in LpPool-1 and an int from opset 2; ``ceil_mode`` and ``dilations`` come
    with opset 18; bfloat16 with 22. Windows follow :func:`average_pool`'s rules; padding
    contributes nothing to the sum. Computed in float64 and rounded once to the input's dtype.
    """
    version, x = _prepare("LpPool", opset, x, {
        "ceil_mode": (ceil_mode, 0), "dilations": (dilations, None)})
    exponent = _lp_exponent(version, opset, p)
    windows = _windows(version, opset, x.shape, kernel_shape, auto_pad, ceil_mode, dilations,
                       pads, strides)
    return _lp(x, windows, exponent)


def global_average_pool(x, opset=22):
    """ONNX GlobalAveragePool (versions 1, 22): the mean over all spatial axes, kept as 1s."""
    version, x = _prepare("GlobalAveragePool", opset, x, {})
    return pooling.avg_pool_windows(x, _global_windows(x.shape), "exclude_pad")


def global_max_pool(x, opset=22):
    """ONNX GlobalMaxPool (versions 1, 22): the max over all spatial axes, kept as 1s."""
    version, x = _prepare("GlobalMaxPool", opset, x, {})
    return pooling.max_pool_windows(x, _global_windows(x.shape), return_indices=False)


def global_lp_pool(x, p=2, opset=22):
    """ONNX GlobalLpPool (versions 1, 2, 22): ``(sum |x|^p) ** (1/p)`` over all spatial axes."""
    version, x = _prepare("GlobalLpPool", opset, x, {})
    return _lp(x, _global_windows(x.shape), _lp_exponent(version, opset, p))
