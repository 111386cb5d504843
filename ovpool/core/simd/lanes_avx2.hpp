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
#include "transpose_avx2.hpp"

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

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
#endif
