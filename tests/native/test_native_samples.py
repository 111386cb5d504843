"""(a) The sample models in a Python that never imports ovpool: plain openvino plus
core.add_extension(libovpool_extension.so)."""

import json

from conftest import SAMPLES, run_script

# Pooling layers each model has, all read as "ovpool" ops (the ONNX frontend's own LpPool
# translation builds an AvgPool-1 node directly, which no reader sees; the Global ops become
# reductions).
EXPECTED_POOLING = {
    "adaptive_avg_pool_8": [["AdaptiveAvgPool", "ovpool"]],
    "adaptive_max_pool_8": [["AdaptiveMaxPool", "ovpool"]],
    "avg_pool_1": [["AvgPool", "ovpool"]],
    "avg_pool_14": [["AvgPool", "ovpool"]],
    "avg_pool_16": [["AvgPool", "ovpool"]],
    "max_pool_1": [["MaxPool", "ovpool"]],
    "max_pool_8": [["MaxPool", "ovpool"]],
    "max_pool_14": [["MaxPool", "ovpool"]],
    "onnx_avg_pool_include_pad_ceil": [["AvgPool", "ovpool"]],
    "onnx_global_avg_pool": [],
    "onnx_global_max_pool": [],
    "onnx_lp_pool": [["AvgPool", "ovpool"]],
    "onnx_max_pool_storage_order": [["MaxPool", "ovpool"]],
    "ovpool_onnx_avg_pool_include_pad_ceil": [["OnnxAveragePool", "ovpool"]],
    "ovpool_onnx_max_pool_storage_order": [["OnnxMaxPool", "ovpool"]],
    "pooling_chain": [["AdaptiveAvgPool", "ovpool"], ["AvgPool", "ovpool"], ["MaxPool", "ovpool"]],
    "pooling_chain batch 3": [],
    "pooling_chain_f16": [["AdaptiveAvgPool", "ovpool"], ["AvgPool", "ovpool"],
                          ["MaxPool", "ovpool"]],
    "resnet_stem": [["MaxPool", "ovpool"]],
    "resnet_stem_fp16_weights": [["MaxPool", "ovpool"]],
    "onnx_avg_pool_include_pad_ceil.onnx": [["OnnxAveragePool", "ovpool"]],
    "onnx_global_avg_pool.onnx": [],
    "onnx_global_max_pool.onnx": [],
    "onnx_lp_pool.onnx": [["AvgPool", "opset1"]],
    "onnx_max_pool_storage_order.onnx": [["OnnxMaxPool", "ovpool"], ],
}


def _close(result):
    if result == "equal":
        return True
    if isinstance(result, dict) and "ulps" in result:
        return result["ulps"] <= 1.0
    if isinstance(result, dict) and "rel" in result:
        return result["rel"] <= 1e-5
    return False


def test_every_sample_model_runs_through_the_native_extension(native_library):
    lines = [json.loads(line) for line in
             run_script("run_samples.py", native_library, SAMPLES).splitlines()]
    seen = {line["model"]: line for line in lines}
    assert set(seen) == set(EXPECTED_POOLING)
    for name, line in seen.items():
        assert line["pooling"] == EXPECTED_POOLING[name], name
        for output, result in line["outputs"].items():
            assert _close(result), (name, output, result)
    # Max values and indices are exact.
    for name in ("max_pool_1", "max_pool_8", "max_pool_14", "adaptive_max_pool_8",
                 "ovpool_onnx_max_pool_storage_order", "onnx_max_pool_storage_order.onnx"):
        assert set(seen[name]["outputs"].values()) == {"equal"}, name
