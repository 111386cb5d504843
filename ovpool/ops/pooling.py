"""AvgPool-1/14/16, MaxPool-1/8/14, AdaptiveAvgPool-8, AdaptiveMaxPool-8, through ovpool.pooling.

Version differences are data (:mod:`ovpool._opschema`): which rounding types an opset knows,
whether it has dilations, and whether MaxPool has the indices output.

Every ``run`` also takes ``out=`` (and ``out_indices=``): the OpenVINO bridge
(:mod:`ovpool.openvino`) builds these same ops from an OpenVINO node's attributes, so the
attribute translation exists once, and passes the output tensors' memory to write into.
"""

from .. import pooling
from .._opschema import version
from .._shapes import (adaptive_output_shape, check_exclude_pad_pads, output_shape_with_unknowns,
                       pool_output_shape)
from .._vocabulary import index_dtype
from ..errors import BadShapeError
from ._base import Op, Spec, const_ints, run_ints

_WINDOW = ("kernel", "strides", "pads_begin", "pads_end", "dilations", "rounding_type",
           "auto_pad")


def layer_attributes(layer):
    """The layer's attributes as its op version has them (:mod:`ovpool._opschema`), and its
    window attributes as :mod:`ovpool.pooling` takes them (no dilations: None)."""
    values = version(layer.type, layer.opset).read(layer.attributes)
    return values, {name: values.get(name) for name in _WINDOW}


def _check_rank(shape, what="input"):
    if shape is not None and len(shape) < 3:
        raise BadShapeError(f"{what} shape {list(shape)} has rank {len(shape)}; pooling needs "
                            "(N, C, spatial...)")


def _pooled_shape(shape, window):
    """Output shape of fixed-window pooling; axes of unknown length stay unknown."""
    if shape is None:
        return None
    _check_rank(shape)
    return output_shape_with_unknowns(
        shape, lambda known: pool_output_shape(known, **window), window["kernel"],
        window["dilations"])


def avg_pool(layer):
    """AvgPool-1/14 (no dilations) and AvgPool-16."""
    values, window = layer_attributes(layer)
    exclude_pad = values["exclude-pad"]
    if exclude_pad:
        # Checked when the layer is built, as OpenVINO does, not first at inference.
        check_exclude_pad_pads(len(window["kernel"]), window["kernel"], window["pads_begin"],
                               window["pads_end"], window["dilations"], window["auto_pad"])

    def infer(data):
        return [Spec(_pooled_shape(data.shape, window), data.dtype)]

    def run(x, out=None):
        return (pooling.avg_pool(x, exclude_pad=exclude_pad, out=out, **window),)

    return Op(infer, run)


def max_pool(layer):
    """MaxPool-1 (values only) and MaxPool-8/14 (values and indices)."""
    values, window = layer_attributes(layer)
    has_indices = version(layer.type, layer.opset).outputs == 2
    index_type, axis = values.get("index_element_type"), values.get("axis")

    def infer(data):
        shape = _pooled_shape(data.shape, window)
        if data.shape is not None and axis is not None and not -len(data.shape) <= axis < len(data.shape):
            raise BadShapeError(f"attribute 'axis' is {axis}, out of range for rank {len(data.shape)}")
        specs = [Spec(shape, data.dtype)]
        if has_indices:
            specs.append(Spec(shape, index_dtype(index_type)))
        return specs

    def run_first(x, out=None):
        return (pooling.max_pool(x, return_indices=False, out=out, **window),)

    def run(x, out=None, out_indices=None):
        return pooling.max_pool(x, index_element_type=index_type, axis=axis, out=out,
                                out_indices=out_indices, **window)

    return Op(infer, run if has_indices else run_first, run_first)


def _adaptive_shape(data, output_size):
    if data.shape is None:
        return None
    _check_rank(data.shape)
    sizes = const_ints(output_size, "the output size (input 1)")
    if sizes is None:
        return tuple(data.shape[:2]) + (None,) * (len(data.shape) - 2)
    return output_shape_with_unknowns(
        data.shape, lambda known: adaptive_output_shape(known, sizes), lengths_matter=False)


def _sizes(output_size):
    return run_ints(output_size, "the output size (input 1)")


def adaptive_avg_pool(layer):
    def infer(data, output_size):
        return [Spec(_adaptive_shape(data, output_size), data.dtype)]

    def run(x, output_size, out=None):
        return (pooling.adaptive_avg_pool(x, _sizes(output_size), out=out),)

    return Op(infer, run)


def adaptive_max_pool(layer):
    index_type = layer_attributes(layer)[0]["index_element_type"]

    def infer(data, output_size):
        shape = _adaptive_shape(data, output_size)
        return [Spec(shape, data.dtype),
                Spec(shape, index_dtype(index_type))]

    def run_first(x, output_size, out=None):
        return (pooling.adaptive_max_pool(x, _sizes(output_size), return_indices=False,
                                          out=out),)

    def run(x, output_size, out=None, out_indices=None):
        return pooling.adaptive_max_pool(x, _sizes(output_size), index_element_type=index_type,
                                         out=out, out_indices=out_indices)

    return Op(infer, run, run_first)


# The builder of every version of each op in ovpool._opschema.
BUILDERS = {"AvgPool": avg_pool, "MaxPool": max_pool, "AdaptiveAvgPool": adaptive_avg_pool,
            "AdaptiveMaxPool": adaptive_max_pool}
