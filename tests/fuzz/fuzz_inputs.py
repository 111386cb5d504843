#!/usr/bin/env python3
"""Mutation fuzzer for the input files of ``ovpool run`` (.npy files and .npz archives).

Each case takes one of a few valid input files (.npy in format versions 1.0 to 3.0, C and
Fortran order; .npz stored and deflated, one or two members) made for
``samples/models/max_pool_14.xml``, applies one to three mutations (header bytes, header
dict fields: shape, descr, fortran_order, version; body truncation, extension and byte flips;
zip structures: local and central headers, sizes, CRCs, compression methods, flags, member
names, truncation, appended members) and runs ``ovpool run MODEL --input FILE`` in a worker
subprocess (``ovpool.cli.main``, in process). Outcomes:

* ``ok``: exit 0;
* ``clean``: exit 2 with one ``ovpool: error:`` line on stderr;
* anything else: ``crash``, ``hang`` or ``exception`` (any other exit status, e.g. an
  internal error, more than one line, a traceback, or an exception escaping ``main``).

The driver, its options and its output are those of ``fuzz_ir.py``; the last line is e.g.::

    cases=20000 ok=1234 clean=18766 anything_else=0 crash=0 hang=0 exception=0

Usage: python tests/fuzz/fuzz_inputs.py --cases 20000 --seed 1 --keep /tmp/fuzz-inputs
"""

import contextlib
import io
import os
import random
import re
import struct
import sys
import zipfile

import numpy as np

import fuzz_ir  # this script's folder is first on sys.path, as for any script

HERE = os.path.dirname(os.path.abspath(__file__))

MODEL = os.path.join(os.path.dirname(os.path.dirname(HERE)), "samples", "models",
                     "max_pool_14.xml")
SHAPE = (2, 3, 5, 7)


def _npy(array, version=None):
    buffer = io.BytesIO()
    if version is None:
        np.save(buffer, array)
    else:
        np.lib.format.write_array(buffer, array, version=version)
    return buffer.getvalue()


def _npz(members, compression):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def load_samples():
    """(name, kind, bytes) of the valid files the cases start from."""
    x = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE) / 7
    samples = [("v1.npy", "npy", _npy(x)),
               ("v2.npy", "npy", _npy(x, (2, 0))),
               ("v3.npy", "npy", _npy(x, (3, 0))),
               ("fortran.npy", "npy", _npy(np.asfortranarray(x))),
               ("f16.npy", "npy", _npy(x.astype(np.float16))),
               ("i32.npy", "npy", _npy(x.astype(np.int32)))]
    for compression, label in ((zipfile.ZIP_STORED, "stored"), (zipfile.ZIP_DEFLATED, "deflated")):
        samples.append((f"{label}.npz", "npz", _npz({"input.npy": _npy(x)}, compression)))
        samples.append((f"{label}2.npz", "npz", _npz({"input.npy": _npy(x),
                                                      "extra.npy": _npy(x[:1])}, compression)))
    return samples


# ---- mutations (each returns (bytes, description)) ------------------------------------------

_DESCRS = ["'<f4'", "'|O'", "'<f8'", "'>f4'", "'<i8'", "'|u1'", "'|V0'", "'<U3'", "'|S0'",
           "'<c8'", "'<M8[s]'", "[('a', '<f4')]", "[('a', '|O')]", "'<f4', 'x': 1", "'zz'",
           "'<f2'", "'|b1'", "'<V16'", "'(2,)<f4'", "[]", "1"]
_SHAPES = ["(2, 3, 5, 7)", "()", "(0,)", "(-1, 3, 5, 7)", "(2, 3, 5, 7, 1)",
           "(9223372036854775807, 2)", "(4294967296, 4294967296)", "(2, 3, 5, 7.0)",
           "(1 << 40,)", "('2', 3)", "(" + "1, " * 70 + ")", "(2, 3, 5, 700000000)", "[2, 3, 5, 7]",
           "(True, 3, 5, 7)", "(2, 3, 5, 7), 'extra': 0", "(2,3,5,7" * 3]


def _header_span(data):
    if not data.startswith(b"\x93NUMPY") or len(data) < 10:
        return None
    if data[6] == 1:
        return 10, 10 + struct.unpack("<H", data[8:10])[0]
    return (12, 12 + struct.unpack("<I", data[8:12])[0]) if len(data) >= 12 else None


def _replace_header(data, text):
    span = _header_span(data)
    if span is None:
        return data
    start, end = span
    header = text.encode("latin-1", "replace")
    if data[6] == 1 and len(header) < 65536:
        return data[:8] + struct.pack("<H", len(header)) + header + data[end:]
    return data[:8] + struct.pack("<I", len(header)) + header + data[end:]


def m_header_field(rng, data, kind):
    span = _header_span(data)
    if span is None:
        return m_flip(rng, data, kind)
    text = data[span[0]:span[1]].decode("latin-1")
    field = rng.choice(["descr", "shape", "fortran_order"])
    value = {"descr": lambda: rng.choice(_DESCRS), "shape": lambda: rng.choice(_SHAPES),
             "fortran_order": lambda: rng.choice(["True", "False", "1", "'yes'", "None"])}[field]()
    text = re.sub(rf"'{field}': (\([^)]*\)|'[^']*'|\w+)", lambda m: f"'{field}': {value}", text)
    return _replace_header(data, text), f"header {field} -> {value[:40]}"


def m_header_text(rng, data, kind):
    span = _header_span(data)
    if span is None:
        return m_flip(rng, data, kind)
    text = rng.choice(["{}", "", "{'descr': '<f4'}", "{" * 500, "[1, 2]",
                       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 5, 7), "
                       "'x': __import__('os')}", "\x00" * 40, "{'shape': (2,3,5,7)} " * 400])
    return _replace_header(data, text), f"header text -> {text[:30]!r}"


def m_version(rng, data, kind):
    if len(data) < 8:
        return data, "version (too short)"
    major, minor = rng.choice([(0, 0), (4, 0), (9, 9), (1, 1), (2, 5), (255, 255), (3, 0)])
    return data[:6] + bytes([major, minor]) + data[8:], f"version {major}.{minor}"


def m_truncate(rng, data, kind):
    cut = rng.randrange(len(data) + 1)
    return data[:cut], f"truncate at {cut} of {len(data)}"


def m_extend(rng, data, kind):
    extra = bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 100, 4096])))
    return data + extra, f"append {len(extra)} bytes"


def m_flip(rng, data, kind):
    if not data:
        return b"\x00", "flip (empty)"
    data = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 8])):
        at = rng.randrange(min(len(data), 256)) if rng.random() < 0.6 else rng.randrange(len(data))
        data[at] = rng.randrange(256)
    return bytes(data), "byte flips"


def _zip_records(data):
    """Offsets of local headers (PK\\3\\4), central headers (PK\\1\\2) and the end record."""
    return ([m.start() for m in re.finditer(b"PK\x03\x04", data)],
            [m.start() for m in re.finditer(b"PK\x01\x02", data)],
            [m.start() for m in re.finditer(b"PK\x05\x06", data)])


def m_zip_field(rng, data, kind):
    local, central, end = _zip_records(data)
    choices = [(at, field) for at in local for field in
               (("flags", 6, "<H"), ("method", 8, "<H"), ("crc", 14, "<I"),
                ("compressed size", 18, "<I"), ("size", 22, "<I"), ("name length", 26, "<H"),
                ("extra length", 28, "<H"))]
    choices += [(at, field) for at in central for field in
                (("central flags", 8, "<H"), ("central method", 10, "<H"),
                 ("central crc", 16, "<I"), ("central compressed size", 20, "<I"),
                 ("central size", 24, "<I"), ("central name length", 28, "<H"),
                 ("local header offset", 42, "<I"))]
    choices += [(at, field) for at in end for field in
                (("entries", 10, "<H"), ("central size", 12, "<I"), ("central offset", 16, "<I"))]
    if not choices:
        return m_flip(rng, data, kind)
    at, (name, offset, form) = rng.choice(choices)
    width = struct.calcsize(form)
    if at + offset + width > len(data):
        return m_flip(rng, data, kind)
    old = struct.unpack_from(form, data, at + offset)[0]
    top = (1 << (8 * width)) - 1
    new = rng.choice([0, 1, old + 1, old - 1 if old else top, top, old * 2 & top,
                      rng.randrange(top + 1), 99, 12, 14, 0x41])
    new &= top
    data = bytearray(data)
    struct.pack_into(form, data, at + offset, new)
    return bytes(data), f"zip {name} {old} -> {new}"


def m_member(rng, data, kind):
    """Re-pack the archive with a changed member: renamed, non-array, duplicated, pickled,
    or a small deflated member that inflates to 64 MiB."""
    what = rng.choice(["rename", "text", "duplicate", "object", "bomb", "empty", "dir"])
    x = np.zeros(SHAPE, np.float32)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        if what == "rename":
            archive.writestr(rng.choice(["input", "input.NPY", "../input.npy", "/input.npy",
                                         "in\x00put.npy", ".npy", "a/b.npy"]), _npy(x))
        elif what == "text":
            archive.writestr("input.npy", b"hello")
            archive.writestr("notes.txt", b"text")
        elif what == "duplicate":
            archive.writestr("input.npy", _npy(x))
            archive.writestr("input.npy", _npy(x + 1))
        elif what == "object":
            object_buffer = io.BytesIO()
            np.save(object_buffer, np.array([1, None], dtype=object), allow_pickle=True)
            archive.writestr("input.npy", object_buffer.getvalue())
        elif what == "bomb":
            with archive.open("input.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array_header_1_0(
                    member, np.lib.format.header_data_from_array_1_0(
                        np.zeros((64, 1 << 20), np.uint8)))
                for _ in range(64):
                    member.write(bytes(1 << 20))
        elif what == "empty":
            pass
        else:
            archive.writestr("input.npy/", b"")
    return buffer.getvalue(), f"member {what}"


NPY_MUTATIONS = [m_header_field, m_header_field, m_header_text, m_version, m_truncate,
                 m_extend, m_flip]
NPZ_MUTATIONS = [m_zip_field, m_zip_field, m_zip_field, m_member, m_truncate, m_extend, m_flip]


def make_case(samples, seed, index):
    """(file name, bytes, description): deterministic in (seed, index)."""
    rng = random.Random(f"ovpool-fuzz-inputs:{seed}:{index}")
    name, kind, data = rng.choice(samples)
    steps = [name]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        mutation = rng.choice(NPY_MUTATIONS if kind == "npy" else NPZ_MUTATIONS)
        if kind == "npz" and rng.random() < 0.3:
            mutation = rng.choice([m_header_field, m_version])   # the member's .npy header
            data, step = _mutate_first_member(rng, data, mutation)
        else:
            data, step = mutation(rng, data, kind)
        steps.append(step)
    return name, data, steps


def _mutate_first_member(rng, data, mutation):
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = {info.filename: archive.read(info) for info in archive.infolist()}
            method = archive.infolist()[0].compress_type
    except Exception:  # noqa: BLE001 - an earlier mutation broke the archive
        return m_flip(rng, data, "npz")
    first = next(iter(members))
    members[first], step = mutation(rng, members[first], "npy")
    return _npz(members, method), f"member {first}: {step}"


def _write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


def dump_case(samples, seed, index, directory):
    name, data, steps = make_case(samples, seed, index)
    return _write(directory, name, data), steps


def run_file(path):
    """``ovpool run MODEL --input path`` in this process: "ok" or "clean", else raises."""
    from ovpool.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", MODEL, "--input", path, "--threads", "1"])
    lines = err.getvalue().splitlines()
    if code == 0 and not lines:
        return "ok"
    if code == 2 and len(lines) == 1 and lines[0].startswith("ovpool: error:"):
        return "clean"
    raise AssertionError(f"exit status {code}, stderr {err.getvalue()[-2000:]!r}")


def run_case(samples, workdir, seed, index, native=False):
    name, data, _ = make_case(samples, seed, index)
    return run_file(_write(workdir, name, data))


if __name__ == "__main__":
    sys.exit(fuzz_ir.main(fuzzer=sys.modules[__name__]))
