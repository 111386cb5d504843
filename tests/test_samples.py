"""The runnable examples in samples/ run and print what their comments promise."""

import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def run_sample(name, *args):
    result = subprocess.run([sys.executable, os.path.join(ROOT, "samples", name), *args],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_python_api_tour():
    out = run_sample("python_api.py")
    assert "into out=    (1, 3, 4, 4) True" in out
    assert "output shape (1, 3, 113, 113)" in out
    assert "attribute 'strides' must be positive" in out


def test_python_runtime_tour():
    out = run_sample("python_runtime.py")
    assert "batch 5: (5, 3, 3, 3)" in out
    assert "matches OpenVINO: True" in out


def test_openvino_extension_example(tmp_path):
    out = run_sample("openvino_extension.py", "--out", str(tmp_path))
    assert "pooling nodes: ['OvpoolMaxPool', 'OvpoolAvgPool', 'OvpoolAdaptiveAvgPool']" in out
    assert "native library nodes: ['MaxPool', 'AvgPool', 'AdaptiveAvgPool']" in out
    assert "replace_pooling replaced 3 nodes" in out
    for line in out.splitlines():
        if "max |difference| from native" in line:
            assert float(line.rsplit(" ", 1)[1]) < 1e-5, line
    plain, exact = re.search(r"OpenVINO's conversion max \|difference\| (\S+), with ovpool's "
                             r"extensions (\S+)", out).groups()
    assert float(plain) > 0.1 and float(exact) < 1e-6
    assert 'type="OnnxAveragePool" version="ovpool"' in (
        tmp_path / "avg_pool_include_pad_ceil.xml").read_text()
