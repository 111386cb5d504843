// AVX2 transposes of square blocks of 4- and 8-byte elements (8x8 and 4x4: one 32-byte vector
// per row), between rows given by pointers. Only the bits move (shuffles, no arithmetic), so
// the result is the scalar copy's, NaN payloads included.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_TRANSPOSE_AVX2_HPP
#define OVPOOL_CORE_SIMD_TRANSPOSE_AVX2_HPP

#include "../config.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Elements of `Bytes` bytes in one 32-byte vector: the side of transpose_block's square.
template <int Bytes>
constexpr index_t block_side = 32 / Bytes;

// dst[i][k] = src[k][i] for i, k in [0, block_side<Bytes>): each src[k] and dst[i] points to
// one row of block_side elements of Bytes (4 or 8) bytes.
template <int Bytes>
inline void transpose_block(const void* const* src, void* const* dst) {
    static_assert(Bytes == 4 || Bytes == 8, "4- or 8-byte elements");
    if constexpr (Bytes == 4) {
        __m256 r[8], t[8], s[8];
        for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(static_cast<const float*>(src[k]));
        for (int k = 0; k < 8; k += 2) {
            t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
            t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
        }
        for (int k = 0; k < 8; k += 4) {
            s[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
            s[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
            s[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
            s[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
        }
        for (int k = 0; k < 4; ++k) {
            _mm256_storeu_ps(static_cast<float*>(dst[k]),
                             _mm256_permute2f128_ps(s[k], s[k + 4], 0x20));
            _mm256_storeu_ps(static_cast<float*>(dst[k + 4]),
                             _mm256_permute2f128_ps(s[k], s[k + 4], 0x31));
        }
    } else {
        __m256d r[4], t[4];
        for (int k = 0; k < 4; ++k) r[k] = _mm256_loadu_pd(static_cast<const double*>(src[k]));
        t[0] = _mm256_unpacklo_pd(r[0], r[1]);
        t[1] = _mm256_unpackhi_pd(r[0], r[1]);
        t[2] = _mm256_unpacklo_pd(r[2], r[3]);
        t[3] = _mm256_unpackhi_pd(r[2], r[3]);
        _mm256_storeu_pd(static_cast<double*>(dst[0]), _mm256_permute2f128_pd(t[0], t[2], 0x20));
        _mm256_storeu_pd(static_cast<double*>(dst[1]), _mm256_permute2f128_pd(t[1], t[3], 0x20));
        _mm256_storeu_pd(static_cast<double*>(dst[2]), _mm256_permute2f128_pd(t[0], t[2], 0x31));
        _mm256_storeu_pd(static_cast<double*>(dst[3]), _mm256_permute2f128_pd(t[1], t[3], 0x31));
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
#endif
