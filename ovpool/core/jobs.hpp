// The entry points: one pooling call as a set of independent work items.
//
// A job picks the strategy for its call once (which loops suit the window tables and the
// element type) and allocates scratch for `workers` workers; the caller owns the threads and
// runs   for item in [0, items()): run(item, worker)   with any scheduling, `worker` being the
// running thread's number in [0, workers). Items write disjoint outputs and each worker has
// its own scratch, so no two threads share a buffer. Results never depend on the scheduling.
//
// The job keeps pointers into `packed`, the divisors and the arrays: they must outlive it.
#ifndef OVPOOL_CORE_JOBS_HPP
#define OVPOOL_CORE_JOBS_HPP

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
#include "average.hpp"
#include "avg_blocks.hpp"
#include "avg_picks.hpp"
#include "avg_ranged.hpp"
#include "average_lanes.hpp"
#include "max.hpp"
#include "max_coded.hpp"
#include "max_adaptive.hpp"
#include "max_lanes.hpp"
#include "reduce.hpp"
#include "row_split.hpp"
#include "simd/rows_avx2.hpp"
#include "simd/widen.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

template <class S>
class AvgJob {
  public:
    typedef avg_accumulator_t<S> A;
    typedef typename narrow_avg_accumulator<S>::type N;

    // x: (planes, in_plane) and out: (planes, out_plane), C-contiguous; `plan`: the plan's
    // divisors, every table of Divisors but small_sums (out_plane each, from rules.hpp's
    // set_divisor). Throws std::bad_alloc.
    AvgJob(const S* x, S* out, index_t planes, const index_t* packed, const Divisors& plan,
           int workers)
        : x_(x), out_(out), planes_(planes), g_(make_geometry(packed)), items_(planes) {
        const std::int64_t* divisor = plan.count;
        const double* divisor_real = plan.real;
        divisors_.count = divisor;
        divisors_.real = divisor_real;
        divisors_.small_divisors = plan.small_divisors;
        // (float32 sums divide by float32 divisors)
        if (std::is_same<A, float>::value) divisors_.real32 = plan.real32;
        if (workers < 1) workers = 1;
        index_t parts = row_parts(g_, planes, workers);
        if (parts) {
            // Fewer planes than workers: each plane's output rows in parts (row_split.hpp),
            // each part a job of its own, unless a part would be a whole-plane window of its
            // own: reduce.hpp sums those in another order than the passes sum the plane, so
            // float averages would change bits with the thread count.
            split_.reset(new RowSplit(packed, g_, parts));
            for (index_t k = 0; k < parts && split_; ++k) {
                if (whole_plane(make_geometry(split_->part(k).packed.get()))) split_.reset();
            }
        }
        if (split_) {
            for (index_t plane = 0; plane < planes; ++plane) {
                for (index_t k = 0; k < parts; ++k) {
                    const RowPart& p = split_->part(k);
                    parts_.emplace_back(new AvgJob(
                        x + plane * g_.in_plane + p.in_shift, out + plane * g_.out_plane + p.out_shift,
                        1, p.packed.get(), divisors_from(plan, p.out_shift), 1));
                }
            }
            items_ = planes * parts;
            return;
        }
        if (whole_plane(g_)) {
            whole_.reset(new WholePlaneAvg<S>(x, out, planes, g_.in_plane, divisor, divisor_real,
                                              workers));
            items_ = whole_->items();
            return;
        }
        if (AvgPicks<S>::suits(g_, divisor)) {
            // Every window one input over a divisor of 1: a strided copy (avg_picks.hpp).
            mode_ = Mode::picks;
            picks_.reset(new AvgPicks<S>(x, out, planes, g_, workers));
            items_ = picks_->items();
            return;
        }
#if OVPOOL_CORE_HAVE_AVX2
        if (std::is_same<S, float>::value && g_.naxes == 2 && three_same(g_, 0) &&
            three_same(g_, 1)) {
            init_3x3_same(workers);
            return;
        }
#endif
        // int32 planes the blocks suit go there even when their windows are adaptive ones
        // (which the lanes take for other types): the blocks sum in int32 when the inputs'
        // range allows, the lanes in int64, half the lanes per vector (2x2621x50 k2 s1: 0.29
        // -> 0.13 ms on one thread; adaptive 8x17x28x25 -> 35x54: 0.26 -> 0.15 ms). int32 /
        // int64 rows of unit-step windows take neither: the passes sum them in place, in int32
        // when the inputs' range allows (ranged_rows_in_place; 2x2621x50 k2 s1: 2.04M ->
        // 1.23M instructions a call).
        const bool rows = ranged_average<S>::value && ranged_rows_in_place(g_);
        bool blocks = !rows && AvgBlocks<S>::suits(g_, planes);
        if (!rows && !(ranged_average<S>::value && blocks) && AvgLanes<S>::suits(g_, planes)) {
            mode_ = Mode::lanes;
            lanes_.reset(new AvgLanes<S>(x, out, planes, g_, divisors_, workers));
            items_ = lanes_->items();
            return;
        }
        if (blocks) {
            // Small planes of short rows (other than the adaptive ones the lanes take): blocks
            // of planes side by side (avg_blocks.hpp).
            mode_ = Mode::blocks;
            Divisors with_inverses = divisors_;
            with_inverses.divisor32 = plan.divisor32;
            with_inverses.inverse32 = plan.inverse32;
            blocks_.reset(new AvgBlocks<S>(x, out, planes, g_, with_inverses, workers));
            items_ = blocks_->items();
            return;
        }
        // Consecutive planes go through the passes together in blocks of about
        // rows_block_elements, so small planes do not pay a pass's set-up each.
        index_t largest = std::max(g_.in_plane, g_.scratch);
        // (At least four items per worker, so that threads share the work evenly.)
        block_ = std::min(planes, std::max<index_t>(1, rows_block_elements / largest));
        if (workers > 1) block_ = std::min(block_, std::max<index_t>(1, planes / (4 * workers)));
        if (g_.naxes == 1 && block_ >= 4 && block_ < planes) {
            // One-axis planes (rows) of four or more a block: whole groups of eight rows, which
            // the strided columns sum at once (simd/avg_columns_avx2.hpp; bfloat16 8x12x2665:
            // blocks of six rows filled six of eight lanes), as long as threads keep their
            // four items each.
            const index_t most = workers > 1 ? planes / (4 * workers) : planes;
            block_ = block_ >= 8 ? block_ - block_ % 8 : most >= 8 ? index_t{8} : block_;
        }
        items_ = (planes + block_ - 1) / block_;
        per_worker_ = (g_.naxes > 1 ? 2 : 1) * block_ * g_.scratch;
        // Exact sums either way: the narrow accumulator when the windows rule out overflow.
        if constexpr (!std::is_same<N, A>::value) {
            narrow_ = sums_fit<N>(g_, narrow_avg_accumulator<S>::largest);
        }
        short_ = narrow_ && short_passes_suit<S>(g_);
        if (short_) {
            short_scratch_ = allocate<std::int16_t>(workers * per_worker_);
        } else if (narrow_) {
            narrow_scratch_ = allocate<N>(workers * per_worker_);
        } else {
            scratch_ = allocate<A>(workers * per_worker_);
        }
        if constexpr (ranged_average<S>::value) ranged_.init(g_, workers * per_worker_);
        // (the order for the accumulator the passes sum in; found once, see exact_pass_order)
        ordered_ = narrow_ ? exact_pass_order<S, N>(g_, &pass_order_)
                           : exact_pass_order<S, A>(g_, &pass_order_);
        if (narrow_) {
            divisors_.small_sums =
                plan.small_divisors &&
                sums_within(window_volume(g_), narrow_avg_accumulator<S>::largest, small_sum_limit);
            // (float32 divisors for the eight-at-a-time division, see write_averages)
            if (divisors_.small_sums) divisors_.real32 = plan.real32;
#if OVPOOL_CORE_HAVE_AVX2
            if (short_ && divisors_.small_sums) {
                divisors_.divisor32 = plan.divisor32;
                divisors_.inverse32 = plan.inverse32;
            }
#endif
        }
        divided_ = g_.out_plane;
        if (block_ > 1 && g_.out_plane < few_outputs_per_plane) {
            divided_ = block_ * g_.out_plane;
            repeated_.repeat(divisors_, g_.out_plane, block_);
        }
    }

    index_t items() const { return items_; }

    void run(index_t item, int worker) const noexcept {
        if (split_) {
            const AvgJob& part = *parts_[static_cast<std::size_t>(item)];
            for (index_t i = 0; i < part.items(); ++i) part.run(i, 0);
            return;
        }
        if (whole_) {
            whole_->run(item, worker);
            return;
        }
        switch (mode_) {
            case Mode::planes: {
                index_t first = item * block_;
                index_t count = std::min(block_, planes_ - first);
                if constexpr (std::is_integral<S>::value && sizeof(S) == 1) {
                    if (short_) {
                        avg_planes(x_ + first * g_.in_plane, out_ + first * g_.out_plane,
                                   short_scratch_.get() + worker * per_worker_, g_, divisors_,
                                   count, divided_, ordered_ ? &pass_order_ : nullptr);
                        break;
                    }
                }
                if constexpr (!std::is_same<N, A>::value) {
                    if (narrow_) {
                        avg_planes(x_ + first * g_.in_plane, out_ + first * g_.out_plane,
                                   narrow_scratch_.get() + worker * per_worker_, g_, divisors_,
                                   count, divided_, ordered_ ? &pass_order_ : nullptr);
                        break;
                    }
                }
                if constexpr (ranged_average<S>::value) {
                    if (ranged_.pool(x_ + first * g_.in_plane, out_ + first * g_.out_plane,
                                     worker * per_worker_, g_, divisors_, count, divided_,
                                     ordered_ ? &pass_order_ : nullptr)) {
                        break;
                    }
                }
                avg_planes(x_ + first * g_.in_plane, out_ + first * g_.out_plane,
                           scratch_.get() + worker * per_worker_, g_, divisors_, count,
                           divided_, ordered_ ? &pass_order_ : nullptr);
                break;
            }
            case Mode::same3x3:
                run_3x3_same(item, worker);
                break;
            case Mode::lanes:
                lanes_->run(item, worker);
                break;
            case Mode::blocks:
                blocks_->run(item, worker);
                break;
            case Mode::picks:
                picks_->run(item, worker);
                break;
        }
    }

  private:
    enum class Mode { planes, same3x3, lanes, blocks, picks };

    // float32 planes with 3x3 windows, stride 1, one element of padding per side, through
    // simd::avg_3x3_same_plane: the divisors as float32 (exact: window sizes and +inf), each
    // row's padded with ones to a multiple of 8, and a row of zeros per worker.
    void init_3x3_same(int workers) {
        mode_ = Mode::same3x3;
        index_t rows = g_.length[0], cols = g_.length[1];
        table_stride_ = (cols + 7) / 8 * 8;
        table_ = allocate<float>(rows * table_stride_ + workers * cols);
        float* zeros = table_.get() + rows * table_stride_;
        std::memset(zeros, 0, static_cast<std::size_t>(workers * cols) * sizeof(float));
        for (index_t i = 0; i < rows; ++i) {
            for (index_t j = 0; j < table_stride_; ++j) {
                table_[i * table_stride_ + j] =
                    j < cols ? static_cast<float>(divisors_.real[i * cols + j]) : 1.0f;
            }
        }
    }

    void run_3x3_same(index_t item, int worker) const noexcept {
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (std::is_same<S, float>::value) {
            index_t rows = g_.length[0], cols = g_.length[1];
            simd::avg_3x3_same_plane(x_ + item * g_.in_plane, out_ + item * g_.out_plane, rows,
                                     cols, table_.get(), table_stride_,
                                     table_.get() + rows * table_stride_ + worker * cols);
        }
#else
        (void)item;
        (void)worker;
#endif
    }

    const S* x_;
    S* out_;
    index_t planes_;
    Geometry g_;
    Divisors divisors_;
    Mode mode_ = Mode::planes;
    index_t items_;
    index_t block_ = 1;       // planes per item
    index_t divided_ = 0;     // outputs that divisors_ covers (one plane's or a block's)
    index_t per_worker_ = 0;  // scratch elements per worker
    bool narrow_ = false;     // sums in N (narrow_scratch_), not A (scratch_)
    bool short_ = false;      // int8 / uint8: sums in int16 (short_scratch_; short_passes_suit)
    PassOrder pass_order_;        // the passes' order (exact_pass_order)
    bool ordered_ = false;        // pass_order_ applies (else outermost first, found per call)
    std::unique_ptr<A[]> scratch_;
    std::unique_ptr<N[]> narrow_scratch_;
    std::unique_ptr<std::int16_t[]> short_scratch_;
    RangedSums<S> ranged_;  // int32 / int64: narrower sums when the inputs allow
    RepeatedDivisors repeated_;     // a block's divisors, when repeated
    std::unique_ptr<float[]> table_;  // 3x3 mode: divisors by row, then zero rows
    std::unique_ptr<AvgLanes<S>> lanes_;  // lanes mode (average_lanes.hpp)
    std::unique_ptr<AvgBlocks<S>> blocks_;  // blocks mode (avg_blocks.hpp)
    std::unique_ptr<AvgPicks<S>> picks_;    // picks mode (avg_picks.hpp)
    index_t table_stride_ = 0;
    std::unique_ptr<WholePlaneAvg<S>> whole_;  // whole-plane windows (reduce.hpp)
    std::unique_ptr<RowSplit> split_;          // few planes: parts of planes (row_split.hpp),
    std::vector<std::unique_ptr<AvgJob>> parts_;  // a job per part of each plane
};

template <class S>
class MaxJob {
  public:
    typedef max_accumulator_t<S> A;
    typedef tap_code_t<A> U;

    // At most one of out_index64 / out_index32 is non-null (both null: values only). The index
    // of an output is (plane % plane_modulus) * in_plane + offset % offset_modulus, offset being
    // the chosen element's offset within its plane; empty windows get empty_value and offset 0.
    // mid_planes_in_lanes false keeps planes of more than tiny_small_plane elements out of
    // the lanes (tests reach the passes on small planes that way). Throws std::bad_alloc.
    MaxJob(const S* x, S* out, index_t planes, const index_t* packed, std::int64_t* out_index64,
           std::int32_t* out_index32, std::int64_t plane_modulus, std::int64_t offset_modulus,
           double empty_value, int workers, bool mid_planes_in_lanes = true)
        : x_(x), out_(out), planes_(planes), g_(make_geometry(packed)),
          empty_value_(static_cast<A>(empty_value)), items_(planes) {
        spec_.out64 = out_index64;
        spec_.out32 = out_index32;
        spec_.plane_modulus = plane_modulus;
        spec_.offset_modulus = offset_modulus;
        if (workers < 1) workers = 1;
        with_index_ = out_index64 != nullptr || out_index32 != nullptr;
        if (index_t parts = row_parts(g_, planes, workers)) {
            // Fewer planes than workers: as in AvgJob, a job per part of each plane, whose
            // indices are offsets in the part's slab (moved to the plane's by run).
            split_.reset(new RowSplit(packed, g_, parts));
            for (index_t plane = 0; plane < planes; ++plane) {
                for (index_t k = 0; k < parts; ++k) {
                    const RowPart& p = split_->part(k);
                    index_t at = plane * g_.out_plane + p.out_shift;
                    parts_.emplace_back(new MaxJob(
                        x + plane * g_.in_plane + p.in_shift, out + at, 1, p.packed.get(),
                        out_index64 != nullptr ? out_index64 + at : nullptr,
                        out_index32 != nullptr ? out_index32 + at : nullptr, 1,
                        std::numeric_limits<std::int64_t>::max(), empty_value, 1,
                        mid_planes_in_lanes));
                }
            }
            items_ = planes * parts;
            return;
        }
        if (whole_plane(g_)) {
            whole_.reset(new WholePlaneMax<S>(x, out, planes, g_.in_plane, spec_, workers));
            items_ = whole_->items();
            return;
        }
        if (tiny_planes_suit<S, A>(g_, mid_planes_in_lanes)) {
            // Tiny planes: side by side through one tap table (max_lanes.hpp).
            tiny_ = true;
            taps_ = make_tap_table(g_);
            constexpr index_t lanes = plane_lanes<A>;
            auto whole_groups = [](index_t n) { return (n + lanes - 1) / lanes * lanes; };
            tiny_block_ = std::min(tiny_block_planes,
                                   whole_groups(tiny_block_elements / g_.in_plane));
            // (Several items per worker, so that the last ones even out the threads: 292
            // planes of 888 elements on 2 threads took 0.080 ms in 7 items, 0.070 in 10.)
            if (workers > 1) {
                tiny_block_ = std::min(tiny_block_,
                                       std::max(lanes, planes / (4 * workers) / lanes * lanes));
            }
            items_ = (planes + tiny_block_ - 1) / tiny_block_;
            if constexpr (is_half_float<S>) {
                // 16-bit floats: on their int16 keys (max_half_planes_lanes), when the empty
                // windows' key is the empty value's.
                empty_key_ = half_key<S>(store<S>(empty_value_).bits);
                if (empty_key_ != 0 && empty_key_ != half_nan_key) {
                    keyed_ = true;
                    per_worker_ = half_lanes_scratch(g_);
                    keys_ = allocate<std::int16_t>(workers * per_worker_ +
                                                   cache_line_slack<std::int16_t>);
                    key_lanes_ = cache_line_aligned(keys_.get());
                    return;
                }
            }
            per_worker_ = max_lanes_scratch<S, A>(g_);
            scratch_ = allocate<A>(workers * per_worker_ + cache_line_slack<A>);
            lanes_ = cache_line_aligned(scratch_.get());
            return;
        }
        if (AdaptiveMaxLanes<S>::suits(g_, planes, with_index_, empty_value_)) {
            // Irregular (adaptive) windows: groups of planes side by side (max_adaptive.hpp).
            adaptive_.reset(new AdaptiveMaxLanes<S>(x, out, planes, g_, spec_, empty_value_,
                                                    workers));
            items_ = adaptive_->items();
            return;
        }
        // Small 2-D planes with indices, when the windows along the last axis are irregular
        // (adaptive, none in the run the passes vectorise): each window on its own.
        AxisTable last = axis_table(g_, g_.naxes - 1);
        direct_ = with_index_ && g_.naxes == 2 && g_.in_plane <= direct_max_plane &&
                  last.hi <= last.lo;
        if (with_index_ && !direct_) {
            if constexpr (is_half_float<S>) {
                // 16-bit floats: the passes on their int16 keys (half_key in max_coded.hpp),
                // when the codes fit in 16 bits and the empty windows' key is the empty value's.
                empty_key_ = half_key<S>(store<S>(empty_value_).bits);
                coded_ = make_coded_plan(g_, std::numeric_limits<std::uint16_t>::max(), 1,
                                         sizeof(std::int16_t));
                if (coded_.usable && empty_key_ != 0 && empty_key_ != half_nan_key) {
                    keyed_ = true;
                    coded_output_tables(coded_, g_, planes);
                    block_ = coded_block(workers);
                    per_worker_ = coded_.scratch() + block_ * g_.in_plane;
                    keys_ = allocate<std::int16_t>(workers * per_worker_);
                    key_codes_ = allocate<std::uint16_t>(workers * coded_.scratch());
                    return;
                }
            }
            // Passes carrying tap codes (max_coded.hpp), when the windows' codes fit; blocks
            // of planes as in AvgJob.
            coded_ = make_coded_plan(g_, std::numeric_limits<U>::max(), 1, sizeof(A));
            if (coded_.usable) {
                coded_output_tables(coded_, g_, planes);
                block_ = coded_block(workers);
                per_worker_ = coded_.scratch();
                if constexpr (is_half_float<S>) per_worker_ += block_ * g_.in_plane;
                scratch_ = allocate<A>(workers * per_worker_);
                codes_ = allocate<U>(workers * coded_.scratch());
                return;
            }
        }
        if constexpr (is_half_float<S>) {
            // 16-bit floats, values alone: the passes on their int16 keys (max_plane_keys in
            // max_coded.hpp), when the empty windows' key is the empty value's and the plane
            // is not one for the float32 3-wide stride-2 row kernel.
            empty_key_ = half_key<S>(store<S>(empty_value_).bits);
            if (!with_index_ && empty_key_ != 0 && empty_key_ != half_nan_key &&
                !(g_.naxes > 1 && three_wide_stride2_rows(last))) {
                keyed_ = true;
                per_worker_ = g_.in_plane + g_.out_plane + 2 * g_.scratch + max_row_buffers(g_);
                keys_ = allocate<std::int16_t>(workers * per_worker_);
                return;
            }
        }
        // Small 2-D planes with indices: each window on its own (see max_plane_direct).
        direct_ = with_index_ && g_.naxes == 2 && g_.in_plane <= direct_max_plane;
        // Two plane-sized buffers, then the row buffers of max_plane_values, then (16-bit
        // floats) the plane widened to float32.
        per_worker_ = 2 * g_.scratch + max_row_buffers(g_);
        if constexpr (is_half_float<S>) per_worker_ += g_.in_plane;
        scratch_ = allocate<A>(workers * per_worker_);
        if (direct_) {
            direct_offsets_ = allocate<std::int32_t>(workers * direct_buffer(g_));
        } else if (with_index_) {
            index_scratch_ = allocate<std::int64_t>(workers * per_worker_);
        }
    }

    index_t items() const { return items_; }

    void run(index_t item, int worker) const noexcept {
        if (split_) {
            run_part(item);
            return;
        }
        if (whole_) {
            whole_->run(item, worker);
            return;
        }
        if (tiny_) {
            run_tiny(item, worker);
            return;
        }
        if (adaptive_) {
            adaptive_->run(item, worker);
            return;
        }
        if (coded_.usable) {
            run_coded(item, worker);
            return;
        }
        if constexpr (is_half_float<S>) {
            if (keyed_) {
                // Values alone on int16 keys (max_plane_keys), made once per plane.
                std::int16_t* keys = keys_.get() + worker * per_worker_;
                const S* x = x_ + item * g_.in_plane;
                half_keys(x, keys, g_.in_plane);
                max_plane_keys(x, out_ + item * g_.out_plane,
                               static_cast<const std::int16_t*>(keys), keys + g_.in_plane, g_,
                               empty_key_);
                return;
            }
        }
        index_t plane = item;
        A* scratch = scratch_.get() + worker * per_worker_;
        const S* x = x_ + plane * g_.in_plane;
        if constexpr (is_half_float<S>) {
            // 16-bit floats: the kernels read the plane widened to float32 once, eight
            // elements per instruction, instead of converting every tap on its own.
            float* wide = scratch + per_worker_ - g_.in_plane;
            widen_row(x, wide, g_.in_plane);
            run_plane(static_cast<const float*>(wide), plane, worker);
        } else {
            run_plane(x, plane, worker);
        }
    }

  private:
    void run_part(index_t item) const noexcept {
        const MaxJob& part = *parts_[static_cast<std::size_t>(item)];
        for (index_t i = 0; i < part.items(); ++i) part.run(i, 0);
        index_t parts = split_->parts(), plane = item / parts;
        if (spec_.out64 != nullptr) {
            split_->fix_indices(spec_.out64 + plane * g_.out_plane, plane, item % parts,
                                spec_.plane_modulus, spec_.offset_modulus);
        } else if (spec_.out32 != nullptr) {
            split_->fix_indices(spec_.out32 + plane * g_.out_plane, plane, item % parts,
                                spec_.plane_modulus, spec_.offset_modulus);
        }
    }

    // Planes per item of the coded passes (for coded_ made for blocks of one plane, which it
    // is then sized for), and items_ from it.
    index_t coded_block(int workers) {
        index_t largest = std::max(g_.in_plane, coded_.buffer);
        index_t block = std::min(planes_, std::max<index_t>(1, rows_block_elements / largest));
        if (workers > 1) block = std::min(block, std::max<index_t>(1, planes_ / (4 * workers)));
        items_ = (planes_ + block - 1) / block;
        size_coded_plan(coded_, g_, block);
        return block;
    }

    void run_coded(index_t item, int worker) const noexcept {
        index_t first = item * block_;
        index_t count = std::min(block_, planes_ - first);
        if constexpr (is_half_float<S>) {
            if (keyed_) {
                std::int16_t* keys = keys_.get() + worker * per_worker_;
                std::uint16_t* codes = key_codes_.get() + worker * coded_.scratch();
                const S* x = x_ + first * g_.in_plane;
                // (Keyed by the passes as far as they read them.)
                std::int16_t* wide = keys + per_worker_ - count * g_.in_plane;
                max_planes_coded(static_cast<const std::int16_t*>(wide),
                                 out_ + first * g_.out_plane, first, count, spec_, keys, codes,
                                 coded_, g_, empty_key_, x);
                return;
            }
        }
        A* scratch = scratch_.get() + worker * per_worker_;
        U* codes = codes_.get() + worker * coded_.scratch();
        const S* x = x_ + first * g_.in_plane;
        S* out = out_ + first * g_.out_plane;
        if constexpr (is_half_float<S>) {
            // Widened once to float32, as in run().
            float* wide = scratch + per_worker_ - count * g_.in_plane;
            widen_row(x, wide, count * g_.in_plane);
            max_planes_coded(static_cast<const float*>(wide), out, first, count, spec_, scratch,
                             codes, coded_, g_, empty_value_);
        } else {
            max_planes_coded(x, out, first, count, spec_, scratch, codes, coded_, g_,
                             empty_value_);
        }
    }

    void run_tiny(index_t item, int worker) const noexcept {
        constexpr index_t lanes = plane_lanes<A>;
        index_t end = std::min(planes_, (item + 1) * tiny_block_);
        for (index_t p = item * tiny_block_; p < end; p += lanes) {
            index_t count = std::min(lanes, end - p);
            const S* x = x_ + p * g_.in_plane;
            S* out = out_ + p * g_.out_plane;
            auto group = [&](auto* index) {
                if constexpr (is_half_float<S>) {
                    if (keyed_) {
                        max_half_planes_lanes(x, out, index, p, count, spec_, taps_, g_,
                                              empty_key_, key_lanes_ + worker * per_worker_);
                        return;
                    }
                }
                max_planes_lanes(x, out, index, p, count, spec_, taps_, g_, empty_value_,
                                 lanes_ + worker * per_worker_);
            };
            if (spec_.out64 != nullptr) {
                group(spec_.out64 + p * g_.out_plane);
            } else if (spec_.out32 != nullptr) {
                group(spec_.out32 + p * g_.out_plane);
            } else {
                group(static_cast<std::int32_t*>(nullptr));
            }
        }
    }

    template <class Src>
    void run_plane(const Src* x, index_t plane, int worker) const noexcept {
        A* scratch = scratch_.get() + worker * per_worker_;
        S* out = out_ + plane * g_.out_plane;
        if (direct_) {
            max_plane_direct(x, out, plane, spec_, scratch,
                             direct_offsets_.get() + worker * direct_buffer(g_), g_,
                             empty_value_);
        } else if (with_index_) {
            max_plane(x, out, plane, spec_, scratch, index_scratch_.get() + worker * per_worker_,
                      g_, empty_value_);
        } else {
            max_plane_values(x, out, scratch, scratch + 2 * g_.scratch, g_, empty_value_);
        }
    }

    const S* x_;
    S* out_;
    index_t planes_;
    Geometry g_;
    IndexSpec spec_;
    A empty_value_;
    bool with_index_ = false;
    bool direct_ = false;
    bool tiny_ = false;
    index_t tiny_block_ = 0;  // tiny planes: planes per item
    A* lanes_ = nullptr;      // ... and their lanes, in scratch_
    std::int16_t* key_lanes_ = nullptr;  // ... or, keyed_ (16-bit floats), in keys_
    index_t items_ = 0;
    TapTable taps_;  // tiny planes: every window's taps
    index_t per_worker_ = 0;
    std::unique_ptr<A[]> scratch_;
    std::unique_ptr<std::int64_t[]> index_scratch_;
    std::unique_ptr<std::int32_t[]> direct_offsets_;  // max_plane_direct's offsets
    CodedPlan coded_;                // max_planes_coded's plan, when usable
    index_t block_ = 1;              // its planes per item
    std::unique_ptr<U[]> codes_;     // its tap codes
    bool keyed_ = false;             // 16-bit floats: the passes on int16 keys
    std::int16_t empty_key_ = 0;     // their empty windows' key
    std::unique_ptr<std::int16_t[]> keys_;        // their keys and pass buffers
    std::unique_ptr<std::uint16_t[]> key_codes_;  // their tap codes
    std::unique_ptr<WholePlaneMax<S>> whole_;  // whole-plane windows (reduce.hpp)
    std::unique_ptr<AdaptiveMaxLanes<S>> adaptive_;  // irregular windows (max_adaptive.hpp)
    std::unique_ptr<RowSplit> split_;                // few planes, as in AvgJob
    std::vector<std::unique_ptr<MaxJob>> parts_;
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
