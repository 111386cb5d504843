// AVX2 kernels for the most common float32 windows, where the generic loops spend more on loop
// set-up than on arithmetic: rows of a few dozen elements, each pass a separate short loop
// with its alias checks and scalar remainder, and edge windows one by one. Here one loop per
// output row does everything for eight outputs at a time, and the remainder is a masked
// vector step.
//
// - max pooling, 3-wide windows with stride 2 along the last axis (ResNet's stem, most 3x3/s2
//   and 3x3x3/s2 pools), values only;
// - average pooling, 3x3 windows with stride 1 and one element of padding on every side
//   (Inception's "same" pools).
//
// Both combine elements in the order of the generic path, so results are bit-identical to it,
// signed zeros and NaN payloads included: for max, the NaN rule and order of `replaces` (rows
// first, then taps in window order); for averages, 0 + r0 + r1 + r2 down the rows, then
// 0 + c0 + c1 + c2 along them, divided by the same divisor.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_ROWS_AVX2_HPP
#define OVPOOL_CORE_SIMD_ROWS_AVX2_HPP

#include "../config.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

inline __m256 max_step8(__m256 best, __m256 value) {
    __m256 take = _mm256_and_ps(_mm256_cmp_ps(value, best, _CMP_NLE_UQ),
                                _mm256_cmp_ps(value, value, _CMP_ORD_Q));
    return _mm256_blendv_ps(best, value, take);
}

inline float max_step1(float best, float value) {
    return ((!(value <= best)) & (value == value)) ? value : best;
}

inline __m256 rows3_load8(const float* r0, const float* r1, const float* r2, index_t at) {
    __m256 best = _mm256_loadu_ps(r0 + at);
    best = max_step8(best, _mm256_loadu_ps(r1 + at));
    return max_step8(best, _mm256_loadu_ps(r2 + at));
}

inline __m256 rows3_maskload8(const float* r0, const float* r1, const float* r2, index_t at,
                              __m256i mask) {
    __m256 best = _mm256_maskload_ps(r0 + at, mask);
    best = max_step8(best, _mm256_maskload_ps(r1 + at, mask));
    return max_step8(best, _mm256_maskload_ps(r2 + at, mask));
}

// Lanes below `count` set.
inline __m256i lanes_below(index_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The even and odd elements of the 16 elements lo, hi. Within each 128-bit lane the shuffle
// takes lo's even (odd) elements, then hi's; the 64-bit permute puts the lanes in order.
inline void split_even_odd(__m256 lo, __m256 hi, __m256* even, __m256* odd) {
    *even = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))),
        _MM_SHUFFLE(3, 1, 2, 0)));
    *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))),
        _MM_SHUFFLE(3, 1, 2, 0)));
}

// dst[0 .. n) = the first n < 8 lanes of v, as a 4-, a 2- and a 1-lane store by the bits of n.
// Not _mm256_maskstore_ps: on AMD Zen it is microcoded and slow enough to matter once per
// row. Nor a copy loop through a lane buffer: gcc makes it a call to memcpy, which on Zen 4
// cost the 3x3 average pool of 192 planes of 35x35 (a tail of 3 in every row) 80 us a call
// against 55 us this way.
inline void store_first(float* dst, __m256 v, index_t n) {
    __m128 part = _mm256_castps256_ps128(v);
    if (n & 4) {
        _mm_storeu_ps(dst, part);
        part = _mm256_extractf128_ps(v, 1);
        dst += 4;
    }
    if (n & 2) {
        _mm_storel_pi(reinterpret_cast<__m64*>(dst), part);
        part = _mm_movehl_ps(part, part);
        dst += 2;
    }
    if (n & 1) _mm_store_ss(dst, part);
}

// Eight windows from the vertical maxima `lo` = p[0..7] and `hi` = p[8..15] of a block, and
// `next`, whose lane 0 is p[16]: window k takes p[2k], p[2k+1], p[2k+2].
inline __m256 windows8_k3s2(__m256 lo, __m256 hi, __m256 next) {
    __m256 even, odd;
    split_even_odd(lo, hi, &even, &odd);
    __m256 following = _mm256_blend_ps(
        _mm256_permutevar8x32_ps(even, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7)),
        _mm256_permutevar8x32_ps(next, _mm256_setzero_si256()), 0x80);
    return max_step8(max_step8(even, odd), following);
}

// Eight windows starting one element earlier: window k takes p[2k-1], p[2k], p[2k+1];
// `carry` holds p[-1] of the block in lane 7.
inline __m256 windows8_k3s2_odd(__m256 lo, __m256 hi, __m256 carry, __m256* odd_out) {
    __m256 even, odd;
    split_even_odd(lo, hi, &even, &odd);
    __m256 preceding = _mm256_blend_ps(
        _mm256_permutevar8x32_ps(odd, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6)),
        _mm256_permutevar8x32_ps(carry, _mm256_set1_epi32(7)), 0x01);
    *odd_out = odd;
    return max_step8(max_step8(preceding, even), odd);
}

// As max_k3s2_row for windows that start one element before the row: window k takes
// p[2k-1], p[2k], p[2k+1], and window 0, clipped by one element of padding, only p[0] and
// p[1]. p[-1] is never read: window 0 takes p[0] twice, which changes nothing (a value never
// replaces itself). Reads r*[0 .. 2*windows - 1].
inline void max_k3s2_row_padded(const float* r0, const float* r1, const float* r2, float* out,
                                index_t windows) {
    index_t k = 0;
    __m256 carry = _mm256_set1_ps(max_step1(max_step1(r0[0], r1[0]), r2[0]));
    for (; k + 8 <= windows; k += 8) {
        index_t at = 2 * k;
        __m256 lo = rows3_load8(r0, r1, r2, at);
        __m256 hi = rows3_load8(r0, r1, r2, at + 8);
        _mm256_storeu_ps(out + k, windows8_k3s2_odd(lo, hi, carry, &carry));
    }
    if (k < windows) {
        index_t at = 2 * k, elements = 2 * (windows - k);
        __m256 lo = rows3_maskload8(r0, r1, r2, at, lanes_below(elements));
        __m256 hi = rows3_maskload8(r0, r1, r2, at + 8, lanes_below(elements - 8));
        __m256 unused;
        store_first(out + k, windows8_k3s2_odd(lo, hi, carry, &unused), windows - k);
    }
}

// out[k] for k < windows = the max of taps p[2k], p[2k+1], p[2k+2], where p[i] is the max of
// r0[i], r1[i], r2[i] (pass the same row twice for fewer rows). Reads r*[0 .. 2*windows].
inline void max_k3s2_row(const float* r0, const float* r1, const float* r2, float* out,
                         index_t windows) {
    index_t k = 0;
    // Each block's first vector is the previous block's `next`; only rows of at least one
    // whole block (16 or more elements) have a first one to load.
    __m256 lo = windows >= 8 ? rows3_load8(r0, r1, r2, 0) : _mm256_setzero_ps();
    for (; k + 8 <= windows; k += 8) {
        index_t at = 2 * k;
        __m256 hi = rows3_load8(r0, r1, r2, at + 8), next;
        // p[at + 16] is the last tap of window k + 7; the next block's first vector holds it
        // when that block is whole. When it is not, this is the last whole block.
        if (k + 16 <= windows) {
            next = rows3_load8(r0, r1, r2, at + 16);
        } else {
            float last = max_step1(max_step1(r0[at + 16], r1[at + 16]), r2[at + 16]);
            next = _mm256_set1_ps(last);
        }
        _mm256_storeu_ps(out + k, windows8_k3s2(lo, hi, next));
        lo = next;
    }
    if (k < windows) {
        // Elements p[2k .. 2*windows]: at most 15; unread lanes load 0 and only feed output
        // lanes that are not stored.
        index_t at = 2 * k, elements = 2 * (windows - k) + 1;
        __m256 lo_tail = rows3_maskload8(r0, r1, r2, at, lanes_below(elements));
        __m256 hi_tail = rows3_maskload8(r0, r1, r2, at + 8, lanes_below(elements - 8));
        // No window of the tail reads past p[2*windows], so `next` is never used.
        store_first(out + k, windows8_k3s2(lo_tail, hi_tail, hi_tail), windows - k);
    }
}

// ((0 + a) + b) + c over columns j .. j + 7 (the column sums of an output row); columns at or
// past `cols` are 0, which is the right-hand padding.
inline __m256 sum3(__m256 a, __m256 b, __m256 c) {
    return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_setzero_ps(), a), b), c);
}

inline __m256 column_sums8(const float* a, const float* b, const float* c, index_t j,
                           index_t cols) {
    if (j + 8 <= cols) {
        return sum3(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), _mm256_loadu_ps(c + j));
    }
    if (j >= cols) return _mm256_setzero_ps();
    __m256i mask = lanes_below(cols - j);
    return sum3(_mm256_maskload_ps(a + j, mask), _mm256_maskload_ps(b + j, mask),
                _mm256_maskload_ps(c + j, mask));
}

// The three column sums of eight outputs, from the column sums of their block (`here`) and of
// the blocks before and after it, added as the generic path adds them; divided by `divisor`.
inline __m256 average8(__m256 before, __m256 here, __m256 after, const float* divisor) {
    // [before7, here0 .. here6] and [here1 .. here7, after0]
    __m256 left = _mm256_castsi256_ps(_mm256_alignr_epi8(
        _mm256_castps_si256(here),
        _mm256_castps_si256(_mm256_permute2f128_ps(before, here, 0x21)), 12));
    __m256 right = _mm256_castsi256_ps(_mm256_alignr_epi8(
        _mm256_castps_si256(_mm256_permute2f128_ps(here, after, 0x21)),
        _mm256_castps_si256(here), 4));
    return _mm256_div_ps(sum3(left, here, right), _mm256_loadu_ps(divisor));
}

// Average pooling of one rows x cols plane with 3x3 windows, stride 1 and one element of
// padding on every side (so as many outputs as inputs): out = window sum / divisor. Row i's
// divisors start at divisor + i * divisor_stride, and each row's are followed by ones up to a
// multiple of 8 (so the last block reads whole vectors). `zeros` holds cols zeros (the rows
// above and below the plane). Windows clipped by the padding add zeros where the generic path
// has no tap: a leading +0 leaves 0 + x unchanged, and a trailing +0 cannot change a sum that
// started from +0 (it is never -0), so the bits are the same.
//
// The column sums stay in registers: a block's neighbours come from the blocks before and
// after it by lane shifts. (Written to a row buffer and read back at offsets 0, 1 and 2 right
// away, each load straddled two recent stores and waited for them: slower than the generic
// path despite fewer instructions.)
inline void avg_3x3_same_plane(const float* x, float* out, index_t rows, index_t cols,
                               const float* divisor, index_t divisor_stride, const float* zeros) {
    for (index_t i = 0; i < rows; ++i) {
        const float* above = i > 0 ? x + (i - 1) * cols : zeros;
        const float* middle = x + i * cols;
        const float* below = i + 1 < rows ? x + (i + 1) * cols : zeros;
        float* target = out + i * cols;
        const float* row_divisor = divisor + i * divisor_stride;
        __m256 before = _mm256_setzero_ps();
        __m256 here = column_sums8(above, middle, below, 0, cols);
        __m256 after;
        index_t j = 0;
        // Whole blocks followed by a whole block, then the last one or two blocks.
        for (; j + 16 <= cols; j += 8) {
            after = sum3(_mm256_loadu_ps(above + j + 8), _mm256_loadu_ps(middle + j + 8),
                         _mm256_loadu_ps(below + j + 8));
            _mm256_storeu_ps(target + j, average8(before, here, after, row_divisor + j));
            before = here;
            here = after;
        }
        for (; j < cols; j += 8) {
            after = column_sums8(above, middle, below, j + 8, cols);
            __m256 result = average8(before, here, after, row_divisor + j);
            if (j + 8 <= cols) {
                _mm256_storeu_ps(target + j, result);
            } else {
                store_first(target + j, result, cols - j);
            }
            before = here;
            here = after;
        }
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
