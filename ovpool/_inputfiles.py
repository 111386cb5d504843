"""Reading untrusted ``.npy`` files and ``.npz`` archives.

One header checker serves the CLI's in-memory inputs and the streaming runner: it reads the
magic, the format version and the header only, refuses object (pickled) arrays and impossible
shapes, and, for arrays about to be read into memory, checks the declared shape and dtype
against the memory limit before any data is read. An ``.npz`` member is checked from its
own header and the archive's declared sizes before it is inflated (a small compressed member
can expand to gigabytes), and is then inflated in blocks straight into its array, so nothing
larger than the declared array is ever allocated. Every way a file can be bad (corrupt or
truncated archives, bad CRCs, members that are not arrays, unsupported versions) is a
:class:`ovpool.errors.BadArgumentError` naming the file and the member.
"""

import math
import os
import zipfile

import numpy as np

from ._limits import MAX_RANK, check_allocation
from .errors import BadArgumentError, OvpoolError

__all__ = ["NpyHeader", "read_npy_header", "load_input"]

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0,
                   (3, 0): np.lib.format.read_array_header_2_0}
_BLOCK = 16 << 20


class NpyHeader:
    """What a ``.npy`` header declares: shape, dtype, Fortran order, where the data starts
    and how many bytes it has."""

    __slots__ = ("shape", "dtype", "fortran_order", "data_offset", "nbytes")

    def __init__(self, shape, dtype, fortran_order, data_offset):
        self.shape, self.dtype, self.fortran_order = shape, dtype, fortran_order
        self.data_offset = data_offset
        self.nbytes = math.prod(shape) * dtype.itemsize


def _parse_header(handle, what, check_memory):
    """The :class:`NpyHeader` at ``handle``'s position (the start of a .npy stream)."""
    try:
        version = np.lib.format.read_magic(handle)
        reader = _HEADER_READERS.get(version)
        if reader is None:
            raise ValueError(f"unsupported .npy format version {version[0]}.{version[1]} "
                             "(ovpool reads 1.0, 2.0 and 3.0)")
        shape, fortran_order, dtype = reader(handle)
        start = handle.tell()
    except OvpoolError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure to parse is the file's fault
        raise BadArgumentError(f"cannot read {what}: {_reason(error)}") from None
    if not isinstance(dtype, np.dtype) or dtype.hasobject:
        raise BadArgumentError(f"{what} holds Python objects ({dtype}); ovpool reads numeric "
                               "arrays only")
    if len(shape) > MAX_RANK or any(type(d) is not int or d < 0 for d in shape):
        raise BadArgumentError(f"{what} declares the impossible shape {shape}")
    shape = tuple(shape)
    if check_memory:
        check_allocation(shape, dtype, what)
    return NpyHeader(shape, dtype, bool(fortran_order), start)


def _reason(error):
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def read_npy_header(path, check_memory=False):
    """``(shape, dtype, fortran_order, data_offset, file_size)`` of a ``.npy`` file, read from
    its header only. Refuses object arrays, impossible shapes and files shorter than their
    header declares; with ``check_memory``, arrays over the memory limit too."""
    what = f"input file {path}"
    try:
        with open(path, "rb") as handle:
            header = _parse_header(handle, what, check_memory)
            file_size = os.fstat(handle.fileno()).st_size
    except OSError as error:
        raise BadArgumentError(f"cannot read {what}: {error.strerror or error}") from None
    _check_data_size(header, file_size - header.data_offset, what)
    return header.shape, header.dtype, header.fortran_order, header.data_offset, file_size


def _check_data_size(header, available, what):
    if header.nbytes > available:
        raise BadArgumentError(f"{what} is truncated: its header declares {list(header.shape)} "
                               f"{header.dtype} ({header.nbytes} bytes of data) but it has "
                               f"{max(available, 0)}")


def _read_data(handle, header, what):
    """The array ``header`` declares, read in blocks from ``handle`` (positioned at the
    data) straight into its own memory."""
    shape = header.shape[::-1] if header.fortran_order else header.shape
    array = np.empty(shape, header.dtype)
    if header.nbytes:
        target = array.reshape(-1).view(np.uint8)
        done = 0
        while done < header.nbytes:
            block = handle.read(min(_BLOCK, header.nbytes - done))
            if not block:
                raise BadArgumentError(f"{what} is truncated after {done} of "
                                       f"{header.nbytes} bytes of data")
            target[done:done + len(block)] = np.frombuffer(block, np.uint8)
            done += len(block)
    return array.T if header.fortran_order else array


def _kind(path):
    try:
        with open(path, "rb") as handle:
            start = handle.read(6)
    except OSError as error:
        raise BadArgumentError(f"cannot read input file {path}: "
                               f"{error.strerror or error}") from None
    if start.startswith(_ZIP_MAGICS):
        return "npz"
    if start == _NPY_MAGIC:
        return "npy"
    raise BadArgumentError(f"cannot read input file {path}: it is neither a .npy file nor a "
                           ".npz archive")


def load_input(path):
    """The array of a ``.npy`` file, or a dict name -> array of a ``.npz`` archive, each
    checked against the memory limit from its header before its data is read."""
    path = os.fspath(path)
    if _kind(path) == "npy":
        what = f"input file {path}"
        try:
            with open(path, "rb") as handle:
                header = _parse_header(handle, what, True)
                _check_data_size(header, os.fstat(handle.fileno()).st_size - header.data_offset,
                                 what)
                return _read_data(handle, header, what)
        except OSError as error:
            raise BadArgumentError(f"cannot read {what}: {error.strerror or error}") from None
    return _load_archive(path)


def _load_archive(path):
    try:
        archive = zipfile.ZipFile(path)
    except Exception as error:  # noqa: BLE001 - BadZipFile, OSError, EOFError, ValueError ...
        raise BadArgumentError(f"input file {path} is not a readable .npz archive: "
                               f"{_reason(error)}") from None
    arrays = {}
    with archive:
        for info in archive.infolist():
            what = f"input file {path} member {info.filename!r}"
            if info.is_dir():
                continue
            if not info.filename.endswith(".npy"):
                raise BadArgumentError(f"{what} is not an array (.npy member)")
            key = info.filename[:-4]
            if key in arrays:
                raise BadArgumentError(f"{what} appears twice in the archive")
            arrays[key] = _load_member(archive, info, what)
    return arrays


def _load_member(archive, info, what):
    try:
        with archive.open(info) as member:
            header = _parse_header(member, what, True)
            # From the declared sizes, before inflating the data: the member must hold
            # exactly the array its header declares.
            _check_data_size(header, info.file_size - header.data_offset, what)
            if info.file_size > header.data_offset + header.nbytes:
                raise BadArgumentError(
                    f"{what} has {info.file_size - header.data_offset - header.nbytes} bytes "
                    f"after the {header.nbytes} bytes of data its header declares")
            array = _read_data(member, header, what)
            if member.read(1):   # reaching the end checks the CRC
                raise BadArgumentError(f"{what} holds more data than its header declares")
    except OvpoolError:
        raise
    except Exception as error:  # noqa: BLE001 - bad CRC, zlib errors, encryption, EOF ...
        raise BadArgumentError(f"cannot read {what}: {_reason(error)}") from None
    return array
