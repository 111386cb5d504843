"""Untrusted .npy / .npz input files: every bad file is a BadArgumentError naming the file
(and the member), checked from the headers before any data is read or inflated."""

import io
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import ovpool
from ovpool._inputfiles import load_input, read_npy_header
from ovpool.errors import BadArgumentError, MemoryLimitError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODEL = os.path.join(ROOT, "samples", "models", "max_pool_14.xml")   # input f32 [2,3,5,7]


def _npy_bytes(array, allow_pickle=False):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def _zip(path, members, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


X = np.arange(2 * 3 * 5 * 7, dtype=np.float32).reshape(2, 3, 5, 7)


def _bad_files(tmp):
    """name -> (path, words the message must contain)."""
    good = _zip(tmp / "good.npz", {"input.npy": _npy_bytes(X)})
    data = good.read_bytes()
    files = {}

    def write(name, content):
        path = tmp / name
        path.write_bytes(content)
        return path

    files["truncated archive"] = (write("half.npz", data[:len(data) // 2]), ["half.npz"])
    at = data.index(_npy_bytes(X)) + len(_npy_bytes(X)) - 5     # a byte of member data
    files["bad CRC"] = (write("crc.npz", data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]),
                        ["crc.npz", "input.npy", "CRC"])
    files["garbage after zip magic"] = (write("garbage.npz", b"PK\x03\x04" + b"\xff" * 60),
                                        ["garbage.npz"])
    files["member not an array"] = (_zip(tmp / "text.npz", {"notes.txt": b"hello"}),
                                    ["text.npz", "notes.txt", "not an array"])
    files["member not npy data"] = (_zip(tmp / "fake.npz", {"input.npy": b"not an array"}),
                                    ["fake.npz", "input.npy"])
    files["object member"] = (_zip(tmp / "obj.npz", {"input.npy": _npy_bytes(
        np.array([{"a": 1}], dtype=object), allow_pickle=True)}),
        ["obj.npz", "input.npy", "Python objects"])
    versioned = bytearray(_npy_bytes(X))
    versioned[6] = 9
    files["member version"] = (_zip(tmp / "v9.npz", {"input.npy": bytes(versioned)}),
                               ["v9.npz", "input.npy", "version 9.0"])
    files["npy version"] = (write("v9.npy", bytes(versioned)), ["v9.npy", "version 9.0"])
    files["npy truncated"] = (write("short.npy", _npy_bytes(X)[:-10]), ["short.npy", "truncated"])
    files["npy object"] = (write("obj.npy", _npy_bytes(np.array([None, 1], dtype=object), True)),
                           ["obj.npy", "Python objects"])
    files["npy bad header"] = (write("header.npy", _npy_bytes(X)[:10] + b"{'descr': <f4'" +
                                     b" " * 60 + b"\n"), ["header.npy"])
    files["member trailing data"] = (_zip(tmp / "tail.npz", {"input.npy": _npy_bytes(X) + b"x" * 9}),
                                     ["tail.npz", "input.npy", "9 bytes after"])
    deflated = _zip(tmp / "deflate.npz", {"input.npy": _npy_bytes(X)}, zipfile.ZIP_DEFLATED)
    raw = deflated.read_bytes()
    middle = raw.index(b"input.npy") + 40
    files["corrupt deflate stream"] = (write("inflate.npz", raw[:middle] + b"\xff" * 16 +
                                             raw[middle + 16:]), ["inflate.npz"])
    files["neither npy nor npz"] = (write("text.npy", b"just text\n"), ["text.npy", "neither"])
    files["empty file"] = (write("empty.npy", b""), ["empty.npy"])
    return files


def test_every_bad_file_is_a_bad_argument_naming_it(tmp_path):
    for name, (path, words) in _bad_files(tmp_path).items():
        with pytest.raises(BadArgumentError) as info:
            load_input(str(path))
        message = str(info.value)
        assert "\n" not in message, name
        for word in words:
            assert word in message, f"{name}: {word!r} not in {message!r}"


def test_good_files_round_trip(tmp_path):
    np.save(tmp_path / "a.npy", X)
    np.save(tmp_path / "f.npy", np.asfortranarray(X))
    np.savez_compressed(tmp_path / "b.npz", input=X, other=np.int8([1, -2]))
    np.testing.assert_array_equal(load_input(str(tmp_path / "a.npy")), X)
    fortran = load_input(str(tmp_path / "f.npy"))
    np.testing.assert_array_equal(fortran, X)
    assert fortran.flags.f_contiguous
    loaded = load_input(str(tmp_path / "b.npz"))
    assert sorted(loaded) == ["input", "other"]
    np.testing.assert_array_equal(loaded["input"], X)
    np.testing.assert_array_equal(loaded["other"], [1, -2])


def test_headers_are_checked_against_the_memory_limit_before_reading(tmp_path):
    header = np.lib.format.header_data_from_array_1_0(np.zeros((1 << 20, 64), np.float32))
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    # declares 256 MiB, holds no data: the limit is met before the truncation is noticed
    (tmp_path / "big.npy").write_bytes(buffer.getvalue())
    _zip(tmp_path / "big.npz", {"input.npy": buffer.getvalue()})
    previous = ovpool.get_memory_limit()
    ovpool.set_memory_limit(16 << 20)
    try:
        for name in ("big.npy", "big.npz"):
            with pytest.raises(MemoryLimitError, match=name):
                load_input(str(tmp_path / name))
        # the streaming reader maps files larger than memory: no limit there, so the
        # header is read and the missing data noticed
        with pytest.raises(BadArgumentError, match="truncated"):
            read_npy_header(str(tmp_path / "big.npy"))
    finally:
        ovpool.set_memory_limit(previous)


def test_cli_prints_one_line_and_exits_2_for_every_bad_file(tmp_path):
    files = _bad_files(tmp_path)
    for name, (path, words) in files.items():
        result = subprocess.run([sys.executable, "-m", "ovpool", "run", MODEL, "--input",
                                 str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60,
                                env={**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"})
        assert result.returncode == 2, (name, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ovpool: error:"), (name, result.stderr)
        assert "internal error" not in result.stderr and str(path.name) in lines[0], name


_PEAK = """
import sys
from ovpool.cli import main
code = main(sys.argv[1:])
# VmHWM: this process's own peak (ru_maxrss would include the parent's at fork time)
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(code, peak.split()[1])
"""


def test_npz_bomb_is_refused_before_inflating(tmp_path):
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("input.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, np.lib.format.header_data_from_array_1_0(
                np.zeros((256, 1 << 20), np.uint8)))
            block = bytes(1 << 20)
            for _ in range(256):
                member.write(block)
    assert bomb.stat().st_size < 1 << 20
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", _PEAK, "run", MODEL, "--input", str(bomb),
                             "--memory-limit", "16M"], capture_output=True, text=True,
                            cwd=ROOT, timeout=120, env=env)
    code, peak_kib = map(int, result.stdout.split())
    assert code == 2 and "bomb.npz" in result.stderr and "memory limit" in result.stderr, \
        result.stderr
    print(f"peak RSS of the refused run: {peak_kib / 1024:.1f} MiB")
    assert peak_kib < 200 * 1024      # far below the 256 MiB the member inflates to
