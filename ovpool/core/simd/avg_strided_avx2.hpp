// Float windows strided 2 to 4 apart along the last axis, eight windows at a time (AVX2).
//
// Tap t of eight consecutive windows (stride S) is eight elements S apart: S vector loads
// from the tap's first element cover them, and one to three blends or shuffles gather them
// into one vector, in a lane order that depends only on S (window_of_lane). Every tap of the
// eight windows lands in the same lane order, so the taps are added lane by lane and the
// eight sums are put into window order by one permutation at the end (bfloat16 pairs: the
// low halves of 32-bit lanes, shifted up, in window order already). Each group of eight
// windows is summed for every row of the block before the next group, its offsets and masks
// held in registers, so that a row of a few dozen windows pays no loop set-up per group
// (the columns of avg_columns_avx2.hpp, which transpose every element in and every sum out,
// cost about 50 instructions per eight windows of such a row; float16 59x71 rows of 61, k3
// s3: about 20 here).
//
// Windows the padding clips take the same loads, with the taps outside the row replaced by
// +0 (a mask per tap, made once per group): a sum starting from +0 is never -0 and s + 0 is
// s (a NaN keeps its payload), so the sum is the one of the taps inside the row. A row's
// last group overlaps the one before when the windows are not a multiple of eight; a group
// whose loads would leave the block's rows (the first or last row) is summed window by window
// by the caller instead.
//
// Order: every window sum starts from +0 and adds its taps in window order, as the passes'
// sum_windows does, so results are the same bits (windows of at most eight taps: none that
// sum_windows splits into partial sums).
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_AVG_STRIDED_AVX2_HPP
#define OVPOOL_CORE_SIMD_AVG_STRIDED_AVX2_HPP

#include <algorithm>
#include <type_traits>

#include "../config.hpp"
#include "../geometry.hpp"
#include "../types.hpp"
#include "average_avx2.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Most taps of a window for strided_last_axis (each a constant of its own kernel). Each tap
// costs `step` loads and one to three blends or shuffles per eight windows; 16-bit rows
// widen each load too, so their windows of more taps than the step are left to the columns,
// which widen each element once (bfloat16 rows of 2665, k4 s2 d3, widened load by load:
// 635K instructions a call against the columns' 613K), except bfloat16 pairs (step 2),
// which take one load and one shift a tap (443K).
constexpr index_t strided_most_taps = 8;

// Whether window j's taps are those of the interior windows' layout (first taps w.step
// apart, extended past lo and hi) that lie in the row: begin[j] the first of them, count[j]
// their number (windows the padding clips, as the rules make them).
inline bool strided_window_regular(const AxisTable& w, index_t j) {
    const index_t first = w.begin[w.lo] + (j - w.lo) * w.step;
    index_t n = 0, begin = 0;
    for (index_t t = 0; t < w.taps; ++t) {
        const index_t at = first + t * w.dil;
        if (at < 0 || at >= w.length) continue;
        if (n++ == 0) begin = at;
    }
    return n == w.count[j] && (n == 0 || begin == w.begin[j]);
}

// Whether strided_last_axis takes w's windows (Src rows): steps 2 to 4, at least eight
// windows of at most strided_most_taps taps (float16 rows and bfloat16 ones of steps 3 and
// 4: no more taps than the step), and
// every window outside the interior run the interior's layout clipped by the row
// (strided_window_regular).
template <class Src>
inline bool strided_suit(const AxisTable& w) {
    if (w.step < 2 || w.step > 4 || w.out_len < 8 || w.hi <= w.lo || w.taps < 1 ||
        w.taps > strided_most_taps ||
        (!std::is_same<Src, float>::value && !(std::is_same<Src, bf16>::value && w.step == 2) &&
         w.taps > w.step)) {
        return false;
    }
    for (index_t j = 0; j < w.out_len; ++j) {
        if (j == w.lo) j = w.hi;
        if (j >= w.out_len) break;
        if (!strided_window_regular(w, j)) return false;
    }
    return true;
}

// Whether strided_tap8<S, Src> gives its windows in window order: bfloat16 pairs, whose
// even elements are the low halves of 32-bit lanes (one shift makes them float32).
template <int S, class Src>
constexpr bool strided_in_order = S == 2 && std::is_same<Src, bf16>::value;

// Which window (0 .. 7) of a group each lane of strided_tap8's vector holds.
template <int S, class Src>
inline __m256i window_of_lane() {
    if constexpr (strided_in_order<S, Src>) return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    if constexpr (S == 2) return _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    if constexpr (S == 3) return _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
    if constexpr (S == 4) return _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7);
}

// p[S * k] for k < 8 as float32, window k in lane window_of_lane<S, Src>()'s k (reads p[0 ..
// 8 * S - 1]).
template <int S, class Src>
OVPOOL_FORCE_INLINE inline __m256 strided_tap8(const Src* p) {
    if constexpr (strided_in_order<S, Src>) {
        // p[2k] is the low half of 32-bit lane k: shifted up, its float32
        const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        return _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16));
    } else if constexpr (S == 2) {
        // [p0 p2 p8 p10 | p4 p6 p12 p14]
        return _mm256_shuffle_ps(load8_f32(p), load8_f32(p + 8), 0x88);
    } else if constexpr (S == 3) {
        // lanes 1, 4, 7 from p + 8, lanes 2, 5 from p + 16: [p0 p9 p18 p3 p12 p21 p6 p15]
        const __m256 t = _mm256_blend_ps(load8_f32(p), load8_f32(p + 8), 0x92);
        return _mm256_blend_ps(t, load8_f32(p + 16), 0x24);
    } else {
        // [p0 p0 p8 p8 | p4 p4 p12 p12] and the same of p + 16, interleaved:
        // [p0 p16 p8 p24 | p4 p20 p12 p28]
        const __m256 u = _mm256_shuffle_ps(load8_f32(p), load8_f32(p + 8), 0);
        const __m256 v = _mm256_shuffle_ps(load8_f32(p + 16), load8_f32(p + 24), 0);
        return _mm256_blend_ps(u, v, 0xAA);
    }
}

// The sums of strided_tap8's lane order in window order.
template <int S, class Src>
OVPOOL_FORCE_INLINE inline __m256 windows_in_order(__m256 sums) {
    if constexpr (strided_in_order<S, Src>) {
        return sums;
    } else if constexpr (S == 2) {
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(sums), 0xD8));
    } else {
        // (window_of_lane is its own inverse for S = 3 and 4)
        return _mm256_permutevar8x32_ps(sums, window_of_lane<S, Src>());
    }
}

// The sum of eight windows from p (their first taps p[0], p[S], ..., T taps `dil` apart),
// in window order; with Masked, tap t's lanes and'ed with mask[t] (taps outside the row: +0).
template <int S, int T, bool Masked, class Src>
OVPOOL_FORCE_INLINE inline __m256 strided_windows8(const Src* p, index_t dil, const __m256* mask) {
    __m256 acc = _mm256_setzero_ps();
    for (index_t t = 0; t < T; ++t) {
        __m256 tap = strided_tap8<S>(p + t * dil);
        if constexpr (Masked) tap = _mm256_and_ps(tap, mask[t]);
        acc = _mm256_add_ps(acc, tap);
    }
    return windows_in_order<S, Src>(acc);
}

// The windows of w (T taps) over `outer` rows of src (rows of w.length elements; sums rows
// of w.out_len), eight windows at a time, each group of eight windows of a row for all rows
// before the next (its offsets and masks held in registers across the rows; one block of
// rows is a few tens of KiB, within L2); a group whose loads would leave the rows goes to
// each_window(row, out, j0, j1) (the passes' window-by-window sums). The caller checks
// strided_suit.
template <int S, int T, class Src, class EachWindow>
void strided_last_axis_taps(const Src* src, float* dst, const AxisTable& w, index_t outer,
                            const EachWindow& each_window) {
    const index_t length = w.length, out_len = w.out_len, dil = w.dil;
    const index_t groups = (out_len + 7) / 8;  // from j0 = 8g, the last one at out_len - 8
    const index_t first_tap0 = w.begin[w.lo] - w.lo * S;  // window j's first tap: + S * j
    const index_t total = outer * length;
    const __m256i lane_offsets = _mm256_mullo_epi32(window_of_lane<S, Src>(), _mm256_set1_epi32(S));
    __m256 masks[strided_most_taps];
    // Rows [*o0, *o1) read within the block's rows when reading the row offsets [low, high).
    auto safe_rows = [&](index_t low, index_t high, index_t* o0, index_t* o1) {
        if (low >= 0 && high <= length) {
            *o0 = 0;
            *o1 = outer;
            return;
        }
        *o0 = std::min(outer, low < 0 ? (-low + length - 1) / length : 0);
        const index_t room = total - high;  // (o * length <= room)
        *o1 = room < 0 ? *o0 : std::max(*o0, std::min(outer, room / length + 1));
    };
    // Groups of eight whole interior windows one after the other, [inner0, inner1): when a
    // row has more than half as many of them as the block has rows, they go row by row, one
    // loop over a row's groups, rather than a loop over the rows for each group, whose set-up
    // (about 70 instructions) then costs more than its rows' loop saves (bfloat16 rows of
    // 2665, eight a block: 166 groups a row).
    index_t inner0 = 0;
    while (inner0 < groups && inner0 * 8 < w.lo) ++inner0;
    index_t inner1 = std::max(inner0, std::min(w.hi / 8, out_len / 8));
    if (2 * (inner1 - inner0) > outer) {
        const index_t low = first_tap0 + S * 8 * inner0;
        const index_t high = first_tap0 + S * 8 * (inner1 - 1) + (T - 1) * dil + 8 * S;
        index_t o0, o1;
        safe_rows(low, high, &o0, &o1);
        for (index_t o = 0; o < outer; ++o) {
            if (o < o0 || o >= o1) {
                each_window(src + o * length, dst + o * out_len, 8 * inner0, 8 * inner1);
                continue;
            }
            const Src* p = src + o * length + low;
            float* d = dst + o * out_len + 8 * inner0;
            for (index_t g = inner0; g < inner1; ++g, p += 8 * S, d += 8) {
                _mm256_storeu_ps(d, strided_windows8<S, T, false>(p, dil, masks));
            }
        }
    } else {
        inner1 = inner0;
    }
    for (index_t g = 0; g < groups; ++g) {
        if (g == inner0 && inner1 > inner0) g = inner1;
        if (g >= groups) break;
        const index_t j0 = std::min(g * 8, out_len - 8);
        const index_t low = first_tap0 + S * j0;            // the row offsets its loads
        const index_t high = low + (T - 1) * dil + 8 * S;   // read: [low, high)
        index_t o0, o1;
        safe_rows(low, high, &o0, &o1);
        for (index_t o = 0; o < o0; ++o) each_window(src + o * length, dst + o * out_len, j0, j0 + 8);
        const Src* p = src + o0 * length + low;
        float* d = dst + o0 * out_len + j0;
        if (j0 >= w.lo && j0 + 8 <= w.hi) {
            for (index_t o = o0; o < o1; ++o, p += length, d += out_len) {
                _mm256_storeu_ps(d, strided_windows8<S, T, false>(p, dil, masks));
            }
        } else {
            // An edge group: tap t's lanes inside the row.
            for (index_t t = 0; t < T; ++t) {
                const __m256i at = _mm256_add_epi32(
                    _mm256_set1_epi32(static_cast<int>(low + t * dil)), lane_offsets);
                masks[t] = _mm256_castsi256_ps(_mm256_andnot_si256(
                    _mm256_cmpgt_epi32(_mm256_setzero_si256(), at),
                    _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(length)), at)));
            }
            for (index_t o = o0; o < o1; ++o, p += length, d += out_len) {
                _mm256_storeu_ps(d, strided_windows8<S, T, true>(p, dil, masks));
            }
        }
        for (index_t o = o1; o < outer; ++o) each_window(src + o * length, dst + o * out_len, j0, j0 + 8);
    }
}

// strided_last_axis_taps for w.step and w.taps (as constants).
template <class Src, class EachWindow>
void strided_last_axis(const Src* src, float* dst, const AxisTable& w, index_t outer,
                       const EachWindow& each_window) {
    with_constant<2, 4>(w.step, [&](auto step) {
        with_constant<1, strided_most_taps>(w.taps, [&](auto taps) {
            strided_last_axis_taps<decltype(step)::value, decltype(taps)::value>(src, dst, w, outer,
                                                                                each_window);
        });
    });
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
