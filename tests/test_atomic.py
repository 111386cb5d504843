"""ovpool._atomic.save_npz_atomically: complete files or nothing, never over an input."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ovpool._atomic import save_npz_atomically, signals_held
from ovpool.errors import BadArgumentError

ARRAYS = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], np.int64)}


def _entries(directory):
    return sorted(os.listdir(directory))


def _check(path, arrays=ARRAYS):
    with np.load(path) as data:
        assert sorted(data.files) == sorted(arrays)
        for name, array in arrays.items():
            np.testing.assert_array_equal(data[name], array)


def test_writes_a_complete_npz_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "out.npz"
    assert save_npz_atomically(path, ARRAYS) == str(path)
    _check(path)
    assert _entries(tmp_path) == ["out.npz"]
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask


def test_path_is_used_as_given(tmp_path):
    save_npz_atomically(tmp_path / "result", ARRAYS)
    assert _entries(tmp_path) == ["result"]
    _check(tmp_path / "result")


def test_replaces_an_existing_output(tmp_path):
    path = tmp_path / "out.npz"
    path.write_bytes(b"old")
    save_npz_atomically(path, ARRAYS)
    _check(path)


class _Boom(Exception):
    pass


@pytest.mark.parametrize("error", [_Boom, KeyboardInterrupt, OSError])
def test_an_error_midway_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, error):
    path = tmp_path / "out.npz"
    path.write_bytes(b"old contents")
    real_write = np.lib.format.write_array
    calls = []

    def failing_write(fp, array, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:          # after the first array has been written
            raise error(28, "No space left on device") if error is OSError else error()
        return real_write(fp, array, *args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", failing_write)
    expected = BadArgumentError if error is OSError else error
    with pytest.raises(expected) as info:
        save_npz_atomically(path, ARRAYS)
    if error is OSError:
        assert "No space left" in str(info.value) and str(path) in str(info.value)
    assert path.read_bytes() == b"old contents"
    assert _entries(tmp_path) == ["out.npz"]


def test_an_error_midway_with_no_previous_file_leaves_nothing(tmp_path, monkeypatch):
    def failing_write(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np.lib.format, "write_array", failing_write)
    with pytest.raises(KeyboardInterrupt):
        save_npz_atomically(tmp_path / "out.npz", ARRAYS)
    assert _entries(tmp_path) == []


def test_sigint_during_a_large_write_leaves_no_partial_file(tmp_path):
    """A real Ctrl-C (SIGINT) arriving while a large file is being written."""
    path = tmp_path / "out.npz"
    script = textwrap.dedent(f"""
        import os, signal, threading, numpy as np
        from ovpool._atomic import save_npz_atomically
        real = np.lib.format.write_array
        def slow(fp, array, *args, **kwargs):
            real(fp, array[:1], *args, **kwargs)      # part of the data is on disk ...
            os.kill(os.getpid(), signal.SIGINT)       # ... when Ctrl-C arrives
            real(fp, array, *args, **kwargs)
        np.lib.format.write_array = slow
        try:
            save_npz_atomically({str(path)!r}, {{"x": np.zeros(1 << 20)}})
        except KeyboardInterrupt:
            raise SystemExit(130)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert result.returncode == 130, result.stderr.decode()
    assert _entries(tmp_path) == []


def test_refuses_to_overwrite_an_input_however_it_is_named(tmp_path, monkeypatch):
    model = tmp_path / "model.xml"
    data = tmp_path / "input.npz"
    model.write_text("<net/>")
    data.write_bytes(b"input data")
    (tmp_path / "sub").mkdir()
    os.symlink(data, tmp_path / "link.npz")
    os.link(data, tmp_path / "hard.npz")
    monkeypatch.chdir(tmp_path / "sub")
    for target in (data, "../input.npz", str(tmp_path / "sub" / ".." / "input.npz"),
                   tmp_path / "link.npz", tmp_path / "hard.npz", model):
        with pytest.raises(BadArgumentError, match="input file"):
            save_npz_atomically(target, ARRAYS, protected_paths=[str(model), data])
    assert data.read_bytes() == b"input data" and model.read_text() == "<net/>"
    assert sorted(_entries(tmp_path)) == ["hard.npz", "input.npz", "link.npz", "model.xml",
                                          "sub"]


def test_unwritable_destinations_are_clean_errors(tmp_path):
    with pytest.raises(BadArgumentError, match="directory"):
        save_npz_atomically(tmp_path, ARRAYS)
    with pytest.raises(BadArgumentError, match="cannot write"):
        save_npz_atomically(tmp_path / "missing" / "out.npz", ARRAYS)
    if os.geteuid() != 0:            # root writes anywhere
        readonly = tmp_path / "ro"
        readonly.mkdir()
        readonly.chmod(0o500)
        try:
            with pytest.raises(BadArgumentError, match="cannot write"):
                save_npz_atomically(readonly / "out.npz", ARRAYS)
        finally:
            readonly.chmod(0o700)


def test_signals_held_defers_a_signal_another_thread_receives():
    """SIGINT sent while signals are held, by a thread started before (so it does not inherit
    a blocked mask, and the kernel may deliver the signal to it rather than to the main thread),
    takes effect only when the block ends. Run in a fresh interpreter: a process-directed
    signal in the test process could land in a thread of a native library loaded by another
    test."""
    script = textwrap.dedent("""
        import os, signal, sys, threading, time
        from ovpool._atomic import signals_held
        go = threading.Event()
        thread = threading.Thread(target=lambda: (go.wait(), os.kill(os.getpid(), signal.SIGINT)))
        thread.start()
        try:
            with signals_held():
                go.set()
                thread.join()
                time.sleep(0.05)   # an unheld signal's handler would run here
                print("block finished", flush=True)
        except KeyboardInterrupt:
            raise SystemExit(130)
        raise SystemExit(0)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 130, result.stderr
    assert result.stdout == "block finished\n"


def test_signals_held_restores_the_handlers():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with signals_held():
        assert signal.getsignal(signal.SIGINT) is not before[0]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
