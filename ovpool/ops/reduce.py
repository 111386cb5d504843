"""ReduceMean, ReduceMax, ReduceMin, ReduceSum (opset1), with keep_dims and negative axes.

A mean or max over every spatial axis of an (N, C, spatial...) float tensor is global pooling,
so it goes to the adaptive pooling kernels with output size 1 (threaded, no temporary copies).
"""

import numpy as np

from .. import pooling
from ..errors import BadShapeError
from ._base import Op, Spec, const_ints, normalize_axes, run_ints

_POOLABLE = {"float32", "float16", "float64", "bfloat16"}


def _reduced_shape(shape, axes, keep_dims):
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _numpy_mean(x, axes, keep_dims):
    if x.dtype.kind in "iu":
        # Integer means divide the exact sum and truncate towards zero.
        count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        total = np.sum(x, axis=axes, keepdims=keep_dims, dtype=np.int64)
        return (np.sign(total) * (np.abs(total) // count)).astype(x.dtype)
    if x.dtype.name == "bfloat16":
        return np.mean(x.astype(np.float32), axis=axes, keepdims=keep_dims).astype(x.dtype)
    return np.mean(x, axis=axes, keepdims=keep_dims, dtype=np.float64 if x.dtype == np.float64 else np.float32)


def _global_pool(function):
    def pool(x, keep_dims):
        out = function(x)
        return out if keep_dims else out.reshape(x.shape[:2])
    return pool


_GLOBAL = {
    "mean": _global_pool(lambda x: pooling.adaptive_avg_pool(x, (1,) * (x.ndim - 2))),
    "max": _global_pool(lambda x: pooling.adaptive_max_pool(x, (1,) * (x.ndim - 2),
                                                            return_indices=False)),
}


def _reduction(kind, numpy_function):
    def factory(layer):
        keep_dims = layer.attributes.bool("keep_dims", False)

        def resolve(x_shape, axes_values):
            axes = normalize_axes(axes_values, len(x_shape), "reduction axes")
            return tuple(sorted(set(axes)))

        def infer(x, axes_spec):
            values = const_ints(axes_spec, "reduction axes (input 1)")
            if x.shape is None:
                return [Spec(None, x.dtype)]
            if values is None:
                # Without the axes only keep_dims tells the rank.
                return [Spec((None,) * len(x.shape) if keep_dims else None, x.dtype)]
            axes = resolve(x.shape, values)
            if kind in ("max", "min") and any(x.shape[a] == 0 for a in axes):
                raise BadShapeError(f"cannot take the {kind} over empty axes {list(axes)} of "
                                    f"shape {list(x.shape)}")
            return [Spec(_reduced_shape(x.shape, axes, keep_dims), x.dtype)]

        def run(x, axes_value):
            axes = resolve(x.shape, run_ints(axes_value, "reduction axes (input 1)"))
            if (kind in _GLOBAL and x.ndim >= 3 and axes == tuple(range(2, x.ndim))
                    and x.dtype.name in _POOLABLE and x.size):
                return (_GLOBAL[kind](x, keep_dims),)
            if not axes:
                return (x,)
            out = numpy_function(x, axes, keep_dims)
            return (np.asarray(out, dtype=x.dtype),)

        return Op(infer, run)
    return factory


reduce_mean = _reduction("mean", _numpy_mean)
reduce_max = _reduction("max", lambda x, axes, keep: np.max(x, axis=axes, keepdims=keep))
reduce_min = _reduction("min", lambda x, axes, keep: np.min(x, axis=axes, keepdims=keep))


def _numpy_sum(x, axes, keep_dims):
    # 16-bit floats accumulate in float32, as OpenVINO does.
    wide = np.float32 if x.dtype.itemsize == 2 and x.dtype.kind in "fV" else x.dtype
    return np.sum(x, axis=axes, keepdims=keep_dims, dtype=wide)


reduce_sum = _reduction("sum", _numpy_sum)
