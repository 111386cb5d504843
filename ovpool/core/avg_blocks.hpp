// Fixed-window averages of small planes side by side ("plane blocks").
//
// The passes of average.hpp pay a loop set-up per window and per row, which for planes of a
// few short rows (7x8, 9x6, a 1-D row of 50) costs far more than the additions. Here a block
// of `lanes` consecutive planes is transposed into a per-worker buffer, element i of plane p
// at [i * lanes + p] (widened to the accumulator), which is one plane of the input's spatial
// shape with one more, innermost axis of `lanes` positions. The passes then pool that plane
// through the same window tables with that axis added (each of its windows the one input at
// its own position, so its pass is skipped): every tap of a window is a run of at least
// `lanes` contiguous values, summed in whole vectors. The sums are transposed back plane by
// plane and divided by write_averages, the rule every average path uses.
//
// Order: the passes sum the same taps in the same order for each lane as for a plane on its
// own (axis by axis, each partial sum from +0, taps in window order), so results are the same
// bits; the one exception, float windows of 16 or more taps along the last axis (summed in
// eight partial sums when that axis is innermost, see sum_windows), does not come here.
// Integer sums are in int32: int8 / uint8 windows here are far too small to overflow it, and
// int32 / int64 inputs bound their block's magnitude first (avg_ranged.hpp), the rare block
// that does not fit going through the passes plane by plane in the full accumulator.
// int8 / uint8 windows small enough that no partial sum leaves int16 (a window volume of at
// most 255 for int8, 128 for uint8) sum in int16 lanes instead, sixteen to an AVX2 vector
// (simd/short_lanes_avx2.hpp transposes them in and back out as int32 sums); exact integer
// sums either way, so the same averages in every build.
#ifndef OVPOOL_CORE_AVG_BLOCKS_HPP
#define OVPOOL_CORE_AVG_BLOCKS_HPP

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "average.hpp"
#include "average_lanes.hpp"
#include "avg_ranged.hpp"
#include "simd/average_avx2.hpp"
#include "simd/lanes_avx2.hpp"
#include "simd/short_lanes_avx2.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Last axes of at most this many elements take the blocks (longer rows amortise the passes'
// set-up on their own).
constexpr index_t blocks_max_row = 64;
// Largest transposed block (elements): larger ones (int8 43x61 planes, 42k) leave L2 in the
// passes and are slower than the passes plane by plane.
constexpr index_t blocks_max_block = index_t(1) << 15;

// int8 / uint8 planes of one or two axes whose windows stride along the last axis (2 to 4
// apart, three or more taps, rows of at most blocks_max_strided_row) take blocks of up to
// blocks_max_strided_block elements: the passes sum such rows window by window or from dense
// sums, row by row, which costs more than the larger block (int8 1x3404x77 k4 s3 d2: 0.129 ->
// 0.077 ms on one thread; 8x12x43x61 k4,6 s1,4: 0.167 -> 0.13). Only when every input is in
// some window: the blocks transpose whole planes, the passes read only the taps (uint8 8x109
// k3,4 s3,4 d3,1 reads 3 rows of 8, and is twice as fast on the passes).
constexpr index_t blocks_max_strided_row = 128;
constexpr index_t blocks_max_strided_block = index_t(1) << 16;

// int8 / uint8 planes some of whose inputs are in no window take blocks of at most this many
// elements: the blocks transpose whole planes, the passes read only the taps, which pays once
// planes are large enough to amortise the passes' set-ups (int8 152 planes of 12x11x13 k4,3,3
// s6,5,5: 33 -> 19 us a call on one thread; 2912 planes of 10x9 k2,2 s2,4 d2,2 stay in the
// blocks, 52 us there against 107 on the passes).
constexpr index_t blocks_max_sparse_block = index_t(1) << 14;

// Whether every input position of every axis of g is a tap of some window.
inline bool every_input_read(const Geometry& g) {
    for (index_t a = 0; a < g.naxes; ++a) {
        AxisTable w = axis_table(g, a);
        std::vector<char> read(static_cast<std::size_t>(w.length), 0);
        for (index_t j = 0; j < w.out_len; ++j) {
            for (index_t t = 0; t < w.count[j]; ++t) read[w.begin[j] + t * w.dil] = 1;
        }
        if (std::find(read.begin(), read.end(), 0) != read.end()) return false;
    }
    return true;
}

// Whether int8 / uint8 planes of g take the larger blocks (see blocks_max_strided_block).
inline bool strided_rows_suit_blocks(const Geometry& g, index_t lanes) {
    if (g.naxes > 2 || g.in_plane * lanes > blocks_max_strided_block) return false;
    AxisTable w = axis_table(g, g.naxes - 1);
    return w.length <= blocks_max_strided_row && w.step >= 2 && w.step <= 4 && w.taps > 2 &&
           w.hi > w.lo && every_input_read(g);
}

// The packed tables (see make_geometry) of g with one more, innermost axis of `lanes`
// positions, each window of which is the one input at its own position.
inline std::unique_ptr<index_t[]> lane_axis_tables(const Geometry& g, index_t lanes) {
    const index_t n = g.naxes, m = n + 1;
    index_t windows = 0;
    for (index_t a = 0; a < n; ++a) windows += g.output[a];
    std::unique_ptr<index_t[]> p = allocate<index_t>(2 + 7 * m + 2 * (windows + lanes));
    p[0] = m;
    p[1] = g.scratch * lanes;
    index_t* length = p.get() + 2;
    index_t* output = length + m;
    index_t* dilation = output + m;
    index_t* offset = dilation + m;
    index_t* stride = offset + m;
    index_t* interior = stride + m;
    index_t* begin = interior + 2 * m;
    index_t* count = begin + windows + lanes;
    for (index_t a = 0; a < n; ++a) {
        length[a] = g.length[a];
        output[a] = g.output[a];
        dilation[a] = g.dilation[a];
        offset[a] = g.offset[a];
        stride[a] = g.stride[a];
        interior[2 * a] = g.interior[2 * a];
        interior[2 * a + 1] = g.interior[2 * a + 1];
    }
    length[n] = output[n] = lanes;
    dilation[n] = stride[n] = 1;
    offset[n] = windows;
    interior[2 * n] = 0;
    interior[2 * n + 1] = lanes;
    for (index_t j = 0; j < windows; ++j) {
        begin[j] = g.begin[j];
        count[j] = g.count[j];
    }
    for (index_t j = 0; j < lanes; ++j) {
        begin[windows + j] = j;
        count[windows + j] = 1;
    }
    return p;
}

// Whether S is an int8 / uint8 input, whose blocks sum in int16 when their windows allow (see
// AvgBlocks::short_sums).
template <class S>
constexpr bool short_block_input = std::is_integral<S>::value && sizeof(S) == 1;

// t[i * L + p] = x[p * n + i] for p < count, i < n, as B; lanes count .. L - 1 are zeros.
template <index_t L, class S, class B>
inline void transpose_into_lanes(const S* x, index_t n, index_t count, B* t) {
    index_t p0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
    constexpr bool short_tiles = std::is_same<B, std::int16_t>::value && short_block_input<S>;
    if constexpr (short_tiles && L == 16) {
        // A full block of int16 lanes: sixteen planes at a time, the last tile overlapping the
        // one before when n is not a multiple of 32 (or of eight; it rewrites the same lanes).
        if (count == 16 && n >= 32) {
            for (index_t i = 0;; i += 32) {
                if (i + 32 > n) i = n - 32;
                simd::short_tile16x32_in(x + i, n, t + i * 16);
                if (i + 32 >= n) return;
            }
        }
        if (count == 16 && n >= 8) {
            for (index_t i = 0;; i += 8) {
                if (i + 8 > n) i = n - 8;
                simd::short_tile16_in(x + i, n, t + i * 16);
                if (i + 8 >= n) return;
            }
        }
    }
    if constexpr (L % 8 == 0 && (simd::has_transpose_tile8<S, B> || short_tiles)) {
        // Eight planes at a time, in 8x8 tiles.
        for (; p0 + 8 <= count; p0 += 8) {
            index_t i = 0;
            for (; i + 8 <= n; i += 8) {
                if constexpr (short_tiles) {
                    simd::short_tile_in(x + p0 * n + i, n, t + i * L + p0, L);
                } else {
                    simd::transpose_tile8(x + p0 * n + i, n, t + i * L + p0, L);
                }
            }
            for (index_t p = p0; p < p0 + 8; ++p) {
                for (index_t k = i; k < n; ++k) t[k * L + p] = load<B>(x[p * n + k]);
            }
        }
    }
#endif
    for (index_t p = p0; p < count; ++p) {
        for (index_t i = 0; i < n; ++i) t[i * L + p] = load<B>(x[p * n + i]);
    }
    for (index_t p = count; p < L; ++p) {
        for (index_t i = 0; i < n; ++i) t[i * L + p] = 0;
    }
}

// planes[p * m + k] = sums[k * L + p] for p < count, k < m (int16 sums widened to int32
// planes, else planes of the sums' own type).
template <index_t L, class B, class P>
inline void transpose_from_lanes(const B* sums, index_t m, index_t count, P* planes) {
    static_assert(std::is_same<B, std::int16_t>::value ? std::is_same<P, std::int32_t>::value
                                                       : std::is_same<P, B>::value,
                  "int16 sums into int32 planes, else the sums' type");
    index_t p0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
    constexpr bool short_tiles = std::is_same<B, std::int16_t>::value;
    if constexpr (sizeof(B) == 4 && !short_tiles && L % 8 == 0) {
        if (m < 8) {
            for (; p0 + 8 <= count; p0 += 8) {
                simd::untranspose_few(sums + p0, L, m, planes + p0 * m);
            }
        }
    }
    if constexpr ((sizeof(B) == 4 || short_tiles) && L % 8 == 0) {
        for (; p0 + 8 <= count; p0 += 8) {
            index_t k = 0;
            for (; k + 8 <= m; k += 8) {
                if constexpr (short_tiles) {
                    simd::short_tile_out(sums + k * L + p0, L, planes + p0 * m + k, m);
                } else {
                    simd::untranspose_tile(sums + k * L + p0, L, planes + p0 * m + k, m);
                }
            }
            for (index_t p = p0; p < p0 + 8; ++p) {
                for (index_t j = k; j < m; ++j) planes[p * m + j] = sums[j * L + p];
            }
        }
    }
#endif
    for (index_t p = p0; p < count; ++p) {
        for (index_t k = 0; k < m; ++k) planes[p * m + k] = sums[k * L + p];
    }
}

// The accumulator of the blocks: int32 for integer inputs, else the average's own.
template <class S>
using block_accumulator_t =
    typename std::conditional<std::is_integral<S>::value, std::int32_t, avg_accumulator_t<S>>::type;

template <class S>
class AvgBlocks {
  public:
    typedef avg_accumulator_t<S> A;
    typedef block_accumulator_t<S> B;
    static constexpr index_t L = average_lanes<B>;

    // Whether the blocks take this call: at least one full block of planes, a last axis of at
    // most blocks_max_row elements and a block of at most blocks_max_block elements (or
    // strided int8 / uint8 rows, see strided_rows_suit_blocks; int8 / uint8 planes with
    // inputs in no window: at most blocks_max_sparse_block elements), int8 /
    // uint8 windows whose sums fit in int32, and no float window of 16 or more taps along the
    // last axis (see the top of this file).
    static bool suits(const Geometry& g, index_t planes) {
        if (g.naxes < 1 || planes < L) return false;
        bool small = g.length[g.naxes - 1] <= blocks_max_row && g.in_plane * L <= blocks_max_block;
        if constexpr (sizeof(S) == 1) {
            small = small || strided_rows_suit_blocks(g, L);
        }
        if (!small) return false;
        if constexpr (sizeof(S) == 1) {
            if (g.in_plane * L > blocks_max_sparse_block && !every_input_read(g)) return false;
        }
        if constexpr (std::is_integral<S>::value && !ranged_average<S>::value) {
            if (!sums_fit<std::int32_t>(g, narrow_avg_accumulator<S>::largest)) return false;
        }
        return !(std::is_floating_point<A>::value && last_axis_partial_sums(g));
    }

    // The divisors cover one plane's outputs (they are copied), divisor32 and inverse32
    // included (see lane_divisor32_). Throws std::bad_alloc.
    AvgBlocks(const S* x, S* out, index_t planes, const Geometry& g, const Divisors& divisors,
              int workers)
        : x_(x), out_(out), planes_(planes), g_(g), divisors_(divisors) {
        if (workers < 1) workers = 1;
        packed_ = lane_axis_tables(g, L);
        lanes_g_ = make_geometry(packed_.get());
        ordered_ = exact_pass_order<S, B>(lanes_g_, &pass_order_);
        volume_ = window_volume(g);
        // (int16 sums of sixteen planes divide by the inverses in the lanes, see run; every
        // other division goes through write_averages, which has no use for them)
        divisors_.divisor32 = divisors_.inverse32 = nullptr;
        // The sums plane by plane, then the transposed block and the passes' two buffers (in
        // a buffer of their own for int16 sums).
        const index_t work = L * (g.in_plane + 2 * g.scratch);
        if constexpr (short_block_input<S>) {
            short_sums_ = sums_fit<std::int16_t>(g, narrow_avg_accumulator<S>::largest);
        }
        per_worker_ = L * g.out_plane + (short_sums_ ? 0 : work);
        scratch_ = allocate<B>(workers * per_worker_);
        if constexpr (short_block_input<S>) {
            if (short_sums_) init_short_sums(g, divisors, workers, work);
        }
        block_divisors_ = divisors_;
        // (float32 sums with float32 divisors leave the lanes as averages: see run)
        lane_averages_ = std::is_same<B, float>::value && divisors.real32 &&
                         float_averages_unstage(g.out_plane);
        if (g.out_plane < few_outputs_per_plane && !lane_averages_) {
            repeated_.repeat(block_divisors_, g.out_plane, L);
        }
        if constexpr (ranged_average<S>::value) {
            wide_ = allocate<A>(workers * 2 * L * g.scratch);
        }
    }

    index_t items() const { return (planes_ + L - 1) / L; }

    void run(index_t item, int worker) const noexcept {
        const index_t first = item * L, count = std::min(L, planes_ - first);
        const index_t in_plane = g_.in_plane, out_plane = g_.out_plane;
        const S* x = x_ + first * in_plane;
        S* out = out_ + first * out_plane;
        const bool repeated = repeated_.count != nullptr;
        Divisors these = repeated ? block_divisors_ : divisors_;
        if constexpr (std::is_integral<S>::value) {
            long long largest = narrow_avg_accumulator<S>::largest;
            if constexpr (ranged_average<S>::value) {
                std::uint64_t bound = magnitude_bound(x, count * in_plane);
                if (!sums_within(volume_, bound, std::numeric_limits<std::int32_t>::max())) {
                    // Sums that may not fit in int32: the passes in the full accumulator.
                    avg_planes(x, out, wide_.get() + worker * 2 * L * g_.scratch, g_, these,
                               count, repeated ? count * out_plane : out_plane);
                    return;
                }
                these.small_sums = divisors_.small_divisors && sums_within(volume_, bound, small_sum_limit);
            } else {
                these.small_sums = divisors_.small_divisors && sums_within(volume_, largest, small_sum_limit);
            }
        }
        B* planes = scratch_.get() + worker * per_worker_;
        bool summed = false;
        if constexpr (short_block_input<S>) {
            if (short_sums_) {
                const std::int16_t* sums =
                    lane_sums(x, count, short_scratch_.get() + worker * short_per_worker_);
#if OVPOOL_CORE_HAVE_AVX2
                if constexpr (L == 16) {
                    if (lane_divisor32_) {
                        // The averages in the lanes, then back plane by plane as bytes.
                        S* q = quotients_.get() + worker * quotients_per_worker_;
                        simd::short_lane_averages(sums, out_plane, lane_divisor32_,
                                                  lane_inverse32_, q);
                        simd::store_lane_averages(q, out_plane, count, out, out_plane);
                        return;
                    }
                }
#endif
                transpose_from_lanes<L>(sums, out_plane, count, planes);
                summed = true;
            }
        }
        if (!summed) {
            const B* sums = lane_sums(x, count, planes + L * out_plane);
            if constexpr (std::is_same<B, float>::value) {
                if (lane_averages_) {
                    // Averaged on their way out of the lanes (unstage_float_averages).
                    unstage_float_averages<L>(sums, out_plane, count, divisors_.real32, out,
                                              out_plane);
                    return;
                }
            }
            transpose_from_lanes<L>(sums, out_plane, count, planes);
        }
        if (repeated) {
            write_averages(out, planes, count * out_plane, these);
        } else {
            for (index_t p = 0; p < count; ++p) {
                write_averages(out + p * out_plane, planes + p * out_plane, out_plane, these);
            }
        }
    }

  private:
    // The buffers of int16 sums (`work` elements per worker) and, with AVX2 and divisors below
    // 2^24 (exact as float32, as the sums are), of their averages in lanes.
    void init_short_sums(const Geometry& g, const Divisors& divisors, int workers, index_t work) {
        short_per_worker_ = work;
        short_scratch_ = allocate<std::int16_t>(workers * short_per_worker_);
#if OVPOOL_CORE_HAVE_AVX2
        if (L == 16 && divisors.small_divisors && divisors.divisor32) {
            lane_divisor32_ = divisors.divisor32;
            lane_inverse32_ = divisors.inverse32;
            quotients_per_worker_ = L * std::max<index_t>(g.out_plane, 32);
            quotients_ = allocate<S>(workers * quotients_per_worker_);
            std::fill(quotients_.get(), quotients_.get() + workers * quotients_per_worker_, S{});
        }
#else
        (void)g;
        (void)divisors;
#endif
    }

    // The sums of every window of the `count` planes from x, in lanes (sums[k * L + p]: plane
    // p's window k): the block transposed into lanes of C (`work`: L * (in_plane + 2 *
    // scratch) of them) and summed by the passes.
    template <class C>
    const C* lane_sums(const S* x, index_t count, C* work) const noexcept {
        C* block = work;
        C* passes = block + L * g_.in_plane;
        transpose_into_lanes<L>(x, g_.in_plane, count, block);
        return sum_passes(static_cast<const C*>(block), passes, lanes_g_, 1,
                          ordered_ ? &pass_order_ : nullptr);
    }

    const S* x_;
    S* out_;
    index_t planes_;
    Geometry g_;
    Divisors divisors_;
    std::unique_ptr<index_t[]> packed_;  // g's tables with the lane axis
    Geometry lanes_g_;                   // ... as a geometry
    PassOrder pass_order_;               // the passes' order (exact_pass_order)
    bool ordered_ = false;               // pass_order_ applies (else outermost first, found per block)
    long long volume_ = 0;               // g's largest window volume
    bool lane_averages_ = false;         // float32 sums averaged in unstage_float_averages
    index_t per_worker_ = 0;             // scratch elements per worker
    std::unique_ptr<B[]> scratch_;
    // int8 / uint8 windows whose partial sums stay within int16 (window volume times the
    // inputs' largest magnitude at most 32767): lanes of int16, sixteen to a vector rather than
    // eight, which halves the passes' work (the sums are exact either way).
    bool short_sums_ = false;
    index_t short_per_worker_ = 0;
    std::unique_ptr<std::int16_t[]> short_scratch_;
    // AVX2, int16 sums over divisors below 2^24: one plane's divisors as float32 and their
    // inverses (the plan's Divisors::divisor32 and inverse32), and per worker the averages in
    // lanes (simd::short_lane_averages) before they go back plane by plane; else null.
    const float* lane_divisor32_ = nullptr;
    const float* lane_inverse32_ = nullptr;
    index_t quotients_per_worker_ = 0;
    std::unique_ptr<S[]> quotients_;
    std::unique_ptr<A[]> wide_;  // int32 / int64: the passes' buffers for blocks that overflow
    Divisors block_divisors_;      // for a whole block: repeated_'s, or one plane's
    RepeatedDivisors repeated_;    // one plane's divisors repeated, when planes have few outputs
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
