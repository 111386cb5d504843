// 16-bit floats widened to float32 eight at a time (and float16 narrowed back), for kernels
// that would otherwise convert every tap on its own (a scalar conversion per element also
// keeps the compiler from vectorising the loop around it, which then branches on every
// comparison); and, in the AVX2 build, int8 / uint8 bytes widened to int16 lanes by their
// signedness (bytes_as_short16 / bytes_as_short8), the one form of that widening the int16
// sums, columns and plane blocks load their bytes through.
//
// Exact in both directions of the question that matters: float16 and bfloat16 values are all
// float32 values, and the AVX2 build's vector conversion (F16C) is the instruction behind its
// scalar load<float>(f16), NaN payloads included; the baseline build converts with load().
// So a kernel that reads the widened float32 row gets the same bits as one reading the 16-bit
// storage through load<float>.
#ifndef OVPOOL_CORE_SIMD_WIDEN_HPP
#define OVPOOL_CORE_SIMD_WIDEN_HPP

#include <cstdint>
#include <type_traits>

#include "../config.hpp"
#include "../types.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>
#endif

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// True for the storage types whose kernels read float32 rows widened by widen_row.
template <class S>
constexpr bool is_half_float = std::is_same<S, f16>::value || std::is_same<S, bf16>::value;

// dst[0 .. n) = load<float>(src[i]) (dst and src apart).
template <class S>
inline void widen_row(const S* src, float* dst, index_t n) {
    static_assert(is_half_float<S>, "widen_row takes float16 or bfloat16 storage");
    index_t i = 0;
#if OVPOOL_CORE_HAVE_AVX2
    auto widen8 = [src, dst](index_t at) {
        __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + at));
        __m256 wide;
        if constexpr (std::is_same<S, f16>::value) {
            wide = _mm256_cvtph_ps(bits);
        } else {
            wide = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
        }
        _mm256_storeu_ps(dst + at, wide);
    };
    for (; i + 8 <= n; i += 8) widen8(i);
    // (The last few of a row of eight or more: its last eight again, overlapping, rather than
    // one conversion an element: rows of 44 spent as much on their last four as on the rest.)
    if (i < n && n >= 8) {
        widen8(n - 8);
        i = n;
    }
#endif
    for (; i < n; ++i) dst[i] = load<float>(src[i]);
}

#if OVPOOL_CORE_HAVE_AVX2
// Sixteen int8 / uint8 values as sixteen int16 lanes: int8 sign-extended, uint8
// zero-extended (exact). Always inlined, as the loops and transposes that call it.
template <class S>
OVPOOL_FORCE_INLINE
inline __m256i bytes_as_short16(__m128i bytes) {
    static_assert(std::is_integral<S>::value && sizeof(S) == 1, "int8 / uint8 inputs");
    return std::is_signed<S>::value ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes);
}

// bytes_as_short16 of the sixteen bytes at p.
template <class S>
OVPOOL_FORCE_INLINE
inline __m256i load16_as_short(const S* p) {
    return bytes_as_short16<S>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// bytes_as_short16 of the eight bytes at `low` (lanes 0 .. 7) and the eight at `high`
// (lanes 8 .. 15).
template <class S>
OVPOOL_FORCE_INLINE
inline __m256i load8x2_as_short(const S* low, const S* high) {
    return bytes_as_short16<S>(_mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(low)),
                                                  _mm_loadl_epi64(reinterpret_cast<const __m128i*>(high))));
}

// The low eight of `bytes` as eight int16 lanes, as bytes_as_short16.
template <class S>
OVPOOL_FORCE_INLINE
inline __m128i bytes_as_short8(__m128i bytes) {
    static_assert(std::is_integral<S>::value && sizeof(S) == 1, "int8 / uint8 inputs");
    return std::is_signed<S>::value ? _mm_cvtepi8_epi16(bytes) : _mm_cvtepu8_epi16(bytes);
}

// Eight float32 values narrowed to float16 or bfloat16 storage bits: float16 by the F16C
// instruction behind its scalar store<f16> (same rounding); bfloat16 by f32_to_bf16's steps on
// eight lanes (round to nearest even, a NaN kept a quiet NaN of the same high bits).
template <class S>
inline __m128i narrow8(__m256 value) {
    static_assert(is_half_float<S>, "narrow8 gives float16 or bfloat16 storage");
    if constexpr (std::is_same<S, f16>::value) {
        return _mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT);
    } else {
        const __m256i one = _mm256_set1_epi32(1), round = _mm256_set1_epi32(0x7fff);
        const __m256i quiet = _mm256_set1_epi32(0x40);
        __m256i u = _mm256_castps_si256(value);
        // (the lanes whose magnitude bits are above infinity's, in one unordered compare)
        __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(value, value, _CMP_UNORD_Q));
        __m256i even = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
        __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(round, even)), 16);
        __m256i quieted = _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet);
        __m256i bits = _mm256_blendv_epi8(rounded, quieted, nan);
        // (each lane below 2^16: the unsigned saturating pack keeps it)
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08);
        return _mm256_castsi256_si128(packed);
    }
}
#endif

// dst[0 .. n) = store<S>(src[i]): float32 results back to storage S. float16 and bfloat16 go
// eight at a time in the AVX2 build (narrow8); everything else one by one.
template <class S, class A>
inline void narrow_row(const A* src, S* dst, index_t n) {
    index_t i = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (is_half_float<S> && std::is_same<A, float>::value) {
        for (; i + 8 <= n; i += 8) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), narrow8<S>(_mm256_loadu_ps(src + i)));
        }
    }
#endif
    for (; i < n; ++i) dst[i] = store<S>(src[i]);
}

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
