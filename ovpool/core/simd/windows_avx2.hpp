// AVX2 kernel for max pooling with indices over float32 rows whose windows have no common tap
// count and stride (adaptive windows, the edge windows of fixed ones): eight windows at a
// time, each lane gathering its window's taps, as max_windows_by_tap (max.hpp) orders them:
// tap t of window j is its tap min(t, count[j] - 1), so shorter windows re-read their last
// tap, which cannot replace itself. The comparisons are replaces_at8 (max_avx2.hpp), lane by
// lane replaces_at: the winners, so the bits, of the generic loop.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_WINDOWS_AVX2_HPP
#define OVPOOL_CORE_SIMD_WINDOWS_AVX2_HPP

#include <algorithm>
#include <cstdint>

#include "../config.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

#include "max_avx2.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Windows j in [0, windows), none empty, of a row of values `row` and their offsets
// `row_offset`: window j has count[j] taps from begin[j], `dil` apart; `taps` is the largest
// count. best[j] and best_offset[j] get the winners.
inline void max_windows_by_tap8(const float* row, const std::int32_t* row_offset, float* best,
                                std::int32_t* best_offset, const index_t* begin,
                                const index_t* count, index_t dil, index_t taps,
                                index_t windows) {
    const __m256i tap_step = _mm256_set1_epi32(static_cast<int>(dil));
    for (index_t j = 0; j < windows; j += 8) {
        index_t lanes = std::min<index_t>(windows - j, 8);
        // Lanes past `lanes` repeat the last window: every gather reads real taps.
        alignas(32) std::int32_t first[8], last[8];
        for (index_t k = 0; k < 8; ++k) {
            index_t w = j + std::min(k, lanes - 1);
            first[k] = static_cast<std::int32_t>(begin[w]);
            last[k] = static_cast<std::int32_t>(count[w] - 1);
        }
        const __m256i at0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(first));
        const __m256i end = _mm256_load_si256(reinterpret_cast<const __m256i*>(last));
        __m256 value = _mm256_i32gather_ps(row, at0, 4);
        __m256i index = _mm256_i32gather_epi32(row_offset, at0, 4);
        for (index_t t = 1; t < taps; ++t) {
            __m256i tap = _mm256_min_epi32(_mm256_set1_epi32(static_cast<int>(t)), end);
            __m256i at = _mm256_add_epi32(at0, _mm256_mullo_epi32(tap, tap_step));
            __m256 candidate = _mm256_i32gather_ps(row, at, 4);
            __m256i candidate_index = _mm256_i32gather_epi32(row_offset, at, 4);
            __m256 take = replaces_at8(candidate, candidate_index, value, index);
            value = _mm256_blendv_ps(value, candidate, take);
            index = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(index),
                                                         _mm256_castsi256_ps(candidate_index),
                                                         take));
        }
        alignas(32) float values[8];
        alignas(32) std::int32_t indices[8];
        _mm256_store_ps(values, value);
        _mm256_store_si256(reinterpret_cast<__m256i*>(indices), index);
        for (index_t k = 0; k < lanes; ++k) {
            best[j + k] = values[k];
            best_offset[j + k] = indices[k];
        }
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
