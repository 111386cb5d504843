// Max pooling: separable max passes (with or without the winner's index), a values-only path
// that reduces the last two axes one output row at a time, and a direct path for small planes
// with indices.
//
// Rule: the larger value wins; NaN loses to any number (a window of NaNs keeps its first one);
// among equal values (or all NaN) the smaller plane offset wins, which is the first element
// in row-major window order. Every path combines the same elements in the same order, so the
// paths, builds and thread counts all give the same bits.
#ifndef OVPOOL_CORE_MAX_HPP
#define OVPOOL_CORE_MAX_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "simd/rows_avx2.hpp"
#include "simd/max_avx2.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Bitwise rather than short-circuit logic below keeps the callers' loops free of branches,
// so that the compiler can vectorise them with compare-and-blend.

// True when `value` beats `best`: larger, or a number against a NaN. !(value <= best) holds
// when value > best and whenever either is NaN; value == value then rules out a NaN value.
// Same truth table as `value > best || (isnan(best) && !isnan(value))`, in two vector compares
// instead of three plus an extra logic op.
template <class A>
inline bool replaces(A value, A best) {
    return (!(value <= best)) & (value == value);
}

// As replaces, with equal values (or two NaNs) going to the smaller plane offset.
template <class A>
inline bool replaces_at(A value, std::int64_t index, A best, std::int64_t best_index) {
    bool tie = (value == best) | ((value != value) & (best != best));
    return (tie & (index < best_index)) | ((!tie) & ((value > best) | (best != best)));
}

// Max of windows first .. last-1 of one contiguous row, each on its own. With out_index,
// candidates are row_index entries, or (row_index null) the element's plane offset
// row_offset + position.
template <class Src, class A>
inline void max_windows(const Src* row, A* out, const std::int64_t* row_index,
                        std::int64_t* out_index, index_t row_offset, const index_t* begin,
                        const index_t* count, index_t first, index_t last, index_t dil,
                        A empty_value) {
    for (index_t j = first; j < last; ++j) {
        if (count[j] == 0) {
            out[j] = empty_value;
            if (out_index != nullptr) out_index[j] = 0;
            continue;
        }
        index_t position = begin[j];
        A best = load<A>(row[position]);
        if (out_index == nullptr) {
            for (index_t t = 1; t < count[j]; ++t) {
                A value = load<A>(row[position + t * dil]);
                if (replaces(value, best)) best = value;
            }
        } else {
            std::int64_t best_index =
                row_index != nullptr ? row_index[position] : row_offset + position;
            for (index_t t = 1; t < count[j]; ++t) {
                A value = load<A>(row[position + t * dil]);
                std::int64_t candidate = row_index != nullptr ? row_index[position + t * dil]
                                                              : row_offset + position + t * dil;
                if (replaces_at(value, candidate, best, best_index)) {
                    best = value;
                    best_index = candidate;
                }
            }
            out_index[j] = best_index;
        }
        out[j] = best;
    }
}

// Max with index over the full windows lo .. hi-1 of one contiguous row, tap by tap across all
// of them. Window j starts at first + (j - lo) * step.
template <class Src, class A>
void max_interior_indexed(const Src* row, A* out, const std::int64_t* row_index,
                          std::int64_t* out_index, index_t row_offset, index_t first, index_t lo,
                          index_t hi, index_t step, index_t taps, index_t dil) {
    for (index_t t = 0; t < taps; ++t) {
        // Window j's tap t sits at tap[j * step].
        std::int64_t base = first + t * dil - lo * step;
        const Src* tap = row + base;
        const std::int64_t* tap_index = row_index != nullptr ? row_index + base : nullptr;
        if (t == 0) {
            for (index_t j = lo; j < hi; ++j) out[j] = load<A>(tap[j * step]);
            if (row_index != nullptr) {
                for (index_t j = lo; j < hi; ++j) out_index[j] = tap_index[j * step];
            } else {
                for (index_t j = lo; j < hi; ++j) out_index[j] = row_offset + base + j * step;
            }
        } else if (row_index != nullptr) {
            for (index_t j = lo; j < hi; ++j) {
                A value = load<A>(tap[j * step]);
                std::int64_t candidate = tap_index[j * step];
                bool better = replaces_at(value, candidate, out[j], out_index[j]);
                out[j] = better ? value : out[j];
                out_index[j] = better ? candidate : out_index[j];
            }
        } else {
            // Offsets grow with t, so a tie keeps the earlier tap.
            for (index_t j = lo; j < hi; ++j) {
                A value = load<A>(tap[j * step]);
                bool better = replaces(value, out[j]);
                out[j] = better ? value : out[j];
                out_index[j] = better ? (row_offset + base + j * step) : out_index[j];
            }
        }
    }
}

// dst[i] = the max of r0[i], r1[i], r2[i] (the first `rows` of them, 1 to 3), combined in that
// order: one sweep writing dst once for the common windows of 2 or 3 taps.
template <class Src, class A>
inline void max_rows3(A* dst, const Src* r0, const Src* r1, const Src* r2, index_t rows,
                      index_t n) {
    if (rows == 1) {
        for (index_t i = 0; i < n; ++i) dst[i] = load<A>(r0[i]);
    } else if (rows == 2) {
        for (index_t i = 0; i < n; ++i) {
            A a = load<A>(r0[i]);
            A b = load<A>(r1[i]);
            dst[i] = replaces(b, a) ? b : a;
        }
    } else {
        for (index_t i = 0; i < n; ++i) {
            A a = load<A>(r0[i]);
            A b = load<A>(r1[i]);
            A c = load<A>(r2[i]);
            a = replaces(b, a) ? b : a;
            dst[i] = replaces(c, a) ? c : a;
        }
    }
}

// dst[i] = the max of dst[i] and then r[i].
template <class Src, class A>
inline void max_into(A* dst, const Src* r, index_t n) {
    for (index_t i = 0; i < n; ++i) {
        A value = load<A>(r[i]);
        dst[i] = replaces(value, dst[i]) ? value : dst[i];
    }
}

// to[j] = from[j * step] for j in [0, n): 1-byte elements by byte shuffles in the AVX2 build
// (simd::pick_bytes: reads from[0 .. readable) only, and may write any bytes to
// to[n .. writable)), 4- and 8-byte ones by lane permutes (reading below readable too), the
// rest one by one. A copy, so every build gives the same bits.
template <class Src, class A>
inline void pick_strided(const Src* from, A* to, index_t n, index_t step, index_t readable,
                         index_t writable) {
    index_t j = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (sizeof(Src) == 1 && sizeof(A) == 1) {
        j = simd::pick_bytes(from, to, n, step, readable, writable);
    }
    if constexpr (sizeof(Src) == 8 && std::is_same<Src, A>::value) {
        // 8-byte elements two apart (float64 / int64 phases), four at a time: the even lanes of
        // two loads (moves of the bits, so NaN payloads and -0 stay as they are).
        if (step == 2) {
            const double* f = reinterpret_cast<const double*>(from);
            for (; j + 4 <= n && 2 * j + 8 <= readable; j += 4) {
                const __m256d pairs = _mm256_unpacklo_pd(_mm256_loadu_pd(f + 2 * j),
                                                         _mm256_loadu_pd(f + 2 * j + 4));
                _mm256_storeu_pd(reinterpret_cast<double*>(to + j),
                                 _mm256_permute4x64_pd(pairs, 0xD8));
            }
        }
    }
    if constexpr (sizeof(Src) == 4 && std::is_same<Src, A>::value) {
        // 32-bit elements two to four apart, eight at a time (simd::phase8).
        with_constant<2, 4>(step, [&](auto width) {
            constexpr int S = decltype(width)::value;
            for (; j + 8 <= n && S * (j + 8) <= readable; j += 8) {
                __m256 in[S];
                const float* f = reinterpret_cast<const float*>(from) + S * j;
                for (int v = 0; v < S; ++v) in[v] = _mm256_loadu_ps(f + 8 * v);
                _mm256_storeu_ps(reinterpret_cast<float*>(to + j), simd::phase8<S>(in, 0));
            }
        });
    }
#else
    (void)readable;
    (void)writable;
#endif
    for (; j < n; ++j) to[j] = load<A>(from[j * step]);
}

// out[j] = the max of the `windows` full windows whose taps are row[Step * j + t * w.dil]
// (Step 0: w.step), taps in window order.
template <index_t Step, class Src, class A>
inline void max_row_strided(const Src* row, A* out, index_t windows, const AxisTable& w) {
    const index_t step = Step > 0 ? Step : w.step;
    for (index_t j = 0; j < windows; ++j) out[j] = load<A>(row[step * j]);
    for (index_t t = 1; t < w.taps; ++t) {
        const Src* tap = row + t * w.dil;
        for (index_t j = 0; j < windows; ++j) {
            A value = load<A>(tap[step * j]);
            out[j] = replaces(value, out[j]) ? value : out[j];
        }
    }
}

// Max of every window of one contiguous row (the last axis) into out[0 .. out_len).
//
// Full windows are reduced tap by tap across all of them so that the loop over outputs
// vectorises (the first three taps in one sweep). With stride 2 the row is first split into
// its even and odd elements (`phases`: at least length + 2 elements, any of which may be
// overwritten), so that every tap reads a contiguous run: tap t of window lo + j is element
// (begin[lo] + t*dil) / 2 + j of the phase (begin[lo] + t*dil) % 2. Taps are still combined in
// window order.
template <class Src, class A>
void max_row(const Src* row, A* out, const AxisTable& w, A* phases, A empty_value) {
    max_windows(row, out, nullptr, nullptr, 0, w.begin, w.count, 0, w.lo, w.dil, empty_value);
    max_windows(row, out, nullptr, nullptr, 0, w.begin, w.count, w.hi, w.out_len, w.dil,
                empty_value);
    if (w.hi <= w.lo) return;
    index_t first = w.begin[w.lo];
    index_t windows = w.hi - w.lo;
    out = out + w.lo;
    if (w.step == 1) {
        max_rows3(out, row + first, row + first + w.dil, row + first + 2 * w.dil,
                  std::min<index_t>(w.taps, 3), windows);
        for (index_t t = 3; t < w.taps; ++t) max_into(out, row + first + t * w.dil, windows);
        return;
    }
    if (w.step == 2 && windows >= 4) {
        // Elements first .. first + n - 1 are read by the full windows.
        index_t n = 2 * (windows - 1) + (w.taps - 1) * w.dil + 1;
        index_t half = (n + 1) / 2;
        A* even = phases;
        A* odd = phases + half;
        // (The even picks may spill into odd, written after them.)
        const index_t room = w.length + 2;
        pick_strided(row + first, even, n / 2, 2, w.length - first, room);
        pick_strided(row + first + 1, odd, n / 2, 2, w.length - first - 1, room - half);
        if (n % 2) even[half - 1] = load<A>(row[first + n - 1]);
        const A* p[3] = {even, even, even};
        for (index_t t = 0; t < std::min<index_t>(w.taps, 3); ++t) {
            index_t q = t * w.dil;
            p[t] = (q % 2 ? odd : even) + q / 2;
        }
        max_rows3(out, p[0], p[1], p[2], std::min<index_t>(w.taps, 3), windows);
        for (index_t t = 3; t < w.taps; ++t) {
            index_t q = t * w.dil;
            max_into(out, static_cast<const A*>((q % 2 ? odd : even) + q / 2), windows);
        }
        return;
    }
    // (Steps 2 to 4 as constants: the compiler vectorises the strided reads.)
    if (w.step == 2) {
        max_row_strided<2>(row + first, out, windows, w);
    } else if (w.step == 3) {
        max_row_strided<3>(row + first, out, windows, w);
    } else if (w.step == 4) {
        max_row_strided<4>(row + first, out, windows, w);
    } else {
        max_row_strided<0>(row + first, out, windows, w);
    }
}

// `take ? a : b` without a branch: a data-dependent branch in the window loops below is
// mispredicted about half the time on real data.
template <class T>
inline T pick(bool take, T a, T b) {
    typedef typename std::conditional<
        sizeof(T) == 1, std::uint8_t,
        typename std::conditional<sizeof(T) == 2, std::uint16_t,
                                  typename std::conditional<sizeof(T) == 4, std::uint32_t,
                                                            std::uint64_t>::type>::type>::type U;
    static_assert(sizeof(U) == sizeof(T), "pick takes 1-, 2-, 4- or 8-byte values");
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(T));
    std::memcpy(&ub, &b, sizeof(T));
    U mask = static_cast<U>(U{0} - static_cast<U>(take));
    U picked = static_cast<U>((ua & mask) | (ub & static_cast<U>(~mask)));
    T result;
    std::memcpy(&result, &picked, sizeof(T));
    return result;
}

// Windows first .. last-1 of one contiguous row, with indices, for windows with no common tap
// count and stride (adaptive windows, the edges of fixed ones). A candidate's index is
// row_offset[position], or (row_offset null) base + position. Taps in window order, the
// winner kept without a data-dependent branch (pick); float32 rows with int32 offsets go eight
// windows at a time through simd::max_windows_by_tap8 (same winners; for int32 rows the
// gathers cost more than the scalar loop).
template <class Src, class A, class O>
void max_windows_by_tap(const Src* row, const O* row_offset, std::int64_t base, A* best,
                        O* best_offset, const AxisTable& w, index_t first, index_t last,
                        A empty_value) {
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<Src, float>::value && std::is_same<O, std::int32_t>::value) {
        if (row_offset != nullptr && last - first >= 4) {
            // Runs of non-empty windows through the vector kernel (a few edge windows are
            // faster one by one below).
            for (index_t j = first; j < last;) {
                if (w.count[j] == 0) {
                    best[j] = empty_value;
                    best_offset[j] = 0;
                    ++j;
                    continue;
                }
                index_t end = j, taps = 0;
                for (; end < last && w.count[end] > 0; ++end) taps = std::max(taps, w.count[end]);
                simd::max_windows_by_tap8(row, row_offset, best + j, best_offset + j,
                                          w.begin + j, w.count + j, w.dil, taps, end - j);
                j = end;
            }
            return;
        }
    }
#endif
    const index_t* begin = w.begin;
    const index_t* count = w.count;
    const index_t dil = w.dil;
    for (index_t j = first; j < last; ++j) {
        if (count[j] == 0) {
            best[j] = empty_value;
            best_offset[j] = 0;
            continue;
        }
        index_t at = begin[j];
        A value = load<A>(row[at]);
        O offset = row_offset != nullptr ? row_offset[at] : static_cast<O>(base + at);
        for (index_t t = 1; t < count[j]; ++t) {
            at = begin[j] + t * dil;
            A candidate = load<A>(row[at]);
            O candidate_offset =
                row_offset != nullptr ? row_offset[at] : static_cast<O>(base + at);
            // (Implicit offsets grow with the tap, so a tie keeps the earlier one: replaces.)
            bool better = row_offset != nullptr
                              ? replaces_at(candidate, std::int64_t{candidate_offset}, value,
                                            std::int64_t{offset})
                              : replaces(candidate, value);
            value = pick(better, candidate, value);
            offset = pick(better, candidate_offset, offset);
        }
        best[j] = value;
        best_offset[j] = offset;
    }
}

// max_pass with indices for the last spatial axis, where windows run along contiguous memory.
// (Values alone go through max_plane_values, row by row.)
template <class Src, class A>
void max_last_axis(const Src* src, A* dst, const std::int64_t* src_index,
                   std::int64_t* dst_index, const Geometry& g, index_t axis, index_t outer,
                   A empty_value) {
    AxisTable w = axis_table(g, axis);
    for (index_t o = 0; o < outer; ++o) {
        const Src* row = src + o * w.length;
        A* out = dst + o * w.out_len;
        const std::int64_t* row_index = src_index != nullptr ? src_index + o * w.length : nullptr;
        std::int64_t* out_index = dst_index + o * w.out_len;
        std::int64_t base = o * w.length;
        if (w.hi > w.lo) {
            max_windows_by_tap(row, row_index, base, out, out_index, w, 0, w.lo, empty_value);
            max_windows_by_tap(row, row_index, base, out, out_index, w, w.hi, w.out_len,
                               empty_value);
        } else {
            max_windows_by_tap(row, row_index, base, out, out_index, w, 0, w.out_len,
                               empty_value);
        }
        if (w.hi > w.lo) {
            max_interior_indexed(row, out, row_index, out_index, o * w.length, w.begin[w.lo],
                                 w.lo, w.hi, w.step, w.taps, w.dil);
        }
    }
}

// dst[0 .. inner) = the max over window j of axis v of the rows of length `inner` in outer
// block o of src, taps in window order.
template <class Src, class A>
void max_columns(const Src* src, A* dst, const AxisTable& v, index_t o, index_t j,
                 index_t inner, A empty_value) {
    index_t n = v.count[j];
    index_t gap = v.dil * inner;
    if (n == 0) {
        for (index_t i = 0; i < inner; ++i) dst[i] = empty_value;
        return;
    }
    const Src* r0 = src + (o * v.length + v.begin[j]) * inner;
    max_rows3(dst, r0, r0 + gap, r0 + 2 * gap, std::min<index_t>(n, 3), inner);
    for (index_t t = 3; t < n; ++t) max_into(dst, r0 + t * gap, inner);
}

// One separable max pass over `axis`. src_index null on the first pass (candidate index = the
// element's offset in the plane); dst_index null when no index is wanted.
template <class Src, class A>
void max_pass(const Src* src, A* dst, const std::int64_t* src_index, std::int64_t* dst_index,
              const Geometry& g, index_t axis, A empty_value) {
    index_t outer, inner;
    AxisTable w = axis_table(g, axis);
    pass_shape(g, axis, &outer, &inner);
    if (inner == 1) {
        max_last_axis(src, dst, src_index, dst_index, g, axis, outer, empty_value);
        return;
    }
    if (dst_index == nullptr) {
        // Values only: up to three taps per sweep, as in the row-by-row path.
        for (index_t o = 0; o < outer; ++o) {
            for (index_t j = 0; j < w.out_len; ++j) {
                max_columns(src, dst + (o * w.out_len + j) * inner, w, o, j, inner,
                            empty_value);
            }
        }
        return;
    }
    for (index_t o = 0; o < outer; ++o) {
        for (index_t j = 0; j < w.out_len; ++j) {
            A* best = dst + (o * w.out_len + j) * inner;
            std::int64_t* best_index = dst_index + (o * w.out_len + j) * inner;
            if (w.count[j] == 0) {
                // Every window through this position is empty; later passes only ever
                // combine it with other empty entries.
                for (index_t i = 0; i < inner; ++i) {
                    best[i] = empty_value;
                    best_index[i] = 0;
                }
                continue;
            }
            index_t first = (o * w.length + w.begin[j]) * inner;
            const Src* row = src + first;
            for (index_t i = 0; i < inner; ++i) best[i] = load<A>(row[i]);
            if (src_index == nullptr) {
                for (index_t i = 0; i < inner; ++i) best_index[i] = first + i;
            } else {
                for (index_t i = 0; i < inner; ++i) best_index[i] = src_index[first + i];
            }
            for (index_t t = 1; t < w.count[j]; ++t) {
                index_t position = (o * w.length + w.begin[j] + t * w.dil) * inner;
                row = src + position;
                if (src_index == nullptr) {
                    // Later taps have larger offsets: ties keep the earlier one.
                    for (index_t i = 0; i < inner; ++i) {
                        A value = load<A>(row[i]);
                        bool better = replaces(value, best[i]);
                        best[i] = better ? value : best[i];
                        best_index[i] = better ? (position + i) : best_index[i];
                    }
                } else {
                    const std::int64_t* row_index = src_index + position;
                    for (index_t i = 0; i < inner; ++i) {
                        A value = load<A>(row[i]);
                        bool better = replaces_at(value, row_index[i], best[i], best_index[i]);
                        best[i] = better ? value : best[i];
                        best_index[i] = better ? row_index[i] : best_index[i];
                    }
                }
            }
        }
    }
}

// Max-pool one plane by passes; with index_scratch also write the indices `spec` asks for.
// scratch and index_scratch each hold two Geometry::scratch buffers.
template <class Src, class S, class A>
void max_plane(const Src* x, S* out, index_t plane, const IndexSpec& spec, A* scratch,
               std::int64_t* index_scratch, const Geometry& g, A empty_value) {
    A* dst = scratch;
    std::int64_t* dst_index = index_scratch;
    std::int64_t offset_modulus = spec.offset_modulus;
    max_pass(x, dst, static_cast<const std::int64_t*>(nullptr), dst_index, g, 0, empty_value);
    for (index_t a = 1; a < g.naxes; ++a) {
        const A* src = dst;
        const std::int64_t* src_index = dst_index;
        dst = scratch + (a % 2) * g.scratch;
        if (index_scratch != nullptr) dst_index = index_scratch + (a % 2) * g.scratch;
        max_pass(src, dst, src_index, dst_index, g, a, empty_value);
    }
    // Sizes and pointers in locals: the index stores below are int64, which could alias the
    // caller's Geometry / IndexSpec fields as far as the compiler knows, and would make it
    // reload them every iteration instead of vectorising.
    const index_t out_plane = g.out_plane;
    const std::int64_t in_plane = g.in_plane;
    std::int64_t* const out64 = spec.out64;
    std::int32_t* const out32 = spec.out32;
    for (index_t i = 0; i < out_plane; ++i) out[i] = store<S>(dst[i]);
    if (index_scratch == nullptr) return;
    std::int64_t base = (plane % spec.plane_modulus) * in_plane;
    if (offset_modulus < in_plane) {
        for (index_t i = 0; i < out_plane; ++i) dst_index[i] = base + dst_index[i] % offset_modulus;
    } else if (base != 0) {
        for (index_t i = 0; i < out_plane; ++i) dst_index[i] += base;
    }
    if (out64 != nullptr) {
        for (index_t i = 0; i < out_plane; ++i) out64[plane * out_plane + i] = dst_index[i];
    } else {
        for (index_t i = 0; i < out_plane; ++i) {
            out32[plane * out_plane + i] = static_cast<std::int32_t>(dst_index[i]);
        }
    }
}

// Max-pool one small 2-D plane with indices, one output row at a time: the rows of the
// vertical window are reduced into `column` (value) and `column_offset` (its plane offset),
// then the windows of that row are read from there into `column + width` and
// `column_offset + width`, and written out. Both buffers hold direct_buffer(g) elements. The
// same two reductions in the same order as max_plane's passes, so the same winners, without
// plane-sized scratch, index passes or the final copy; for planes of a few hundred elements
// those cost more than the reductions themselves. Offsets are int32 (the plane is at most
// direct_max_plane elements), so that values and offsets fill vectors of the same length.
template <class Src, class S, class A>
void max_plane_direct(const Src* x, S* out, index_t plane, const IndexSpec& spec, A* column,
                      std::int32_t* column_offset, const Geometry& g, A empty_value) {
    AxisTable v = axis_table(g, 0);
    AxisTable h = axis_table(g, 1);
    const index_t width = h.length;
    A* best = column + width;
    std::int32_t* best_offset = column_offset + width;
    std::int64_t base = (plane % spec.plane_modulus) * g.in_plane;
    std::int64_t offset_modulus = spec.offset_modulus;
    bool wrap = offset_modulus < g.in_plane;
    // In locals, as in max_plane: the int64 stores could alias them otherwise.
    const index_t out_len = h.out_len;
    std::int64_t* const out64 = spec.out64 != nullptr ? spec.out64 + plane * g.out_plane : nullptr;
    std::int32_t* const out32 = spec.out32 != nullptr ? spec.out32 + plane * g.out_plane : nullptr;
    for (index_t i = 0; i < v.out_len; ++i) {
        index_t rows = v.count[i];
        S* out_row = out + i * out_len;
        if (rows == 0) {
            for (index_t j = 0; j < out_len; ++j) {
                best[j] = empty_value;
                best_offset[j] = 0;
            }
        } else {
            std::int32_t row = static_cast<std::int32_t>(v.begin[i] * width);
            for (index_t c = 0; c < width; ++c) {
                column[c] = load<A>(x[row + c]);
                column_offset[c] = row + static_cast<std::int32_t>(c);
            }
            for (index_t a = 1; a < rows; ++a) {
                // Later rows have larger offsets: ties keep the earlier one.
                row = static_cast<std::int32_t>((v.begin[i] + a * v.dil) * width);
                for (index_t c = 0; c < width; ++c) {
                    A value = load<A>(x[row + c]);
                    bool better = replaces(value, column[c]);
                    column[c] = better ? value : column[c];
                    column_offset[c] = better ? row + static_cast<std::int32_t>(c)
                                              : column_offset[c];
                }
            }
            index_t lo = 0, hi = 0;
#if OVPOOL_CORE_HAVE_AVX2
            if constexpr (std::is_same<A, float>::value) {
                if (h.hi > h.lo) {
                    lo = h.lo;
                    hi = h.hi;
                    simd::max_windows_indexed8(column, column_offset, best + lo,
                                               best_offset + lo, h.begin[lo], h.step, h.taps,
                                               h.dil, hi - lo);
                }
            }
#endif
            if (hi > lo) {
                // (Edge windows, if any.)
                if (lo > 0) {
                    max_windows_by_tap(column, column_offset, 0, best, best_offset, h, 0, lo,
                                       empty_value);
                }
                if (hi < out_len) {
                    max_windows_by_tap(column, column_offset, 0, best, best_offset, h, hi,
                                       out_len, empty_value);
                }
            } else {
                max_windows_by_tap(column, column_offset, 0, best, best_offset, h, 0, out_len,
                                   empty_value);
            }
        }
        for (index_t j = 0; j < out_len; ++j) out_row[j] = store<S>(best[j]);
        std::int64_t* index64 = out64 != nullptr ? out64 + i * out_len : nullptr;
        std::int32_t* index32 = out32 != nullptr ? out32 + i * out_len : nullptr;
        if (wrap) {
            for (index_t j = 0; j < out_len; ++j) {
                std::int64_t index = base + best_offset[j] % offset_modulus;
                if (index64 != nullptr) {
                    index64[j] = index;
                } else {
                    index32[j] = static_cast<std::int32_t>(index);
                }
            }
        } else if (index64 != nullptr) {
            for (index_t j = 0; j < out_len; ++j) index64[j] = base + best_offset[j];
        } else {
            for (index_t j = 0; j < out_len; ++j) {
                index32[j] = static_cast<std::int32_t>(base + best_offset[j]);
            }
        }
    }
}

// Elements of each of max_plane_direct's two buffers.
inline index_t direct_buffer(const Geometry& g) { return g.length[1] + g.output[1]; }

// The taps of every output of a tiny plane, each window's in row-major order, as one flat
// table: output k reads plane offsets offset[first[k] .. first[k + 1]).
struct TapTable {
    std::unique_ptr<index_t[]> first;
    std::unique_ptr<index_t[]> offset;
};

// Taps of the whole table (the sum over outputs of their window sizes), or a number above
// `limit` once it is known to exceed it.
inline index_t tap_table_size(const Geometry& g, index_t limit) {
    index_t total = 0;
    std::vector<index_t> at(static_cast<std::size_t>(g.naxes), 0);
    for (index_t k = 0; k < g.out_plane; ++k) {
        index_t taps = 1;
        for (index_t a = 0; a < g.naxes; ++a) taps *= g.count[g.offset[a] + at[a]];
        total += taps;
        if (total > limit) return total;
        for (index_t a = g.naxes - 1; a >= 0 && ++at[a] == g.output[a]; --a) at[a] = 0;
    }
    return total;
}

inline TapTable make_tap_table(const Geometry& g) {
    TapTable t;
    index_t n = g.naxes;
    t.first.reset(new index_t[static_cast<std::size_t>(g.out_plane + 1)]);
    index_t total = tap_table_size(g, tiny_max_taps);
    t.offset.reset(new index_t[static_cast<std::size_t>(total > 0 ? total : 1)]);
    std::vector<index_t> at(static_cast<std::size_t>(n), 0), tap(static_cast<std::size_t>(n));
    std::vector<index_t> stride(static_cast<std::size_t>(n), 1);
    for (index_t a = n - 2; a >= 0; --a) stride[a] = stride[a + 1] * g.length[a + 1];
    index_t i = 0;
    for (index_t k = 0; k < g.out_plane; ++k) {
        t.first[k] = i;
        bool empty = false;
        for (index_t a = 0; a < n; ++a) {
            empty = empty || g.count[g.offset[a] + at[a]] == 0;
            tap[a] = 0;
        }
        while (!empty) {
            index_t position = 0;
            for (index_t a = 0; a < n; ++a) {
                position += (g.begin[g.offset[a] + at[a]] + tap[a] * g.dilation[a]) * stride[a];
            }
            t.offset[i] = position;
            i += 1;
            index_t a = n - 1;
            for (; a >= 0 && ++tap[a] == g.count[g.offset[a] + at[a]]; --a) tap[a] = 0;
            if (a < 0) break;
        }
        for (index_t a = n - 1; a >= 0 && ++at[a] == g.output[a]; --a) at[a] = 0;
    }
    t.first[g.out_plane] = i;
    return t;
}

template <class A>
inline A max_of_rows3(const A* r0, const A* r1, const A* r2, index_t i) {
    A best = r0[i];
    best = replaces(r1[i], best) ? r1[i] : best;
    return replaces(r2[i], best) ? r2[i] : best;
}

// max_windows over the row of maxima of r0, r1, r2 (element by element, in that order)
// without writing that row: for the few edge windows around the AVX2 row kernel.
template <class A>
void max_windows_rows3(const A* r0, const A* r1, const A* r2, A* out, const AxisTable& w,
                       index_t first, index_t last, A empty_value) {
    for (index_t j = first; j < last; ++j) {
        if (w.count[j] == 0) {
            out[j] = empty_value;
            continue;
        }
        A best = max_of_rows3(r0, r1, r2, w.begin[j]);
        for (index_t t = 1; t < w.count[j]; ++t) {
            A value = max_of_rows3(r0, r1, r2, w.begin[j] + t * w.dil);
            best = replaces(value, best) ? value : best;
        }
        out[j] = best;
    }
}

#if OVPOOL_CORE_HAVE_AVX2
// Output row j of outer block o through the AVX2 row kernel for 3-wide, stride-2 windows
// (float32 rows only; see max_plane_values). Up to three rows of the vertical window are
// handed to the kernel as they are, taller windows are reduced into `column` first.
inline void max_output_row_k3s2(const float* plane_rows, float* column, const AxisTable& v,
                                const AxisTable& h, index_t o, index_t j, bool padded_start,
                                float* target, float empty_value) {
    index_t taps = v.count[j], gap = v.dil * h.length;
    const float* r0;
    const float* r1;
    const float* r2;
    if (1 <= taps && taps <= 3) {
        r0 = plane_rows + (o * v.length + v.begin[j]) * h.length;
        r1 = r0 + (taps > 1 ? gap : 0);
        r2 = r0 + (taps - 1) * gap;
    } else {
        max_columns(plane_rows, column, v, o, j, h.length, empty_value);
        r0 = r1 = r2 = column;
    }
    max_windows_rows3(r0, r1, r2, target, h, h.hi, h.out_len, empty_value);
    if (padded_start) {
        simd::max_k3s2_row_padded(r0, r1, r2, target, h.hi);
    } else {
        max_windows_rows3(r0, r1, r2, target, h, 0, h.lo, empty_value);
        simd::max_k3s2_row(r0 + h.begin[h.lo], r1 + h.begin[h.lo], r2 + h.begin[h.lo],
                           target + h.lo, h.hi - h.lo);
    }
}
#endif

template <class S, class A>
inline void store_row(S* dst, const A* src, index_t n) {
    for (index_t i = 0; i < n; ++i) dst[i] = store<S>(src[i]);
}

// Whether any of a[0 .. n) is zero or NaN (floats; false for other types).
template <class A>
inline bool any_zero_or_nan(const A* a, index_t n) {
    bool any = false;
    if constexpr (std::is_floating_point<A>::value) {
        index_t k0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (std::is_same<A, float>::value) {
            // (Eight at a time: equal-or-unordered to zero is exactly "zero or NaN".)
            __m256 hits = _mm256_setzero_ps();
            for (; k0 + 8 <= n; k0 += 8) {
                hits = _mm256_or_ps(hits, _mm256_cmp_ps(_mm256_loadu_ps(a + k0),
                                                        _mm256_setzero_ps(), _CMP_EQ_UQ));
            }
            any = _mm256_movemask_ps(hits) != 0;
        }
#endif
        for (index_t k = k0; k < n; ++k) any |= (a[k] == 0) | (a[k] != a[k]);
    } else {
        (void)a;
        (void)n;
    }
    return any;
}

// The plane offset of the first element, in row-major window order, of the window of plane
// output `output` (last axis fastest) for which match(offset) holds; -1 when none does.
template <class Match>
index_t first_in_window(const Geometry& g, index_t output, Match match) {
    const index_t n = g.naxes;
    // The window: per axis its first tap, taps and step, from the output's coordinates (last
    // axis fastest); `taps` counts the window's elements.
    index_t rest = output, taps = 1, base = 0;
    for (index_t a = n - 1, pitch = 1; a >= 0; pitch *= g.length[a], --a) {
        const index_t at = g.offset[a] + rest % g.output[a];
        rest /= g.output[a];
        taps *= g.count[at];
        base += g.begin[at] * pitch;
    }
    for (index_t t = 0; t < taps; ++t) {
        index_t tap = t, offset = base;
        rest = output;
        for (index_t a = n - 1, pitch = 1; a >= 0; pitch *= g.length[a], --a) {
            const index_t count = g.count[g.offset[a] + rest % g.output[a]];
            rest /= g.output[a];
            offset += (tap % count) * g.dilation[a] * pitch;
            tap /= count;
        }
        if (match(offset)) return offset;
    }
    return -1;
}

// Values alone are reduced axis 0 first (max_pass, max_columns, then max_row), which among
// elements that compare equal keeps the first in column order rather than in row-major window
// order. Equal floats differ in their bits only as -0 / +0 or as NaNs (a NaN result means the
// window held nothing but NaNs), so the outputs of one output row (plane output offsets
// `first` .. `first + h.out_len`) that are zero or NaN are found again here, their windows
// scanned in row-major order for the first element equal to them (for a NaN: the first tap).
template <class Src, class A>
void first_tie_in_row_major(const Src* x, A* row, const Geometry& g, index_t first) {
    if constexpr (std::is_floating_point<A>::value) {
        const index_t width = g.output[g.naxes - 1];
        if (!any_zero_or_nan(row, width)) return;
        for (index_t k = 0; k < width; ++k) {
            const A best = row[k];
            const bool nan = best != best;
            if (!(best == 0 || nan)) continue;
            const index_t at = first_in_window(g, first + k, [&](index_t offset) {
                return nan || load<A>(x[offset]) == 0;
            });
            if (at >= 0) row[k] = load<A>(x[at]);
        }
    } else {
        (void)x;
        (void)row;
        (void)g;
        (void)first;
    }
}

// Whether every window j of the last axis h holds exactly the taps v_j + t * dil (t < taps,
// v_j = begin[lo] + (j - lo) * step) that fall inside the row, at least one: the interior
// run's windows continued past the row's ends and clipped to it, as padding clips them. Then
// *before and *after are how far the first window reaches before the row and the last one
// past its end. (Only the edge windows are checked: the interior run's windows are those
// windows by the tables' definition, each of `taps` taps inside the row; a check of every
// window took 14% of the kernel's instructions on int8 39 planes of 64x52, k6,5.)
inline bool clipped_run_windows(const AxisTable& h, index_t* before, index_t* after) {
    if (h.hi <= h.lo || h.taps < 1) return false;
    const index_t v0 = h.begin[h.lo] - h.lo * h.step;
    auto clipped = [&](index_t j) {
        const index_t v = v0 + j * h.step;
        const index_t first = v < 0 ? (h.dil - 1 - v) / h.dil : 0;
        const index_t last = v > h.length - 1 ? -1
                                              : std::min(h.taps - 1, (h.length - 1 - v) / h.dil);
        return last >= first && h.begin[j] == v + first * h.dil && h.count[j] == last - first + 1;
    };
    for (index_t j = 0; j < h.lo; ++j) {
        if (!clipped(j)) return false;
    }
    for (index_t j = h.hi; j < h.out_len; ++j) {
        if (!clipped(j)) return false;
    }
    *before = std::max<index_t>(0, -v0);
    *after = std::max<index_t>(
        0, v0 + (h.out_len - 1) * h.step + (h.taps - 1) * h.dil - (h.length - 1));
    return true;
}

// Elements of the padded row of max_plane_bytes: the row, the reach of clipped windows on
// either side, and the bytes a group of windows may read past its last tap.
inline index_t padded_row_elements(const AxisTable& h) {
    return h.length + 2 * std::max<index_t>(h.taps - 1, 0) * h.dil + 64;
}

// Elements of the row buffers max_plane_values needs after its two plane-sized buffers.
inline index_t max_row_buffers(const Geometry& g) {
    return 3 * (g.length[g.naxes - 1] + 2) + g.output[g.naxes - 1] +
           padded_row_elements(axis_table(g, g.naxes - 1));
}

#if OVPOOL_CORE_HAVE_AVX2
// Whether max_plane_bytes takes a plane whose last axis is h: a run of interior windows, at
// most 8 apart, rows and outputs of 16 or more.
inline bool byte_rows_suit(const AxisTable& h) {
    return h.hi > h.lo && h.step >= 1 && h.step <= 8 && h.length >= 16 && h.out_len >= 16;
}

// max_plane_values for 1-byte integers (A int8 or uint8; byte_rows_suit(h)), rows of
// `plane_rows` (the input, or the earlier axes' passes): integer maxima do not depend on the
// order of the taps, so each output row is the max of its vertical window's rows (one vector
// pass, every tap in registers: simd::max_rows_bytes) followed by its windows along the row
// (simd::max_windows_bytes), with the same bytes as the generic loops. When the last axis's
// windows are its interior run clipped by padding (clipped_run_windows), the row is reduced
// into `padded`, between runs of the lowest value (which no window's max can be below), so
// every window is a full one; otherwise the edge windows go one by one. n == 1: the plane is
// one row. `padded`: padded_row_elements(h) elements.
// out[k] = the max of from[k * step + t * dil] over t in [0, taps), k in [first, last).
template <class A>
inline void max_full_windows(const A* from, A* out, index_t first, index_t last, index_t step,
                             index_t taps, index_t dil) {
    for (index_t k = first; k < last; ++k) {
        A best = from[k * step];
        for (index_t t = 1; t < taps; ++t) best = std::max(best, from[k * step + t * dil]);
        out[k] = best;
    }
}

template <class A>
void max_plane_bytes(const A* plane_rows, A* out, A* padded, const AxisTable& h, index_t n,
                     index_t outer, const AxisTable& v, A empty_value) {
    const index_t width = h.length, out_len = h.out_len;
    // Windows of `row` (readable: `readable` elements from begin[lo]) into target: the
    // interior run by the vector kernel, the rest one by one.
    auto row_windows = [&](const A* row, index_t readable, A* target) {
        const A* from = row + h.begin[h.lo];
        const index_t windows = h.hi - h.lo;
        const index_t done = simd::max_windows_bytes(from, target + h.lo, windows, h.step,
                                                     h.taps, h.dil, readable);
        max_full_windows(from, target + h.lo, done, windows, h.step, h.taps, h.dil);
        max_windows(row, target, nullptr, nullptr, 0, h.begin, h.count, 0, h.lo, h.dil,
                    empty_value);
        max_windows(row, target, nullptr, nullptr, 0, h.begin, h.count, h.hi, out_len, h.dil,
                    empty_value);
    };
    if (n == 1) {
        row_windows(plane_rows, width - h.begin[h.lo], out);
        return;
    }
    index_t before = 0, after = 0;
    const bool clipped = clipped_run_windows(h, &before, &after);
    const index_t room = padded_row_elements(h);
    A* row = padded + before;
    const A* rows_end = plane_rows + outer * v.length * width;
    if (clipped) {
        // Every window as a full one from row + begin[lo] - lo * step: a uniform run.
        std::fill(padded, row, std::numeric_limits<A>::lowest());
        std::fill(row + width, padded + room, std::numeric_limits<A>::lowest());
    }
    for (index_t o = 0; o < outer; ++o) {
        for (index_t j = 0; j < v.out_len; ++j) {
            A* target = out + (o * v.out_len + j) * out_len;
            const index_t taps = v.count[j];
            if (taps == 0) {
                std::fill(target, target + out_len, empty_value);
                continue;
            }
            const A* source = plane_rows + (o * v.length + v.begin[j]) * width;
            // (A window of one row whose windows along it all lie inside it is read in place,
            // not copied first: int8 550x446 k1,2 s4,2.)
            const bool in_place = taps == 1 && (!clipped || (before == 0 && after == 0));
            const A* reduced = in_place ? source : row;
            const A* end = in_place ? rows_end : padded + room;
            if (!in_place) simd::max_rows_bytes(row, source, v.dil * width, taps, width);
            if (!clipped) {
                row_windows(reduced, end - (reduced + h.begin[h.lo]), target);
                continue;
            }
            const A* from = reduced + h.begin[h.lo] - h.lo * h.step;
            const index_t done = simd::max_windows_bytes(from, target, out_len, h.step, h.taps,
                                                         h.dil, end - from);
            max_full_windows(from, target, done, out_len, h.step, h.taps, h.dil);
        }
    }
}
#endif

// Whether the last axis h has the windows of the float32 3-wide, stride-2 row kernel of
// max_plane_values (AVX2 builds, planes of two or more axes).
inline bool three_wide_stride2_rows(const AxisTable& h) {
    return h.step == 2 && h.taps == 3 && h.dil == 1 && h.hi > h.lo;
}

// Max-pool one plane, values only. Axes before the last two are reduced by whole passes as in
// max_plane; the last two then go one output row at a time: the rows of the second-to-last
// axis's window are reduced into one row (in `rows`, in L1), and that row's windows are written
// straight into the output row. No plane-sized intermediate, no final copy. `rows` holds
// max_row_buffers(g) elements. Same taps in the same order as max_plane, so the same bits.
template <class Src, class S, class A>
void max_plane_values(const Src* x, S* out, A* scratch, A* rows, const Geometry& g,
                      A empty_value) {
    index_t n = g.naxes, outer = 1;
    AxisTable h = axis_table(g, n - 1);
    A* column = rows;
    A* phases = rows + h.length + 2;
    A* buffer = rows + 3 * (h.length + 2);
    A* dst = scratch;
    const A* src = nullptr;
    // The output is written in place when it has the accumulator's type (int64 is long, its
    // accumulator long long: the same representation).
    constexpr bool direct = std::is_same<S, A>::value ||
        (std::is_same<S, std::int64_t>::value && sizeof(A) == 8 && std::is_integral<A>::value);
    A* out_direct = nullptr;
    if constexpr (direct) out_direct = reinterpret_cast<A*>(out);
#if OVPOOL_CORE_HAVE_AVX2
    // float32 rows (the input's, or the passes' result) with 3-wide, stride-2 windows along the
    // last axis: the AVX2 row kernel reduces the vertical and horizontal windows in one vector
    // loop.
    bool k3s2 = (std::is_same<A, float>::value && (n > 2 || std::is_same<Src, float>::value) &&
                 n > 1 && three_wide_stride2_rows(h));
#else
    bool k3s2 = false;
#endif
    // One element of padding before the row (ResNet's 3x3/s2/p1): window 0 holds the row's
    // first two elements, and the vector loop covers it too.
    [[maybe_unused]] bool padded_start = (k3s2 && h.lo == 1 && h.count[0] == 2 && h.begin[0] == 0 &&
                         h.begin[1] == 1);
    // 1-byte integers (values only) through max_plane_bytes.
    bool bytes = false;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_integral<A>::value && sizeof(A) == 1 && std::is_same<S, A>::value &&
                  std::is_same<Src, A>::value) {
        bytes = byte_rows_suit(h);
    }
#endif
    if (n == 1 && !bytes) {
        A* target = direct ? out_direct : buffer;
        max_row(x, target, h, phases, empty_value);
        if (!direct) store_row(out, buffer, h.out_len);
        return;
    }
    if (n > 2) {
        max_pass(x, dst, static_cast<const std::int64_t*>(nullptr),
                 static_cast<std::int64_t*>(nullptr), g, 0, empty_value);
        for (index_t a = 1; a < n - 2; ++a) {
            const A* previous = dst;
            dst = scratch + (a % 2) * g.scratch;
            max_pass(previous, dst, static_cast<const std::int64_t*>(nullptr),
                     static_cast<std::int64_t*>(nullptr), g, a, empty_value);
        }
        src = dst;
    }
    for (index_t a = 0; a < n - 2; ++a) outer *= g.output[a];
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_integral<A>::value && sizeof(A) == 1 && std::is_same<S, A>::value &&
                  std::is_same<Src, A>::value) {
        if (bytes) {
            max_plane_bytes(n > 2 ? src : x, out_direct, buffer + h.out_len, h, n, outer,
                            n > 1 ? axis_table(g, n - 2) : h, empty_value);
            return;
        }
    }
#endif
    AxisTable v = axis_table(g, n - 2);
    for (index_t o = 0; o < outer; ++o) {
        for (index_t j = 0; j < v.out_len; ++j) {
            A* target = direct ? out_direct + (o * v.out_len + j) * h.out_len : buffer;
            if (k3s2) {
#if OVPOOL_CORE_HAVE_AVX2
                if constexpr (std::is_same<A, float>::value) {
                    // The rows the vertical windows read: the input, or the passes' result.
                    const float* plane_rows =
                        n > 2 ? src : reinterpret_cast<const float*>(x);
                    max_output_row_k3s2(plane_rows, column, v, h, o, j, padded_start, target,
                                        empty_value);
                }
#endif
            } else {
                if (n == 2) {
                    max_columns(x, column, v, o, j, h.length, empty_value);
                } else {
                    max_columns(src, column, v, o, j, h.length, empty_value);
                }
                max_row(static_cast<const A*>(column), target, h, phases, empty_value);
            }
            if (!direct) {
                first_tie_in_row_major(x, target, g, (o * v.out_len + j) * h.out_len);
                store_row(out + (o * v.out_len + j) * h.out_len, buffer, h.out_len);
            }
        }
    }
    if constexpr (direct) {
        // (The whole plane checked in one run first: row by row, the check cost a fifth of
        // the 3x3 stride-2 kernel's time.)
        if (any_zero_or_nan(out_direct, g.out_plane)) {
            for (index_t r = 0; r < outer * v.out_len; ++r) {
                first_tie_in_row_major(x, out_direct + r * h.out_len, g, r * h.out_len);
            }
        }
    }
}

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
