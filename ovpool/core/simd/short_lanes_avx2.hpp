// AVX2 transposes of the int16 plane blocks (avg_blocks.hpp's 16-bit lanes for int8 / uint8
// inputs): eight elements of each of eight (or sixteen) planes, widened to int16, become eight
// runs of lanes through 8x8 transposes of 16-bit lanes (sixteen planes' runs of 32 bytes: the
// 8x8 transposes move pairs of bytes, widened after them); eight lanes' int16 sums of eight
// outputs go back to each plane's row of sums, widened to int32 for write_averages; or, for
// sixteen lanes, the sums are divided in place (one divisor per output for all lanes) and the
// one-byte averages transposed back, 16x16 bytes at a time.
//
// The transposes are pure data movement plus exact sign or zero extension, and the division
// is exact (the scalar rule's rounding), so the results are those of the portable loops in
// avg_blocks.hpp and write_averages.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_SHORT_LANES_AVX2_HPP
#define OVPOOL_CORE_SIMD_SHORT_LANES_AVX2_HPP

#include <cstdint>
#include <cstring>
#include <type_traits>

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

// lanes[k * L + p] = x[p * pitch + k] as int16, for p, k < 8 (one-byte integers): reads
// x[p * pitch .. + 8).
template <class S>
inline void short_tile_in(const S* x, index_t pitch, std::int16_t* lanes, index_t L) {
    static_assert(std::is_integral<S>::value && sizeof(S) == 1, "int8 / uint8 inputs");
    __m128i m[8];
    for (int p = 0; p < 8; ++p) {
        __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + p * pitch));
        m[p] = bytes_as_short8<S>(bytes);
    }
    transpose8x8_epi16(m);
    for (int k = 0; k < 8; ++k) _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes + k * L), m[k]);
}

// lanes[k * 16 + p] = x[p * pitch + k] as int16, for p < 16, k < 8: sixteen planes at once,
// planes p and p + 8 in the two halves of one vector (one store per k). Always inlined, as
// the transpose in it (the int16 plane blocks' loops call it).
template <class S>
OVPOOL_FORCE_INLINE
inline void short_tile16_in(const S* x, index_t pitch, std::int16_t* lanes) {
    static_assert(std::is_integral<S>::value && sizeof(S) == 1, "int8 / uint8 inputs");
    __m256i m[8];
    for (int p = 0; p < 8; ++p) {
        m[p] = load8x2_as_short(x + p * pitch, x + (p + 8) * pitch);
    }
    transpose8x8_epi16(m);
    for (int k = 0; k < 8; ++k) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + k * 16), m[k]);
    }
}

// lanes[k * 16 + p] = x[p * pitch + k] as int16, for p < 16, k < 32: sixteen planes' runs of
// 32 bytes. The bytes of planes 2j and 2j + 1 are interleaved into 16-bit pairs (elements k
// and k + 16 in the two halves of one vector), so that an 8x8 transpose of the pairs gives
// each element's sixteen planes in order as bytes, widened only on the way out: about two
// thirds of the instructions of four short_tile16_in, which widen first and transpose eight
// elements a tile, and unlike a 16x16 byte transpose it keeps eight vectors live, not
// sixteen (which spilled). Reads x[p * pitch .. + 32).
template <class S>
OVPOOL_FORCE_INLINE
inline void short_tile16x32_in(const S* x, index_t pitch, std::int16_t* lanes) {
    static_assert(std::is_integral<S>::value && sizeof(S) == 1, "int8 / uint8 inputs");
    __m256i low[8], high[8];  // pairs of elements k < 8 (| 16 + k), and of 8 + k (| 24 + k)
    for (int j = 0; j < 8; ++j) {
        const S* a = x + 2 * j * pitch;
        const S* b = a + pitch;
        const __m256i ra = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(a + 16),
                                               reinterpret_cast<const __m128i*>(a));
        const __m256i rb = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(b + 16),
                                               reinterpret_cast<const __m128i*>(b));
        low[j] = _mm256_unpacklo_epi8(ra, rb);
        high[j] = _mm256_unpackhi_epi8(ra, rb);
    }
    auto store = [&](__m256i* rows, index_t first) {
        transpose8x8_epi16(rows);
        for (int k = 0; k < 8; ++k) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + (first + k) * 16),
                                bytes_as_short16<S>(_mm256_castsi256_si128(rows[k])));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + (first + 16 + k) * 16),
                                bytes_as_short16<S>(_mm256_extracti128_si256(rows[k], 1)));
        }
    };
    store(low, 0);
    store(high, 8);
}

// q[k * 16 + p] = round_half_even(sums[k * 16 + p] / d[k]) as S, for k < m, p < 16: the
// averages of sixteen planes' int16 sums, each output's divisor shared by its sixteen lanes
// (divisor, inverse: the plan's Divisors::divisor32 and inverse32, see rules.hpp's
// set_divisor). The quotient is not divided but refined from the inverse y
// (Markstein's step: q0 = s * y, r = s - q0 * d exactly by a fused multiply-add, q = q0 +
// r * y), which gives the correctly rounded float32 quotient s / d that a division gives:
// checked for every int16 sum and every divisor up to 140000 (larger divisors, below 2^24,
// give quotients below one half and a 0 either way). A division's throughput (one per five
// cycles or so, two per output) bounded this loop. Sums below 2^23 and divisors below 2^24
// are exact as float32, so the correctly rounded quotient, rounded to nearest even by the
// conversion, is the scalar rule's (see average_avx2.hpp's divide_round_even8_small).
// round_half_even(s / d) as int32 of eight int16 sums s (as float32) over divisors d, from
// their inverses y (d = 1 and y = 0 for an empty window, whose average is then 0), by the
// refinement short_lane_averages describes.
inline __m256i quotients_by_inverse(__m256 s, __m256 d, __m256 y) {
    const __m256 q0 = _mm256_mul_ps(s, y);
    const __m256 r = _mm256_fnmadd_ps(q0, d, s);
    return _mm256_cvtps_epi32(_mm256_fmadd_ps(r, y, q0));
}

// Sixteen int32 averages (lo: the first eight, hi: the next), each within S's range, as
// one-byte S.
template <class S>
inline __m128i average_bytes16(__m256i lo, __m256i hi) {
    // (packs interleaves the halves: lanes 0-3, 8-11 | 4-7, 12-15; the permute restores the
    // order.)
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xD8);
    const __m128i w0 = _mm256_castsi256_si128(words), w1 = _mm256_extracti128_si256(words, 1);
    return std::is_signed<S>::value ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
}

template <class S>
inline void short_lane_averages(const std::int16_t* sums, index_t m, const float* divisor,
                                const float* inverse, S* q) {
    for (index_t k = 0; k < m; ++k) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + k * 16));
        const __m256 d = _mm256_broadcast_ss(divisor + k);
        const __m256 y = _mm256_broadcast_ss(inverse + k);
        auto quotients = [&](__m256 s) { return quotients_by_inverse(s, d, y); };
        const __m256i lo = quotients(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(v))));
        const __m256i hi = quotients(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(v, 1))));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k * 16), average_bytes16<S>(lo, hi));
    }
}

// out[i] = round_half_even(sums[i] / d[i]) as one-byte S for i < 16: int16 sums over one
// divisor each (d, y: Divisors::divisor32 and inverse32), as short_lane_averages divides.
template <class S>
inline void averages16_by_inverse(const std::int16_t* sums, const float* d, const float* y, S* out) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums));
    const __m256i lo = quotients_by_inverse(
        _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(v))), _mm256_loadu_ps(d),
        _mm256_loadu_ps(y));
    const __m256i hi = quotients_by_inverse(
        _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(v, 1))),
        _mm256_loadu_ps(d + 8), _mm256_loadu_ps(y + 8));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), average_bytes16<S>(lo, hi));
}

// q[k * 16 + p] = lanes[k * 16 + p] as S, for k < m, p < 16: int16 averages (each within S's
// range) of sixteen planes as bytes, for store_lane_averages. q may be the lanes' own memory
// (each row of bytes is written after its row of int16 is read, and never beyond it).
template <class S>
inline void pack_lane_bytes(const std::int16_t* lanes, index_t m, S* q) {
    static_assert(std::is_integral<S>::value && sizeof(S) == 1, "int8 / uint8 averages");
    for (index_t k = 0; k < m; ++k) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes + k * 16));
        const __m128i w0 = _mm256_castsi256_si128(v), w1 = _mm256_extracti128_si256(v, 1);
        const __m128i bytes =
            std::is_signed<S>::value ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k * 16), bytes);
    }
}

// out[p * stride + k] = q[k * 16 + p] for p < count, k < m (one-byte S): short_lane_averages'
// quotients back plane by plane, through 16x16 byte transposes, 32 outputs of a plane per
// store. q holds at least max(m, 32) rows of 16 (rows from m on: any bytes). The stores stay
// within the planes' outputs: with m < 32 and planes side by side (stride m) each plane's
// store reaches into the next plane's outputs, which that plane's store then rewrites, and
// the last planes (or, between planes stride apart, every plane) go through a buffer.
template <class S>
inline void store_lane_averages(const S* q, index_t m, index_t count, S* out, index_t stride) {
    static_assert(sizeof(S) == 1, "one-byte averages");
    __m256i r[16];
    for (index_t k0 = 0;; k0 += 32) {
        if (m >= 32 && k0 + 32 > m) k0 = m - 32;  // (the last chunk overlaps the one before)
        for (int i = 0; i < 16; ++i) {
            const S* low = q + (k0 + i) * 16;
            const S* high = q + (k0 + 16 + i) * 16;
            r[i] = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(high)),
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(low)));
        }
        transpose16x16_bytes(r);
        for (index_t p = 0; p < count; ++p) {
            S* to = out + p * stride + k0;
            if (m >= 32 || (stride == m && p * m + 32 <= count * m)) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), r[p]);
            } else {
                S row[32];
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(row), r[p]);
                std::memcpy(to, row, static_cast<std::size_t>(m));
            }
        }
        if (k0 + 32 >= m) return;
    }
}

// int16 sums of undilated windows (a contiguous range of rows each: window j is rows
// [begin[j], begin[j] + count[j])) along an axis of `inner` elements a row, inner a multiple
// of 16, for windows of many taps (the int16 plane blocks' axes before the lanes): each
// window's sums from the one before's, the rows that enter added and the rows that leave
// subtracted, which costs the rows a window moves by rather than its taps (uint8 8x585x7x8
// k6,3 in int16 blocks: the six-row windows of the first axis). Wrapping int16 arithmetic:
// every window's sum is within int16 (the blocks' short sums), so a partial result that
// wraps is still that sum modulo 2^16, which is the sum itself: the same sums as adding each
// window's taps. A window whose range does not move forward at both ends (an empty window
// placed anywhere) is summed on its own. `length` rows in, out_len rows out.
template <int V>
inline void sliding_row_sums16(const std::int16_t* src, std::int16_t* dst, const index_t* begin,
                               const index_t* count, index_t out_len, index_t inner) {
    __m256i total[V];
    auto row = [&](index_t r, int v) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + r * inner + 16 * v));
    };
    auto from_scratch = [&](index_t b, index_t e) {
        for (int v = 0; v < V; ++v) total[v] = _mm256_setzero_si256();
        for (index_t r = b; r < e; ++r) {
            for (int v = 0; v < V; ++v) total[v] = _mm256_add_epi16(total[v], row(r, v));
        }
    };
    index_t b0 = begin[0], e0 = b0 + count[0];
    from_scratch(b0, e0);
    for (index_t j = 0;;) {
        for (int v = 0; v < V; ++v) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j * inner + 16 * v), total[v]);
        }
        if (++j == out_len) return;
        const index_t b1 = begin[j], e1 = b1 + count[j];
        if (b1 < b0 || e1 < e0) {
            from_scratch(b1, e1);
        } else {
            for (index_t r = e0; r < e1; ++r) {
                for (int v = 0; v < V; ++v) total[v] = _mm256_add_epi16(total[v], row(r, v));
            }
            for (index_t r = b0; r < b1; ++r) {
                for (int v = 0; v < V; ++v) total[v] = _mm256_sub_epi16(total[v], row(r, v));
            }
        }
        b0 = b1;
        e0 = e1;
    }
}

// sliding_row_sums16 for `outer` rows of `length` rows each (a pass's (outer, length, inner)
// view), four vectors of each row at a time, then one.
inline void sliding_window_sums16(const std::int16_t* src, std::int16_t* dst,
                                  const index_t* begin, const index_t* count, index_t length,
                                  index_t out_len, index_t outer, index_t inner) {
    for (index_t o = 0; o < outer; ++o) {
        const std::int16_t* s = src + o * length * inner;
        std::int16_t* d = dst + o * out_len * inner;
        index_t i = 0;
        for (; i + 64 <= inner; i += 64) {
            sliding_row_sums16<4>(s + i, d + i, begin, count, out_len, inner);
        }
        for (; i < inner; i += 16) sliding_row_sums16<1>(s + i, d + i, begin, count, out_len, inner);
    }
}

// sums[p * stride + k] = lanes[k * L + p] as int32, for p, k < 8: short_tile_in's inverse,
// widening.
inline void short_tile_out(const std::int16_t* lanes, index_t L, std::int32_t* sums,
                           index_t stride) {
    __m128i m[8];
    for (int k = 0; k < 8; ++k) {
        m[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lanes + k * L));
    }
    transpose8x8_epi16(m);
    for (int p = 0; p < 8; ++p) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + p * stride),
                            _mm256_cvtepi16_epi32(m[p]));
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
#endif
