"""What every op implementation returns, and the small shape helpers they share.

An op implementation is one function ``f(layer) -> Op``. It reads and validates the layer's
attributes once and returns two closures: ``infer`` (input :class:`Spec` s -> output specs,
raising an :class:`ovpool.errors.OvpoolError` for anything invalid) and ``run`` (input arrays ->
a tuple of output arrays). Shapes in specs may hold ``None`` for dims unknown at compile time
(dynamic inputs); at run time the runtime re-infers with the concrete shapes first, so ``run``
may trust its inputs.
"""

from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional

import numpy as np

from .._limits import MAX_RANK
from ..errors import BadAttributeError, BadDtypeError, BadShapeError

__all__ = ["Spec", "Op", "common_dtype", "broadcast_shapes", "normalize_axes", "const_ints",
           "run_ints",
           "is_known"]


class Spec(NamedTuple):
    """What shape inference knows about one tensor. ``shape`` is a tuple of ints and None
    (unknown dims), or None when even the rank is unknown; ``value`` is set for tensors known
    at compile time (constants and what folds from them)."""

    shape: Optional[tuple]
    dtype: np.dtype
    value: Optional[np.ndarray] = None


@dataclass(frozen=True)
class Op:
    infer: Callable
    run: Callable
    # Computes only the first output; the runtime uses it when the others have no consumer
    # (MaxPool without its indices).
    run_first: Optional[Callable] = None


def is_known(shape):
    return shape is not None and all(d is not None for d in shape)


def common_dtype(*specs):
    """The element type shared by every input; OpenVINO ops do not promote types."""
    first = specs[0].dtype
    for index, spec in enumerate(specs[1:], start=1):
        if spec.dtype != first:
            raise BadDtypeError(
                f"input {index} has element type {spec.dtype}, input 0 has {first}; "
                "they must be equal")
    return first


def broadcast_shapes(a, b, mode="numpy"):
    """numpy broadcasting over dims that may be None (unknown)."""
    if a is None or b is None:
        return None
    if mode == "none":
        if len(a) != len(b) or any(x is not None and y is not None and x != y
                                   for x, y in zip(a, b)):
            raise BadShapeError(f"shapes {list(a)} and {list(b)} differ and auto_broadcast is none")
        return tuple(x if x is not None else y for x, y in zip(a, b))
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        else:
            raise BadShapeError(f"shapes {list(a)} and {list(b)} cannot be broadcast together")
    return tuple(out)


def normalize_axes(axes, rank, what="axes"):
    """Wrap negative axes and check the range; returns a tuple of non-negative ints."""
    result = []
    for axis in axes:
        if not -rank <= axis < rank:
            raise BadAttributeError(
                f"{what} {list(axes)} are out of range for rank {rank}")
        result.append(axis % rank)
    return tuple(result)


def const_ints(spec, what):
    """The integer values of an input known at compile time, or None if it is not known.

    The element type and rank are checked even when the values are not known, so that
    ``run`` can rely on :func:`run_ints` seeing integers."""
    if spec.dtype.kind not in "iu":
        raise BadDtypeError(f"{what} must be integers, got element type {spec.dtype}")
    if spec.shape is not None and len(spec.shape) > 1:
        raise BadShapeError(f"{what} must be a scalar or 1-D, got shape {list(spec.shape)}")
    if spec.value is None:
        return None
    return run_ints(spec.value, what)


# No shape, permutation or list of axes needs more values than an array has dimensions.
MAX_INT_VALUES = MAX_RANK


def run_ints(array, what):
    """The values of an integer input given at run time (a scalar or 1-D array) as ints."""
    array = np.asarray(array)
    if array.dtype.kind not in "iu":
        raise BadDtypeError(f"{what} must be integers, got element type {array.dtype}")
    if array.ndim > 1:
        raise BadShapeError(f"{what} must be a scalar or 1-D, got shape {list(array.shape)}")
    if array.size > MAX_INT_VALUES:
        raise BadShapeError(f"{what} has {array.size} values; at most {MAX_INT_VALUES} "
                            "(one per axis) make sense")
    return tuple(int(v) for v in array.reshape(-1))
