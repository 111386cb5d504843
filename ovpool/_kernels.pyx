# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False, embedsignature=True
"""The numpy-facing layer of the pooling kernels.

The loops themselves live in the C++ core (``ovpool/core/*.hpp``, headers only, no Python),
which the native OpenVINO extension compiles too, so both give the same bits. This module
turns typed memoryviews into pointers, picks the core's template for the element type
(uint16 plus ``half_kind`` -> float16 / bfloat16), builds one job per call and runs its
independent items over OpenMP threads (one ``prange`` loop, ``run_job``) with the GIL
released.

Nothing here raises except MemoryError for scratch space: Python resolves every attribute into
the packed window tables and checks every shape before calling in (see ``pooling.py``).
"""

cimport cython
from cython.parallel cimport prange, threadid
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t

cdef extern from "core/jobs.hpp" namespace "ovpool::core" nogil:
    # The 16-bit float tag types: a uint16 buffer is cast to them.
    cdef cppclass f16:
        pass
    cdef cppclass bf16:
        pass

    cdef cppclass AvgJob[S]:
        AvgJob(const S* x, S* out, ptrdiff_t planes, const ptrdiff_t* packed,
               const int64_t* divisor, const double* divisor_real, int workers) except +
        ptrdiff_t items()
        void run(ptrdiff_t item, int worker)

    cdef cppclass MaxJob[S]:
        MaxJob(const S* x, S* out, ptrdiff_t planes, const ptrdiff_t* packed,
               int64_t* out_index64, int32_t* out_index32, int64_t plane_modulus,
               int64_t offset_modulus, double empty_value, int workers) except +
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

# float16 and bfloat16 share the unsigned short storage type; this flag says which one it is.
cdef enum:
    KIND_FLOAT16 = 0
    KIND_BFLOAT16 = 1

HALF_FLOAT16 = KIND_FLOAT16
HALF_BFLOAT16 = KIND_BFLOAT16

# The element types of the Python entry points (their specialisations are looked up by these
# names in pooling.py, so they stay as they are).
ctypedef fused store_t:
    float
    double
    signed char
    unsigned char
    int
    long long
    unsigned short

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


def openmp_enabled():
    """True when the kernels were compiled with OpenMP (and so can use several threads)."""
    return bool(OVPOOL_OPENMP)


cdef void run_job(const void* job, ptrdiff_t items, ovpool_item_fn run_item,
                  int num_threads) noexcept nogil:
    """Every item of a job, over up to ``num_threads`` OpenMP threads (no more than items)."""
    cdef ptrdiff_t item
    if num_threads > items:
        num_threads = <int> items if items > 0 else 1
    for item in prange(items, schedule='guided', num_threads=num_threads):
        run_item(job, item, threadid())


cdef int run_avg(const core_t* x, core_t* out, Py_ssize_t planes, const ptrdiff_t* packed,
                 const int64_t* divisor, const double* divisor_real,
                 int num_threads) except -1:
    cdef AvgJob[core_t]* job
    try:
        job = new AvgJob[core_t](x, out, planes, packed, divisor, divisor_real, num_threads)
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
                 int64_t offset_modulus, double empty_value, int num_threads) except -1:
    cdef MaxJob[core_t]* job
    try:
        job = new MaxJob[core_t](x, out, planes, packed, out_index64, out_index32,
                                 plane_modulus, offset_modulus, empty_value, num_threads)
    except MemoryError:
        raise MemoryError(NO_MEMORY)
    try:
        with nogil:
            run_job(job, job.items(), ovpool_item_runner(job), num_threads)
    finally:
        del job
    return 0


def avg_pool_planes(const store_t[:, ::1] x, store_t[:, ::1] out,
                    const Py_ssize_t[::1] tables, const int64_t[::1] divisor,
                    const double[::1] divisor_real, int half_kind, int num_threads):
    """Average-pool every plane of ``x`` (planes, in_plane) into ``out`` (planes, out_plane).

    ``tables`` are the packed window tables (see ``ovpool/core/geometry.hpp``), whose
    ``scratch`` is the size of one scratch buffer (the largest intermediate of the separable
    passes). ``divisor`` (out_plane,) holds each window's divisor, ``divisor_real`` the same as
    floats with +inf for 0. The caller has checked every size; at least one plane.
    """
    cdef const ptrdiff_t* packed = <const ptrdiff_t*> &tables[0]
    cdef Py_ssize_t planes = x.shape[0]
    cdef const int64_t* count = &divisor[0]
    cdef const double* real = &divisor_real[0]
    if store_t is float:
        run_avg(&x[0, 0], &out[0, 0], planes, packed, count, real, num_threads)
    elif store_t is double:
        run_avg(&x[0, 0], &out[0, 0], planes, packed, count, real, num_threads)
    elif store_t is cython.schar:
        run_avg(<const int8_t*> &x[0, 0], <int8_t*> &out[0, 0], planes, packed, count, real,
                num_threads)
    elif store_t is cython.uchar:
        run_avg(<const uint8_t*> &x[0, 0], <uint8_t*> &out[0, 0], planes, packed, count, real,
                num_threads)
    elif store_t is int:
        run_avg(<const int32_t*> &x[0, 0], <int32_t*> &out[0, 0], planes, packed, count, real,
                num_threads)
    elif store_t is cython.longlong:
        run_avg(<const int64_t*> &x[0, 0], <int64_t*> &out[0, 0], planes, packed, count, real,
                num_threads)
    elif half_kind == KIND_BFLOAT16:
        run_avg(<const bf16*> &x[0, 0], <bf16*> &out[0, 0], planes, packed, count, real,
                num_threads)
    else:
        run_avg(<const f16*> &x[0, 0], <f16*> &out[0, 0], planes, packed, count, real,
                num_threads)


def max_pool_planes(const store_t[:, ::1] x, store_t[:, ::1] out,
                    int64_t[:, ::1] out_index64, int32_t[:, ::1] out_index32,
                    const Py_ssize_t[::1] tables, double empty_value, int64_t plane_modulus,
                    int64_t offset_modulus, int half_kind, int num_threads):
    """Max-pool every plane of ``x`` into ``out``.

    At most one of ``out_index64`` / ``out_index32`` is given (None: no index work at all).
    The index of an output is ``(plane % plane_modulus) * in_plane + offset % offset_modulus``
    where ``offset`` is the chosen element's offset within its input plane. ``empty_value`` is
    written for windows with no input element (their offset is 0). ``tables`` as for
    :func:`avg_pool_planes`.
    """
    cdef const ptrdiff_t* packed = <const ptrdiff_t*> &tables[0]
    cdef Py_ssize_t planes = x.shape[0]
    cdef int64_t* index64 = &out_index64[0, 0] if out_index64 is not None else NULL
    cdef int32_t* index32 = &out_index32[0, 0] if out_index32 is not None else NULL
    if store_t is float:
        run_max(&x[0, 0], &out[0, 0], planes, packed, index64, index32, plane_modulus,
                offset_modulus, empty_value, num_threads)
    elif store_t is double:
        run_max(&x[0, 0], &out[0, 0], planes, packed, index64, index32, plane_modulus,
                offset_modulus, empty_value, num_threads)
    elif store_t is cython.schar:
        run_max(<const int8_t*> &x[0, 0], <int8_t*> &out[0, 0], planes, packed, index64,
                index32, plane_modulus, offset_modulus, empty_value, num_threads)
    elif store_t is cython.uchar:
        run_max(<const uint8_t*> &x[0, 0], <uint8_t*> &out[0, 0], planes, packed, index64,
                index32, plane_modulus, offset_modulus, empty_value, num_threads)
    elif store_t is int:
        run_max(<const int32_t*> &x[0, 0], <int32_t*> &out[0, 0], planes, packed, index64,
                index32, plane_modulus, offset_modulus, empty_value, num_threads)
    elif store_t is cython.longlong:
        run_max(<const int64_t*> &x[0, 0], <int64_t*> &out[0, 0], planes, packed, index64,
                index32, plane_modulus, offset_modulus, empty_value, num_threads)
    elif half_kind == KIND_BFLOAT16:
        run_max(<const bf16*> &x[0, 0], <bf16*> &out[0, 0], planes, packed, index64, index32,
                plane_modulus, offset_modulus, empty_value, num_threads)
    else:
        run_max(<const f16*> &x[0, 0], <f16*> &out[0, 0], planes, packed, index64, index32,
                plane_modulus, offset_modulus, empty_value, num_threads)
