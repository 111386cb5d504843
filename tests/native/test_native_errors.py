"""(c) Malformed attributes raise a Python RuntimeError from read_model / compile_model naming
the layer and the attribute, with the core's message; run in a subprocess, so a crash fails."""

import json

from native_helpers import SAMPLES, run_script

# case -> (layer, IR version in the message, text the message must contain)
EXPECTED = {
    "kernel": ("max_pool", "opset14", "attribute 'kernel' must be positive, got [0, 2]"),
    "strides": ("max_pool", "opset14", "attribute 'strides' has 1 values [-1], expected one per "
                                      "spatial axis (2)"),
    "rounding_type": ("max_pool", "opset14", "attribute 'rounding_type' is 'maybe'; expected "
                                            "one of floor, ceil, ceil_torch"),
    "auto_pad": ("max_pool", "opset14", "attribute 'auto_pad' is 'x'"),
    "index_element_type": ("max_pool", "opset14", "attribute 'index_element_type' is 'f32'; "
                                                  "expected one of i32, i64"),
    "axis": ("max_pool", "opset14", "attribute 'axis' is 9; expected an int in [-4, 3]"),
    "ovpool axis": ("max_pool", "ovpool", "attribute 'axis' is -5; expected an int in [-4, 3]"),
    "ovpool strides": ("max_pool", "ovpool", "attribute 'strides' must be positive, got [1, 0]"),
    "exclude-pad": ("avg_pool", "opset16", "attribute 'pads_begin'/'pads_end' on spatial axis 0 "
                                          "is 5/0, not smaller than the dilated kernel 5 "
                                          "(required with exclude_pad=True)"),
    "opset1 ceil_torch": ("avg_pool", "opset1", "attribute 'rounding_type' is 'ceil_torch'; "
                                               "expected one of floor, ceil"),
    "onnx pads": ("pool7", "ovpool", "MaxPool-22: attribute 'pads' = [2, 0, 0, 0]: the pads of "
                                     "spatial axis 0 (2/0) must be smaller than kernel_shape 2"),
}


def test_malformed_attributes_name_layer_and_attribute(native_library):
    results = {line["case"]: line["error"] for line in map(
        json.loads, run_script("run_errors.py", native_library, SAMPLES).splitlines())}
    assert set(results) == set(EXPECTED)
    for case, (layer, version, text) in EXPECTED.items():
        message = results[case]
        assert f"layer '{layer}'" in message and f"version={version}" in message, (case, message)
        assert "(ovpool's OpenVINO extension)" in message, (case, message)
        assert text in message, (case, message)
