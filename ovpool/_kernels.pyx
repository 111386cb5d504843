# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False, embedsignature=True
"""The numpy-facing layer of the pooling kernels.

The loops themselves live in the C++ core (``ovpool/core/*.hpp``, headers only, no Python),
which the native OpenVINO extension compiles too, so both give the same bits. This module
takes the arrays' buffers, picks the core's template for the storage kind (bfloat16
arrays arrive as uint16 views), builds one job per call and runs its
independent items over OpenMP threads (one ``prange`` loop, ``run_job``) with the GIL
released.

Python resolves every attribute into the packed window tables and checks every shape before
calling in (see ``pooling.py``); what raises here is MemoryError for scratch space, and
ValueError for an array whose buffer does not have the size the call states (a caller's bug,
refused before any kernel reads it).
"""

cimport cython
from cython.parallel cimport prange, threadid
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS,
                             PyBUF_WRITABLE)

import numpy as np

cdef extern from "core/jobs.hpp" namespace "ovpool::core" nogil:
    # The 16-bit float tag types: a uint16 buffer is cast to them.
    cdef cppclass f16:
        pass
    cdef cppclass bf16:
        pass

    # A plan's divisors (core/geometry.hpp): every table, small_sums left false.
    cdef cppclass Divisors:
        const int64_t* count
        const double* real
        bint small_divisors
        const float* real32
        const float* divisor32
        const float* inverse32

    cdef cppclass AvgJob[S]:
        AvgJob(const S* x, S* out, ptrdiff_t planes, const ptrdiff_t* packed,
               const Divisors& plan, int workers) except +
        ptrdiff_t items()
        void run(ptrdiff_t item, int worker)

    cdef cppclass MaxJob[S]:
        MaxJob(const S* x, S* out, ptrdiff_t planes, const ptrdiff_t* packed,
               int64_t* out_index64, int32_t* out_index32, int64_t plane_modulus,
               int64_t offset_modulus, double empty_value, int workers,
               bint mid_planes_in_lanes) except +
        ptrdiff_t items()
        void run(ptrdiff_t item, int worker)

cdef extern from "core/threads.hpp" namespace "ovpool::core" nogil:
    const int64_t bytes_per_worker
    int core_workers_for_bytes "ovpool::core::workers_for_bytes" (int64_t bytes, int most,
                                                                 int64_t per_worker)

cdef extern from *:
    """
    #ifdef _OPENMP
    #define OVPOOL_OPENMP 1
    #else
    #define OVPOOL_OPENMP 0
    #endif

    #include <cstddef>
    #ifdef _OPENMP
    #include <omp.h>
    #endif

    // One work item of a job of any type, behind one function-pointer type, so a single
    // prange loop (run_job below) serves every job. run is noexcept: an item cannot throw.
    typedef void (*ovpool_item_fn)(const void* job, std::ptrdiff_t item, int worker);
    template <class Job>
    static void ovpool_run_item(const void* job, std::ptrdiff_t item, int worker) {
        static_cast<const Job*>(job)->run(item, worker);
    }
    template <class Job> static ovpool_item_fn ovpool_item_runner(const Job*) {
        return &ovpool_run_item<Job>;
    }

    static int ovpool_cpu_has_avx2_f16c(void) {
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
            && __builtin_cpu_supports("f16c");
    #else
        return 0;
    #endif
    }
    """
    int OVPOOL_OPENMP
    int ovpool_cpu_has_avx2_f16c()
    ctypedef void (*ovpool_item_fn)(const void* job, ptrdiff_t item, int worker) noexcept nogil
    ovpool_item_fn ovpool_item_runner[J](const J* job) nogil

# The core's storage types.
ctypedef fused core_t:
    float
    double
    int8_t
    uint8_t
    int32_t
    int64_t
    f16
    bf16

cdef str NO_MEMORY = "ovpool: cannot allocate pooling scratch space"


def cpu_has_avx2_f16c():
    """True when this CPU can run the kernels built for AVX2 + FMA + F16C."""
    return bool(ovpool_cpu_has_avx2_f16c())


# Bytes read and written per worker thread (core/threads.hpp).
BYTES_PER_WORKER = bytes_per_worker


def workers_for_bytes(int64_t nbytes, int most, int64_t per_worker=bytes_per_worker):
    """Threads worth starting for a call that reads and writes ``nbytes`` bytes, at most
    ``most`` (core/threads.hpp's rule; ``per_worker`` replaces its bytes per worker)."""
    return core_workers_for_bytes(nbytes, most, per_worker)


cdef inline int call_workers(Py_ssize_t size, Py_ssize_t index_size, Py_ssize_t planes,
                             Py_ssize_t in_plane, Py_ssize_t out_plane, int most,
                             int64_t per_worker) noexcept:
    """Threads for a call on ``planes`` planes of elements of ``size`` bytes (plus indices of
    ``index_size``): core/threads.hpp's rule on the bytes it reads and writes."""
    return core_workers_for_bytes(
        planes * ((in_plane + out_plane) * size + out_plane * index_size), most, per_worker)


def workers_for_call(Py_ssize_t size, Py_ssize_t index_size, Py_ssize_t planes,
                     Py_ssize_t in_plane, Py_ssize_t out_plane, int most, int64_t per_worker):
    """The threads avg_pool_planes and max_pool_planes run a call on (call_workers)."""
    return call_workers(size, index_size, planes, in_plane, out_plane, most, per_worker)


def openmp_enabled():
    """True when the kernels were compiled with OpenMP (and so can use several threads)."""
    return bool(OVPOOL_OPENMP)


cdef void run_job(const void* job, ptrdiff_t items, ovpool_item_fn run_item,
                  int num_threads) noexcept nogil:
    """Every item of a job, over up to ``num_threads`` OpenMP threads (no more than items)."""
    cdef ptrdiff_t item
    if num_threads > items:
        num_threads = <int> items if items > 0 else 1
    if num_threads == 1:
        # One thread: the items in order on the calling thread, without an OpenMP parallel
        # region (whose set-up costs as much as a small call's kernel).
        for item in range(items):
            run_item(job, item, 0)
        return
    for item in prange(items, schedule='guided', num_threads=num_threads):
        run_item(job, item, threadid())


cdef int run_avg(const core_t* x, core_t* out, Py_ssize_t planes, const ptrdiff_t* packed,
                 const Divisors* divisors, int num_threads) except -1:
    cdef AvgJob[core_t]* job
    try:
        job = new AvgJob[core_t](x, out, planes, packed, divisors[0], num_threads)
    except MemoryError:
        raise MemoryError(NO_MEMORY)
    try:
        with nogil:
            run_job(job, job.items(), ovpool_item_runner(job), num_threads)
    finally:
        del job
    return 0


cdef int run_max(const core_t* x, core_t* out, Py_ssize_t planes, const ptrdiff_t* packed,
                 int64_t* out_index64, int32_t* out_index32, int64_t plane_modulus,
                 int64_t offset_modulus, double empty_value, int num_threads,
                 bint mid_planes_in_lanes) except -1:
    cdef MaxJob[core_t]* job
    try:
        job = new MaxJob[core_t](x, out, planes, packed, out_index64, out_index32,
                                 plane_modulus, offset_modulus, empty_value, num_threads,
                                 mid_planes_in_lanes)
    except MemoryError:
        raise MemoryError(NO_MEMORY)
    try:
        with nogil:
            run_job(job, job.items(), ovpool_item_runner(job), num_threads)
    finally:
        del job
    return 0


# What an array handed to the kernels holds: one of these per core storage type
# (pooling.py's _Storage.kind). bfloat16 arrays come as uint16 views (numpy has no buffer
# format for it), so the kind, not the buffer, says which 16-bit type an array holds.
cdef enum:
    KIND_FLOAT32
    KIND_FLOAT64
    KIND_INT8
    KIND_UINT8
    KIND_INT32
    KIND_INT64
    KIND_FLOAT16
    KIND_BFLOAT16

STORAGE_KINDS = {"float32": KIND_FLOAT32, "float64": KIND_FLOAT64, "int8": KIND_INT8,
                 "uint8": KIND_UINT8, "int32": KIND_INT32, "int64": KIND_INT64,
                 "float16": KIND_FLOAT16, "bfloat16": KIND_BFLOAT16}

cdef Py_ssize_t kind_size(int kind):
    if kind == KIND_FLOAT64 or kind == KIND_INT64:
        return 8
    if kind == KIND_FLOAT32 or kind == KIND_INT32:
        return 4
    if kind == KIND_INT8 or kind == KIND_UINT8:
        return 1
    if kind == KIND_FLOAT16 or kind == KIND_BFLOAT16:
        return 2
    return 0


# The arrays of one kernel call, held through the buffer protocol: a plain buffer request
# costs a fraction of a typed memoryview's set-up (format parsing, a memoryview object per
# argument), which was about a sixth of a call on a small input.
cdef struct Held:
    Py_buffer views[6]
    int count


cdef int hold(Held* held, object array, bint writable, Py_ssize_t itemsize, Py_ssize_t items,
              str name, void** data) except -1:
    """Hold ``array``'s buffer, which must be C-contiguous (and writable if ``writable``) with
    exactly ``items`` elements of ``itemsize`` bytes; its address goes to ``data``."""
    cdef Py_buffer* view = &held.views[held.count]
    PyObject_GetBuffer(array, view, PyBUF_C_CONTIGUOUS | (PyBUF_WRITABLE if writable else 0))
    held.count += 1
    if view.itemsize != itemsize or view.len != itemsize * items:
        raise ValueError(f"ovpool kernels: '{name}' holds {view.len} bytes in items of "
                         f"{view.itemsize}, expected {items} items of {itemsize}")
    data[0] = view.buf
    return 0


cdef void release(Held* held) noexcept:
    while held.count > 0:
        held.count -= 1
        PyBuffer_Release(&held.views[held.count])


cdef int hold_packed(Held* held, object tables, const ptrdiff_t** packed) except -1:
    """Hold the packed window tables: C-contiguous ptrdiff_t items, at least one (their
    layout was checked when the rules built them)."""
    cdef Py_buffer* view = &held.views[held.count]
    PyObject_GetBuffer(tables, view, PyBUF_C_CONTIGUOUS)
    held.count += 1
    if view.itemsize != sizeof(ptrdiff_t) or view.len < view.itemsize:
        raise ValueError("ovpool kernels: 'tables' is not a packed table array")
    packed[0] = <const ptrdiff_t*> view.buf
    return 0


# One kernel call's arguments besides its arrays, so one dtype ladder (run_kind) serves
# average and max pooling.
cdef struct Call:
    bint is_max
    Py_ssize_t planes
    const ptrdiff_t* packed
    Divisors divisors              # average: each window's divisor, in every form
    int64_t* index64               # max: the index outputs (at most one, or none)
    int32_t* index32
    int64_t plane_modulus
    int64_t offset_modulus
    double empty_value
    bint mid_planes_in_lanes       # max: planes of 129 elements and more may go side by side
    int num_threads


cdef int run_call(const core_t* x, core_t* out, const Call* call) except -1:
    if call.is_max:
        return run_max(x, out, call.planes, call.packed, call.index64, call.index32,
                       call.plane_modulus, call.offset_modulus, call.empty_value,
                       call.num_threads, call.mid_planes_in_lanes)
    return run_avg(x, out, call.planes, call.packed, &call.divisors, call.num_threads)


cdef int run_kind(int kind, const void* x, void* out, const Call* call) except -1:
    """``call`` on ``x`` and ``out`` as the core's type of storage ``kind``."""
    if kind == KIND_FLOAT32:
        return run_call(<const float*> x, <float*> out, call)
    if kind == KIND_FLOAT64:
        return run_call(<const double*> x, <double*> out, call)
    if kind == KIND_INT8:
        return run_call(<const int8_t*> x, <int8_t*> out, call)
    if kind == KIND_UINT8:
        return run_call(<const uint8_t*> x, <uint8_t*> out, call)
    if kind == KIND_INT32:
        return run_call(<const int32_t*> x, <int32_t*> out, call)
    if kind == KIND_INT64:
        return run_call(<const int64_t*> x, <int64_t*> out, call)
    if kind == KIND_BFLOAT16:
        return run_call(<const bf16*> x, <bf16*> out, call)
    return run_call(<const f16*> x, <f16*> out, call)


cdef inline Py_ssize_t divisor_block_items(Py_ssize_t n):
    """int64 items of the divisor block of n outputs (see pack_divisors)."""
    return 2 * n + (3 * n + 1) // 2


def pack_divisors(divisor, divisor_real, divisor_floats):
    """The divisors of one plan's ``n`` outputs as the one array avg_pool_planes takes (an array
    argument costs a kernel call a buffer request): int64 items holding ``divisor`` (int64,
    n), then ``divisor_real`` (float64, n), then ``divisor_floats`` (float32, 3 x n), each as
    the plan made it (``_rules.fixed_plan``)."""
    divisor = np.ascontiguousarray(divisor, np.int64)
    cdef Py_ssize_t n = divisor.shape[0]
    block = np.zeros(divisor_block_items(n), np.int64)
    block[:n] = divisor
    block[n:2 * n].view(np.float64)[:] = divisor_real
    block[2 * n:].view(np.float32)[:3 * n] = np.reshape(divisor_floats, -1)
    return block


def avg_pool_planes(x, out, tables, divisors, bint small_divisors, int kind, Py_ssize_t planes,
                    Py_ssize_t in_plane, Py_ssize_t out_plane, int most_threads,
                    int64_t bytes_per_thread):
    """Average-pool ``planes`` planes of ``in_plane`` elements of ``x`` into ``out``
    (``planes`` * ``out_plane`` elements), both C-contiguous arrays of the storage ``kind``
    (STORAGE_KINDS), on at most ``most_threads`` threads, one per ``bytes_per_thread`` bytes
    read and written (core/threads.hpp).

    ``tables`` are the packed window tables (see ``ovpool/core/geometry.hpp``), whose
    ``scratch`` is the size of one scratch buffer (the largest intermediate of the separable
    passes). ``divisors`` are each window's divisor in every form, as :func:`pack_divisors`
    packs them, and ``small_divisors`` whether all are below 2**24, all as the plan made them
    (``_rules.fixed_plan``). The caller has checked every size against the tables;
    at least one plane. Arrays of other sizes are refused with ValueError.
    """
    cdef Held held
    held.count = 0
    cdef Py_ssize_t size = kind_size(kind)
    cdef void* xp
    cdef void* op
    cdef const ptrdiff_t* packed
    cdef const int64_t* count
    cdef const float* floats
    cdef Call call
    call.is_max = False
    if size == 0 or planes < 1:
        raise ValueError(f"ovpool kernels: storage kind {kind}, {planes} planes")
    try:
        hold(&held, x, False, size, planes * in_plane, "x", &xp)
        hold(&held, out, True, size, planes * out_plane, "out", &op)
        hold_packed(&held, tables, &packed)
        hold(&held, divisors, False, 8, divisor_block_items(out_plane), "divisors",
             <void**> &count)
        floats = <const float*> (count + 2 * out_plane)
        call.planes = planes
        call.packed = packed
        call.divisors.count = count
        call.divisors.real = <const double*> (count + out_plane)
        call.divisors.small_divisors = small_divisors
        call.divisors.real32 = floats
        call.divisors.divisor32 = floats + out_plane
        call.divisors.inverse32 = floats + 2 * out_plane
        call.num_threads = call_workers(size, 0, planes, in_plane, out_plane, most_threads,
                                        bytes_per_thread)
        run_kind(kind, xp, op, &call)
    finally:
        release(&held)


def max_pool_planes(x, out, out_index64, out_index32, tables, double empty_value,
                    int64_t plane_modulus, int64_t offset_modulus, int kind, Py_ssize_t planes,
                    Py_ssize_t in_plane, Py_ssize_t out_plane, int most_threads,
                    int64_t bytes_per_thread, bint mid_planes_in_lanes=True):
    """Max-pool ``planes`` planes of ``x`` into ``out`` (arrays and threads as for
    :func:`avg_pool_planes`; the indices' bytes count too).

    At most one of ``out_index64`` / ``out_index32`` (int64 / int32, as many as ``out``) is
    given (None: no index work at all). The index of an output is
    ``(plane % plane_modulus) * in_plane + offset % offset_modulus`` where ``offset`` is the
    chosen element's offset within its input plane. ``empty_value`` is written for windows
    with no input element (their offset is 0). ``tables`` as for :func:`avg_pool_planes`.
    ``mid_planes_in_lanes`` False keeps planes of more than 128 elements on the separable
    passes (tests reach those on small planes that way; the results are the same).
    """
    cdef Held held
    held.count = 0
    cdef Py_ssize_t size = kind_size(kind)
    cdef void* xp
    cdef void* op
    cdef const ptrdiff_t* packed
    cdef int64_t* index64 = NULL
    cdef int32_t* index32 = NULL
    cdef Py_ssize_t index_size
    cdef Call call
    if size == 0 or planes < 1:
        raise ValueError(f"ovpool kernels: storage kind {kind}, {planes} planes")
    try:
        hold(&held, x, False, size, planes * in_plane, "x", &xp)
        hold(&held, out, True, size, planes * out_plane, "out", &op)
        hold_packed(&held, tables, &packed)
        if out_index64 is not None:
            hold(&held, out_index64, True, 8, planes * out_plane, "out_index64",
                 <void**> &index64)
        if out_index32 is not None:
            hold(&held, out_index32, True, 4, planes * out_plane, "out_index32",
                 <void**> &index32)
        if index64 != NULL and index32 != NULL:
            raise ValueError("ovpool kernels: at most one of out_index64 and out_index32")
        call.is_max = True
        call.planes = planes
        call.packed = packed
        call.index64 = index64
        call.index32 = index32
        call.plane_modulus = plane_modulus
        call.offset_modulus = offset_modulus
        call.empty_value = empty_value
        call.mid_planes_in_lanes = mid_planes_in_lanes
        index_size = 8 if index64 != NULL else (4 if index32 != NULL else 0)
        call.num_threads = call_workers(size, index_size, planes, in_plane, out_plane,
                                        most_threads, bytes_per_thread)
        run_kind(kind, xp, op, &call)
    finally:
        release(&held)
