"""Elementwise ops: Abs, Sqrt, Convert, ConvertLike, and the binary arithmetic ops with numpy
broadcasting (Add, Subtract, Multiply, Divide, Power, Maximum, Minimum)."""

import numpy as np

from .._limits import check_allocation
from ._base import Op, Spec, broadcast_shapes, common_dtype

_BROADCASTS = ("numpy", "none")


def _floor_or_trunc_divide(python_division):
    def divide(a, b):
        if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
            return np.divide(a, b)
        with np.errstate(divide="ignore"):
            quotient = np.floor_divide(a, b)
            if python_division or a.dtype.kind == "u":
                return quotient
            # C-style division truncates towards zero: undo floor's step for inexact negatives.
            inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
            return quotient + inexact.astype(a.dtype)
    return divide


def _int_power(a, b):
    if a.dtype.kind in "iu":
        # numpy refuses negative integer exponents; OpenVINO computes them in floating point.
        check_allocation(np.broadcast_shapes(a.shape, b.shape), np.float64,
                         "the float64 temporary of an integer Power")
        return np.power(a.astype(np.float64), b).astype(a.dtype)
    return np.power(a, b)


def _binary(function):
    def factory(layer):
        mode = layer.attributes.choice("auto_broadcast", _BROADCASTS, "numpy")

        def infer(a, b):
            return [Spec(broadcast_shapes(a.shape, b.shape, mode), common_dtype(a, b))]

        def run(a, b):
            return (np.asarray(function(a, b), dtype=a.dtype),)

        return Op(infer, run)
    return factory


add = _binary(np.add)
subtract = _binary(np.subtract)
multiply = _binary(np.multiply)
power = _binary(_int_power)
maximum = _binary(np.maximum)
minimum = _binary(np.minimum)


def divide(layer):
    mode = layer.attributes.choice("auto_broadcast", _BROADCASTS, "numpy")
    function = _floor_or_trunc_divide(layer.attributes.bool("m_pythondiv", True))

    def infer(a, b):
        return [Spec(broadcast_shapes(a.shape, b.shape, mode), common_dtype(a, b))]

    def run(a, b):
        return (np.asarray(function(a, b), dtype=a.dtype),)

    return Op(infer, run)


def _unary(function):
    def factory(layer):
        def infer(x):
            return [Spec(x.shape, x.dtype)]

        def run(x):
            return (np.asarray(function(x), dtype=x.dtype),)

        return Op(infer, run)
    return factory


def _sqrt(x):
    if x.dtype.kind in "iu":
        return np.rint(np.sqrt(x))
    return np.sqrt(x)


abs_ = _unary(np.abs)
sqrt = _unary(_sqrt)


def _convert_to(x, dtype):
    if dtype == np.bool_:
        return x != 0
    if x.dtype.kind in "fV" and dtype.kind in "iu":
        # Float to integer as OpenVINO's CPU plugin does it: truncate towards zero, then wrap
        # (300.0 -> u8 44, -1.5 -> u8 255).
        check_allocation(x.shape, np.float64, "the float64 temporary of a Convert")
        with np.errstate(invalid="ignore"):
            return x.astype(np.float64).astype(np.int64).astype(dtype)
    return x.astype(dtype)


def convert(layer):
    destination = layer.attributes.dtype("destination_type")

    def infer(x):
        return [Spec(x.shape, destination)]

    def run(x):
        return (_convert_to(x, destination),)

    return Op(infer, run)


def convert_like(layer):
    def infer(x, like):
        return [Spec(x.shape, like.dtype)]

    def run(x, like):
        return (_convert_to(x, like.dtype),)

    return Op(infer, run)
