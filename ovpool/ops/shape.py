"""Ops that move or describe data without computing on it: Transpose, Reshape, Squeeze,
Unsqueeze, Concat, ShapeOf."""

import math

import numpy as np

from .._vocabulary import INDEX_TYPES, index_dtype
from ..errors import BadAttributeError, BadShapeError
from ._base import Op, Spec, common_dtype, const_ints, is_known, normalize_axes, run_ints


def _permutation(order, rank):
    if not order:
        return tuple(range(rank - 1, -1, -1))
    axes = normalize_axes(order, rank, "transpose order")
    if len(order) != rank or sorted(axes) != list(range(rank)):
        raise BadAttributeError(f"transpose order {list(order)} is not a permutation of the "
                                f"{rank} axes")
    return axes


def transpose(layer):
    def infer(x, order):
        values = const_ints(order, "transpose order (input 1)")
        if x.shape is None or values is None:
            return [Spec(None if x.shape is None else (None,) * len(x.shape), x.dtype)]
        return [Spec(tuple(x.shape[a] for a in _permutation(values, len(x.shape))), x.dtype)]

    def run(x, order):
        return (np.transpose(x, _permutation(run_ints(order, "transpose order (input 1)"), x.ndim)),)

    return Op(infer, run)


def _reshaped(shape, target, special_zero):
    """The output shape of Reshape; dims of ``shape`` may be None (unknown)."""
    out, infer_at = [], None
    for i, value in enumerate(target):
        if value == -1:
            if infer_at is not None:
                raise BadShapeError(f"target shape {list(target)} has more than one -1")
            infer_at = i
            out.append(None)
        elif value == 0 and special_zero:
            if i >= len(shape):
                raise BadShapeError(f"target shape {list(target)} copies dim {i} (special_zero),"
                                    f" but the input {list(shape)} has rank {len(shape)}")
            out.append(shape[i])
        elif value < 0:
            raise BadShapeError(f"target shape {list(target)} has a negative dim {value}")
        else:
            out.append(value)
    if is_known(shape):
        count = math.prod(shape)
        known = math.prod(d for i, d in enumerate(out) if i != infer_at and d is not None)
        if infer_at is not None and all(d is not None for i, d in enumerate(out) if i != infer_at):
            if known == 0 or count % known:
                raise BadShapeError(f"cannot reshape {list(shape)} into {list(target)}")
            out[infer_at] = count // known
        elif is_known(out) and math.prod(out) != count:
            raise BadShapeError(f"cannot reshape {list(shape)} ({count} elements) into "
                                f"{list(out)} ({math.prod(out)} elements)")
    return tuple(out)


def reshape(layer):
    special_zero = layer.attributes.bool("special_zero")

    def infer(x, target):
        values = const_ints(target, "target shape (input 1)")
        if values is None:
            size = target.shape[0] if target.shape and len(target.shape) == 1 else None
            return [Spec(None if size is None else (None,) * size, x.dtype)]
        if x.shape is None:
            return [Spec(tuple(None if v in (-1, 0) else v for v in values), x.dtype)]
        return [Spec(_reshaped(x.shape, values, special_zero), x.dtype)]

    def run(x, target):
        return (x.reshape(_reshaped(x.shape, run_ints(target, "target shape (input 1)"), special_zero)),)

    return Op(infer, run)


def squeeze(layer):
    """Squeeze-1 and -15 (which may skip listed axes whose length is not 1)."""
    allow_skip = layer.opset >= 15 and layer.attributes.bool("allow_axis_skip", False)

    def axes_of(shape, values):
        if values is None:
            return tuple(i for i, d in enumerate(shape) if d == 1)
        axes = normalize_axes(values, len(shape), "squeeze axes")
        kept = []
        for axis in sorted(set(axes)):
            if shape[axis] == 1:
                kept.append(axis)
            elif shape[axis] is not None and not allow_skip:
                raise BadShapeError(f"cannot squeeze axis {axis} of shape {list(shape)}: its "
                                    "length is not 1")
        return tuple(kept)

    def infer(x, *axes):
        values = const_ints(axes[0], "squeeze axes (input 1)") if axes else None
        if x.shape is None or (axes and values is None):
            return [Spec(None, x.dtype)]
        drop = axes_of(x.shape, values)
        return [Spec(tuple(d for i, d in enumerate(x.shape) if i not in drop), x.dtype)]

    def run(x, *axes):
        values = run_ints(axes[0], "squeeze axes (input 1)") if axes else None
        return (np.squeeze(x, axis=axes_of(x.shape, values)),)

    return Op(infer, run)


def _unsqueezed(shape, values):
    rank = len(shape) + len(values)
    axes = normalize_axes(values, rank, "unsqueeze axes")
    if len(set(axes)) != len(axes):
        raise BadAttributeError(f"unsqueeze axes {list(values)} repeat an axis")
    dims = iter(shape)
    return tuple(1 if i in axes else next(dims) for i in range(rank))


def unsqueeze(layer):
    def infer(x, axes):
        values = const_ints(axes, "unsqueeze axes (input 1)")
        if x.shape is None or values is None:
            return [Spec(None, x.dtype)]
        return [Spec(_unsqueezed(x.shape, values), x.dtype)]

    def run(x, axes):
        return (x.reshape(_unsqueezed(x.shape, run_ints(axes, "unsqueeze axes (input 1)"))),)

    return Op(infer, run)


def concat(layer):
    axis = layer.attributes.int("axis")

    def infer(*inputs):
        dtype = common_dtype(*inputs)
        shapes = [s.shape for s in inputs]
        if any(s is None for s in shapes):
            return [Spec(None, dtype)]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes) or rank == 0:
            raise BadShapeError(f"Concat inputs need one common rank >= 1, got {shapes}")
        (at,) = normalize_axes((axis,), rank, "attribute 'axis'")
        out = []
        for i in range(rank):
            dims = [s[i] for s in shapes]
            if i == at:
                out.append(None if None in dims else sum(dims))
                continue
            known = {d for d in dims if d is not None}
            if len(known) > 1:
                raise BadShapeError(f"Concat inputs {[list(s) for s in shapes]} differ on axis {i}")
            out.append(known.pop() if known else None)
        return [Spec(tuple(out), dtype)]

    def run(*arrays):
        return (np.concatenate(arrays, axis=axis),)

    return Op(infer, run)


def shape_of(layer):
    """ShapeOf-1 (i64) and -3 (output_type i32 or i64)."""
    output_type = "i64"
    if layer.opset >= 3:
        output_type = layer.attributes.choice("output_type", tuple(INDEX_TYPES), "i64")
    dtype = index_dtype(output_type)

    def infer(x):
        if x.shape is None:
            return [Spec((None,), dtype)]
        value = np.array(x.shape, dtype) if is_known(x.shape) else None
        return [Spec((len(x.shape),), dtype, value)]

    def run(x):
        return (np.array(x.shape, dtype),)

    return Op(infer, run)
