"""Output-shape and padding rules of pooling, in pure Python.

This module turns user-facing attributes (kernel, strides, pads, dilations, auto_pad, rounding)
into per-axis canonical window parameters. It is shared by the numpy API, the IR runtime's shape
inference and the OpenVINO bridge, so every caller agrees on one set of rules; the rules
themselves are those of ``shared/docs/semantics.md``.
"""

import numbers
from dataclasses import dataclass

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
    "adaptive_start",
    "adaptive_end",
]

AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")
ROUNDING_TYPES = ("floor", "ceil", "ceil_torch")
# Larger attribute values cannot describe a real window and would overflow the int64 window
# arithmetic; they are refused outright.
MAX_ATTRIBUTE_VALUE = 1 << 40
# OpenVINO's PadType enum spells explicit padding "notset" too.
_AUTO_PAD_ALIASES = {"notset": "explicit"}


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

    @property
    def effective_kernel(self):
        return (self.kernel - 1) * self.dilation + 1


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


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
            raise BadAttributeError(
                f"attribute '{name}' has {len(values)} values {list(values)!r}, "
                f"expected one per spatial axis ({rank})"
            )
        if not all(_is_int(v) for v in values):
            raise BadAttributeError(
                f"attribute '{name}' must hold integers, got {list(values)!r}"
            )
        values = tuple(int(v) for v in values)
    for v in values:
        if v > MAX_ATTRIBUTE_VALUE:
            raise BadAttributeError(
                f"attribute '{name}' is {list(values)!r}; values above {MAX_ATTRIBUTE_VALUE} "
                "are not supported"
            )
        if v < minimum:
            what = "positive" if minimum == 1 else f"at least {minimum}"
            raise BadAttributeError(
                f"attribute '{name}' must be {what}, got {list(values)!r}"
            )
    return values


def _normalize_name(name, value, allowed, aliases=None):
    if not isinstance(value, str):
        raise BadAttributeError(f"attribute '{name}' must be a string, got {value!r}")
    key = value.lower()
    key = (aliases or {}).get(key, key)
    if key not in allowed:
        raise BadAttributeError(
            f"attribute '{name}' is {value!r}; expected one of {', '.join(allowed)}"
        )
    return key


def normalize_auto_pad(auto_pad):
    return _normalize_name("auto_pad", auto_pad, AUTO_PADS, _AUTO_PAD_ALIASES)


def normalize_rounding(rounding_type):
    return _normalize_name("rounding_type", rounding_type, ROUNDING_TYPES)


def check_input_shape(shape, allow_zero_spatial=False):
    """Validate an (N, C, spatial...) shape and return it as a tuple of ints."""
    try:
        shape = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise BadShapeError(f"input shape must be a sequence of ints, got {shape!r}") from None
    if len(shape) < 3:
        raise BadShapeError(
            f"input shape {list(shape)} has rank {len(shape)}; pooling needs "
            "(N, C, spatial...) with at least one spatial axis"
        )
    if any(d < 0 for d in shape):
        raise BadShapeError(f"input shape {list(shape)} has a negative dimension")
    if not allow_zero_spatial and any(d == 0 for d in shape[2:]):
        raise BadShapeError(
            f"input shape {list(shape)} has an empty spatial axis; there is nothing to pool"
        )
    return shape


def _ceil_div(a, b):
    return -((-a) // b)


def _resolve_axis(axis, length, kernel, stride, dilation, pad_begin, pad_end, rounding, auto_pad):
    effective = (kernel - 1) * dilation + 1
    if auto_pad in ("same_upper", "same_lower"):
        output = _ceil_div(length, stride)
        total = max(0, (output - 1) * stride + effective - length)
        small, large = total // 2, total - total // 2
        pad_begin, pad_end = (small, large) if auto_pad == "same_upper" else (large, small)
        return AxisWindow(length, kernel, stride, dilation, pad_begin, pad_end, output)
    if auto_pad == "valid":
        pad_begin = pad_end = 0
    padded = length + pad_begin + pad_end
    if effective > padded:
        raise BadAttributeError(
            f"attribute 'kernel' on spatial axis {axis}: the dilated kernel "
            f"({kernel} with dilation {dilation} spans {effective}) is larger than the padded "
            f"input ({length} + pads {pad_begin}/{pad_end} = {padded})"
        )
    span = padded - effective
    if rounding == "floor":
        output = span // stride + 1
    else:
        output = _ceil_div(span, stride) + 1
        # ceil_torch drops a last window that would start inside the right padding.
        if rounding == "ceil_torch" and (output - 1) * stride >= length + pad_begin:
            output -= 1
    return AxisWindow(length, kernel, stride, dilation, pad_begin, pad_end, output)


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
    return tuple(
        _resolve_axis(a, shape[2 + a], kernel[a], strides[a], dilations[a],
                      pads_begin[a], pads_end[a], rounding, auto_pad)
        for a in range(rank)
    )


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
    for axis in range(rank):
        effective = (kernel[axis] - 1) * dilations[axis] + 1
        if max(pads_begin[axis], pads_end[axis]) >= effective:
            raise BadAttributeError(
                f"attribute 'pads_begin'/'pads_end' on spatial axis {axis} is "
                f"{pads_begin[axis]}/{pads_end[axis]}, not smaller than the dilated kernel "
                f"{effective} (required with exclude_pad=True)"
            )


def pool_output_shape(
    input_shape,
    kernel,
    strides=None,
    pads_begin=None,
    pads_end=None,
    dilations=None,
    rounding_type="floor",
    auto_pad="explicit",
):
    """Output shape of fixed-window pooling (AvgPool / MaxPool) for ``input_shape``.

    Parameters mirror :func:`ovpool.avg_pool`; raises :class:`ovpool.errors.OvpoolError`
    subclasses for invalid attributes.
    """
    axes = resolve_pool_axes(input_shape, kernel, strides, pads_begin, pads_end,
                             dilations, rounding_type, auto_pad)
    return tuple(int(d) for d in input_shape[:2]) + tuple(w.output for w in axes)


def adaptive_output_shape(input_shape, output_size):
    """Output shape of adaptive pooling: (N, C) followed by ``output_size``."""
    shape = check_input_shape(input_shape)
    sizes = normalize_per_axis("output_size", output_size, len(shape) - 2, minimum=1)
    return shape[:2] + sizes


def adaptive_start(index, length, output):
    """First input position of adaptive window ``index``: floor(index * length / output)."""
    return (index * length) // output


def adaptive_end(index, length, output):
    """One past the last input position: ceil((index + 1) * length / output)."""
    return _ceil_div((index + 1) * length, output)
