// Whole-plane pooling: every plane's one output reads the whole plane (a window as large as
// the plane without padding, adaptive pooling to one element per plane). Each plane is then a
// reduction of one contiguous run of elements, done here without window tables, separable
// passes or per-plane set-up beyond a loop; a work item takes many planes.
//
// Max: the largest number of the plane (NaN ignored), then, when the bits or the index are not
// settled by that value alone, the first element equal to it, which is the element the max
// rule picks: a larger value wins, NaN loses to any number (an all-NaN plane keeps its first
// element), ties and -0 / +0 go to the smaller offset. Neither step depends on an order, so the
// vector kernels (simd/reduce_avx2.hpp) give the portable loops' bits. float16 / bfloat16
// planes are reduced as their int16 keys (max_coded.hpp's half_key, whose order is the rule's:
// -0 and +0 share key 0, every NaN the lowest key), sixteen to a vector.
//
// Averages: floating-point sums in the order sum_windows gives a 1-D window of the plane's
// length (eight partial sums over a run of 16 or more elements, then the rest in order; 16-bit
// floats widened to float32 first), the same code in every build; integer sums are exact, so
// any order serves (int64 in two 64-bit halves' sums, see sum_int64).
#ifndef OVPOOL_CORE_REDUCE_HPP
#define OVPOOL_CORE_REDUCE_HPP

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "average.hpp"
#include "average_lanes.hpp"
#include "max_coded.hpp"
#include "simd/reduce_avx2.hpp"
#include "simd/widen.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// True when every plane has one output, whose window is the whole (non-empty) plane.
inline bool whole_plane(const Geometry& g) {
    if (g.out_plane != 1 || g.in_plane < 1) return false;
    for (index_t a = 0; a < g.naxes; ++a) {
        if (g.begin[g.offset[a]] != 0 || g.count[g.offset[a]] != g.length[a]) return false;
    }
    return true;
}

// Planes per work item: about rows_block_elements elements, and at least four items per
// worker so that threads share the work evenly.
inline index_t whole_plane_block(index_t planes, index_t in_plane, int workers) {
    index_t block = std::min(planes, std::max<index_t>(1, rows_block_elements / in_plane));
    if (workers > 1) block = std::min(block, std::max<index_t>(1, planes / (4 * workers)));
    return std::max<index_t>(block, 1);
}

template <class A>
inline A lowest_number() {
    return std::is_floating_point<A>::value ? -std::numeric_limits<A>::infinity()
                                            : std::numeric_limits<A>::lowest();
}

// The largest number of x[0 .. n), NaN ignored (-inf when every element is NaN).
template <class A>
inline A run_max(const A* x, index_t n) {
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (simd::has_lanes<A>::value) {
        if (n >= simd::Lanes<A>::width) return simd::max_run(x, n);
    }
#endif
    A best = lowest_number<A>();
    for (index_t i = 0; i < n; ++i) best = x[i] > best ? x[i] : best;  // NaN: false, ignored
    return best;
}

// The first i with x[i] == value, or -1.
template <class A>
inline index_t run_find(const A* x, index_t n, A value) {
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (simd::has_lanes<A>::value) {
        if (n >= simd::Lanes<A>::width) return simd::find_run(x, n, value);
    }
#endif
    for (index_t i = 0; i < n; ++i) {
        if (x[i] == value) return i;
    }
    return -1;
}

// The max rule's winner of x[0 .. n), n >= 1: its value, and its offset when `offset` is not
// null. A value that is not a zero (-0 == +0) or -inf (also what an all-NaN run gives) has one
// bit pattern, so without an offset it is the answer; otherwise the first element equal to it
// is the winner, or the first element when none is (every element NaN).
template <class A>
inline A run_winner(const A* x, index_t n, index_t* offset) {
    A best = run_max(x, n);
    if constexpr (std::is_floating_point<A>::value) {
        if (offset == nullptr && best != 0 && best != lowest_number<A>()) return best;
        index_t at = std::max<index_t>(run_find(x, n, best), 0);
        if (offset != nullptr) *offset = at;
        return x[at];
    } else {
        if (offset != nullptr) *offset = run_find(x, n, best);
        return best;
    }
}

// Exact sum of int64 x[0 .. n), n < 2^31: each element biased by 2^63 (its sign bit flipped)
// is an unsigned hi * 2^32 + lo; the sums of the highs and of the lows cannot overflow 64 bits.
// (Only with a 128-bit wide_t.)
inline wide_t sum_int64(const std::int64_t* x, index_t n) {
    std::uint64_t high = 0, low = 0;
    for (index_t i = 0; i < n; ++i) {
        std::uint64_t biased = static_cast<std::uint64_t>(x[i]) ^ (std::uint64_t{1} << 63);
        high += biased >> 32;
        low += biased & 0xffffffffu;
    }
    // Each element added 2^63 to the total: n * 2^63 = (n / 2) * 2^64 + (n % 2) * 2^63.
    wide_t total = static_cast<wide_t>(high) * (wide_t{1} << 32) + static_cast<wide_t>(low);
    return total - static_cast<wide_t>(n) * (wide_t{1} << 62) * 2;
}

// Exact sum of a run of integers in A.
template <class S, class A>
inline A sum_integers(const S* x, index_t n) {
    if constexpr (std::is_same<S, std::int64_t>::value && sizeof(wide_t) > 8) {
        if (n < (index_t{1} << 31)) return static_cast<A>(sum_int64(x, n));
        A total = 0;
        for (index_t i = 0; i < n; ++i) total = total + x[i];
        return total;
    } else if constexpr (sizeof(S) == 1) {
#if OVPOOL_CORE_HAVE_AVX2
        if (n >= 32) return static_cast<A>(simd::sum_bytes(x, n));
#endif
        // int32 partial sums over chunks of 2^23 bytes (at most 255 * 2^23 < 2^31 each): eight
        // lanes per AVX2 register rather than four.
        A total = 0;
        for (index_t at = 0; at < n; at += index_t{1} << 23) {
            index_t end = std::min(n, at + (index_t{1} << 23));
            std::int32_t part = 0;
            for (index_t i = at; i < end; ++i) part += x[i];
            total = total + part;
        }
        return total;
    } else {
        A total = 0;
        for (index_t i = 0; i < n; ++i) total += x[i];
        return total;
    }
}

template <class S>
class WholePlaneMax {
  public:
    typedef max_accumulator_t<S> A;

    WholePlaneMax(const S* x, S* out, index_t planes, index_t in_plane, const IndexSpec& spec,
                  int workers)
        : x_(x), out_(out), planes_(planes), n_(in_plane), spec_(spec),
          block_(whole_plane_block(planes, in_plane, workers)) {
        if constexpr (is_half_float<S>) {
            keys_.reset(new std::int16_t[static_cast<std::size_t>(std::max(workers, 1) * n_)]);
        }
    }

    index_t items() const { return (planes_ + block_ - 1) / block_; }

    void run(index_t item, int worker) const noexcept {
        index_t first = item * block_, end = std::min(planes_, first + block_);
        bool with_index = spec_.out64 != nullptr || spec_.out32 != nullptr;
        index_t batched = first;  // planes up to this one: values in out_ already
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (std::is_integral<S>::value && sizeof(S) == 1) {
            // (1-byte planes, sixteen at a time: see simd::max_byte_planes; without indices,
            // nothing is left to do for those.)
            batched += simd::max_byte_planes(x_ + first * n_, n_, end - first, out_ + first);
            if (!with_index) first = batched;
        }
#endif
        // The plane's index within plane_modulus, kept without a division per plane.
        std::int64_t plane_at = first % spec_.plane_modulus;
        for (index_t p = first; p < end; ++p) {
            index_t offset = 0;
            if (p < batched) {
                if constexpr (std::is_integral<S>::value && sizeof(S) == 1) {
                    if (with_index) {
                        offset = run_find(reinterpret_cast<const A*>(x_ + p * n_), n_,
                                          static_cast<A>(out_[p]));
                    }
                }
            } else if constexpr (is_half_float<S>) {
                // The largest key, then (for the index, or for keys 0 and NaN, which values
                // of different bits share) the first element of that key: the winner.
                std::int16_t best;
                bool shared;
#if OVPOOL_CORE_HAVE_AVX2
                if (n_ >= 16 && n_ <= simd::half_winner_longest) {
                    // (One sweep over the bits, the keys and offsets in registers, rather
                    // than keys stored, then the largest, then a search for it.)
                    offset = simd::half_winner16(reinterpret_cast<const std::uint16_t*>(x_ + p * n_),
                                                 n_, half_infinity_bits<S>, &best);
                    shared = best == 0 || best == half_nan_key;
                } else
#endif
                {
                    std::int16_t* keys = keys_.get() + worker * n_;
                    half_keys(x_ + p * n_, keys, n_);
                    best = run_max(static_cast<const std::int16_t*>(keys), n_);
                    shared = best == 0 || best == half_nan_key;
                    if (with_index || shared) {
                        offset = std::max<index_t>(
                            run_find(static_cast<const std::int16_t*>(keys), n_, best), 0);
                    }
                }
                if (shared) {
                    out_[p] = x_[p * n_ + offset];
                } else {
                    out_[p].bits = half_of_key(best);
                }
            } else {
                (void)worker;
                const A* row = reinterpret_cast<const A*>(x_ + p * n_);
                out_[p] = store<S>(run_winner(row, n_, with_index ? &offset : nullptr));
            }
            if (with_index) {
                if (offset >= spec_.offset_modulus) offset %= spec_.offset_modulus;
                std::int64_t index = plane_at * n_ + offset;
                if (spec_.out64 != nullptr) {
                    spec_.out64[p] = index;
                } else {
                    spec_.out32[p] = static_cast<std::int32_t>(index);
                }
            }
            plane_at = plane_at + 1 == spec_.plane_modulus ? 0 : plane_at + 1;
        }
    }

  private:
    const S* x_;
    S* out_;
    index_t planes_, n_;
    IndexSpec spec_;
    index_t block_;
    std::unique_ptr<std::int16_t[]> keys_;  // 16-bit floats: one plane's keys per worker
};

// Planes of at most this many elements are averaged `lanes` planes at a time, transposed
// (average_lanes.hpp): a vector addition per element across the planes instead of a loop
// per plane, whose set-up costs more than its few additions.
constexpr index_t whole_lanes_max_plane = 64;

// The accumulator of whole-plane averages in lanes, or void where they stay plane by plane:
// float32 for float32 / float16 / bfloat16, int32 for int8 / uint8 (when the sums fit, see
// WholePlaneAvg).
template <class S> struct whole_lanes_accumulator { typedef void type; };
template <> struct whole_lanes_accumulator<float> { typedef float type; };
template <> struct whole_lanes_accumulator<f16> { typedef float type; };
template <> struct whole_lanes_accumulator<bf16> { typedef float type; };
template <> struct whole_lanes_accumulator<std::int8_t> { typedef std::int32_t type; };
template <> struct whole_lanes_accumulator<std::uint8_t> { typedef std::int32_t type; };

// The sums of L transposed planes of n elements (lanes[i * L + p]), in the order sum_windows
// sums one window of n taps (see the top of this file): eight partial sums over 16 or more,
// then the rest one by one from the combined total (from +0 for fewer than 16).
template <class B, index_t L>
inline void whole_lane_sums(const B* lanes, index_t n, B* sums) {
    Lanes<B, L> total = Lanes<B, L>::zero();
    index_t t = 0;
    if (n >= 16) {
        Lanes<B, L> s[8];
        for (int k = 0; k < 8; ++k) s[k] = Lanes<B, L>::zero();
        for (; t + 8 <= n; t += 8) {
            for (int k = 0; k < 8; ++k) s[k].add(lanes + (t + k) * L);
        }
        s[0].add(s[1]);
        s[2].add(s[3]);
        s[4].add(s[5]);
        s[6].add(s[7]);
        s[0].add(s[2]);
        s[4].add(s[6]);
        s[0].add(s[4]);
        total = s[0];
    }
    for (; t < n; ++t) total.add(lanes + t * L);
    total.get(sums);
}

template <class S>
class WholePlaneAvg {
  public:
    typedef avg_accumulator_t<S> A;
    typedef typename whole_lanes_accumulator<S>::type B;
    typedef typename std::conditional<std::is_void<B>::value, A, B>::type LaneSum;
    static constexpr index_t L = average_lanes<LaneSum>;

    // divisor / divisor_real: the one output's divisor (see Divisors).
    WholePlaneAvg(const S* x, S* out, index_t planes, index_t in_plane,
                  const std::int64_t* divisor, const double* divisor_real, int workers)
        : x_(x), out_(out), planes_(planes), n_(in_plane),
          block_(whole_plane_block(planes, in_plane, workers)) {
        if (workers < 1) workers = 1;
        if constexpr (!std::is_void<B>::value) {
            // Lanes for small planes, when there are whole blocks of them, and (integers)
            // when the sums fit in int32.
            lanes_ = n_ <= whole_lanes_max_plane && planes_ >= L;
            if constexpr (std::is_integral<B>::value) {
                lanes_ = lanes_ && sums_within(n_, narrow_avg_accumulator<S>::largest,
                                               std::numeric_limits<B>::max());
            }
        }
        if (lanes_) {
            block_ = std::max(L, block_ / L * L);
            lane_buffer_ = L * (n_ + lanes_spill_rows) + block_;
        }
        // The divisor repeated for a block, so that a block's averages are divided in one run.
        count_.reset(new std::int64_t[static_cast<std::size_t>(block_)]);
        real_.reset(new double[static_cast<std::size_t>(block_)]);
        std::fill(count_.get(), count_.get() + block_, divisor[0]);
        std::fill(real_.get(), real_.get() + block_, divisor_real[0]);
        sums_.reset(new A[static_cast<std::size_t>(workers * block_)]);
        if (lanes_) {
            lane_scratch_.reset(new LaneSum[static_cast<std::size_t>(workers * lane_buffer_)]);
            if constexpr (std::is_integral<LaneSum>::value) {
                small_sums_ = divisor[0] < small_divisor_limit &&
                              sums_within(n_, narrow_avg_accumulator<S>::largest, small_sum_limit);
            }
        }
        if constexpr (is_half_float<S>) {
            wide_.reset(new float[static_cast<std::size_t>(workers * n_)]);
        }
    }

    index_t items() const { return (planes_ + block_ - 1) / block_; }

    void run(index_t item, int worker) const noexcept {
        index_t first = item * block_, count = std::min(planes_, first + block_) - first;
        Divisors divisors;
        divisors.count = count_.get();
        divisors.real = real_.get();
        index_t k = 0;
        if constexpr (!std::is_void<B>::value) {
            if (lanes_) {
                // Whole blocks of L planes in lanes (the same sums, see whole_lane_sums).
                LaneSum* lanes = lane_scratch_.get() + worker * lane_buffer_;
                LaneSum* sums = lanes + L * (n_ + lanes_spill_rows);
                divisors.small_sums = small_sums_;
#if OVPOOL_CORE_HAVE_AVX2
                if constexpr (sizeof(S) == 1) {
                    // Planes of up to eight bytes: four at a time, untransposed.
                    if (n_ <= 8) {
                        k = simd::sum_byte_planes(x_ + first * n_, n_, count,
                                                  (planes_ - first) * n_, sums);
                    }
                }
#endif
                for (; k + L <= count; k += L) {
                    index_t p = first + k;
                    transpose_planes<S, LaneSum, L>(x_ + p * n_, n_, L, 0, n_,
                                                    (planes_ - p) * n_, lanes);
                    whole_lane_sums<LaneSum, L>(lanes, n_, sums + k);
                }
                write_averages(out_ + first, static_cast<const LaneSum*>(sums), k, divisors);
                divisors.small_sums = false;
                if (k == count) return;
            }
        }
        A* sums = sums_.get() + worker * block_;
        index_t j = k;
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (std::is_same<A, float>::value) {
            // Four planes at a time in sum_windows' order (simd::run_sums4); a NaN total again
            // by sum_plane, whose NaN sums keep one order.
            for (; n_ >= 16 && j + 4 <= count; j += 4) {
                simd::run_sums4(x_ + (first + j) * n_, n_, n_, sums + j);
                for (index_t q = j; q < j + 4; ++q) {
                    if (sums[q] != sums[q]) sum_plane(x_ + (first + q) * n_, sums + q, worker);
                }
            }
        }
#endif
        for (; j < count; ++j) sum_plane(x_ + (first + j) * n_, sums + j, worker);
        write_averages(out_ + first + k, static_cast<const A*>(sums + k), count - k, divisors);
    }

  private:
    // *sum = the sum of one plane: floats through sum_windows as one window of n_ taps (see
    // the top of this file), 16-bit floats widened first.
    void sum_plane(const S* plane, A* sum, int worker) const noexcept {
        const index_t begin = 0, taps = n_;
        if constexpr (is_half_float<S>) {
            float* wide = wide_.get() + worker * n_;
            widen_row(plane, wide, n_);
            sum_windows(static_cast<const float*>(wide), sum, &begin, &taps, 0, 1, 1);
        } else if constexpr (std::is_floating_point<S>::value) {
            sum_windows(plane, sum, &begin, &taps, 0, 1, 1);
        } else {
            *sum = sum_integers<S, A>(plane, n_);
        }
    }

    const S* x_;
    S* out_;
    index_t planes_, n_;
    index_t block_;
    bool lanes_ = false;        // blocks of L planes transposed (see whole_lane_sums)
    bool small_sums_ = false;   // Divisors::small_sums of the lanes' int32 sums
    index_t lane_buffer_ = 0;   // lane scratch per worker: L planes, spill rows, block_ sums
    std::unique_ptr<std::int64_t[]> count_;
    std::unique_ptr<double[]> real_;
    std::unique_ptr<A[]> sums_;      // a block's sums per worker
    std::unique_ptr<LaneSum[]> lane_scratch_;
    std::unique_ptr<float[]> wide_;  // 16-bit floats: one widened plane per worker
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
