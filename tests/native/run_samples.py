"""Runs every sample model with plain OpenVINO and ovpool's native extension; never imports
ovpool. Prints one JSON line per model: the pooling nodes' (type, version) and, per output, how
it compares with samples/expected (or, for the ONNX models, ONNX Runtime's outputs).

    python run_samples.py <libovpool_extension.so> <samples dir>
"""

import ctypes
import glob
import json
import os
import sys

import numpy as np
import openvino as ov

assert "ovpool" not in sys.modules
library, samples = sys.argv[1], sys.argv[2]
core = ov.Core()
core.add_extension(library)
# Which kernel build runs (the library exports it for diagnostics).
isa = ctypes.CDLL(library).ovpool_kernel_isa
isa.restype = ctypes.c_char_p
print(json.dumps({"kernel_isa": isa().decode()}), flush=True)
CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2}


def compare(got, want):
    """'equal', or the largest difference in the units the samples README asks for."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"shape/dtype {got.shape} {got.dtype} vs {want.shape} {want.dtype}"
    if np.array_equal(got, want, equal_nan=got.dtype.kind == "f"):
        return "equal"
    if got.dtype.kind != "f":
        return "values differ"
    if got.dtype == np.float16:   # in float16 ulps of the larger magnitude
        ulp = np.spacing(np.maximum(np.abs(got), np.abs(want))).astype(np.float64)
        return {"ulps": float(np.max(np.abs(got.astype(np.float64) - want) / ulp))}
    scale = np.maximum(np.abs(want.astype(np.float64)), 1e-6 / 1e-5)
    return {"rel": float(np.max(np.abs(got.astype(np.float64) - want) / scale))}


def run(name, model, x, expected):
    kinds = sorted({(op.get_type_name(), op.get_type_info().version_id)
                    for op in model.get_ordered_ops() if "Pool" in op.get_type_name()})
    compiled = core.compile_model(model, "CPU", CONFIG)
    request = compiled.create_infer_request()
    request.infer({0: x})
    outputs = {}
    for i, port in enumerate(compiled.outputs):
        key = port.get_any_name()
        outputs[key] = compare(request.get_output_tensor(i).data.copy(), expected[key])
    print(json.dumps({"model": name, "pooling": kinds, "outputs": outputs}), flush=True)


for xml in sorted(glob.glob(os.path.join(samples, "models", "*.xml"))):
    name = os.path.basename(xml)[:-4]
    x = np.load(os.path.join(samples, "inputs", f"{name}.npy"))
    run(name, core.read_model(xml), x, np.load(os.path.join(samples, "expected", f"{name}.npz")))
    if name == "pooling_chain":   # dynamic batch: another batch size through the same model
        model = core.read_model(xml)
        x3 = np.concatenate([x, x[:1]])
        compiled = core.compile_model(model, "CPU", CONFIG)
        first = compiled(x)
        again = compiled(x3)
        same = all(np.array_equal(again[p][:2], first[p]) and np.array_equal(again[p][2], first[p][0])
                   for p in compiled.outputs)
        print(json.dumps({"model": "pooling_chain batch 3", "pooling": [], "outputs":
                          {"all": "equal" if same else "batch 3 differs"}}), flush=True)

for path in sorted(glob.glob(os.path.join(samples, "onnx", "*.onnx"))):
    name = "onnx_" + os.path.basename(path)[:-5]
    x = np.load(os.path.join(samples, "inputs", f"{name}.npy"))
    run(f"{name}.onnx", core.read_model(path), x,
        np.load(os.path.join(samples, "expected", "onnxruntime", f"{name}.npz")))
