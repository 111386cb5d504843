"""The DirectML pooling dialect: DML_AVERAGE_POOLING and DML_MAX_POOLING (-, 1, 2).

Argument names follow the operator descriptions (``Strides``, ``WindowSize``, ``StartPadding``,
``EndPadding``, ``IncludePadding``, ``Dilations``) in snake case. Inputs are 4-D
``(N, C, H, W)`` or 5-D ``(N, C, D, H, W)``; the attribute arrays have one value per spatial
axis (``DimensionCount`` is implied by the input). The output size is the documented rule,
with unsigned integer division:

    PaddedSize = InputSize + StartPadding + EndPadding
    OutputSize = (PaddedSize - WindowSize) / Strides + 1

(MAX_POOLING2 with dilations: the dilated window ``(WindowSize - 1) * Dilations + 1`` in place of
``WindowSize``.) Everything is translated by :func:`resolve_windows` into the canonical windows of
:mod:`ovpool.pooling`, whose kernels compute.
"""

import numpy as np

from . import _rules, pooling
from ._shapes import AxisWindow, normalize_per_axis
from .errors import BadArgumentError, BadAttributeError, BadDtypeError, BadShapeError

__all__ = ["average_pooling", "max_pooling", "resolve_windows", "output_sizes"]

_AVERAGE_DTYPES = ("float32", "float16")
# DML_MAX_POOLING2 at DML_FEATURE_LEVEL_3_0 adds INT8 and UINT8 to FLOAT32 and FLOAT16.
_MAX_DTYPES = ("float32", "float16", "int8", "uint8")
_INDEX_DTYPES = {"uint32": np.dtype(np.uint32), "uint64": np.dtype(np.uint64)}


def _check_input(op, x, dtypes):
    x = np.asarray(x)
    if x.ndim not in (4, 5):
        raise BadShapeError(
            f"{op}: InputTensor must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got shape "
            f"{list(x.shape)}")
    if x.dtype.name not in dtypes:
        raise BadDtypeError(
            f"{op}: InputTensor data type {x.dtype} is not supported; use one of "
            f"{', '.join(dtypes)}")
    return x


def resolve_windows(op, shape, strides, window_size, start_padding, end_padding,
                    dilations=None):
    """Translate DirectML pooling parameters into one :class:`AxisWindow` per spatial axis.

    The single translation function of the DirectML dialect. Refuses a (dilated) window larger
    than the padded input, where the unsigned ``PaddedSize - WindowSize`` of the documented rule
    would wrap around.
    """
    rank = len(shape) - 2
    strides = normalize_per_axis("strides", strides, rank, minimum=1)
    window = normalize_per_axis("window_size", window_size, rank, minimum=1)
    begin = normalize_per_axis("start_padding", start_padding, rank, default=0, minimum=0)
    end = normalize_per_axis("end_padding", end_padding, rank, default=0, minimum=0)
    dilations = normalize_per_axis("dilations", dilations, rank, default=1, minimum=1)
    return tuple(AxisWindow(*w) for w in _rules.resolve_directml_windows(
        op, shape[2:], strides, window, begin, end, dilations))


def output_sizes(input_sizes, strides, window_size, start_padding=None, end_padding=None,
                 dilations=None):
    """``OutputTensor->Sizes`` for ``input_sizes`` by the documented rule."""
    shape = tuple(int(d) for d in input_sizes)
    if len(shape) not in (4, 5):
        raise BadShapeError(f"input sizes must be 4-D or 5-D, got {list(shape)}")
    windows = resolve_windows("output_sizes", shape, strides, window_size, start_padding,
                              end_padding, dilations)
    return shape[:2] + tuple(w.output for w in windows)


def average_pooling(x, strides, window_size, start_padding=None, end_padding=None,
                    include_padding=False, out=None):
    """DML_AVERAGE_POOLING_OPERATOR_DESC.

    Parameters
    ----------
    x : ndarray, 4-D or 5-D, float32 or float16
    strides, window_size : sequence of int
        One per spatial axis (``{H, W}`` or ``{D, H, W}``); an int applies to every axis.
    start_padding, end_padding : sequence of int, optional
        Padding elements at the start / end of each spatial axis; default 0.
    include_padding : bool
        ``IncludePadding``: TRUE divides every window by its full size (padding elements
        count); FALSE by the number of input elements in the window (0 for a window wholly in
        the padding).
    out : ndarray, optional
        C-contiguous output of the right shape and dtype to write into.

    Returns
    -------
    ndarray of the input's dtype (float16 is accumulated in float32).
    """
    x = _check_input("average_pooling", x, _AVERAGE_DTYPES)
    if not isinstance(include_padding, (bool, np.bool_, int, np.integer)):
        raise BadAttributeError(
            f"average_pooling: include_padding must be a BOOL, got {include_padding!r}")
    windows = resolve_windows("average_pooling", x.shape, strides, window_size, start_padding,
                              end_padding)
    rule = "include_padded" if include_padding else "exclude_pad"
    return pooling.avg_pool_windows(x, windows, rule, out=out)


def max_pooling(x, strides, window_size, start_padding=None, end_padding=None, dilations=None,
                return_indices=False, index_dtype="uint32", out=None, out_indices=None):
    """DML_MAX_POOLING_OPERATOR_DESC; with ``return_indices`` MAX_POOLING1's
    OutputIndicesTensor; with ``dilations`` MAX_POOLING2.

    Parameters
    ----------
    x : ndarray, 4-D or 5-D, float32, float16, int8 or uint8
        (int8 / uint8 need DML_FEATURE_LEVEL_3_0 in DirectML.)
    strides, window_size, start_padding, end_padding : as for :func:`average_pooling`.
    dilations : sequence of int, optional
        MAX_POOLING2's ``Dilations``; default 1.
    return_indices : bool
        Also return OutputIndicesTensor: zero-based indices into the input treated as one
        contiguous 1-D array; ties keep the first value encountered.
    index_dtype : {"uint32", "uint64"}
    out, out_indices : ndarray, optional
        Values output (written in place); the indices are converted to ``index_dtype``, so
        ``out_indices`` is filled by copy.

    Returns
    -------
    values, or (values, indices). Padding never wins; a window wholly in the padding gives the
    dtype's lowest finite value and the index of its plane's first element.
    """
    x = _check_input("max_pooling", x, _MAX_DTYPES)
    return_indices = pooling.check_flag("return_indices", return_indices)
    windows = resolve_windows("max_pooling", x.shape, strides, window_size, start_padding,
                              end_padding, dilations)
    if not return_indices:
        return pooling.max_pool_windows(x, windows, return_indices=False, out=out)
    index_dtype = _index_type(index_dtype)
    if x.size > np.iinfo(index_dtype).max + 1:
        raise BadAttributeError(
            f"max_pooling: index_dtype {index_dtype} cannot index {x.size} elements")
    values, indices = pooling.max_pool_windows(x, windows, "i64", 0, True, out=out)
    if out_indices is None:
        return values, indices.astype(index_dtype)
    if not isinstance(out_indices, np.ndarray) or out_indices.dtype != index_dtype or \
            out_indices.shape != indices.shape:
        raise BadArgumentError(
            f"max_pooling: out_indices must be a {index_dtype} array of shape "
            f"{list(indices.shape)}")
    out_indices[...] = indices
    return values, out_indices


def _index_type(index_dtype):
    try:
        key = np.dtype(index_dtype).name
    except TypeError:
        key = str(index_dtype)
    if key not in _INDEX_DTYPES:
        raise BadAttributeError(
            f"max_pooling: index_dtype is {index_dtype!r}; expected uint32 or uint64")
    return _INDEX_DTYPES[key]
