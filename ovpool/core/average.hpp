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
// two NaNs are added: x86 keeps the first operand's, and the compiler may commute an addition.
// Sums are written `a = a + b`, never `a += b`: in C++17 the right side of `+=` is evaluated
// first, which leads gcc to put it first, unlike the C kernels this code replaced.
#ifndef OVPOOL_CORE_AVERAGE_HPP
#define OVPOOL_CORE_AVERAGE_HPP

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "simd/average_avx2.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

template <class T> struct is_half : std::false_type {};
template <> struct is_half<f16> : std::true_type {};
template <> struct is_half<bf16> : std::true_type {};

// Sum windows first .. last-1 of one contiguous row, each on its own. Long unit-step windows
// use eight partial sums, which the compiler turns into one vector accumulator.
template <class Src, class A>
inline void sum_windows(const Src* row, A* out, const index_t* begin, const index_t* count,
                        index_t first, index_t last, index_t dil) {
    for (index_t j = first; j < last; ++j) {
        const Src* tap = row + begin[j];
        index_t n = count[j];
        A total = 0;
        index_t t = 0;
        if (dil == 1 && n >= 16) {
            A s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
            while (t + 8 <= n) {
                s0 = s0 + load<A>(tap[t]);
                s1 = s1 + load<A>(tap[t + 1]);
                s2 = s2 + load<A>(tap[t + 2]);
                s3 = s3 + load<A>(tap[t + 3]);
                s4 = s4 + load<A>(tap[t + 4]);
                s5 = s5 + load<A>(tap[t + 5]);
                s6 = s6 + load<A>(tap[t + 6]);
                s7 = s7 + load<A>(tap[t + 7]);
                t = t + 8;
            }
            total = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
        }
        while (t < n) {
            total = total + load<A>(tap[t * dil]);
            t = t + 1;
        }
        out[j] = total;
    }
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

// dst[i] = 0 + first[i] + first[gap + i] + ... (`rows` runs of n elements `gap` apart), added
// in that order: the same sums as zeroing dst and adding run by run. Up to three runs go in
// one sweep, so dst is written once for windows of up to three taps; 16-bit float runs go
// run by run instead (float16 through the F16C row converter).
template <class Src, class A>
inline void sum_rows(A* dst, const Src* first, index_t gap, index_t rows, index_t n) {
    index_t t = 0;
    const Src* r1 = first + gap;
    const Src* r2 = first + 2 * gap;
    if (is_half<Src>::value || rows < 2) {
        for (index_t i = 0; i < n; ++i) dst[i] = 0;
    } else if (rows == 2) {
        for (index_t i = 0; i < n; ++i) {
            A total = 0;
            total = total + load<A>(first[i]);
            total = total + load<A>(r1[i]);
            dst[i] = total;
        }
        t = 2;
    } else {
        for (index_t i = 0; i < n; ++i) {
            A total = 0;
            total = total + load<A>(first[i]);
            total = total + load<A>(r1[i]);
            total = total + load<A>(r2[i]);
            dst[i] = total;
        }
        t = 3;
    }
    for (; t < rows; ++t) accumulate_row(dst, first + t * gap, n);
}

// One window of every row: dst[o * dst_step + i] = 0 + src[o * src_step + i] +
// src[o * src_step + gap + i] + ... (`rows` runs of n elements `gap` apart), for o < outer.
// The same sums, in the same order, as sum_rows row by row (and as sum_windows for windows of
// fewer than 16 taps or integer sums), without a call and loop set-up per row: for the edge
// windows of small planes, where n is a few elements.
template <class Src, class A>
inline void sum_window_rows(A* dst, index_t dst_step, const Src* src, index_t src_step,
                            index_t gap, index_t rows, index_t n, index_t outer) {
    for (index_t o = 0; o < outer; ++o) {
        A* d = dst + o * dst_step;
        const Src* s = src + o * src_step;
        for (index_t i = 0; i < n; ++i) {
            A total = 0;
            for (index_t t = 0; t < rows; ++t) total = total + load<A>(s[t * gap + i]);
            d[i] = total;
        }
    }
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
        for (index_t j = 0; j < w.out_len; ++j) {
            if (j == w.lo) j = w.hi;
            if (j >= w.out_len) break;
            if (w.count[j] < 16 || !std::is_floating_point<A>::value) {
                sum_window_rows(dst + j, w.out_len, src + w.begin[j], w.length, w.dil, w.count[j],
                                1, outer);
                continue;
            }
            for (index_t o = 0; o < outer; ++o) {
                sum_windows(src + o * w.length, dst + o * w.out_len, w.begin, w.count, j, j + 1,
                            w.dil);
            }
        }
        return;
    }
    bool short_windows = true;  // every window summed by sum_window_rows below
    if (std::is_floating_point<A>::value)
        for (index_t j = 0; j < w.out_len && short_windows; ++j) short_windows = w.count[j] < 16;
    if (w.hi - w.lo < 8 && w.out_len < 8 && short_windows) {
        // Short rows of short windows: one window at a time, each for all rows at once, in
        // the same order as sum_windows sums them (see sum_window_rows). (Longer rows are
        // faster row by row, below: their writes stay sequential; so are rows with a float
        // window of 16 or more taps, which sum_windows sums in partial sums, row by row.)
        for (index_t j = 0; j < w.out_len; ++j) {
            sum_window_rows(dst + j, w.out_len, src + w.begin[j], w.length, w.dil, w.count[j],
                            1, outer);
        }
        return;
    }
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
        for (index_t j = w.lo; j < w.hi; ++j) out[j] = 0;
        for (index_t t = 0; t < w.taps; ++t) {
            const Src* tap = row + w.begin[w.lo] + t * w.dil - w.lo * w.step;
            if (w.step == 2) {
                for (index_t j = w.lo; j < w.hi; ++j) out[j] = out[j] + load<A>(tap[2 * j]);
            } else {
                for (index_t j = w.lo; j < w.hi; ++j) out[j] = out[j] + load<A>(tap[w.step * j]);
            }
        }
    }
}

// One separable sum pass over `axis`, for `planes` consecutive planes at once (a pass over
// one plane views it as (outer, length, inner), and consecutive planes' data, input and
// intermediates alike, follow each other: so `planes` planes are one with planes * outer
// rows). With stride 1, full window j reads rows begin[lo] + (j - lo) + t * dil, so tap t of
// all full windows is one contiguous run of (hi - lo) * inner elements: summed as such, in
// long vectorised loops (sum_rows).
template <class Src, class A>
void sum_pass(const Src* src, A* dst, const Geometry& g, index_t axis, index_t planes) {
    index_t outer, inner, lo = 0, hi = 0;
    AxisTable w = axis_table(g, axis);
    pass_shape(g, axis, &outer, &inner);
    outer *= planes;
    if (inner == 1) {
        sum_last_axis(src, dst, g, axis, outer);
        return;
    }
    if (w.step == 1 && w.length == w.out_len && outer > 1 && 2 * (w.hi - w.lo) >= w.out_len) {
        // As many outputs as inputs and at least half of them full windows: as in
        // sum_last_axis, the full windows of all rows are one run (here of rows of `inner`
        // elements), and the edge windows are rewritten.
        sum_rows(dst + w.lo * inner, src + w.begin[w.lo] * inner, w.dil * inner, w.taps,
                 ((outer - 1) * w.out_len + w.hi - w.lo) * inner);
        for (index_t j = 0; j < w.out_len; ++j) {
            if (j == w.lo) j = w.hi;
            if (j >= w.out_len) break;
            sum_window_rows(dst + j * inner, w.out_len * inner, src + w.begin[j] * inner,
                            w.length * inner, w.dil * inner, w.count[j], inner, outer);
        }
        return;
    }
    if (w.step == 1) {
        lo = w.lo;
        hi = w.hi;
    }
    for (index_t o = 0; o < outer; ++o) {
        if (hi > lo) {
            sum_rows(dst + (o * w.out_len + lo) * inner,
                     src + (o * w.length + w.begin[lo]) * inner, w.dil * inner, w.taps,
                     (hi - lo) * inner);
        }
        if (inner < 16) continue;  // short rows: window by window below
        for (index_t j = 0; j < w.out_len; ++j) {
            if (lo <= j && j < hi) continue;
            sum_rows(dst + (o * w.out_len + j) * inner,
                     src + (o * w.length + w.begin[j]) * inner, w.dil * inner, w.count[j],
                     inner);
        }
    }
    if (inner >= 16) return;
    for (index_t j = 0; j < w.out_len; ++j) {
        if (lo <= j && j < hi) continue;
        sum_window_rows(dst + j * inner, w.out_len * inner, src + w.begin[j] * inner,
                        w.length * inner, w.dil * inner, w.count[j], inner, outer);
    }
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

// Round a double to the nearest integer, ties to even, for |value| <= 2^51: adding 1.5 * 2^52
// leaves no fraction bits, so the addition itself rounds (in the default rounding mode).
inline double round_even_double(double value) {
    const double shift = 6755399441055744.0;  // 1.5 * 2^52
    return (value + shift) - shift;
}

// The same for |total| < 2^51 without an integer division (tens of cycles; a 128-bit one is a
// library call) and without branches on the data (a sum's rounding case is as good as random,
// so a branch on it is mispredicted half the time): total and divisor are exact as doubles
// (`real` is the divisor), and their quotient, rounded to a double and then to an integer, is
// within one of the exact quotient's rounding (the double is off by less than 2^51 * 2^-53).
// The remainder, computed exactly in integers, then says whether to step by one: up when the
// exact quotient is more than half above the estimate, or exactly half and the estimate odd;
// down likewise. Exact, so the same result as divide_round_even_wide in every build.
inline long long divide_round_even_small(long long total, std::int64_t divisor, double real) {
    long long quotient = static_cast<long long>(round_even_double(static_cast<double>(total) / real));
    long long twice = 2 * (total - quotient * divisor);
    long long odd = quotient & 1;
    long long up = (twice > divisor) | ((twice == divisor) & odd);
    long long down = (twice < -divisor) | ((twice == -divisor) & odd);
    return quotient + up - down;
}

// As above for any integer accumulator; an empty window (divisor 0) gives 0. `real` is the
// divisor as a double.
template <class A>
inline A divide_round_even(A total, std::int64_t divisor, double real) {
    if (divisor == 0) return 0;
    constexpr long long small = 1LL << 51;
    if (total > -small && total < small) {
        return static_cast<A>(divide_round_even_small(static_cast<long long>(total), divisor, real));
    }
    return static_cast<A>(divide_round_even_wide(static_cast<wide_t>(total), divisor));
}

// out[i] = sums[i] / divisor[i], stored in the output's type.
template <class S, class A>
inline void write_averages(S* out, const A* sums, index_t n, const Divisors& divisors) {
    if constexpr (std::is_floating_point<A>::value) {
        // A plain division per element (no branch): vectorises, and matches sum / count.
        index_t i = 0;
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (std::is_same<S, f16>::value) {
            for (; i + 8 <= n; i += 8) {
                simd::divide_to_f16x8(sums + i, divisors.real + i,
                                      reinterpret_cast<std::uint16_t*>(out + i));
            }
        }
#endif
        for (; i < n; ++i) out[i] = store<S>(sums[i] / static_cast<A>(divisors.real[i]));
    } else {
        index_t i = 0;
#if OVPOOL_CORE_HAVE_AVX2
        // Eight at a time when the sums fit in int32 (then so do the averages, and their
        // int8 / uint8 / int32 stores are those of the scalar rule's results).
        if constexpr (std::is_same<A, std::int32_t>::value) {
            std::int32_t quotients[8];
            for (; i + 8 <= n; i += 8) {
                simd::divide_round_even8(sums + i, divisors.real + i, quotients);
                simd::store_quotients8(out + i, quotients);
            }
        }
        if constexpr (std::is_same<A, long long>::value) {
            std::int32_t quotients[8];
            for (; i + 8 <= n; i += 8) {
                if (simd::divide_round_even8(sums + i, divisors.real + i, quotients)) {
                    simd::store_quotients8(out + i, quotients);
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

// Whether every partial sum of an average over g fits in the narrow accumulator N, for inputs
// of magnitude at most `largest`: a pass's sums cover at most the product of the longest
// windows of the axes summed so far, so the largest window volume bounds them all.
template <class N>
inline bool sums_fit(const Geometry& g, long long largest) {
    const long long limit = static_cast<long long>(std::numeric_limits<N>::max()) / largest;
    long long volume = 1;
    for (index_t a = 0; a < g.naxes; ++a) {
        AxisTable w = axis_table(g, a);
        index_t longest = 0;
        for (index_t j = 0; j < w.out_len; ++j) longest = std::max(longest, w.count[j]);
        if (longest > limit) return false;
        volume *= longest;  // both factors at most `limit` < 2^31: no overflow
        if (volume > limit) return false;
    }
    return true;
}

// Average-pool `planes` consecutive planes with the passes, so small planes share one pass's
// set-up. `scratch` holds two buffers of planes * Geometry::scratch elements (one for a
// single axis). `divisors` cover `divided` outputs: 1 plane's, or all of them (repeated).
template <class S, class A>
void avg_planes(const S* x, S* out, A* scratch, const Geometry& g, const Divisors& divisors,
                index_t planes, index_t divided) {
    A* dst = scratch;
    sum_pass(x, dst, g, 0, planes);
    for (index_t a = 1; a < g.naxes; ++a) {
        const A* src = dst;
        dst = scratch + (a % 2) * planes * g.scratch;
        sum_pass(src, dst, g, a, planes);
    }
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
