// AVX2 transposes into plane lanes and back (see average_lanes.hpp): eight elements of each of
// eight planes, widened to a 32-bit accumulator, become eight runs of eight lanes, through one
// 8x8 transpose, instead of 64 scalar conversions and stores; and eight lanes' sums of eight
// outputs go back to each plane's row of sums the same way (64-bit lanes: four by four), or,
// for 16-bit float outputs, narrowed on the way (untranspose_tile_half).
//
// Pure data movement plus exact widening (float16 by F16C, the instruction behind this build's
// scalar load<float>(f16); bfloat16 by a shift; int8 / uint8 / int32 by sign or zero
// extension), so the lanes hold the same bits as the portable loop's; the narrowing back to
// 16-bit floats rounds as the portable store<S> does.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_LANES_AVX2_HPP
#define OVPOOL_CORE_SIMD_LANES_AVX2_HPP

#include <cstdint>
#include <type_traits>

#include "../config.hpp"
#include "../types.hpp"
#include "average_avx2.hpp"
#include "rows_avx2.hpp"
#include "transpose_avx2.hpp"
#include "widen.hpp"

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

// sums[p * stride + k] = lanes[k * L + p] for p, k < block_side: transpose_tile8's inverse,
// for 32-bit lanes (eight by eight) and 64-bit lanes (four by four), through transpose_block.
template <class B>
inline void untranspose_tile(const B* lanes, index_t L, B* sums, index_t stride) {
    constexpr int bytes = static_cast<int>(sizeof(B));
    constexpr index_t side = block_side<bytes>;
    const void* from[side];
    void* to[side];
    for (index_t k = 0; k < side; ++k) {
        from[k] = lanes + k * L;
        to[k] = sums + k * stride;
    }
    transpose_block<bytes>(from, to);
}

// sums[p * stride + k] = lanes[k * L + p] for p < 8, k < n, n 2 or 4 (32-bit sums): the few
// outputs of tiny planes (adaptive pooling to 1x2 or 2x2), whose tiles untranspose_tile, at
// eight outputs a side, cannot cover. Each plane's n sums are one 64- or 128-bit store.
template <index_t n, class B>
inline void untranspose_narrow(const B* lanes, index_t L, B* sums, index_t stride) {
    static_assert(sizeof(B) == 4 && (n == 2 || n == 4), "2 or 4 outputs of 32 bits");
    const float* from = reinterpret_cast<const float*>(lanes);
    float* to = reinterpret_cast<float*>(sums);
    __m256 r0 = _mm256_loadu_ps(from), r1 = _mm256_loadu_ps(from + L);
    __m256 pair[4];  // planes (0, 4), (1, 5), (2, 6), (3, 7) in the halves; n = 2: two per half
    if constexpr (n == 2) {
        pair[0] = _mm256_unpacklo_ps(r0, r1);  // planes 0, 1 | 4, 5
        pair[1] = _mm256_unpackhi_ps(r0, r1);  // planes 2, 3 | 6, 7
        for (int h = 0; h < 2; ++h) {
            for (int q = 0; q < 2; ++q) {
                __m128 half = h == 0 ? _mm256_castps256_ps128(pair[q]) : _mm256_extractf128_ps(pair[q], 1);
                const index_t p = 4 * h + 2 * q;
                _mm_storel_pi(reinterpret_cast<__m64*>(to + p * stride), half);
                _mm_storeh_pi(reinterpret_cast<__m64*>(to + (p + 1) * stride), half);
            }
        }
    } else {
        __m256 r2 = _mm256_loadu_ps(from + 2 * L), r3 = _mm256_loadu_ps(from + 3 * L);
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        pair[0] = _mm256_shuffle_ps(t0, t2, 0x44);
        pair[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
        pair[2] = _mm256_shuffle_ps(t1, t3, 0x44);
        pair[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
        for (int q = 0; q < 4; ++q) {
            _mm_storeu_ps(to + q * stride, _mm256_castps256_ps128(pair[q]));
            _mm_storeu_ps(to + (q + 4) * stride, _mm256_extractf128_ps(pair[q], 1));
        }
    }
}

// planes[p * n + k] = lanes[k * L + p] for p < 8, k < n, 0 < n < 8 (32-bit sums, planes of
// n outputs side by side): the outputs of small planes (ONNX 8x6 -> 2x3), which the 8x8 tiles
// cannot cover and the scalar loop copied one at a time (a quarter of such a call's
// instructions). One 8x8 transpose, then plane by plane in order one 32-byte store each,
// whose 8 - n extra lanes the next plane's store overwrites; the last plane's n alone
// (store_first), as its extra lanes would land past the eight planes.
template <class B>
inline void untranspose_few(const B* lanes, index_t L, index_t n, B* planes) {
    static_assert(sizeof(B) == 4, "32-bit sums");
    const float* from = reinterpret_cast<const float*>(lanes);
    float* to = reinterpret_cast<float*>(planes);
    __m256 m[8];
    for (index_t k = 0; k < 8; ++k) {
        m[k] = k < n ? _mm256_loadu_ps(from + k * L) : _mm256_setzero_ps();
    }
    transpose8x8(m);
    for (index_t p = 0; p < 7; ++p) _mm256_storeu_ps(to + p * n, m[p]);
    store_first(to + 7 * n, m[7], n);
}

// planes[p * n + k] = lanes[k * 16 + p] + add[p] for p < 16, k < n, 0 < n <= 8 (16-bit
// lanes, sixteen planes of n outputs side by side; add's lanes are 16-bit and wrap): the few
// outputs of tiny planes of 16-bit keys or codes, which from_lanes's 8x8 blocks cannot cover
// and its scalar loop moved one at a time. One 8x8 transpose in each half (planes 0 .. 7 and
// 8 .. 15), then plane by plane in order one 16-byte store each, whose 8 - n extra elements
// the next plane's store overwrites: `planes` holds at least 15 * n + 8 elements.
inline void untranspose_few16(const std::uint16_t* lanes, index_t n, std::uint16_t* planes,
                              __m256i add) {
    __m256i m[8];
    for (index_t k = 0; k < 8; ++k) {
        m[k] = k < n ? _mm256_add_epi16(
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes + k * 16)),
                           add)
                     : _mm256_setzero_si256();
    }
    transpose8x8_epi16(m);
    for (index_t p = 0; p < 8; ++p) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(planes + p * n), _mm256_castsi256_si128(m[p]));
    }
    for (index_t p = 0; p < 8; ++p) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(planes + (8 + p) * n),
                         _mm256_extracti128_si256(m[p], 1));
    }
}

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

// out[p * stride + k] = S(lanes[k * L + p] / real32[k]) for p < 8, `from` <= k < 8: eight
// outputs' float32 sums of eight lanes divided (each output's divisor shared by its lanes)
// and moved to each plane's row, narrowed for 16-bit float outputs. The division
// write_averages makes, so the same quotients; the narrowing store<S>'s. Outputs k < from are
// not divided, and get values of no use: the caller writes them again.
template <class S>
inline void untranspose_tile_averages(const float* lanes, index_t L, const float* real32, S* out,
                                      index_t stride, index_t from = 0) {
    __m256 m[8];
    for (index_t k = 0; k < 8; ++k) {
        m[k] = _mm256_loadu_ps(lanes + k * L);
        if (k >= from) m[k] = _mm256_div_ps(m[k], _mm256_broadcast_ss(real32 + k));
    }
    transpose8x8(m);
    for (int p = 0; p < 8; ++p) {
        if constexpr (std::is_same<S, float>::value) {
            _mm256_storeu_ps(out + p * stride, m[p]);
        } else {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + p * stride), narrow8<S>(m[p]));
        }
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
#endif
