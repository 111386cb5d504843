// Max pooling of tiny planes side by side, each plane in a lane: a group of planes is first
// transposed (element e of plane p to lanes[e * L + p], widened to the accumulator), so that
// every tap of the tap table (max.hpp's TapTable) is one contiguous run of L lanes, and the
// winner's plane offset is carried in a lane of an unsigned type as wide as the value (the
// planes have at most tiny_max_plane elements, so any offset fits). The per-tap loop is then a
// plain compare-and-blend over L lanes that vectorises for every element type, where reading
// each plane's element in place costs a scalar load (and for 16-bit floats a conversion) per
// plane and tap.
//
// Taps run in row-major window order and a later tap replaces only a strictly better value,
// so the winner is the one every other path picks: the best value, NaN losing to any number,
// ties (and all-NaN windows) going to the smallest offset.
#ifndef OVPOOL_CORE_MAX_LANES_HPP
#define OVPOOL_CORE_MAX_LANES_HPP

#include <cstdint>
#include <cstring>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "max.hpp"
#include "max_coded.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Planes per group: a 32-byte vector of bytes, or 16 lanes of wider values.
template <class A>
constexpr index_t plane_lanes = sizeof(A) == 1 ? 32 : 16;

// best[0 .. L), code[0 .. L) = the winner of each lane over taps lanes + offset[i] * L for i in
// [0, taps) (taps >= 1), and that tap's offset.
#if defined(__GNUC__) && !defined(__clang__)
// GCC: vector types, so that the lanes are compared in whole vectors (left to
// itself, GCC unrolls the short loop over lanes and compares them one by one with branches).
template <class A, index_t L>
inline void lanes_max(const A* lanes, const index_t* offset, index_t taps, A* best,
                      tap_code_t<A>* code) {
    typedef tap_code_t<A> U;
    typedef A V __attribute__((vector_size(32)));
    typedef U C __attribute__((vector_size(32)));
    constexpr index_t per = 32 / static_cast<index_t>(sizeof(A)), chunks = L / per;
    static_assert(L % per == 0, "whole vectors of lanes");
    V b[chunks];
    C c[chunks];
    for (index_t k = 0; k < chunks; ++k) {
        std::memcpy(&b[k], lanes + offset[0] * L + k * per, 32);
        c[k] = C{} + static_cast<U>(offset[0]);
    }
    for (index_t i = 1; i < taps; ++i) {
        const A* tap = lanes + offset[i] * L;
        C candidate = C{} + static_cast<U>(offset[i]);
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
                      tap_code_t<A>* code) {
    typedef tap_code_t<A> U;
    coded_first(best, code, lanes + offset[0] * L, static_cast<const U*>(nullptr),
                static_cast<U>(offset[0]), L);
    for (index_t i = 1; i < taps; ++i) {
        coded_next(best, code, lanes + offset[i] * L, static_cast<const U*>(nullptr),
                   static_cast<U>(offset[i]), L);
    }
}
#endif

// Planes [0, count) of x (count at most plane_lanes<A>) pooled through the tap table t. With
// index_out, indices go to index_out[plane * out_plane + k] (int64 or int32).
template <class Src, class S, class A, class I>
void max_planes_lanes(const Src* x, S* out, I* index_out, index_t first_plane, index_t count,
                      const IndexSpec& spec, const TapTable& t, const Geometry& g,
                      A empty_value) {
    typedef tap_code_t<A> U;
    constexpr index_t L = plane_lanes<A>;
    const index_t in_plane = g.in_plane, out_plane = g.out_plane;
    alignas(32) A lanes[tiny_max_plane * L];
    for (index_t p = 0; p < count; ++p) {
        const Src* plane = x + p * in_plane;
        for (index_t e = 0; e < in_plane; ++e) lanes[e * L + p] = load<A>(plane[e]);
    }
    // Lanes without a plane are combined too (fixed-length loops) but never stored.
    for (index_t p = count; p < L; ++p) {
        for (index_t e = 0; e < in_plane; ++e) lanes[e * L + p] = A{};
    }
    std::int64_t base[L];
    for (index_t p = 0; p < count; ++p) {
        base[p] = ((first_plane + p) % spec.plane_modulus) * in_plane;
    }
    const std::int64_t offset_modulus = spec.offset_modulus;
    const bool wrap = offset_modulus < in_plane;
    const index_t* offset = t.offset.get();
    alignas(32) A best[L];
    alignas(32) U code[L];
    for (index_t k = 0; k < out_plane; ++k) {
        index_t i = t.first[k], end = t.first[k + 1];
        if (i == end) {
            for (index_t p = 0; p < count; ++p) out[p * out_plane + k] = store<S>(empty_value);
            if (index_out != nullptr) {
                for (index_t p = 0; p < count; ++p) {
                    index_out[p * out_plane + k] = static_cast<I>(base[p]);
                }
            }
            continue;
        }
        lanes_max<A, L>(lanes, offset + i, end - i, best, code);
        for (index_t p = 0; p < count; ++p) out[p * out_plane + k] = store<S>(best[p]);
        if (index_out != nullptr) {
            for (index_t p = 0; p < count; ++p) {
                std::int64_t at = static_cast<std::int64_t>(code[p]);
                index_out[p * out_plane + k] =
                    static_cast<I>(base[p] + (wrap ? at % offset_modulus : at));
            }
        }
    }
}

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
