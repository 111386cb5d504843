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
// every average path uses.
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
#include "rules.hpp"
#include "simd/lanes_avx2.hpp"

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
};
#endif

// Rows of lanes a transposed block may write beyond its plane's elements (see
// transpose_planes): a buffer for planes of n elements holds n + lanes_spill_rows rows.
constexpr index_t lanes_spill_rows = 8;

// The block of planes x[p * in_plane ..], p < count <= L, transposed: lanes[i * L + p] =
// load<B>(x[p * in_plane + i]) for i in [from, to), and 0 in the lanes of absent planes
// (count <= p < L). Eight planes at a time through 8x8 tile transposes where the build has
// them (simd/lanes_avx2.hpp); those may also write rows up to from + lanes_spill_rows (with
// values of no use) and, for runs shorter than a tile, read up to x[(count - 1) * in_plane +
// from + 8), which must be below `readable` (else the portable loop takes those planes).
template <class S, class B, index_t L>
inline void transpose_planes(const S* x, index_t in_plane, index_t count, index_t from,
                             index_t to, index_t readable, B* lanes) {
    index_t p0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (simd::has_transpose_tile8<S, B>) {
        const index_t width = to - from;
        for (; width > 0 && p0 + 8 <= count; p0 += 8) {
            const S* rows = x + p0 * in_plane;
            if (width < 8) {
                if ((p0 + 7) * in_plane + from + 8 > readable) break;
                simd::transpose_tile8(rows + from, in_plane, lanes + from * L + p0, L);
                continue;
            }
            for (index_t i = from; i < to; i += 8) {
                const index_t at = std::min(i, to - 8);  // the last tile overlaps
                simd::transpose_tile8(rows + at, in_plane, lanes + at * L + p0, L);
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
// plane's row of sums by tile transposes (unstage_sums): 32-bit sums in the AVX2 build; other
// sums go to the rows one lane at a time as each output is summed (put_sums).
template <class B>
constexpr bool staged_sums = OVPOOL_CORE_HAVE_AVX2 && sizeof(B) == 4;

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
// back to each plane's row, eight by eight through tile transposes.
template <class B, index_t L>
inline void unstage_sums(const B* staged, index_t n, index_t count, B* sums, index_t stride) {
    index_t p0 = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (sizeof(B) == 4) {
        for (; n >= 8 && p0 + 8 <= count; p0 += 8) {
            for (index_t k = 0; k < n; k += 8) {
                const index_t at = std::min(k, n - 8);  // the last tile overlaps
                simd::untranspose_tile8(staged + at * L + p0, L, sums + p0 * stride + at, stride);
            }
        }
    }
#endif
    for (index_t p = p0; p < count; ++p) {
        for (index_t k = 0; k < n; ++k) sums[p * stride + k] = staged[k * L + p];
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
        for (index_t v = 0; v < out_len[1]; ++v) {
            const A* b1 = b0 + begin[1][v] * pitch[1];
            const index_t n1 = taps[1][v];
            for (index_t w = 0; w < out_len[2]; ++w, ++k) {
                const A* b2 = b1 + begin[2][w] * pitch[2];
                const index_t n2 = taps[2][w];
                Lanes<A, L> total = Lanes<A, L>::zero();
                if constexpr (std::is_floating_point<A>::value) {
                    // Axis 0 innermost (the passes sum it first), axis 2 outermost.
                    for (index_t t2 = 0; t2 < n2; ++t2) {
                        Lanes<A, L> middle = Lanes<A, L>::zero();
                        for (index_t t1 = 0; t1 < n1; ++t1) {
                            Lanes<A, L> inner = Lanes<A, L>::zero();
                            const A* r = b2 + t2 * pitch[2] + t1 * pitch[1];
                            for (index_t t0 = 0; t0 < n0; ++t0, r += pitch[0]) inner.add(r);
                            middle.add(inner);
                        }
                        total.add(middle);
                    }
                } else {
                    for (index_t t2 = 0; t2 < n2; ++t2) {
                        for (index_t t1 = 0; t1 < n1; ++t1) {
                            const A* r = b2 + t2 * pitch[2] + t1 * pitch[1];
                            for (index_t t0 = 0; t0 < n0; ++t0, r += pitch[0]) total.add(r);
                        }
                    }
                }
                put_sums(total, k, staged, sums, stride, count);
            }
        }
    }
}

// One output's sum when every window has one or two taps per axis (adaptive pooling that
// upsamples), without a branch: tap t reads base + t0 * pitch[0] + t1 * pitch[1] + ..., or
// `zero` (a row of zeros) where the window has no such tap. The float sums nest as the passes
// do (axis 0 innermost) but skip the passes' starting +0s and add one +0 at the end instead:
// a sum of these same addends started from +0 differs from it only in the sign of a zero
// result (0 + a == a unless a is -0), which that last +0 makes +0, and a row of zeros in place
// of an absent tap adds +0 to a sum that is not -0 there, which changes nothing.
template <class A, index_t L, int N>
inline Lanes<A, L> pair_total(const A* block, index_t base, index_t zero, const index_t* pitch,
                              const bool* two) {
    const index_t x0 = base;
    const index_t x1 = two[0] ? base + pitch[0] : zero;
    if constexpr (N == 1) {
        Lanes<A, L> t = Lanes<A, L>::load(block + x0);
        t.add(block + x1);
        if constexpr (std::is_floating_point<A>::value) t.add_zero();
        return t;
    } else {
        const index_t y0 = two[1] ? base + pitch[1] : zero;
        const index_t y1 = two[0] && two[1] ? base + pitch[0] + pitch[1] : zero;
        Lanes<A, L> a = Lanes<A, L>::load(block + x0);
        a.add(block + x1);
        Lanes<A, L> b = Lanes<A, L>::load(block + y0);
        b.add(block + y1);
        a.add(b);
        if constexpr (N == 3) {
            const bool t2 = two[2];
            const index_t z = base + pitch[2];
            Lanes<A, L> c = Lanes<A, L>::load(block + (t2 ? z : zero));
            c.add(block + (t2 && two[0] ? z + pitch[0] : zero));
            Lanes<A, L> d = Lanes<A, L>::load(block + (t2 && two[1] ? z + pitch[1] : zero));
            d.add(block + (t2 && two[0] && two[1] ? z + pitch[0] + pitch[1] : zero));
            c.add(d);
            a.add(c);
        }
        if constexpr (std::is_floating_point<A>::value) a.add_zero();
        return a;
    }
}

// lane_sums for windows of one or two taps per axis, through pair_total. first[a][j]: the
// first tap of window j of axis a as a block offset; two[a][j]: whether it has a second. The
// block is followed by a row of L zeros.
template <class A, index_t L, int N>
void lane_pair_sums(const A* block, A* staged, A* sums, index_t stride, index_t count,
                    const Geometry& g, const index_t* const* first, const bool* const* two,
                    index_t j0, index_t j1) {
    index_t out_len[3] = {1, 1, 1}, pitch[3] = {0, 0, 0};
    index_t later = L;
    for (index_t a = N - 1; a >= 0; --a) {
        out_len[a] = g.output[a];
        pitch[a] = later;
        later *= g.length[a];
    }
    const index_t zero = later;  // the row of zeros after the block
    static const index_t none = 0;
    static const bool single = false;
    const index_t* f1 = N > 1 ? first[1] : &none;
    const index_t* f2 = N > 2 ? first[2] : &none;
    const bool* two1 = N > 1 ? two[1] : &single;
    const bool* two2 = N > 2 ? two[2] : &single;
    index_t k = 0;
    for (index_t u = j0; u < j1; ++u) {
        for (index_t v = 0; v < out_len[1]; ++v) {
            const index_t b1 = first[0][u] + f1[v];
            for (index_t w = 0; w < out_len[2]; ++w, ++k) {
                const bool taps[3] = {two[0][u], two1[v], two2[w]};
                put_sums(pair_total<A, L, N>(block, b1 + f2[w], zero, pitch, taps), k, staged,
                         sums, stride, count);
            }
        }
    }
}

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
        }
        index_t lanes = narrow_ ? average_lanes<N> : average_lanes<A>;
        blocks_ = (planes + lanes - 1) / lanes;
        rows_ = g_.output[0];
        row_outputs_ = g_.out_plane / rows_;
        shares_ = 1;
        if (blocks_ < 4 * workers) {
            shares_ = std::min(rows_, (4 * workers + blocks_ - 1) / blocks_);
        }
        chunk_rows_ = std::max<index_t>(1, lanes_chunk_outputs / row_outputs_);
        // The block, a row of zeros (absent taps of pair_total) and the rows a transpose may
        // spill into, the sums, the sums as the lanes leave them (see unstage_sums).
        per_worker_ = lanes * (g_.in_plane + lanes_spill_rows) + lanes * sums_stride(lanes);
        if (narrow_ ? staged_sums<N> : staged_sums<A>) {
            per_worker_ += lanes * chunk_rows_ * row_outputs_;
        }
        pairs_ = true;
        index_t windows = 0;
        for (index_t a = 0; a < g_.naxes; ++a) {
            AxisTable w = axis_table(g_, a);
            windows += w.out_len;
            for (index_t j = 0; j < w.out_len; ++j) pairs_ = pairs_ && w.count[j] <= 2;
        }
        if (pairs_) {
            // Each window's first tap as a block offset, and whether it has a second.
            pair_first_ = allocate<index_t>(windows);
            pair_two_ = allocate<bool>(windows);
            index_t at = 0, later = lanes;
            for (index_t a = g_.naxes - 1; a >= 0; --a) {
                AxisTable w = axis_table(g_, a);
                at = g_.offset[a];
                first_[a] = pair_first_.get() + at;
                two_[a] = pair_two_.get() + at;
                for (index_t j = 0; j < w.out_len; ++j) {
                    pair_first_[at + j] = w.begin[j] * later;
                    pair_two_[at + j] = w.count[j] == 2;
                }
                later *= w.length;
            }
        }
        if (narrow_) {
            narrow_scratch_ = allocate<N>(workers * per_worker_);
        } else {
            scratch_ = allocate<A>(workers * per_worker_);
        }
    }

    index_t items() const { return blocks_ * shares_; }

    void run(index_t item, int worker) const noexcept {
        if constexpr (!std::is_same<N, A>::value) {
            if (narrow_) {
                run_as(item, narrow_scratch_.get() + worker * per_worker_);
                return;
            }
        }
        run_as(item, scratch_.get() + worker * per_worker_);
    }

  private:
    // Elements from one plane's sums to the next: a chunk's, plus a cache line beyond a
    // multiple of 4 KiB, so that the lanes' sums (written side by side) do not all fall in the
    // same L1 set.
    index_t sums_stride(index_t lanes) const {
        const index_t bytes = 64 / lanes;  // the accumulator's size
        const index_t page = 4096 / bytes;
        return (chunk_rows_ * row_outputs_ + page - 1) / page * page + lanes;
    }

    template <class B>
    void run_as(index_t item, B* scratch) const noexcept {
        constexpr index_t L = average_lanes<B>;
        const index_t block = item / shares_, share = item % shares_;
        const index_t first = block * L;
        const index_t count = std::min(L, planes_ - first);
        const index_t in_plane = g_.in_plane, out_plane = g_.out_plane;
        B* lanes = scratch;
        B* sums = scratch + L * (in_plane + lanes_spill_rows);
        B* staged = sums + L * sums_stride(L);
        // The block transposed: element i of plane p at lanes[i * L + p]; absent planes 0.
        // Only the input rows (along axis 0) that this item's output rows read.
        const index_t row_begin = rows_ * share / shares_, row_end = rows_ * (share + 1) / shares_;
        AxisTable w0 = axis_table(g_, 0);
        const index_t inner = in_plane / w0.length;
        index_t lo = w0.length, hi = 0;
        for (index_t row = row_begin; row < row_end; ++row) {
            if (w0.count[row] == 0) continue;
            lo = std::min(lo, w0.begin[row]);
            hi = std::max(hi, w0.begin[row] + (w0.count[row] - 1) * w0.dil + 1);
        }
        const index_t from = lo * inner, to = std::max(lo, hi) * inner;
        transpose_planes<S, B, L>(x_ + first * in_plane, in_plane, count, from, to,
                                  (planes_ - first) * in_plane, lanes);
        for (index_t p = 0; p < L; ++p) lanes[in_plane * L + p] = 0;
        for (index_t row = row_begin; row < row_end; row += chunk_rows_) {
            index_t last = std::min(row_end, row + chunk_rows_);
            index_t n = (last - row) * row_outputs_;
            const index_t stride = sums_stride(L);
            if (pairs_) {
                switch (g_.naxes) {
                    case 1:
                        lane_pair_sums<B, L, 1>(lanes, staged, sums, stride, count, g_, first_, two_,
                                                row, last);
                        break;
                    case 2:
                        lane_pair_sums<B, L, 2>(lanes, staged, sums, stride, count, g_, first_, two_,
                                                row, last);
                        break;
                    default:
                        lane_pair_sums<B, L, 3>(lanes, staged, sums, stride, count, g_, first_, two_,
                                                row, last);
                        break;
                }
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
            if constexpr (staged_sums<B>) unstage_sums<B, L>(staged, n, count, sums, stride);
            index_t k = row * row_outputs_;
            Divisors part{divisors_.count + k, divisors_.real + k};
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
    bool narrow_ = false;     // sums in N (narrow_scratch_), not A (scratch_)
    index_t blocks_ = 0;      // blocks of planes
    index_t shares_ = 1;      // items per block
    index_t rows_ = 1;        // outputs along axis 0
    index_t row_outputs_ = 1; // outputs per position of axis 0
    index_t chunk_rows_ = 1;  // axis-0 positions summed before a division
    index_t per_worker_ = 0;  // scratch elements per worker
    bool pairs_ = false;      // every window has one or two taps per axis: lane_pair_sums
    const index_t* first_[3] = {nullptr, nullptr, nullptr};  // pair tables by axis
    const bool* two_[3] = {nullptr, nullptr, nullptr};
    std::unique_ptr<index_t[]> pair_first_;
    std::unique_ptr<bool[]> pair_two_;
    std::unique_ptr<A[]> scratch_;
    std::unique_ptr<N[]> narrow_scratch_;
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
