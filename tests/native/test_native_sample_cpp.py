"""(d) The C++ sample (samples/cpp) built with cmake and run on samples/models/resnet_stem.xml."""

import os
import re
import shutil
import subprocess

import numpy as np
import openvino as ov
import openvino.utils
import pytest

from native_helpers import ROOT, SAMPLES


def _formula(shape):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 37) % 101) / 50.0 - 1.0).astype(np.float32).reshape(shape)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The sample's executable, built with cmake."""
    cmake = shutil.which("cmake")
    assert cmake, "cmake is needed to build the C++ sample"
    build = tmp_path_factory.mktemp("sample-build")
    for command in ([cmake, "-S", os.path.join(SAMPLES, "cpp"), "-B", str(build),
                     f"-DOpenVINO_DIR={openvino.utils.get_cmake_path()}"],
                    [cmake, "--build", str(build), "--parallel", "2"]):
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
    return str(build / "ovpool_sample")


def test_cpp_sample_runs_resnet_stem(native_library, sample):
    model = os.path.join(SAMPLES, "models", "resnet_stem.xml")
    result = subprocess.run([sample, model, native_library],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "layer stem_pool: MaxPool-ovpool" in out, out
    assert "input image: f32 [1,3,64,64]" in out, out
    match = re.search(r"output embedding: f32 \[1,3\] sum=(\S+) first=(\S+)", out)
    assert match, out
    values = np.array([float(v) for v in match.group(2).split(",")])
    # OpenVINO's own MaxPool on the same input: max pooling is exact, the rest is OpenVINO's.
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    native = compiled(_formula((1, 3, 64, 64)))[0].reshape(-1)
    np.testing.assert_allclose(values, native, rtol=1e-5, atol=1e-6)
    assert abs(float(match.group(1)) - float(native.sum())) < 1e-5


def test_cpp_sample_reports_errors(native_library, sample, tmp_path):
    """A missing model file: a message and exit code 1, no crash."""
    result = subprocess.run([sample, str(tmp_path / "missing.xml"), native_library],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "error:" in result.stderr, result
