// Max pooling over irregular (adaptive) windows, a group of planes side by side.
//
// Adaptive windows have no common tap count and stride, so the separable passes along the last
// axis either read each window on its own (a branch or a gather per tap) or compute every
// stride-1 window and pick from them. Here a group of L planes is laid out lane by lane
// instead (element e of plane p at lanes[e * L + p], one input row at a time), so that every
// tap of every window, regular or not, is one contiguous run of L lanes and each pass is a
// plain compare-and-blend over whole vectors, for every element type and window table.
//
// Passes. The last axis goes first, one input row at a time as it is transposed (the row's
// window maxima are computed once, whatever the windows of the other axes that cover it); the
// other axes follow from the second-to-last to the first over the rows' results, each window's
// taps being runs of (later axes' outputs) x L entries. Beside each maximum travels its plane
// offset, in an unsigned integer as wide as the value (so the group must have fewer elements
// than that type counts).
//
// Order. As in max_coded.hpp: passes run from the last axis to the first and each combines a
// window's entries at increasing positions along its axis, so a later tap always holds a
// larger plane offset than any earlier one; the strict `replaces` (larger wins, NaN loses to
// any number, ties keep the earlier tap) then picks the first maximum in row-major window
// order, the winner every other path picks. Empty windows give the empty value and offset 0.
//
// 16-bit floats go into the lanes as int16 keys (max_coded.hpp's half_key, whose integer order
// is the max rule's): sixteen planes to one vector and one integer compare a tap, where
// float32 lanes took two vectors and a NaN test; a winner's value is its key read back, or for
// keys 0 and NaN (shared by values of different bits) the input's element at its offset.
#ifndef OVPOOL_CORE_MAX_ADAPTIVE_HPP
#define OVPOOL_CORE_MAX_ADAPTIVE_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "max.hpp"
#include "max_coded.hpp"
#include "max_lanes.hpp"
#include "simd/transpose_avx2.hpp"
#include "simd/widen.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Largest scratch (bytes) one worker of AdaptiveMaxLanes may use, with indices and for values
// alone (whose other path, max_plane_values, needs no plane-sized buffers and is the faster
// one once the lanes' buffers leave L2).
constexpr index_t adaptive_lanes_scratch_bytes = index_t{1} << 20;
constexpr index_t adaptive_lanes_values_bytes = index_t{1} << 19;

// Planes side by side: 32 bytes of lanes for bytes (as in max_lanes.hpp), two vectors' worth
// (64 bytes) for wider values, so that 8-byte values keep the group's buffers small.
template <class A>
constexpr index_t adaptive_lanes = sizeof(A) == 8 ? 8 : plane_lanes<A>;

// True when some axis has mostly windows outside its regular interior run (adaptive windows
// whose length is not a multiple of the output's).
inline bool irregular_windows(const Geometry& g) {
    for (index_t a = 0; a < g.naxes; ++a) {
        AxisTable w = axis_table(g, a);
        if (2 * (w.hi > w.lo ? w.hi - w.lo : 0) < w.out_len) return true;
    }
    return false;
}

template <class S>
class AdaptiveMaxLanes {
  public:
    // (16-bit floats: their keys.)
    static constexpr bool keyed = is_half_float<S>;
    typedef typename std::conditional<keyed, std::int16_t, max_accumulator_t<S>>::type A;
    typedef tap_code_t<A> U;
    static constexpr index_t L = adaptive_lanes<A>;

    // Largest pass result (entries per lane): after the passes over axes n-1 .. a, the axes
    // before a at input length and the others at output length.
    static index_t largest_pass(const Geometry& g) {
        index_t before = g.in_plane / g.length[g.naxes - 1], after = 1, largest = 0;
        for (index_t a = g.naxes - 1; a >= 0; --a) {
            after *= g.output[a];
            largest = std::max(largest, before * after);
            if (a > 0) before /= g.length[a - 1];
        }
        return largest;
    }

    // The lanes' empty value for the job's (16-bit floats: its key).
    static A lane_empty(max_accumulator_t<S> empty_value) {
        if constexpr (keyed) {
            return half_key<S>(store<S>(empty_value).bits);
        } else {
            return empty_value;
        }
    }

    // Irregular windows, offsets that fit U, enough planes to fill most lanes, scratch
    // within adaptive_lanes_scratch_bytes (values alone: adaptive_lanes_values_bytes), and
    // (16-bit floats) an empty value whose key is neither 0 nor the NaN key.
    static bool suits(const Geometry& g, index_t planes, bool with_index,
                      max_accumulator_t<S> empty_value) {
        if (g.in_plane == 0 || g.out_plane == 0 || 2 * planes < L) return false;
        if constexpr (keyed) {
            const A key = lane_empty(empty_value);
            if (key == 0 || key == half_nan_key) return false;
        }
        if (static_cast<std::uint64_t>(g.in_plane - 1) > std::numeric_limits<U>::max()) {
            return false;
        }
        if (!irregular_windows(g)) return false;
        index_t entries = (g.length[g.naxes - 1] + 2 * largest_pass(g) + g.out_plane) * L;
        index_t bytes = entries * static_cast<index_t>(sizeof(A) + sizeof(U));
        return bytes <= (with_index ? adaptive_lanes_scratch_bytes : adaptive_lanes_values_bytes);
    }

    // As MaxJob's arguments (spec: where indices go, both pointers null for values only).
    // Throws std::bad_alloc.
    AdaptiveMaxLanes(const S* x, S* out, index_t planes, const Geometry& g, const IndexSpec& spec,
                     max_accumulator_t<S> empty_value, int workers)
        : x_(x), out_(out), planes_(planes), g_(g), spec_(spec),
          empty_value_(lane_empty(empty_value)) {
        width_ = g.length[g.naxes - 1];
        buffer_ = largest_pass(g) * L;
        // Values: one row in lanes, two pass buffers, the results plane by plane, and (16-bit
        // floats) the group's row in lanes as bits. Codes: two pass buffers, the results plane
        // by plane.
        per_worker_ = width_ * L + 2 * buffer_ + L * g.out_plane;
        if constexpr (is_half_float<S>) per_worker_ += L * width_;
        per_worker_codes_ = 2 * buffer_ + L * g.out_plane;
        values_ = allocate<A>(workers * per_worker_);
        codes_ = allocate<U>(workers * per_worker_codes_);
        items_ = (planes + L - 1) / L;
        // The last axis's taps, window by window, as positions in a row.
        AxisTable h = axis_table(g, g.naxes - 1);
        index_t taps = 0;
        for (index_t j = 0; j < h.out_len; ++j) taps += h.count[j];
        tap_first_ = allocate<index_t>(h.out_len + 1);
        tap_position_ = allocate<index_t>(taps);
        for (index_t j = 0, i = 0; j < h.out_len; ++j) {
            tap_first_[j] = i;
            for (index_t t = 0; t < h.count[j]; ++t) tap_position_[i++] = h.begin[j] + t * h.dil;
        }
        tap_first_[h.out_len] = taps;
    }

    index_t items() const { return items_; }

    void run(index_t item, int worker) const noexcept {
        const index_t first = item * L, count = std::min(L, planes_ - first);
        const index_t n = g_.naxes, rows = g_.in_plane / width_, out_plane = g_.out_plane;
        A* row = values_.get() + worker * per_worker_;
        A* const buffers = row + width_ * L;
        A* const flat = buffers + 2 * buffer_;
        U* const code_buffers = codes_.get() + worker * per_worker_codes_;
        U* const flat_codes = code_buffers + 2 * buffer_;
        A* d = buffers;
        U* c = code_buffers;
        AxisTable h = axis_table(g_, n - 1);
        const S* x = x_ + first * g_.in_plane;
        if (count < L) {
            // Lanes without a plane (the last group's) are combined too but never stored:
            // defined values for them, from the row in lanes (and its bits) on, which everything
            // else in the lanes derives from. (Only here: zeroing every worker's scratch on each
            // call cost int32 4x12x15x20x17 -> 12x4x5 a sixth of its instructions.)
            std::fill(row, row + width_ * L, A{});
            if constexpr (keyed) {
                std::int16_t* bits = flat + L * out_plane;
                std::fill(bits, bits + width_ * L, std::int16_t{0});
            }
        }
        // The last axis, row by row: the row of each plane into lanes, then its windows.
        for (index_t r = 0; r < rows; ++r) {
            if constexpr (keyed) {
                // (The bits into lanes, then their keys in one run over the lanes.)
                std::int16_t* bits = flat + L * out_plane;
                to_lanes<L>(reinterpret_cast<const std::int16_t*>(x) + r * width_, g_.in_plane,
                            width_, count, bits);
                half_keys(reinterpret_cast<const S*>(bits), row, width_ * L);
            } else {
                to_lanes<L>(x + r * width_, g_.in_plane, width_, count, row);
            }
            A* best = d + r * h.out_len * L;
            U* code = c + r * h.out_len * L;
            // (Codes: the winners' plane offsets, the row's first offset added to the taps'
            // positions; an empty window's offset is 0.)
            const U start = static_cast<U>(r * width_);
            for (index_t j = 0; j < h.out_len; ++j) {
                if (h.count[j] == 0) {
                    std::fill(best + j * L, best + (j + 1) * L, empty_value_);
                    std::fill(code + j * L, code + (j + 1) * L, U{0});
                    continue;
                }
                lanes_max<A, L>(row, tap_position_.get() + tap_first_[j], h.count[j],
                                best + j * L, code + j * L, start);
            }
        }
        // Axes n-2 .. 0, ping-ponging between the two pass buffers.
        index_t inner = h.out_len * L, outer = rows;
        for (index_t a = n - 2; a >= 0; --a) {
            AxisTable v = axis_table(g_, a);
            outer /= v.length;
            A* next = d == buffers ? buffers + buffer_ : buffers;
            U* next_code = c == code_buffers ? code_buffers + buffer_ : code_buffers;
            for (index_t o = 0; o < outer; ++o) {
                const A* src = d + o * v.length * inner;
                const U* src_code = c + o * v.length * inner;
                for (index_t j = 0; j < v.out_len; ++j) {
                    index_t at = v.count[j] > 0 ? v.begin[j] * inner : 0;
                    coded_window(next + (o * v.out_len + j) * inner,
                                 next_code + (o * v.out_len + j) * inner, src + at, src_code + at,
                                 v.count[j], v.dil * inner, 0, inner, empty_value_);
                }
            }
            d = next;
            c = next_code;
            inner *= v.out_len;
        }
        // Out of the lanes, plane by plane.
        S* out = out_ + first * out_plane;
        if constexpr (keyed) {
            // Values from the keys; keys 0 and NaN from the input at the winner's offset.
            from_lanes<L>(static_cast<const A*>(d), out_plane, count, flat, out_plane);
            from_lanes<L>(static_cast<const U*>(c), out_plane, count, flat_codes, out_plane);
            for (index_t p = 0; p < count; ++p) {
                const A* key = flat + p * out_plane;
                const U* offset = flat_codes + p * out_plane;
                S* to = out + p * out_plane;
                if (!coded_half_run(to, key, out_plane)) continue;
                const S* plane = x + p * g_.in_plane;
                for (index_t k = 0; k < out_plane; ++k) {
                    if (key[k] == 0 || key[k] == half_nan_key) to[k] = plane[offset[k]];
                }
            }
        } else if constexpr (sizeof(S) == sizeof(A)) {
            from_lanes<L>(static_cast<const A*>(d), out_plane, count, out, out_plane);
        } else {
            from_lanes<L>(static_cast<const A*>(d), out_plane, count, flat, out_plane);
            for (index_t p = 0; p < count; ++p) {
                narrow_row(flat + p * out_plane, out + p * out_plane, out_plane);
            }
        }
        if (spec_.out64 == nullptr && spec_.out32 == nullptr) return;
        if constexpr (!keyed) {
            from_lanes<L>(static_cast<const U*>(c), out_plane, count, flat_codes, out_plane);
        }
        if (spec_.out64 != nullptr) {
            lane_indices(spec_.out64 + first * out_plane, out_plane,
                         static_cast<const U*>(flat_codes), out_plane, 1, out_plane, first,
                         count, spec_, g_.in_plane);
        } else {
            lane_indices(spec_.out32 + first * out_plane, out_plane,
                         static_cast<const U*>(flat_codes), out_plane, 1, out_plane, first,
                         count, spec_, g_.in_plane);
        }
    }

  private:
    const S* x_;
    S* out_;
    index_t planes_;
    Geometry g_;
    IndexSpec spec_;
    A empty_value_;
    index_t width_ = 0;       // input length of the last axis
    index_t buffer_ = 0;      // entries of each pass buffer (lanes included)
    index_t per_worker_ = 0;        // values per worker (see the constructor)
    index_t per_worker_codes_ = 0;  // codes per worker
    index_t items_ = 0;
    std::unique_ptr<A[]> values_;
    std::unique_ptr<U[]> codes_;
    std::unique_ptr<index_t[]> tap_first_;     // window j's taps: tap_position_[first[j] ..
    std::unique_ptr<index_t[]> tap_position_;  // first[j + 1]), positions in a row
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
