// AVX2 kernels for max pooling with indices over float32 rows (float32, and float16 / bfloat16
// widened to float32): eight windows at a time, each lane carrying its window's best value and
// that value's plane offset (int32: the planes these serve are small), so the comparisons and
// the first-maximum rule run in vector registers instead of one window at a time.
//
// Bit-identical to the generic path: replaces_at8 is replaces_at lane by lane, and each lane
// visits the same taps in the same order.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_MAX_AVX2_HPP
#define OVPOOL_CORE_SIMD_MAX_AVX2_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../config.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

#include "rows_avx2.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Lanes where (value, index) beats (best, best_index) under replaces_at: a larger value, a
// number against a NaN, and among equal values (or two NaNs) the smaller index.
inline __m256 replaces_at8(__m256 value, __m256i index, __m256 best, __m256i best_index) {
    __m256 value_nan = _mm256_cmp_ps(value, value, _CMP_UNORD_Q);
    __m256 best_nan = _mm256_cmp_ps(best, best, _CMP_UNORD_Q);
    __m256 tie = _mm256_or_ps(_mm256_cmp_ps(value, best, _CMP_EQ_OQ),
                              _mm256_and_ps(value_nan, best_nan));
    __m256 earlier = _mm256_castsi256_ps(_mm256_cmpgt_epi32(best_index, index));
    __m256 larger = _mm256_or_ps(_mm256_cmp_ps(value, best, _CMP_GT_OQ), best_nan);
    return _mm256_or_ps(_mm256_and_ps(tie, earlier), _mm256_andnot_ps(tie, larger));
}

// One tap of eight windows: the values and offsets at `at` (gathered; masked lanes read
// nothing) replace *value / *index where they win under replaces_at.
inline void max_tap8(const float* row, const std::int32_t* row_offset, __m256i at,
                     __m256i mask, __m256* value, __m256i* index) {
    __m256 candidate = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), row, at,
                                                _mm256_castsi256_ps(mask), 4);
    __m256i candidate_index = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), row_offset,
                                                          at, mask, 4);
    __m256 take = replaces_at8(candidate, candidate_index, *value, *index);
    *value = _mm256_blendv_ps(*value, candidate, take);
    *index = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(*index),
                                                  _mm256_castsi256_ps(candidate_index), take));
}

// best[0 .. lanes) and best_offset[0 .. lanes) = the first `lanes` lanes of value and index.
inline void store_windows8(float* best, std::int32_t* best_offset, __m256 value, __m256i index,
                           index_t lanes) {
    if (lanes == 8) {
        _mm256_storeu_ps(best, value);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(best_offset), index);
        return;
    }
    alignas(32) float values[8];
    alignas(32) std::int32_t indices[8];
    _mm256_store_ps(values, value);
    _mm256_store_si256(reinterpret_cast<__m256i*>(indices), index);
    for (index_t k = 0; k < lanes; ++k) {
        best[k] = values[k];
        best_offset[k] = indices[k];
    }
}

// Windows j in [0, windows) of a row of values `row` and their offsets `row_offset`: window j
// has `taps` taps, the first at first + j * step, then every `dil`. best[j] and best_offset[j]
// get its winner, taps combined in window order with replaces_at.
inline void max_windows_indexed8(const float* row, const std::int32_t* row_offset, float* best,
                                 std::int32_t* best_offset, index_t first, index_t step,
                                 index_t taps, index_t dil, index_t windows) {
    const __m256i lane_step = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                                 _mm256_set1_epi32(static_cast<int>(step)));
    const __m256i tap_step = _mm256_set1_epi32(static_cast<int>(dil));
    for (index_t j = 0; j < windows; j += 8) {
        index_t lanes = windows - j < 8 ? windows - j : 8;
        __m256i mask = lanes_below(lanes);
        __m256i at = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(first + j * step)),
                                      lane_step);
        // Lanes past `lanes` read nothing (masked gathers) and are not stored.
        __m256 value = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), row, at,
                                                _mm256_castsi256_ps(mask), 4);
        __m256i index = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), row_offset, at,
                                                    mask, 4);
        for (index_t t = 1; t < taps; ++t) {
            at = _mm256_add_epi32(at, tap_step);
            max_tap8(row, row_offset, at, mask, &value, &index);
        }
        store_windows8(best + j, best_offset + j, value, index, lanes);
    }
}

// Windows j in [0, windows), none empty, of a row as above, of any sizes and positions
// (adaptive windows, fixed ones cut by padding): window j has count[j] taps from begin[j],
// `dil` apart; `taps` is the largest count. Eight windows at a time, each lane gathering its
// window's taps: tap t of window j is its tap min(t, count[j] - 1), so a shorter window
// re-reads its last tap, which cannot replace itself (same value, same offset).
inline void max_windows_by_tap8(const float* row, const std::int32_t* row_offset, float* best,
                                std::int32_t* best_offset, const index_t* begin,
                                const index_t* count, index_t dil, index_t taps,
                                index_t windows) {
    const __m256i tap_step = _mm256_set1_epi32(static_cast<int>(dil));
    for (index_t j = 0; j < windows; j += 8) {
        index_t lanes = std::min<index_t>(windows - j, 8);
        // Each lane's first and last tap. Lanes past `lanes` repeat the last window: every
        // gather reads real taps.
        alignas(32) std::int32_t first[8], final[8];
        for (index_t k = 0; k < 8; ++k) {
            index_t w = j + std::min(k, lanes - 1);
            first[k] = static_cast<std::int32_t>(begin[w]);
            final[k] = static_cast<std::int32_t>(begin[w] + (count[w] - 1) * dil);
        }
        __m256i at = _mm256_load_si256(reinterpret_cast<const __m256i*>(first));
        const __m256i last = _mm256_load_si256(reinterpret_cast<const __m256i*>(final));
        const __m256i all = _mm256_set1_epi32(-1);
        __m256 value = _mm256_i32gather_ps(row, at, 4);
        __m256i index = _mm256_i32gather_epi32(row_offset, at, 4);
        for (index_t t = 1; t < taps; ++t) {
            // Tap t, or the window's last tap once past it.
            at = _mm256_min_epi32(_mm256_add_epi32(at, tap_step), last);
            max_tap8(row, row_offset, at, all, &value, &index);
        }
        store_windows8(best + j, best_offset + j, value, index, lanes);
    }
}

// index[j] = start + begin[j] + rel[code[j]] for j in [0, n - n % 8) (the rest is the
// caller's): the indices of the tap-code passes whose codes (uint8, beside int8 values) are
// looked up in a table (max_coded.hpp's coded_indices), four table entries per gather. The
// sums are the scalar loop's, in 64 bits; int32 indices keep their low halves, as its cast.
template <class I>
inline index_t coded_rel_indices8(I* index, const std::uint8_t* code, const std::int64_t* rel,
                                  const index_t* begin, std::int64_t start, index_t n) {
    static_assert(sizeof(index_t) == 8, "begin holds 64-bit entries");
    const __m256i base = _mm256_set1_epi64x(start);
    const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const long long* table = reinterpret_cast<const long long*>(rel);
    index_t j = 0;
    for (; j + 8 <= n; j += 8) {
        std::int64_t eight;
        std::memcpy(&eight, code + j, 8);
        __m256i codes = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(eight));
        __m256i sums[2];
        for (int h = 0; h < 2; ++h) {
            __m128i half = h == 0 ? _mm256_castsi256_si128(codes)
                                  : _mm256_extracti128_si256(codes, 1);
            __m256i offsets = _mm256_i32gather_epi64(table, half, 8);
            __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(begin + j + 4 * h));
            sums[h] = _mm256_add_epi64(_mm256_add_epi64(base, first), offsets);
        }
        if constexpr (sizeof(I) == 8) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + j), sums[0]);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + j + 4), sums[1]);
        } else {
            __m128i lo = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(sums[0], low_halves));
            __m128i hi = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(sums[1], low_halves));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + j),
                                _mm256_set_m128i(hi, lo));
        }
    }
    return j;
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
