// AVX2 transposes into plane lanes and back (see average_lanes.hpp): eight elements of each of
// eight planes, widened to a 32-bit accumulator, become eight runs of eight lanes, through one
// 8x8 transpose, instead of 64 scalar conversions and stores; and eight lanes' sums of eight
// outputs go back to each plane's row of sums the same way (64-bit lanes: four by four).
//
// Pure data movement plus exact widening (float16 by F16C, the instruction behind this build's
// scalar load<float>(f16); bfloat16 by a shift; int8 / uint8 / int32 by sign or zero
// extension), so the lanes hold the same bits as the portable loop's.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_LANES_AVX2_HPP
#define OVPOOL_CORE_SIMD_LANES_AVX2_HPP

#include <cstdint>
#include <type_traits>

#include "../config.hpp"
#include "../types.hpp"
#include "average_avx2.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Whether transpose_tile8<S, B> exists: 32-bit lanes that sum_rows8 loads (float32 lanes of
// float32 / float16 / bfloat16 storage; int32 lanes of integer storage, 64-bit inputs by their
// low halves, for blocks whose values fit).
template <class S, class B>
constexpr bool has_transpose_tile8 = sizeof(B) == 4 && has_sum_rows8<S, B>;

// p[0 .. 8) widened to eight 32-bit lanes (as float bits for the transpose).
template <class S>
inline __m256 load_widened8(const S* p) {
    if constexpr (std::is_integral<S>::value) {
        return _mm256_castsi256_ps(load8_i32(p));
    } else {
        return load8_f32(p);
    }
}

// lanes[k * L + p] = load<B>(x[p * pitch + k]) for p, k < 8: reads x[p * pitch .. + 8).
template <class S, class B>
inline void transpose_tile8(const S* x, index_t pitch, B* lanes, index_t L) {
    static_assert(has_transpose_tile8<S, B>, "no tile transpose for these types");
    __m256 m[8];
    for (int p = 0; p < 8; ++p) m[p] = load_widened8(x + p * pitch);
    transpose8x8(m);
    for (int k = 0; k < 8; ++k) _mm256_storeu_ps(reinterpret_cast<float*>(lanes + k * L), m[k]);
}

// sums[p * stride + k] = lanes[k * L + p] for p, k < 8: transpose_tile8's inverse, for 32-bit
// lanes.
template <class B>
inline void untranspose_tile8(const B* lanes, index_t L, B* sums, index_t stride) {
    static_assert(sizeof(B) == 4, "32-bit lanes only");
    __m256 m[8];
    for (int k = 0; k < 8; ++k) {
        m[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(lanes + k * L));
    }
    transpose8x8(m);
    for (int p = 0; p < 8; ++p) _mm256_storeu_ps(reinterpret_cast<float*>(sums + p * stride), m[p]);
}

// sums[p * stride + k] = lanes[k * L + p] for p, k < 4: the same for 64-bit lanes.
template <class B>
inline void untranspose_tile4(const B* lanes, index_t L, B* sums, index_t stride) {
    static_assert(sizeof(B) == 8, "64-bit lanes only");
    const double* k0 = reinterpret_cast<const double*>(lanes);
    const __m256d t0 = _mm256_unpacklo_pd(_mm256_loadu_pd(k0), _mm256_loadu_pd(k0 + L));
    const __m256d t1 = _mm256_unpackhi_pd(_mm256_loadu_pd(k0), _mm256_loadu_pd(k0 + L));
    const __m256d t2 = _mm256_unpacklo_pd(_mm256_loadu_pd(k0 + 2 * L), _mm256_loadu_pd(k0 + 3 * L));
    const __m256d t3 = _mm256_unpackhi_pd(_mm256_loadu_pd(k0 + 2 * L), _mm256_loadu_pd(k0 + 3 * L));
    double* p0 = reinterpret_cast<double*>(sums);
    _mm256_storeu_pd(p0, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(p0 + stride, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(p0 + 2 * stride, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(p0 + 3 * stride, _mm256_permute2f128_pd(t1, t3, 0x31));
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
#endif
