// Max pooling of tiny planes side by side, each plane in a lane: a group of planes is first
// transposed (element e of plane p to lanes[e * L + p], widened to the accumulator), so that
// every tap of the tap table (max.hpp's TapTable) is one contiguous run of L lanes, and the
// winner's plane offset is carried in a lane of an unsigned type as wide as the value (the
// planes have at most tiny_max_plane<A> elements, so any offset fits). The per-tap loop is then a
// plain compare-and-blend over L lanes that vectorises for every element type, where reading
// each plane's element in place costs a scalar load (and for 16-bit floats a conversion) per
// plane and tap.
//
// Taps run in row-major window order and a later tap replaces only a strictly better value,
// so the winner is the one every other path picks: the best value, NaN losing to any number,
// ties (and all-NaN windows) going to the smallest offset.
#ifndef OVPOOL_CORE_MAX_LANES_HPP
#define OVPOOL_CORE_MAX_LANES_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "max.hpp"
#include "max_coded.hpp"
#include "simd/lanes_avx2.hpp"
#include "simd/transpose_avx2.hpp"
#include "simd/widen.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Planes per group: a 32-byte vector of bytes, or 16 lanes of wider values.
template <class A>
constexpr index_t plane_lanes = sizeof(A) == 1 ? 32 : 16;

// lanes[e * L + p] = load<A>(src[p * stride + e]) for e in [0, n), p in [0, count): rows of
// `count` planes into lanes (the AVX2 build moves 1-, 2-, 4- and 8-byte elements by vector
// transposes, filling the lanes past `count` with copies of the last plane; bytes only for
// n >= 16).
template <index_t L, class T, class A>
inline void to_lanes(const T* src, index_t stride, index_t n, index_t count, A* lanes) {
    index_t e = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (sizeof(T) == 1 && sizeof(A) == 1 && L == 32) {
        // 16 bytes of 32 planes at a time: planes k and 16 + k share a vector (one in each
        // half), so that the two 16x16 transposes leave whole rows of 32 lanes.
        if (n >= 16 && count > 0) {
            const T* plane[32];
            for (index_t k = 0; k < 32; ++k) plane[k] = src + std::min(k, count - 1) * stride;
            for (index_t at = 0;; at = std::min(at + 16, n - 16)) {
                __m256i m[16];
                for (index_t k = 0; k < 16; ++k) {
                    m[k] = _mm256_inserti128_si256(
                        _mm256_castsi128_si256(_mm_loadu_si128(
                            reinterpret_cast<const __m128i*>(plane[k] + at))),
                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane[16 + k] + at)), 1);
                }
                simd::transpose16x16_bytes(m);
                for (index_t e = 0; e < 16; ++e) {
                    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + (at + e) * L), m[e]);
                }
                if (at == n - 16) break;
            }
            e = n;
        }
    }
    if constexpr (sizeof(T) == sizeof(A) && (sizeof(A) == 2 || sizeof(A) == 4 || sizeof(A) == 8)) {
        constexpr int bytes = static_cast<int>(sizeof(A));
        constexpr index_t side = simd::block_side<bytes>;
        // (A last block overlapping the previous one, rather than a scalar tail. Rows
        // addressed in the transposes' loops, not through arrays of row pointers, whose
        // stores and loads cost as much as the transposes.)
        const index_t last = n >= side ? n - side : -1;
        for (index_t h = 0; last >= 0 && h < count; h += side) {
            const T* plane[side];
            for (index_t k = 0; k < side; ++k) plane[k] = src + std::min(h + k, count - 1) * stride;
            for (index_t at = 0; at <= last; at = at + side <= last || at == last ? at + side
                                                                                  : last) {
                simd::transpose_rows<bytes>(
                    [&](int k) { return static_cast<const void*>(plane[k] + at); },
                    [&](int k) { return static_cast<void*>(lanes + (at + k) * L + h); });
            }
        }
        if (last >= 0) e = n;
    }
#endif
    for (; e < n; ++e) {
        for (index_t p = 0; p < count; ++p) lanes[e * L + p] = load<A>(src[p * stride + e]);
    }
}

// dst[p * stride + k] = store<T>(lanes[k * L + p]) for k in [0, n), p in [0, count): out of
// the lanes (vector transposes as in to_lanes).
template <index_t L, class A, class T>
inline void from_lanes(const A* lanes, index_t n, index_t count, T* dst, index_t stride) {
    index_t k = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (sizeof(T) == 1 && sizeof(A) == 1 && L == 32) {
        // to_lanes's transposes backwards: 16 rows of lanes give 16 bytes of each plane (the
        // low halves planes 0 .. 15, the high halves 16 .. 31); rows from n - 16 for the last
        // block, or (n < 16) the n rows through a buffer.
        if (count > 0) {
            alignas(32) std::uint8_t part[32][16];
            for (index_t at = 0;; at = std::min(at + 16, n >= 16 ? n - 16 : index_t{0})) {
                __m256i m[16];
                for (index_t e = 0; e < 16; ++e) {
                    m[e] = e < n ? _mm256_loadu_si256(
                                       reinterpret_cast<const __m256i*>(lanes + (at + e) * L))
                                 : _mm256_setzero_si256();
                }
                simd::transpose16x16_bytes(m);
                auto half = [&](index_t i) {
                    return i < 16 ? _mm256_castsi256_si128(m[i])
                                  : _mm256_extracti128_si256(m[i - 16], 1);
                };
                // Planes [0, direct) take a whole 16-byte store: n >= 16, or (n < 16 with
                // planes back to back) the bytes past plane i's are the group's next planes',
                // stored after it; the rest go through `part`. (Two loops rather than a test
                // per plane: tiny planes pay that loop once per 32 planes.)
                const index_t direct =
                    n >= 16 ? count
                            : stride == n && count * n >= 16 ? (count * n - 16) / n + 1 : 0;
                index_t i = 0;
                for (; i < direct; ++i) {
                    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * stride + at), half(i));
                }
                for (; i < count; ++i) {
                    _mm_store_si128(reinterpret_cast<__m128i*>(part[i]), half(i));
                    std::memcpy(dst + i * stride, part[i], static_cast<std::size_t>(n));
                }
                if (n < 16 || at == n - 16) break;
            }
            k = n;
        }
    }
    if constexpr (sizeof(T) == sizeof(A) && (sizeof(A) == 2 || sizeof(A) == 4 || sizeof(A) == 8)) {
        constexpr int bytes = static_cast<int>(sizeof(A));
        constexpr index_t side = simd::block_side<bytes>;
        alignas(32) A sink[side];  // rows of lanes without a plane
        const index_t last = n >= side ? n - side : -1;  // (as in to_lanes)
        for (index_t h = 0; last >= 0 && h < count; h += side) {
            T* plane[side];
            for (index_t i = 0; i < side; ++i) plane[i] = h + i < count ? dst + (h + i) * stride : nullptr;
            const bool whole = h + side <= count;
            for (index_t at = 0; at <= last; at = at + side <= last || at == last ? at + side
                                                                                  : last) {
                auto lane_row = [&](int i) {
                    return static_cast<const void*>(lanes + (at + i) * L + h);
                };
                if (whole) {
                    simd::transpose_rows<bytes>(lane_row, [&](int i) {
                        return static_cast<void*>(dst + (h + i) * stride + at);
                    });
                } else {
                    simd::transpose_rows<bytes>(lane_row, [&](int i) {
                        return plane[i] != nullptr ? static_cast<void*>(plane[i] + at)
                                                   : static_cast<void*>(sink);
                    });
                }
            }
        }
        if (last >= 0) k = n;
    }
#endif
    for (; k < n; ++k) {
        for (index_t p = 0; p < count; ++p) dst[p * stride + k] = store<T>(lanes[k * L + p]);
    }
}

// best[0 .. L), code[0 .. L) = the winner of each lane over taps lanes + offset[i] * L for i in
// [0, taps) (taps >= 1), and that tap's offset plus `base` (a row's first offset, added to the
// code constants rather than to every code after).
#if defined(__GNUC__) && !defined(__clang__)
// GCC: vector types, so that the lanes are compared in whole vectors (left to
// itself, GCC unrolls the short loop over lanes and compares them one by one with branches).
template <class A, index_t L>
inline void lanes_max(const A* lanes, const index_t* offset, index_t taps, A* best,
                      tap_code_t<A>* code, tap_code_t<A> base = 0) {
    typedef tap_code_t<A> U;
    typedef A V __attribute__((vector_size(32)));
    typedef U C __attribute__((vector_size(32)));
    constexpr index_t per = 32 / static_cast<index_t>(sizeof(A)), chunks = L / per;
    static_assert(L % per == 0, "whole vectors of lanes");
    V b[chunks];
    C c[chunks];
    for (index_t k = 0; k < chunks; ++k) {
        std::memcpy(&b[k], lanes + offset[0] * L + k * per, 32);
        c[k] = C{} + static_cast<U>(offset[0] + base);
    }
    for (index_t i = 1; i < taps; ++i) {
        const A* tap = lanes + offset[i] * L;
        C candidate = C{} + static_cast<U>(offset[i] + base);
        for (index_t k = 0; k < chunks; ++k) {
            V v;
            std::memcpy(&v, tap + k * per, 32);
            // replaces(v, b): !(v <= b) && v == v, lane by lane; keep b elsewhere.
            auto keep = (v <= b[k]) | (v != v);
            b[k] = keep ? b[k] : v;
            c[k] = keep ? c[k] : candidate;
        }
    }
    for (index_t k = 0; k < chunks; ++k) {
        std::memcpy(best + k * per, &b[k], 32);
        std::memcpy(code + k * per, &c[k], 32);
    }
}
#else
template <class A, index_t L>
inline void lanes_max(const A* lanes, const index_t* offset, index_t taps, A* best,
                      tap_code_t<A>* code, tap_code_t<A> base = 0) {
    typedef tap_code_t<A> U;
    coded_first(best, code, lanes + offset[0] * L, static_cast<const U*>(nullptr),
                static_cast<U>(offset[0] + base), L);
    for (index_t i = 1; i < taps; ++i) {
        coded_next(best, code, lanes + offset[i] * L, static_cast<const U*>(nullptr),
                   static_cast<U>(offset[i] + base), L);
    }
}
#endif

// index[p * stride + k] = the index of offset code[p * plane_step + k * step] of plane
// first + p (for p < count, k < n): (plane % plane_modulus) * in_plane + offset, the offset
// taken modulo offset_modulus when that is below in_plane. The plane's term without a
// division per plane.
template <class I, class U>
inline void lane_indices(I* index, index_t stride, const U* code, index_t plane_step,
                         index_t step, index_t n, index_t first, index_t count,
                         const IndexSpec& spec, index_t in_plane) {
    const std::int64_t modulus = spec.offset_modulus;
    const bool wrap = modulus < in_plane;
    std::int64_t plane_at = first % spec.plane_modulus;
    if (!wrap && plane_step == 1 && count <= 32) {
        // Codes in lanes (code[p + k * step]), as few outputs a plane leave them: the planes'
        // terms first, then output by output a run over the planes (tiny planes of two
        // outputs spent more on each plane's loop than on its stores).
        std::int64_t base[32];
        for (index_t p = 0; p < count; ++p) {
            base[p] = plane_at * in_plane;
            plane_at = plane_at + 1 == spec.plane_modulus ? 0 : plane_at + 1;
        }
        for (index_t k = 0; k < n; ++k) {
            const U* from = code + k * step;
            for (index_t p = 0; p < count; ++p) {
                index[p * stride + k] =
                    static_cast<I>(base[p] + static_cast<std::int64_t>(from[p]));
            }
        }
        return;
    }
    for (index_t p = 0; p < count; ++p) {
        const std::int64_t base = plane_at * in_plane;
        I* to = index + p * stride;
        const U* from = code + p * plane_step;
        if (wrap) {
            for (index_t k = 0; k < n; ++k) {
                std::int64_t at = static_cast<std::int64_t>(from[k * step]);
                to[k] = static_cast<I>(base + at % modulus);
            }
        } else if (step == 1) {
            index_t k = 0;
#if OVPOOL_CORE_HAVE_AVX2
            if constexpr (sizeof(U) <= 2) k = simd::codes_plus_base(to, from, base, n);
#endif
            for (; k < n; ++k) {
                to[k] = static_cast<I>(base + static_cast<std::int64_t>(from[k]));
            }
        } else {
            for (index_t k = 0; k < n; ++k) {
                to[k] = static_cast<I>(base + static_cast<std::int64_t>(from[k * step]));
            }
        }
        plane_at = plane_at + 1 == spec.plane_modulus ? 0 : plane_at + 1;
    }
}

// Whether max pooling of planes of geometry g (storage S, lanes of A) goes through
// max_planes_lanes (the rule is config.hpp's, by tiny_small_plane); planes of more than
// tiny_small_plane elements only with mid_planes.
template <class S, class A>
bool tiny_planes_suit(const Geometry& g, bool mid_planes) {
    if (g.in_plane > (mid_planes ? tiny_max_plane<A> : tiny_small_plane) ||
        (g.in_plane > tiny_small_plane && g.naxes < 2)) {
        return false;
    }
    const index_t taps = tap_table_size(g, tiny_max_taps);
    if (taps > tiny_max_taps) return false;
    return g.in_plane <= tiny_small_plane ||
           taps * static_cast<index_t>(sizeof(A)) <=
               (is_half_float<S> ? tiny_half_tap_bytes : tiny_tap_bytes) * g.in_plane;
}

// The scratch (elements of A) of max_planes_lanes: the lanes, then for 16-bit floats their
// planes widened to float32 (A); whole 64-byte lines.
template <class Src, class A>
index_t max_lanes_scratch(const Geometry& g) {
    const index_t n = (is_half_float<Src> ? 2 : 1) * g.in_plane * plane_lanes<A>;
    constexpr index_t line = cache_line_slack<A>;
    return (n + line - 1) / line * line;
}

// Outputs max_planes_lanes takes out of the lanes at a time.
constexpr index_t lanes_out_chunk = 64;

// In the AVX2 build, index[0 .. count * n) for planes [0, count) (count <= L) of n <= 8
// outputs each (the whole plane: n == g.out_plane) from their winners' codes code[k * L + p]
// (uint16 codes in 16 lanes, or uint8 codes in 32 lanes, widened to 16 bits first), when the
// offsets do not wrap and the planes' terms are all 0 or do not wrap within the group (spec):
// each lane's codes plus its plane's offset in the group (L planes of at most 65536 / L
// elements fit in 16 bits), out of the lanes by untranspose_few16 (one per sixteen planes),
// then one run of base + offset for the group, rather than lane_indices's loops over planes
// and outputs. Returns whether it wrote them.
template <class I, class U>
inline bool few_lane_indices(I* index, const U* code, index_t n, index_t first_plane,
                             index_t count, const IndexSpec& spec, const Geometry& g) {
#if OVPOOL_CORE_HAVE_AVX2
    static_assert(sizeof(U) <= 2, "8- or 16-bit codes");
    constexpr index_t L = sizeof(U) == 1 ? 32 : 16;
    const index_t in_plane = g.in_plane;
    const std::int64_t plane_at = first_plane % spec.plane_modulus;
    // (Plane terms of one plane's indices alone, plane_modulus 1, are all 0.)
    const bool one_plane = spec.plane_modulus == 1;
    if (n > simd::block_side<2> || n != g.out_plane || spec.offset_modulus < in_plane ||
        (!one_plane && plane_at + count > spec.plane_modulus) || in_plane * L > 65536) {
        return false;
    }
    const __m256i plane_offset =
        one_plane ? _mm256_setzero_si256()
                  : _mm256_mullo_epi16(
                        _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                        _mm256_set1_epi16(static_cast<std::int16_t>(in_plane)));
    // (Sixteen planes' n entries and the 8 - n that the last one's store writes past them,
    // twice for byte lanes: 31 * n + 8 <= 2 * 16 * 8 for n <= 8.)
    alignas(32) std::uint16_t flat[2 * 16 * 8];
    if constexpr (sizeof(U) == 2) {
        simd::untranspose_few16(code, n, flat, plane_offset);
    } else {
        // Planes 0 .. 15 and 16 .. 31 of each output's 32 byte lanes as two rows of 16-bit
        // lanes, the second half's offsets in the group 16 planes further.
        alignas(32) std::uint16_t wide[2][8 * 16];
        for (index_t k = 0; k < n; ++k) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(code + k * L));
            _mm256_store_si256(reinterpret_cast<__m256i*>(wide[0] + k * 16),
                               _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v)));
            _mm256_store_si256(reinterpret_cast<__m256i*>(wide[1] + k * 16),
                               _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1)));
        }
        simd::untranspose_few16(wide[0], n, flat, plane_offset);
        if (count > 16) {
            const std::int16_t half = static_cast<std::int16_t>(one_plane ? 0 : 16 * in_plane);
            const __m256i later = _mm256_add_epi16(plane_offset, _mm256_set1_epi16(half));
            simd::untranspose_few16(wide[1], n, flat + 16 * n, later);
        }
    }
    const index_t total = count * n;
    const std::int64_t base = plane_at * in_plane;
    for (index_t j = simd::codes_plus_base(index, static_cast<const std::uint16_t*>(flat), base,
                                           total);
         j < total; ++j) {
        index[j] = static_cast<I>(base + static_cast<std::int64_t>(flat[j]));
    }
    return true;
#else
    (void)index, (void)code, (void)n, (void)first_plane, (void)count, (void)spec, (void)g;
    return false;
#endif
}

// index[p * out_plane + k] for the n outputs k of planes [0, count) (first_plane on) from
// their winners' codes code[k * L + p] in lanes; flat_code holds L * n codes.
template <index_t L, class I, class U>
inline void lanes_out_indices(I* index, const U* code, U* flat_code, index_t n,
                              index_t first_plane, index_t count, const IndexSpec& spec,
                              const Geometry& g) {
    if (n > 8) {
        from_lanes<L>(code, n, count, flat_code, n);
        lane_indices(index, g.out_plane, static_cast<const U*>(flat_code), n, 1, n, first_plane,
                     count, spec, g.in_plane);
    } else {
        // (A few outputs: by few_lane_indices for 8- and 16-bit codes where it applies, else
        // read in place, a plane's loop costing more than its stores.)
        if constexpr (sizeof(U) <= 2) {
            static_assert(L == (sizeof(U) == 1 ? 32 : 16), "the lanes of the codes' width");
            if (few_lane_indices(index, code, n, first_plane, count, spec, g)) return;
        }
        lane_indices(index, g.out_plane, code, 1, L, n, first_plane, count, spec, g.in_plane);
    }
}

// best / code of outputs k0 .. k0 + n - 1 (n <= lanes_out_chunk), L lanes each: the maxima
// of their windows' taps (t's offsets into `lanes`) and the taps' codes; an empty window takes
// `empty` and code 0.
template <class A, index_t L>
inline void lanes_window_maxima(const A* lanes, const TapTable& t, index_t k0, index_t n,
                                A empty, A* best, tap_code_t<A>* code) {
    for (index_t k = 0; k < n; ++k) {
        index_t i = t.first[k0 + k], end = t.first[k0 + k + 1];
        if (i == end) {
            std::fill(best + k * L, best + (k + 1) * L, empty);
            std::fill(code + k * L, code + (k + 1) * L, tap_code_t<A>{0});
            continue;
        }
        lanes_max<A, L>(lanes, t.offset.get() + i, end - i, best + k * L, code + k * L);
    }
}

// Planes [0, count) of x (count at most plane_lanes<A>) pooled through the tap table t. With
// index_out, indices go to index_out[plane * out_plane + k] (int64 or int32). The planes go
// into lanes and the results (values, winners' offsets) out of them through to_lanes and
// from_lanes, lanes_out_chunk outputs at a time; 16-bit floats are widened first, all planes
// in one run. `lanes` holds max_lanes_scratch<Src, A>(g) elements.
template <class Src, class S, class A, class I>
void max_planes_lanes(const Src* x, S* out, I* index_out, index_t first_plane, index_t count,
                      const IndexSpec& spec, const TapTable& t, const Geometry& g,
                      A empty_value, A* lanes) {
    typedef tap_code_t<A> U;
    constexpr index_t L = plane_lanes<A>, chunk = lanes_out_chunk;
    const index_t in_plane = g.in_plane, out_plane = g.out_plane;
    // Lanes without a plane are combined too (fixed-length loops) but never stored.
    if (count < L) std::fill(lanes, lanes + in_plane * L, A{});
    if constexpr (is_half_float<Src>) {
        float* wide = lanes + in_plane * L;
        widen_row(x, wide, count * in_plane);
        to_lanes<L>(static_cast<const float*>(wide), in_plane, in_plane, count, lanes);
    } else {
        to_lanes<L>(x, in_plane, in_plane, count, lanes);
    }
    alignas(32) A best[chunk * L];
    alignas(32) U code[chunk * L];
    alignas(32) U flat_code[chunk * L];
    for (index_t k0 = 0; k0 < out_plane; k0 += chunk) {
        const index_t n = std::min(chunk, out_plane - k0);
        lanes_window_maxima<A, L>(lanes, t, k0, n, empty_value, best, code);
        if constexpr (sizeof(S) == sizeof(A)) {
            from_lanes<L>(static_cast<const A*>(best), n, count, out + k0, out_plane);
        } else {
            // (16-bit floats: narrowed from a float32 copy, in one run when the chunk is the
            // whole plane.)
            alignas(32) A flat[chunk * L];
            from_lanes<L>(static_cast<const A*>(best), n, count, flat, n);
            if (n == out_plane) {
                narrow_row(static_cast<const A*>(flat), out, count * n);
            } else {
                for (index_t p = 0; p < count; ++p) {
                    narrow_row(static_cast<const A*>(flat + p * n), out + p * out_plane + k0, n);
                }
            }
        }
        if (index_out != nullptr) {
            lanes_out_indices<L>(index_out + k0, static_cast<const U*>(code), flat_code, n,
                                 first_plane, count, spec, g);
        }
    }
}

// 16-bit floats (S float16 or bfloat16, with an empty value whose key empty_key is neither 0
// nor half_nan_key) as max_planes_lanes pools them, on their int16 keys (max_coded.hpp's
// half_key) rather than widened to float32: sixteen planes of keys and uint16 codes fill one
// vector each, where the float32 lanes take two of each. The planes' bits go into the lanes
// and are keyed there; the winners' values are their keys read back (coded_half_run), the
// winners of keys 0 and half_nan_key (values of different bits) read from the input at their
// offset, widened and narrowed as the float32 lanes give them (a NaN made quiet). `lanes`
// holds half_lanes_scratch(g) elements.
template <class S, class I>
void max_half_planes_lanes(const S* x, S* out, I* index_out, index_t first_plane,
                           index_t count, const IndexSpec& spec, const TapTable& t,
                           const Geometry& g, std::int16_t empty_key, std::int16_t* lanes) {
    typedef std::uint16_t U;
    constexpr index_t L = plane_lanes<std::int16_t>, chunk = lanes_out_chunk;
    const index_t in_plane = g.in_plane, out_plane = g.out_plane;
    U* bits = reinterpret_cast<U*>(lanes);
    if (count < L) std::fill(bits, bits + in_plane * L, U{0});
    to_lanes<L>(reinterpret_cast<const U*>(x), in_plane, in_plane, count, bits);
    // (In place: in_plane * L elements are whole vectors of sixteen, none keyed twice.)
    half_keys_of(static_cast<const U*>(bits), lanes, in_plane * L, half_infinity_bits<S>);
    alignas(32) std::int16_t best[chunk * L];
    alignas(32) U code[chunk * L];
    alignas(32) std::int16_t flat[chunk * L];
    alignas(32) U flat_code[chunk * L];
    for (index_t k0 = 0; k0 < out_plane; k0 += chunk) {
        const index_t n = std::min(chunk, out_plane - k0);
        lanes_window_maxima<std::int16_t, L>(lanes, t, k0, n, empty_key, best, code);
        bool few = false;
#if OVPOOL_CORE_HAVE_AVX2
        if (n < simd::block_side<2>) {
            simd::untranspose_few16(reinterpret_cast<const U*>(best), n,
                                    reinterpret_cast<U*>(flat), _mm256_setzero_si256());
            few = true;
        }
#endif
        if (!few) from_lanes<L>(static_cast<const std::int16_t*>(best), n, count, flat, n);
        bool shared = false;
        if (n == out_plane) {
            shared = coded_half_run(out, static_cast<const std::int16_t*>(flat), count * n);
        } else {
            for (index_t p = 0; p < count; ++p) {
                shared |= coded_half_run(out + p * out_plane + k0,
                                         static_cast<const std::int16_t*>(flat + p * n), n);
            }
        }
        if (shared) {
            for (index_t p = 0; p < count; ++p) {
                for (index_t k = 0; k < n; ++k) {
                    const std::int16_t key = flat[p * n + k];
                    if (key != 0 && key != half_nan_key) continue;
                    out[p * out_plane + k0 + k] =
                        store<S>(load<float>(x[p * in_plane + code[k * L + p]]));
                }
            }
        }
        if (index_out != nullptr) {
            lanes_out_indices<L>(index_out + k0, static_cast<const U*>(code), flat_code, n,
                                 first_plane, count, spec, g);
        }
    }
}

// The scratch (int16 elements) of max_half_planes_lanes: the lanes, whole 64-byte lines.
inline index_t half_lanes_scratch(const Geometry& g) {
    const index_t n = g.in_plane * plane_lanes<std::int16_t>;
    constexpr index_t line = cache_line_slack<std::int16_t>;
    return (n + line - 1) / line * line;
}

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
