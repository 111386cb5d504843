"""Running a model over inputs larger than memory, one batch chunk at a time.

``ovpool run MODEL --input big.npy --batch-size N --output out.npy`` lands here. The inputs are
``.npy`` files mapped into memory (never read whole); the model runs on consecutive slices of N
items along axis 0; each output chunk is copied straight into a memory-mapped ``.npy`` that is
renamed into place when the run is complete. Pages of the input and the output are handed back
to the kernel (``madvise(MADV_DONTNEED)``) once their chunk is done, so the resident memory of a
run stays a few chunks whatever the file sizes; the page cache still keeps what it can.

Streaming relies on what makes it worthwhile: every batch item is computed independently, so
running the items in chunks gives the same bytes as running them at once. Max-pool indices
that count from the batch axis (MaxPool-8/14 with ``axis=0``, ONNX MaxPool) are the one place
where an item's result depends on its position, and they are shifted by the chunk's start.

The chunks come from a ``chunks`` iterator, so the same writer serves a local run and a Dask
cluster (``ovpool.dask.stream_chunks``).
"""

import math
import mmap
import os
import re
import shutil
import sys
import tempfile
import time
import zipfile

import numpy as np

from . import _rules
from ._atomic import _fsync_directory, _same_file, signals_held, sigterm_as_exit
from ._inputfiles import read_npy_header
from ._limits import check_allocation
from ._vocabulary import INDEX_TYPES, index_dtype
from .errors import BadArgumentError, BadShapeError, OvpoolError, UnsupportedError

__all__ = ["NpyInput", "read_npy_header", "BatchPlan", "plan_batches", "run_chunk",
           "stream", "StreamResult", "Statistics", "PROGRESS_CHOICES"]

PROGRESS_CHOICES = ("auto", "always", "never")
_PAGE = mmap.PAGESIZE
_COPY_BLOCK = 16 << 20
_STATISTICS_BLOCK = 1 << 18


# ---- inputs --------------------------------------------------------------------------------

def _release(region, start, stop):
    """Drop the pages wholly inside ``[start, stop)`` of ``region`` from this process: its
    resident memory shrinks; the data stays in the page cache (and the file)."""
    first = -(-start // _PAGE) * _PAGE
    last = stop // _PAGE * _PAGE
    if last > first and hasattr(region, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        region.madvise(mmap.MADV_DONTNEED, first, last - first)


class NpyInput:
    """A ``.npy`` file mapped read-only; ``chunk(start, stop)`` is a view of items
    ``[start, stop)`` along axis 0, and ``release(stop)`` lets go of the pages before ``stop``."""

    def __init__(self, path):
        self.path = os.fspath(path)
        shape, dtype, fortran_order, offset, size = read_npy_header(self.path)
        if not shape:
            raise BadShapeError(f"input file {self.path} holds a scalar; streaming runs need a "
                                "batch axis (axis 0)")
        if fortran_order and math.prod(shape[1:]) > 1:
            raise BadArgumentError(f"input file {self.path} is stored in Fortran order, so a "
                                   "batch chunk is scattered over the whole file; save it "
                                   "C-ordered (np.save(path, np.ascontiguousarray(x)))")
        self.shape, self.dtype, self._offset = shape, dtype, offset
        self._item_bytes = math.prod(shape[1:]) * dtype.itemsize
        self._released = offset
        with open(self.path, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ)
        if hasattr(mmap, "MADV_SEQUENTIAL"):
            self._map.madvise(mmap.MADV_SEQUENTIAL)

    def __len__(self):
        return self.shape[0]

    def chunk(self, start, stop):
        check_allocation((stop - start, *self.shape[1:]), self.dtype,
                         f"a chunk of input {self.path}")
        return np.ndarray((stop - start, *self.shape[1:]), self.dtype, buffer=self._map,
                          offset=self._offset + start * self._item_bytes)

    def release(self, stop):
        end = self._offset + stop * self._item_bytes
        _release(self._map, self._released, end)
        self._released = max(self._released, end // _PAGE * _PAGE)

    def close(self):
        try:
            self._map.close()
        except BufferError:
            pass    # an output still views the input (an identity model); the GC closes it


# ---- what streaming needs to know about a model --------------------------------------------

class BatchPlan:
    """How a model's batch is streamed: ``static`` is the batch size the model insists on
    (None when dynamic); ``index_outputs`` maps output names to the elements per batch item
    of the tensor their indices count over (those indices are shifted by the chunk start)."""

    def __init__(self, static, index_outputs, index_dtypes):
        self.static = static
        self.index_outputs = index_outputs
        self.index_dtypes = index_dtypes

    def check_index_range(self, total):
        """Refuse, as an in-memory run would, indices that overflow their type."""
        for name, per_item in self.index_outputs.items():
            if total:
                _rules.check_index_range(self.index_dtypes[name] == np.int32,
                                         total * per_item - 1)

    def shift_indices(self, outputs, start):
        for name, per_item in self.index_outputs.items():
            if start and name in outputs:
                shifted = outputs[name].astype(np.int64) + start * per_item
                outputs[name] = shifted.astype(outputs[name].dtype)


def _batch_axis_of_max_pool(layer):
    """True when this layer's second output holds indices counted from the batch axis."""
    if layer.type == "OnnxMaxPool":
        return True     # ONNX indices are flat over the whole input tensor
    if layer.type != "MaxPool" or layer.version == "opset1" or len(layer.outputs) < 2:
        return False
    axis = layer.attributes.int("axis", 0)
    rank = len(layer.inputs[0].dims)
    return axis in (0, -rank)


def plan_batches(model, inputs, output_names, batch_size):
    """The :class:`BatchPlan` of ``model`` for chunks of ``batch_size`` items.

    ``inputs`` are the runner's input infos (``.name``, ``.shape``); ``output_names`` maps
    each Result layer id to the name its output has in the runner's results.
    """
    static = set()
    for info in inputs:
        if not info.shape:
            raise BadShapeError(f"input {info.name!r} is a scalar; streaming splits the batch "
                                "axis (axis 0) of every input")
        first = info.shape[0]
        if first.is_static:
            static.add(first.min)
        elif batch_size is not None and not first.admits(batch_size):
            raise BadShapeError(f"input {info.name!r} has batch dimension {first}; chunks of "
                                f"{batch_size} do not fit it")
    if len(static) > 1:
        raise BadShapeError(f"the model's inputs have different fixed batch sizes {sorted(static)}")
    if static and batch_size is not None and static != {batch_size}:
        raise BadShapeError(f"the model's batch dimension is fixed at {min(static)}; stream it "
                            f"with --batch-size {min(static)}, or use a model with a dynamic "
                            "batch")
    results = {layer.id for layer in model.layers if layer.type == "Result"}
    index_outputs, index_dtypes = {}, {}
    for layer in model.layers:
        if not _batch_axis_of_max_pool(layer):
            continue
        index_port = layer.outputs[1].id
        consumers = [e.to_layer for e in model.edges
                     if e.from_layer == layer.id and e.from_port == index_port]
        for consumer in consumers:
            if consumer not in results:
                raise UnsupportedError(
                    f"{layer.context}: its indices count from the batch axis and feed layer "
                    f"{consumer}, so a batch chunk's results depend on where the chunk starts; "
                    "this model cannot be streamed")
            dims = layer.inputs[0].dims[1:]
            if not all(d.is_static for d in dims):
                raise UnsupportedError(
                    f"{layer.context}: its indices count from the batch axis over an input of "
                    f"dims {layer.inputs[0].dims}; streaming shifts them per chunk and needs "
                    "every dim but the batch static")
            name = output_names[consumer]
            index_outputs[name] = math.prod(d.min for d in dims)
            index_type = "i64" if layer.type == "OnnxMaxPool" else \
                layer.attributes.choice("index_element_type", tuple(INDEX_TYPES), "i64")
            index_dtypes[name] = index_dtype(index_type)
    return BatchPlan(static.pop() if static else None, index_outputs, index_dtypes)


def run_chunk(runner, arrays, static):
    """Run ``runner`` on one chunk; a short last chunk of a fixed-batch model is padded with
    copies of its last item (zeros when empty) and its outputs cut back to the chunk."""
    count = len(arrays[0])
    if static is None or count == static:
        return runner.infer(arrays)
    padded = []
    for array in arrays:
        filler = array[-1:] if count else np.zeros((1, *array.shape[1:]), array.dtype)
        padded.append(np.concatenate([array, np.repeat(filler, static - count, axis=0)]))
    return {name: value[:count] for name, value in runner.infer(padded).items()}


# ---- outputs -------------------------------------------------------------------------------

def _storable(dtype):
    # .npy has no bfloat16; store it widened to float32, as in-memory runs store their .npz.
    return np.dtype(np.float32) if dtype.name == "bfloat16" else dtype


class _NpyWriter:
    """A new ``.npy`` of known shape, written chunk by chunk through a memory map."""

    def __init__(self, path, dtype, shape):
        self.path, self.dtype, self.shape = path, dtype, shape
        header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                  "shape": shape}
        self._file = open(path, "wb+")
        try:
            try:
                np.lib.format.write_array_header_1_0(self._file, header)
            except ValueError:      # a header over 64 KiB needs format 2.0
                self._file.seek(0)
                np.lib.format.write_array_header_2_0(self._file, header)
            self._offset = self._file.tell()
            self._item_bytes = math.prod(shape[1:]) * dtype.itemsize
            size = self._offset + shape[0] * self._item_bytes
            self._file.truncate(size)
            self._map = mmap.mmap(self._file.fileno(), size, access=mmap.ACCESS_WRITE)
        except BaseException:
            self._file.close()
            raise
        self._released = 0

    def write(self, start, values):
        stop = start + len(values)
        view = np.ndarray((len(values), *self.shape[1:]), self.dtype, buffer=self._map,
                          offset=self._offset + start * self._item_bytes)
        view[...] = values
        del view
        # Written pages are in the page cache (a shared mapping); unmapping them keeps the
        # data and returns the memory. Chunks may finish out of order (Dask), so only the
        # whole pages of this chunk are released.
        _release(self._map, self._offset + start * self._item_bytes,
                 self._offset + stop * self._item_bytes)

    def finish(self):
        self._map.flush()
        self._map.close()
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def abandon(self):
        try:
            self._map.close()
        except (BufferError, ValueError):
            pass
        self._file.close()


def _safe_file_name(name, taken):
    base = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "output"
    candidate, number = base, 1
    while candidate.lower() in taken:
        number += 1
        candidate = f"{base}_{number}"
    taken.add(candidate.lower())
    return candidate + ".npy"


class _Destination:
    """Where the outputs go, written under temporary names and renamed into place at the end:
    ``FILE.npy`` (one output), ``FILE.npz`` (assembled from streamed ``.npy`` files, one copy
    of the outputs at the end) or a directory with one ``NAME.npy`` per output."""

    def __init__(self, path, names, protected_paths):
        self.path = os.fspath(path)
        lowered = self.path.lower()
        self.kind = "npy" if lowered.endswith(".npy") else "npz" if lowered.endswith(".npz") \
            else "dir"
        for protected in protected_paths:
            if protected is not None and _same_file(self.path, os.fspath(protected)):
                raise BadArgumentError(f"refusing to write the outputs to {self.path}: it is "
                                       f"the input file {os.fspath(protected)}")
        if self.kind == "npy" and len(names) != 1:
            raise BadArgumentError(f"--output {self.path}: the model has {len(names)} outputs "
                                   f"{list(names)}; give a directory or a .npz")
        if self.kind == "dir":
            if os.path.lexists(self.path) and not os.path.isdir(self.path):
                raise BadArgumentError(f"--output {self.path} is not a directory (name a "
                                       "directory, FILE.npy or FILE.npz)")
            if os.path.isdir(self.path) and os.listdir(self.path):
                raise BadArgumentError(f"--output {self.path} is a directory that is not "
                                       "empty; refusing to replace it")
        elif os.path.lexists(self.path) and not os.path.isfile(self.path):
            raise BadArgumentError(f"--output {self.path} exists and is not a regular file; "
                                   "refusing to replace it")
        parent = os.path.dirname(os.path.abspath(self.path.rstrip(os.sep) or self.path))
        prefix = f".{os.path.basename(self.path.rstrip(os.sep))}."
        try:
            if self.kind == "npy":
                fd, self._temporary = tempfile.mkstemp(dir=parent, prefix=prefix, suffix=".tmp")
                os.close(fd)
                self.files = {names[0]: self._temporary}
            else:
                self._temporary = tempfile.mkdtemp(dir=parent, prefix=prefix, suffix=".tmp")
                taken = set()
                self.files = {name: os.path.join(self._temporary, _safe_file_name(name, taken))
                              for name in names}
        except OSError as error:
            raise BadArgumentError(f"cannot write {self.path}: {error.strerror or error}") \
                from None
        self._parent = parent
        self._writers = {}

    def writer(self, name, dtype, shape):
        self._writers[name] = _NpyWriter(self.files[name], dtype, shape)
        return self._writers[name]

    def commit(self):
        for writer in self._writers.values():
            writer.finish()
        mode = 0o666 & ~_umask()
        if self.kind == "npz":
            archive = None
            try:
                with signals_held():   # never between mkstemp and the name
                    fd, archive = tempfile.mkstemp(dir=self._parent, suffix=".tmp",
                                                   prefix=f".{os.path.basename(self.path)}.")
                with os.fdopen(fd, "wb") as handle:
                    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
                        for name, file_path in self.files.items():
                            with open(file_path, "rb") as source, \
                                    zf.open(f"{name}.npy", "w", force_zip64=True) as target:
                                shutil.copyfileobj(source, target, _COPY_BLOCK)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.chmod(archive, mode)
                os.replace(archive, self.path)
            except BaseException:
                if archive is not None:
                    _remove(archive)
                raise
            shutil.rmtree(self._temporary, ignore_errors=True)
        elif self.kind == "npy":
            os.chmod(self._temporary, mode)
            os.replace(self._temporary, self.path)
        else:
            for file_path in self.files.values():
                os.chmod(file_path, mode)
            os.chmod(self._temporary, 0o777 & ~_umask())
            os.replace(self._temporary, self.path)
        _fsync_directory(self._parent)

    def abort(self):
        for writer in self._writers.values():
            writer.abandon()
        if self.kind == "npy":
            _remove(self._temporary)
        else:
            shutil.rmtree(self._temporary, ignore_errors=True)


def _umask():
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


# ---- the run -------------------------------------------------------------------------------

class Statistics:
    """min, max and mean of an output, accumulated chunk by chunk (float64 for floats, as
    the in-memory summary computes them)."""

    def __init__(self):
        self.low = self.high = None
        self.total, self.count = 0.0, 0

    def add(self, array):
        """Fold ``array`` in, a block at a time: floats are widened to float64 one block of
        at most ``_STATISTICS_BLOCK`` elements at a time, never as a full-size copy."""
        flat = array.reshape(-1)
        for start in range(0, flat.size, _STATISTICS_BLOCK):
            block = flat[start:start + _STATISTICS_BLOCK]
            wide = block.astype(np.float64) if block.dtype.kind in "fV" else block
            low, high = wide.min(), wide.max()
            self.low = low if self.low is None else np.minimum(self.low, low)
            self.high = high if self.high is None else np.maximum(self.high, high)
            self.total += float(np.sum(wide, dtype=np.float64))
            self.count += block.size

    def summary(self):
        if self.count == 0:
            return "-", "-", "-"
        return f"{self.low:.6g}", f"{self.high:.6g}", f"{self.total / self.count:.6g}"


class StreamResult:
    """What a streaming run did: items, seconds, and per output (shape, dtype, statistics)."""

    def __init__(self, items, seconds, outputs, path):
        self.items, self.seconds, self.outputs, self.path = items, seconds, outputs, path


def _progress_bar(total, mode, stream):
    from tqdm import tqdm
    disable = {"auto": None, "always": False, "never": True}[mode]
    return tqdm(total=total, unit="item", file=stream, disable=disable,
                mininterval=0.5, smoothing=0.1, dynamic_ncols=True, leave=True)


def stream(chunks, total, output_path, protected_paths=(), progress="auto",
           progress_stream=None, plan=None):
    """Write the outputs of consecutive batch chunks to ``output_path``.

    ``chunks`` yields ``(start, stop, outputs)`` with ``outputs`` a dict name -> array whose
    axis 0 has ``stop - start`` items; together the chunks cover ``[0, total)`` (in any
    order). Without ``output_path`` the outputs are only summarised. Returns a
    :class:`StreamResult`. On any error or interruption nothing is left at ``output_path``'s
    temporary names, and ``output_path`` itself is untouched.
    """
    plan = plan or BatchPlan(None, {}, {})
    plan.check_index_range(total)
    destination = writers = None
    statistics, shapes, dtypes = {}, {}, {}
    done = 0
    started = time.perf_counter()
    with sigterm_as_exit():
        try:
            with _progress_bar(total, progress, progress_stream or sys.stderr) as bar:
                for start, stop, outputs in chunks:
                    plan.shift_indices(outputs, start)
                    if writers is None:
                        if output_path:
                            with signals_held():   # never between mkdtemp and the name
                                destination = _Destination(output_path, list(outputs),
                                                           protected_paths)
                        writers = {}
                        for name, array in outputs.items():
                            shapes[name] = (total, *array.shape[1:])
                            dtypes[name] = _storable(array.dtype)
                            statistics[name] = Statistics()
                            if destination is not None:
                                writers[name] = destination.writer(name, dtypes[name],
                                                                   shapes[name])
                    for name, array in outputs.items():
                        if array.shape != (stop - start, *shapes[name][1:]):
                            raise BadShapeError(
                                f"output {name!r} of items {start}..{stop - 1} has shape "
                                f"{list(array.shape)}, expected {[stop - start, *shapes[name][1:]]}: "
                                "the model does not keep the batch axis (axis 0) as its "
                                "inputs', so it cannot be run in chunks")
                        statistics[name].add(array)
                        if name in writers:
                            writers[name].write(start, array.astype(dtypes[name], copy=False))
                    done += stop - start
                    bar.update(stop - start)
            if done != total:
                raise OvpoolError(f"the chunks covered {done} items of {total}")
            if destination is not None:
                destination.commit()
        except BaseException:
            if destination is not None:
                destination.abort()
            raise
    seconds = time.perf_counter() - started
    outputs = {name: (shapes[name], dtypes[name], statistics[name]) for name in shapes}
    return StreamResult(total, seconds, outputs, output_path)


def local_chunks(runner, inputs, batch_size, static):
    """``(start, stop, outputs)`` for consecutive chunks of ``NpyInput``s run in this process;
    each chunk's input pages are released once it has run."""
    total = len(inputs[0])
    for start in range(0, max(total, 1), batch_size):
        stop = min(start + batch_size, total)
        arrays = [source.chunk(start, stop) for source in inputs]
        outputs = run_chunk(runner, arrays, static)
        # The outputs may view the input pages (an identity model): copy those before the
        # pages are released.
        outputs = {name: np.array(value) if any(np.shares_memory(value, a) for a in arrays)
                   else value for name, value in outputs.items()}
        del arrays
        yield start, stop, outputs
        for source in inputs:
            source.release(stop)


def open_inputs(paths, infos):
    """Map the ``.npy`` input files, one per model input, checking they agree on the batch."""
    sources = []
    try:
        for path, info in zip(paths, infos):
            sources.append(NpyInput(path))
        lengths = {len(source) for source in sources}
        if len(lengths) > 1:
            raise BadShapeError("the inputs have different batch lengths (axis 0): " + ", ".join(
                f"{info.name} {len(source)}" for source, info in zip(sources, infos)))
    except BaseException:
        for source in sources:
            source.close()
        raise
    return sources
