"""The CLI's other arguments and its outputs: --seed, --shape and --output refusals, random
inputs and summaries without full-size float64 temporaries, outputs that are not regular
files, SIGTERM during the write, and a closed or broken stdout."""

import os
import socket
import subprocess
import sys
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest

from ovpool import cli

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODEL = os.path.join(ROOT, "samples", "models", "max_pool_14.xml")
DYNAMIC = os.path.join(ROOT, "samples", "models", "pooling_chain.xml")
ENV = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}


def ovpool(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "ovpool", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, env=ENV, **kwargs)


def _refused(result, *words):
    assert result.returncode == 2, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def test_argument_refusals():
    _refused(ovpool("run", MODEL, "--seed", "-1"), "--seed", "non-negative")
    _refused(ovpool("run", DYNAMIC, "--shape", "99999999999999999999,3,32,32"), "2**63-1")
    _refused(ovpool("run", MODEL, "--output", ""), "output path is empty")
    _refused(ovpool("run", MODEL, "-i", os.path.join(ROOT, "samples", "inputs",
                                                     "max_pool_14.npy"), "--output", "",
                    "--batch-size", "1"), "--output is empty")
    _refused(ovpool("run", DYNAMIC, "--shape", "100000,3,32,32", "--memory-limit", "16M"),
             "random input 'input'", "memory limit")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.bool_, np.float64])
def test_random_inputs_are_generated_in_their_dtype(dtype):
    info = SimpleNamespace(dtype=np.dtype(dtype), name="x")
    shape = (2, 3, 1000, 700)   # 4.2 million elements, several generation blocks
    tracemalloc.start()
    try:
        array = cli._random_input(np.random.default_rng(0), info, shape)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert array.dtype == dtype and array.shape == shape
    # the array itself plus one block: never a float64 copy of the whole input
    assert peak < array.nbytes + (8 << 20), (peak, array.nbytes)
    values = array.astype(np.float64)
    if dtype == np.bool_:
        assert 0.49 < values.mean() < 0.51
    elif np.dtype(dtype).kind == "i":
        assert values.min() == -100 and values.max() == 100
    else:
        assert abs(values.mean()) < 0.01 and 0.99 < values.std() < 1.01
    again = cli._random_input(np.random.default_rng(0), info, shape)
    np.testing.assert_array_equal(array, again)


def test_summary_statistics_without_float64_copies():
    x = np.random.default_rng(1).standard_normal((4, 1 << 20)).astype(np.float32)
    tracemalloc.start()
    try:
        low, high, mean = cli._statistics(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < x.nbytes // 2, peak          # a float64 copy would be 2 * x.nbytes
    wide = x.astype(np.float64)
    assert (low, high, mean) == (f"{wide.min():.6g}", f"{wide.max():.6g}",
                                 f"{wide.mean():.6g}")
    assert cli._statistics(np.zeros((0, 3), np.float32)) == ("-", "-", "-")
    assert cli._statistics(np.array([[1, 5], [-3, 2]], np.int8)) == ("-3", "5", "1.25")


def test_outputs_that_are_not_regular_files_are_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    try:
        for target in (fifo, link, tmp_path / "sock", os.devnull):
            _refused(ovpool("run", MODEL, "--output", str(target)), "not a regular file")
    finally:
        server.close()
    assert fifo.exists() and os.path.islink(link)


_SIGTERM_DURING_SAVE = """
import os, signal, sys
from ovpool._atomic import save_npz_atomically

class Terminating:
    def __array__(self, dtype=None, copy=None):
        os.kill(os.getpid(), signal.SIGTERM)    # arrives while the temporary is written
        import numpy as np
        return np.zeros(3)

save_npz_atomically(sys.argv[1], {"a": Terminating()})
"""


def test_sigterm_during_the_write_removes_the_temporary_file(tmp_path):
    target = tmp_path / "out.npz"
    result = subprocess.run([sys.executable, "-c", _SIGTERM_DURING_SAVE, str(target)],
                            capture_output=True, text=True, timeout=60, env=ENV)
    assert result.returncode == 143, result.stderr
    assert os.listdir(tmp_path) == []


def test_output_is_written_when_stdout_is_broken_or_closed(tmp_path):
    read, write = os.pipe()
    os.close(read)                      # nobody will ever read the summary
    try:
        broken = subprocess.run([sys.executable, "-m", "ovpool", "run", MODEL, "-o",
                                 str(tmp_path / "a.npz")], stdout=write, stderr=subprocess.PIPE,
                                text=True, cwd=ROOT, timeout=120, env=ENV)
    finally:
        os.close(write)
    assert broken.returncode == 141 and broken.stderr == "", broken.stderr
    closed = subprocess.run(f"exec {sys.executable} -m ovpool run {MODEL} -o "
                            f"{tmp_path / 'b.npz'} >&-", shell=True, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, timeout=120, env=ENV)
    assert closed.returncode == 0 and closed.stderr == "", closed.stderr
    reference = ovpool("run", MODEL, "-o", str(tmp_path / "c.npz"))
    assert reference.returncode == 0
    expected = np.load(tmp_path / "c.npz")
    for name in ("a.npz", "b.npz"):
        written = np.load(tmp_path / name)
        assert sorted(written.files) == sorted(expected.files)
        for key in expected.files:
            np.testing.assert_array_equal(written[key], expected[key])
    assert sorted(os.listdir(tmp_path)) == ["a.npz", "b.npz", "c.npz"]
