"""(a) The sample models in a Python that never imports ovpool: plain openvino plus
core.add_extension(libovpool_extension.so)."""

import json
import platform
import re
import shutil
import subprocess

import pytest

from native_helpers import SAMPLES, run_script

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


X86 = platform.machine().lower() in ("x86_64", "amd64")


@pytest.mark.parametrize("isa", ["default", "baseline"])
def test_every_sample_model_runs_through_the_native_extension(native_library, isa):
    env = {"OVPOOL_NATIVE_ISA": "baseline"} if isa == "baseline" else {}
    lines = [json.loads(line) for line in
             run_script("run_samples.py", native_library, SAMPLES, env=env).splitlines()]
    kernel_isa = lines.pop(0)["kernel_isa"]
    if isa == "baseline" or not X86:
        assert kernel_isa == "baseline"
    elif "avx2" in open("/proc/cpuinfo").read().split():
        assert kernel_isa == "avx2"
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


@pytest.mark.skipif(not X86, reason="the AVX2 kernels exist on x86-64 only")
def test_no_avx_instruction_outside_the_avx2_kernels(native_library):
    """The baseline build runs on CPUs without AVX: every function with a VEX-encoded
    instruction belongs to the AVX2 kernels (namespace ...::avx2::)."""
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils) is needed"
    listing = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", native_library],
                             capture_output=True, text=True, check=True).stdout
    function, offenders, avx2_functions = None, set(), set()
    for line in listing.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if header:
            function = header.group(1)
        elif re.match(r"^\s+[0-9a-f]+:\s+v[a-z0-9]+\s", line):
            (avx2_functions if "::avx2::" in function else offenders).add(function)
    assert avx2_functions, "no AVX2 kernel found"
    assert not offenders, sorted(offenders)[:10]
