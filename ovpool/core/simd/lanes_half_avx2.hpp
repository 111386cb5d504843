// AVX2 untranspose of float32 plane lanes straight into float16 / bfloat16 outputs (see
// average_lanes.hpp, unstage_half): eight lanes' averages of eight outputs, transposed as
// untranspose_tile does, each plane's eight averages narrowed by narrow8 (the rounding of
// narrow_row and of the scalar store<S>) and stored as one 128-bit run, so that the averages
// need not pass through a float32 row per plane first.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_LANES_HALF_AVX2_HPP
#define OVPOOL_CORE_SIMD_LANES_HALF_AVX2_HPP

#include "../config.hpp"
#include "../types.hpp"
#include "transpose_avx2.hpp"
#include "widen.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// out[p * stride + k] = store<S>(lanes[k * L + p]) for p, k < 8.
template <class S>
inline void untranspose_tile_half(const float* lanes, index_t L, S* out, index_t stride) {
    __m256 m[8];
    for (int k = 0; k < 8; ++k) m[k] = _mm256_loadu_ps(lanes + k * L);
    transpose8x8(m);
    for (int p = 0; p < 8; ++p) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + p * stride), narrow8<S>(m[p]));
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
#endif
