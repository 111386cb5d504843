"""--engine openvino and the OpenVINO runner: ovpool's strict attribute parsing before
OpenVINO's lenient one, the memory limit for statically shaped tensors, OpenVINO errors
shown by their message (or the OvpoolError ovpool raised inside OpenVINO), and one infer
request per thread."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import ovpool
import ovpool.openvino as bridge
from ovpool.errors import BadAttributeError, MemoryLimitError, UnsupportedError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODELS = os.path.join(ROOT, "samples", "models")
ENV = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}


def _variant(tmp_path, sample, old, new):
    """A copy of a sample IR (and its .bin) with one attribute text replaced."""
    with open(os.path.join(MODELS, sample + ".xml"), encoding="utf-8") as handle:
        xml = handle.read()
    assert old in xml
    path = tmp_path / f"{sample}.xml"
    path.write_text(xml.replace(old, new, 1), encoding="utf-8")
    weights = os.path.join(MODELS, sample + ".bin")
    if os.path.exists(weights):
        (tmp_path / f"{sample}.bin").write_bytes(open(weights, "rb").read())
    return str(path)


def _run(*args):
    return subprocess.run([sys.executable, "-m", "ovpool", "run", *args, "--engine",
                           "openvino"], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=ENV)


@pytest.mark.parametrize("sample, old, new, words", [
    ("max_pool_14", 'kernel="2, 2"', 'kernel="2.5,2"', ["'kernel' is '2.5,2'", "layer id=1"]),
    ("avg_pool_14", 'exclude-pad="true"', 'exclude-pad="maybe"', ["'exclude-pad' is 'maybe'"]),
])
def test_cli_refuses_what_openvino_would_parse_leniently(tmp_path, sample, old, new, words):
    result = _run(_variant(tmp_path, sample, old, new))
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.splitlines()) == 1
    for word in words:
        assert word in result.stderr, result.stderr


def test_memory_limit_covers_static_tensors_in_openvino():
    # resnet_stem's input alone is 1x3x64x64 float32 = 49152 bytes
    result = _run(os.path.join(MODELS, "resnet_stem.xml"), "--memory-limit", "40K")
    assert result.returncode == 2, result.stdout
    assert "layer 'image'" in result.stderr and "49152 bytes" in result.stderr, result.stderr
    previous = ovpool.get_memory_limit()
    ovpool.set_memory_limit(40 << 10)
    try:
        with pytest.raises(MemoryLimitError, match="49152 bytes"):
            bridge.compile_with_openvino(os.path.join(MODELS, "resnet_stem.xml"))
    finally:
        ovpool.set_memory_limit(previous)


def test_errors_inside_openvino_are_shown_by_their_message(tmp_path):
    path = _variant(tmp_path, "ovpool_onnx_max_pool_storage_order", 'storage_order="1"',
                    'storage_order="2"')
    # ovpool's bridge raises inside OpenVINO: the error it raised comes out, whole
    with pytest.raises(BadAttributeError) as info:
        bridge.compile_with_openvino(path, implementation="python")
    message = str(info.value)
    assert message.count("ovpool's OpenVINO bridge") == 1, message
    assert "'storage_order' is '2'" in message and ".py(" not in message
    # OpenVINO's own error about the Python visitor: its message, not the frames after it
    path = _variant(tmp_path, "ovpool_onnx_max_pool_storage_order", 'storage_order="1"',
                    'storage_order="yes"')
    with pytest.raises(UnsupportedError) as info:
        bridge.compile_with_openvino(path, implementation="python")
    assert str(info.value).endswith("Cannot parse 'yes' to number"), str(info.value)


def test_compiled_model_is_safe_to_call_from_several_threads():
    compiled = bridge.compile_with_openvino(os.path.join(MODELS, "max_pool_14.xml"))
    rng = np.random.default_rng(4)
    inputs = [rng.standard_normal((2, 3, 5, 7)).astype(np.float32) for _ in range(8)]
    expected = [compiled.infer([x]) for x in inputs]
    failures = []

    def work(k):
        for _ in range(25):
            got = compiled.infer([inputs[k]])
            for name, want in expected[k].items():
                if not np.array_equal(got[name], want):
                    failures.append((k, name))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:5]
    # and the values are ovpool's
    want = ovpool.max_pool(inputs[0], 2, 2, 1, 1, rounding_type="ceil_torch",
                           index_element_type="i32", axis=2)
    got = expected[0]
    assert any(np.array_equal(v, want[0]) for v in got.values())
