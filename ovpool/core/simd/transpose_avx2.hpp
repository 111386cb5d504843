// AVX2 transposes: eight vectors of 32-bit lanes in registers, eight of 16-bit lanes (8x8),
// the phases of groups of 32- and 16-bit elements, two 16x16 byte matrices in registers, and
// square blocks of 2-, 4- and 8-byte elements (8x8, 8x8 and 4x4: one 16- or 32-byte vector
// per row) between rows given by pointers.
// Only the bits move (shuffles, no arithmetic), so the result is the scalar copy's, NaN
// payloads included.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_TRANSPOSE_AVX2_HPP
#define OVPOOL_CORE_SIMD_TRANSPOSE_AVX2_HPP

#include <cstdint>

#include "../config.hpp"
#include "../types.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Transposes the 8x8 matrix of 32-bit lanes m[0..8) in place.
inline void transpose8x8(__m256* m) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(m[i], m[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(m[i], m[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; ++i) {
        m[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        m[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
}

// Phase q of eight consecutive groups of S 32-bit elements held in in[0 .. S) (eight elements
// each): elements q, q + S, ..., q + 7S, each lane permuted out of the vector holding it and
// blended into place. A copy, so the bits are the scalar loop's.
template <int S>
inline __m256 phase8(const __m256* in, int q) {
    static_assert(S >= 2 && S <= 8, "one to eight vectors per phase");
    const __m256i lane = _mm256_setr_epi32(0, S, 2 * S, 3 * S, 4 * S, 5 * S, 6 * S, 7 * S);
    const __m256i at = _mm256_add_epi32(lane, _mm256_set1_epi32(q));
    const __m256i within = _mm256_and_si256(at, _mm256_set1_epi32(7));
    const __m256i vector = _mm256_srli_epi32(at, 3);
    __m256 phase = _mm256_permutevar8x32_ps(in[0], within);
    for (int v = 1; v < S; ++v) {
        __m256 mine = _mm256_castsi256_ps(_mm256_cmpeq_epi32(vector, _mm256_set1_epi32(v)));
        phase = _mm256_blendv_ps(phase, _mm256_permutevar8x32_ps(in[v], within), mine);
    }
    return phase;
}

// The byte shuffles of phase16: mask [q][v] moves, within 16 bytes, the 16-bit elements of
// phase q (elements q, q + S, ..., q + 7S of eight groups of S) held by the group's vector v
// (elements 8v .. 8v + 7) to their places in the phase; the other bytes are zeroed (0x80).
template <int S>
struct PhaseMasks16 {
    std::uint8_t m[S][S][16];
};

template <int S>
constexpr PhaseMasks16<S> make_phase_masks16() {
    PhaseMasks16<S> p{};
    for (int q = 0; q < S; ++q) {
        for (int v = 0; v < S; ++v) {
            for (int j = 0; j < 8; ++j) {
                const int e = j * S + q;
                const bool mine = e / 8 == v;
                p.m[q][v][2 * j] = mine ? static_cast<std::uint8_t>(2 * (e % 8)) : 0x80;
                p.m[q][v][2 * j + 1] = mine ? static_cast<std::uint8_t>(2 * (e % 8) + 1) : 0x80;
            }
        }
    }
    return p;
}

template <int S>
inline constexpr PhaseMasks16<S> phase_masks16 = make_phase_masks16<S>();

// 16 (V = __m256i) or 8 (V = __m128i) consecutive groups of S 16-bit elements at `from`, as
// phase16 takes them: in[v] holds elements 8v .. 8v + 7 of the first eight groups (and, in a
// 256-bit vector's high half, of the next eight).
template <int S, class V>
inline void load_groups16(const std::int16_t* from, V* in) {
    static_assert(S >= 2 && S <= 8, "one to eight vectors per phase");
    for (int v = 0; v < S; ++v) {
        const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 8 * v));
        if constexpr (sizeof(V) == 32) {
            const __m128i high =
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 8 * S + 8 * v));
            in[v] = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
        } else {
            in[v] = low;
        }
    }
}

// Phase q (elements q, q + S, ..., of each group of S) of the groups load_groups16 loaded:
// the OR of one byte shuffle of each of the S vectors. No gathers; a copy, so the bits are
// the scalar loop's.
template <int S, class V>
inline V phase16(const V* in, int q) {
    V phase;
    for (int v = 0; v < S; ++v) {
        const __m128i m =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(phase_masks16<S>.m[q][v]));
        if constexpr (sizeof(V) == 32) {
            const __m256i part = _mm256_shuffle_epi8(in[v], _mm256_broadcastsi128_si256(m));
            phase = v == 0 ? part : _mm256_or_si256(phase, part);
        } else {
            const __m128i part = _mm_shuffle_epi8(in[v], m);
            phase = v == 0 ? part : _mm_or_si128(phase, part);
        }
    }
    return phase;
}

// Transposes two 16x16 byte matrices at once, one in each 128-bit half of m[0..16): byte c of
// row r goes to byte r of row c. (Four rounds of byte interleaves of rows i and i + 8 make
// the transpose.)
inline void transpose16x16_bytes(__m256i* m) {
    for (int round = 0; round < 4; ++round) {
        __m256i t[16];
        for (int i = 0; i < 8; ++i) {
            t[2 * i] = _mm256_unpacklo_epi8(m[i], m[i + 8]);
            t[2 * i + 1] = _mm256_unpackhi_epi8(m[i], m[i + 8]);
        }
        for (int i = 0; i < 16; ++i) m[i] = t[i];
    }
}

// The interleaves of 16-, 32- and 64-bit lanes, for 128-bit vectors and (within each half)
// 256-bit ones.
inline __m128i unpack_lo(__m128i a, __m128i b, int bits) {
    return bits == 16 ? _mm_unpacklo_epi16(a, b) : bits == 32 ? _mm_unpacklo_epi32(a, b)
                                                              : _mm_unpacklo_epi64(a, b);
}
inline __m128i unpack_hi(__m128i a, __m128i b, int bits) {
    return bits == 16 ? _mm_unpackhi_epi16(a, b) : bits == 32 ? _mm_unpackhi_epi32(a, b)
                                                              : _mm_unpackhi_epi64(a, b);
}
inline __m256i unpack_lo(__m256i a, __m256i b, int bits) {
    return bits == 16 ? _mm256_unpacklo_epi16(a, b) : bits == 32 ? _mm256_unpacklo_epi32(a, b)
                                                                 : _mm256_unpacklo_epi64(a, b);
}
inline __m256i unpack_hi(__m256i a, __m256i b, int bits) {
    return bits == 16 ? _mm256_unpackhi_epi16(a, b) : bits == 32 ? _mm256_unpackhi_epi32(a, b)
                                                                 : _mm256_unpackhi_epi64(a, b);
}

// Transposes the 8x8 matrix of 16-bit lanes m[0..8) in place (V = __m128i), or two of them at
// once, one in each 128-bit half (V = __m256i): three rounds of interleaves, 16-, 32- then
// 64-bit. Always inlined: with more callers gcc stopped inlining it into the int16 plane
// blocks, whose int8 / uint8 averages then took 1.4-1.6x the time.
template <class V>
OVPOOL_FORCE_INLINE
inline void transpose8x8_epi16(V* m) {
    V t[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = unpack_lo(m[i], m[i + 1], 16);
        t[i + 1] = unpack_hi(m[i], m[i + 1], 16);
    }
    for (int i = 0; i < 8; i += 4) {
        m[i] = unpack_lo(t[i], t[i + 2], 32);
        m[i + 1] = unpack_hi(t[i], t[i + 2], 32);
        m[i + 2] = unpack_lo(t[i + 1], t[i + 3], 32);
        m[i + 3] = unpack_hi(t[i + 1], t[i + 3], 32);
    }
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = unpack_lo(m[i], m[i + 4], 64);
        t[2 * i + 1] = unpack_hi(m[i], m[i + 4], 64);
    }
    for (int i = 0; i < 8; ++i) m[i] = t[i];
}

// Elements of `Bytes` bytes in one 32-byte vector (16-byte for 2-byte elements): the side of
// transpose_block's square.
template <int Bytes>
constexpr index_t block_side = Bytes == 2 ? 8 : 32 / Bytes;

// dst_row(i)[k] = src_row(k)[i] for i, k in [0, block_side<Bytes>): src_row(k) and
// dst_row(i) give the address (const void* / void*) of one row of block_side elements of
// Bytes (2, 4 or 8) bytes.
template <int Bytes, class SrcRow, class DstRow>
inline void transpose_rows(const SrcRow& src_row, const DstRow& dst_row) {
    static_assert(Bytes == 2 || Bytes == 4 || Bytes == 8, "2-, 4- or 8-byte elements");
    if constexpr (Bytes == 2) {
        __m128i m[8];
        for (int k = 0; k < 8; ++k) {
            m[k] = _mm_loadu_si128(static_cast<const __m128i*>(src_row(k)));
        }
        transpose8x8_epi16(m);
        for (int i = 0; i < 8; ++i) _mm_storeu_si128(static_cast<__m128i*>(dst_row(i)), m[i]);
    } else if constexpr (Bytes == 4) {
        __m256 m[8];
        for (int k = 0; k < 8; ++k) m[k] = _mm256_loadu_ps(static_cast<const float*>(src_row(k)));
        transpose8x8(m);
        for (int k = 0; k < 8; ++k) _mm256_storeu_ps(static_cast<float*>(dst_row(k)), m[k]);
    } else {
        __m256d r[4], t[4];
        for (int k = 0; k < 4; ++k) r[k] = _mm256_loadu_pd(static_cast<const double*>(src_row(k)));
        t[0] = _mm256_unpacklo_pd(r[0], r[1]);
        t[1] = _mm256_unpackhi_pd(r[0], r[1]);
        t[2] = _mm256_unpacklo_pd(r[2], r[3]);
        t[3] = _mm256_unpackhi_pd(r[2], r[3]);
        const __m256d rows[4] = {_mm256_permute2f128_pd(t[0], t[2], 0x20),
                                 _mm256_permute2f128_pd(t[1], t[3], 0x20),
                                 _mm256_permute2f128_pd(t[0], t[2], 0x31),
                                 _mm256_permute2f128_pd(t[1], t[3], 0x31)};
        for (int i = 0; i < 4; ++i) _mm256_storeu_pd(static_cast<double*>(dst_row(i)), rows[i]);
    }
}

// dst[i][k] = src[k][i] for i, k in [0, block_side<Bytes>): each src[k] and dst[i] points to
// one row of block_side elements of Bytes (2, 4 or 8) bytes.
template <int Bytes>
inline void transpose_block(const void* const* src, void* const* dst) {
    transpose_rows<Bytes>([&](int k) { return src[k]; }, [&](int i) { return dst[i]; });
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
#endif
