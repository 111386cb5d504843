// Integer averages whose every window is one input over a divisor of 1 (kernel 1 on every
// axis, no window in the padding: a plain subsample such as k1 s2): each average is its input,
// so the call is a strided copy. The passes summed each input into an int32 and divided it by
// one; here each output row is picked straight from its input row (one-byte elements by byte
// shuffles in the AVX2 build, see max.hpp's pick_strided). Integers only: a float sum from +0
// turns -0 into +0, which a copy would not. A copy of the scalar rule's results (x / 1 rounds
// to x), so every build gives the same values.
#ifndef OVPOOL_CORE_AVG_PICKS_HPP
#define OVPOOL_CORE_AVG_PICKS_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "max.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

template <class S>
class AvgPicks {
  public:
    // Whether every window of g is one input and every divisor (out_plane of them) is 1.
    static bool suits(const Geometry& g, const std::int64_t* divisor) {
        if (!std::is_integral<S>::value || g.naxes < 1 || g.out_plane < 1) return false;
        for (index_t a = 0; a < g.naxes; ++a) {
            AxisTable w = axis_table(g, a);
            for (index_t j = 0; j < w.out_len; ++j) {
                if (w.count[j] != 1) return false;
            }
        }
        for (index_t k = 0; k < g.out_plane; ++k) {
            if (divisor[k] != 1) return false;
        }
        return true;
    }

    // Throws std::bad_alloc.
    AvgPicks(const S* x, S* out, index_t planes, const Geometry& g, int workers)
        : x_(x), out_(out), planes_(planes), g_(g) {
        const index_t last = g.naxes - 1;
        AxisTable w = axis_table(g, last);
        out_len_ = w.out_len;
        first_ = w.begin;
        begin0_ = w.begin[0];
        step_ = w.step;
        for (index_t j = 0; j < w.out_len && regular_; ++j) {
            regular_ = w.begin[j] == begin0_ + j * step_;
        }
        // Each output row's input row: the offset of its window's input along the other axes.
        rows_ = g.out_plane / out_len_;
        row_start_ = allocate<index_t>(rows_);
        for (index_t r = 0; r < rows_; ++r) {
            index_t rest = r, start = 0, pitch = w.length;
            for (index_t a = last - 1; a >= 0; --a) {
                AxisTable v = axis_table(g, a);
                start += v.begin[rest % v.out_len] * pitch;
                rest /= v.out_len;
                pitch *= v.length;
            }
            row_start_[r] = start;
        }
        // Planes per item: about 4096 outputs, at least four items per worker.
        block_ = std::max<index_t>(1, std::min(planes, 4096 / std::max<index_t>(1, g.out_plane)));
        if (workers > 1) block_ = std::min(block_, std::max<index_t>(1, planes / (4 * workers)));
    }

    index_t items() const { return (planes_ + block_ - 1) / block_; }

    void run(index_t item, int) const noexcept {
        if constexpr (std::is_integral<S>::value) pick_planes(item);
    }

  private:
    void pick_planes(index_t item) const noexcept {
        const index_t first = item * block_, count = std::min(block_, planes_ - first);
        const S* x_end = x_ + planes_ * g_.in_plane;
        S* const out_end = out_ + (first + count) * g_.out_plane;  // this item's outputs
        for (index_t p = first; p < first + count; ++p) {
            const S* plane = x_ + p * g_.in_plane;
            S* out = out_ + p * g_.out_plane;
            for (index_t r = 0; r < rows_; ++r, out += out_len_) {
                const S* row = plane + row_start_[r];
                if (!regular_) {
                    for (index_t j = 0; j < out_len_; ++j) out[j] = row[first_[j]];
                } else if (step_ == 1 || out_len_ == 1) {
                    std::memcpy(out, row + begin0_, static_cast<std::size_t>(out_len_) * sizeof(S));
                } else {
                    // (bytes written past the row are this item's later rows, written after)
                    const S* from = row + begin0_;
                    pick_strided(from, out, out_len_, step_, x_end - from, out_end - out);
                }
            }
        }
    }

    const S* x_;
    S* out_;
    index_t planes_;
    Geometry g_;
    index_t out_len_ = 1, begin0_ = 0, step_ = 1, rows_ = 1, block_ = 1;
    const index_t* first_ = nullptr;        // the last axis's windows' inputs
    bool regular_ = true;                   // ... begin0_ + j * step_
    std::unique_ptr<index_t[]> row_start_;  // each output row's input row in its plane
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
