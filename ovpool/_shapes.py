"""Output-shape and padding rules of pooling: the Python face of ``ovpool/core/rules.hpp``.

This module turns user-facing attributes (kernel, strides, pads, dilations, auto_pad, rounding)
into per-axis canonical window parameters. It is shared by the numpy API, the IR runtime's shape
inference and the OpenVINO bridge, so every caller agrees on one set of rules; the rules
themselves (``docs/semantics.md``) live in C++ (``ovpool/core/rules.hpp``,
through ``ovpool._rules``), which the native OpenVINO extension uses too. Only the Python type
checks and normalisation (ints, sequences, strings) are here.
"""

import inspect
import numbers
from dataclasses import dataclass

from . import _rules
from .errors import BadAttributeError, BadShapeError

__all__ = [
    "AUTO_PADS",
    "ROUNDING_TYPES",
    "AxisWindow",
    "normalize_per_axis",
    "normalize_auto_pad",
    "normalize_rounding",
    "check_input_shape",
    "resolve_pool_axes",
    "check_exclude_pad_pads",
    "pool_output_shape",
    "adaptive_output_shape",
    "output_shape_with_unknowns",
    "adaptive_start",
    "adaptive_end",
]

AUTO_PADS = _rules.AUTO_PADS
ROUNDING_TYPES = _rules.ROUNDING_TYPES
# Larger attribute values cannot describe a real window and would overflow the int64 window
# arithmetic; they are refused outright.
MAX_ATTRIBUTE_VALUE = _rules.MAX_ATTRIBUTE_VALUE_


@dataclass(frozen=True)
class AxisWindow:
    """Window parameters of one spatial axis, after auto_pad and rounding are resolved.

    Window ``j`` reads input positions ``j*stride - pad_begin + t*dilation`` for
    ``t = 0 .. kernel-1``; positions outside ``[0, length)`` are padding.
    """

    length: int
    kernel: int
    stride: int
    dilation: int
    pad_begin: int
    pad_end: int
    output: int

    # Mirrors ovpool::core::AxisWindow.
    @property
    def effective_kernel(self):
        return (self.kernel - 1) * self.dilation + 1

    def __post_init__(self):
        # Checked once here, so a window's fields are plain ints wherever it goes and the
        # pooling entry points need only check that they were given AxisWindows.
        for name in _AXIS_WINDOW_FIELDS:
            value = getattr(self, name)
            if not _is_int(value):
                raise BadAttributeError(f"AxisWindow field '{name}' must be an int, got {value!r}")
            object.__setattr__(self, name, int(value))


_AXIS_WINDOW_FIELDS = tuple(AxisWindow.__dataclass_fields__)


def _is_int(value):
    return type(value) is int or (isinstance(value, numbers.Integral)
                                  and not isinstance(value, bool))


def normalize_per_axis(name, value, rank, default=None, minimum=0):
    """Return ``value`` as a tuple of ``rank`` ints, each at least ``minimum``.

    An int (or a one-element sequence when ``rank`` is 1) applies to every spatial axis;
    ``None`` takes ``default`` for every axis.
    """
    if value is None:
        if default is None:
            raise BadAttributeError(f"attribute '{name}' is required")
        value = default
    if _is_int(value):
        values = (int(value),) * rank
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise BadAttributeError(
                f"attribute '{name}' must be an int or a sequence of ints, got {value!r}"
            ) from None
        if len(values) != rank:
            # refuses the count, naming the values as given
            _rules.check_per_axis(name, (0,) * len(values), rank, minimum, repr(list(values)))
        if not all(_is_int(v) for v in values):
            raise BadAttributeError(
                f"attribute '{name}' must hold integers, got {list(values)!r}"
            )
        values = tuple(int(v) for v in values)
    _rules.check_per_axis(name, values, rank, minimum)
    return values


def per_axis_key(name, value, rank, default=None, minimum=0):
    """A per-axis attribute as a cache key whose equality means equal meaning: ``None``, an
    int or a tuple of ints, from ints only (not bools, floats or strings, which compare equal
    to ints: ``2.0 == 2 == True``). Anything else is refused here, before any cache lookup,
    with :func:`normalize_per_axis`'s message."""
    key = _rules.attribute_key((value,), False)
    if key is not None:
        return key[0]
    if _is_int(value):
        return int(value)
    if isinstance(value, (tuple, list)) and all(_is_int(v) for v in value):
        return tuple(int(v) for v in value)
    values = normalize_per_axis(name, value, rank, default, minimum)   # raises if ill-typed
    return values


def _check_string(name, value):
    if not isinstance(value, str):
        raise BadAttributeError(f"attribute '{name}' must be a string, got {value!r}")
    return value


# Spellings already parsed, per attribute (exact str only), so a call with a known one skips
# the C++ parse: one dict lookup, no key tuple.
_PARSED_AUTO_PADS = {}
_PARSED_ROUNDINGS = {}


def _parsed(known, name, value, parse):
    result = parse(_check_string(name, value))
    if type(value) is str and len(known) < 512:
        known[value] = result
    return result


def normalize_auto_pad(auto_pad):
    if type(auto_pad) is str:
        known = _PARSED_AUTO_PADS.get(auto_pad)
        if known is not None:
            return known
    return _parsed(_PARSED_AUTO_PADS, "auto_pad", auto_pad, _rules.parse_auto_pad)


def normalize_rounding(rounding_type):
    if type(rounding_type) is str:
        known = _PARSED_ROUNDINGS.get(rounding_type)
        if known is not None:
            return known
    return _parsed(_PARSED_ROUNDINGS, "rounding_type", rounding_type, _rules.parse_rounding)


def check_input_shape(shape, allow_zero_spatial=False):
    """Validate an (N, C, spatial...) shape and return it as a tuple of ints."""
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    if dims is None or not all(_is_int(d) for d in dims):
        # floats, strings, bools and infinities are refused, never truncated
        raise BadShapeError(f"input shape must be a sequence of ints, got {shape!r}")
    shape = tuple(int(d) for d in dims)
    _rules.check_input_shape(shape, allow_zero_spatial)
    return shape


def resolve_pool_axes(
    input_shape,
    kernel,
    strides=None,
    pads_begin=None,
    pads_end=None,
    dilations=None,
    rounding_type="floor",
    auto_pad="explicit",
):
    """Resolve pooling attributes for ``input_shape`` into one :class:`AxisWindow` per axis.

    With auto_pad ``same_upper`` / ``same_lower`` the given pads are ignored and recomputed
    from the dilated kernel; with ``valid`` they are zero.
    """
    shape = check_input_shape(input_shape)
    rank = len(shape) - 2
    kernel = normalize_per_axis("kernel", kernel, rank, minimum=1)
    strides = normalize_per_axis("strides", strides, rank, default=1, minimum=1)
    dilations = normalize_per_axis("dilations", dilations, rank, default=1, minimum=1)
    pads_begin = normalize_per_axis("pads_begin", pads_begin, rank, default=0)
    pads_end = normalize_per_axis("pads_end", pads_end, rank, default=0)
    rounding = normalize_rounding(rounding_type)
    auto_pad = normalize_auto_pad(auto_pad)
    return tuple(AxisWindow(*w) for w in _rules.resolve_pool_axes(
        shape[2:], kernel, strides, pads_begin, pads_end, dilations, rounding, auto_pad))


def check_exclude_pad_pads(rank, kernel, pads_begin=None, pads_end=None, dilations=None,
                           auto_pad="explicit"):
    """Refuse, as OpenVINO's AvgPool does, exclude_pad=True with an explicit pad that reaches
    the dilated kernel: a window could then lie wholly in the padding. Computed same_* pads
    are never refused."""
    if normalize_auto_pad(auto_pad) != "explicit":
        return
    kernel = normalize_per_axis("kernel", kernel, rank, minimum=1)
    dilations = normalize_per_axis("dilations", dilations, rank, default=1, minimum=1)
    pads_begin = normalize_per_axis("pads_begin", pads_begin, rank, default=0)
    pads_end = normalize_per_axis("pads_end", pads_end, rank, default=0)
    _rules.check_exclude_pad_pads(kernel, pads_begin, pads_end, dilations, "explicit")


def pool_output_shape(input_shape, *attributes, **named):
    """Output shape of fixed-window pooling (AvgPool / MaxPool) for ``input_shape``.

    The attributes are those of :func:`resolve_pool_axes` (and :func:`ovpool.avg_pool`);
    raises :class:`ovpool.errors.OvpoolError` subclasses for invalid attributes.
    """
    axes = resolve_pool_axes(input_shape, *attributes, **named)
    return tuple(int(d) for d in input_shape[:2]) + tuple(w.output for w in axes)


# (one signature: the attributes are resolve_pool_axes')
pool_output_shape.__signature__ = inspect.signature(resolve_pool_axes)


def adaptive_output_shape(input_shape, output_size):
    """Output shape of adaptive pooling: (N, C) followed by ``output_size``."""
    shape = check_input_shape(input_shape)
    sizes = normalize_per_axis("output_size", output_size, len(shape) - 2, minimum=1)
    return shape[:2] + sizes


def output_shape_with_unknowns(shape, output_shape, kernel=None, dilations=None,
                               lengths_matter=True):
    """The output shape of a pooling for an input ``shape`` whose dims may be unknown (None).

    ``output_shape`` (a dialect's shape rule for a shape of ints) checks the attributes and
    decides on the shape with each unknown spatial length replaced by the core's stand-in
    (``stand_in_length`` in ``ovpool/core/rules.hpp``: the axis's dilated kernel from the
    per-axis sequences ``kernel`` and ``dilations``, 1 without a kernel) and an unknown N or C
    by 1. An unknown N or C stays unknown, and so do the outputs of unknown lengths unless
    ``lengths_matter`` is False (adaptive pooling, whose outputs are given).
    """
    if shape is None:
        return None
    rank = len(shape) - 2
    stand_ins = _rules.stand_in_lengths(tuple(kernel or ()), tuple(dilations or ()), rank)
    known = tuple(1 if d is None else d for d in shape[:2]) + tuple(
        s if d is None else d for d, s in zip(shape[2:], stand_ins))
    pooled = output_shape(known)
    return tuple(shape[:2]) + tuple(None if d is None and lengths_matter else o
                                    for d, o in zip(shape[2:], pooled[2:]))


adaptive_start = _rules.adaptive_start
adaptive_end = _rules.adaptive_end
