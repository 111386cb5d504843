// int32 / int64 averages summed in a narrower exact accumulator when the inputs allow it.
//
// The accumulator of an int32 average is int64, that of an int64 average 128 bits: wide
// enough for any input, but four (int64) or no (128-bit) lanes per AVX2 register. Most inputs
// are far from the extremes, and an integer sum is exact in any accumulator it fits: so each
// work item first bounds the magnitude of its inputs (one vectorised pass over data it is
// about to read anyway) and sums in int32 when every partial sum fits there, else in int64
// when they fit there, else in the full accumulator. The sums, and so the averages, are the
// same in every case (the division rule is exact for every accumulator), so the choice
// changes no result and may differ between builds and blocks.
#ifndef OVPOOL_CORE_AVG_RANGED_HPP
#define OVPOOL_CORE_AVG_RANGED_HPP

#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "average.hpp"
#include "simd/reduce_avx2.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// The input types whose averages check their inputs' range.
template <class S> struct ranged_average : std::false_type {};
template <> struct ranged_average<std::int32_t> : std::true_type {};
template <> struct ranged_average<std::int64_t> : std::true_type {};

// A bound on |x[i]| for i < n: one more than the OR of x ^ sign(x) (which is |x| for x >= 0
// and |x| - 1 below), so at most twice the largest magnitude. A branch-free OR reduction,
// which vectorises; with AVX2 from eight elements on, simd::magnitude_bound's (a tighter bound
// for int32: a bound only picks the accumulator, and every accumulator gives the same sums).
template <class S>
inline std::uint64_t magnitude_bound(const S* x, index_t n) {
#if OVPOOL_CORE_HAVE_AVX2
    if (n >= 8) return simd::magnitude_bound(x, n);
#endif
    typedef typename std::make_unsigned<S>::type U;
    U bits = 0;
    for (index_t i = 0; i < n; ++i) {
        S v = x[i];
        bits |= static_cast<U>(v < 0 ? ~v : v);
    }
    return static_cast<std::uint64_t>(bits) + 1;
}

// Whether int32 / int64 planes of g are rows (one axis) whose windows step one apart over a
// run of eight or more full windows: the passes sum such rows where they lie, a few vector
// additions per eight windows (AvgJob's planes), where the plane blocks and the lanes transpose
// every plane into lanes and the sums back out, several times the work (int32 2x2621x50 k2 s1,
// which adaptive 50 -> 49 windows are too: 2.04M instructions a call in the blocks).
inline bool ranged_rows_in_place(const Geometry& g) {
    if (g.naxes != 1) return false;
    AxisTable w = axis_table(g, 0);
    return w.step == 1 && w.hi - w.lo >= 8;
}

// The narrower sums of one AvgJob (S = int32 or int64): scratch for each narrower
// accumulator, and the windows' largest volume.
template <class S>
class RangedSums {
  public:
    typedef avg_accumulator_t<S> A;

    // `elements`: scratch elements of all workers.
    void init(const Geometry& g, index_t elements) {
        volume_ = window_volume(g);
        narrow32_ = allocate<std::int32_t>(elements);
        if constexpr (!std::is_same<A, long long>::value) {
            narrow64_ = allocate<long long>(elements);
        }
    }

    // Average-pools `planes` planes as avg_planes does (the passes in `order`, if not null),
    // with `offset` the worker's scratch offset, when their inputs allow narrower sums; false
    // (nothing written) otherwise.
    bool pool(const S* x, S* out, index_t offset, const Geometry& g, const Divisors& divisors,
              index_t planes, index_t divided, const PassOrder* order) const noexcept {
        std::uint64_t bound = magnitude_bound(x, planes * g.in_plane);
        if (sums_within(volume_, bound, std::numeric_limits<std::int32_t>::max())) {
            Divisors these = divisors;
            these.small_sums = divisors.small_divisors && sums_within(volume_, bound, small_sum_limit);
            avg_planes(x, out, narrow32_.get() + offset, g, these, planes, divided, order);
            return true;
        }
        if constexpr (!std::is_same<A, long long>::value) {
            if (sums_within(volume_, bound, std::numeric_limits<long long>::max())) {
                avg_planes(x, out, narrow64_.get() + offset, g, divisors, planes, divided, order);
                return true;
            }
        }
        return false;
    }

  private:
    long long volume_ = 0;
    std::unique_ptr<std::int32_t[]> narrow32_;
    std::unique_ptr<long long[]> narrow64_;
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
