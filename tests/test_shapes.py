"""Output-shape and padding rules (ovpool/_shapes.py), checked on hand-worked cases."""

import numpy as np
import pytest

from ovpool import _rules, adaptive_output_shape, pool_output_shape
from ovpool._shapes import adaptive_end, adaptive_start, per_axis_key, resolve_pool_axes
from ovpool.errors import BadAttributeError, BadShapeError


@pytest.mark.parametrize(
    "length, kernel, stride, pads, rounding, expected",
    [
        (5, 3, 2, (1, 1), "floor", 3),       # (5 + 2 - 3) / 2 + 1
        (6, 3, 2, (0, 0), "floor", 2),       # floor(3 / 2) + 1
        (6, 3, 2, (0, 0), "ceil", 3),        # ceil(3 / 2) + 1
        (6, 3, 2, (0, 0), "ceil_torch", 3),  # last window starts at 4 < 6: kept
        (6, 1, 2, (0, 1), "ceil", 4),        # ceil(6 / 2) + 1, last window starts at 6 = in pad
        (6, 1, 2, (0, 1), "ceil_torch", 3),  # ... and ceil_torch drops it
        (3, 3, 1, (0, 0), "floor", 1),       # kernel covering the whole extent
    ],
)
def test_explicit_output_length(length, kernel, stride, pads, rounding, expected):
    shape = pool_output_shape((2, 3, length), kernel, stride, pads[0], pads[1],
                              rounding_type=rounding)
    assert shape == (2, 3, expected)


def test_valid_with_ceil_keeps_partial_window():
    # L=3, k=2, s=2: both OpenVINO and onnxruntime give 2 (semantics.md).
    assert pool_output_shape((1, 1, 3), 2, 2, 5, 5, auto_pad="valid",
                             rounding_type="ceil") == (1, 1, 2)
    assert pool_output_shape((1, 1, 3), 2, 2, auto_pad="valid") == (1, 1, 1)


@pytest.mark.parametrize(
    "auto_pad, length, kernel, stride, dilation, expected_pads, expected_len",
    [
        ("same_upper", 5, 3, 2, 1, (1, 1), 3),   # total (3-1)*2 + 3 - 5 = 2
        ("same_upper", 6, 3, 2, 1, (0, 1), 3),   # total 1: odd element at the end
        ("same_lower", 6, 3, 2, 1, (1, 0), 3),   # ... or at the start
        ("same_upper", 7, 3, 1, 2, (2, 2), 7),   # dilated kernel spans 5: total 4
        ("same_lower", 4, 2, 1, 3, (2, 1), 4),   # dilated span 4: total 3
        ("same_upper", 4, 1, 3, 1, (0, 0), 2),   # no padding needed
    ],
)
def test_same_padding_from_dilated_kernel(auto_pad, length, kernel, stride, dilation,
                                          expected_pads, expected_len):
    (axis,) = resolve_pool_axes((1, 1, length), kernel, stride, 9, 9, dilation,
                                auto_pad=auto_pad)
    assert (axis.pad_begin, axis.pad_end) == expected_pads
    assert axis.output == expected_len


def test_per_axis_attributes_and_high_rank():
    assert pool_output_shape((1, 2, 9, 8, 7, 6), (3, 2, 1, 2), (2, 2, 1, 3)) == (1, 2, 4, 4, 7, 2)


@pytest.mark.parametrize(
    "kwargs, attribute",
    [
        ({"kernel": 0}, "kernel"),
        ({"kernel": 2, "strides": 0}, "strides"),
        ({"kernel": 2, "dilations": 0}, "dilations"),
        ({"kernel": 2, "pads_begin": -1}, "pads_begin"),
        ({"kernel": 2, "pads_end": [1, 2, 3]}, "pads_end"),
        ({"kernel": 2, "auto_pad": "same"}, "auto_pad"),
        ({"kernel": 2, "rounding_type": "round"}, "rounding_type"),
        ({"kernel": 9}, "kernel"),
        ({"kernel": [2.0, 2.0]}, "kernel"),
    ],
)
def test_bad_attributes_name_attribute(kwargs, attribute):
    with pytest.raises(BadAttributeError, match=attribute):
        pool_output_shape((1, 1, 4, 4), **kwargs)


@pytest.mark.parametrize("shape", [(1, 1), (4,), (1, 1, 0, 3)])
def test_bad_shapes(shape):
    with pytest.raises(BadShapeError):
        pool_output_shape(shape, 1)


def test_adaptive_bounds_follow_the_spec_formulas():
    # L=5 pooled to 3: [0, 2), [1, 4), [3, 5)
    assert [(adaptive_start(i, 5, 3), adaptive_end(i, 5, 3)) for i in range(3)] == \
        [(0, 2), (1, 4), (3, 5)]
    # Upsampling L=2 to 3: [0, 1), [0, 2), [1, 2)
    assert [(adaptive_start(i, 2, 3), adaptive_end(i, 2, 3)) for i in range(3)] == \
        [(0, 1), (0, 2), (1, 2)]
    assert adaptive_output_shape((2, 3, 10, 11), (4, 5)) == (2, 3, 4, 5)
    with pytest.raises(BadAttributeError, match="output_size"):
        adaptive_output_shape((2, 3, 10, 11), (4, 0))


@pytest.mark.parametrize("dim", [3.0, 3.7, "3", True, float("inf"), float("nan"), None, 2**70 + 0.5])
def test_output_shape_functions_refuse_dims_that_are_not_ints(dim):
    from ovpool._shapes import adaptive_output_shape, pool_output_shape
    from ovpool.errors import BadShapeError
    with pytest.raises(BadShapeError, match="sequence of ints"):
        pool_output_shape((1, 1, dim), 1)
    with pytest.raises(BadShapeError, match="sequence of ints"):
        adaptive_output_shape((1, dim, 4), 2)


def test_output_shape_functions_accept_numpy_ints():
    import numpy as np
    from ovpool._shapes import adaptive_output_shape, pool_output_shape
    assert pool_output_shape((np.int64(1), 1, np.int32(5)), 2) == (1, 1, 4)
    assert adaptive_output_shape(np.array([1, 2, 9]), 3) == (1, 2, 3)


def test_empty_kernel_is_the_kernels_fault():
    import numpy as np
    import ovpool
    from ovpool.errors import BadAttributeError
    for call in (lambda: ovpool.avg_pool(np.zeros((1, 1, 4), np.float32), (), pads_begin=(1,),
                                         pads_end=(1,), exclude_pad=True),
                 lambda: ovpool.max_pool(np.zeros((1, 1, 4), np.float32), [])):
        with pytest.raises(BadAttributeError, match="'kernel' has 0 values"):
            call()


@pytest.mark.parametrize("flag", [1, 0, "yes", None, 1.0])
def test_return_indices_must_be_a_real_bool_everywhere(flag):
    import numpy as np
    import ovpool
    import ovpool.dask
    import ovpool.directml
    import ovpool.onnx
    from ovpool.errors import BadArgumentError
    x = np.zeros((1, 1, 4, 4), np.float32)
    calls = [lambda: ovpool.max_pool(x, 2, return_indices=flag),
             lambda: ovpool.adaptive_max_pool(x, 2, return_indices=flag),
             lambda: ovpool.onnx.max_pool(x, [2, 2], return_indices=flag),
             lambda: ovpool.directml.max_pooling(x, [1, 1], [2, 2], [0, 0], [0, 0],
                                                 return_indices=flag)]
    for call in calls:
        with pytest.raises(BadArgumentError, match="'return_indices' must be a bool"):
            call()


def test_stand_in_lengths_are_the_dilated_kernels():
    from ovpool import _rules

    # (k - 1) * d + 1 per axis; 1 for an axis without a kernel value; clamped to 2**61
    assert _rules.stand_in_lengths((3, 2), (2,), 3) == (5, 2, 1)
    assert _rules.stand_in_lengths((), (), 2) == (1, 1)
    assert _rules.stand_in_lengths((2**40, 0), (2**40, -5), 2) == (2**61, 1)


def test_output_shape_with_unknowns_one_rule_for_every_dialect():
    from ovpool import onnx
    from ovpool._shapes import output_shape_with_unknowns

    # OpenVINO: axis 1 is (9 - 3) / 2 + 1 = 4; unknown N and axis 0 stay unknown
    assert output_shape_with_unknowns(
        (None, 3, None, 9), lambda known: pool_output_shape(known, 3, 2), (3, 3)) == \
        (None, 3, None, 4)
    # ONNX ceil_mode: 7 + 2 pads - 3 = 6, ceil(6 / 2) + 1 = 4
    version = onnx.op_version("AveragePool", 22)

    def onnx_shape(known):
        return known[:2] + tuple(w.output for w in onnx.resolve_windows(
            version, known, (3, 3), pads=(1, 1, 1, 1), strides=(2, 2), ceil_mode=1))

    assert output_shape_with_unknowns((1, 2, 7, None), onnx_shape, (3, 3)) == (1, 2, 4, None)
    # adaptive: the outputs are the given sizes, whatever the lengths
    assert output_shape_with_unknowns(
        (None, 4, None, 5), lambda known: adaptive_output_shape(known, (2, 3)),
        lengths_matter=False) == (None, 4, 2, 3)
    # the attributes of an unknown axis are checked against its stand-in: a dilated kernel
    # beyond int64 window arithmetic is refused before any length is known
    with pytest.raises(BadAttributeError, match="spatial axis 0: the dilated kernel .* spans 1208925819613529663078401"):
        output_shape_with_unknowns(
            (1, 1, None), lambda known: pool_output_shape(known, 2**40, dilations=2**40),
            (2**40,), (2**40,))


def test_ir_shape_inference_names_the_refused_axis():
    # every axis is resolved at once, so a refusal names its own axis (not axis 0)
    import numpy as np

    from ovpool.ir.model import Attributes, Layer
    from ovpool.ops import REGISTRY, Spec

    layer = Layer("1", "pool", "MaxPool", "opset1",
                  Attributes({"kernel": "3,20", "strides": "1,1", "pads_begin": "0,0",
                              "pads_end": "0,0"}), (), ())
    op = REGISTRY[("MaxPool", 1)](layer)
    assert op.infer(Spec((None, 1, None, 20), np.dtype(np.float32)))[0].shape == \
        (None, 1, None, 1)
    with pytest.raises(BadAttributeError, match="spatial axis 1: the dilated kernel"):
        op.infer(Spec((1, 1, None, 9), np.dtype(np.float32)))


class _Two(int):
    pass


@pytest.mark.parametrize("value", [True, 2.0, np.int64(2), _Two(2), (1, 2.0), [True, 1], (1, (2,)),
                                   "2", b"2", {2}, object()])
def test_per_axis_cache_keys_refuse_all_but_exact_ints(value):
    # Every one of these compares equal to (or is spelled like) a valid int attribute, so it
    # must not share that attribute's cache key: attribute_key leaves it to the slow checks.
    assert _rules.attribute_key((2, value), False) is None
    if not isinstance(value, str):
        assert _rules.attribute_key((value,), True) is None


def test_per_axis_cache_keys_of_plain_values():
    assert _rules.attribute_key((None, 3, (1, 2), [4, 5], ()), False) == \
        (None, 3, (1, 2), (4, 5), ())
    # ONNX keys keep the sequence type (its messages quote the value as given) and strings.
    assert _rules.attribute_key(([1, 2], (1, 2), "SAME_UPPER", None), True) == \
        ((list, (1, 2)), (tuple, (1, 2)), "SAME_UPPER", None)
    assert _rules.attribute_key(("SAME_UPPER",), False) is None
    # per_axis_key gives the same keys for these and converts numpy ints itself
    assert per_axis_key("kernel", [4, 5], 2) == (4, 5)
    assert per_axis_key("kernel", np.int64(4), 2) == 4
    assert type(per_axis_key("kernel", np.int64(4), 2)) is int
