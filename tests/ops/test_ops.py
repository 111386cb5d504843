"""Each op implementation on its own: shape inference (with unknown dims) and values, checked
against numpy written out independently here, plus the registry's coverage."""

import numpy as np
import pytest

from ovpool.errors import BadAttributeError, BadDtypeError, BadShapeError
from ovpool.ir.model import Attributes, Layer
from ovpool.ops import REGISTRY, Spec, supported_versions


def build(op_type, opset=1, **attributes):
    layer = Layer("7", "node", op_type, f"opset{opset}",
                  Attributes({k.replace("__", "-"): str(v) for k, v in attributes.items()}), (), ())
    return REGISTRY[(op_type, opset)](layer)


def spec(array_or_shape, dtype=np.float32, const=False):
    if isinstance(array_or_shape, np.ndarray):
        return Spec(array_or_shape.shape, array_or_shape.dtype, array_or_shape if const else None)
    return Spec(tuple(array_or_shape), np.dtype(dtype))


def test_registry_covers_the_pooling_ops_and_the_ops_around_them():
    wanted = {"Parameter", "Const", "Result", "Convert", "ConvertLike", "ReduceMean", "ReduceMax",
              "ReduceMin", "ReduceSum", "Transpose", "Reshape", "Squeeze", "Unsqueeze", "Concat",
              "ShapeOf", "Abs", "Power", "Multiply", "Add", "Subtract", "Divide", "Sqrt",
              "Maximum", "Minimum"}
    assert wanted <= {name for name, _ in REGISTRY}
    assert supported_versions("AvgPool") == [1, 14, 16]
    assert supported_versions("MaxPool") == [1, 8, 14]
    assert supported_versions("AdaptiveAvgPool") == supported_versions("AdaptiveMaxPool") == [8]


def test_pooling_shape_inference_keeps_unknown_dims():
    op = build("MaxPool", 8, kernel="3, 3", strides="2, 2", pads_begin="1, 1", pads_end="1, 1",
               dilations="1, 1", index_element_type="i32")
    values, indices = op.infer(spec((None, 3, None, 9)))
    assert values.shape == (None, 3, None, 5) and indices.dtype == np.int32


def test_pooling_values_come_from_the_kernels():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    op = build("AvgPool", 1, kernel="2, 2", strides="2, 2", pads_begin="0, 0", pads_end="0, 0",
               exclude__pad="true")
    np.testing.assert_array_equal(op.run(x)[0][0, 0], [[2.5, 4.5], [10.5, 12.5]])
    values, = build("MaxPool", 1, kernel="2, 2", strides="2, 2", pads_begin="0, 0",
                    pads_end="0, 0").run(x)
    np.testing.assert_array_equal(values[0, 0], [[5, 7], [13, 15]])


def test_maxpool_rounding_names_depend_on_the_opset():
    with pytest.raises(BadAttributeError, match="ceil_torch"):
        build("MaxPool", 8, kernel="2", strides="1", pads_begin="0", pads_end="0",
              rounding_type="ceil_torch")
    build("MaxPool", 14, kernel="2", strides="1", pads_begin="0", pads_end="0",
          rounding_type="ceil_torch")


def test_adaptive_pool_output_size_from_a_constant():
    op = build("AdaptiveMaxPool", 8, index_element_type="i64")
    size = np.array([2, 3], np.int64)
    values, indices = op.infer(spec((None, 2, 7, 9)), spec(size, const=True))
    assert values.shape == (None, 2, 2, 3) and indices.dtype == np.int64
    assert op.infer(spec((1, 2, 7, 9)), spec((2,), np.int64))[0].shape == (1, 2, None, None)


def test_binary_ops_broadcast_like_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
    b = np.array([1, 2], np.float32)
    for name, expected in (("Add", a + b), ("Subtract", a - b), ("Multiply", a * b),
                           ("Divide", a / b), ("Maximum", np.maximum(a, b)),
                           ("Minimum", np.minimum(a, b)), ("Power", a ** b)):
        op = build(name)
        assert op.infer(spec(a), spec(b))[0].shape == (2, 3, 2)
        np.testing.assert_array_equal(op.run(a, b)[0], expected)
    assert build("Add").infer(spec((None, 3, 1)), spec((4, 1, 5)))[0].shape == (4, 3, 5)


def test_binary_ops_refuse_mixed_types_and_bad_shapes():
    with pytest.raises(BadDtypeError, match="float16"):
        build("Add").infer(spec((2,)), spec((2,), np.float16))
    with pytest.raises(BadShapeError, match="cannot be broadcast"):
        build("Add").infer(spec((2, 3)), spec((4,)))
    with pytest.raises(BadShapeError, match="auto_broadcast is none"):
        build("Add", auto_broadcast="none").infer(spec((2, 3)), spec((1, 3)))


def test_integer_divide_python_and_c_style():
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    np.testing.assert_array_equal(build("Divide").run(a, b)[0], [3, -4, -4, 3])
    np.testing.assert_array_equal(build("Divide", m_pythondiv="false").run(a, b)[0], [3, -3, -3, 3])


def test_unary_ops():
    x = np.array([-4.0, 9.0], np.float32)
    np.testing.assert_array_equal(build("Abs").run(x)[0], [4, 9])
    np.testing.assert_array_equal(build("Sqrt").run(np.abs(x))[0], [2, 3])


def test_convert_truncates_and_wraps_like_openvino_cpu():
    x = np.array([1.5, 2.7, -1.5, 300.0], np.float32)
    np.testing.assert_array_equal(build("Convert", destination_type="i32").run(x)[0], [1, 2, -1, 300])
    np.testing.assert_array_equal(build("Convert", destination_type="u8").run(x)[0], [1, 2, 255, 44])
    np.testing.assert_array_equal(build("Convert", destination_type="boolean").run(x)[0], [1, 1, 1, 1])
    like = build("ConvertLike").run(x, np.zeros(1, np.float16))[0]
    assert like.dtype == np.float16


@pytest.mark.parametrize("name,function", [("ReduceMean", np.mean), ("ReduceMax", np.max),
                                           ("ReduceMin", np.min), ("ReduceSum", np.sum)])
@pytest.mark.parametrize("axes", [[2, 3], [-1, -2], [1], [0, 2]])
@pytest.mark.parametrize("keep_dims", [True, False])
def test_reductions(name, function, axes, keep_dims):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    op = build(name, keep_dims=str(keep_dims).lower())
    axes_value = np.array(axes, np.int64)
    expected = function(x.astype(np.float64), axis=tuple(axes), keepdims=keep_dims)
    assert op.infer(spec(x), spec(axes_value, const=True))[0].shape == expected.shape
    got = op.run(x, axes_value)[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_integer_reduce_mean_truncates():
    x = np.array([[1, 2, 2], [-1, -2, -3]], np.int32)
    np.testing.assert_array_equal(build("ReduceMean").run(x, np.array([1]))[0], [1, -2])


def test_reduction_axes_out_of_range():
    with pytest.raises(BadAttributeError, match="out of range"):
        build("ReduceSum").infer(spec((2, 3)), spec(np.array([2]), const=True))


def test_transpose():
    x = np.arange(24).reshape(2, 3, 4).astype(np.float32)
    order = np.array([0, 2, 1], np.int64)
    op = build("Transpose")
    assert op.infer(spec((None, 3, 4)), spec(order, const=True))[0].shape == (None, 4, 3)
    np.testing.assert_array_equal(op.run(x, order)[0], x.transpose(0, 2, 1))
    np.testing.assert_array_equal(op.run(x, np.array([], np.int64))[0], x.T)
    with pytest.raises(BadAttributeError, match="permutation"):
        op.infer(spec(x), spec(np.array([0, 0, 1]), const=True))


def test_reshape_special_zero_and_minus_one():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    op = build("Reshape", special_zero="true")
    target = np.array([0, -1], np.int64)
    assert op.infer(spec(x), spec(target, const=True))[0].shape == (2, 12)
    assert op.infer(spec((None, 3, 4)), spec(target, const=True))[0].shape == (None, None)
    assert op.run(x, target)[0].shape == (2, 12)
    with pytest.raises(BadShapeError, match="cannot reshape"):
        build("Reshape", special_zero="false").infer(spec(x), spec(np.array([5, -1]), const=True))


def test_squeeze_unsqueeze_concat_shapeof():
    x = np.zeros((1, 3, 1, 2), np.float32)
    assert build("Squeeze").run(x)[0].shape == (3, 2)
    assert build("Squeeze").run(x, np.array([-2]))[0].shape == (1, 3, 2)
    with pytest.raises(BadShapeError, match="not 1"):
        build("Squeeze").infer(spec(x), spec(np.array([1]), const=True))
    assert build("Squeeze", 15, allow_axis_skip="true").infer(
        spec(x), spec(np.array([1, 2]), const=True))[0].shape == (1, 3, 2)
    assert build("Unsqueeze").run(x, np.array([0, -1]))[0].shape == (1, 1, 3, 1, 2, 1)
    a, b = np.ones((2, 3), np.float32), np.zeros((2, 1), np.float32)
    op = build("Concat", axis="-1")
    assert op.infer(spec(a), spec(b))[0].shape == (2, 4)
    np.testing.assert_array_equal(op.run(a, b)[0], np.concatenate([a, b], axis=1))
    with pytest.raises(BadShapeError, match="differ"):
        build("Concat", axis="1").infer(spec((2, 3)), spec((3, 1)))
    shape = build("ShapeOf", 3, output_type="i32").infer(spec((2, 5)))[0]
    assert shape.dtype == np.int32 and list(shape.value) == [2, 5]
    assert build("ShapeOf").infer(spec((None, 5)))[0].value is None
