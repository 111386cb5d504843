"""(e) The native library and ovpool's Python bridge in one process; IRs saved by the native
ops read back by the extension, the Python bridge and ovpool's own runtime."""

import os

import numpy as np
import openvino as ov

import ovpool
import ovpool.openvino as bridge
from native_helpers import SAMPLES

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2}
MODELS = ["pooling_chain", "max_pool_14", "adaptive_max_pool_8", "avg_pool_16",
          "ovpool_onnx_max_pool_storage_order", "ovpool_onnx_avg_pool_include_pad_ceil"]


def _cores(native_library):
    """Two Cores in one process: one with the native library, one with the Python bridge."""
    native = ov.Core()
    native.add_extension(native_library)
    python = ov.Core()
    bridge.add_extensions(python, implementation="python")
    return native, python


def _pool_kinds(model):
    return sorted({(op.get_type_name(), op.get_type_info().version_id)
                   for op in model.get_ordered_ops() if "Pool" in op.get_type_name()})


def _run(core, path):
    name = os.path.basename(path).rsplit(".", 1)[0]
    x = np.load(os.path.join(SAMPLES, "inputs", f"{name}.npy"))
    model = core.read_model(path)
    compiled = core.compile_model(model, "CPU", CONFIG)
    return model, [np.array(v) for v in compiled(x).values()]


def test_native_library_and_python_bridge_in_one_process(native_library, tmp_path):
    native, python = _cores(native_library)
    for name in MODELS:
        path = os.path.join(SAMPLES, "models", f"{name}.xml")
        model_n, out_n = _run(native, path)
        model_p, out_p = _run(python, path)
        assert all(v == "ovpool" for _, v in _pool_kinds(model_n)), name
        assert [type(op).__name__ for op in model_p.get_ordered_ops()
                if "Pool" in op.get_type_name()], name
        for a, b in zip(out_n, out_p):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=name)
    # Both again, interleaved, after both registered their ops.
    _, again = _run(native, os.path.join(SAMPLES, "models", "max_pool_14.xml"))
    _, reference = _run(python, os.path.join(SAMPLES, "models", "max_pool_14.xml"))
    for a, b in zip(again, reference):
        np.testing.assert_array_equal(a, b)


def test_saved_native_ops_read_back_everywhere(native_library, tmp_path):
    native, python = _cores(native_library)
    for name in MODELS:
        src = os.path.join(SAMPLES, "models", f"{name}.xml")
        model, expected = _run(native, src)
        saved = tmp_path / f"{name}.xml"
        ov.save_model(model, str(saved), compress_to_fp16=False)
        text = saved.read_text()
        assert 'version="ovpool"' in text and 'version="opset14"' not in text.replace(
            'type="Parameter" version="opset14"', ""), name
        x = np.load(os.path.join(SAMPLES, "inputs", f"{name}.npy"))
        for core in (native, python):
            _, again = _run(core, str(saved).replace(f"{name}.xml", f"{name}.xml"))
            for a, b in zip(again, expected):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=name)
        runtime = ovpool.compile_model(str(saved))(x)
        for a, b in zip(runtime.values(), expected):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-6, err_msg=name)


def test_one_core_with_both_the_library_and_the_python_bridge(native_library):
    """Both register the "ovpool" opset and the readers on one Core: the first registration
    is used, in either order, and the results stay right."""
    path = os.path.join(SAMPLES, "models", "max_pool_14.xml")
    expected = np.load(os.path.join(SAMPLES, "expected", "max_pool_14.npz"))
    x = np.load(os.path.join(SAMPLES, "inputs", "max_pool_14.npy"))
    for library_first in (True, False):
        core = ov.Core()
        if library_first:
            core.add_extension(native_library)
        bridge.add_extensions(core, implementation="python")
        if not library_first:
            core.add_extension(native_library)
        model = core.read_model(path)
        pool = next(op for op in model.get_ordered_ops() if op.get_type_name() == "MaxPool")
        assert pool.get_type_info().version_id == "ovpool"
        assert (type(pool).__name__ == "OvpoolMaxPool") != library_first
        outputs = core.compile_model(model, "CPU", CONFIG)(x)
        for port, value in outputs.items():
            np.testing.assert_array_equal(value, expected[port.get_any_name()])


def test_ir_saved_by_the_python_bridge_reads_in_the_library(native_library, tmp_path):
    native, python = _cores(native_library)
    for name in MODELS:
        model, expected = _run(python, os.path.join(SAMPLES, "models", f"{name}.xml"))
        saved = tmp_path / f"{name}.xml"
        ov.save_model(model, str(saved), compress_to_fp16=False)
        assert 'version="ovpool"' in saved.read_text(), name
        read, again = _run(native, str(saved))
        assert all(v == "ovpool" for _, v in _pool_kinds(read)), name
        assert not any(type(op).__name__.startswith("Ovpool") for op in read.get_ordered_ops())
        for a, b in zip(again, expected):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=name)
