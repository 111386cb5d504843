"""ovpool over Dask arrays: models and pooling on threads, worker processes or a cluster.

``infer(model, x)`` runs an IR model, and ``avg_pool``, ``max_pool``, ``adaptive_avg_pool``
and ``adaptive_max_pool`` the numpy API, block by block over Dask arrays chunked along the
batch axis (and, for the pooling functions, the channel axis). The axes a block computes over
(a model input's axes after the batch; the spatial axes of a pooling) must lie in one chunk:
they are rechunked when they do not, with a :class:`RechunkWarning` saying so.

What travels to the workers is small and picklable: the model's file paths (with their
modification times and sizes) and plain attributes, never a compiled model. Each worker
process reads and compiles a model once, on its first block, and keeps it for the next ones
(:func:`worker_compilations` counts them); so the model files, like the inputs, must be
readable by every worker (shared storage on a real cluster).

Needs ``pip install 'ovpool[dask]'`` (dask[array] and distributed).
"""

import math
import os
import threading
import warnings
from collections import deque

import numpy as np

try:
    import dask.array as da
except ImportError as error:   # pragma: no cover - the extra is missing
    raise ImportError("ovpool.dask needs Dask; install it with: pip install 'ovpool[dask]' "
                      f"(dask[array] and distributed): {error}") from None

from . import pooling
from ._shapes import adaptive_output_shape, pool_output_shape
from .config import positive_int, set_memory_limit
from .errors import BadArgumentError, BadDtypeError, BadShapeError, ModelError
from .ir import Model, read_model
from .runtime import compile_model, order_inputs
from .streaming import NpyInput, plan_batches, run_chunk

__all__ = ["infer", "avg_pool", "max_pool", "adaptive_avg_pool", "adaptive_max_pool",
           "RechunkWarning", "worker_compilations", "connect", "stream_chunks"]


class RechunkWarning(UserWarning):
    """An input was rechunked so that the axes each block computes over are in one chunk."""


# ---- the per-process model cache -----------------------------------------------------------

_compiled_models = {}
_cache_lock = threading.Lock()
_compilations = 0


def _stamp(path):
    if path is None or not os.path.exists(path):
        return None
    status = os.stat(path)
    return status.st_mtime_ns, status.st_size


def _model_key(model, num_threads):
    """A picklable key naming a model: absolute paths, their stamps, the kernel threads."""
    if isinstance(model, Model):
        xml, weights = model.path, model.bin_path
    elif isinstance(model, (str, os.PathLike)):
        xml, weights = os.fspath(model), None
    else:
        raise BadArgumentError(f"model must be a path or an ovpool.Model, got "
                               f"{type(model).__name__}")
    xml = os.path.abspath(xml)
    if weights is None:
        weights = os.path.splitext(xml)[0] + ".bin"
    weights = os.path.abspath(weights)
    if num_threads is not None:
        positive_int("num_threads", num_threads)
    return xml, weights, _stamp(xml), _stamp(weights), num_threads


def _compiled(key):
    """This process's compiled model for ``key``, compiled on first use."""
    global _compilations
    with _cache_lock:
        compiled = _compiled_models.get(key)
        if compiled is None:
            xml, weights, xml_stamp, weights_stamp, num_threads = key
            if (_stamp(xml), _stamp(weights)) != (xml_stamp, weights_stamp):
                raise ModelError(f"{xml} (or its weights {weights}) is missing here or differs "
                                 "from the file the computation was built from; every worker "
                                 "must read the same model files")
            compiled = compile_model(read_model(xml, weights), num_threads=num_threads)
            _compiled_models[key] = compiled
            _compilations += 1
        return compiled


def worker_compilations():
    """How many models this process has compiled for ovpool.dask (once per model and thread
    setting; run it on workers with ``client.run(ovpool.dask.worker_compilations)``)."""
    return _compilations


# ---- helpers -------------------------------------------------------------------------------

def _as_dask(x, what):
    if isinstance(x, da.Array):
        return x
    try:
        return da.asarray(x)
    except (TypeError, ValueError) as error:
        raise BadArgumentError(f"{what} cannot be made a Dask array: {error}") from None


def _one_chunk(x, axes, what):
    """``x`` with each of ``axes`` in a single chunk, warning when it had to be rechunked."""
    split = [axis for axis in axes if len(x.chunks[axis]) > 1]
    if not split:
        return x
    warnings.warn(f"{what}: axes {split} were split into chunks {[x.chunks[a] for a in split]}; "
                  "rechunked to one chunk each, as every block computes over them (chunk the "
                  "batch axis instead)", RechunkWarning, stacklevel=3)
    return x.rechunk({axis: -1 for axis in split})


# ---- models --------------------------------------------------------------------------------

def _infer_block(*blocks, key, static, plan, names):
    *arrays, positions = blocks
    outputs = run_chunk(_compiled(key), list(arrays), static)
    if positions.size:
        plan.shift_indices(outputs, int(positions[0]))
    results = tuple(outputs[name] for name in names)
    return results if len(results) > 1 else results[0]


def _bind(compiled, x):
    infos = compiled.inputs
    arrays = order_inputs(infos, x)
    checked = []
    for array, info in zip(arrays, infos):
        array = _as_dask(array, f"input {info.name!r}")
        if array.dtype != info.dtype:
            raise BadDtypeError(f"input {info.name!r} has dtype {array.dtype}; the model "
                                f"expects {info.dtype}")
        if array.ndim != len(info.shape) or array.ndim == 0 or not all(
                d.admits(n) for d, n in zip(info.shape[1:], array.shape[1:])):
            raise BadShapeError(f"input {info.name!r} has shape {list(array.shape)}; the model "
                                f"expects {info.shape}")
        checked.append(array)
    if len({a.shape[0] for a in checked}) > 1:
        raise BadShapeError("the inputs have different batch lengths (axis 0): "
                            f"{[a.shape[0] for a in checked]}")
    return checked


def infer(model, x, num_threads=None):
    """Run an IR model over Dask arrays, block by block along the batch axis.

    Parameters
    ----------
    model : str, os.PathLike or ovpool.Model
        The model's ``.xml`` (its ``.bin`` beside it), or a model from :func:`ovpool.read_model`;
        the files must be readable wherever the blocks run.
    x : dask or numpy array, list of them (input order) or dict keyed by input name
        Batch-first inputs with the same batch length; the other axes are rechunked into one
        chunk if needed (with a :class:`RechunkWarning`). A model with a fixed batch size B is
        run on chunks of B (a short last chunk is padded and cut back).
    num_threads : int, optional
        Kernel threads per block (default: the process's setting; Dask's worker processes
        set ``OMP_NUM_THREADS=1``).

    Returns
    -------
    dask.array.Array, or a dict of them keyed by output name when the model has several
    outputs. Nothing is computed until you compute them.
    """
    key = _model_key(model, num_threads)
    compiled = _compiled(key)
    arrays = _bind(compiled, x)
    names = [info.name for info in compiled.outputs]
    plan = plan_batches(compiled.model, compiled.inputs,
                        {info.layer.id: info.name for info in compiled.outputs}, None)
    total = arrays[0].shape[0]
    plan.check_index_range(total)
    batch_chunks = (plan.static,) * (total // plan.static) + (
        (total % plan.static,) if total % plan.static else ()) if plan.static else \
        arrays[0].chunks[0]
    ready = []
    for array, info in zip(arrays, compiled.inputs):
        array = _one_chunk(array, range(1, array.ndim), f"input {info.name!r}")
        if array.chunks[0] != batch_chunks:
            array = array.rechunk({0: batch_chunks})
        ready.append(array)
    # One item (or one fixed batch) of zeros gives every output's item shape and dtype.
    probe = run_chunk(compiled, [np.zeros((1, *a.shape[1:]), a.dtype) for a in ready],
                      plan.static)
    positions = da.arange(total, chunks=(batch_chunks,), dtype=np.int64)
    inputs_signature = ",".join(
        "(" + ",".join(f"i{k}_{j}" for j in range(1, a.ndim)) + ")" for k, a in enumerate(ready))
    outputs_signature = ",".join(
        "(" + ",".join(f"o{k}_{j}" for j in range(1, probe[n].ndim)) + ")"
        for k, n in enumerate(names))
    sizes = {f"o{k}_{j}": probe[n].shape[j] for k, n in enumerate(names)
             for j in range(1, probe[n].ndim)}
    result = da.apply_gufunc(
        _infer_block, f"{inputs_signature},()->{outputs_signature}", *ready, positions,
        output_dtypes=[probe[n].dtype for n in names] if len(names) > 1 else probe[names[0]].dtype,
        output_sizes=sizes, vectorize=False, key=key, static=plan.static, plan=plan,
        names=names)
    return dict(zip(names, result)) if len(names) > 1 else result


# ---- pooling -------------------------------------------------------------------------------

def _pool_input(x, what):
    x = _as_dask(x, "x")
    if x.ndim < 3:
        raise BadShapeError(f"{what} needs an input of shape (N, C, *spatial) with at least one "
                            f"spatial axis, got shape {list(x.shape)}")
    return _one_chunk(x, range(2, x.ndim), what)


def _values_block(x, function, kwargs):
    return function(x, **kwargs)


def _pooled(x, function, kwargs, out_spatial, dtype):
    spatial = x.ndim - 2
    signature = "(" + ",".join(f"s{j}" for j in range(spatial)) + ")->(" + \
        ",".join(f"t{j}" for j in range(spatial)) + ")"
    return da.apply_gufunc(_values_block, signature, x, output_dtypes=dtype,
                           output_sizes={f"t{j}": n for j, n in enumerate(out_spatial)},
                           vectorize=False, function=function, kwargs=kwargs)


def _max_block(x, n_positions, c_positions, function, kwargs, index_axis, channels,
               index_dtype):
    """Values and indices of one block; indices counted from the batch or channel axis are
    rebuilt from the in-plane positions and the block's place in the whole array."""
    if index_axis > 1:
        return function(x, index_element_type=index_dtype.name, axis=index_axis, **kwargs)
    values, in_plane = function(x, index_element_type="i64", axis=2, **kwargs)
    plane = math.prod(x.shape[2:])
    expand = (...,) + (None,) * (x.ndim - 2)
    plane_number = c_positions[expand] if index_axis == 1 else \
        (n_positions * channels + c_positions)[expand]
    return values, (plane_number * plane + in_plane).astype(index_dtype)


def _max_pooled(x, function, kwargs, out_spatial, index_element_type, axis):
    index_dtype = pooling._index_dtype(index_element_type)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or \
            not -x.ndim <= axis < x.ndim:
        raise BadShapeError(f"attribute 'axis' is {axis!r}; expected an int in "
                            f"[{-x.ndim}, {x.ndim - 1}]")
    axis = int(axis) % x.ndim
    spatial = x.ndim - 2
    n_positions = da.arange(x.shape[0], chunks=(x.chunks[0],), dtype=np.int64)[:, None]
    c_positions = da.arange(x.shape[1], chunks=(x.chunks[1],), dtype=np.int64)
    signature = "(" + ",".join(f"s{j}" for j in range(spatial)) + "),(),()->(" + \
        ",".join(f"t{j}" for j in range(spatial)) + "),(" + \
        ",".join(f"t{j}" for j in range(spatial)) + ")"
    values, indices = da.apply_gufunc(
        _max_block, signature, x, n_positions, c_positions,
        output_dtypes=[x.dtype, index_dtype],
        output_sizes={f"t{j}": n for j, n in enumerate(out_spatial)}, vectorize=False,
        function=function, kwargs=kwargs, index_axis=axis, channels=x.shape[1],
        index_dtype=index_dtype)
    return values, indices


def _check_on_empty(function, x, **kwargs):
    """Validate the attributes and dtype the way the numpy API does, on an empty batch."""
    return function(np.empty((0, 0, *x.shape[2:]), x.dtype), **kwargs)


def avg_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, dilations=None,
             exclude_pad=True, rounding_type="floor", auto_pad="explicit"):
    """:func:`ovpool.avg_pool` over a Dask array chunked along N and C (lazy)."""
    x = _pool_input(x, "avg_pool")
    kwargs = dict(kernel=kernel, strides=strides, pads_begin=pads_begin, pads_end=pads_end,
                  dilations=dilations, exclude_pad=exclude_pad, rounding_type=rounding_type,
                  auto_pad=auto_pad)
    _check_on_empty(pooling.avg_pool, x, **kwargs)
    window = {k: v for k, v in kwargs.items() if k != "exclude_pad"}
    out_shape = pool_output_shape(x.shape, **window)
    return _pooled(x, pooling.avg_pool, kwargs, out_shape[2:], x.dtype)


def max_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, dilations=None,
             rounding_type="floor", auto_pad="explicit", index_element_type="i64", axis=0,
             return_indices=True):
    """:func:`ovpool.max_pool` over a Dask array chunked along N and C (lazy): ``(values,
    indices)``, or the values when ``return_indices`` is False. The indices are those of the
    whole array (with ``axis=0`` they count across every batch and channel chunk)."""
    x = _pool_input(x, "max_pool")
    return_indices = pooling.check_flag("return_indices", return_indices)
    window = dict(kernel=kernel, strides=strides, pads_begin=pads_begin, pads_end=pads_end,
                  dilations=dilations, rounding_type=rounding_type, auto_pad=auto_pad)
    _check_on_empty(pooling.max_pool, x, return_indices=False, **window)
    out_shape = pool_output_shape(x.shape, **window)
    if not return_indices:
        return _pooled(x, pooling.max_pool, dict(window, return_indices=False), out_shape[2:],
                       x.dtype)
    pooling._index_layout(x.shape, index_element_type, axis, True)   # range and axis
    return _max_pooled(x, pooling.max_pool, window, out_shape[2:], index_element_type, axis)


def adaptive_avg_pool(x, output_size):
    """:func:`ovpool.adaptive_avg_pool` over a Dask array chunked along N and C (lazy)."""
    x = _pool_input(x, "adaptive_avg_pool")
    _check_on_empty(pooling.adaptive_avg_pool, x, output_size=output_size)
    out_shape = adaptive_output_shape(x.shape, output_size)
    return _pooled(x, pooling.adaptive_avg_pool, dict(output_size=output_size), out_shape[2:],
                   x.dtype)


def adaptive_max_pool(x, output_size, index_element_type="i64", return_indices=True):
    """:func:`ovpool.adaptive_max_pool` over a Dask array chunked along N and C (lazy);
    indices are within each (n, c) plane, as in the numpy API."""
    x = _pool_input(x, "adaptive_max_pool")
    return_indices = pooling.check_flag("return_indices", return_indices)
    _check_on_empty(pooling.adaptive_max_pool, x, output_size=output_size,
                    index_element_type=index_element_type, return_indices=return_indices)
    out_shape = adaptive_output_shape(x.shape, output_size)
    if not return_indices:
        return _pooled(x, pooling.adaptive_max_pool,
                       dict(output_size=output_size, return_indices=False), out_shape[2:],
                       x.dtype)
    # Adaptive indices are per plane: axis 2 in _max_block's terms, no block offsets.
    function = _adaptive_max_with_axis
    return _max_pooled(x, function, dict(output_size=output_size), out_shape[2:],
                       index_element_type, 2)


def _adaptive_max_with_axis(x, output_size, index_element_type, axis):
    return pooling.adaptive_max_pool(x, output_size, index_element_type=index_element_type)


# ---- streaming .npy files through a cluster (``ovpool run --dask``) ------------------------

def connect(address):
    """A ``distributed.Client`` for ``address``: ``tcp://host:8786`` (a running scheduler), or
    ``local`` / ``local:N`` (a LocalCluster of N single-threaded worker processes, default
    2). The caller closes it (and its cluster: ``client.cluster``)."""
    from distributed import Client, LocalCluster
    if address == "local" or address.startswith("local:"):
        workers = address.partition(":")[2] or "2"
        if not workers.isdigit() or int(workers) < 1:
            raise BadArgumentError(f"--dask {address!r}: expected local:N with N >= 1")
        cluster = LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster)
    try:
        return Client(address, timeout="30s")
    except (OSError, TimeoutError) as error:
        raise BadArgumentError(f"--dask {address}: cannot reach the scheduler: {error}") from None


def _npy_chunk(key, paths, start, stop, static, memory_limit):
    """Run on a worker: read items ``[start, stop)`` of each ``.npy`` and run the model."""
    if memory_limit is not None:
        set_memory_limit(memory_limit)
    sources = [NpyInput(path) for path in paths]
    try:
        arrays = [source.chunk(start, stop) for source in sources]
        outputs = run_chunk(_compiled(key), arrays, static)
        # Copy what still views the mapped files before they are closed.
        outputs = {name: np.array(value) if any(np.shares_memory(value, a) for a in arrays)
                   else value for name, value in outputs.items()}
        del arrays
    finally:
        for source in sources:
            source.close()
    return outputs


def stream_chunks(client, model, paths, total, batch_size, static, num_threads=None,
                  memory_limit=None, in_flight=None):
    """``(start, stop, outputs)`` of consecutive chunks computed on ``client``'s workers, in
    order, with at most ``in_flight`` chunks submitted at a time (default: two per worker
    thread), so the client holds a bounded number of results. The ``.npy`` paths are made
    absolute: the workers must see the same files."""
    key = _model_key(model, num_threads)
    paths = [os.path.abspath(p) for p in paths]
    if in_flight is None:
        threads = sum(client.nthreads().values()) or 1
        in_flight = 2 * threads
    pending = deque()
    starts = iter(range(0, max(total, 1), batch_size))
    try:
        while True:
            while len(pending) < in_flight:
                start = next(starts, None)
                if start is None:
                    break
                stop = min(start + batch_size, total)
                pending.append((start, stop, client.submit(
                    _npy_chunk, key, paths, start, stop, static, memory_limit, pure=False)))
            if not pending:
                return
            start, stop, future = pending.popleft()
            yield start, stop, future.result()
    finally:
        for _, _, future in pending:
            future.cancel()

