// Average pooling of many small planes side by side ("plane lanes"), for adaptive windows.
//
// The separable passes of average.hpp pay a loop set-up per window and per row. When the
// windows are short (adaptive pooling that upsamples: one or two taps per axis) or the rows are
// (small planes), that set-up costs far more than the additions. Here a block of `lanes`
// consecutive planes is first transposed into a per-worker buffer, element i of plane p at
// [i * lanes + p] (widened to the accumulator), so that every tap of every window is one
// contiguous run of `lanes` values: each output's sum is a few whole-vector additions across
// the block's planes, and the per-window work is paid once per block, not once per plane.
// The sums go back plane by plane into scratch and are divided by write_averages, the rule
// every average path uses; windows of one or two taps per axis (upsampling) are summed axis by
// axis and averaged in the lanes instead (see lane_pair_averages).
//
// int32 inputs are summed in int32 lanes, sixteen planes to a block (eight in calls of fewer
// planes), when the block's inputs bound every sum within int32 (magnitude_bound, as
// avg_ranged.hpp does for the passes), else in int64 lanes: exact either way, so the same
// averages. int8 / uint8 upsampling (lane_pair_averages) goes in int16 lanes, sixteen planes
// to a block, and its averages go back to the output as bytes (unstage_bytes).
//
// Order: the same sums in the same order as the passes. The passes sum axis 0 first, each
// partial sum starting from +0 and adding taps in window order, then axis 1 over those sums,
// and so on; here the nesting is the same (axis 0 innermost), so floats round identically
// (integer sums are exact in any order and are summed flat). Float windows of 16 or more taps
// along the last axis are summed in eight partial sums by the passes (sum_windows), so tables
// with such windows do not come here.
#ifndef OVPOOL_CORE_AVERAGE_LANES_HPP
#define OVPOOL_CORE_AVERAGE_LANES_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "average.hpp"
#include "avg_ranged.hpp"
#include "rules.hpp"
#include "simd/lanes_avx2.hpp"
#include "simd/short_lanes_avx2.hpp"
#include "simd/widen.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Planes side by side: 64 bytes of accumulators (two AVX2 vectors).
template <class A> constexpr index_t average_lanes = static_cast<index_t>(64 / sizeof(A));

// Largest transposed block (elements) the lanes path takes; larger planes keep the passes.
constexpr index_t lanes_max_block = index_t(1) << 16;
// Planes of at most this many elements take the lanes path even when they shrink.
constexpr index_t lanes_small_plane = 128;
// Outputs per plane summed before they are divided (bounds the sums' scratch).
constexpr index_t lanes_chunk_outputs = 1024;
// Outputs per row along axis 0 from which a row that repeats the one before is copied.
constexpr index_t lanes_repeated_row = 32;

// Whether every axis's windows are those of adaptive pooling (window j of an axis of length L
// pooled to O reads [adaptive_start(j), adaptive_end(j)), step 1).
inline bool adaptive_windows(const Geometry& g) {
    for (index_t a = 0; a < g.naxes; ++a) {
        AxisTable w = axis_table(g, a);
        if (w.dil != 1 || w.out_len < 1) return false;
        for (index_t j = 0; j < w.out_len; ++j) {
            index_t start = adaptive_start(j, w.length, w.out_len);
            if (w.begin[j] != start || w.count[j] != adaptive_end(j, w.length, w.out_len) - start)
                return false;
        }
    }
    return true;
}

// A sum's average for a divisor of 2^shift, V being A or a GCC vector of A, given the
// shift's constants (made once, in lane_pair_averages): for floats the product by `scale`, the exact inverse
// 2^-shift, which is the quotient write_averages computes (both are the exact value
// sum / 2^shift, rounded once); for integers divide_round_even_pow2 (the rounding of
// divide_round_even) with `scale` its bias and `odd` its parity mask.
template <class A, class V>
inline V pow2_average(V sum, int shift, V scale, V odd) {
    if constexpr (std::is_floating_point<A>::value) {
        (void)shift;
        (void)odd;
        return sum * scale;
    } else {
        return divide_round_even_pow2(sum, shift, scale, odd);
    }
}

// L accumulators side by side, added as whole vectors: GCC's and clang's vector extension
// where the element type has one (the plain loops below are not reliably vectorised: the
// compiler may keep sixteen scalar sums instead), a plain array elsewhere.
#if defined(__GNUC__)
#define OVPOOL_LANES_VECTOR 1
#else
#define OVPOOL_LANES_VECTOR 0
#endif

template <class A, index_t L, bool Vector = (OVPOOL_LANES_VECTOR && sizeof(A) <= 8)>
struct Lanes {
    A v[L];
    static Lanes zero() {
        Lanes z;
        for (index_t p = 0; p < L; ++p) z.v[p] = 0;
        return z;
    }
    void add(const A* r) {
        for (index_t p = 0; p < L; ++p) v[p] = v[p] + r[p];
    }
    void add(const Lanes& o) {
        for (index_t p = 0; p < L; ++p) v[p] = v[p] + o.v[p];
    }
    void add_zero() {
        for (index_t p = 0; p < L; ++p) v[p] = v[p] + A(0);
    }
    static Lanes load(const A* r) {
        Lanes z;
        for (index_t p = 0; p < L; ++p) z.v[p] = r[p];
        return z;
    }
    void get(A* out) const {
        for (index_t p = 0; p < L; ++p) out[p] = v[p];
    }
    static Lanes fill(A value) {
        Lanes z;
        for (index_t p = 0; p < L; ++p) z.v[p] = value;
        return z;
    }
    // Every lane's average for a divisor of 2^shift, given the shift's constants (pow2_average).
    void average_pow2(int shift, const Lanes& scale, const Lanes& odd) {
        for (index_t p = 0; p < L; ++p) v[p] = pow2_average<A>(v[p], shift, scale.v[p], odd.v[p]);
    }
};

#if OVPOOL_LANES_VECTOR
// As registers of the build's width (a 64-byte vector type would go through the stack).
#if defined(__AVX__)
constexpr index_t lanes_register = 32;
#else
constexpr index_t lanes_register = 16;
#endif

template <class A, index_t L>
struct Lanes<A, L, true> {
    static constexpr index_t W = lanes_register / static_cast<index_t>(sizeof(A));
    static constexpr index_t K = L / W;
    typedef A V __attribute__((vector_size(lanes_register)));
    V v[K];
    static Lanes zero() {
        Lanes z;
        for (index_t k = 0; k < K; ++k) z.v[k] = V{};
        return z;
    }
    static Lanes load(const A* r) {
        Lanes z;
        for (index_t k = 0; k < K; ++k) std::memcpy(&z.v[k], r + k * W, sizeof(V));
        return z;
    }
    void add(const A* r) {
        for (index_t k = 0; k < K; ++k) {
            V x;
            std::memcpy(&x, r + k * W, sizeof x);
            v[k] = v[k] + x;
        }
    }
    void add(const Lanes& o) {
        for (index_t k = 0; k < K; ++k) v[k] = v[k] + o.v[k];
    }
    void add_zero() {
        for (index_t k = 0; k < K; ++k) v[k] = v[k] + A(0);
    }
    void get(A* out) const {
        for (index_t k = 0; k < K; ++k) std::memcpy(out + k * W, &v[k], sizeof(V));
    }
    static Lanes fill(A value) {
        Lanes z;
        for (index_t k = 0; k < K; ++k) z.v[k] = V{} + value;
        return z;
    }
    void average_pow2(int shift, const Lanes& scale, const Lanes& odd) {
        for (index_t k = 0; k < K; ++k) v[k] = pow2_average<A>(v[k], shift, scale.v[k], odd.v[k]);
    }
};
#endif

// Rows of lanes a transposed block may write beyond its plane's elements (see
// transpose_planes): a buffer for planes of n elements holds n + lanes_spill_rows rows.
constexpr index_t lanes_spill_rows = 8;

// The block of planes x[p * in_plane ..], p < count <= L, transposed: lanes[i * L + p] =
// load<B>(x[p * in_plane + i]) for i in [from, to), and 0 in the lanes of absent planes
// (count <= p < L). Eight planes at a time through 8x8 tile transposes where the build has
// them (simd/lanes_avx2.hpp; int16 lanes of one-byte inputs: sixteen planes at a time,
// simd/short_lanes_avx2.hpp); those may also write rows up to from + lanes_spill_rows (with
// values of no use) and, for runs shorter than a tile, read up to x[(count - 1) * in_plane +
// from + 8), which must be below `readable` (else the portable loop takes those planes).
template <class S, class B, index_t L>
inline void transpose_planes(const S* x, index_t in_plane, index_t count, index_t from,
                             index_t to, index_t readable, B* lanes) {
    index_t p0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
    // int16 lanes of one-byte inputs (lane_pair_averages' short lanes): 8x8 tiles of 16-bit
    // lanes, sixteen planes at once in a block of sixteen lanes.
    constexpr bool short_tiles = std::is_same<B, std::int16_t>::value &&
                                 std::is_integral<S>::value && sizeof(S) == 1;
    if constexpr (simd::has_transpose_tile8<S, B> || short_tiles) {
        const index_t width = to - from;
        constexpr index_t side = short_tiles && L == 16 ? 16 : 8;  // planes per tile
        for (; width > 0 && p0 + side <= count; p0 += side) {
            if (width < 8 && (p0 + side - 1) * in_plane + from + 8 > readable) break;
            const S* rows = x + p0 * in_plane;
            if constexpr (side == 16) {
                if (width >= 32) {
                    // Runs of 32 or more: 32 elements a tile (the last one overlapping).
                    for (index_t i = from;; i += 32) {
                        const index_t at = std::min(i, to - 32);
                        simd::short_tile16x32_in(rows + at, in_plane, lanes + at * L);
                        if (at + 32 >= to) break;
                    }
                    continue;
                }
            }
            for (index_t i = from; i < to; i += 8) {
                // (the last tile overlaps; a run shorter than a tile reads and writes past it)
                const index_t at = width < 8 ? from : std::min(i, to - 8);
                if constexpr (side == 16) {
                    simd::short_tile16_in(rows + at, in_plane, lanes + at * L);
                } else if constexpr (short_tiles) {
                    simd::short_tile_in(rows + at, in_plane, lanes + at * L + p0, L);
                } else {
                    simd::transpose_tile8(rows + at, in_plane, lanes + at * L + p0, L);
                }
            }
        }
    }
#else
    (void)readable;
#endif
    for (index_t p = p0; p < count; ++p) {
        const S* src = x + p * in_plane;
        for (index_t i = from; i < to; ++i) lanes[i * L + p] = load<B>(src[i]);
    }
    for (index_t p = count; p < L; ++p) {
        for (index_t i = from; i < to; ++i) lanes[i * L + p] = 0;
    }
}

// Whether the lanes' sums are staged side by side (staged[k * L + p]) and then moved to each
// plane's row of sums by tile transposes (unstage_sums): 32-bit and 64-bit sums in the AVX2
// build, and the int16 averages of one-byte inputs (unstage_bytes); other sums go to the rows
// one lane at a time as each output is summed (put_sums).
template <class B>
constexpr bool staged_sums = OVPOOL_CORE_HAVE_AVX2 && (sizeof(B) == 4 || sizeof(B) == 8 ||
                                                       std::is_same<B, std::int16_t>::value);

// Output k's sums of the first `count` lanes: to staged[k * L ..] (see staged_sums), or to
// sums[p * stride + k].
template <class B, index_t L>
inline void put_sums(const Lanes<B, L>& total, index_t k, B* staged, B* sums, index_t stride,
                     index_t count) {
    if constexpr (staged_sums<B>) {
        (void)sums;
        (void)stride;
        (void)count;
        total.get(staged + k * L);
    } else {
        (void)staged;
        B lanes[L];
        total.get(lanes);
        for (index_t p = 0; p < count; ++p) sums[p * stride + k] = lanes[p];
    }
}

// sums[p * stride + k] = staged[k * L + p] for k < n, p < count: staged sums of n outputs
// back to each plane's row, eight by eight (64-bit sums: four by four) through tile
// transposes.
template <class B, index_t L>
inline void unstage_sums(const B* staged, index_t n, index_t count, B* sums, index_t stride) {
    index_t p0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (sizeof(B) == 4) {
        // (Tiny planes of two or four outputs: their own shuffles, not a scalar loop.)
        for (; n == 2 && p0 + 8 <= count; p0 += 8) {
            simd::untranspose_narrow<2>(staged + p0, L, sums + p0 * stride, stride);
        }
        for (; n == 4 && p0 + 8 <= count; p0 += 8) {
            simd::untranspose_narrow<4>(staged + p0, L, sums + p0 * stride, stride);
        }
        for (; n >= 8 && p0 + 8 <= count; p0 += 8) {
            for (index_t k = 0; k < n; k += 8) {
                const index_t at = std::min(k, n - 8);  // the last tile overlaps
                simd::untranspose_tile(staged + at * L + p0, L, sums + p0 * stride + at, stride);
            }
        }
    }
    if constexpr (sizeof(B) == 8) {
        for (; n >= 4 && p0 + 4 <= count; p0 += 4) {
            for (index_t k = 0; k < n; k += 4) {
                const index_t at = std::min(k, n - 4);  // the last tile overlaps
                simd::untranspose_tile(staged + at * L + p0, L, sums + p0 * stride + at, stride);
            }
        }
    }
#endif
    for (index_t k = 0; k < n; ++k) {  // (output by output: a run of lanes each)
        const B* lanes = staged + k * L;
        B* to = sums + k;
        for (index_t p = p0; p < count; ++p) to[p * stride] = lanes[p];
    }
}

// out[p * stride + k] = store<S>(staged[k * L + p]) for k < n, p < count: float32 averages
// staged by lane_pair_averages (staged_sums) straight into 16-bit float outputs, eight by
// eight through tile transposes that narrow on the way (simd/lanes_avx2.hpp), rather
// than unstage_sums into a float32 row per plane and narrow_row from there. The same
// conversions (narrow8 is store<S>'s rounding), so the same bits. n >= 8.
template <class S, index_t L>
inline void unstage_half(const float* staged, index_t n, index_t count, S* out, index_t stride) {
    index_t p0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
    for (; p0 + 8 <= count; p0 += 8) {
        for (index_t k = 0; k < n; k += 8) {
            const index_t at = std::min(k, n - 8);  // the last tile overlaps
            simd::untranspose_tile_half(staged + at * L + p0, L, out + p0 * stride + at, stride);
        }
    }
#endif
    for (index_t k = 0; k < n; ++k) {
        for (index_t p = p0; p < count; ++p) out[p * stride + k] = store<S>(staged[k * L + p]);
    }
}

// out[p * stride + k] = S(sums[k * L + p] / real32[k]) for p < count, k < n: float32 sums in
// lanes averaged and moved straight to each plane's outputs, eight planes by eight outputs
// through tile transposes that divide and narrow on the way (simd::untranspose_tile_averages),
// rather than to a row of sums per plane and write_averages from there: the same division and
// rounding, so the same bits.
// Whether unstage_float_averages pays for n outputs per plane: a whole number of tiles, or
// enough of them that the last one, overlapping the one before, adds little (it transposes and
// narrows eight outputs again; bfloat16 9 outputs per plane, two tiles each, took 1.2x the
// time of the sums' row and one write_averages sweep).
inline bool float_averages_unstage(index_t n) { return n % 8 == 0 || n >= 32; }

template <index_t L, class S>
inline void unstage_float_averages(const float* sums, index_t n, index_t count,
                                   const float* real32, S* out, index_t stride) {
    index_t p0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (L % 8 == 0) {
        for (; n >= 8 && p0 + 8 <= count; p0 += 8) {
            if (n % 8 != 0) {
                // The last outputs first, in a tile overlapping the one before, whose
                // overlapped outputs (not divided here: a division per output, not more)
                // the tiles below write again.
                simd::untranspose_tile_averages(sums + (n - 8) * L + p0, L, real32 + n - 8,
                                                out + p0 * stride + n - 8, stride, 8 - n % 8);
            }
            for (index_t k = 0; k + 8 <= n; k += 8) {
                simd::untranspose_tile_averages(sums + k * L + p0, L, real32 + k,
                                                out + p0 * stride + k, stride);
            }
        }
    }
#endif
    for (index_t p = p0; p < count; ++p) {
        for (index_t k = 0; k < n; ++k) out[p * stride + k] = store<S>(sums[k * L + p] / real32[k]);
    }
}

// out[p * stride + k] = staged[k * 16 + p] for k < n, p < count, as one-byte S: the int16
// averages of one-byte inputs (lane_pair_averages in short lanes, sixteen planes to a block)
// straight into the output, packed to bytes in place and transposed 16x16 bytes at a time
// (simd/short_lanes_avx2.hpp), rather than to a row of int16 per plane first. `staged` holds
// at least 32 rows of sixteen lanes (rows from n on: any values).
template <class S>
inline void unstage_bytes(std::int16_t* staged, index_t n, index_t count, S* out, index_t stride) {
#if OVPOOL_CORE_HAVE_AVX2
    S* q = reinterpret_cast<S*>(staged);
    simd::pack_lane_bytes(staged, n, q);
    simd::store_lane_averages(q, n, count, out, stride);
#else
    for (index_t k = 0; k < n; ++k) {
        for (index_t p = 0; p < count; ++p) out[p * stride + k] = store<S>(staged[k * 16 + p]);
    }
#endif
}

// total += rows r, r + pitch, ..., n of them, in that order; T: n as a constant (the taps
// unrolled), or 0 for any n (a loop).
template <index_t T, class A, index_t L>
inline void add_lane_rows(Lanes<A, L>& total, const A* r, index_t n, index_t pitch) {
    if constexpr (T > 0) {
        (void)n;
        for (index_t t = 0; t < T; ++t, r += pitch) total.add(r);
    } else {
        for (index_t t = 0; t < n; ++t, r += pitch) total.add(r);
    }
}

// Sums of the outputs whose axis-0 position is in [j0, j1) (whole rows of axis 0, in
// row-major order) of the block in `block` (transposed, L lanes), put by put_sums (k counting
// those outputs from 0) for the first `count` lanes. N: the spatial axes (1 to 3).
template <class A, index_t L, int N>
void lane_sums(const A* block, A* staged, A* sums, index_t stride, index_t count,
               const Geometry& g, index_t j0, index_t j1) {
    // Axes padded to three at the end (an absent axis: one window of one tap, which adds
    // nothing to a float sum: 0 + s == s for a sum s started from +0, and s is never -0).
    index_t out_len[3], pitch[3];
    const index_t* begin[3];
    const index_t* taps[3];
    static const index_t zero = 0, one = 1;
    index_t later = L;  // block elements between consecutive positions of an axis
    for (int a = 2; a >= 0; --a) {
        if (a >= N) {
            out_len[a] = 1;
            pitch[a] = 0;
            begin[a] = &zero;
            taps[a] = &one;
            continue;
        }
        AxisTable w = axis_table(g, a);
        out_len[a] = w.out_len;
        pitch[a] = later;
        begin[a] = w.begin;
        taps[a] = w.count;
        later *= w.length;
    }
    index_t k = 0;
    for (index_t u = j0; u < j1; ++u) {
        const A* b0 = block + begin[0][u] * pitch[0];
        const index_t n0 = taps[0][u];
        // The outputs of axis-0 window u, its tap count T a constant when it is one to four
        // (tiny planes: each tap its additions alone, not also a loop's count and branch).
        auto outputs = [&](auto taps0) {
            constexpr index_t T = decltype(taps0)::value;
            for (index_t v = 0; v < out_len[1]; ++v) {
                const A* b1 = b0 + begin[1][v] * pitch[1];
                const index_t n1 = taps[1][v];
                for (index_t w = 0; w < out_len[2]; ++w, ++k) {
                    const A* b2 = b1 + begin[2][w] * pitch[2];
                    const index_t n2 = taps[2][w];
                    Lanes<A, L> total = Lanes<A, L>::zero();
                    if constexpr (std::is_floating_point<A>::value) {
                        // Axis 0 innermost (the passes sum it first), axis 2 outermost. The
                        // first partial sum of axes 1 and 2 is taken as it is rather than
                        // added to +0: a sum started from +0 is never -0, and adding it to +0
                        // gives its own bits.
                        for (index_t t2 = 0; t2 < n2; ++t2) {
                            Lanes<A, L> middle = Lanes<A, L>::zero();
                            for (index_t t1 = 0; t1 < n1; ++t1) {
                                Lanes<A, L> inner = Lanes<A, L>::zero();
                                add_lane_rows<T>(inner, b2 + t2 * pitch[2] + t1 * pitch[1], n0,
                                                 pitch[0]);
                                if (t1 == 0) {
                                    middle = inner;
                                } else {
                                    middle.add(inner);
                                }
                            }
                            if (t2 == 0) {
                                total = middle;
                            } else {
                                total.add(middle);
                            }
                        }
                    } else {
                        for (index_t t2 = 0; t2 < n2; ++t2) {
                            for (index_t t1 = 0; t1 < n1; ++t1) {
                                add_lane_rows<T>(total, b2 + t2 * pitch[2] + t1 * pitch[1], n0,
                                                 pitch[0]);
                            }
                        }
                    }
                    put_sums(total, k, staged, sums, stride, count);
                }
            }
        };
        switch (n0) {
            case 1: outputs(std::integral_constant<index_t, 1>()); break;
            case 2: outputs(std::integral_constant<index_t, 2>()); break;
            case 3: outputs(std::integral_constant<index_t, 3>()); break;
            case 4: outputs(std::integral_constant<index_t, 4>()); break;
            default: outputs(std::integral_constant<index_t, 0>()); break;
        }
    }
}

// Windows of one or two taps per axis (adaptive pooling that upsamples): the sums go axis by
// axis, as the passes go, over the block in lanes. Pass a reads the previous pass's rows (the
// block for axis 0) viewed as (outer, length[a], inner) and writes (outer, output[a], inner):
// row j is row begin[j], plus row begin[j] + 1 when window j has two taps. Each output is then
// one or two whole-vector additions per axis, not the 2^N loads of its own window. Axis 0 is
// summed first, so the float sums nest as the passes' do (axis 0 innermost); they skip the
// passes' starting +0s and add one +0 at the end instead: a sum of these same addends started
// from +0 differs from it only in the sign of a zero result (0 + a == a unless a is -0), which
// that last +0 makes +0. The last pass (rows of one Lanes) adds a row of zeros for an absent
// second tap rather than branching on it, which also changes at most the sign of a zero.
// Every divisor is then a power of two (a product of windows of one or two taps), so each
// output's average is taken right there, on the whole vector (pow2_average: the bits of
// write_averages' division), and the averages, not the sums, go back to the planes.

// Bytes of a last-axis row's one- and two-tap averages that lane_pair_averages holds (on the
// stack), and the outputs of the row it takes that way.
constexpr index_t pair_row_room = 16384;
constexpr index_t pair_row_outputs = 512;

// dst row j = src row first[j] (+ src row first[j] + 1 when taps[j] is 2), j < out_len, for
// `outer` groups of `length` source rows of `inner` elements (a multiple of L), L at a time.
template <class A, index_t L>
inline void pair_pass(const A* src, A* dst, index_t outer, index_t length, index_t out_len,
                      index_t inner, const index_t* first, const index_t* taps) {
    for (index_t o = 0; o < outer; ++o) {
        const A* s = src + o * length * inner;
        A* d = dst + o * out_len * inner;
        for (index_t j = 0; j < out_len; ++j, d += inner) {
            const A* a = s + first[j] * inner;
            if (taps[j] == 2) {
                for (index_t r = 0; r < inner; r += L) {
                    Lanes<A, L> total = Lanes<A, L>::load(a + r);
                    total.add(a + inner + r);
                    total.get(d + r);
                }
            } else {
                for (index_t r = 0; r < inner; r += L) Lanes<A, L>::load(a + r).get(d + r);
            }
        }
    }
}

// The averages of the outputs whose axis-0 position is in [j0, j1) (whole rows of axis 0, in
// row-major order) of the block in `block` (transposed, L lanes, followed by a row of L
// zeros), put by put_sums (k counting those outputs from 0) for the first `count` lanes.
// divisor[k]: output k's divisor, a power of two up to 2^6. `work`: room for the passes
// before the last, (j1 - j0) * pair_work(g) * L elements.
template <class A, index_t L, int N>
void lane_pair_averages(const A* block, A* work, A* staged, A* sums, index_t stride,
                        index_t count, const Geometry& g, const std::int64_t* divisor,
                        index_t j0, index_t j1) {
    // log2 of the divisors, and their inverses.
    static const signed char shifts[65] = {
        0, 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 6};
    static const A inverse[7] = {A(1), A(0.5), A(0.25), A(0.125), A(0.0625), A(0.03125),
                                 A(0.015625)};
    // Each shift's constants of pow2_average as whole lanes, made once rather than for every
    // output: floats the inverse; integers the rounding's bias and parity mask (0 and 0 for a
    // divisor of 1, which leaves the sum).
    Lanes<A, L> scale[7], odd[7];
    for (int s = 0; s < 7; ++s) {
        if constexpr (std::is_floating_point<A>::value) {
            scale[s] = Lanes<A, L>::fill(inverse[s]);
            odd[s] = Lanes<A, L>::zero();
        } else {
            scale[s] = Lanes<A, L>::fill(s == 0 ? A(0) : A((A(1) << (s - 1)) - 1));
            odd[s] = Lanes<A, L>::fill(A(s == 0 ? 0 : 1));
        }
    }
    const A* zeros = block + g.in_plane * L;
    index_t inner = g.in_plane * L / g.length[0];  // elements per position of axis 0
    const A* src = block;
    index_t outer = 1, rows = j1 - j0;  // rows: positions of the current axis summed
    index_t skip = j0;                  // windows of axis 0 before this chunk's
    A* buffer = work;
    for (int a = 0; a + 1 < N; ++a) {
        AxisTable w = axis_table(g, a);
        if (identity_axis(g, a)) {
            // Each window the one row at its own position: the pass would copy the rows
            // (skip is 0 or, for axis 0, outer is 1).
            src = src + skip * inner;
            outer *= rows;
        } else {
            pair_pass<A, L>(src, buffer, outer, w.length, rows, inner, w.begin + skip,
                            w.count + skip);
            src = buffer;
            outer *= rows;
            buffer = buffer + outer * inner;
        }
        inner /= g.length[a + 1];
        rows = g.output[a + 1];
        skip = 0;
    }
    // The last axis: rows of L lanes.
    AxisTable w = axis_table(g, N - 1);
    const index_t* f = w.begin + skip;
    const index_t* t = w.count + skip;
    index_t k = 0;
    constexpr index_t held = pair_row_room / (2 * L * static_cast<index_t>(sizeof(A)));
    // (Integer lanes only: a float32 output's average costs about as much as its copy, and
    // the copies made float32 upsampling slower, 1x2048x7x6 -> 16x8 1.4x on one thread.)
    if constexpr (!std::is_floating_point<A>::value) {
        if (w.length <= rows && w.length <= held && rows <= pair_row_outputs) {
            // Upsampling: each row's averages of every one-tap window (at each input position)
            // and every two-tap one (at each position but the last) are computed once, by the
            // additions and divisions below, and each output is a copy of one of them, taken by
            // one offset per window (computed once per call), rather than a pointer, a tap test
            // and a shift table look-up per output. Output (o, j)'s divisor is row o's divisor
            // times its tap count, so a row has one shift per tap count.
            alignas(32) A averages[2 * held * L];  // one-tap ones, then two-tap ones
            index_t from[pair_row_outputs];        // window j's average in `averages`
            index_t one = -1, two = -1;            // a one-tap and a two-tap window, if any
            for (index_t j = 0; j < rows; ++j) {
                from[j] = (f[j] + (t[j] == 2 ? w.length : 0)) * L;
                if (t[j] == 1 && one < 0) one = j;
                if (t[j] == 2 && two < 0) two = j;
            }
            for (index_t o = 0; o < outer; ++o, k += rows) {
                const A* s = src + o * w.length * L;
                auto average_taps = [&](index_t j, index_t n, index_t at) {
                    if (j < 0) return;
                    const int shift = shifts[divisor[k + j]];
                    for (index_t i = 0; i + n <= w.length; ++i) {
                        Lanes<A, L> total = Lanes<A, L>::load(s + i * L);
                        total.add(n == 2 ? s + (i + 1) * L : zeros);
                        total.average_pow2(shift, scale[shift], odd[shift]);
                        total.get(averages + (at + i) * L);
                    }
                };
                average_taps(one, 1, 0);
                average_taps(two, 2, w.length);
                for (index_t j = 0; j < rows; ++j) {
                    put_sums(Lanes<A, L>::load(averages + from[j]), k + j, staged, sums, stride,
                             count);
                }
            }
            return;
        }
    }
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<A, float>::value && L == 16 && staged_sums<A>) {
        // float32 lanes: ((a + b) + 0) * 2^-shift as one fused multiply-add, (a + b) * 2^-shift
        // + 0, rounded once: the same bits, since the product by a power of two is exact
        // unless it underflows, and either way the +0 changes only a zero result's sign:
        // -0 + 0 is +0 in both; a nonzero exact product keeps its sign through the one
        // rounding, as (a + b) + 0 == a + b does through the product. Two instructions an
        // output fewer, and the inverse broadcast from one table rather than read as lanes.
        // A one-tap window skips the zero row: a * 2^-shift + 0 is (a + 0) * 2^-shift + 0 (a
        // and a + 0 differ only for a = -0, whose product the + 0 makes +0 either way, and a
        // NaN keeps its payload through both), so a load fewer and an addition fewer.
        const __m256 zero = _mm256_setzero_ps();
        for (index_t o = 0; o < outer; ++o) {
            const float* s = src + o * w.length * L;
            float* out = staged + k * L;
            const std::int64_t* d = divisor + k;
            for (index_t j = 0; j < rows; ++j, out += L) {
                const float* a = s + f[j] * L;
                const __m256 inv = _mm256_broadcast_ss(&inverse[shifts[d[j]]]);
                __m256 low = _mm256_loadu_ps(a), high = _mm256_loadu_ps(a + 8);
                if (t[j] == 2) {
                    low = _mm256_add_ps(low, _mm256_loadu_ps(a + L));
                    high = _mm256_add_ps(high, _mm256_loadu_ps(a + L + 8));
                }
                _mm256_storeu_ps(out, _mm256_fmadd_ps(low, inv, zero));
                _mm256_storeu_ps(out + 8, _mm256_fmadd_ps(high, inv, zero));
            }
            k += rows;
        }
        return;
    }
#endif
    for (index_t o = 0; o < outer; ++o) {
        const A* s = src + o * w.length * L;
        for (index_t j = 0; j < rows; ++j, ++k) {
            const A* a = s + f[j] * L;
            Lanes<A, L> total = Lanes<A, L>::load(a);
            total.add(t[j] == 2 ? a + L : zeros);
            if constexpr (std::is_floating_point<A>::value) total.add_zero();
            const int shift = shifts[divisor[k]];
            total.average_pow2(shift, scale[shift], odd[shift]);
            put_sums(total, k, staged, sums, stride, count);
        }
    }
}

// Elements of lane_pair_averages' work per axis-0 output and lane: the rows of every pass before
// the last, for one position of axis 0.
inline index_t pair_work(const Geometry& g) {
    index_t total = 0, outer = 1, inner = g.in_plane / g.length[0];
    for (index_t a = 0; a + 1 < g.naxes; ++a) {
        total += outer * inner;
        inner /= g.length[a + 1];
        outer *= g.output[a + 1];
    }
    return total;
}

// Whether S's upsampling windows (lane_pair_averages) are summed and averaged in int16 lanes:
// int8 / uint8 inputs, whose sums of at most eight taps fit there. Sixteen int16 lanes are one
// AVX2 register where sixteen int32 lanes are two, and the averages go back as bytes
// (unstage_bytes), not through int32 rows narrowed one by one.
template <class S>
constexpr bool short_lane_input = std::is_integral<S>::value && sizeof(S) == 1;

// Adaptive average pooling of a call's planes `lanes` at a time (see the top of this file).
// A work item is one block of planes, or, when there are few blocks, a share of its output
// rows along axis 0 (each share transposes the input rows its windows read).
template <class S>
class AvgLanes {
  public:
    typedef avg_accumulator_t<S> A;
    typedef typename narrow_avg_accumulator<S>::type N;

    // Whether the lanes path takes this call: adaptive windows on one to three axes, more than
    // one output per plane (whole-plane reductions have their own paths), a full block of
    // planes (a part-empty block wastes its lanes), a block that stays in L2, no float window
    // of 16 or more taps along the last axis (see the top of this file), and at least as
    // many outputs as inputs or a plane of at most lanes_small_plane elements: the transpose
    // costs more per input element than the passes spend on rows of some length, so planes
    // that shrink (13x17 to 7x7, 7x9x10 to 1x2x2) stay faster there. int64 averages stay on
    // the passes, which sum in int32 or int64 when the inputs allow (avg_ranged.hpp), rather
    // than in four 128-bit lanes.
    static bool suits(const Geometry& g, index_t planes) {
        if constexpr (std::is_same<S, std::int64_t>::value) return false;
        if (g.naxes < 1 || g.naxes > 3 || g.out_plane < 2 || planes < average_lanes<A> ||
            (g.out_plane < g.in_plane && g.in_plane > lanes_small_plane)) {
            return false;
        }
        if (g.in_plane * average_lanes<A> > lanes_max_block || !adaptive_windows(g)) return false;
        return !(std::is_floating_point<A>::value && last_axis_partial_sums(g));
    }

    // The divisors cover one plane's outputs. Throws std::bad_alloc.
    AvgLanes(const S* x, S* out, index_t planes, const Geometry& g, const Divisors& divisors,
             int workers)
        : x_(x), out_(out), planes_(planes), g_(g), divisors_(divisors) {
        if (workers < 1) workers = 1;
        if constexpr (!std::is_same<N, A>::value) {
            narrow_ = sums_fit<N>(g_, narrow_avg_accumulator<S>::largest);
            // int32 sums that divide exactly in float32 (see Divisors::small_sums).
            divisors_.small_sums =
                narrow_ && std::is_same<N, std::int32_t>::value &&
                divisors_.small_divisors &&
                sums_within(window_volume(g_), narrow_avg_accumulator<S>::largest, small_sum_limit);
        }
        index_t lanes = narrow_ ? average_lanes<N> : average_lanes<A>;
        if constexpr (ranged_average<S>::value) {
            // int32 inputs: blocks of 16 planes (8 when the call has fewer), summed in int32
            // lanes when the block's inputs allow (see run), else in int64 lanes, eight
            // planes at a time.
            ranged_lanes_ = planes >= 2 * lanes ? 2 * lanes : lanes;
            lanes = ranged_lanes_;
            volume_ = window_volume(g_);
        }
        blocks_ = (planes + lanes - 1) / lanes;
        rows_ = g_.output[0];
        row_outputs_ = g_.out_plane / rows_;
        shares_ = 1;
        if (blocks_ < 4 * workers) {
            shares_ = std::min(rows_, (4 * workers + blocks_ - 1) / blocks_);
        }
        chunk_rows_ = std::max<index_t>(1, lanes_chunk_outputs / row_outputs_);
        pairs_ = true;
        for (index_t a = 0; a < g_.naxes; ++a) {
            AxisTable w = axis_table(g_, a);
            for (index_t j = 0; j < w.out_len; ++j) pairs_ = pairs_ && w.count[j] <= 2;
        }
        if (pairs_) {
            // Each output's divisor must be a power of two up to 2^6 (pair_shifts). Those of
            // adaptive windows of one or two taps per axis are; tables like theirs with the
            // divisors of a count-including-pad average may not be, and keep lane_sums.
            std::int64_t other = 0;
            for (index_t k = 0; k < g_.out_plane; ++k) {
                const std::int64_t c = divisors_.count[k];
                other |= (c & (c - 1)) | (c > 64) | (c < 1);
            }
            pairs_ = other == 0;
        }
        if constexpr (short_lane_input<S>) {
            // int8 / uint8 upsampling in int16 lanes (see short_lanes), sixteen to a block as in
            // int32 ones: windows of at most eight taps sum within +-2040, and with the
            // rounding's bias of at most 32 stay within int16.
            short_ = pairs_ && narrow_;
        }
        if (short_) {
            per_worker_ = scratch_elements<std::int16_t>(average_lanes<N>);
        } else if (narrow_) {
            per_worker_ = scratch_elements<N>(average_lanes<N>);
        } else {
            per_worker_ = scratch_elements<A>(average_lanes<A>);
        }
        if (ranged_lanes_ > 0) ranged_per_worker_ = scratch_elements<std::int32_t>(ranged_lanes_);
        // Planes of few outputs, each item a whole block: one division (or narrowing) for the
        // block's averages, not one per plane, over divisors repeated for a block.
        whole_ = shares_ == 1 && chunk_rows_ >= rows_ && g_.out_plane < few_outputs_per_plane;
        if (whole_) {
            block_divisors_ = divisors_;
            repeated_.repeat(block_divisors_, g_.out_plane, lanes);
        }
        if (!whole_ && row_outputs_ >= lanes_repeated_row) {
            // Output rows (along axis 0) with the window and divisors of the row before
            // (upsampling by more than two: 12 rows to 28 repeat 8): each plane's row is then
            // a copy of the one before, once that is written (in the same item), not summed,
            // averaged and moved out of the lanes again. Not for short rows, whose copies
            // (a call each) and the chunks they cut cost more than averaging them
            // (1x2048x7x6 -> 16x8, rows of 8: 0.95M -> 1.05M instructions a call).
            AxisTable w0 = axis_table(g_, 0);
            repeats_ = allocate<unsigned char>(rows_);
            for (index_t u = 0; u < rows_; ++u) {
                bool same = u > 0 && w0.begin[u] == w0.begin[u - 1] &&
                            w0.count[u] == w0.count[u - 1];
                const std::int64_t* d = divisors_.count + u * row_outputs_;
                for (index_t i = 0; same && i < row_outputs_; ++i) {
                    same = d[i] == d[i - row_outputs_];
                }
                repeats_[u] = same;
                any_repeats_ = any_repeats_ || same;
            }
        }
        if (short_) {
            short_scratch_ = allocate<std::int16_t>(workers * per_worker_);
        } else if (narrow_) {
            narrow_scratch_ = allocate<N>(workers * per_worker_);
        } else {
            scratch_ = allocate<A>(workers * per_worker_);
        }
        if (ranged_lanes_ > 0) {
            ranged_scratch_ = allocate<std::int32_t>(workers * ranged_per_worker_);
        }
    }

    index_t items() const { return blocks_ * shares_; }

    void run(index_t item, int worker) const noexcept {
        const index_t block = item / shares_, share = item % shares_;
        if constexpr (short_lane_input<S>) {
            if (short_) {
                constexpr index_t L = average_lanes<N>;
                run_as<std::int16_t, L>(block * L, std::min(L, planes_ - block * L), share,
                                        short_scratch_.get() + worker * per_worker_, false);
                return;
            }
        }
        if constexpr (!std::is_same<N, A>::value) {
            if (narrow_) {
                constexpr index_t L = average_lanes<N>;
                run_as<N, L>(block * L, std::min(L, planes_ - block * L), share,
                             narrow_scratch_.get() + worker * per_worker_, divisors_.small_sums);
                return;
            }
        }
        constexpr index_t L = average_lanes<A>;
        if constexpr (ranged_average<S>::value) {
            // The block's planes in int32 lanes when every sum fits there (the sums, and so
            // the averages, are the same in any accumulator they fit), else in int64 lanes,
            // eight planes at a time.
            const index_t first = block * ranged_lanes_;
            const index_t count = std::min(ranged_lanes_, planes_ - first);
            index_t from, to;
            input_span(share, &from, &to);
            std::uint64_t bound = 1;
            for (index_t p = 0; p < count; ++p) {
                bound = std::max(bound, magnitude_bound(x_ + (first + p) * g_.in_plane + from,
                                                        to - from));
            }
            if (sums_within(volume_, bound, std::numeric_limits<std::int32_t>::max())) {
                std::int32_t* scratch = ranged_scratch_.get() + worker * ranged_per_worker_;
                const bool small = divisors_.small_divisors && sums_within(volume_, bound, small_sum_limit);
                if (ranged_lanes_ == 2 * L) {
                    run_as<std::int32_t, 2 * L>(first, count, share, scratch, small);
                } else {
                    run_as<std::int32_t, L>(first, count, share, scratch, small);
                }
                return;
            }
            for (index_t part = first; part < first + count; part += L) {
                run_as<A, L>(part, std::min(L, first + count - part), share,
                             scratch_.get() + worker * per_worker_, false);
            }
            return;
        }
        run_as<A, L>(block * L, std::min(L, planes_ - block * L), share,
                     scratch_.get() + worker * per_worker_, divisors_.small_sums);
    }

  private:
    // Elements from one plane's sums to the next, for sums of B: a chunk's, plus a few beyond
    // a multiple of 4 KiB, so that the lanes' sums (written side by side) do not all fall in
    // the same L1 set.
    template <class B>
    index_t sums_stride(index_t lanes) const {
        const index_t page = 4096 / static_cast<index_t>(sizeof(B));
        return (chunk_rows_ * row_outputs_ + page - 1) / page * page + lanes;
    }

    // Scratch elements of B for one worker with `lanes` lanes: the block, a row of zeros
    // (absent taps of lane_pair_averages) and the rows a transpose may spill into, the sums,
    // the sums as the lanes leave them (see unstage_sums), and lane_pair_averages' work.
    template <class B>
    index_t scratch_elements(index_t lanes) const {
        index_t n = lanes * (g_.in_plane + lanes_spill_rows) + lanes * sums_stride<B>(lanes);
        if (staged_sums<B>) n += lanes * chunk_rows_ * row_outputs_;
        if (pairs_) n += lanes * chunk_rows_ * pair_work(g_);
        // (unstage_bytes reads 32 rows of bytes, 16 of int16 lanes, whatever the outputs)
        if (std::is_same<B, std::int16_t>::value) n += 16 * lanes;
        return n;
    }

    // Elements [*from, *to) of a plane that the output rows of `share` read (whole rows of
    // axis 0).
    void input_span(index_t share, index_t* from, index_t* to) const noexcept {
        const index_t row_begin = rows_ * share / shares_, row_end = rows_ * (share + 1) / shares_;
        AxisTable w0 = axis_table(g_, 0);
        const index_t inner = g_.in_plane / w0.length;
        index_t lo = w0.length, hi = 0;
        for (index_t row = row_begin; row < row_end; ++row) {
            if (w0.count[row] == 0) continue;
            lo = std::min(lo, w0.begin[row]);
            hi = std::max(hi, w0.begin[row] + (w0.count[row] - 1) * w0.dil + 1);
        }
        *from = lo * inner;
        *to = std::max(lo, hi) * inner;
    }

    // Output row `row` of planes first .. first + count - 1 as a copy of the row before (see
    // repeats_).
    void copy_previous_row(index_t first, index_t count, index_t row) const noexcept {
        const index_t n = row_outputs_;
        for (index_t p = 0; p < count; ++p) {
            S* to = out_ + (first + p) * g_.out_plane + row * n;
            std::memcpy(to, to - n, static_cast<std::size_t>(n) * sizeof(S));
        }
    }

    // Planes first .. first + count - 1 (count <= L), output rows of `share`, summed in B;
    // `small`: whether the sums divide as Divisors::small_sums says.
    template <class B, index_t L>
    void run_as(index_t first, index_t count, index_t share, B* scratch, bool small) const noexcept {
        const index_t in_plane = g_.in_plane, out_plane = g_.out_plane;
        B* lanes = scratch;
        B* sums = scratch + L * (in_plane + lanes_spill_rows);
        B* staged = sums + L * sums_stride<B>(L);
        B* work = staged + (staged_sums<B> ? L * chunk_rows_ * row_outputs_ : 0);
        // The block transposed: element i of plane p at lanes[i * L + p]; absent planes 0.
        // Only the input rows (along axis 0) that this item's output rows read.
        const index_t row_begin = rows_ * share / shares_, row_end = rows_ * (share + 1) / shares_;
        index_t from, to;
        input_span(share, &from, &to);
        transpose_planes<S, B, L>(x_ + first * in_plane, in_plane, count, from, to,
                                  (planes_ - first) * in_plane, lanes);
        for (index_t p = 0; p < L; ++p) lanes[in_plane * L + p] = 0;
        for (index_t row = row_begin, last = row_begin; row < row_end; row = last) {
            if (any_repeats_ && row > row_begin && repeats_[row]) {
                copy_previous_row(first, count, row);
                last = row + 1;
                continue;
            }
            // (a chunk ends before the next repeated row; without any, at chunk_rows_)
            last = std::min(row_end, row + chunk_rows_);
            if (any_repeats_) {
                last = row + 1;
                while (last < row_end && last - row < chunk_rows_ && !repeats_[last]) ++last;
            }
            index_t n = (last - row) * row_outputs_;
            // (whole planes of few outputs: their sums side by side, as the output holds them)
            const index_t stride = whole_ ? out_plane : sums_stride<B>(L);
            const index_t k = row * row_outputs_;
            if (pairs_) {
                // Averages, straight into the output when it is the lanes' type.
                B* target = sums;
                index_t pitch = stride;
                if constexpr (std::is_same<S, B>::value) {
                    target = out_ + first * out_plane + k;
                    pitch = out_plane;
                }
                const std::int64_t* divisor = divisors_.count + k;
                switch (g_.naxes) {
                    case 1:
                        lane_pair_averages<B, L, 1>(lanes, work, staged, target, pitch, count, g_,
                                                    divisor, row, last);
                        break;
                    case 2:
                        lane_pair_averages<B, L, 2>(lanes, work, staged, target, pitch, count, g_,
                                                    divisor, row, last);
                        break;
                    default:
                        lane_pair_averages<B, L, 3>(lanes, work, staged, target, pitch, count, g_,
                                                    divisor, row, last);
                        break;
                }
                if constexpr (staged_sums<B> && is_half<S>::value &&
                              std::is_same<B, float>::value) {
                    if (n >= 8) {
                        unstage_half<S, L>(staged, n, count, out_ + first * out_plane + k,
                                           out_plane);
                        continue;
                    }
                }
                if constexpr (staged_sums<B> && std::is_same<B, std::int16_t>::value) {
                    unstage_bytes(staged, n, count, out_ + first * out_plane + k, out_plane);
                    continue;
                }
                if constexpr (staged_sums<B>) unstage_sums<B, L>(staged, n, count, target, pitch);
                if constexpr (!std::is_same<S, B>::value) {
                    if (whole_) {
                        narrow_row(sums, out_ + first * out_plane, count * out_plane);
                        continue;
                    }
                    for (index_t p = 0; p < count; ++p) {
                        narrow_row(sums + p * stride, out_ + (first + p) * out_plane + k, n);
                    }
                }
                continue;
            } else switch (g_.naxes) {
                case 1:
                    lane_sums<B, L, 1>(lanes, staged, sums, stride, count, g_, row, last);
                    break;
                case 2:
                    lane_sums<B, L, 2>(lanes, staged, sums, stride, count, g_, row, last);
                    break;
                default:
                    lane_sums<B, L, 3>(lanes, staged, sums, stride, count, g_, row, last);
                    break;
            }
            if constexpr (staged_sums<B> && std::is_same<B, float>::value) {
                // float32 sums of whole tiles or many outputs: divided and narrowed on their
                // way out of the lanes (unstage_float_averages), not through a row of sums.
                if (float_averages_unstage(n) && divisors_.real32) {
                    unstage_float_averages<L>(staged, n, count, divisors_.real32 + k,
                                              out_ + first * out_plane + k, out_plane);
                    continue;
                }
            }
            if constexpr (staged_sums<B>) unstage_sums<B, L>(staged, n, count, sums, stride);
            if (whole_) {
                Divisors block = block_divisors_;
                block.small_sums = small;
                write_averages(out_ + first * out_plane, static_cast<const B*>(sums),
                               count * out_plane, block);
                continue;
            }
            Divisors part = divisors_from(divisors_, k);
            part.small_sums = small;
            for (index_t p = 0; p < count; ++p) {
                write_averages(out_ + (first + p) * out_plane + k, sums + p * stride, n, part);
            }
        }
    }

    const S* x_;
    S* out_;
    index_t planes_;
    Geometry g_;
    Divisors divisors_;
    bool whole_ = false;          // an item's sums side by side in one run (see the constructor)
    Divisors block_divisors_;     // whole_: divisors_ repeated for a block
    RepeatedDivisors repeated_;   // (their storage)
    bool narrow_ = false;     // sums in N (narrow_scratch_), not A (scratch_)
    bool short_ = false;      // int8 / uint8 pairs_ in int16 lanes (short_scratch_)
    index_t blocks_ = 0;      // blocks of planes
    index_t shares_ = 1;      // items per block
    index_t rows_ = 1;        // outputs along axis 0
    index_t row_outputs_ = 1; // outputs per position of axis 0
    index_t chunk_rows_ = 1;  // axis-0 positions summed before a division
    index_t per_worker_ = 0;  // scratch elements per worker
    bool pairs_ = false;      // every window has one or two taps per axis: lane_pair_averages
    // Per output row: whether it repeats the row before (see the constructor); any of them.
    std::unique_ptr<unsigned char[]> repeats_;
    bool any_repeats_ = false;
    std::unique_ptr<A[]> scratch_;
    std::unique_ptr<N[]> narrow_scratch_;
    std::unique_ptr<std::int16_t[]> short_scratch_;
    // int32 inputs: planes per block, summed in as many int32 lanes when they fit (see run),
    // the scratch of those lanes, the windows' largest volume, and whether every divisor is
    // below small_divisor_limit.
    index_t ranged_lanes_ = 0;
    index_t ranged_per_worker_ = 0;
    std::unique_ptr<std::int32_t[]> ranged_scratch_;
    long long volume_ = 0;
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
