"""Reads and compiles malformed IRs with plain OpenVINO and ovpool's native extension; never
imports ovpool. Prints one JSON line per case: the last line of the error, or "no error".

    python run_errors.py <libovpool_extension.so> <samples dir>
"""

import json
import os
import sys

import openvino as ov

library, samples = sys.argv[1], sys.argv[2]
MAX = open(os.path.join(samples, "models", "max_pool_14.xml")).read()
AVG = open(os.path.join(samples, "models", "avg_pool_16.xml")).read()
OVPOOL_MAX = MAX.replace('type="MaxPool" version="opset14"', 'type="MaxPool" version="ovpool"')
AVG1 = AVG.replace('type="AvgPool" version="opset16"', 'type="AvgPool" version="opset1"')

CASES = {
    "kernel": (MAX, 'kernel="2, 2"', 'kernel="0,2"'),
    "strides": (MAX, 'strides="2, 2"', 'strides="-1"'),
    "rounding_type": (MAX, 'rounding_type="ceil_torch"', 'rounding_type="maybe"'),
    "auto_pad": (MAX, 'auto_pad="explicit"', 'auto_pad="x"'),
    "index_element_type": (MAX, 'index_element_type="i32"', 'index_element_type="f32"'),
    "axis": (MAX, 'axis="2"', 'axis="9"'),
    "ovpool axis": (OVPOOL_MAX, 'axis="2"', 'axis="-5"'),
    "ovpool strides": (OVPOOL_MAX, 'strides="2, 2"', 'strides="1, 0"'),
    "exclude-pad": (AVG, 'exclude-pad="false"', 'exclude-pad="true"'),
    "opset1 ceil_torch": (AVG1, 'rounding_type="ceil"', 'rounding_type="ceil_torch"'),
}

for case, (text, old, new) in CASES.items():
    assert old in text, (case, old)
    if case == "exclude-pad":   # pads reaching the dilated kernel: 5 >= (3 - 1) * 2 + 1
        text = text.replace('pads_begin="1, 0"', 'pads_begin="5, 0"')
    core = ov.Core()
    core.add_extension(library)
    try:
        model = core.read_model(text.replace(old, new), ov.Tensor(ov.Type.u8, [0]))
        core.compile_model(model, "CPU")
        message = "no error"
    except RuntimeError as error:
        lines = [line for line in str(error).splitlines() if line.strip()]
        message = lines[-1]
    print(json.dumps({"case": case, "error": message}), flush=True)

# An ONNX MaxPool with a pad not smaller than its kernel, read through the ONNX conversion.
import tempfile  # noqa: E402

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=[2, 0, 0, 0],
                        name="pool7")
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [1, 1, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
with tempfile.TemporaryDirectory() as directory:
    path = os.path.join(directory, "bad.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    core = ov.Core()
    core.add_extension(library)
    try:
        core.read_model(path)
        message = "no error"
    except RuntimeError as error:
        message = next((line for line in str(error).splitlines() if "ovpool" in line), str(error))
    print(json.dumps({"case": "onnx pads", "error": message}), flush=True)
