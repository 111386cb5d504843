// AVX2 helpers of average pooling.
//
// - divide_round_even8: the rounded integer averages of eight window sums (int64 or int32) at
//   once. The scalar rule (average.hpp's divide_round_even_small) costs a double division and
//   a conversion per output; here four of each go in one instruction, and the rounding steps
//   are lane masks.
//   The result is exact, so the same as the scalar rule's in every build.
// - divide_to_f16x8: eight float32 averages rounded to float16 by one F16C instruction (the
//   scalar store converts one element per instruction and keeps the loop from vectorising);
//   the same rounding, so the same bits.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_AVERAGE_AVX2_HPP
#define OVPOOL_CORE_SIMD_AVERAGE_AVX2_HPP

#include <cstdint>
#include <type_traits>

#include "../config.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// round_half_even(total / divisor) of four integer totals |total| < 2^31 held as doubles, as
// int32. `divisor` holds the divisors, +inf for an empty window (whose result is 0). The
// quotient rounded to a double and then to an integer is within one of the exact quotient's
// rounding; twice the remainder (exact: every product and difference is an integer below
// 2^53) says whether to step up or down by one, ties going to the even neighbour. For an
// empty window the estimate is 0 and the remainder NaN, which no comparison takes.
inline __m128i divide_round_even4(__m256d total, __m256d divisor) {
    __m256d quotient = _mm256_round_pd(_mm256_div_pd(total, divisor),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d twice = _mm256_mul_pd(_mm256_sub_pd(total, _mm256_mul_pd(quotient, divisor)),
                                  _mm256_set1_pd(2.0));
    __m256d below = _mm256_sub_pd(_mm256_setzero_pd(), divisor);
    __m256d half = _mm256_mul_pd(quotient, _mm256_set1_pd(0.5));
    __m256d odd = _mm256_cmp_pd(half, _mm256_round_pd(half, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC),
                                _CMP_NEQ_OQ);
    __m256d up = _mm256_or_pd(_mm256_cmp_pd(twice, divisor, _CMP_GT_OQ),
                              _mm256_and_pd(_mm256_cmp_pd(twice, divisor, _CMP_EQ_OQ), odd));
    __m256d down = _mm256_or_pd(_mm256_cmp_pd(twice, below, _CMP_LT_OQ),
                                _mm256_and_pd(_mm256_cmp_pd(twice, below, _CMP_EQ_OQ), odd));
    __m256d one = _mm256_set1_pd(1.0);
    quotient = _mm256_sub_pd(_mm256_add_pd(quotient, _mm256_and_pd(up, one)),
                             _mm256_and_pd(down, one));
    return _mm256_cvtpd_epi32(quotient);  // integral values: exact
}

// quotients[0 .. 8) = round_half_even(sums[i] / divisor) (0 for an empty window, whose
// `real` is +inf) when all eight sums fit in int32; otherwise false, nothing written.
inline bool divide_round_even8(const long long* sums, const double* real,
                               std::int32_t* quotients) {
    __m256i t0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums));
    __m256i t1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + 4));
    // The low 32 bits of each sum, sign-extended back: equal to the sum when it fits.
    __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m128i l0 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(t0, low_halves));
    __m128i l1 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(t1, low_halves));
    __m256i fits = _mm256_and_si256(_mm256_cmpeq_epi64(_mm256_cvtepi32_epi64(l0), t0),
                                    _mm256_cmpeq_epi64(_mm256_cvtepi32_epi64(l1), t1));
    if (_mm256_movemask_epi8(fits) != -1) return false;
    __m128i q0 = divide_round_even4(_mm256_cvtepi32_pd(l0), _mm256_loadu_pd(real));
    __m128i q1 = divide_round_even4(_mm256_cvtepi32_pd(l1), _mm256_loadu_pd(real + 4));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(quotients), _mm256_set_m128i(q1, q0));
    return true;
}

// The same for eight int32 sums (always in range).
inline void divide_round_even8(const std::int32_t* sums, const double* real,
                               std::int32_t* quotients) {
    __m256i t = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums));
    __m128i q0 = divide_round_even4(_mm256_cvtepi32_pd(_mm256_castsi256_si128(t)),
                                    _mm256_loadu_pd(real));
    __m128i q1 = divide_round_even4(_mm256_cvtepi32_pd(_mm256_extracti128_si256(t, 1)),
                                    _mm256_loadu_pd(real + 4));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(quotients), _mm256_set_m128i(q1, q0));
}

// out[0 .. 8) = quotients[i] in the output's integer type (int8, uint8, int32, int64), each
// in that type's range (an average of its values), so the saturating packs are plain
// conversions: one store instead of eight.
template <class S>
inline void store_quotients8(S* out, const std::int32_t* quotients) {
    __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(quotients));
    __m128i low = _mm256_castsi256_si128(q), high = _mm256_extracti128_si256(q, 1);
    if constexpr (sizeof(S) == 1) {
        __m128i words = _mm_packs_epi32(low, high);
        __m128i bytes = std::is_signed<S>::value ? _mm_packs_epi16(words, words)
                                                 : _mm_packus_epi16(words, words);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
    } else if constexpr (sizeof(S) == 4) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), q);
    } else {
        static_assert(sizeof(S) == 8, "integer averages are 1, 4 or 8 bytes");
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_cvtepi32_epi64(low));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4), _mm256_cvtepi32_epi64(high));
    }
}

// out[0 .. 8) = float16(sums[i] / float(real[i])), rounded to nearest even.
inline void divide_to_f16x8(const float* sums, const double* real, std::uint16_t* out) {
    __m256 divisor = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(real + 4)),
                                     _mm256_cvtpd_ps(_mm256_loadu_pd(real)));
    __m256 average = _mm256_div_ps(_mm256_loadu_ps(sums), divisor);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                     _mm256_cvtps_ph(average, _MM_FROUND_TO_NEAREST_INT));
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
