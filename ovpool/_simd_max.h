/* AVX2 row kernel for the most common max pooling, a 3-wide window with stride 2 along the
 * last axis (ResNet's stem, most 3x3/s2 and 3x3x3/s2 pools), float32 values only.
 *
 * gcc vectorises the generic loops of _kernels.pyx, but for this case a 56-output row ran the
 * even/odd split, the three taps and the vertical window as separate short loops, each with
 * its alias checks and scalar remainder. Here one loop does all of it per eight outputs, and
 * the remainder is a masked vector step.
 *
 * The NaN rule and the tap order are those of `replaces` in _kernels.pyx: a value replaces the
 * best so far when it is larger, or when the best is NaN and the value is not; rows are
 * combined first (r0, r1, r2), then taps in window order. So results are bit-identical to the
 * generic path, signed zeros and NaN payloads included.
 */
#ifndef OVPOOL_SIMD_MAX_H
#define OVPOOL_SIMD_MAX_H

#include <stddef.h>

#if defined(__AVX2__)
#include <immintrin.h>

#define OVP_HAVE_MAX_K3S2 1

static inline __m256 ovp_max_step8(__m256 best, __m256 value) {
    __m256 take = _mm256_and_ps(_mm256_cmp_ps(value, best, _CMP_NLE_UQ),
                                _mm256_cmp_ps(value, value, _CMP_ORD_Q));
    return _mm256_blendv_ps(best, value, take);
}

static inline float ovp_max_step1(float best, float value) {
    return (!(value <= best) & (value == value)) ? value : best;
}

static inline __m256 ovp_rows3_load8(const float *r0, const float *r1, const float *r2,
                                     ptrdiff_t at) {
    __m256 best = _mm256_loadu_ps(r0 + at);
    best = ovp_max_step8(best, _mm256_loadu_ps(r1 + at));
    return ovp_max_step8(best, _mm256_loadu_ps(r2 + at));
}

static inline __m256 ovp_rows3_maskload8(const float *r0, const float *r1, const float *r2,
                                         ptrdiff_t at, __m256i mask) {
    __m256 best = _mm256_maskload_ps(r0 + at, mask);
    best = ovp_max_step8(best, _mm256_maskload_ps(r1 + at, mask));
    return ovp_max_step8(best, _mm256_maskload_ps(r2 + at, mask));
}

/* Lanes below `count` set. */
static inline __m256i ovp_lanes_below(ptrdiff_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)count),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The even and odd elements of the 16 elements lo, hi. Within each 128-bit lane the shuffle
 * takes lo's even (odd) elements, then hi's; the 64-bit permute puts the lanes in order. */
static inline void ovp_split_even_odd(__m256 lo, __m256 hi, __m256 *even, __m256 *odd) {
    *even = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))),
        _MM_SHUFFLE(3, 1, 2, 0)));
    *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))),
        _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Eight windows from the vertical maxima `lo` = p[0..7] and `hi` = p[8..15] of a block, and
 * `next`, whose lane 0 is p[16]: window k takes p[2k], p[2k+1], p[2k+2]. */
static inline __m256 ovp_windows8_k3s2(__m256 lo, __m256 hi, __m256 next) {
    __m256 even, odd;
    ovp_split_even_odd(lo, hi, &even, &odd);
    __m256 following = _mm256_blend_ps(
        _mm256_permutevar8x32_ps(even, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7)),
        _mm256_permutevar8x32_ps(next, _mm256_setzero_si256()), 0x80);
    return ovp_max_step8(ovp_max_step8(even, odd), following);
}

/* Eight windows starting one element earlier: window k takes p[2k-1], p[2k], p[2k+1];
 * `carry` holds p[-1] of the block in lane 7. */
static inline __m256 ovp_windows8_k3s2_odd(__m256 lo, __m256 hi, __m256 carry, __m256 *odd_out) {
    __m256 even, odd;
    ovp_split_even_odd(lo, hi, &even, &odd);
    __m256 preceding = _mm256_blend_ps(
        _mm256_permutevar8x32_ps(odd, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6)),
        _mm256_permutevar8x32_ps(carry, _mm256_set1_epi32(7)), 0x01);
    *odd_out = odd;
    return ovp_max_step8(ovp_max_step8(preceding, even), odd);
}

/* As ovp_max_k3s2_row for windows that start one element before the row: window k takes
 * p[2k-1], p[2k], p[2k+1], and window 0, clipped by one element of padding, only p[0] and
 * p[1]. p[-1] is never read: window 0 takes p[0] twice, which changes nothing (a value never
 * replaces itself). Reads r*[0 .. 2*windows - 1]. */
static void ovp_max_k3s2_row_padded(const float *r0, const float *r1, const float *r2,
                                    float *out, ptrdiff_t windows) {
    ptrdiff_t k = 0;
    __m256 carry = _mm256_set1_ps(ovp_max_step1(ovp_max_step1(r0[0], r1[0]), r2[0]));
    for (; k + 8 <= windows; k += 8) {
        ptrdiff_t at = 2 * k;
        __m256 lo = ovp_rows3_load8(r0, r1, r2, at);
        __m256 hi = ovp_rows3_load8(r0, r1, r2, at + 8);
        _mm256_storeu_ps(out + k, ovp_windows8_k3s2_odd(lo, hi, carry, &carry));
    }
    if (k < windows) {
        ptrdiff_t at = 2 * k, elements = 2 * (windows - k);
        __m256 lo = ovp_rows3_maskload8(r0, r1, r2, at, ovp_lanes_below(elements));
        __m256 hi = ovp_rows3_maskload8(r0, r1, r2, at + 8, ovp_lanes_below(elements - 8));
        __m256 unused;
        _mm256_maskstore_ps(out + k, ovp_lanes_below(windows - k),
                            ovp_windows8_k3s2_odd(lo, hi, carry, &unused));
    }
}

/* out[k] for k < windows = the max of taps p[2k], p[2k+1], p[2k+2], where p[i] is the max of
 * r0[i], r1[i], r2[i] (pass the same row twice for fewer rows). Reads r*[0 .. 2*windows]. */
static void ovp_max_k3s2_row(const float *r0, const float *r1, const float *r2, float *out,
                             ptrdiff_t windows) {
    ptrdiff_t k = 0;
    __m256 lo = _mm256_setzero_ps();
    int have_lo = 0;
    for (; k + 8 <= windows; k += 8) {
        ptrdiff_t at = 2 * k;
        __m256 hi, next;
        if (!have_lo) lo = ovp_rows3_load8(r0, r1, r2, at);
        hi = ovp_rows3_load8(r0, r1, r2, at + 8);
        /* p[at + 16] is the last tap of window k + 7; the next block's first vector holds it
         * when that block is whole. */
        have_lo = k + 16 <= windows;
        if (have_lo) {
            next = ovp_rows3_load8(r0, r1, r2, at + 16);
        } else {
            float last = ovp_max_step1(ovp_max_step1(r0[at + 16], r1[at + 16]), r2[at + 16]);
            next = _mm256_set1_ps(last);
        }
        _mm256_storeu_ps(out + k, ovp_windows8_k3s2(lo, hi, next));
        lo = next;
    }
    if (k < windows) {
        /* Elements p[2k .. 2*windows]: at most 15; unread lanes load 0 and only feed output
         * lanes that are not stored. */
        ptrdiff_t at = 2 * k, elements = 2 * (windows - k) + 1;
        __m256 lo_tail = ovp_rows3_maskload8(r0, r1, r2, at, ovp_lanes_below(elements));
        __m256 hi_tail = ovp_rows3_maskload8(r0, r1, r2, at + 8,
                                             ovp_lanes_below(elements - 8));
        /* No window of the tail reads past p[2*windows], so `next` is never used. */
        _mm256_maskstore_ps(out + k, ovp_lanes_below(windows - k),
                            ovp_windows8_k3s2(lo_tail, hi_tail, hi_tail));
    }
}

#else

#define OVP_HAVE_MAX_K3S2 0

static void ovp_max_k3s2_row(const float *r0, const float *r1, const float *r2, float *out,
                             ptrdiff_t windows) {
    (void)r0; (void)r1; (void)r2; (void)out; (void)windows;
}

static void ovp_max_k3s2_row_padded(const float *r0, const float *r1, const float *r2,
                                    float *out, ptrdiff_t windows) {
    (void)r0; (void)r1; (void)r2; (void)out; (void)windows;
}

#endif

#endif
