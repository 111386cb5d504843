// Average pooling: separable sum passes, then one division per output.
//
// Pooling a box is separable, so a plane is reduced one spatial axis at a time, outermost axis
// first. With the plane viewed as (outer, length, inner), the inner axis is contiguous and the
// sum over a window is a sum of whole contiguous rows, which vectorises. Partial sums live in
// the caller's scratch buffers (two of Geometry::scratch elements, used alternately).
//
// The order of every addition is fixed (each sum starts from +0 and adds taps in window order,
// axis by axis), so results are the same bits in every build and on every thread count: a
// sum that starts from +0 turns -0 into +0. The one exception is which payload survives when
// two NaNs are added: x86 keeps the first operand's, and the compiler may commute an addition
// (sum_windows, which the whole-plane sums and the passes' edge windows use, sums a window that
// came out NaN again with the first operand kept first: see first_operand_add).
// Sums are written `a = a + b`, never `a += b`: in C++17 the right side of `+=` is evaluated
// first, which leads gcc to put it first, unlike the C kernels this code replaced.
#ifndef OVPOOL_CORE_AVERAGE_HPP
#define OVPOOL_CORE_AVERAGE_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "max.hpp"
#include "simd/average_avx2.hpp"
#include "simd/avg_columns_avx2.hpp"
#include "simd/avg_strided_avx2.hpp"
#include "simd/short_lanes_avx2.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

template <class T> struct is_half : std::false_type {};
template <> struct is_half<f16> : std::true_type {};
template <> struct is_half<bf16> : std::true_type {};

// a + b as x86 adds them with a as the first operand, whatever order a compiler gives the
// operands: a NaN a (quieted), else a NaN b (quieted), else the sum (of two numbers: the same
// either way, the default NaN included when they are infinities of opposite signs). A plain
// `a + b` may come out as b + a (the compiler treats it as commutative), and when both are NaNs
// of different payloads x86 keeps the first operand's.
template <class A>
inline A first_operand_add(A a, A b) {
    static_assert(std::is_floating_point<A>::value, "floating-point sums");
    typedef typename std::conditional<sizeof(A) == 4, std::uint32_t, std::uint64_t>::type Bits;
    constexpr Bits quiet = Bits{1} << (std::numeric_limits<A>::digits - 2);
    if (a != a || b != b) {
        Bits bits;
        A nan = a != a ? a : b;
        std::memcpy(&bits, &nan, sizeof bits);
        bits |= quiet;
        std::memcpy(&nan, &bits, sizeof bits);
        return nan;
    }
    return a + b;
}

// The sum of one window of n taps dil apart, by `add`: from +0, tap by tap, except that long
// unit-step windows use eight partial sums (which the compiler turns into one vector
// accumulator), combined pairwise.
template <class A, class Src, class Add>
inline A window_sum(const Src* tap, index_t n, index_t dil, Add add) {
    A total = 0;
    index_t t = 0;
    if (dil == 1 && n >= 16) {
        A s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
        while (t + 8 <= n) {
            s0 = add(s0, load<A>(tap[t]));
            s1 = add(s1, load<A>(tap[t + 1]));
            s2 = add(s2, load<A>(tap[t + 2]));
            s3 = add(s3, load<A>(tap[t + 3]));
            s4 = add(s4, load<A>(tap[t + 4]));
            s5 = add(s5, load<A>(tap[t + 5]));
            s6 = add(s6, load<A>(tap[t + 6]));
            s7 = add(s7, load<A>(tap[t + 7]));
            t = t + 8;
        }
        total = add(add(add(s0, s1), add(s2, s3)), add(add(s4, s5), add(s6, s7)));
    }
    while (t < n) {
        total = add(total, load<A>(tap[t * dil]));
        t = t + 1;
    }
    return total;
}

// A window sum that came out NaN, again with every addition's first operand kept first (see
// first_operand_add): the NaN a sum gives is then the same in every build and every inlined
// copy, whichever order the compiler gave the plain additions. Out of line: NaN sums are rare.
template <class A, class Src>
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
A window_nan_sum(const Src* tap, index_t n, index_t dil) {
    return window_sum<A>(tap, n, dil, first_operand_add<A>);
}

// Sum windows first .. last-1 of one contiguous row, each on its own (window_sum). The
// compiler may order a plain addition's operands either way, which matters only for the NaN
// payload a sum of two NaNs keeps: a NaN sum is summed again with first_operand_add, so its
// bits are the same in every build.
template <class Src, class A>
inline void sum_windows(const Src* row, A* out, const index_t* begin, const index_t* count,
                        index_t first, index_t last, index_t dil) {
    for (index_t j = first; j < last; ++j) {
        const Src* tap = row + begin[j];
        A total = window_sum<A>(tap, count[j], dil, [](A a, A b) { return a + b; });
        if constexpr (std::is_floating_point<A>::value) {
            if (total != total) total = window_nan_sum<A>(tap, count[j], dil);
        }
        out[j] = total;
    }
}

// Whether a window along g's last axis has 16 or more taps: sum_windows sums such windows in
// eight partial sums when that axis is innermost (floats then round differently from a sum
// tap by tap), so paths that sum tap by tap leave such tables to the passes.
inline bool last_axis_partial_sums(const Geometry& g) {
    AxisTable w = axis_table(g, g.naxes - 1);
    for (index_t j = 0; j < w.out_len; ++j)
        if (w.count[j] >= 16) return true;
    return false;
}

// acc[i] += row[i] over a float16 row. The vectoriser cannot widen float16 by itself short of
// AVX512-FP16, so with F16C the conversion is spelled out, eight elements at a time.
inline void add_f16_row(float* acc, const f16* row, index_t n) {
    index_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
    index_t whole = n - n % 8;  // (a separate bound keeps the loop at six instructions)
    for (; i < whole; i += 8) {
        __m256 value = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i)));
        _mm256_storeu_ps(acc + i, _mm256_add_ps(_mm256_loadu_ps(acc + i), value));
    }
#endif
    for (; i < n; ++i) acc[i] = acc[i] + f16_to_f32(row[i].bits);
}

// acc[i] += row[i].
template <class Src, class A>
inline void accumulate_row(A* acc, const Src* row, index_t n) {
    if constexpr (std::is_same<Src, f16>::value) {
        add_f16_row(acc, row, n);
    } else {
        for (index_t i = 0; i < n; ++i) acc[i] = acc[i] + load<A>(row[i]);
    }
}

// dst[i] = (Add ? dst[i] : 0) + r[i] + r[gap + i] + ... over M runs (r = first), in that
// order, in one sweep over dst. dst never overlaps the runs (the passes read one buffer and
// write another); saying so lets the compiler vectorise without checking five pointers.
// Always inlined: sum_rows and sum_full_window_rows both call it, and a second caller made gcc
// leave 16-bit float sweeps out of line in sum_rows (a call and register saves per run: float16
// 8x12x61x42 k2,1 +16K instructions a call).
template <int M, bool Add, class Src, class A>
OVPOOL_FORCE_INLINE
inline void sweep_rows(A* __restrict dst, const Src* first, index_t gap, index_t n) {
    const Src* r0 = first;
    const Src* r1 = first + (M > 1 ? gap : 0);
    const Src* r2 = first + (M > 2 ? 2 * gap : 0);
    const Src* r3 = first + (M > 3 ? 3 * gap : 0);
    const Src* r4 = first + (M > 4 ? 4 * gap : 0);  // (more than four: 16-bit floats, int32 / int16 sums)
    const Src* r5 = first + (M > 5 ? 5 * gap : 0);
    const Src* r6 = first + (M > 6 ? 6 * gap : 0);
    const Src* r7 = first + (M > 7 ? 7 * gap : 0);
    // total + run 0 + run 1 + ... at element `at`, in run order (the order that makes float
    // sums exact to the specification's): one body for the scalar loop and every vector form,
    // each of which says how it loads a run and adds.
    auto add_runs = [&](auto total, index_t at, auto load, auto add) {
        total = add(total, load(r0 + at));
        if constexpr (M > 1) total = add(total, load(r1 + at));
        if constexpr (M > 2) total = add(total, load(r2 + at));
        if constexpr (M > 3) total = add(total, load(r3 + at));
        if constexpr (M > 4) total = add(total, load(r4 + at));
        if constexpr (M > 5) total = add(total, load(r5 + at));
        if constexpr (M > 6) total = add(total, load(r6 + at));
        if constexpr (M > 7) total = add(total, load(r7 + at));
        return total;
    };
    index_t i = 0;
#if OVPOOL_CORE_HAVE_AVX2
    // W sums a vector while they last; without Add, the last W overlap the vector before (the
    // same sums again: dst is not a run) rather than leaving up to W-1 to the scalar loop,
    // whose conversions and additions per element and run cost as much as the vectors before
    // them for runs of a few dozen elements (rows of 70 float16 with five taps).
    auto vector_sweep = [&](auto width, auto load_dst, auto zero, auto load, auto add, auto store) {
        constexpr index_t W = decltype(width)::value;
        auto one = [&](index_t at) {
            store(dst + at, add_runs(Add ? load_dst(dst + at) : zero, at, load, add));
        };
        if (Add && !std::is_same<A, std::int16_t>::value && n % W != 0 && n >= W) {
            // With Add, the last W sums are made first, from dst before the loop adds to it,
            // and stored after it (rewriting the overlapped sums with the same values),
            // rather than a scalar loop over the last n % W (the int32 sums of uint8
            // 4x4x31x31x17 k7,7,2 spent a tenth of their instructions there). (Not for int16
            // sums, which add up to eight runs in one sweep below 1024 elements.)
            const auto last = add_runs(load_dst(dst + n - W), n - W, load, add);
            for (; i + W <= n; i += W) one(i);
            store(dst + n - W, last);
            i = n;
            return;
        }
        for (; i + W <= n; i += W) one(i);
        if (!Add && i < n && n >= W) {
            one(n - W);
            i = n;
        }
    };
    auto load_ints = [](const A* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
    auto store_ints = [](A* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); };
    auto add32 = [](__m256i a, __m256i b) { return _mm256_add_epi32(a, b); };
    if constexpr (is_half<Src>::value && std::is_same<A, float>::value) {
        // 16-bit floats widened in registers (the vectoriser does not widen float16 by
        // itself), each lane adding its runs in the scalar loop's order from +0 or dst.
        vector_sweep(
            std::integral_constant<index_t, 8>{}, [](const float* p) { return _mm256_loadu_ps(p); },
            _mm256_setzero_ps(), [](const Src* p) { return simd::load8_f32(p); },
            [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); },
            [](float* p, __m256 v) { _mm256_storeu_ps(p, v); });
    }
    if constexpr (std::is_same<Src, float>::value && std::is_same<A, float>::value) {
        // float32 runs (the later passes' partial sums, and float32 inputs): gcc's own vector
        // loop spent about as much on its set-up and a remainder of up to seven elements one
        // at a time as on the additions for runs of a few dozen elements.
        auto load_floats = [](const float* p) { return _mm256_loadu_ps(p); };
        vector_sweep(std::integral_constant<index_t, 8>{}, load_floats, _mm256_setzero_ps(),
                     load_floats, [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); },
                     [](float* p, __m256 v) { _mm256_storeu_ps(p, v); });
    }
    if constexpr (std::is_same<Src, double>::value && std::is_same<A, double>::value) {
        // float64 runs, four at a time, for the reason above (and so that five to eight runs
        // go in one sweep, see sum_rows).
        auto load_doubles = [](const double* p) { return _mm256_loadu_pd(p); };
        vector_sweep(std::integral_constant<index_t, 4>{}, load_doubles, _mm256_setzero_pd(),
                     load_doubles, [](__m256d a, __m256d b) { return _mm256_add_pd(a, b); },
                     [](double* p, __m256d v) { _mm256_storeu_pd(p, v); });
    }
    if constexpr (std::is_same<A, std::int32_t>::value && std::is_integral<Src>::value &&
                  sizeof(Src) != 2) {
        // int32 sums of int64 inputs (their sums fit, so each input does: the low halves,
        // which the vectoriser narrows one at a time), of bytes or of int32 (gcc's own vector
        // loop spent as much on its set-up, checks and a remainder of up to 31 elements one at
        // a time as on the additions, for runs of a few dozen elements). Exact sums.
        vector_sweep(std::integral_constant<index_t, 8>{}, load_ints, _mm256_setzero_si256(),
                     [](const Src* p) { return simd::load8_i32(p); }, add32, store_ints);
    }
    if constexpr (std::is_same<A, std::int16_t>::value &&
                  (std::is_same<Src, std::int16_t>::value ||
                   (std::is_integral<Src>::value && sizeof(Src) == 1))) {
        // int16 sums of int16 runs (the int16 plane blocks' passes over whole rows of lanes)
        // or of bytes, sixteen at a time, for the reason above. Exact sums.
        auto load16 = [](const Src* p) {
            if constexpr (sizeof(Src) == 2) {
                return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
            } else {
                return load16_as_short(p);
            }
        };
        vector_sweep(std::integral_constant<index_t, 16>{}, load_ints, _mm256_setzero_si256(),
                     load16, [](__m256i a, __m256i b) { return _mm256_add_epi16(a, b); },
                     store_ints);
    }
#endif
    for (; i < n; ++i) {
        dst[i] = add_runs(Add ? dst[i] : A(0), i, [](const Src* p) { return load<A>(*p); },
                          [](A a, A b) { return A(a + b); });
    }
}

template <bool Add, class Src, class A>
inline void sweep_rows(A* dst, const Src* first, index_t gap, index_t rows, index_t n) {
    switch (rows) {
        case 1: sweep_rows<1, Add>(dst, first, gap, n); break;
        case 2: sweep_rows<2, Add>(dst, first, gap, n); break;
        case 3: sweep_rows<3, Add>(dst, first, gap, n); break;
        default: sweep_rows<4, Add>(dst, first, gap, n); break;
    }
}

#if OVPOOL_CORE_HAVE_AVX2
// The runs of bytes that sum_byte_rows_short adds at most: their sums stay within int16.
template <class Src>
constexpr index_t byte_rows_in_short =
    std::numeric_limits<std::int16_t>::max() / narrow_avg_accumulator<Src>::largest;

// sum_rows for int32 sums of 5 to byte_rows_in_short runs of n >= 16 int8 / uint8 elements:
// sixteen sums at a time held in int16 lanes over all the runs, widened to int32 once at the
// store, rather than eight int32 lanes per run, and four runs per sweep over dst with the
// sums reloaded and stored again for each further run (uint8 windows of 9 or 10 rows of
// 3807 elements: about five instructions an element, two here). Exact sums, the same in any
// order.
template <class Src>
inline void sum_byte_rows_short(std::int32_t* dst, const Src* first, index_t gap, index_t rows,
                                index_t n) {
    // Sums of 16 * V elements from `at`, V vectors of sixteen held over all the runs (a run's
    // loads share its pointer and the loop's count).
    auto chunk = [&](auto vectors, index_t at) {
        constexpr int V = decltype(vectors)::value;
        __m256i total[V];
        for (int v = 0; v < V; ++v) total[v] = _mm256_setzero_si256();
        const Src* r = first + at;
        for (index_t t = 0; t < rows; ++t, r += gap) {
            for (int v = 0; v < V; ++v) {
                total[v] = _mm256_add_epi16(total[v], load16_as_short(r + 16 * v));
            }
        }
        for (int v = 0; v < V; ++v) {
            std::int32_t* d = dst + at + 16 * v;
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(d),
                                _mm256_cvtepi16_epi32(_mm256_castsi256_si128(total[v])));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 8),
                                _mm256_cvtepi16_epi32(_mm256_extracti128_si256(total[v], 1)));
        }
    };
    const std::integral_constant<int, 4> four;
    const std::integral_constant<int, 1> one;
    index_t i = 0;
    for (; i + 64 <= n; i += 64) chunk(four, i);
    // (the last sums as the last 64 or 16, overlapping sums already written: dst is not a run)
    if (i < n && n >= 64) {
        chunk(four, n - 64);
        return;
    }
    for (; i + 16 <= n; i += 16) chunk(one, i);
    if (i < n) chunk(one, n - 16);
}
#endif

// dst[i] = 0 + first[i] + first[gap + i] + ... (`rows` runs of n elements `gap` apart), added
// in that order: the same sums as zeroing dst and adding run by run. Up to four runs go in
// each sweep over dst (with AVX2, up to eight for 16-bit floats and int32 / int16 sums), so dst is
// written once for windows of up to four taps; without AVX2, 16-bit float runs go run by run
// instead (float16 through the F16C row converter).
template <class Src, class A>
inline void sum_rows(A* dst, const Src* first, index_t gap, index_t rows, index_t n) {
    if ((is_half<Src>::value && !OVPOOL_CORE_HAVE_AVX2) || rows < 1) {
        for (index_t i = 0; i < n; ++i) dst[i] = 0;
        for (index_t t = 0; t < rows; ++t) accumulate_row(dst, first + t * gap, n);
        return;
    }
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<A, std::int32_t>::value && std::is_integral<Src>::value &&
                  sizeof(Src) == 1) {
        // (Long adjacent runs of many rows go run by run, below, as a stream.)
        const bool stream = gap == n && n >= 64 && rows > 16;
        if (rows > 4 && rows <= byte_rows_in_short<Src> && n >= 16 && !stream) {
            sum_byte_rows_short(dst, first, gap, rows, n);
            return;
        }
    }
    if constexpr (is_half<Src>::value || std::is_same<A, float>::value ||
                  std::is_same<A, double>::value ||
                  std::is_same<A, std::int32_t>::value || std::is_same<A, std::int16_t>::value) {
        // 16-bit floats, float32 / float64 and int32 / int16 sums: five to eight runs in one
        // sweep too (float64 1x633x18x89 k5,7 same: 10.7M -> 8.8M instructions a call, two
        // fewer sweeps over a block's 128 KiB of sums; 16-bit floats are converted as they
        // load, so a second sweep would reload and restore dst for little; int32 sums of 5-7
        // runs: uint8 1x198x30x83 k4,6 d2,2, 171 -> 160 us a call on one thread), except long
        // adjacent runs (below). float32 sums of
        // adjacent runs too: five to eight of them are a window of a few rows (the plane
        // blocks' rows of 16 lanes, held in L2), not the long windows of whole rows that
        // stream from memory faster run by run (float16 8x91x24x15 k7,3 s2,1 in blocks: the
        // seven runs of each window summed in four sweeps over dst). int16 sums (of bytes,
        // or of the int16 plane blocks' lanes) stream only from 1024 elements on: their rows
        // of a few hundred are in cache, where two more sweeps over dst for a window of six
        // rows cost more than they gain (int8 rows of 138, uint8 blocks' rows of 128).
        constexpr index_t long_run = std::is_same<A, std::int16_t>::value ? 1024 : 64;
        if (!(gap == n && n >= long_run) || std::is_same<A, float>::value) {
            // (One to four runs here too, not through the sweep_rows that picks among them:
            // with the sweeps always inlined, that one grew out of line, a call per window,
            // uint8 8x585x7x8 k6,3 in int16 blocks +56K instructions a call.)
            switch (rows) {
                case 1: sweep_rows<1, false>(dst, first, gap, n); return;
                case 2: sweep_rows<2, false>(dst, first, gap, n); return;
                case 3: sweep_rows<3, false>(dst, first, gap, n); return;
                case 4: sweep_rows<4, false>(dst, first, gap, n); return;
                case 5: sweep_rows<5, false>(dst, first, gap, n); return;
                case 6: sweep_rows<6, false>(dst, first, gap, n); return;
                case 7: sweep_rows<7, false>(dst, first, gap, n); return;
                case 8: sweep_rows<8, false>(dst, first, gap, n); return;
                default: break;
            }
        }
    }
#endif
    index_t t = std::min<index_t>(rows, 4);
    sweep_rows<false>(dst, first, gap, t, n);
    if (gap == n && n >= 64) {
        // Long adjacent runs (a window of whole rows of a large plane): run by run reads the
        // input as one sequential stream, which large inputs stream from memory faster than
        // four runs at once (adaptive 224x224 -> 7x7 float32: 10 ms against 6 ms on one
        // thread); short runs gain more from writing dst once per four.
        for (; t < rows; ++t) sweep_rows<1, true>(dst, first + t * gap, gap, n);
        return;
    }
    for (; t < rows; t += 4) sweep_rows<true>(dst, first + t * gap, gap, std::min<index_t>(rows - t, 4), n);
}

// dst[i] = 0 + src[i] + src[gap + i] + ... (`rows` runs of n elements), i < n, element by
// element: the sums of sum_rows, for runs of a few elements.
template <class Src, class A>
inline void sum_rows_scalar(A* dst, const Src* src, index_t gap, index_t rows, index_t n) {
    for (index_t i = 0; i < n; ++i) {
        A total = 0;
        for (index_t t = 0; t < rows; ++t) total = total + load<A>(src[t * gap + i]);
        dst[i] = total;
    }
}

// d[k] = 0 + s[k] + s[gap + k] + ... (`rows` runs), k < W: the sums of sum_rows, in the
// order of sum_rows, held in registers for the whole window (W lanes, one or two vectors).
template <index_t W, class Src, class A>
inline void sum_rows_chunk(A* d, const Src* s, index_t gap, index_t rows) {
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (W == 16 && simd::has_sum_rows16<Src, A>) {
        simd::sum_rows16(d, s, gap, rows);
        return;
    }
    if constexpr (W == 8 && simd::has_sum_rows8<Src, A>) {
        simd::sum_rows8(d, s, gap, rows);
        return;
    }
    if constexpr (W == 4 && simd::has_sum_rows8<Src, A>) {
        simd::sum_rows4(d, s, gap, rows);
        return;
    }
#endif
    A acc[W];
    for (index_t k = 0; k < W; ++k) acc[k] = 0;
    for (index_t t = 0; t < rows; ++t) {
        const Src* r = s + t * gap;
        for (index_t k = 0; k < W; ++k) acc[k] = acc[k] + load<A>(r[k]);
    }
    for (index_t k = 0; k < W; ++k) d[k] = acc[k];
}

// sum_rows for short runs (n elements, n <= 16), a window at a time in registers: sixteen
// in one loop over the runs (the lane axis of the plane blocks, avg_blocks.hpp), else whole
// chunks of eight (or four), the last one overlapping the one before when n is not a
// multiple (it rewrites the same sums), so that no element is summed on its own.
template <class Src, class A>
inline void sum_short_rows(A* d, const Src* s, index_t gap, index_t rows, index_t n) {
    if (n == 16) {
        sum_rows_chunk<16>(d, s, gap, rows);
        return;
    }
    if (n >= 8) {
        index_t i = 0;
        for (; i + 8 <= n; i += 8) sum_rows_chunk<8>(d + i, s + i, gap, rows);
        if (i < n) sum_rows_chunk<8>(d + n - 8, s + n - 8, gap, rows);
        return;
    }
    if (n >= 4) {
        sum_rows_chunk<4>(d, s, gap, rows);
        if (n > 4) sum_rows_chunk<4>(d + n - 4, s + n - 4, gap, rows);
        return;
    }
    sum_rows_scalar(d, s, gap, rows, n);
}

// One window of every row: dst[o * dst_step + i] = 0 + src[o * src_step + i] +
// src[o * src_step + gap + i] + ... (`rows` runs of n elements `gap` apart), for o < outer.
// The same sums, in the same order, as sum_rows row by row (and as sum_windows for windows of
// fewer than 16 taps or integer sums), without a call and loop set-up per row for runs of a
// few elements: for the edge windows of small planes.
// sum_window_rows for runs of one element and R taps: dst[o * dst_step] = 0 + src[o *
// src_step] + src[o * src_step + gap] + ... for o < outer, the taps unrolled (a loop of a few
// taps per row cost about seven instructions a tap: the edge windows of uint8 198 planes of
// 30x83 k4,6 d2,2 "same" took a third of the call).
template <int R, class Src, class A>
inline void sum_window_column(A* dst, index_t dst_step, const Src* src, index_t src_step,
                              index_t gap, index_t outer) {
    for (index_t o = 0; o < outer; ++o) {
        const Src* s = src + o * src_step;
        A total = 0;
        for (int t = 0; t < R; ++t) total = total + load<A>(s[t * gap]);
        dst[o * dst_step] = total;
    }
}

template <class Src, class A>
inline void sum_window_rows(A* dst, index_t dst_step, const Src* src, index_t src_step,
                            index_t gap, index_t rows, index_t n, index_t outer) {
    if (n == 1) {
        switch (rows) {
            case 1: sum_window_column<1>(dst, dst_step, src, src_step, gap, outer); return;
            case 2: sum_window_column<2>(dst, dst_step, src, src_step, gap, outer); return;
            case 3: sum_window_column<3>(dst, dst_step, src, src_step, gap, outer); return;
            case 4: sum_window_column<4>(dst, dst_step, src, src_step, gap, outer); return;
            case 5: sum_window_column<5>(dst, dst_step, src, src_step, gap, outer); return;
            case 6: sum_window_column<6>(dst, dst_step, src, src_step, gap, outer); return;
            case 7: sum_window_column<7>(dst, dst_step, src, src_step, gap, outer); return;
            case 8: sum_window_column<8>(dst, dst_step, src, src_step, gap, outer); return;
            default: break;
        }
    }
    for (index_t o = 0; o < outer; ++o) {
        A* d = dst + o * dst_step;
        const Src* s = src + o * src_step;
        if (n > 16) {
            sum_rows(d, s, gap, rows, n);
        } else if (n >= 4) {
            sum_short_rows(d, s, gap, rows, n);
        } else {
            sum_rows_scalar(d, s, gap, rows, n);
        }
    }
}

// The full windows [lo, hi) of `outer` rows along their contiguous axis, for strides above
// one: the window sums starting at every position, 0 + x[i] + x[i + dil] + ... (one long
// vectorised sum_rows over a run of rows, as far as a stack buffer holds), then every
// step-th of them. The same additions in the same order as window by window.
// A buffer of `room` elements within `space` (room + dense_slack<A> elements) whose address is
// 2 KiB away from `near`'s modulo 4 KiB: a sweep that loads from `near` and stores to the
// buffer then never has a load whose address matches a recent store's low twelve bits, which
// the processor takes for a dependency and stalls on ("4K aliasing": one such layout made
// int32 rows of 825 twice as slow, depending only on where the input lay).
template <class A> constexpr index_t dense_slack = 4096 / sizeof(A);
template <class A, class Src>
inline A* dense_buffer_near(A* space, const Src* near) {
    std::uintptr_t from = reinterpret_cast<std::uintptr_t>(space);
    std::uintptr_t to = reinterpret_cast<std::uintptr_t>(near) + 2048;
    return space + ((to - from) % 4096) / sizeof(A);
}

// out[j] = sums[j * step] for j < n, reading no element of sums from `avail` on (avail >
// (n - 1) * step): the strided windows' sums out of the dense ones. With AVX2, 32-bit sums
// 2 to 4 apart go eight at a time, each lane permuted out of the step vectors holding them
// (simd::phase8; the scalar loop took two thirds of int8 1x68x3813 k4 s3 d3's time), and
// int16 sums sixteen at a time, the OR of one byte shuffle of each vector (simd::phase16),
// as far as those vectors stay before `avail`. A copy, so the same bits.
template <class A>
inline void pick_strided(A* out, const A* sums, index_t step, index_t n, index_t avail) {
    (void)avail;  // (bounds the vector picks only, which the baseline build has not)
    index_t j = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<A, std::int16_t>::value) {
        const index_t groups = std::min(n, avail / step) / 16 * 16;  // (reads below avail)
        auto pick = [&](auto width) {
            constexpr int S = decltype(width)::value;
            for (; j < groups; j += 16) {
                __m256i in[S];
                simd::load_groups16<S>(sums + j * S, in);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), simd::phase16<S>(in, 0));
            }
        };
        with_constant<2, 4>(step, pick);
    }
    if constexpr (sizeof(A) == 4) {
        const index_t groups = std::min(n, avail / step) / 8 * 8;  // (reads below avail)
        auto pick = [&](auto width) {
            constexpr int S = decltype(width)::value;
            for (; j < groups; j += 8) {
                __m256 in[S];
                const float* from = reinterpret_cast<const float*>(sums + j * S);
                for (int v = 0; v < S; ++v) in[v] = _mm256_loadu_ps(from + 8 * v);
                _mm256_storeu_ps(reinterpret_cast<float*>(out + j), simd::phase8<S>(in, 0));
            }
        };
        with_constant<2, 4>(step, pick);
    }
#endif
    for (; j < n; ++j) out[j] = sums[j * step];
}

// Whether sum_last_axis takes w's full windows from dense sums (sum_strided_windows) when the
// columns do not take them: up to four times the additions, but in vectors, rather than one
// strided element at a time. (16-bit floats also with stride 2 and two taps: their strided
// loop converts and adds one element at a time, the dense sums eight.)
template <class Src, class A>
inline bool dense_strided_sums(const AxisTable& w) {
    return (w.step > 2 || (is_half<Src>::value && w.step == 2)) && w.step <= 4 &&
           (w.taps > 2 || (is_half<Src>::value && w.taps > 1)) && !std::is_same<A, wide_t>::value;
}

// Whether sum_strided_windows takes w's windows from one phase of the rows (one-byte inputs
// whose taps are a multiple of the stride apart, dil = apart * step: every tap of the full
// windows is in the phase of elements begin[lo] + step * i, and window lo + j adds phase
// elements j, j + apart, ...). The phase is picked once (byte shuffles, max.hpp's
// pick_strided) and its windows summed at unit step: a third of the additions of the dense
// sums for step 3 (int8 1x68x3813 k4 s3 d3), and no picks of sums.
template <class Src>
inline bool phase_windows(const AxisTable& w) {
    return sizeof(Src) == 1 && w.dil % w.step == 0 && (w.taps - 1) * (w.dil / w.step) < 1024;
}

// Whether sum_strided_windows takes w's full windows from every phase of the rows that the
// taps read: 4- and 8-byte inputs (float64 sums, int32 inputs' int32 or int64 sums; float32
// windows go through simd::strided_last_axis, int64 inputs' 128-bit sums do not vectorise),
// strides 2 to 4. Each element is copied once into its phase and each window adds its taps
// from there at unit step: the taps' additions only, where the dense sums add at every
// position (step times as many) and the strided loop reads one element at a time (float64
// 4x130x502 k4 s2: 2.54M -> 1.50M instructions a call). Where the phases are picked by lane
// permutes (8-byte elements two apart, 4-byte ones two to four apart: see max.hpp's
// pick_strided), and for rows of 16 full windows or more, as the phases are made row by row
// (float64 8x2x132x85 k3,5 s4,3, 27 windows a row three apart picked one at a time: 0.48M ->
// 0.75M).
template <class Src, class A>
constexpr bool wide_phase_types =
    sizeof(Src) >= 4 && !std::is_same<A, float>::value && !std::is_same<A, wide_t>::value;

template <class Src, class A>
inline bool wide_phase_windows(const AxisTable& w) {
    return wide_phase_types<Src, A> && w.step >= 2 && w.step <= (sizeof(Src) == 8 ? 2 : 4) &&
           w.taps >= 2 && w.taps <= 64 && (w.taps - 1) * w.dil / w.step < 256 &&
           w.hi - w.lo >= 16;
}

// dst[i] = 0 + runs[0][i] + runs[1][i] + ... (`count` runs of n elements), added in that order:
// sum_rows' sums for runs that are not equally spaced. Up to four runs a sweep over dst.
template <class Src, class A>
inline void sum_runs(A* __restrict dst, const Src* const* runs, index_t count, index_t n) {
    for (index_t t = 0; t < count; t += 4) {
        with_constant<1, 4>(std::min<index_t>(4, count - t), [&](auto width) {
            constexpr int K = decltype(width)::value;
            const Src* r[K];
            for (int u = 0; u < K; ++u) r[u] = runs[t + u];
            if (t == 0) {
                for (index_t i = 0; i < n; ++i) {
                    A total = 0;
                    for (int u = 0; u < K; ++u) total = total + load<A>(r[u][i]);
                    dst[i] = total;
                }
            } else {
                for (index_t i = 0; i < n; ++i) {
                    A total = dst[i];
                    for (int u = 0; u < K; ++u) total = total + load<A>(r[u][i]);
                    dst[i] = total;
                }
            }
        });
    }
}

// The full windows of `outer` rows through the rows' phases (phase_windows,
// wide_phase_windows): tap t of window lo + j is element j + q of phase p of the row from
// begin[lo], where t * dil = q * step + p, phase p being the elements p, p + step, p + 2 step,
// ... Pieces of `each` windows, each phase's elements of a piece side by side in a stack
// buffer; only phase 0 when the taps are a multiple of the stride apart (then equally spaced
// in it: sum_rows). Taps added in window order, so the same sums as the strided loop.
template <class Src, class A>
void sum_phases_windows(const Src* src, A* dst, const AxisTable& w, index_t outer) {
    constexpr index_t room = 16384 / sizeof(Src);
    Src space[room];
    const bool one = w.dil % w.step == 0;
    const index_t phases = one ? 1 : w.step;
    // (phase_windows, wide_phase_windows: reach < 1024, and < 256 for strides 2 to 4)
    const index_t block = room / phases, reach = (w.taps - 1) * w.dil / w.step;
    const index_t each = block - reach, n = w.hi - w.lo;
    const Src* end = src + outer * w.length;
    const Src* runs[64];  // (several phases: wide_phase_windows, taps <= 64)
    for (index_t o = 0; o < outer; ++o) {
        const Src* row = src + o * w.length + w.begin[w.lo];
        A* out = dst + o * w.out_len + w.lo;
        for (index_t j0 = 0; j0 < n; j0 += each) {
            const index_t m = std::min(each, n - j0);
            const Src* from = row + j0 * w.step;
            for (index_t p = 0; p < phases; ++p) {
                // (the elements a window reads, and none past the input's end)
                const index_t readable = end - (from + p);
                const index_t count = std::min(m + reach, (readable + w.step - 1) / w.step);
                pick_strided(from + p, space + p * block, count, w.step, readable,
                             room - p * block);
            }
            if (one) {
                sum_rows(out + j0, space, w.dil / w.step, w.taps, m);
                continue;
            }
            for (index_t t = 0; t < w.taps; ++t) {
                const index_t at = t * w.dil;
                runs[t] = space + (at % w.step) * block + at / w.step;
            }
            sum_runs(out + j0, runs, w.taps, m);
        }
    }
}

template <class Src, class A>
void sum_strided_windows(const Src* src, A* dst, const AxisTable& w, index_t outer) {
    if constexpr (sizeof(Src) == 1 || wide_phase_types<Src, A>) {
        if (phase_windows<Src>(w) || wide_phase_windows<Src, A>(w)) {
            sum_phases_windows(src, dst, w, outer);
            return;
        }
    }
    constexpr index_t room = 2048;
    A space[room + dense_slack<A>];
    index_t n = w.hi - w.lo;
    index_t reach = w.step * (n - 1) + 1;  // positions one row's full windows start at
    if (reach > room) {
        // Long rows: pieces of `each` windows.
        index_t each = (room - 1) / w.step + 1;
        for (index_t o = 0; o < outer; ++o) {
            const Src* row = src + o * w.length + w.begin[w.lo];
            A* out = dst + o * w.out_len + w.lo;
            for (index_t j0 = 0; j0 < n; j0 += each) {
                index_t m = std::min(each, n - j0);
                A* dense = dense_buffer_near(space, row + j0 * w.step);
                const index_t span = w.step * (m - 1) + 1;
                sum_rows(dense, row + j0 * w.step, w.dil, w.taps, span);
                pick_strided(out + j0, dense, w.step, m, span);
            }
        }
        return;
    }
    index_t group = (room - reach) / w.length + 1;  // rows whose positions fit in `dense`
    for (index_t o0 = 0; o0 < outer; o0 += group) {
        index_t rows = std::min(group, outer - o0);
        const Src* first = src + o0 * w.length + w.begin[w.lo];
        A* dense = dense_buffer_near(space, first);
        const index_t summed = (rows - 1) * w.length + reach;
        sum_rows(dense, first, w.dil, w.taps, summed);
        for (index_t r = 0; r < rows; ++r) {
            pick_strided(dst + (o0 + r) * w.out_len + w.lo, dense + r * w.length, w.step, n,
                         summed - r * w.length);
        }
    }
}

// The edge windows (those outside [lo, hi)) of `outer` rows along their contiguous axis, a
// window at a time for all rows (sum_window_rows), rather than row by row: the sums of
// sum_windows, whose partial sums a float window of 16 taps or more keeps. With NanAsWindows,
// a NaN float sum is summed again as sum_windows sums it (window_nan_sum), for the rows that
// summed their edges by sum_windows before (so that their NaN bits stay the same); the one run
// over all rows in sum_last_axis has always taken sum_window_rows' own.
template <bool NanAsWindows, class Src, class A>
void sum_edge_columns(const Src* src, A* dst, const AxisTable& w, index_t outer) {
    for (index_t j = 0; j < w.out_len; ++j) {
        if (j == w.lo) j = w.hi;
        if (j >= w.out_len) break;
        if (std::is_floating_point<A>::value && w.count[j] >= 16) {
            for (index_t o = 0; o < outer; ++o) {
                sum_windows(src + o * w.length, dst + o * w.out_len, w.begin, w.count, j, j + 1,
                            w.dil);
            }
            continue;
        }
        sum_window_rows(dst + j, w.out_len, src + w.begin[j], w.length, w.dil, w.count[j], 1,
                        outer);
        if constexpr (NanAsWindows && std::is_floating_point<A>::value) {
            for (index_t o = 0; o < outer; ++o) {
                A& total = dst[o * w.out_len + j];
                if (total != total) {
                    total = window_nan_sum<A>(src + o * w.length + w.begin[j], w.count[j], w.dil);
                }
            }
        }
    }
}

// The full windows [lo, hi) of `outer` rows of a pass viewed as (outer, length, inner): at
// unit step a row's full windows are one run of (hi - lo) * inner sums (windows along the
// contiguous last axis: inner == 1), else each window is its own run of `inner` sums (strided
// windows along an axis before the last). With AVX2, float sums of one to eight taps go
// straight to sweep_rows<taps> with the tap count picked once, the sweep sum_rows would pick
// for each run (float16 8x12x61x42 k2,1 s3,2 d3,1: 2016 windows of 42 sums a call, each
// paying sum_rows' dispatch, about half the instructions of its additions).
template <class Src, class A>
void sum_full_window_rows(const Src* src, A* dst, const AxisTable& w, index_t outer,
                          index_t inner = 1) {
    const bool unit = w.step == 1;
    const index_t runs = w.hi - w.lo, n = unit ? runs * inner : inner, gap = w.dil * inner;
    const index_t row_in = w.length * inner, row_out = w.out_len * inner;
    const index_t next = w.step * inner;
    A* const d0 = dst + w.lo * inner;
    const Src* const s0 = src + w.begin[w.lo] * inner;
    // (the unit-step rows without a loop over runs: bfloat16 4480 rows of 56 sums a call paid
    // 27 more instructions a row for one)
    auto each_run = [&](auto sum) {
        if (unit) {
            for (index_t o = 0; o < outer; ++o) sum(d0 + o * row_out, s0 + o * row_in);
            return;
        }
        for (index_t o = 0; o < outer; ++o) {
            for (index_t r = 0; r < runs; ++r) {
                sum(d0 + o * row_out + r * inner, s0 + o * row_in + r * next);
            }
        }
    };
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (is_half<Src>::value && std::is_same<A, float>::value) {
        // 16-bit floats whose windows share runs (taps a multiple of the stride apart, q =
        // dil / step windows apart): the windows c, c + q, c + 2q, ... of a row read every
        // q-th run from run c, K consecutive of them each, so they slide over those runs
        // (simd::slide_windows), widening each run once rather than once per window (float16
        // 1x14x124x144 k7,7 d2,1: each input row widened seven times). Columns of eight or
        // sixteen elements, the last overlapping the one before (the same sums again). Only
        // when each class has a few windows more than taps: the slots before its first window
        // and after its last sum runs too.
        const index_t q = w.dil / w.step;
        if (w.dil % w.step == 0 && w.taps >= 2 && w.taps <= 8 && inner >= 8 &&
            runs >= q * (w.taps + 2)) {
            const int vectors = w.taps <= 6 && inner >= 16 ? 2 : 1;
            const index_t width = 8 * vectors;
            for (index_t o = 0; o < outer; ++o) {
                for (index_t c = 0; c < q; ++c) {
                    A* out = d0 + o * row_out + c * inner;
                    const Src* in = s0 + o * row_in + c * w.step * inner;
                    const index_t windows = (runs - c + q - 1) / q;
                    for (index_t at = 0;; at += width) {
                        at = std::min(at, inner - width);
                        simd::slide_windows(out + at, q * inner, in + at, gap, windows, w.taps,
                                            vectors);
                        if (at + width >= inner) break;
                    }
                }
            }
            return;
        }
    }
    if constexpr (std::is_same<A, float>::value) {
        auto rows = [&](auto taps) {
            constexpr int M = decltype(taps)::value;
            each_run([&](A* d, const Src* s) { sweep_rows<M, false>(d, s, gap, n); });
            return true;
        };
        if (with_constant<1, 8>(w.taps, rows)) return;
    }
#endif
    each_run([&](A* d, const Src* s) { sum_rows(d, s, gap, w.taps, n); });
}

// sum_pass for the last axis, where windows run along contiguous memory. Full windows are
// summed tap by tap across all outputs, so the loop over outputs vectorises (specialised for
// the common strides 1 and 2).
//
// With stride 1 and as many outputs as inputs per row (k odd, "same" padding), full window j
// of row o starts at flat input o * length + j + (begin[lo] - lo): a fixed offset from its
// flat output position, so the full windows of all rows are summed as one long run (small
// planes then pay one loop set-up, not one per row); the edge windows, which that run also
// covers with sums across row ends, are then rewritten.
template <class Src, class A>
void sum_last_axis(const Src* src, A* dst, const Geometry& g, index_t axis, index_t outer) {
    AxisTable w = axis_table(g, axis);
    // (Narrower rows than hi - lo >= 8 go window by window below, where windows of 16 or more
    // taps are summed in eight partial sums: a different rounding, except for exact integer
    // sums. The choice must not depend on `outer`, which depends on the blocking.)
    // A run over all rows also sums the edge positions, rewritten after: worth it when the
    // full windows are at least half of the row.
    bool sequential = w.taps < 16 || !std::is_floating_point<A>::value;
    bool wide = w.hi - w.lo >= 8 || (sequential && 2 * (w.hi - w.lo) >= w.out_len);
    if (w.step == 1 && w.length == w.out_len && outer > 1 && w.hi > w.lo && wide) {
        index_t span = (outer - 1) * w.out_len + w.hi - w.lo;
        sum_rows(dst + w.lo, src + w.begin[w.lo], w.dil, w.taps, span);
        sum_edge_columns<false>(src, dst, w, outer);
        return;
    }
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<A, float>::value && simd::has_columns<Src, A>) {
        // Float windows 2 to 4 apart: eight windows of a row at a time, each tap's elements
        // gathered by a blend or shuffle of its loads (simd/avg_strided_avx2.hpp), rather
        // than eight rows transposed into columns and back.
        if (simd::strided_suit<Src>(w)) {
            simd::strided_last_axis(src, dst, w, outer,
                                    [&](const Src* row, A* out, index_t j0, index_t j1) {
                                        sum_windows(row, out, w.begin, w.count, j0, j1, w.dil);
                                    });
            return;
        }
    }
    if constexpr (simd::has_columns16<Src, A>) {
        // int16 sums of irregular (adaptive) windows: sixteen rows at a time, each window the
        // difference of two running sums (simd/avg_columns_avx2.hpp), from four rows on as
        // the int32 columns below.
        if (outer >= 4 && simd::prefix_columns_suit(w)) {
            simd::prefix_columns_last_axis16(src, dst, w, outer);
            return;
        }
        // int16 sums of regular windows strided two or more apart: sixteen rows at a time in
        // columns, from 16 rows on (as the int32 columns below), rather than from dense sums
        // or one strided element at a time.
        if (outer >= 16 && simd::short_columns_suit(w)) {
            simd::columns_last_axis16(src, dst, w, outer);
            return;
        }
    }
    if constexpr (simd::has_columns<Src, A>) {
        // (Integer sums of regular strided windows: from 16 rows, else the part-empty groups
        // of eight and the set-up per call cost more than the dense sums save: int8 1x68x3813
        // k4 s3 d3, in blocks of four rows, 1.10 -> 1.76 M instructions a call; and windows of
        // two taps or more: one-tap windows, a plain subsample, are no faster transposed in
        // and out: int8 8x38x854 k1 s2, 0.086 -> 0.093 ms on one thread. Irregular windows,
        // which the passes sum one at a time, gain from four rows on, 64-bit inputs included.)
        const bool floats = std::is_floating_point<A>::value;
        const bool take = floats || simd::columns_irregular(w)
                              ? outer >= 4
                              : sizeof(Src) < 8 && outer >= 16 && w.taps > 1;
        if (take && simd::columns_suit(w, !floats)) {
            // Strided or irregular (adaptive) windows, eight rows at a time in columns
            // (simd/avg_columns_avx2.hpp).
            simd::columns_last_axis(src, dst, w, outer);
            return;
        }
    }
#endif
    // Whether every window is summed by sum_window_rows below: asked only of short rows (a
    // scan of every window of every row's table on each call took 0.67 M of float16 62 rows
    // of 4207 k5's 1.5 M instructions a call).
    bool short_windows = w.hi - w.lo < 8 && w.out_len < 8;
    if (std::is_floating_point<A>::value)
        for (index_t j = 0; j < w.out_len && short_windows; ++j) short_windows = w.count[j] < 16;
    if (short_windows) {
        // Short rows of short windows: one window at a time, each for all rows at once, in
        // the same order as sum_windows sums them (see sum_window_rows). (Longer rows are
        // faster row by row, below: their writes stay sequential; so are rows with a float
        // window of 16 or more taps, which sum_windows sums in partial sums, row by row.)
        index_t o = 0;
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (simd::has_last_axis_rows8<Src, A>) {
            // Rows of at most eight elements: eight rows at a time, transposed (reading
            // eight elements from each row's start, which must stay within the rows).
            if (w.length <= 8 && w.out_len <= 8) {
                for (; o + 8 <= outer && (o + 7) * w.length + 8 <= outer * w.length; o += 8) {
                    simd::last_axis_rows8(src + o * w.length, dst + o * w.out_len, w.length,
                                          w.out_len, w.begin, w.count, w.dil);
                }
            }
        }
#endif
        for (index_t j = 0; j < w.out_len; ++j) {
            sum_window_rows(dst + o * w.out_len + j, w.out_len, src + o * w.length + w.begin[j],
                            w.length, w.dil, w.count[j], 1, outer - o);
        }
        return;
    }
    if (w.step == 1 && w.hi - w.lo >= 8) {
        // Unit-step rows whose windows the run above does not take (fewer outputs than
        // inputs, or one row): the full windows row by row, the edge windows a column at a
        // time (float16 8x6x72x70 k5,3 p4,1/0,0: the 35 rows of 70 sums of each plane paid
        // two sum_windows calls and a sum_rows dispatch each).
        sum_full_window_rows(src, dst, w, outer);
        sum_edge_columns<true>(src, dst, w, outer);
        return;
    }
    // Strided full windows from dense sums or phases (see dense_strided_sums and
    // wide_phase_windows).
    const bool dense = dense_strided_sums<Src, A>(w) || wide_phase_windows<Src, A>(w);
    for (index_t o = 0; o < outer; ++o) {
        const Src* row = src + o * w.length;
        A* out = dst + o * w.out_len;
        if (w.hi - w.lo < 8) {
            // Too few windows for the loop across them to pay off: one window at a time.
            sum_windows(row, out, w.begin, w.count, 0, w.out_len, w.dil);
            continue;
        }
        sum_windows(row, out, w.begin, w.count, 0, w.lo, w.dil);
        sum_windows(row, out, w.begin, w.count, w.hi, w.out_len, w.dil);
        if (w.step == 1) {
            sum_rows(out + w.lo, row + w.begin[w.lo], w.dil, w.taps, w.hi - w.lo);
            continue;
        }
        if (dense) continue;  // the full windows: below
        index_t first = w.lo;  // the full windows from here on: the loop below
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (simd::has_strided_sums8<Src, A>) {
            // int8 / uint8 taps 2 to 4 apart: eight windows at a time, their taps picked from
            // 16-byte loads (the loop below adds one byte at a time, through memory: int8
            // 304 rows of 854 k1 s2, 95 -> 40 us a call on one thread), as far as the loads
            // stay within the rows.
            if (w.step <= 4) {
                const Src* tap0 = row + w.begin[w.lo] - w.lo * w.step;  // window j's first tap:
                const Src* end = src + outer * w.length;                // tap0 + step * j
                const __m128i pick = simd::strided_pick(w.step);
                for (; first + 8 <= w.hi; first += 8) {
                    const Src* p = tap0 + w.step * first;
                    if (simd::strided_sums8_reach(p, w.step, w.dil, w.taps) > end) break;
                    simd::strided_sums8(p, pick, w.step, w.dil, w.taps, out + first);
                }
            }
        }
#endif
        for (index_t j = first; j < w.hi; ++j) out[j] = 0;
        for (index_t t = 0; t < w.taps; ++t) {
            const Src* tap = row + w.begin[w.lo] + t * w.dil - w.lo * w.step;
            for (index_t j = first; j < w.hi; ++j) out[j] = out[j] + load<A>(tap[w.step * j]);
        }
    }
    if (dense) sum_strided_windows(src, dst, w, outer);
}

#if OVPOOL_CORE_HAVE_AVX2
// The float and int16 plane blocks' lanes (inner 16): windows of R taps of one vector each,
// their count a constant (simd::sum_runs16). The tables and sizes come in by value: read
// through a lambda's captures they were loaded again for every window, as the vector stores
// may alias anything (int8 1x3404x77 k4 s3 d2: 25 instructions a window, 12 without).
// column_runs16: window j of each of `outer` rows (an edge column).
template <int R, class Src, class A>
OVPOOL_FORCE_INLINE inline void column_runs16(A* d, index_t d_pitch, const Src* x,
                                              index_t x_pitch, index_t gap, index_t outer) {
    for (index_t o = 0; o < outer; ++o) simd::sum_runs16<R>(d + o * d_pitch, x + o * x_pitch, gap);
}
// full_runs16: the full windows lo .. hi - 1 of each of `outer` rows.
template <int R, class Src, class A>
inline void full_runs16(A* dst, index_t out_len, const Src* src, index_t length,
                        const index_t* begin, index_t lo, index_t hi, index_t gap, index_t outer) {
    for (index_t o = 0; o < outer; ++o) {
        A* d = dst + o * out_len * 16;
        const Src* x = src + o * length * 16;
        for (index_t j = lo; j < hi; ++j) simd::sum_runs16<R>(d + j * 16, x + begin[j] * 16, gap);
    }
}
#endif

// One separable sum pass over `axis`, for `planes` consecutive planes at once (a pass over
// one plane views it as (outer, length, inner), and consecutive planes' data, input and
// intermediates alike, follow each other: so `planes` planes are one with planes * outer
// rows). With stride 1, full window j reads rows begin[lo] + (j - lo) + t * dil, so tap t of
// all full windows is one contiguous run of (hi - lo) * inner elements: summed as such, in
// long vectorised loops (sum_rows).
// (sum_pass_shaped: the same over a current intermediate viewed as (outer, length, inner),
// whatever axes were reduced before; see pass_order.)
template <class Src, class A>
void sum_pass_shaped(const Src* src, A* dst, const Geometry& g, index_t axis, index_t outer,
                     index_t inner) {
    index_t lo = 0, hi = 0;
    AxisTable w = axis_table(g, axis);
    if (inner == 1) {
        sum_last_axis(src, dst, g, axis, outer);
        return;
    }
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<Src, std::int16_t>::value && std::is_same<A, std::int16_t>::value) {
        // int16 lanes of undilated windows that move by fewer rows than half their taps:
        // each window from the one before (simd::sliding_window_sums16), exact as any order.
        // Rows of four vectors or more share its loop set-up (uint8 8x585x7x8 k6,3: 1.55M ->
        // 1.39M instructions a call); rows of one vector only for windows of more than the
        // eight taps the branch below unrolls.
        const index_t least_taps = inner >= 64 ? 4 : 9;
        if (inner % 16 == 0 && w.dil == 1 && w.taps >= least_taps && 2 * w.step < w.taps) {
            simd::sliding_window_sums16(src, dst, w.begin, w.count, w.length, w.out_len, outer,
                                        inner);
            return;
        }
    }
#endif
    // The float and int16 blocks' lanes (inner 16): edge window j of every row, a column of
    // windows with its tap count picked once (simd::sum_runs16), the same sums as
    // sum_short_rows; false when no such column applies (other sums, nine taps or more, none).
    // (For the unit-step branch just below only: the inner-16 branch after it keeps its own
    // copy, as calling this one there left its full windows' dispatch out of line, uint8
    // 4x202x17x19 k6,1 s1,4 d2,1 +27K instructions a call.)
    auto edge_column16 = [&](index_t j) {
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr ((std::is_same<A, float>::value || std::is_same<A, std::int16_t>::value) &&
                      simd::has_sum_rows16<Src, A>) {
            if (inner != 16) return false;
            A* d = dst + j * inner;
            const Src* x = src + w.begin[j] * inner;
            const index_t d_pitch = w.out_len * inner, x_pitch = w.length * inner,
                          gap = w.dil * inner;
            auto column = [&](auto taps) {
                column_runs16<decltype(taps)::value>(d, d_pitch, x, x_pitch, gap, outer);
                return true;
            };
            return with_constant<1, 8>(w.count[j], column);
        }
#endif
        (void)j;
        return false;
    };
    if (w.step == 1 && w.length == w.out_len && outer > 1 && 2 * (w.hi - w.lo) >= w.out_len) {
        // As many outputs as inputs and at least half of them full windows: as in
        // sum_last_axis, the full windows of all rows are one run (here of rows of `inner`
        // elements), and the edge windows are rewritten (in the blocks' lanes a column at a
        // time: uint8 8x585x7x8 k6,3's second axis, 100K instructions a call in
        // sum_window_rows' dispatch row by row).
        sum_rows(dst + w.lo * inner, src + w.begin[w.lo] * inner, w.dil * inner, w.taps,
                 ((outer - 1) * w.out_len + w.hi - w.lo) * inner);
        for (index_t j = 0; j < w.out_len; ++j) {
            if (j == w.lo) j = w.hi;
            if (j >= w.out_len) break;
            if (edge_column16(j)) continue;
            sum_window_rows(dst + j * inner, w.out_len * inner, src + w.begin[j] * inner,
                            w.length * inner, w.dil * inner, w.count[j], inner, outer);
        }
        return;
    }
    if (inner <= 16) {
        // Short rows (small planes, and the 16 lanes of the plane blocks): every window of
        // every row a run at a time, summed in registers (sum_short_rows), rather than loops
        // of a few elements and, for one-tap windows, a memmove call each (uint8
        // 4x202x17x19 k6,1 s1,4 d2,1, in blocks: 79 -> 62 us a call on one thread).
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr ((std::is_same<A, float>::value || std::is_same<A, std::int16_t>::value) &&
                      simd::has_sum_rows16<Src, A>) {
            // The float and int16 blocks' lanes: the full windows' taps unrolled, their count
            // picked once (simd::sum_runs16; a loop over the taps of each window cost about as
            // much again as its additions, float16 8x91x24x15 k7,3 d1,3; int16 sums picked
            // their count window by window, int8 1x3404x77 k4 s3 d2); the edge windows too,
            // a column of windows (one j, every row) at a time with its count picked once
            // (float16 8x60x27x20 k5,7 d1,2 p1,5/0,2: 12 of each row's 15 windows are edges).
            // The same sums as sum_short_rows.
            const index_t d_pitch = w.out_len * inner, x_pitch = w.length * inner,
                          gap = w.dil * inner;
            auto full = [&](auto taps) {
                full_runs16<decltype(taps)::value>(dst, w.out_len, src, w.length, w.begin, w.lo,
                                                   w.hi, gap, outer);
                return true;
            };
            if (inner == 16 && w.hi - w.lo >= 2 && with_constant<1, 8>(w.taps, full)) {
                for (index_t j = 0; j < w.out_len; ++j) {
                    if (j == w.lo) j = w.hi;
                    if (j >= w.out_len) break;
                    A* d = dst + j * inner;
                    const Src* x = src + w.begin[j] * inner;
                    auto column = [&](auto taps) {
                        column_runs16<decltype(taps)::value>(d, d_pitch, x, x_pitch, gap, outer);
                        return true;
                    };
                    if (with_constant<1, 8>(w.count[j], column)) continue;
                    for (index_t o = 0; o < outer; ++o) {
                        sum_short_rows(d + o * w.out_len * inner, x + o * w.length * inner,
                                       w.dil * inner, w.count[j], inner);
                    }
                }
                return;
            }
        }
#endif
        for (index_t o = 0; o < outer; ++o) {
            A* d = dst + o * w.out_len * inner;
            const Src* x = src + o * w.length * inner;
            for (index_t j = 0; j < w.out_len; ++j) {
                sum_short_rows(d + j * inner, x + w.begin[j] * inner, w.dil * inner, w.count[j],
                               inner);
            }
        }
        return;
    }
    if (w.hi > w.lo) {
        lo = w.lo;
        hi = w.hi;
        sum_full_window_rows(src, dst, w, outer, inner);
    }
    for (index_t o = 0; o < outer; ++o) {
        for (index_t j = 0; j < w.out_len; ++j) {
            if (lo <= j && j < hi) continue;
            sum_rows(dst + (o * w.out_len + j) * inner,
                     src + (o * w.length + w.begin[j]) * inner, w.dil * inner, w.count[j],
                     inner);
        }
    }
}

template <class Src, class A>
void sum_pass(const Src* src, A* dst, const Geometry& g, index_t axis, index_t planes) {
    index_t outer, inner;
    pass_shape(g, axis, &outer, &inner);
    sum_pass_shaped(src, dst, g, axis, outer * planes, inner);
}

// Integer total / divisor rounded half to even, for a positive divisor.
inline wide_t divide_round_even_wide(wide_t total, std::int64_t divisor) {
    wide_t quotient = total / divisor;
    wide_t remainder = total - quotient * divisor;
    wide_t twice = 2 * (remainder >= 0 ? remainder : -remainder);
    if (twice > divisor || (twice == divisor && (quotient & 1))) {
        quotient += total >= 0 ? 1 : -1;
    }
    return quotient;
}

// The same for a divisor of 2^shift: floor((total + 2^(shift-1) - 1 + q0 % 2) / 2^shift),
// q0 = floor(total / 2^shift), rounds up exactly when the remainder is above one half, or is
// one half and q0 is odd. Shifts of negative values are arithmetic (as C++20 defines them,
// and every supported compiler does). V: an integer type, or a GCC vector of one (so that
// plane lanes divide a whole vector at once). The caller makes the constants, C being V or
// its element type (plane lanes make them once per call, not once per output): bias =
// 2^(shift-1) - 1 and odd = 1, or both 0 for a shift of 0 (the total itself). total + bias + 1
// must not overflow.
template <class V, class C>
inline V divide_round_even_pow2(V total, int shift, C bias, C odd) {
    return (total + bias + ((total >> shift) & odd)) >> shift;
}

// Round a double to the nearest integer, ties to even, for |value| <= 2^51: adding 1.5 * 2^52
// leaves no fraction bits, so the addition itself rounds (in the default rounding mode).
inline double round_even_double(double value) {
    const double shift = 6755399441055744.0;  // 1.5 * 2^52
    return (value + shift) - shift;
}

// The same for |total| < 2^51 without an integer division (tens of cycles; a 128-bit one is a
// library call) and without branches on the data (a sum's rounding case is as good as random,
// so a branch on it is mispredicted half the time): total and divisor are exact as doubles
// (`real` is the divisor), and their correctly rounded quotient rounds to the same integer as
// the exact one. (For integers |a| < 2^52 and b > 0: every half-integer below 2^52 is a
// double, so the rounding cannot carry a / b across one, and it cannot land on one either,
// as a / b is at least 1 / (2b) away from any it is not equal to while the rounding moves it
// by at most |a / b| * 2^-53 < 1 / (2b). The same holds in float32, 24 bits, for |a| < 2^23
// and b exact.) Exact, so the same result as divide_round_even_wide in every build.
inline long long divide_round_even_small(long long total, double real) {
    return static_cast<long long>(round_even_double(static_cast<double>(total) / real));
}

// As above for any integer accumulator; an empty window (divisor 0) gives 0. `real` is the
// divisor as a double.
template <class A>
inline A divide_round_even(A total, std::int64_t divisor, double real) {
    if (divisor == 0) return 0;
    constexpr long long small = 1LL << 51;
    if (total > -small && total < small) {
        return static_cast<A>(divide_round_even_small(static_cast<long long>(total), real));
    }
    return static_cast<A>(divide_round_even_wide(static_cast<wide_t>(total), divisor));
}

// Outputs per plane below which a block of planes repeats one plane's divisors, so that the
// block's averages are written in one run rather than plane by plane (a run of write_averages
// per plane costs more than its divisions when planes have few outputs).
constexpr index_t few_outputs_per_plane = 64;

// One plane's divisors repeated for a block of planes.
struct RepeatedDivisors {
    std::unique_ptr<std::int64_t[]> count;
    std::unique_ptr<double[]> real;
    std::unique_ptr<float[]> real32;
    std::unique_ptr<float[]> divisor32;
    std::unique_ptr<float[]> inverse32;

    // Copies d's `out_plane` divisors `planes` times and points d at the copies.
    void repeat(Divisors& d, index_t out_plane, index_t planes) {
        count = allocate<std::int64_t>(planes * out_plane);
        real = allocate<double>(planes * out_plane);
        for (index_t p = 0; p < planes; ++p) {
            std::copy(d.count, d.count + out_plane, count.get() + p * out_plane);
            std::copy(d.real, d.real + out_plane, real.get() + p * out_plane);
        }
        d.count = count.get();
        d.real = real.get();
        auto repeat_floats = [&](const float*& from, std::unique_ptr<float[]>& copy) {
            if (!from) return;
            copy = allocate<float>(planes * out_plane);
            for (index_t p = 0; p < planes; ++p)
                std::copy(from, from + out_plane, copy.get() + p * out_plane);
            from = copy.get();
        };
        repeat_floats(d.real32, real32);
        repeat_floats(d.divisor32, divisor32);
        repeat_floats(d.inverse32, inverse32);
    }
};

// out[i] = S(sums[i] / real32[i]) for float32 sums (write_averages with Divisors::real32).
template <class S>
inline void write_float_averages(S* out, const float* sums, index_t n, const float* real32) {
    index_t i = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (is_half<S>::value) {
        for (; i + 8 <= n; i += 8) simd::divide_to_half8(sums + i, real32 + i, out + i);
    } else if constexpr (std::is_same<S, float>::value) {
        // (gcc's own loop checks whether out overlaps sums and, for the few outputs of a block
        // of small planes, ran element by element: float32 2x2730 planes of 8x6 -> 2x3, about
        // 46K instructions a call; out never overlaps the sums.) The same IEEE quotients.
        for (; i + 8 <= n; i += 8) {
            _mm256_storeu_ps(out + i, _mm256_div_ps(_mm256_loadu_ps(sums + i),
                                                    _mm256_loadu_ps(real32 + i)));
        }
    }
#endif
    for (; i < n; ++i) out[i] = store<S>(sums[i] / real32[i]);
}

// out[i] = sums[i] / divisor[i], stored in the output's type.
template <class S, class A>
inline void write_averages(S* out, const A* sums, index_t n, const Divisors& divisors) {
    if constexpr (std::is_floating_point<A>::value) {
        // A plain division per element (no branch): vectorises, and matches sum / count.
        index_t i = 0;
        if constexpr (std::is_same<A, float>::value) {
            if (divisors.real32) {
                write_float_averages(out, sums, n, divisors.real32);
                return;
            }
        }
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (is_half<S>::value) {
            for (; i + 8 <= n; i += 8) simd::divide_to_half8(sums + i, divisors.real + i, out + i);
        }
#endif
        for (; i < n; ++i) out[i] = store<S>(sums[i] / static_cast<A>(divisors.real[i]));
    } else {
        index_t i = 0;
#if OVPOOL_CORE_HAVE_AVX2
        // Eight at a time when the sums fit in int32 (then so do the averages, and their
        // int8 / uint8 / int32 / int64 stores are those of the scalar rule's results).
        if constexpr (std::is_same<A, std::int16_t>::value) {
            if (divisors.small_sums && divisors.inverse32) {
                // From the divisors' inverses (a division's throughput, one per five cycles or
                // so, bounded this loop): the same quotients (simd::short_lane_averages).
                if constexpr (sizeof(S) == 1) {
                    for (; i + 16 <= n; i += 16) {
                        simd::averages16_by_inverse(sums + i, divisors.divisor32 + i,
                                                    divisors.inverse32 + i, out + i);
                    }
                    if (i < n && n >= 16) {
                        // The last sixteen again, overlapping (the same averages), rather than
                        // up to fifteen through the narrower loops and the scalar rule (uint8
                        // planes of 15x83 left 13 each).
                        simd::averages16_by_inverse(sums + n - 16, divisors.divisor32 + n - 16,
                                                    divisors.inverse32 + n - 16, out + n - 16);
                        i = n;
                    }
                }
                for (; i + 8 <= n; i += 8) {
                    const __m256 s = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(
                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(sums + i))));
                    simd::store_averages8(
                        out + i, simd::quotients_by_inverse(s, _mm256_loadu_ps(divisors.divisor32 + i),
                                                            _mm256_loadu_ps(divisors.inverse32 + i)));
                }
            }
        }
        if constexpr (std::is_same<A, std::int32_t>::value || std::is_same<A, std::int16_t>::value) {
            if (divisors.small_sums) {
                // (float32 divisors when the job made them, else the float64 ones)
                auto divide_all = [&](const auto* real) {
                    for (; i + 8 <= n; i += 8) {
                        simd::store_averages8(out + i,
                                              simd::divide_round_even8_small(sums + i, real + i));
                    }
                };
                if (divisors.real32) {
                    divide_all(divisors.real32);
                } else {
                    divide_all(divisors.real);
                }
            }
        }
        if constexpr (std::is_same<A, std::int32_t>::value) {
            for (; i + 8 <= n; i += 8) {
                simd::store_averages8(out + i, simd::divide_round_even8(sums + i, divisors.real + i));
            }
        }
        if constexpr (std::is_same<A, long long>::value) {
            for (; i + 8 <= n; i += 8) {
                __m256i quotients;
                if (simd::divide_round_even8(sums + i, divisors.real + i, &quotients)) {
                    simd::store_averages8(out + i, quotients);
                    continue;
                }
                for (index_t k = i; k < i + 8; ++k) {
                    out[k] = store<S>(divide_round_even(sums[k], divisors.count[k], divisors.real[k]));
                }
            }
        }
#endif
        for (; i < n; ++i) {
            out[i] = store<S>(divide_round_even(sums[i], divisors.count[i], divisors.real[i]));
        }
    }
}

// The largest window volume of g (the product of each axis's longest window), saturated at
// 2^62: a pass's partial sums cover at most the product of the longest windows of the axes
// summed so far, so this bounds the inputs added into any one of them.
inline long long window_volume(const Geometry& g) {
    const long long cap = 1LL << 62;
    long long volume = 1;
    for (index_t a = 0; a < g.naxes; ++a) {
        AxisTable w = axis_table(g, a);
        index_t longest = 0;
        for (index_t j = 0; j < w.out_len; ++j) longest = std::max(longest, w.count[j]);
        if (longest == 0) return 0;
        volume = volume > cap / longest ? cap : volume * longest;
    }
    return volume;
}

// Whether sums of at most `volume` inputs, each of magnitude at most `bound` > 0, stay within
// +-limit.
inline bool sums_within(long long volume, unsigned long long bound, long long limit) {
    return static_cast<unsigned long long>(volume) <= static_cast<unsigned long long>(limit) / bound;
}

// Whether every partial sum of an average over g fits in the narrow accumulator N, for inputs
// of magnitude at most `largest`.
template <class N>
inline bool sums_fit(const Geometry& g, long long largest) {
    return sums_within(window_volume(g), largest, std::numeric_limits<N>::max());
}

// Integer sums of at most this magnitude, over divisors below small_divisor_limit, divide
// exactly in float32 (see Divisors::small_sums and divide_round_even_small).
constexpr long long small_sum_limit = (1LL << 23) - 1;

// Whether every window of `axis` is the one input at its own position.
inline bool identity_axis(const Geometry& g, index_t axis) {
    AxisTable w = axis_table(g, axis);
    if (w.out_len != w.length) return false;
    for (index_t j = 0; j < w.out_len; ++j) {
        if (w.begin[j] != j || w.count[j] != 1) return false;
    }
    return true;
}

// The axes the passes sum, in order (PassOrder::count of them).
struct PassOrder {
    static constexpr index_t most = 8;  // axes (spatial ones, plus the blocks' lane axis)
    index_t axis[most];
    index_t count = 0;
};

// Outermost axis first, for g.naxes <= PassOrder::most. Axes whose windows are each one input
// (kernel 1, stride 1, no padding) are skipped unless every axis is: their pass would only
// add each value to +0, which the other passes do anyway (so not even a -0 survives).
inline PassOrder outermost_first(const Geometry& g) {
    PassOrder order;
    for (index_t a = 0; a < g.naxes; ++a) {
        if (identity_axis(g, a) && (order.count > 0 || a + 1 < g.naxes)) continue;
        order.axis[order.count++] = a;
    }
    return order;
}

// The elements a pass over `axis` adds and writes, roughly, with the intermediate's axes at
// the sizes `size` (a reduced axis at its output length); *largest grows to the size of the
// intermediate it leaves.
inline double pass_cost(const Geometry& g, index_t axis, const index_t* size, double* largest) {
    AxisTable w = axis_table(g, axis);
    double outer = 1, inner = 1;
    for (index_t b = 0; b < axis; ++b) outer *= static_cast<double>(size[b]);
    for (index_t b = axis + 1; b < g.naxes; ++b) inner *= static_cast<double>(size[b]);
    double taps = 0;
    for (index_t j = 0; j < w.out_len; ++j) taps += static_cast<double>(w.count[j]);
    // Strided windows along contiguous rows are summed at every position (see
    // sum_strided_windows) or a strided element at a time: as dear as the dense sums.
    if (inner == 1 && w.step > 1) taps = std::max(taps, static_cast<double>(w.taps * w.length));
    // (A window's set-up, a call and loop set-up of a few runs, costs about as much as adding
    // 64 elements in vectors.)
    double cost = outer * (taps * inner + static_cast<double>(w.out_len) * (inner + 64));
    *largest = std::max(*largest, outer * static_cast<double>(w.out_len) * inner);
    return cost;
}

// Exact integer sums are the same whatever order the axes are summed in (every partial sum is
// a sum of some of one window's inputs, so within the same bound, and integer addition is
// associative), so those take the order of outermost_first's axes that adds the fewest
// elements, among the orders whose intermediates fit Geometry::scratch (sized for outermost
// first): a strided last axis first, for one, shrinks the rows the other passes sum (int8
// 8x12x43x61 k4,6 s1,4 d3,1: the 43x16 sums of the last axis, then 4 rows each, rather than
// 4 rows of 61 each, then 43x61 windows: 1.21 -> 0.99 M instructions a call). Ties keep
// outermost first. g.naxes <= most. Computed once per call of the pooling (a few hundred
// instructions), not per block.
inline PassOrder cheapest_pass_order(const Geometry& g) {
    PassOrder first = outermost_first(g);
    // (Two axes only: with three, the orders this picks were slower on every shape tried, the
    // passes' set-ups outweighing the additions saved.)
    if (first.count != 2) return first;
    PassOrder best = first, order = first;
    double best_cost = -1;
    const double room = static_cast<double>(g.scratch);
    // Every permutation of first's axes (in lexicographic order of their positions in first).
    index_t pos[PassOrder::most];
    for (index_t k = 0; k < first.count; ++k) pos[k] = k;
    do {
        index_t size[PassOrder::most];
        for (index_t a = 0; a < g.naxes; ++a) size[a] = g.length[a];
        double cost = 0, largest = 0;
        for (index_t k = 0; k < first.count; ++k) {
            index_t a = first.axis[pos[k]];
            order.axis[k] = a;
            cost += pass_cost(g, a, size, &largest);
            size[a] = g.output[a];
        }
        if (largest <= room && (best_cost < 0 || cost < best_cost)) {
            best = order;
            best_cost = cost;
        }
    } while (std::next_permutation(pos, pos + first.count));
    return best;
}

// The sums of every window of `planes` consecutive planes by the passes, in one of the two
// buffers of `scratch` (see avg_planes), which is returned: planes * out_plane sums. The axes
// go outermost first, or in `order` (exact integer sums only: see cheapest_pass_order).
template <class S, class A>
const A* sum_passes(const S* x, A* scratch, const Geometry& g, index_t planes,
                    const PassOrder* order_or_null = nullptr) {
    A* dst = nullptr;
    if (order_or_null) {
        const PassOrder& order = *order_or_null;
        index_t size[PassOrder::most];  // the intermediate's axes (as pass_shape's, any order)
        for (index_t a = 0; a < g.naxes; ++a) size[a] = g.length[a];
        for (index_t k = 0; k < order.count; ++k) {
            index_t a = order.axis[k], outer = planes, inner = 1;
            for (index_t b = 0; b < a; ++b) outer *= size[b];
            for (index_t b = a + 1; b < g.naxes; ++b) inner *= size[b];
            size[a] = g.output[a];
            A* target = scratch + (k % 2) * planes * g.scratch;
            if (k == 0) {
                sum_pass_shaped(x, target, g, a, outer, inner);
            } else {
                sum_pass_shaped(static_cast<const A*>(dst), target, g, a, outer, inner);
            }
            dst = target;
        }
        return dst;
    }
    // Outermost first (see outermost_first).
    index_t passes = 0;
    for (index_t a = 0; a < g.naxes; ++a) {
        if (identity_axis(g, a) && (passes > 0 || a + 1 < g.naxes)) continue;
        A* target = scratch + (passes % 2) * planes * g.scratch;
        if (passes == 0) {
            sum_pass(x, target, g, a, planes);
        } else {
            sum_pass(static_cast<const A*>(dst), target, g, a, planes);
        }
        dst = target;
        ++passes;
    }
    return dst;
}

// Whether every window of `axis` has at most one tap.
inline bool one_tap_axis(const Geometry& g, index_t axis) {
    AxisTable w = axis_table(g, axis);
    for (index_t j = 0; j < w.out_len; ++j)
        if (w.count[j] > 1) return false;
    return true;
}

// Outermost first, except that axes of one-tap windows that keep at most half of their
// inputs (a subsample: kernel 1, stride 2 or more) go first, so that the other passes sum
// only the rows they keep (float16 360 planes of 13x8x7 k5,1,3 s1,4,3: the first axis's five
// taps summed for every one of the eight rows of the second, which keeps two). The same sums
// in any float type: a one-tap pass gives 0 + x (or +0 for a window in the padding), which
// differs from x only in turning -0 into +0 and quieting a signalling NaN, neither of which
// changes a later sum starting from +0 (0 + (0 + x) is 0 + x); and run last, such a pass
// gives back 0 + s = s for a sum s (never -0 nor signalling). So every output gets the same
// additions of the same values in the same order. False when no such axis moves, or when an
// intermediate would outgrow Geometry::scratch (sized for outermost first).
inline bool subsample_axes_first(const Geometry& g, PassOrder* order) {
    PassOrder first = outermost_first(g), moved{};
    for (int keep_rest = 0; keep_rest < 2; ++keep_rest) {
        for (index_t k = 0; k < first.count; ++k) {
            const index_t a = first.axis[k];
            const bool subsample = one_tap_axis(g, a) && 2 * g.output[a] <= g.length[a];
            if (subsample != static_cast<bool>(keep_rest)) moved.axis[moved.count++] = a;
        }
    }
    bool same = true;
    for (index_t k = 0; k < first.count; ++k) same = same && moved.axis[k] == first.axis[k];
    if (same) return false;
    index_t size[PassOrder::most];
    for (index_t a = 0; a < g.naxes; ++a) size[a] = g.length[a];
    for (index_t k = 0; k < moved.count; ++k) {
        size[moved.axis[k]] = g.output[moved.axis[k]];
        index_t elements = 1;
        for (index_t a = 0; a < g.naxes; ++a) elements *= size[a];
        if (elements > g.scratch) return false;
    }
    *order = moved;
    return true;
}

// The order in which the passes of a job averaging S in A over g sum the axes, set once per
// job in *order (false, *order unset, only for more than PassOrder::most axes):
// cheapest_pass_order's for integer sums (int32 / int64 inputs too, in whichever exact
// accumulator: int64 1x4161x7x9 k7,4 s1,3 in int32 blocks now sums its strided last axis
// first, 2.70M -> 2.15M instructions a call), subsample_axes_first's for float sums when it
// moves an axis, else outermost_first's. Set once, so that sum_passes does not scan each
// axis's windows for identity axes on every block of planes (float32 2x2730 planes of 8x6 in
// blocks of sixteen: 44K of 966K instructions a call, the lane axis's sixteen windows scanned
// per block).
template <class S, class A>
bool exact_pass_order(const Geometry& g, PassOrder* order) {
    if (g.naxes > PassOrder::most) return false;
    if constexpr (std::is_floating_point<A>::value) {
        if (subsample_axes_first(g, order)) return true;
    } else if constexpr (std::is_integral<S>::value) {
        *order = cheapest_pass_order(g);
        return true;
    }
    *order = outermost_first(g);
    return true;
}

// Whether averages of S over g take the passes in int16 sums (`AvgJob`): int8 / uint8 inputs
// whose every partial sum stays within int16 (a window volume of at most 255 for int8, 128
// for uint8, as the int16 plane blocks), so that each vector instruction adds sixteen lanes
// rather than eight int32 ones, over rows whose windows step one apart along the last axis,
// or are taken from the dense sums (dense_strided_sums: 3 or 4 apart, three taps or more;
// picked sixteen at a time), of more than sixteen elements in and out: the passes' AVX2
// columns, the strided sums of fewer taps and short rows sum int32 only (uint8 1x198x30x83
// k4,6 s2,1 d2,2: 2.84 -> 2.29 M instructions a call, with the float32 divisors; int8
// 1x68x3813 k4 s3 d3: 0.18 -> 0.08 ms a call on one thread; 8x111x136 k3,6 s4,3, which took
// the int32 columns: 0.05 -> 0.04 ms). Exact integer sums, so the same averages either way.
template <class S>
inline bool short_passes_suit(const Geometry& g) {
    if constexpr (std::is_integral<S>::value && sizeof(S) == 1) {
        if (g.naxes < 1 || !sums_fit<std::int16_t>(g, narrow_avg_accumulator<S>::largest)) return false;
        AxisTable w = axis_table(g, g.naxes - 1);
        bool irregular = false;  // (summed by running sums in the AVX2 build: see sum_last_axis)
        bool strided = false;    // (summed in int16 columns in the AVX2 build: see sum_last_axis)
#if OVPOOL_CORE_HAVE_AVX2
        irregular = simd::prefix_columns_suit(w);
        // Strided windows the int16 columns take, whatever their number, when the last axis
        // is summed last (or alone): every earlier pass then sums rows of w.length > 16
        // elements, in whole int16 vectors (int8 4x22x13x11x20 k6,2,3 s4,4,3 d1,1,3, which
        // took int32 passes and columns: see simd::columns_last_axis16).
        if (w.length > 16 && simd::short_columns_suit(w)) {
            const PassOrder order = cheapest_pass_order(g);
            strided = order.count >= 1 && order.axis[order.count - 1] == g.naxes - 1;
        }
#endif
        return ((w.step == 1 || dense_strided_sums<S, std::int16_t>(w) || irregular) &&
                w.length > 16 && w.out_len > 16) ||
               strided;
    } else {
        (void)g;
        return false;
    }
}

// Average-pool `planes` consecutive planes with the passes, so small planes share one pass's
// set-up. `scratch` holds two buffers of planes * Geometry::scratch elements (one for a
// single axis). `divisors` cover `divided` outputs: 1 plane's, or all of them (repeated).
template <class S, class A>
void avg_planes(const S* x, S* out, A* scratch, const Geometry& g, const Divisors& divisors,
                index_t planes, index_t divided, const PassOrder* order = nullptr) {
    const A* dst = sum_passes(x, scratch, g, planes, order);
    index_t total = planes * g.out_plane;
    for (index_t at = 0; at < total; at += divided) {
        write_averages(out + at, dst + at, std::min(divided, total - at), divisors);
    }
}

// Axis `axis` has 3-wide windows, stride 1, one element of padding on each side.
inline bool three_same(const Geometry& g, index_t axis) {
    AxisTable w = axis_table(g, axis);
    index_t n = w.length;
    return (n >= 3 && w.out_len == n && w.step == 1 && w.dil == 1 && w.lo == 1 &&
            w.hi == n - 1 && w.taps == 3 && w.begin[1] == 0 && w.begin[0] == 0 &&
            w.count[0] == 2 && w.begin[n - 1] == n - 2 && w.count[n - 1] == 2);
}

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
