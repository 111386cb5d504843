"""Dynamic shapes (unknown dims, unknown rank, an output size only known at run time) and
concurrent inference requests with the native library."""

import numpy as np
import openvino as ov
import pytest
from openvino import opset8, opset14

import ovpool

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2}


@pytest.fixture(scope="module")
def core(native_library):
    core = ov.Core()
    core.add_extension(native_library)
    return core


def _read(core, model, tmp_path, name="m"):
    path = str(tmp_path / f"{name}.xml")
    ov.save_model(model, path, compress_to_fp16=False)
    return core.read_model(path)


def _max_model(shape):
    param = opset8.parameter(shape, ov.Type.f32, name="x")
    node = opset14.max_pool(param, [2, 1], [1, 1], [1, 0], [0, 1], [3, 2], "ceil_torch",
                            "explicit", "i32", 2)
    return ov.Model(node.outputs(), [param])


def test_unknown_dims_stay_unknown_and_run(core, tmp_path):
    model = _read(core, _max_model(ov.PartialShape([-1, 3, -1, 9])), tmp_path)
    node = next(op for op in model.get_ordered_ops() if op.get_type_name() == "MaxPool")
    assert node.get_type_info().version_id == "ovpool"
    assert str(node.get_output_partial_shape(0)) == "[?,3,?,9]"
    assert node.get_output_element_type(1) == ov.Type.i32
    compiled = core.compile_model(model, "CPU", CONFIG)
    rng = np.random.default_rng(5)
    for shape in [(1, 3, 4, 9), (2, 3, 11, 9), (1, 3, 2, 9)]:
        x = rng.standard_normal(shape).astype(np.float32)
        got = compiled(x)
        values, indices = ovpool.max_pool(x, [3, 2], [2, 1], [1, 0], [0, 1], [1, 1],
                                          rounding_type="ceil_torch", index_element_type="i32",
                                          axis=2)
        np.testing.assert_array_equal(got[0], values)
        np.testing.assert_array_equal(got[1], indices)
    # A length the window cannot fit: refused at run time with the core's message.
    with pytest.raises(RuntimeError, match=r"type=MaxPool .*attribute 'kernel' on spatial axis 0"):
        compiled(np.zeros((1, 3, 1, 9), np.float32))


def test_unknown_rank_gives_unknown_rank(core, tmp_path):
    param = opset8.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="x")
    node = opset14.max_pool(param, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2])
    model = _read(core, ov.Model([node.output(0)], [param]), tmp_path)
    pool = next(op for op in model.get_ordered_ops() if op.get_type_name() == "MaxPool")
    assert pool.get_output_partial_shape(0).rank.is_dynamic
    # The CPU plugin compiles no Parameter of unknown rank: give it one, then run.
    model.reshape([2, 3, 6, 7])
    assert str(pool.get_output_partial_shape(0)) == "[2,3,3,3]"
    x = np.random.default_rng(6).standard_normal((2, 3, 6, 7)).astype(np.float32)
    got = core.compile_model(model, "CPU", CONFIG)(x)[0]
    np.testing.assert_array_equal(got, ovpool.max_pool(x, 2, 2, return_indices=False))


def test_output_size_from_a_parameter(core, tmp_path):
    x_param = opset8.parameter([2, 3, -1, -1], ov.Type.f32, name="x")
    size_param = opset8.parameter([2], ov.Type.i64, name="size")
    node = opset8.adaptive_avg_pool(x_param, size_param)
    model = _read(core, ov.Model([node], [x_param, size_param]), tmp_path)
    pool = next(op for op in model.get_ordered_ops() if op.get_type_name() == "AdaptiveAvgPool")
    assert pool.get_type_info().version_id == "ovpool"
    assert str(pool.get_output_partial_shape(0)) == "[2,3,?,?]"
    compiled = core.compile_model(model, "CPU", CONFIG)
    rng = np.random.default_rng(7)
    for shape, size in [((2, 3, 9, 10), [3, 4]), ((2, 3, 5, 5), [7, 2])]:
        x = rng.standard_normal(shape).astype(np.float32)
        got = compiled({"x": x, "size": np.array(size, np.int64)})[0]
        np.testing.assert_array_equal(got, ovpool.adaptive_avg_pool(x, size))


def test_concurrent_requests_with_changing_shapes(core, tmp_path):
    """Several requests in flight on two streams, each with its own batch size: the per-node
    plan cache must hand every call the plan of its own shape."""
    model = _read(core, _max_model(ov.PartialShape([-1, 3, -1, 9])), tmp_path)
    compiled = core.compile_model(model, "CPU", {**CONFIG, "NUM_STREAMS": 2})
    rng = np.random.default_rng(8)
    inputs = [rng.standard_normal((1 + i % 3, 3, 4 + i % 5, 9)).astype(np.float32)
              for i in range(40)]
    results = {}
    queue = ov.AsyncInferQueue(compiled, 4)
    queue.set_callback(lambda request, i: results.__setitem__(
        i, [request.get_output_tensor(k).data.copy() for k in range(2)]))
    for i, x in enumerate(inputs):
        queue.start_async({0: x}, i)
    queue.wait_all()
    assert len(results) == len(inputs)
    for i, x in enumerate(inputs):
        values, indices = ovpool.max_pool(x, [3, 2], [2, 1], [1, 0], [0, 1], [1, 1],
                                          rounding_type="ceil_torch", index_element_type="i32",
                                          axis=2)
        np.testing.assert_array_equal(results[i][0], values, err_msg=str(i))
        np.testing.assert_array_equal(results[i][1], indices, err_msg=str(i))
