"""``ovpool run --batch-size``: streaming runs equal in-memory runs bit for bit, stay within a
memory limit far below the input's size, and leave nothing behind when interrupted."""

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ovpool

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODELS = os.path.join(ROOT, "samples", "models")


def ovpool_run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "ovpool", "run", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})


def dynamic_batch_copy(name, directory):
    """A copy of a sample model whose batch dimension is dynamic (the samples with indices
    have a fixed batch). Only for models without Const layers, whose every port is batched."""
    text = open(os.path.join(MODELS, f"{name}.xml")).read()
    assert 'type="Const"' not in text
    text = re.sub(r'shape="\d+,', 'shape="?,', text)
    text = re.sub(r"(<port[^>]*>\s*<dim>)\d+(</dim>)", r"\g<1>-1\2", text)
    path = directory / f"{name}_dynamic.xml"
    path.write_text(text)
    (directory / f"{name}_dynamic.bin").write_bytes(
        open(os.path.join(MODELS, f"{name}.bin"), "rb").read())
    return path


def save(directory, name, array):
    path = directory / name
    np.save(path, array)
    return path


def standard_normal(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def in_memory(model, x):
    return ovpool.compile_model(str(model))(x)


@pytest.mark.parametrize("batch", [1, 7, 10, 64, 500])
def test_two_output_model_to_npz_equals_the_in_memory_run(tmp_path, batch):
    model = os.path.join(MODELS, "pooling_chain.xml")
    x = standard_normal((103, 3, 32, 32))
    result = ovpool_run(model, "--input", save(tmp_path, "x.npy", x), "--batch-size", batch,
                        "--output", tmp_path / "out.npz")
    assert result.returncode == 0, result.stderr
    assert f"streamed 103 items in chunks of {batch}" in result.stdout
    written, expected = np.load(tmp_path / "out.npz"), in_memory(model, x)
    assert sorted(written.files) == sorted(expected)
    for name, value in expected.items():
        assert written[name].dtype == value.dtype
        np.testing.assert_array_equal(written[name], value)
    # The summary table is the in-memory run's.
    reference = ovpool_run(model, "--input", tmp_path / "x.npy")
    table = [line for line in result.stdout.splitlines() if line.startswith(("features", "mean"))]
    assert table == [line for line in reference.stdout.splitlines()
                     if line.startswith(("features", "mean"))]


def test_float16_model_to_a_directory(tmp_path):
    model = os.path.join(MODELS, "pooling_chain_f16.xml")
    x = standard_normal((37, 3, 32, 32), np.float16, seed=1)
    result = ovpool_run(model, "-i", save(tmp_path, "x.npy", x), "--batch-size", 8,
                        "-o", tmp_path / "outputs")
    assert result.returncode == 0, result.stderr
    expected = in_memory(model, x)
    assert sorted(os.listdir(tmp_path / "outputs")) == ["features.npy", "mean.npy"]
    for name, value in expected.items():
        written = np.load(tmp_path / "outputs" / f"{name}.npy")
        assert written.dtype == np.float16
        np.testing.assert_array_equal(written, value)


def test_one_output_model_to_npy(tmp_path):
    model = dynamic_batch_copy("avg_pool_16", tmp_path)
    x = standard_normal((29, 3, 9, 10), seed=2)
    result = ovpool_run(model, "-i", save(tmp_path, "x.npy", x), "--batch-size", 4,
                        "-o", tmp_path / "pooled.npy")
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "pooled.npy"), in_memory(model, x)["pooled"])


def test_max_pool_indices_over_the_batch_are_those_of_the_whole_input(tmp_path):
    # MaxPool-8 with axis 0 counts indices over the whole tensor: each chunk's must be shifted.
    model = dynamic_batch_copy("max_pool_8", tmp_path)
    x = standard_normal((11, 2, 4, 6, 6), seed=3)
    result = ovpool_run(model, "-i", save(tmp_path, "x.npy", x), "--batch-size", 3,
                        "-o", tmp_path / "out.npz")
    assert result.returncode == 0, result.stderr
    written, expected = np.load(tmp_path / "out.npz"), in_memory(model, x)
    assert written["indices"].max() > 3 * 2 * 4 * 6 * 6       # beyond the first chunk
    for name in ("pooled", "indices"):
        np.testing.assert_array_equal(written[name], expected[name])


def test_fixed_batch_model_pads_the_last_chunk(tmp_path):
    # max_pool_8's batch is fixed at 2; 7 items run as 2+2+2+1 (padded). The numpy API on the
    # whole input, with the layer's attributes, is the oracle (indices over the whole tensor).
    x = standard_normal((7, 2, 4, 6, 6), seed=4)
    result = ovpool_run(os.path.join(MODELS, "max_pool_8.xml"), "-i", save(tmp_path, "x.npy", x),
                        "--batch-size", 2, "-o", tmp_path / "out.npz")
    assert result.returncode == 0, result.stderr
    values, indices = ovpool.max_pool(x, kernel=(2, 2, 2), strides=(1, 2, 2),
                                      dilations=(1, 2, 1), pads_begin=(0, 1, 0),
                                      pads_end=(0, 1, 1), axis=0)
    written = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(written["pooled"], values)
    np.testing.assert_array_equal(written["indices"], indices)
    wrong = ovpool_run(os.path.join(MODELS, "max_pool_8.xml"), "-i", tmp_path / "x.npy",
                       "--batch-size", 3)
    assert wrong.returncode == 2 and "fixed at 2" in wrong.stderr


def test_input_several_times_the_memory_limit(tmp_path):
    model = os.path.join(MODELS, "pooling_chain.xml")
    x = standard_normal((400, 3, 32, 32), seed=5)      # 4.9 MB
    path = save(tmp_path, "x.npy", x)
    refused = ovpool_run(model, "-i", path, "--memory-limit", "1M", "-o", tmp_path / "m.npz")
    assert refused.returncode == 2 and "memory limit" in refused.stderr
    assert not (tmp_path / "m.npz").exists()
    result = ovpool_run(model, "-i", path, "--memory-limit", "1M", "--batch-size", 16,
                        "-o", tmp_path / "out.npz")
    assert result.returncode == 0, result.stderr
    written, expected = np.load(tmp_path / "out.npz"), in_memory(model, x)
    for name, value in expected.items():
        np.testing.assert_array_equal(written[name], value)
    too_big = ovpool_run(model, "-i", path, "--memory-limit", "1M", "--batch-size", 200,
                         "-o", tmp_path / "big.npz")
    assert too_big.returncode == 2 and "a chunk of input" in too_big.stderr
    assert sorted(os.listdir(tmp_path)) == ["out.npz", "x.npy"]


def _wait_for(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return False


@pytest.mark.parametrize("sent, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_leaves_nothing(tmp_path, sent, code):
    model = os.path.join(MODELS, "pooling_chain.xml")
    path = save(tmp_path, "x.npy", standard_normal((6000, 3, 32, 32), seed=6))
    before = sorted(os.listdir(tmp_path))
    process = subprocess.Popen(
        [sys.executable, "-m", "ovpool", "run", model, "-i", str(path), "--batch-size", "1",
         "-o", str(tmp_path / "out.npz")], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        # Signal once the temporary outputs exist, i.e. in the middle of the run.
        assert _wait_for(lambda: any(n.startswith(".out.npz.") for n in os.listdir(tmp_path)))
        process.send_signal(sent)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == code, stderr
    assert sorted(os.listdir(tmp_path)) == before


def test_progress_on_stderr(tmp_path):
    path = save(tmp_path, "x.npy", standard_normal((50, 3, 32, 32)))
    result = ovpool_run(os.path.join(MODELS, "pooling_chain.xml"), "-i", path,
                        "--batch-size", 8, "--progress", "always")
    assert result.returncode == 0, result.stderr
    assert "50/50" in result.stderr and "item/s" in result.stderr and "100%" in result.stderr
    quiet = ovpool_run(os.path.join(MODELS, "pooling_chain.xml"), "-i", path, "--batch-size", 8)
    assert quiet.returncode == 0 and quiet.stderr == ""     # auto: stderr is not a terminal


def test_without_batch_size_behaviour_is_unchanged(tmp_path):
    model = os.path.join(MODELS, "pooling_chain.xml")
    path = save(tmp_path, "x.npy", standard_normal((5, 3, 32, 32)))
    result = ovpool_run(model, "-i", path)
    assert result.returncode == 0 and "inference time:" in result.stdout
    assert "streamed" not in result.stdout


@pytest.mark.parametrize("make, args, message", [
    (lambda d: np.savez(d / "x.npz", input=standard_normal((4, 3, 32, 32))),
     ["-i", "{d}/x.npz", "--batch-size", "2"], "streams .npy files"),
    (None, ["--batch-size", "2"], "give one for input"),
    (lambda d: np.save(d / "x.npy", standard_normal((4, 3, 32, 32))),
     ["-i", "{d}/x.npy", "--batch-size", "2", "-o", "{d}/x.npy"], "reads"),
    (lambda d: np.save(d / "x.npy", standard_normal((4, 3, 32, 32))),
     ["-i", "{d}/x.npy", "--batch-size", "2", "-o", "{d}/one.npy"], "has 2 outputs"),
    (lambda d: np.save(d / "x.npy", standard_normal((4, 3, 32, 32))),
     ["-i", "{d}/x.npy", "--batch-size", "2", "-o", "{d}"], "not empty"),
    (lambda d: np.save(d / "x.npy", np.asfortranarray(standard_normal((4, 3, 32, 32)))),
     ["-i", "{d}/x.npy", "--batch-size", "2"], "Fortran order"),
    (lambda d: np.save(d / "x.npy", standard_normal((4, 3, 32, 32))),
     ["-i", "{d}/x.npy", "--batch-size", "2", "--repeat", "2"], "--repeat"),
    (lambda d: np.save(d / "x.npy", standard_normal((4, 3, 32, 32))),
     ["-i", "{d}/x.npy", "--dask", "local:1"], "--batch-size"),
])
def test_bad_streaming_arguments_exit_2(tmp_path, make, args, message):
    if make is not None:
        make(tmp_path)
    before = sorted(os.listdir(tmp_path))
    result = ovpool_run(os.path.join(MODELS, "pooling_chain.xml"),
                        *[a.format(d=tmp_path) for a in args])
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == before


def test_truncated_npy_header_is_refused_before_loading(tmp_path):
    # The header claims 10**12 floats; neither mode may try to allocate or map them.
    path = tmp_path / "x.npy"
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(
            handle, {"descr": "<f4", "fortran_order": False, "shape": (10**9, 3, 32, 32)})
    for extra in ([], ["--batch-size", "4"]):
        result = ovpool_run(os.path.join(MODELS, "pooling_chain.xml"), "-i", path, *extra)
        assert result.returncode == 2
        assert "memory limit" in result.stderr or "truncated" in result.stderr


def test_streaming_through_a_local_dask_cluster(tmp_path):
    model = os.path.join(MODELS, "pooling_chain.xml")
    x = standard_normal((45, 3, 32, 32), seed=7)
    result = ovpool_run(model, "-i", save(tmp_path, "x.npy", x), "--batch-size", 6,
                        "--dask", "local:2", "-o", tmp_path / "out.npz")
    assert result.returncode == 0, result.stderr
    assert "Dask cluster local:2" in result.stdout
    written, expected = np.load(tmp_path / "out.npz"), in_memory(model, x)
    for name, value in expected.items():
        np.testing.assert_array_equal(written[name], value)
