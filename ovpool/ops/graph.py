"""The ops that frame a graph: Parameter (an input), Const (a value from the .bin) and Result
(an output). The runtime binds Parameters to the caller's arrays and Results to the outputs."""

from ..errors import ModelError
from ..ir.reader import parameter_type
from ._base import Op, Spec


def parameter(layer):
    """The declared type; at run time the runtime puts the caller's array in its place."""
    dtype, shape = parameter_type(layer)
    spec = Spec(shape.to_shape(), dtype)

    def infer():
        return [spec]

    return Op(infer, None)


def const(layer):
    value = layer.constant
    if value is None:
        raise ModelError("the Const has no value")

    def infer():
        return [Spec(value.shape, value.dtype, value)]

    def run():
        return (value,)

    return Op(infer, run)


def result(layer):
    def infer(x):
        return [] if not layer.outputs else [x]

    def run(x):
        return (x,)

    return Op(infer, run)
