# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False, embedsignature=True
"""Typed pooling loops. They know nothing about attributes: Python resolves every attribute
into per-axis window tables and checks every shape before calling in, so nothing here raises
except MemoryError for scratch space.

Data layout: a C-contiguous input viewed as (planes, in_plane) where a plane is one (n, c) slice
of the spatial axes, and an output (planes, out_plane). Each spatial axis ``a`` comes with a
window table: output position ``j`` reads ``count[j]`` input positions starting at ``begin[j]``
and stepping by ``dilation[a]`` (padding already clipped away). Fixed windows and adaptive
windows are both expressed that way.

Pooling a box is separable, so a plane is reduced one spatial axis at a time, outermost axis
first: with the plane viewed as (outer, length, inner) the inner axis is contiguous and the
reduction over a window is a sum (or max) of whole contiguous rows, which vectorises. Partial
results live in small per-thread scratch buffers; planes are spread over threads.

Accumulators: float32 for float32/float16/bfloat16, float64 for float64, int64 for integers
(exact sums, and maxima of any integer type), and 128 bits for sums of int64 where the compiler
has them.
"""

cimport cython
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from libc.stdint cimport int32_t, int64_t, uint16_t

cdef extern from "_convert.h" nogil:
    # Declared to Cython as a floating type only so that fused-type dispatch tells it apart
    # from long long; it is an integer in C, and only this header does integer maths on it.
    ctypedef long double wide_t "ovp_wide_t"
    wide_t ovp_divide_round_even(wide_t total, int64_t divisor)
    float ovp_f16_to_f32(uint16_t h)
    uint16_t ovp_f32_to_f16(float f)
    float ovp_bf16_to_f32(uint16_t h)
    uint16_t ovp_f32_to_bf16(float f)
    void ovp_add_f16_row(float* acc, const uint16_t* row, Py_ssize_t n)

cdef extern from "_simd_rows.h" nogil:
    # 1 when the build targets AVX2, else 0 and the functions are never called.
    int OVP_HAVE_SIMD_ROWS
    void ovp_max_k3s2_row(const float* r0, const float* r1, const float* r2, float* out,
                          Py_ssize_t windows)
    void ovp_max_k3s2_row_padded(const float* r0, const float* r1, const float* r2,
                                 float* out, Py_ssize_t windows)
    void ovp_avg_3x3_same_plane(const float* x, float* out, Py_ssize_t rows, Py_ssize_t cols,
                                const float* divisor, Py_ssize_t divisor_stride,
                                const float* zeros)

cdef extern from *:
    """
    #ifdef _OPENMP
    #define OVPOOL_OPENMP 1
    #else
    #define OVPOOL_OPENMP 0
    #endif
    """
    int OVPOOL_OPENMP

# float16 and bfloat16 share the unsigned short storage type; this flag says which one it is.
cdef enum:
    KIND_FLOAT16 = 0
    KIND_BFLOAT16 = 1

# Input elements per block when planes of a single spatial axis are pooled as rows of one pass.
cdef enum:
    ROWS_BLOCK_ELEMENTS = 16384

# Largest plane (elements) that max pooling with indices reduces window by window.
cdef enum:
    DIRECT_MAX_PLANE = 1024

HALF_FLOAT16 = KIND_FLOAT16
HALF_BFLOAT16 = KIND_BFLOAT16

ctypedef fused store_t:
    float
    double
    signed char
    unsigned char
    int
    long long
    unsigned short

ctypedef fused acc_t:
    float
    double
    long long
    wide_t

# A source row read by a pass: the input's storage type on the first pass, an accumulator after.
ctypedef fused src_t:
    float
    double
    signed char
    unsigned char
    int
    long long
    unsigned short
    wide_t


cdef extern from *:
    """
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
    int ovpool_cpu_has_avx2_f16c()


def cpu_has_avx2_f16c():
    """True when this CPU can run the kernels built for AVX2 + FMA + F16C."""
    return bool(ovpool_cpu_has_avx2_f16c())


def openmp_enabled():
    """True when the kernels were compiled with OpenMP (and so can use several threads)."""
    return bool(OVPOOL_OPENMP)


cdef struct Geometry:
    Py_ssize_t naxes
    const Py_ssize_t* length      # IN: input length of each spatial axis
    const Py_ssize_t* output      # IN: output length of each spatial axis
    const Py_ssize_t* dilation    # IN: step between taps of each axis
    const Py_ssize_t* offset      # IN: where each axis's windows start in begin/count
    const Py_ssize_t* begin       # IN: first input position of each window (all axes, flat)
    const Py_ssize_t* count       # IN: number of in-bounds taps of each window
    const Py_ssize_t* stride      # IN: step between the begins of consecutive full windows
    const Py_ssize_t* interior    # IN: per axis [lo, hi): windows there all have count[lo]
                                  #     taps and begin[j] = begin[lo] + (j - lo) * stride
    Py_ssize_t in_plane           # IN: elements of one input plane
    Py_ssize_t out_plane          # IN: elements of one output plane
    Py_ssize_t scratch            # IN: elements of one scratch buffer


cdef inline acc_t load(src_t value, int half_kind, acc_t* tag) noexcept nogil:
    if src_t is cython.ushort:
        if half_kind == KIND_BFLOAT16:
            return <acc_t> ovp_bf16_to_f32(value)
        return <acc_t> ovp_f16_to_f32(value)
    else:
        return <acc_t> value


cdef inline store_t store(acc_t value, int half_kind, store_t* tag) noexcept nogil:
    if store_t is cython.ushort:
        if half_kind == KIND_BFLOAT16:
            return ovp_f32_to_bf16(<float> value)
        return ovp_f32_to_f16(<float> value)
    else:
        return <store_t> value


cdef inline void pass_shape(const Geometry* g, Py_ssize_t axis, Py_ssize_t* outer,
                            Py_ssize_t* inner) noexcept nogil:
    cdef Py_ssize_t a
    outer[0] = 1
    inner[0] = 1
    for a in range(axis):
        outer[0] *= g.output[a]
    for a in range(axis + 1, g.naxes):
        inner[0] *= g.length[a]


# ---------------------------------------------------------------------------------------------
# Average pooling
# ---------------------------------------------------------------------------------------------

cdef struct AxisTable:
    # One spatial axis's window table, as the passes read it.
    Py_ssize_t length, out_len, dil, step    # input and output lengths, tap and window steps
    Py_ssize_t lo, hi, taps                  # interior run [lo, hi) of windows with taps taps
    const Py_ssize_t* begin                  # first tap of each window
    const Py_ssize_t* count                  # taps of each window


cdef inline AxisTable axis_table(const Geometry* g, Py_ssize_t axis) noexcept nogil:
    cdef AxisTable w
    w.length = g.length[axis]
    w.out_len = g.output[axis]
    w.dil = g.dilation[axis]
    w.step = g.stride[axis]
    w.lo = g.interior[2 * axis]
    w.hi = g.interior[2 * axis + 1]
    w.begin = g.begin + g.offset[axis]
    w.count = g.count + g.offset[axis]
    w.taps = w.count[w.lo] if w.hi > w.lo else 0
    return w


cdef inline void sum_windows(const src_t* row, acc_t* out, const Py_ssize_t* begin,
                             const Py_ssize_t* count, Py_ssize_t first, Py_ssize_t last,
                             Py_ssize_t dil, int half_kind) noexcept nogil:
    """Sum windows ``first .. last-1`` of one contiguous row, each on its own. Long unit-step
    windows use eight partial sums, which the compiler turns into one vector accumulator."""
    cdef Py_ssize_t j, t, n
    cdef const src_t* tap
    cdef acc_t total, s0, s1, s2, s3, s4, s5, s6, s7
    for j in range(first, last):
        tap = row + begin[j]
        n = count[j]
        total = 0
        t = 0
        if dil == 1 and n >= 16:
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0
            while t + 8 <= n:
                s0 = s0 + load(tap[t], half_kind, <acc_t*> NULL)
                s1 = s1 + load(tap[t + 1], half_kind, <acc_t*> NULL)
                s2 = s2 + load(tap[t + 2], half_kind, <acc_t*> NULL)
                s3 = s3 + load(tap[t + 3], half_kind, <acc_t*> NULL)
                s4 = s4 + load(tap[t + 4], half_kind, <acc_t*> NULL)
                s5 = s5 + load(tap[t + 5], half_kind, <acc_t*> NULL)
                s6 = s6 + load(tap[t + 6], half_kind, <acc_t*> NULL)
                s7 = s7 + load(tap[t + 7], half_kind, <acc_t*> NULL)
                t = t + 8
            total = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
        while t < n:
            total = total + load(tap[t * dil], half_kind, <acc_t*> NULL)
            t = t + 1
        out[j] = total


cdef inline void accumulate_row(acc_t* acc, const src_t* row, Py_ssize_t n,
                                int half_kind) noexcept nogil:
    """acc[i] += row[i]; the 16-bit float kind is decided outside the loop so it vectorises."""
    cdef Py_ssize_t i
    if src_t is cython.ushort and acc_t is float:
        if half_kind == KIND_BFLOAT16:
            for i in range(n):
                acc[i] += ovp_bf16_to_f32(row[i])
        else:
            ovp_add_f16_row(acc, row, n)
    else:
        for i in range(n):
            acc[i] += <acc_t> row[i]


cdef inline void sum_rows(acc_t* dst, const src_t* first, Py_ssize_t gap, Py_ssize_t rows,
                          Py_ssize_t n, int half_kind) noexcept nogil:
    """dst[i] = 0 + first[i] + first[gap + i] + ... (``rows`` runs of ``n`` elements ``gap``
    apart), added in that order: the same sums as zeroing ``dst`` and adding run by run. Up to
    three runs go in one sweep, so ``dst`` is written once for windows of up to three taps;
    float16 runs go through the F16C row converter instead. (Which NaN payload survives a sum
    of two NaNs depends on the operand order gcc picks for each loop, as between the two
    kernel builds; everything else is bit for bit.)"""
    cdef Py_ssize_t i, t = 0
    cdef const src_t* r1 = first + gap
    cdef const src_t* r2 = first + 2 * gap
    cdef acc_t total
    if src_t is cython.ushort or rows < 2:
        for i in range(n):
            dst[i] = 0
    elif rows == 2:
        for i in range(n):
            total = 0
            total += load(first[i], half_kind, <acc_t*> NULL)
            total += load(r1[i], half_kind, <acc_t*> NULL)
            dst[i] = total
        t = 2
    else:
        for i in range(n):
            total = 0
            total += load(first[i], half_kind, <acc_t*> NULL)
            total += load(r1[i], half_kind, <acc_t*> NULL)
            total += load(r2[i], half_kind, <acc_t*> NULL)
            dst[i] = total
        t = 3
    while t < rows:
        accumulate_row(dst, first + t * gap, n, half_kind)
        t = t + 1


cdef void sum_last_axis(const src_t* src, acc_t* dst, const Geometry* g, Py_ssize_t axis,
                        Py_ssize_t outer, int half_kind) noexcept nogil:
    """``sum_pass`` for the last axis, where windows run along contiguous memory. Full
    windows are summed tap by tap across all outputs, so the loop over outputs vectorises
    (specialised for the common strides 1 and 2).

    With stride 1 and as many outputs as inputs per row (k odd, "same" padding), full window
    ``j`` of row ``o`` starts at flat input ``o * length + j + (begin[lo] - lo)``: a fixed
    offset from its flat output position, so the full windows of all rows are summed as one
    long run (small planes then pay one loop set-up, not one per row); the edge windows,
    which that run also covers with sums across row ends, are then rewritten."""
    cdef Py_ssize_t o, j, t, span
    cdef AxisTable w = axis_table(g, axis)
    cdef const src_t* row
    cdef const src_t* tap
    cdef acc_t* out
    # (hi - lo >= 8 as below: narrower rows go window by window, where windows of 16 or more
    # taps are summed in eight partial sums, a different rounding.)
    if w.step == 1 and w.length == w.out_len and outer > 1 and w.hi - w.lo >= 8:
        span = (outer - 1) * w.out_len + w.hi - w.lo
        sum_rows(dst + w.lo, src + w.begin[w.lo], w.dil, w.taps, span, half_kind)
        for o in range(outer):
            sum_windows(src + o * w.length, dst + o * w.out_len, w.begin, w.count, 0, w.lo,
                        w.dil, half_kind)
            sum_windows(src + o * w.length, dst + o * w.out_len, w.begin, w.count, w.hi,
                        w.out_len, w.dil, half_kind)
        return
    for o in range(outer):
        row = src + o * w.length
        out = dst + o * w.out_len
        if w.hi - w.lo < 8:
            # Too few windows for the loop across them to pay off: one window at a time.
            sum_windows(row, out, w.begin, w.count, 0, w.out_len, w.dil, half_kind)
            continue
        sum_windows(row, out, w.begin, w.count, 0, w.lo, w.dil, half_kind)
        sum_windows(row, out, w.begin, w.count, w.hi, w.out_len, w.dil, half_kind)
        if w.step == 1:
            sum_rows(out + w.lo, row + w.begin[w.lo], w.dil, w.taps, w.hi - w.lo, half_kind)
            continue
        for j in range(w.lo, w.hi):
            out[j] = 0
        for t in range(w.taps):
            tap = row + w.begin[w.lo] + t * w.dil - w.lo * w.step
            if w.step == 2:
                for j in range(w.lo, w.hi):
                    out[j] += load(tap[2 * j], half_kind, <acc_t*> NULL)
            else:
                for j in range(w.lo, w.hi):
                    out[j] += load(tap[w.step * j], half_kind, <acc_t*> NULL)


cdef void sum_pass(const src_t* src, acc_t* dst, const Geometry* g, Py_ssize_t axis,
                   int half_kind) noexcept nogil:
    """One separable sum pass. With stride 1, full window ``j`` reads rows ``begin[lo] + (j -
    lo) + t * dil``, so tap ``t`` of all full windows is one contiguous run of
    ``(hi - lo) * inner`` elements: summed as such, in long vectorised loops (``sum_rows``)."""
    cdef Py_ssize_t outer, inner, o, j, lo = 0, hi = 0
    cdef AxisTable w = axis_table(g, axis)
    pass_shape(g, axis, &outer, &inner)
    if inner == 1:
        sum_last_axis(src, dst, g, axis, outer, half_kind)
        return
    if w.step == 1:
        lo, hi = w.lo, w.hi
    for o in range(outer):
        if hi > lo:
            sum_rows(dst + (o * w.out_len + lo) * inner,
                     src + (o * w.length + w.begin[lo]) * inner, w.dil * inner, w.taps,
                     (hi - lo) * inner, half_kind)
        for j in range(w.out_len):
            if lo <= j < hi:
                continue
            sum_rows(dst + (o * w.out_len + j) * inner,
                     src + (o * w.length + w.begin[j]) * inner, w.dil * inner, w.count[j],
                     inner, half_kind)


cdef struct Divisors:
    const int64_t* count    # IN: each output's divisor, for integer averages
    const double* real      # IN: the same as floats, +inf where it is 0 (so 0 / inf = 0)


cdef inline acc_t divide_round_even(acc_t total, int64_t divisor) noexcept nogil:
    """Integer total / divisor rounded half to even; an empty window (divisor 0) gives 0."""
    if divisor == 0:
        return 0
    if acc_t is wide_t:
        return ovp_divide_round_even(total, divisor)
    else:
        return <acc_t> ovp_divide_round_even(<wide_t> total, divisor)


cdef inline void write_averages(store_t* out, const acc_t* sums, Py_ssize_t n,
                                const Divisors* divisors, int half_kind) noexcept nogil:
    """out[i] = sums[i] / divisor[i], stored in the output's type."""
    cdef Py_ssize_t i
    if acc_t is float or acc_t is double:
        # A plain division per element (no branch): vectorises, and matches sum / count.
        for i in range(n):
            out[i] = store(sums[i] / <acc_t> divisors.real[i], half_kind, <store_t*> NULL)
    else:
        for i in range(n):
            out[i] = store(divide_round_even(sums[i], divisors.count[i]), half_kind,
                           <store_t*> NULL)


cdef inline bint three_same(const Geometry* g, Py_ssize_t axis) noexcept nogil:
    """Axis ``axis`` has 3-wide windows, stride 1, one element of padding on each side."""
    cdef AxisTable w = axis_table(g, axis)
    cdef Py_ssize_t n = w.length
    return (n >= 3 and w.out_len == n and w.step == 1 and w.dil == 1 and w.lo == 1
            and w.hi == n - 1 and w.taps == 3 and w.begin[1] == 0 and w.begin[0] == 0
            and w.count[0] == 2 and w.begin[n - 1] == n - 2 and w.count[n - 1] == 2)


cdef void avg_plane(const store_t* x, store_t* out, acc_t* scratch, const Geometry* g,
                    const Divisors* divisors, int half_kind) noexcept nogil:
    cdef Py_ssize_t a
    cdef acc_t* dst = scratch
    cdef acc_t* src
    sum_pass(x, dst, g, 0, half_kind)
    for a in range(1, g.naxes):
        src = dst
        dst = scratch + (a % 2) * g.scratch
        sum_pass(<const acc_t*> src, dst, g, a, half_kind)
    write_averages(out, dst, g.out_plane, divisors, half_kind)


cdef void avg_rows(const store_t* x, store_t* out, acc_t* scratch, const Geometry* g,
                   const Divisors* divisors, Py_ssize_t rows, int half_kind) noexcept nogil:
    """Average-pool ``rows`` consecutive planes of a single spatial axis in one pass."""
    cdef Py_ssize_t r, n = g.out_plane
    sum_last_axis(x, scratch, g, 0, rows, half_kind)
    for r in range(rows):
        write_averages(out + r * n, scratch + r * n, n, divisors, half_kind)


cdef int run_avg_3x3_same(const float* x, float* out, Py_ssize_t planes, const Geometry* g,
                          const Divisors* divisors, int num_threads) noexcept nogil:
    """float32 planes with 3x3 windows, stride 1, one element of padding per side, through
    ``ovp_avg_3x3_same_plane``: the divisors as float32 (exact: window sizes and +inf), each
    row's padded with ones to a multiple of 8, and a row of zeros per thread."""
    cdef Py_ssize_t rows = g.length[0], cols = g.length[1], stride = (cols + 7) // 8 * 8
    cdef Py_ssize_t p, i, j
    cdef float* divisor = <float*> malloc((rows * stride + num_threads * cols) * sizeof(float))
    cdef float* zeros
    if divisor == NULL:
        return -1
    zeros = divisor + rows * stride
    memset(zeros, 0, num_threads * cols * sizeof(float))
    for i in range(rows):
        for j in range(stride):
            divisor[i * stride + j] = <float> divisors.real[i * cols + j] if j < cols else 1
    try:
        for p in prange(planes, schedule='guided', num_threads=num_threads):
            ovp_avg_3x3_same_plane(x + p * g.in_plane, out + p * g.out_plane, rows, cols,
                                   divisor, stride, zeros + threadid() * cols)
    finally:
        free(divisor)
    return 0


cdef int run_avg(const store_t* x, store_t* out, Py_ssize_t planes, const Geometry* g,
                 const Divisors* divisors, int half_kind, int num_threads,
                 acc_t* tag) noexcept nogil:
    if store_t is float and acc_t is float:
        if OVP_HAVE_SIMD_ROWS and g.naxes == 2 and three_same(g, 0) and three_same(g, 1):
            return run_avg_3x3_same(x, out, planes, g, divisors, num_threads)
    cdef Py_ssize_t p, per_thread = 2 * g.scratch
    cdef acc_t* scratch = <acc_t*> malloc(num_threads * per_thread * sizeof(acc_t))
    if scratch == NULL:
        return -1
    cdef Py_ssize_t block, blocks, b, first, rows
    if g.naxes == 1:
        # One spatial axis: consecutive planes are rows of a single pass, so small planes are
        # pooled in blocks instead of paying the per-plane set-up each time.
        block = min(planes, max(1, ROWS_BLOCK_ELEMENTS // g.in_plane))
        blocks = (planes + block - 1) // block
        free(scratch)
        scratch = <acc_t*> malloc(num_threads * block * g.out_plane * sizeof(acc_t))
        if scratch == NULL:
            return -1
        try:
            for b in prange(blocks, schedule='guided', num_threads=num_threads):
                first = b * block
                rows = min(block, planes - first)
                avg_rows(x + first * g.in_plane, out + first * g.out_plane,
                         scratch + threadid() * block * g.out_plane, g, divisors, rows,
                         half_kind)
        finally:
            free(scratch)
        return 0
    try:
        for p in prange(planes, schedule='guided', num_threads=num_threads):
            avg_plane(x + p * g.in_plane, out + p * g.out_plane,
                      scratch + threadid() * per_thread, g, divisors, half_kind)
    finally:
        free(scratch)
    return 0


# ---------------------------------------------------------------------------------------------
# Max pooling
# ---------------------------------------------------------------------------------------------

# Bitwise rather than short-circuit logic below keeps the callers' loops free of branches,
# so that gcc can vectorise them with compare-and-blend.

cdef inline bint replaces(acc_t value, acc_t best) noexcept nogil:
    """True when ``value`` beats ``best``: larger, or a number against a NaN.

    ``not (value <= best)`` holds when value > best and whenever either is NaN; ``value ==
    value`` then rules out a NaN value. Same truth table as ``value > best or (best is NaN
    and value is not)``, in two vector compares instead of three plus an extra logic op."""
    return (not (value <= best)) & (value == value)


cdef inline bint replaces_at(acc_t value, int64_t index, acc_t best,
                             int64_t best_index) noexcept nogil:
    """As ``replaces``, with equal values (or two NaNs) going to the smaller plane offset."""
    cdef bint tie = (value == best) | ((value != value) & (best != best))
    return (tie & (index < best_index)) | ((not tie) & ((value > best) | (best != best)))


cdef inline void max_windows(const src_t* row, acc_t* out, const int64_t* row_index,
                             int64_t* out_index, Py_ssize_t row_offset,
                             const Py_ssize_t* begin, const Py_ssize_t* count,
                             Py_ssize_t first, Py_ssize_t last, Py_ssize_t dil,
                             acc_t empty_value, int half_kind) noexcept nogil:
    """Max of windows ``first .. last-1`` of one contiguous row, each on its own. With
    ``out_index``, candidates are ``row_index`` entries, or (``row_index`` NULL) the element's
    plane offset ``row_offset + position``."""
    cdef Py_ssize_t j, t, position
    cdef acc_t best, value
    cdef int64_t best_index, candidate
    for j in range(first, last):
        if count[j] == 0:
            out[j] = empty_value
            if out_index != NULL:
                out_index[j] = 0
            continue
        position = begin[j]
        best = load(row[position], half_kind, <acc_t*> NULL)
        if out_index == NULL:
            for t in range(1, count[j]):
                value = load(row[position + t * dil], half_kind, <acc_t*> NULL)
                if replaces(value, best):
                    best = value
        else:
            best_index = row_index[position] if row_index != NULL else row_offset + position
            for t in range(1, count[j]):
                value = load(row[position + t * dil], half_kind, <acc_t*> NULL)
                candidate = (row_index[position + t * dil] if row_index != NULL
                             else row_offset + position + t * dil)
                if replaces_at(value, candidate, best, best_index):
                    best = value
                    best_index = candidate
            out_index[j] = best_index
        out[j] = best


cdef void max_interior_indexed(const src_t* row, acc_t* out, const int64_t* row_index,
                               int64_t* out_index, Py_ssize_t row_offset, Py_ssize_t first,
                               Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t step, Py_ssize_t taps,
                               Py_ssize_t dil, int half_kind) noexcept nogil:
    """Max with index over the full windows ``lo .. hi-1`` of one contiguous row, tap by tap
    across all of them. Window ``j`` starts at ``first + (j - lo) * step``."""
    cdef Py_ssize_t j, t
    cdef const src_t* tap
    cdef const int64_t* tap_index
    cdef acc_t value
    cdef int64_t candidate, base
    cdef bint better
    for t in range(taps):
        # Window j's tap t sits at tap[j * step].
        base = first + t * dil - lo * step
        tap = row + base
        if row_index != NULL:
            tap_index = row_index + base
        if t == 0:
            for j in range(lo, hi):
                out[j] = load(tap[j * step], half_kind, <acc_t*> NULL)
            if row_index != NULL:
                for j in range(lo, hi):
                    out_index[j] = tap_index[j * step]
            else:
                for j in range(lo, hi):
                    out_index[j] = row_offset + base + j * step
        elif row_index != NULL:
            for j in range(lo, hi):
                value = load(tap[j * step], half_kind, <acc_t*> NULL)
                candidate = tap_index[j * step]
                better = replaces_at(value, candidate, out[j], out_index[j])
                out[j] = value if better else out[j]
                out_index[j] = candidate if better else out_index[j]
        else:
            # Offsets grow with t, so a tie keeps the earlier tap.
            for j in range(lo, hi):
                value = load(tap[j * step], half_kind, <acc_t*> NULL)
                better = replaces(value, out[j])
                out[j] = value if better else out[j]
                out_index[j] = (row_offset + base + j * step) if better else out_index[j]


cdef inline void max_rows3(acc_t* dst, const src_t* r0, const src_t* r1, const src_t* r2,
                           Py_ssize_t rows, Py_ssize_t n, int half_kind) noexcept nogil:
    """dst[i] = the max of r0[i], r1[i], r2[i] (the first ``rows`` of them, 1 to 3), combined
    in that order: one sweep writing ``dst`` once for the common windows of 2 or 3 taps."""
    cdef Py_ssize_t i
    cdef acc_t a, b, c
    if rows == 1:
        for i in range(n):
            dst[i] = load(r0[i], half_kind, <acc_t*> NULL)
    elif rows == 2:
        for i in range(n):
            a = load(r0[i], half_kind, <acc_t*> NULL)
            b = load(r1[i], half_kind, <acc_t*> NULL)
            dst[i] = b if replaces(b, a) else a
    else:
        for i in range(n):
            a = load(r0[i], half_kind, <acc_t*> NULL)
            b = load(r1[i], half_kind, <acc_t*> NULL)
            c = load(r2[i], half_kind, <acc_t*> NULL)
            a = b if replaces(b, a) else a
            dst[i] = c if replaces(c, a) else a


cdef inline void max_into(acc_t* dst, const src_t* r, Py_ssize_t n, int half_kind) noexcept nogil:
    """dst[i] = the max of dst[i] and then r[i]."""
    cdef Py_ssize_t i
    cdef acc_t value
    for i in range(n):
        value = load(r[i], half_kind, <acc_t*> NULL)
        dst[i] = value if replaces(value, dst[i]) else dst[i]


cdef void max_row(const src_t* row, acc_t* out, const AxisTable* w, acc_t* phases,
                  acc_t empty_value, int half_kind) noexcept nogil:
    """Max of every window of one contiguous row (the last axis) into ``out[0 .. out_len)``.

    Full windows are reduced tap by tap across all of them so that the loop over outputs
    vectorises (the first three taps in one sweep). With stride 2 the row is first split into
    its even and odd elements (``phases``: at least ``length + 2`` elements), so that every tap
    reads a contiguous run: tap ``t`` of window ``lo + j`` is element ``(begin[lo] + t*dil) // 2
    + j`` of the phase ``(begin[lo] + t*dil) % 2``. Taps are still combined in window order."""
    cdef Py_ssize_t j, t, m, n, q, half, first, windows
    cdef acc_t* even
    cdef acc_t* odd
    cdef const acc_t* p[3]
    cdef acc_t value
    max_windows(row, out, NULL, NULL, 0, w.begin, w.count, 0, w.lo, w.dil, empty_value,
                half_kind)
    max_windows(row, out, NULL, NULL, 0, w.begin, w.count, w.hi, w.out_len, w.dil,
                empty_value, half_kind)
    if w.hi <= w.lo:
        return
    first = w.begin[w.lo]
    windows = w.hi - w.lo
    out = out + w.lo
    if w.step == 1:
        max_rows3(out, row + first, row + first + w.dil, row + first + 2 * w.dil,
                  min(w.taps, 3), windows, half_kind)
        for t in range(3, w.taps):
            max_into(out, row + first + t * w.dil, windows, half_kind)
        return
    if w.step == 2 and windows >= 4:
        # Elements first .. first + n - 1 are read by the full windows.
        n = 2 * (windows - 1) + (w.taps - 1) * w.dil + 1
        half = (n + 1) // 2
        even = phases
        odd = phases + half
        for m in range(n // 2):
            even[m] = load(row[first + 2 * m], half_kind, <acc_t*> NULL)
            odd[m] = load(row[first + 2 * m + 1], half_kind, <acc_t*> NULL)
        if n % 2:
            even[half - 1] = load(row[first + n - 1], half_kind, <acc_t*> NULL)
        p[0] = p[1] = p[2] = even
        for t in range(min(w.taps, 3)):
            q = t * w.dil
            p[t] = (odd if q % 2 else even) + q // 2
        max_rows3(out, p[0], p[1], p[2], min(w.taps, 3), windows, half_kind)
        for t in range(3, w.taps):
            q = t * w.dil
            max_into(out, <const acc_t*> ((odd if q % 2 else even) + q // 2), windows,
                     half_kind)
        return
    for j in range(windows):
        out[j] = load(row[first + w.step * j], half_kind, <acc_t*> NULL)
    for t in range(1, w.taps):
        for j in range(windows):
            value = load(row[first + t * w.dil + w.step * j], half_kind, <acc_t*> NULL)
            out[j] = value if replaces(value, out[j]) else out[j]


cdef void max_last_axis(const src_t* src, acc_t* dst, const int64_t* src_index,
                        int64_t* dst_index, const Geometry* g, Py_ssize_t axis,
                        Py_ssize_t outer, acc_t empty_value, int half_kind) noexcept nogil:
    """``max_pass`` for the last spatial axis, where windows run along contiguous memory.
    With indices only: values alone go through ``max_plane_values``, row by row."""
    cdef Py_ssize_t o
    cdef AxisTable w = axis_table(g, axis)
    cdef const src_t* row
    cdef const int64_t* row_index
    cdef int64_t* out_index
    cdef acc_t* out
    for o in range(outer):
        row = src + o * w.length
        out = dst + o * w.out_len
        row_index = (src_index + o * w.length) if src_index != NULL else NULL
        out_index = dst_index + o * w.out_len
        max_windows(row, out, row_index, out_index, o * w.length, w.begin, w.count, 0,
                    w.lo, w.dil, empty_value, half_kind)
        max_windows(row, out, row_index, out_index, o * w.length, w.begin, w.count, w.hi,
                    w.out_len, w.dil, empty_value, half_kind)
        if w.hi > w.lo:
            max_interior_indexed(row, out, row_index, out_index, o * w.length,
                                 w.begin[w.lo], w.lo, w.hi, w.step, w.taps, w.dil,
                                 half_kind)


cdef void max_columns(const src_t* src, acc_t* dst, const AxisTable* v, Py_ssize_t o,
                      Py_ssize_t j, Py_ssize_t inner, acc_t empty_value,
                      int half_kind) noexcept nogil:
    """dst[0 .. inner) = the max over window ``j`` of axis ``v`` of the rows of length
    ``inner`` in outer block ``o`` of ``src``, taps in window order."""
    cdef Py_ssize_t i, t, n = v.count[j]
    cdef const src_t* r0
    cdef Py_ssize_t gap = v.dil * inner
    if n == 0:
        for i in range(inner):
            dst[i] = empty_value
        return
    r0 = src + (o * v.length + v.begin[j]) * inner
    max_rows3(dst, r0, r0 + gap, r0 + 2 * gap, min(n, 3), inner, half_kind)
    for t in range(3, n):
        max_into(dst, r0 + t * gap, inner, half_kind)


cdef void max_pass(const src_t* src, acc_t* dst, const int64_t* src_index, int64_t* dst_index,
                   const Geometry* g, Py_ssize_t axis, acc_t empty_value,
                   int half_kind) noexcept nogil:
    """One separable max pass. ``src_index`` NULL on the first pass (candidate index = the
    element's offset in the plane); ``dst_index`` NULL when no index is wanted.

    Rule: the larger value wins; NaN loses to any number; among equal values (or all-NaN) the
    smaller plane offset wins, which is the first element in row-major window order.
    """
    cdef Py_ssize_t outer, inner, o, j, t, i, position, first
    cdef AxisTable w = axis_table(g, axis)
    cdef const src_t* row
    cdef const int64_t* row_index
    cdef acc_t* best
    cdef int64_t* best_index
    cdef acc_t value
    cdef bint better
    pass_shape(g, axis, &outer, &inner)
    if inner == 1:
        max_last_axis(src, dst, src_index, dst_index, g, axis, outer, empty_value, half_kind)
        return
    if dst_index == NULL:
        # Values only: up to three taps per sweep, as in the row-by-row path.
        for o in range(outer):
            for j in range(w.out_len):
                max_columns(src, dst + (o * w.out_len + j) * inner, &w, o, j, inner,
                            empty_value, half_kind)
        return
    for o in range(outer):
        for j in range(w.out_len):
            best = dst + (o * w.out_len + j) * inner
            best_index = dst_index + (o * w.out_len + j) * inner
            if w.count[j] == 0:
                # Every window through this position is empty; later passes only ever
                # combine it with other empty entries.
                for i in range(inner):
                    best[i] = empty_value
                    best_index[i] = 0
                continue
            first = (o * w.length + w.begin[j]) * inner
            row = src + first
            for i in range(inner):
                best[i] = load(row[i], half_kind, <acc_t*> NULL)
            if src_index == NULL:
                for i in range(inner):
                    best_index[i] = first + i
            else:
                for i in range(inner):
                    best_index[i] = src_index[first + i]
            for t in range(1, w.count[j]):
                position = (o * w.length + w.begin[j] + t * w.dil) * inner
                row = src + position
                if src_index == NULL:
                    # Later w.taps have larger offsets: ties keep the earlier one.
                    for i in range(inner):
                        value = load(row[i], half_kind, <acc_t*> NULL)
                        better = replaces(value, best[i])
                        best[i] = value if better else best[i]
                        best_index[i] = (position + i) if better else best_index[i]
                else:
                    row_index = src_index + position
                    for i in range(inner):
                        value = load(row[i], half_kind, <acc_t*> NULL)
                        better = replaces_at(value, row_index[i], best[i], best_index[i])
                        best[i] = value if better else best[i]
                        best_index[i] = row_index[i] if better else best_index[i]


cdef struct IndexSpec:
    int64_t* out64             # OUT: int64 indices, or NULL
    int32_t* out32             # OUT: int32 indices, or NULL
    int64_t plane_modulus      # IN: index base = (plane % plane_modulus) * in_plane
    int64_t offset_modulus     # IN: offset within the plane is taken modulo this


cdef void max_plane(const store_t* x, store_t* out, Py_ssize_t plane, const IndexSpec* spec,
                    acc_t* scratch, int64_t* index_scratch, const Geometry* g,
                    acc_t empty_value, int half_kind) noexcept nogil:
    """Max-pool one plane; with ``index_scratch`` also write the indices ``spec`` asks for."""
    cdef Py_ssize_t a, i
    cdef acc_t* dst = scratch
    cdef acc_t* src
    cdef int64_t* dst_index = index_scratch
    cdef int64_t* src_index
    cdef int64_t base, offset_modulus = spec.offset_modulus
    max_pass(x, dst, <const int64_t*> NULL, dst_index, g, 0, empty_value, half_kind)
    for a in range(1, g.naxes):
        src = dst
        src_index = dst_index
        dst = scratch + (a % 2) * g.scratch
        if index_scratch != NULL:
            dst_index = index_scratch + (a % 2) * g.scratch
        max_pass(<const acc_t*> src, dst, src_index, dst_index, g, a, empty_value, half_kind)
    for i in range(g.out_plane):
        out[i] = store(dst[i], half_kind, <store_t*> NULL)
    if index_scratch == NULL:
        return
    base = (plane % spec.plane_modulus) * g.in_plane
    if offset_modulus < g.in_plane:
        for i in range(g.out_plane):
            dst_index[i] = base + dst_index[i] % offset_modulus
    elif base != 0:
        for i in range(g.out_plane):
            dst_index[i] += base
    if spec.out64 != NULL:
        for i in range(g.out_plane):
            spec.out64[plane * g.out_plane + i] = dst_index[i]
    else:
        for i in range(g.out_plane):
            spec.out32[plane * g.out_plane + i] = <int32_t> dst_index[i]


cdef void max_plane_direct(const store_t* x, store_t* out, Py_ssize_t plane,
                           const IndexSpec* spec, acc_t* column, int64_t* column_offset,
                           const Geometry* g, acc_t empty_value, int half_kind) noexcept nogil:
    """Max-pool one small 2-D plane with indices, one output row at a time: the rows of the
    vertical window are reduced into ``column`` (value) and ``column_offset`` (its plane
    offset), each at least the last axis long, then each window of that row is read from
    there. The same two reductions in the same order as ``max_plane``'s passes, so the same
    winners, without plane-sized scratch, index passes or the final copy; for planes of a
    few hundred elements those cost more than the reductions themselves."""
    cdef AxisTable v = axis_table(g, 0)
    cdef AxisTable h = axis_table(g, 1)
    cdef Py_ssize_t i, j, a, b, c, k = 0, position, row, rows, cols, width = h.length
    cdef acc_t best, value
    cdef int64_t best_offset, index
    cdef int64_t base = (plane % spec.plane_modulus) * g.in_plane
    cdef int64_t offset_modulus = spec.offset_modulus
    cdef bint wrap = offset_modulus < g.in_plane
    cdef bint better
    for i in range(v.out_len):
        rows = v.count[i]
        if rows > 0:
            row = v.begin[i] * width
            for c in range(width):
                column[c] = load(x[row + c], half_kind, <acc_t*> NULL)
                column_offset[c] = row + c
            for a in range(1, rows):
                # Later rows have larger offsets: ties keep the earlier one.
                row = (v.begin[i] + a * v.dil) * width
                for c in range(width):
                    value = load(x[row + c], half_kind, <acc_t*> NULL)
                    better = replaces(value, column[c])
                    column[c] = value if better else column[c]
                    column_offset[c] = (row + c) if better else column_offset[c]
        for j in range(h.out_len):
            cols = h.count[j]
            if rows == 0 or cols == 0:
                best = empty_value
                best_offset = 0
            else:
                position = h.begin[j]
                best = column[position]
                best_offset = column_offset[position]
                for b in range(1, cols):
                    position = h.begin[j] + b * h.dil
                    better = replaces_at(column[position], column_offset[position], best,
                                         best_offset)
                    best = column[position] if better else best
                    best_offset = column_offset[position] if better else best_offset
            out[k] = store(best, half_kind, <store_t*> NULL)
            index = base + (best_offset % offset_modulus if wrap else best_offset)
            if spec.out64 != NULL:
                spec.out64[plane * g.out_plane + k] = index
            else:
                spec.out32[plane * g.out_plane + k] = <int32_t> index
            k += 1


cdef inline acc_t max_of_rows3(const acc_t* r0, const acc_t* r1, const acc_t* r2,
                               Py_ssize_t i) noexcept nogil:
    cdef acc_t best = r0[i]
    best = r1[i] if replaces(r1[i], best) else best
    return r2[i] if replaces(r2[i], best) else best


cdef void max_windows_rows3(const acc_t* r0, const acc_t* r1, const acc_t* r2, acc_t* out,
                            const AxisTable* w, Py_ssize_t first, Py_ssize_t last,
                            acc_t empty_value) noexcept nogil:
    """``max_windows`` over the row of maxima of ``r0``, ``r1``, ``r2`` (element by element, in
    that order) without writing that row: for the few edge windows of ``ovp_max_k3s2_row``."""
    cdef Py_ssize_t j, t
    cdef acc_t best, value
    for j in range(first, last):
        if w.count[j] == 0:
            out[j] = empty_value
            continue
        best = max_of_rows3(r0, r1, r2, w.begin[j])
        for t in range(1, w.count[j]):
            value = max_of_rows3(r0, r1, r2, w.begin[j] + t * w.dil)
            best = value if replaces(value, best) else best
        out[j] = best


cdef inline void max_output_row_k3s2(const acc_t* plane_rows, acc_t* column, const AxisTable* v,
                                     const AxisTable* h, Py_ssize_t o, Py_ssize_t j,
                                     bint padded_start, acc_t* target, acc_t empty_value,
                                     int half_kind) noexcept nogil:
    """Output row ``j`` of outer block ``o`` through the AVX2 row kernel for 3-wide, stride-2
    windows (float32 only; see ``max_plane_values``). Up to three rows of the vertical window
    are handed to the kernel as they are, taller windows are reduced into ``column`` first."""
    cdef Py_ssize_t taps = v.count[j], gap = v.dil * h.length
    cdef const acc_t* r0
    cdef const acc_t* r1
    cdef const acc_t* r2
    if acc_t is float:
        if 1 <= taps <= 3:
            r0 = plane_rows + (o * v.length + v.begin[j]) * h.length
            r1 = r0 + (gap if taps > 1 else 0)
            r2 = r0 + (taps - 1) * gap
        else:
            max_columns(plane_rows, column, v, o, j, h.length, empty_value, half_kind)
            r0 = r1 = r2 = column
        max_windows_rows3(r0, r1, r2, target, h, h.hi, h.out_len, empty_value)
        if padded_start:
            ovp_max_k3s2_row_padded(r0, r1, r2, target, h.hi)
        else:
            max_windows_rows3(r0, r1, r2, target, h, 0, h.lo, empty_value)
            ovp_max_k3s2_row(r0 + h.begin[h.lo], r1 + h.begin[h.lo], r2 + h.begin[h.lo],
                             target + h.lo, h.hi - h.lo)


cdef inline void store_row(store_t* dst, const acc_t* src, Py_ssize_t n,
                           int half_kind) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        dst[i] = store(src[i], half_kind, <store_t*> NULL)


cdef void max_plane_values(const store_t* x, store_t* out, acc_t* scratch, acc_t* rows,
                           const Geometry* g, acc_t empty_value, int half_kind) noexcept nogil:
    """Max-pool one plane, values only. Axes before the last two are reduced by whole passes
    as in ``max_plane``; the last two then go one output row at a time: the rows of the
    second-to-last axis's window are reduced into one row (``rows``, in L1), and that row's
    windows are written straight into the output row. No plane-sized intermediate, no final
    copy. ``rows`` holds 3 * (last length + 2) + last output elements.

    Same taps in the same order as ``max_plane``, so the same result bits."""
    cdef Py_ssize_t a, o, j, outer = 1
    cdef Py_ssize_t n = g.naxes
    cdef AxisTable h = axis_table(g, n - 1)
    cdef AxisTable v
    cdef acc_t* column = rows
    cdef acc_t* phases = rows + h.length + 2
    cdef acc_t* buffer = rows + 3 * (h.length + 2)
    cdef acc_t* target
    cdef acc_t* dst = scratch
    cdef acc_t* src = NULL
    cdef const acc_t* plane_rows
    cdef bint direct = ((store_t is float and acc_t is float) or
                        (store_t is double and acc_t is double) or
                        (store_t is cython.longlong and acc_t is cython.longlong))
    # float32 rows (the input's, or the passes' result) with 3-wide, stride-2 windows along
    # the last axis: the AVX2 row kernel reduces the vertical and horizontal windows in one
    # vector loop.
    cdef bint k3s2 = (acc_t is float and OVP_HAVE_SIMD_ROWS and (n > 2 or store_t is float)
                      and h.step == 2 and h.taps == 3 and h.dil == 1 and h.hi > h.lo)
    # One element of padding before the row (ResNet's 3x3/s2/p1): window 0 holds the row's
    # first two elements, and the vector loop covers it too.
    cdef bint padded_start = (k3s2 and h.lo == 1 and h.count[0] == 2 and h.begin[0] == 0
                              and h.begin[1] == 1)
    if n == 1:
        target = <acc_t*> out if direct else buffer
        max_row(x, target, &h, phases, empty_value, half_kind)
        if not direct:
            store_row(out, buffer, h.out_len, half_kind)
        return
    if n > 2:
        max_pass(x, dst, <const int64_t*> NULL, <int64_t*> NULL, g, 0, empty_value, half_kind)
        for a in range(1, n - 2):
            src = dst
            dst = scratch + (a % 2) * g.scratch
            max_pass(<const acc_t*> src, dst, <const int64_t*> NULL, <int64_t*> NULL, g, a,
                     empty_value, half_kind)
        src = dst
    v = axis_table(g, n - 2)
    for a in range(n - 2):
        outer *= g.output[a]
    # The rows the vertical windows read (the row kernel's input): the input, or the passes'.
    plane_rows = <const acc_t*> src if n > 2 else <const acc_t*> x
    for o in range(outer):
        for j in range(v.out_len):
            target = (<acc_t*> out + (o * v.out_len + j) * h.out_len) if direct else buffer
            if k3s2:
                max_output_row_k3s2(plane_rows, column, &v, &h, o, j, padded_start, target,
                                    empty_value, half_kind)
            else:
                if n == 2:
                    max_columns(x, column, &v, o, j, h.length, empty_value, half_kind)
                else:
                    max_columns(<const acc_t*> src, column, &v, o, j, h.length, empty_value,
                                half_kind)
                max_row(<const acc_t*> column, target, &h, phases, empty_value, half_kind)
            if not direct:
                store_row(out + (o * v.out_len + j) * h.out_len, buffer, h.out_len, half_kind)


cdef int run_max(const store_t* x, store_t* out, Py_ssize_t planes, const IndexSpec* spec,
                 const Geometry* g, acc_t empty_value, int half_kind,
                 int num_threads) noexcept nogil:
    # Two plane-sized buffers, then the row buffers of max_plane_values.
    cdef Py_ssize_t last = g.length[g.naxes - 1]
    cdef Py_ssize_t p, per_thread = 2 * g.scratch + 3 * (last + 2) + g.output[g.naxes - 1]
    cdef bint with_index = spec.out64 != NULL or spec.out32 != NULL
    cdef acc_t* scratch = <acc_t*> malloc(num_threads * per_thread * sizeof(acc_t))
    cdef int64_t* index_scratch = NULL
    # Small 2-D planes with indices: each window on its own (see max_plane_direct).
    cdef bint direct = with_index and g.naxes == 2 and g.in_plane <= DIRECT_MAX_PLANE
    if scratch == NULL:
        return -1
    try:
        if with_index:
            index_scratch = <int64_t*> malloc(num_threads * per_thread * sizeof(int64_t))
            if index_scratch == NULL:
                return -1
        for p in prange(planes, schedule='guided', num_threads=num_threads):
            if direct:
                max_plane_direct(x + p * g.in_plane, out + p * g.out_plane, p, spec,
                                 scratch + threadid() * per_thread,
                                 index_scratch + threadid() * per_thread, g, empty_value,
                                 half_kind)
            elif with_index:
                max_plane(x + p * g.in_plane, out + p * g.out_plane, p, spec,
                          scratch + threadid() * per_thread,
                          index_scratch + threadid() * per_thread, g, empty_value, half_kind)
            else:
                max_plane_values(x + p * g.in_plane, out + p * g.out_plane,
                                 scratch + threadid() * per_thread,
                                 scratch + threadid() * per_thread + 2 * g.scratch, g,
                                 empty_value, half_kind)
    finally:
        free(scratch)
        free(index_scratch)
    return 0


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------

cdef Geometry make_geometry(const Py_ssize_t[::1] tables):
    """The geometry of one call from its packed tables (see ``pack_tables`` in pooling.py):
    ``[naxes, scratch, length[naxes], output[naxes], dilation[naxes], offset[naxes],
    stride[naxes], interior[2 * naxes], begin[sum(output)], count[sum(output)]]``. One array
    instead of nine: each typed-memoryview argument costs about as much as a tiny pooling."""
    cdef Geometry g
    cdef Py_ssize_t a, n = tables[0], windows = 0
    cdef const Py_ssize_t* t = &tables[0]
    g.naxes = n
    g.scratch = t[1]
    g.length = t + 2
    g.output = t + 2 + n
    g.dilation = t + 2 + 2 * n
    g.offset = t + 2 + 3 * n
    g.stride = t + 2 + 4 * n
    g.interior = t + 2 + 5 * n
    g.in_plane = 1
    g.out_plane = 1
    for a in range(n):
        g.in_plane *= g.length[a]
        g.out_plane *= g.output[a]
        windows += g.output[a]
    g.begin = t + 2 + 7 * n
    g.count = g.begin + windows
    return g


def avg_pool_planes(const store_t[:, ::1] x, store_t[:, ::1] out,
                    const Py_ssize_t[::1] tables, const int64_t[::1] divisor,
                    const double[::1] divisor_real, int half_kind, int num_threads):
    """Average-pool every plane of ``x`` (planes, in_plane) into ``out`` (planes, out_plane).

    ``tables`` are the packed window tables (:func:`make_geometry`), whose ``scratch`` is the
    size of one scratch buffer (the largest intermediate of the separable passes).
    ``divisor`` (out_plane,) holds each window's divisor, ``divisor_real`` the same as floats
    with +inf for 0. The caller has checked every size; at least one plane.
    """
    cdef Geometry g = make_geometry(tables)
    cdef Divisors divisors
    cdef int status
    divisors.count = &divisor[0]
    divisors.real = &divisor_real[0]
    with nogil:
        if store_t is double:
            status = run_avg(&x[0, 0], &out[0, 0], x.shape[0], &g, &divisors, half_kind,
                             num_threads, <double*> NULL)
        elif store_t is float or store_t is cython.ushort:
            status = run_avg(&x[0, 0], &out[0, 0], x.shape[0], &g, &divisors, half_kind,
                             num_threads, <float*> NULL)
        elif store_t is cython.longlong:
            status = run_avg(&x[0, 0], &out[0, 0], x.shape[0], &g, &divisors, half_kind,
                             num_threads, <wide_t*> NULL)
        else:
            status = run_avg(&x[0, 0], &out[0, 0], x.shape[0], &g, &divisors, half_kind,
                             num_threads, <long long*> NULL)
    if status != 0:
        raise MemoryError("ovpool: cannot allocate pooling scratch space")


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
    cdef Geometry g = make_geometry(tables)
    cdef IndexSpec spec
    cdef int status
    spec.out64 = &out_index64[0, 0] if out_index64 is not None else NULL
    spec.out32 = &out_index32[0, 0] if out_index32 is not None else NULL
    spec.plane_modulus = plane_modulus
    spec.offset_modulus = offset_modulus
    with nogil:
        if store_t is double:
            status = run_max(&x[0, 0], &out[0, 0], x.shape[0], &spec, &g,
                             <double> empty_value, half_kind, num_threads)
        elif store_t is float or store_t is cython.ushort:
            status = run_max(&x[0, 0], &out[0, 0], x.shape[0], &spec, &g,
                             <float> empty_value, half_kind, num_threads)
        else:
            status = run_max(&x[0, 0], &out[0, 0], x.shape[0], &spec, &g,
                             <long long> empty_value, half_kind, num_threads)
    if status != 0:
        raise MemoryError("ovpool: cannot allocate pooling scratch space")
