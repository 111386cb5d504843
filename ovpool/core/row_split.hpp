// Few planes, many workers: a call with fewer planes than workers has each plane's output
// rows (the first spatial axis's outputs) cut into parts, so that every worker has work.
//
// A part is pooled as a plane of its own: the slab of input rows its windows read, with the
// window tables of its output rows (begins counted from the slab's first row). Each output
// depends only on its window, so the parts' outputs are those of the whole plane, bit for bit.
// What differs is only where an element sits: a part's plane offsets are counted from its
// slab, so max pooling's indices are moved back to the whole plane (fix_indices). The jobs
// (jobs.hpp) run one job of a single plane per part; how many workers a call gets stays the
// one rule of threads.hpp.
#ifndef OVPOOL_CORE_ROW_SPLIT_HPP
#define OVPOOL_CORE_ROW_SPLIT_HPP

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Parts per plane for `planes` planes on `workers` workers: 0 (no split) unless there are
// fewer planes than workers and at least two output rows; else about two parts per worker,
// so that a late thread leaves less of the call to wait for. Planes of one spatial axis are
// not split: a part's tables are copied (two entries per output row), which for one axis is
// as much memory traffic as the pooling itself.
inline index_t row_parts(const Geometry& g, index_t planes, int workers) {
    if (planes < 1 || planes >= workers || g.naxes < 2) return 0;
    index_t per = (2 * static_cast<index_t>(workers) + planes - 1) / planes;
    per = std::min(per, g.output[0]);
    return per >= 2 ? per : 0;
}

// One part: output rows [first_row, first_row + rows) of the first axis, over the slab of
// input rows starting at element in_shift of the plane.
struct RowPart {
    std::unique_ptr<index_t[]> packed;  // the slab's window tables (geometry.hpp's layout)
    index_t first_row = 0, rows = 0;
    index_t in_shift = 0;   // the slab's first element, as a plane offset
    index_t out_shift = 0;  // the part's first output, as an offset in the plane's outputs
};

// The parts of one plane's outputs (the same for every plane of the call).
class RowSplit {
  public:
    // `packed`: the call's tables, `g` made from them; `parts` from row_parts.
    RowSplit(const index_t* packed, const Geometry& g, index_t parts) : g_(g) {
        const index_t n = g.naxes;
        inner_in_ = g.in_plane / std::max<index_t>(1, g.length[0]);
        inner_out_ = g.out_plane / std::max<index_t>(1, g.output[0]);
        index_t windows = 0;
        for (index_t a = 0; a < n; ++a) windows += g.output[a];
        const index_t size = 2 + 7 * n + 2 * windows;
        AxisTable v = axis_table(g, 0);
        for (index_t k = 0; k < parts; ++k) {
            RowPart p;
            p.first_row = k * v.out_len / parts;
            p.rows = (k + 1) * v.out_len / parts - p.first_row;
            // The input rows the part's windows read: those of its interior windows (which
            // start `step` apart) and of each other window.
            const index_t end = p.first_row + p.rows;
            index_t lo = -1, hi = -1;
            const index_t ilo = std::max(v.lo, p.first_row), ihi = std::min(v.hi, end);
            if (ihi > ilo) {
                lo = v.begin[ilo];
                hi = v.begin[ihi - 1] + (v.taps - 1) * v.dil;
            }
            for (index_t j = p.first_row; j < end; ++j) {
                if (j == ilo && ihi > ilo) j = ihi;
                if (j >= end) break;
                if (v.count[j] == 0) continue;
                index_t last = v.begin[j] + (v.count[j] - 1) * v.dil;
                lo = lo < 0 ? v.begin[j] : std::min(lo, v.begin[j]);
                hi = std::max(hi, last);
            }
            if (lo < 0) hi = lo = 0;  // (only empty windows: a slab of one row)
            p.in_shift = lo * inner_in_;
            p.out_shift = p.first_row * inner_out_;
            const index_t drop = v.out_len - p.rows;
            p.packed.reset(new index_t[static_cast<std::size_t>(size - 2 * drop)]);
            index_t* t = p.packed.get();
            std::copy(packed, packed + 2 + 7 * n, t);
            t[2] = hi - lo + 1;        // length[0]
            t[2 + n] = p.rows;         // output[0]
            // scratch: the largest intermediate of the passes, as rules.hpp's
            // scratch_elements (axes 0 .. a reduced, the later ones not yet).
            index_t scratch = 0;
            for (index_t a = 0; a < n; ++a) {
                index_t e = 1;
                for (index_t i = 0; i < n; ++i) e *= i <= a ? t[2 + n + i] : t[2 + i];
                scratch = std::max(scratch, e);
            }
            t[1] = scratch;
            for (index_t a = 1; a < n; ++a) t[2 + 3 * n + a] -= drop;  // offset[a]
            t[2 + 5 * n] = ihi > ilo ? ilo - p.first_row : 0;  // interior[0]
            t[2 + 5 * n + 1] = ihi > ilo ? ihi - p.first_row : 0;
            index_t* begin = t + 2 + 7 * n;
            index_t* count = begin + (windows - drop);
            const index_t* first_begin = v.begin + p.first_row;
            std::copy(v.count + p.first_row, v.count + end, count);
            for (index_t j = 0; j < p.rows; ++j) {
                begin[j] = count[j] > 0 ? first_begin[j] - lo : 0;
            }
            std::copy(g.begin + v.out_len, g.begin + windows, begin + p.rows);
            std::copy(g.count + v.out_len, g.count + windows, count + p.rows);
            parts_.push_back(std::move(p));
        }
        // Outputs of one row whose windows are empty along a later axis (their index is the
        // plane's offset 0, which fix_indices must not move).
        bool any = false;
        for (index_t j = v.out_len; j < windows; ++j) any = any || g.count[j] == 0;
        if (any) {
            // (Arrays rather than std::vector<index_t>, whose members would be compiled with
            // AVX2 outside the build's namespace.)
            empty_ = allocate<unsigned char>(inner_out_);
            std::unique_ptr<index_t[]> at = allocate<index_t>(n);
            for (index_t a = 0; a < n; ++a) at[a] = 0;
            for (index_t i = 0; i < inner_out_; ++i) {
                bool empty = false;
                for (index_t a = 1; a < n; ++a) {
                    empty = empty || g.count[g.offset[a] + at[a]] == 0;
                }
                empty_[i] = empty;
                for (index_t a = n - 1; a >= 1 && ++at[a] == g.output[a]; --a) at[a] = 0;
            }
        }
    }

    index_t parts() const { return static_cast<index_t>(parts_.size()); }
    const RowPart& part(index_t k) const { return parts_[static_cast<std::size_t>(k)]; }

    // Max pooling's indices of part `k` of plane `plane`, written by a job of the part alone
    // (plane modulus 1, no offset modulus: each the winner's offset in the slab), made those
    // of the whole call: (plane % plane_modulus) * in_plane + offset % offset_modulus, the
    // offset counted from the plane's start (0 for empty windows).
    template <class I>
    void fix_indices(I* plane_indices, index_t plane, index_t k, std::int64_t plane_modulus,
                     std::int64_t offset_modulus) const noexcept {
        const RowPart& p = part(k);
        const std::int64_t base = (plane % plane_modulus) * g_.in_plane;
        const std::int64_t shift = p.in_shift;
        const bool wrap = offset_modulus < g_.in_plane;
        I* first = plane_indices + p.out_shift;
        const index_t n = p.rows * inner_out_;
        if (wrap) {
            for (index_t i = 0; i < n; ++i) {
                first[i] = static_cast<I>(base + (first[i] + shift) % offset_modulus);
            }
        } else {
            for (index_t i = 0; i < n; ++i) first[i] = static_cast<I>(base + shift + first[i]);
        }
        // (Empty windows: offset 0.)
        for (index_t j = p.first_row; j < p.first_row + p.rows; ++j) {
            I* row = plane_indices + j * inner_out_;
            if (g_.count[j] == 0) {
                for (index_t i = 0; i < inner_out_; ++i) row[i] = static_cast<I>(base);
            } else if (empty_) {
                for (index_t i = 0; i < inner_out_; ++i) {
                    if (empty_[i]) row[i] = static_cast<I>(base);
                }
            }
        }
    }

  private:
    Geometry g_;
    index_t inner_in_ = 1, inner_out_ = 1;  // elements of one input / output row
    std::vector<RowPart> parts_;
    std::unique_ptr<unsigned char[]> empty_;  // per output of a row: empty along a later
                                              // axis (null: none is)
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
