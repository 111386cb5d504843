"""The runtime against OpenVINO's CPU plugin: the bundled samples, IRs generated here with
OpenVINO's opset API (random pooling attributes, f32/f16, static and dynamic batch), and the
ONNX backend node tests for the pooling ops converted to IR by OpenVINO. Plus the input
binding rules, dynamic re-inference, and buffer lifetimes."""

import collections
import dataclasses
import functools
import importlib
import os

import numpy as np
import onnx
import openvino as ov
import pytest
from openvino import opset1, opset8, opset14, opset16

import ovpool
from ovpool.errors import BadArgumentError, BadDtypeError, BadShapeError, OvpoolError
from ovpool.runtime import input_index

ROOT = os.path.join(os.path.dirname(__file__), "..")
SAMPLES = os.path.join(ROOT, "samples")
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2}
F32_AVERAGE = dict(rtol=1e-5, atol=1e-6)   # atol: summation order, for results near zero


@functools.lru_cache(maxsize=None)
def _core():
    return ov.Core()


def openvino_outputs(xml, arrays):
    compiled = _core().compile_model(str(xml), "CPU", CPU_CONFIG)
    results = compiled(arrays)
    return [np.array(results[o]) for o in compiled.outputs]


def assert_same(ours, theirs, exact, where):
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, where
    if exact:
        np.testing.assert_array_equal(ours, theirs, err_msg=where)
    elif ours.dtype == np.float16:
        # One f16 ulp: both accumulate in f32, but may round the f32 sum differently.
        np.testing.assert_allclose(ours.astype(np.float32), theirs.astype(np.float32),
                                   rtol=2 ** -10, atol=1e-6, err_msg=where)
    else:
        np.testing.assert_allclose(ours, theirs, **F32_AVERAGE, err_msg=where)


# ---- samples -----------------------------------------------------------------------------

SAMPLE_NAMES = sorted(f[:-4] for f in os.listdir(os.path.join(SAMPLES, "models"))
                      if f.endswith(".xml"))


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_matches_openvino_expected(name):
    compiled = ovpool.compile_model(os.path.join(SAMPLES, "models", f"{name}.xml"))
    outputs = compiled(np.load(os.path.join(SAMPLES, "inputs", f"{name}.npy")))
    expected = np.load(os.path.join(SAMPLES, "expected", f"{name}.npz"))
    assert sorted(outputs) == sorted(expected.files)
    for key in expected.files:
        exact = "max" in name and "avg" not in name or key == "indices" or outputs[key].dtype.kind in "iu"
        assert_same(outputs[key], expected[key], exact, f"{name}:{key}")


def test_sample_count():
    assert len(SAMPLE_NAMES) >= 17


# ---- generated IRs -----------------------------------------------------------------------

_OV_TYPE = {np.float32: ov.Type.f32, np.float16: ov.Type.f16}


def _random_case(rng):
    """Attributes OpenVINO accepts, for one pooling op on a small random shape."""
    op = rng.choice(["avg1", "avg14", "avg16", "max1", "max8", "max14", "aavg", "amax"])
    rank = int(rng.integers(1, 4))
    spatial = [int(v) for v in rng.integers(3, 9, rank)]
    kernel = [int(v) for v in rng.integers(1, 4, rank)]
    strides = [int(v) for v in rng.integers(1, 4, rank)]
    has_dilations = op in ("avg16", "max8", "max14")
    dilations = [int(v) for v in rng.integers(1, 3, rank)] if has_dilations else [1] * rank
    exclude_pad = bool(rng.integers(0, 2))
    auto_pad = str(rng.choice(["explicit", "explicit", "same_upper", "same_lower", "valid"]))
    if auto_pad.startswith("same") and exclude_pad:
        dilations = [1] * rank   # keeps the recomputed pads below the kernel
    pads_begin = [int(rng.integers(0, k)) for k in kernel]
    pads_end = [int(rng.integers(0, k)) for k in kernel]
    roundings = ["floor", "ceil"] + (["ceil_torch"] if op in ("avg14", "avg16", "max14") else [])
    for a in range(rank):   # the dilated kernel must fit the padded input
        while (kernel[a] - 1) * dilations[a] + 1 > spatial[a]:
            kernel[a] -= 1
    rounding = str(rng.choice(roundings))
    if auto_pad.startswith("same"):
        # OpenVINO adds an empty window here (test_same_auto_pad_with_ceil_rounding below).
        rounding = "floor"
    return dict(op=op, spatial=spatial, kernel=kernel, strides=strides, dilations=dilations,
                pads_begin=pads_begin, pads_end=pads_end, exclude_pad=exclude_pad,
                rounding=rounding, auto_pad=auto_pad,
                axis=int(rng.integers(-rank - 2, rank + 2)), index_type=str(rng.choice(["i32", "i64"])),
                output_size=[int(v) for v in rng.integers(1, 5, rank)])


def _build(case, dtype, dynamic):
    shape = [2, 3] + case["spatial"]
    param = opset1.parameter([-1 if dynamic else 2, 3] + case["spatial"], _OV_TYPE[dtype], name="input")
    c = case
    window = dict(strides=c["strides"], pads_begin=c["pads_begin"], pads_end=c["pads_end"],
                  kernel_shape=c["kernel"], rounding_type=c["rounding"], auto_pad=c["auto_pad"])
    op = c["op"]
    if op == "avg1":
        node = opset1.avg_pool(param, exclude_pad=c["exclude_pad"], **window)
    elif op == "avg14":
        node = opset14.avg_pool(param, exclude_pad=c["exclude_pad"], **window)
    elif op == "avg16":
        node = opset16.avg_pool(param, exclude_pad=c["exclude_pad"], dilations=c["dilations"], **window)
    elif op == "max1":
        node = opset1.max_pool(param, **window)
    elif op in ("max8", "max14"):
        module = opset8 if op == "max8" else opset14
        node = module.max_pool(param, dilations=c["dilations"], index_element_type=c["index_type"],
                               axis=c["axis"], **window)
    elif op == "aavg":
        node = opset8.adaptive_avg_pool(param, opset1.constant(np.array(c["output_size"], np.int64)))
    else:
        # The CPU plugin implements AdaptiveMaxPool indices as i32 only.
        node = opset8.adaptive_max_pool(param, opset1.constant(np.array(c["output_size"], np.int32)),
                                        index_element_type="i32")
    outputs = [node.output(i) for i in range(len(node.outputs()))]
    return ov.Model(outputs, [param], "generated"), shape


GENERATED = 48


def _generated_cases():
    rng = np.random.default_rng(20240611)
    cases = []
    for index in range(GENERATED):
        case, dtype = _random_case(rng), (np.float32, np.float16)[index % 2]
        if dtype == np.float16 and case["op"].startswith("max") and case["rounding"] == "ceil":
            # Empty windows differ in f16 (test_f16_empty_max_window below).
            case["rounding"] = "floor"
        cases.append((index, case, dtype, index % 3 == 0))
    return cases


@pytest.mark.parametrize("index,case,dtype,dynamic", _generated_cases(),
                         ids=lambda v: str(v) if isinstance(v, int) else None)
def test_generated_ir_matches_openvino(tmp_path, index, case, dtype, dynamic):
    if case["op"] in ("max8", "max14") and not -len(case["spatial"]) - 2 <= case["axis"] < len(case["spatial"]) + 2:
        case = dict(case, axis=0)
    try:
        model, shape = _build(case, dtype, dynamic)
    except RuntimeError as error:
        pytest.fail(f"the case generator made attributes OpenVINO rejects: {case}: {error}")
    xml = tmp_path / "generated.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    rng = np.random.default_rng(index)
    # Distinct values: the max is never a tie, so indices are unambiguous.
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32)
    x = (x / x.size * 8 - 4).astype(dtype)
    if dtype == np.float16:
        x = np.unique(x.ravel(), return_inverse=True)[1].reshape(shape).astype(dtype) / 64
        x = x.astype(dtype)
    compiled = ovpool.compile_model(str(xml))
    ours = list(compiled(x).values())
    theirs = openvino_outputs(xml, x)
    exact = case["op"].startswith(("max", "amax"))
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert_same(a, b, exact or i == 1, f"{case} output {i}")
    if dynamic:
        # A second batch size re-infers shapes and still agrees.
        x1 = x[:1].copy()
        for a, b in zip(compiled(x1).values(), openvino_outputs(xml, x1), strict=True):
            assert_same(a, b, exact, f"{case} batch 1")


def test_same_auto_pad_with_ceil_rounding(tmp_path):
    """A known difference: for auto_pad same_* OpenVINO applies ceil rounding on top of the
    same-padding length, adding a window that lies wholly past the input (its average is NaN,
    its max -FLT_MAX). ovpool's shape rule gives ceil(L / s), so the IR's declared dims
    contradict ovpool's and compiling says so clearly instead of running."""
    param = opset1.parameter([1, 1, 6], ov.Type.f32, name="x")
    node = opset14.avg_pool(param, [2], [0], [0], [1], True, "ceil", "same_upper")
    xml = tmp_path / "same_ceil.xml"
    ov.save_model(ov.Model([node.output(0)], [param], "m"), str(xml))
    with pytest.raises(ovpool.errors.ModelError) as info:
        ovpool.compile_model(str(xml))
    assert "declared dims [1,1,4] contradict the inferred shape [1,1,3]" in str(info.value)
    assert np.isnan(openvino_outputs(xml, np.ones((1, 1, 6), np.float32))[0][0, 0, 3])


def test_f16_empty_max_window(tmp_path):
    """A known difference: a MaxPool window wholly in the padding (rounding ceil) gives the
    dtype's lowest finite value in ovpool; OpenVINO's CPU plugin computes f16 in f32, so it gives
    -FLT_MAX, which becomes -inf in f16."""
    param = opset1.parameter([1, 1, 4], ov.Type.f16, name="x")
    node = opset1.max_pool(param, [2], [0], [2], [2], "ceil")
    xml = tmp_path / "empty_window.xml"
    ov.save_model(ov.Model([node.output(0)], [param], "m"), str(xml))
    x = np.arange(4, dtype=np.float16).reshape(1, 1, 4)
    ours = list(ovpool.compile_model(str(xml))(x).values())[0]
    theirs = openvino_outputs(xml, x)[0]
    np.testing.assert_array_equal(ours[..., :2], theirs[..., :2])
    assert ours[0, 0, 2] == np.finfo(np.float16).min and theirs[0, 0, 2] == -np.inf


# ---- the ONNX backend node tests, converted by OpenVINO ----------------------------------

ONNX_POOL_MODULES = ("averagepool", "maxpool", "globalaveragepool", "globalmaxpool", "lppool")
# Measured with onnx 1.23 / OpenVINO 2026.4: counts may only go up.
ONNX_MIN_RUN, ONNX_MIN_MATCH_OPENVINO, ONNX_MIN_MATCH_ONNX = 51, 51, 50


def _write_onnx_node_tests(directory):
    """The pooling node tests as onnx/backend/test/data/node dirs (model.onnx plus
    test_data_set_0/input_*.pb and output_*.pb; the onnx package ships only their generators),
    each with the IR OpenVINO converts it to and OpenVINO CPU's outputs (openvino.npz)."""
    from onnx import numpy_helper
    import onnx.backend.test.case.node as node_cases

    for module in ONNX_POOL_MODULES:
        importlib.import_module(f"onnx.backend.test.case.node.{module}")
    prefixes = ("test_averagepool", "test_maxpool", "test_globalaveragepool",
                "test_globalmaxpool", "test_lppool")
    for case in node_cases._NodeTestCases:
        if not case.name.startswith(prefixes) or "expanded" in case.name:
            continue
        case_dir = os.path.join(directory, case.name)
        data_dir = os.path.join(case_dir, "test_data_set_0")
        os.makedirs(data_dir, exist_ok=True)
        onnx.save(case.model, os.path.join(case_dir, "model.onnx"))
        inputs, outputs = case.data_sets[0]
        for kind, arrays in (("input", inputs), ("output", outputs)):
            for i, array in enumerate(arrays):
                with open(os.path.join(data_dir, f"{kind}_{i}.pb"), "wb") as handle:
                    handle.write(numpy_helper.from_array(np.asarray(array)).SerializeToString())
        xml = os.path.join(case_dir, "model.xml")
        ov.save_model(ov.convert_model(os.path.join(case_dir, "model.onnx")), xml,
                      compress_to_fp16=False)
        results = openvino_outputs(xml, [np.asarray(a) for a in inputs])
        np.savez(os.path.join(case_dir, "openvino.npz"), *results)
    with open(os.path.join(directory, "complete"), "w"):
        pass


def _read_pb(path):
    import onnx
    from onnx import numpy_helper
    tensor = onnx.TensorProto()
    with open(path, "rb") as handle:
        tensor.ParseFromString(handle.read())
    return numpy_helper.to_array(tensor)


@pytest.fixture(scope="session")
def onnx_node_dir(request, tmp_path_factory):
    """Generated once per onnx/OpenVINO version pair and kept in pytest's cache directory
    (in a temporary one when the cache plugin is off, ``-p no:cacheprovider``)."""
    key = "ovpool-onnx-node-tests-" + "".join(
        c if c.isalnum() or c in ".-" else "_" for c in f"{onnx.__version__}-{ov.__version__}")
    cache = getattr(request.config, "cache", None)
    directory = str(cache.mkdir(key) if cache is not None else tmp_path_factory.mktemp(key))
    if not os.path.exists(os.path.join(directory, "complete")):
        _write_onnx_node_tests(directory)
    return directory


def test_onnx_backend_node_tests(onnx_node_dir):
    names = sorted(n for n in os.listdir(onnx_node_dir) if n.startswith("test_"))
    run = match_openvino = match_onnx = 0
    failures = []
    for name in names:
        case_dir = os.path.join(onnx_node_dir, name)
        data_dir = os.path.join(case_dir, "test_data_set_0")
        files = sorted(os.listdir(data_dir))
        inputs = [_read_pb(os.path.join(data_dir, f)) for f in files if f.startswith("input_")]
        expected = [_read_pb(os.path.join(data_dir, f)) for f in files if f.startswith("output_")]
        try:
            ours = list(ovpool.compile_model(os.path.join(case_dir, "model.xml"))(inputs).values())
        except OvpoolError as error:
            failures.append(f"{name}: {error}")
            continue
        run += 1
        with np.load(os.path.join(case_dir, "openvino.npz")) as saved:
            theirs = [saved[f"arr_{i}"] for i in range(len(saved.files))]
        try:
            for a, b in zip(ours, theirs, strict=True):
                assert_same(a, b, "max" in name, name)
            match_openvino += 1
        except (AssertionError, ValueError) as error:
            failures.append(f"{name} differs from OpenVINO: {str(error)[:300]}")
        if len(ours) == len(expected) and all(
                a.shape == e.shape and np.allclose(a, e, rtol=1e-3, atol=1e-7)
                for a, e in zip(ours, expected)):
            match_onnx += 1
        else:
            failures.append(f"{name} differs from the ONNX expected outputs")
    print(f"\nONNX backend node tests: {len(names)} converted, {run} run in ovpool, "
          f"{match_openvino} match OpenVINO, {match_onnx} match the ONNX expected outputs")
    for line in failures:
        print("  ", line)
    assert len(names) >= ONNX_MIN_RUN
    assert run >= ONNX_MIN_RUN, failures
    assert match_openvino >= ONNX_MIN_MATCH_OPENVINO, failures
    assert match_onnx >= ONNX_MIN_MATCH_ONNX, failures


# ---- inputs, dynamic shapes, lifetimes ---------------------------------------------------

@pytest.fixture(scope="module")
def chain():
    return ovpool.compile_model(os.path.join(SAMPLES, "models", "pooling_chain.xml"))


def test_inputs_as_array_list_or_dict(chain):
    x = np.load(os.path.join(SAMPLES, "inputs", "pooling_chain.npy"))
    by_array, by_list, by_dict = chain(x), chain([x]), chain.infer({"input": x})
    for key in by_array:
        np.testing.assert_array_equal(by_array[key], by_list[key])
        np.testing.assert_array_equal(by_array[key], by_dict[key])
    assert list(by_array) == ["features", "mean"]


def test_dynamic_batch_reinfers_shapes(chain):
    rng = np.random.default_rng(1)
    for batch in (1, 5, 2):
        out = chain(rng.standard_normal((batch, 3, 32, 32), dtype=np.float32))
        assert out["features"].shape == (batch, 3, 3, 3) and out["mean"].shape == (batch, 3, 1, 1)


def test_model_io_description(chain):
    assert [str(t) for t in chain.inputs] == ["input: f32[?,3,32,32]"]
    assert [str(t) for t in chain.outputs] == ["features: f32[?,3,3,3]", "mean: f32[?,3,1,1]"]


@pytest.mark.parametrize("inputs,error,words", [
    (np.zeros((2, 3, 32, 32), np.float64), BadDtypeError, ["'input'", "float64", "f32"]),
    (np.zeros((2, 4, 32, 32), np.float32), BadShapeError, ["[2, 4, 32, 32]", "[?,3,32,32]"]),
    (np.zeros((3, 32, 32), np.float32), BadShapeError, ["[3, 32, 32]"]),
    ({"nope": np.zeros((1, 3, 32, 32), np.float32)}, BadArgumentError, ["'input'", "nope"]),
    ([np.zeros((1, 3, 32, 32), np.float32)] * 2, BadArgumentError, ["got 2 inputs"]),
    ("text", BadArgumentError, ["'input'"]),
])
def test_bad_inputs_are_refused_clearly(chain, inputs, error, words):
    with pytest.raises(error) as info:
        chain(inputs)
    for word in words:
        assert word in str(info.value)


def test_dynamic_input_that_breaks_an_op_names_the_layer(tmp_path):
    param = opset1.parameter([-1, 1, -1], ov.Type.f32, name="x")
    node = opset1.max_pool(param, [1], [0], [0], [3])
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([node.output(0)], [param], "m"), str(xml))
    compiled = ovpool.compile_model(str(xml))
    assert compiled(np.zeros((1, 1, 5), np.float32))[compiled.outputs[0].name].shape == (1, 1, 3)
    with pytest.raises(OvpoolError) as info:
        compiled(np.zeros((1, 1, 2), np.float32))
    message = str(info.value)
    assert "type=MaxPool" in message and "kernel" in message and "m.xml" in message


def test_intermediates_are_freed_after_their_last_consumer(chain):
    steps = chain.plan.steps
    outputs = {slot for _, slot in chain.plan.outputs}
    assert len(steps) == 4   # MaxPool, AvgPool, AdaptiveAvgPool, ReduceMean (Consts folded)
    for index, step in enumerate(steps):
        for slot in step.free:
            assert slot not in outputs
            assert all(slot not in later.inputs for later in steps[index + 1:])
    read = {slot for step in steps for slot in step.inputs}
    last_reader = {slot: max(i for i, step in enumerate(steps) if slot in step.inputs)
                   for slot in read - outputs}
    for slot, index in last_reader.items():
        assert slot in steps[index].free
    # MaxPool's output, read only by AvgPool, is released right after AvgPool.
    assert steps[0].outputs[0] in steps[1].free


def test_unused_maxpool_indices_are_not_computed(chain):
    maxpool = next(step for step in chain.plan.steps if step.layer.type == "MaxPool")
    assert len(maxpool.outputs) == 1


def test_constant_subgraphs_are_folded_at_compile_time():
    compiled = ovpool.compile_model(os.path.join(SAMPLES, "models", "resnet_stem_fp16_weights.xml"))
    assert "Convert" not in [step.layer.type for step in compiled.plan.steps]


def test_num_threads_is_validated():
    with pytest.raises(BadArgumentError):
        ovpool.compile_model(os.path.join(SAMPLES, "models", "max_pool_1.xml"), num_threads=0)


def test_num_threads_is_restored_after_infer():
    before = ovpool.get_num_threads()
    compiled = ovpool.compile_model(os.path.join(SAMPLES, "models", "max_pool_1.xml"), num_threads=1)
    compiled(np.load(os.path.join(SAMPLES, "inputs", "max_pool_1.npy")))
    assert ovpool.get_num_threads() == before


def test_the_compiled_plan_is_read_only(chain):
    plan = chain.plan
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.steps = ()
    with pytest.raises(AttributeError):
        plan.steps[0].run = None
    assert isinstance(plan.steps, tuple) and isinstance(plan.template, tuple)


def test_input_index_answers_to_tensor_names_and_the_parameter_name():
    layer = collections.namedtuple("layer", "name")
    info = collections.namedtuple("info", "name names layer")
    infos = [info("a", ("a", "a_alias"), layer("param_a")),
             info("b", ("b",), layer("param_b"))]
    assert [input_index(infos, n) for n in ("a", "a_alias", "param_a", "b", "param_b", "c")] \
        == [0, 0, 0, 1, 1, None]
