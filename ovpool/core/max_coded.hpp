// Max pooling with indices by separable passes that carry, next to each running maximum, a
// small "tap code" instead of a 64-bit plane offset: the position of the winner inside its
// window, in an unsigned integer as wide as the value (uint8 beside int8 values, uint32 beside
// float32), so that values and codes fill vectors of the same number of lanes and every pass
// is a plain compare-and-blend loop that the compiler vectorises for every element type.
//
// Order. The passes run from the last axis to the first. A pass over axis a combines, for each
// window, entries at increasing positions along a; each entry's winner lies in the slice at its
// position, and every offset in slice p is below every offset in slice p + 1. So a later tap
// holds a larger plane offset than any earlier one, and the strict `replaces` (larger wins, NaN
// loses, ties keep the earlier tap) picks the first maximum in row-major window order: the
// same winner as max_plane and max_plane_direct, hence the same bits (the winner of a window
// is unique under the rule, so it does not depend on the order of the comparisons).
//
// Codes. Window tap (t_0, ..., t_{n-1}) (t_a counted from the window's first in-bounds tap)
// has code sum_a t_a * radix[a], radix being mixed-radix place values over the largest tap
// count of each axis. rel[code] is that tap's plane offset relative to the window's first tap,
// so the winner's offset is sum_a begin_a * plane_stride_a + rel[code]. When that offset
// itself fits in a code (float32 and wider codes nearly always), the codes are the offsets
// (radix[a] = dilation_a * plane_stride_a) and no table is needed (coded_radix_offsets).
//
// Runs. Along the last axis the windows' taps are read as one flat run across all rows of the
// plane (window j's tap t of row o is element o * W + begin[lo] + t * dil + step * (j - lo)):
// with stride 1 the run is the pass's result in place (rows keep the input's pitch W). With a
// stride of 2 or more and windows of 2 or more taps, each row is first split into its `step`
// phases (elements q, q + step, ...), after which every tap of the strided windows is one flat
// run over the phases of all rows (coded_phased_rows; values of one byte instead take the
// run of every stride-1 window and pick the strided ones). Irregular (adaptive) windows along
// the last axis take one flat run of every stride-1 window per tap count and are picked from
// those (coded_counted_rows). Along the other axes, stride-1 windows also form one flat run
// per tap.
#ifndef OVPOOL_CORE_MAX_CODED_HPP
#define OVPOOL_CORE_MAX_CODED_HPP

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "config.hpp"
#include "geometry.hpp"
#include "types.hpp"
#include "max.hpp"
#include "simd/widen.hpp"
#if OVPOOL_CORE_HAVE_AVX2
#include "simd/max_avx2.hpp"
#endif

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// The unsigned tap-code type beside accumulator A: the same width.
template <std::size_t Bytes> struct unsigned_of_size;
template <> struct unsigned_of_size<1> { typedef std::uint8_t type; };
template <> struct unsigned_of_size<2> { typedef std::uint16_t type; };
template <> struct unsigned_of_size<4> { typedef std::uint32_t type; };
template <> struct unsigned_of_size<8> { typedef std::uint64_t type; };
template <class A> using tap_code_t = typename unsigned_of_size<sizeof(A)>::type;

// Keys of 16-bit floats. float16 and bfloat16 values are pooled as int16 keys whose order is
// replaces' order: a number's key is its magnitude bits, negated for a negative sign (so -0
// and +0 share key 0 and tie, the first kept), every NaN's key is the int16 minimum, below
// -inf's (so a NaN loses to any number, and NaNs tie among themselves). Integer keys go twice
// as many to a vector as float32 and compare in one instruction; larger key wins, ties keep
// the earlier tap, which is the rule of replaces on the values. The winner's value is the
// key read back (half_of_key), except for keys 0 and half_nan_key, shared by values of
// different bits, whose winners are read from the input at the winner's offset.
constexpr std::int16_t half_nan_key = std::numeric_limits<std::int16_t>::min();

template <class S> constexpr int half_infinity_bits = std::is_same<S, f16>::value ? 0x7c00 : 0x7f80;

// The key of the bits of a 16-bit float whose +inf has the bits `infinity`.
inline std::int16_t half_key_of(std::uint16_t bits, int infinity) {
    const int magnitude = bits & 0x7fff;
    const int key = (bits & 0x8000) != 0 ? -magnitude : magnitude;
    return static_cast<std::int16_t>(magnitude > infinity ? int{half_nan_key} : key);
}

template <class S>
inline std::int16_t half_key(std::uint16_t bits) {
    return half_key_of(bits, half_infinity_bits<S>);
}

// The value of key k (not 0 nor half_nan_key): magnitude k, sign bit when k < 0.
inline std::uint16_t half_of_key(std::int16_t k) {
    const int key = k;
    return static_cast<std::uint16_t>(key < 0 ? (-key) | 0x8000 : key);
}

// keys[i] = half_key_of(bits[i], infinity) for i in [0, n).
inline void half_keys_of(const std::uint16_t* bits, std::int16_t* keys, index_t n,
                         int infinity) {
    index_t i = 0;
#if OVPOOL_CORE_HAVE_AVX2
    i = simd::half_keys16(bits, keys, n, infinity);
#endif
    for (; i < n; ++i) keys[i] = half_key_of(bits[i], infinity);
}

// keys[i] = half_key(x[i]) for i in [0, n).
template <class S>
inline void half_keys(const S* x, std::int16_t* keys, index_t n) {
    half_keys_of(reinterpret_cast<const std::uint16_t*>(x), keys, n, half_infinity_bits<S>);
}

// The 16-bit floats whose keys the tap-code passes read (max_planes_coded on keys): `bits`
// (null when the pass's input is not made of keys of 16-bit floats, or already keyed) are
// keyed into `keys`, the pass's input, only as far as a pass reads them there. The last-axis
// pass of the AVX2 build takes its strided and edge windows' picks straight from the bits,
// keying only the picked elements (float16 1x1x51x90x56 with indices spent about 190K of
// its 1.2M instructions a call keying the whole input first).
struct HalfSource {
    const std::uint16_t* bits = nullptr;
    int infinity = 0;
    std::int16_t* keys = nullptr;
};

// Rows shorter than this many bytes have their strided windows computed as one flat run.
constexpr index_t coded_short_run = 128;

// Blocks of at least this many rows reduce their last-axis edge windows column by column
// (coded_edge_columns) rather than row by row.
constexpr index_t coded_edge_rows = 16;

// Largest table of codes a plan builds (windows of more taps go by max_plane).
constexpr index_t coded_max_codes = index_t{1} << 20;

// Most distinct tap counts an irregular last axis may have to be pooled by coded_counted_rows
// (one flat run per count).
constexpr index_t coded_count_runs = 4;

// Bytes of runs (values and codes) coded_counted_rows fills before it picks from them.
constexpr index_t coded_count_chunk_bytes = 16384;

// Planes of at most this many outputs have a table of every output's first-tap offset
// (CodedPlan::start), so that their indices are one flat loop rather than one per row.
constexpr index_t coded_flat_outputs = index_t{1} << 20;

// A plane alone has that table too when its output rows are shorter than this (float16
// 51x90x56 -> 51x45x19 with indices: 2295 rows of 19 outputs, 130 instructions a row).
constexpr index_t coded_flat_row = 64;

// Tap codes made of one bit field per axis (radix[a] a power of two), when the windows' taps
// fit in one-byte codes so: each axis's tap number is ((code >> shift[a]) & mask[a]), its
// offset step[a] (dilation times plane stride), and the offset of a code from its window's
// first tap the sum of the products, which the AVX2 build computes eight codes at a time
// rather than looking each up in CodedPlan::rel. axes 0: the codes are not so.
struct CodeFields {
    static constexpr int most_axes = 4;
    int axes = 0;
    int shift[most_axes] = {};
    std::int32_t mask[most_axes] = {};
    std::int32_t step[most_axes] = {};
};

#if OVPOOL_CORE_HAVE_AVX2
typedef simd::BytePick simd_byte_pick;
#else
struct simd_byte_pick {};
#endif

// What max_plane_coded needs besides the Geometry, computed once per call.
struct CodedPlan {
    bool usable = false;
    bool in_place = false;  // last axis: stride-1 run written as the pass's result (pitch W)
    bool phased = false;    // last axis: strided windows of 2+ taps read from the rows' phases
    index_t pitch = 0;      // elements between rows of the passes' results
    index_t run = 0;        // elements of the run buffer (strided windows)
    index_t buffer = 0;     // elements of each of the two pass buffers
    std::vector<index_t> radix;         // code place value of each axis
    std::vector<index_t> plane_stride;  // input plane stride of each axis
    std::vector<std::int64_t> rel;      // code -> offset from the window's first tap (empty:
                                        // the codes are those offsets, see coded_radix_offsets)
    CodeFields fields;                  // (with rel: the codes as bit fields, see CodeFields)
    std::vector<index_t> empty_last;    // last-axis windows without taps
    // Output row r of a plane (over the axes before the last): the plane offset of its windows'
    // first taps along those axes, and whether one of those windows is empty (these tables:
    // coded_output_tables).
    std::vector<std::int64_t> row_start;
    std::vector<char> row_empty;
    std::vector<index_t> empty_rows;    // the rows r with row_empty[r]
    // Output k = r * out_len + j of a plane: row_start[r] + the last-axis begin[j] (null for
    // planes of more than coded_flat_outputs outputs). Uninitialised storage: a vector's
    // resize zeroed it first, every entry then written again (int32 4x4x62x65 -> 138x108
    // with indices: 119 KB, about 130K of its 2.27M instructions a call).
    std::unique_ptr<std::int64_t[]> start;
    index_t edges = 1;                  // last-axis windows outside [lo, hi) (at least 1)
    // Irregular last axis (coded_counted_rows): runs of count_min .. count_min + count_runs - 1
    // taps over count_chunk rows at a time, count_stride apart in the run buffer; window j is
    // read at pick[j] of its row's stretch of them.
    bool counted = false;
    index_t count_min = 0, count_runs = 0, count_stride = 0, count_chunk = 1;
    std::vector<index_t> pick;
    // ... and, for 1-byte values in AVX2 builds, the picks as byte shuffles (simd::BytePicks:
    // sixteen windows at a time; empty when not so).
    std::vector<simd_byte_pick> byte_picks;
    std::vector<index_t> byte_pick_groups;

    // Elements of each of the value and code scratch areas of one worker.
    index_t scratch() const { return run + 2 * buffer; }
};

inline void size_coded_plan(CodedPlan& p, const Geometry& g, index_t block);
inline bool coded_radix_offsets(CodedPlan& p, const Geometry& g, const std::vector<index_t>& taps,
                                std::uint64_t largest_code);
inline void finish_coded_plan(CodedPlan& p, const Geometry& g, index_t block, index_t bytes);
inline bool coded_bit_fields(CodedPlan& p, const Geometry& g, const std::vector<index_t>& taps,
                             std::uint64_t largest_code, std::uint64_t* total);

// A plan for `g` with codes up to `largest_code`, blocks of `block` planes and values of
// `bytes` bytes each, or one that is
// not usable (windows of more taps than that, or an empty plane).
inline CodedPlan make_coded_plan(const Geometry& g, std::uint64_t largest_code, index_t block,
                                 index_t bytes) {
    CodedPlan p;
    const index_t n = g.naxes;
    if (n < 1 || g.in_plane == 0 || g.out_plane == 0) return p;
    std::vector<index_t> taps(static_cast<std::size_t>(n), 1);
    std::uint64_t total = 1;
    for (index_t a = 0; a < n; ++a) {
        // The interior windows all have w.taps taps: only the edge windows are read (calls
        // with many windows spent most of their time in a loop over all of them).
        AxisTable w = axis_table(g, a);
        index_t longest = w.hi > w.lo ? std::max<index_t>(w.taps, 1) : 1;
        for (index_t j = 0; j < w.out_len; ++j) {
            if (j == w.lo && w.hi > w.lo) j = w.hi;
            if (j >= w.out_len) break;
            longest = std::max(longest, w.count[j]);
        }
        taps[a] = longest;
        total *= static_cast<std::uint64_t>(taps[a]);
        if (total - 1 > largest_code || total > static_cast<std::uint64_t>(coded_max_codes)) {
            return p;
        }
    }
    p.radix.assign(static_cast<std::size_t>(n), 1);
    p.plane_stride.assign(static_cast<std::size_t>(n), 1);
    for (index_t a = n - 2; a >= 0; --a) {
        p.radix[a] = p.radix[a + 1] * taps[a + 1];
        p.plane_stride[a] = p.plane_stride[a + 1] * g.length[a + 1];
    }
    if (coded_radix_offsets(p, g, taps, largest_code)) {
        finish_coded_plan(p, g, block, bytes);
        return p;
    }
    coded_bit_fields(p, g, taps, largest_code, &total);
    p.rel.resize(static_cast<std::size_t>(total));
    for (index_t code = 0; code < static_cast<index_t>(total); ++code) {
        std::int64_t offset = 0;
        index_t rest = code;
        for (index_t a = 0; a < n; ++a) {
            offset += (rest / p.radix[a]) * g.dilation[a] * p.plane_stride[a];
            rest %= p.radix[a];
        }
        p.rel[code] = offset;
    }
    finish_coded_plan(p, g, block, bytes);
    return p;
}

// Codes that are the winner's offset from the window's first tap themselves, when the largest
// such offset fits in a code: each axis's place value is its tap step in the plane (dilation
// times plane stride), rel stays empty and the indices are a plain sum (coded_indices), which
// vectorises where a lookup in rel does not. Offsets keep the order of the mixed-radix codes
// (both grow with the tap along every axis), and a pass never compares codes, so the winners
// are the same. Returns whether it set p up so.
inline bool coded_radix_offsets(CodedPlan& p, const Geometry& g, const std::vector<index_t>& taps,
                                std::uint64_t largest_code) {
    std::uint64_t largest = 0;
    for (index_t a = 0; a < g.naxes; ++a) {
        largest += static_cast<std::uint64_t>(taps[a] - 1) *
                   static_cast<std::uint64_t>(g.dilation[a] * p.plane_stride[a]);
    }
    if (largest > largest_code) return false;
    for (index_t a = 0; a < g.naxes; ++a) p.radix[a] = g.dilation[a] * p.plane_stride[a];
    p.rel.clear();
    return true;
}

// One-byte codes looked up in rel: a bit field per axis (CodeFields) instead of mixed radix
// when the fields' widths fit in the code and the offsets in 31 bits. Any code that tells the
// taps apart serves (a pass never compares codes); fields let the indices be computed in
// vectors rather than looked up. Sets p.radix, p.fields and *total (the table's size) so and
// returns true, or leaves them.
inline bool coded_bit_fields(CodedPlan& p, const Geometry& g, const std::vector<index_t>& taps,
                             std::uint64_t largest_code, std::uint64_t* total) {
    const index_t n = g.naxes;
    if (largest_code > 255 || n > CodeFields::most_axes) return false;
    int bits[CodeFields::most_axes] = {};
    int sum = 0;
    std::uint64_t largest = 0;
    for (index_t a = 0; a < n; ++a) {
        while ((index_t{1} << bits[a]) < taps[a]) ++bits[a];
        sum += bits[a];
        largest += static_cast<std::uint64_t>(taps[a] - 1) *
                   static_cast<std::uint64_t>(g.dilation[a] * p.plane_stride[a]);
    }
    if ((std::uint64_t{1} << sum) - 1 > largest_code ||
        largest > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
        return false;
    }
    p.fields.axes = static_cast<int>(n);
    int shift = 0;
    for (index_t a = n - 1; a >= 0; --a) {
        p.radix[a] = index_t{1} << shift;
        p.fields.shift[a] = shift;
        p.fields.mask[a] = (std::int32_t{1} << bits[a]) - 1;
        p.fields.step[a] = static_cast<std::int32_t>(g.dilation[a] * p.plane_stride[a]);
        shift += bits[a];
    }
    *total = std::uint64_t{1} << sum;
    return true;
}

// The rest of a plan once its codes are chosen: empty last-axis windows, pitch, buffer sizes.
inline void finish_coded_plan(CodedPlan& p, const Geometry& g, index_t block, index_t bytes) {
    const index_t n = g.naxes;
    AxisTable h = axis_table(g, n - 1);
    for (index_t j = 0; j < h.out_len; ++j) {  // (interior windows have taps)
        if (j == h.lo && h.hi > h.lo && h.taps > 0) j = h.hi;
        if (j >= h.out_len) break;
        if (h.count[j] == 0) p.empty_last.push_back(j);
    }
    p.edges = std::max<index_t>(1, std::min(h.lo, h.out_len) + h.out_len - std::max(h.hi, h.lo));
    p.in_place = h.step == 1 && h.out_len <= h.length && h.hi > h.lo;
    // (One-byte values, and rows shorter than 32 elements: the run of every stride-1
    // window, then the pick, measured faster than their phases; rows of 13 and 6 took 26% and
    // 16% more instructions through the phases.)
    p.phased = !p.in_place && h.step >= 2 && h.taps >= 2 && h.hi > h.lo && bytes >= 2 &&
               h.length >= 32;
    // Irregular last axes (adaptive windows: mostly outside any regular interior run) whose
    // windows are short enough for flat runs of every window to cost less than reading each
    // window on its own: at most coded_count_runs distinct tap counts, the longest at most a
    // vector of entries (at least 4); a run computes (taps / lanes) vector steps per element
    // where a window read on its own costs a scalar step per tap.
    if (!p.in_place && !p.phased && 2 * std::max<index_t>(h.hi - h.lo, 0) < h.out_len) {
        index_t shortest = h.length + 1, longest = 0;
        for (index_t j = 0; j < h.out_len; ++j) {
            if (h.count[j] == 0) continue;
            shortest = std::min(shortest, h.count[j]);
            longest = std::max(longest, h.count[j]);
        }
        if (longest > 0 && longest - shortest < coded_count_runs &&
            longest <= std::max<index_t>(4, 32 / bytes)) {
            p.counted = true;
            p.count_min = shortest;
            p.count_runs = longest - shortest + 1;
            // Rows whose runs (values and codes) fill at most half of a 32 KiB L1.
            p.count_chunk = std::max<index_t>(
                1, coded_count_chunk_bytes / (p.count_runs * h.length * 2 * bytes));
#if OVPOOL_CORE_HAVE_AVX2
            if (bytes == 1) {
                simd::byte_pick_table(h.begin, h.count, h.out_len, p.count_min, &p.byte_picks,
                                      &p.byte_pick_groups);
            }
#endif
        }
    }
    // (Phased: each row's phases hold ceil(W / step) elements at the pitch.)
    p.pitch = p.in_place ? h.length
                         : p.phased ? std::max(h.out_len, (h.length + h.step - 1) / h.step)
                                    : h.out_len;
    size_coded_plan(p, g, block);
    p.usable = true;
}

// Fills p's output tables (row_start, row_empty, empty_rows, start) for g and a job of
// `planes` planes: once, for the plan
// a job keeps (max_planes_coded reads them).
inline void coded_output_tables(CodedPlan& p, const Geometry& g, index_t planes) {
    const index_t n = g.naxes;
    AxisTable h = axis_table(g, n - 1);
    const index_t out_rows = g.out_plane / h.out_len;
    p.row_start.assign(static_cast<std::size_t>(out_rows), 0);
    p.row_empty.assign(static_cast<std::size_t>(out_rows), 0);
    // Axis by axis, the rows over axes 0 .. a from those over 0 .. a-1 (row r's entries then
    // row r * out[a] + j's), from the last of them down so that each row is read before it
    // is overwritten: a few instructions a row, rather than a loop over the axes and a
    // carry per row (136K instructions a call for 2295 rows).
    index_t made = 1;
    for (index_t a = 0; a + 1 < n; ++a) {
        const index_t out_a = g.output[a], stride = p.plane_stride[a];
        const index_t* begin = g.begin + g.offset[a];
        const index_t* count = g.count + g.offset[a];
        for (index_t r = made - 1; r >= 0; --r) {
            const std::int64_t start = p.row_start[r];
            const char empty = p.row_empty[r];
            std::int64_t* to = p.row_start.data() + r * out_a;
            char* to_empty = p.row_empty.data() + r * out_a;
            for (index_t j = 0; j < out_a; ++j) {
                to[j] = start + begin[j] * stride;
                to_empty[j] = static_cast<char>(empty | (count[j] == 0));
            }
        }
        made *= out_a;
    }
    for (index_t r = 0; r < out_rows; ++r) {
        if (p.row_empty[r]) p.empty_rows.push_back(r);
    }
    // (Built per call, so only where it is read for several planes of several output rows:
    // planes of one row have it in h.begin already, and building a copy made one 1-D uint8
    // plane 258089 -> 129045 with indices 28% slower. A plane alone of short rows takes the
    // rows' loops of coded_row_indices instead: float16 51x90x56 -> 51x45x19 with indices
    // spent about 550K instructions a call filling and building its 43605 entries.)
    if (out_rows > 1 && planes > 1 && g.out_plane <= coded_flat_outputs) {
        p.start = allocate<std::int64_t>(g.out_plane);
        for (index_t r = 0; r < out_rows; ++r) {
            for (index_t j = 0; j < h.out_len; ++j) {
                p.start[r * h.out_len + j] = p.row_start[r] + h.begin[j];
            }
        }
    }
}

// Sets p's buffer sizes for blocks of `block` planes (the rest of the plan does not depend on
// the block, so a caller that picks the block from one plan's sizes resizes it).
inline void size_coded_plan(CodedPlan& p, const Geometry& g, index_t block) {
    const index_t n = g.naxes;
    AxisTable h = axis_table(g, n - 1);
    // Pass results: (planes) x (axes before a at input length) x (axes from a at output
    // length), the last at the pitch.
    index_t before = block * (g.in_plane / h.length), after = p.pitch;
    p.buffer = before * after;
    for (index_t a = n - 2; a >= 0; --a) {
        before /= g.length[a];
        after *= g.output[a];
        p.buffer = std::max(p.buffer, before * after);
    }
    // The runs: at most the block's planes (last axis, then the rows of its edge windows'
    // results) or a pass's input (the others).
    p.run = std::max(block * g.in_plane + block * (g.in_plane / h.length) * p.edges, p.buffer);
    if (p.phased) p.run = std::max(p.run, block * (g.in_plane / h.length) * h.step * p.pitch);
    if (p.counted) {
        p.count_stride = p.count_chunk * h.length;  // (a chunk's rows: see count_chunk)
        // (The byte picks' 16-byte loads may reach 16 bytes past the last run.)
        p.run = std::max(p.run, p.count_runs * p.count_stride + 16);
        p.pick.assign(static_cast<std::size_t>(h.out_len), 0);
        for (index_t j = 0; j < h.out_len; ++j) {
            if (h.count[j] == 0) continue;
            p.pick[j] = (h.count[j] - p.count_min) * p.count_stride + h.begin[j];
        }
    }
}


// d[i], c[i] = the value of r[i] and its code: rc[i] + add (rc null: add).
template <class Src, class A, class U>
inline void coded_first(A* d, U* c, const Src* r, const U* rc, U add, index_t n) {
    for (index_t i = 0; i < n; ++i) d[i] = load<A>(r[i]);
    if (rc != nullptr) {
        for (index_t i = 0; i < n; ++i) c[i] = static_cast<U>(rc[i] + add);
    } else {
        for (index_t i = 0; i < n; ++i) c[i] = add;
    }
}

// The first two taps r0 (codes r0c, or 0) and r1 (codes r1c + add, or add) in one sweep.
template <class Src, class A, class U>
inline void coded_first2(A* d, U* c, const Src* r0, const Src* r1, const U* r0c, const U* r1c,
                         U add, index_t n) {
    if (r0c != nullptr) {
        for (index_t i = 0; i < n; ++i) {
            A first = load<A>(r0[i]);
            A second = load<A>(r1[i]);
            U first_code = r0c[i];
            U code = static_cast<U>(r1c[i] + add);
            bool better = replaces(second, first);
            d[i] = better ? second : first;
            c[i] = better ? code : first_code;
        }
    } else {
        for (index_t i = 0; i < n; ++i) {
            A first = load<A>(r0[i]);
            A second = load<A>(r1[i]);
            bool better = replaces(second, first);
            d[i] = better ? second : first;
            c[i] = better ? add : U{0};
        }
    }
}

// d[i], c[i] replaced by r[i] and its code where r[i] beats d[i] (a later tap: ties keep d).
template <class Src, class A, class U>
inline void coded_next(A* d, U* c, const Src* r, const U* rc, U add, index_t n) {
    if (rc != nullptr) {
        for (index_t i = 0; i < n; ++i) {
            // (The candidate code is read whether or not it wins, so that the loop has no
            // conditional load and vectorises.)
            A value = load<A>(r[i]);
            U code = static_cast<U>(rc[i] + add);
            bool better = replaces(value, d[i]);
            d[i] = better ? value : d[i];
            c[i] = better ? code : c[i];
        }
    } else {
        for (index_t i = 0; i < n; ++i) {
            A value = load<A>(r[i]);
            bool better = replaces(value, d[i]);
            d[i] = better ? value : d[i];
            c[i] = better ? add : c[i];
        }
    }
}

// Window j's taps, `gap` apart, each a run of n entries from r (codes rc), into d and c;
// tap t adds t * place to the codes.
template <class Src, class A, class U>
inline void coded_window(A* d, U* c, const Src* r, const U* rc, index_t taps, index_t gap,
                         index_t place, index_t n, A empty_value) {
    if (taps == 0) {
        for (index_t i = 0; i < n; ++i) {
            d[i] = empty_value;
            c[i] = 0;
        }
        return;
    }
    if (taps == 1) {
        coded_first(d, c, r, rc, U{0}, n);
        return;
    }
#if OVPOOL_CORE_HAVE_AVX2
    // (Runs with codes of at least one block of the tap counts coded_shared_taps takes:
    // neighbouring entries' windows share their combines, simd::coded_shared_windows, about
    // three an entry; the same winners, see there.)
    if constexpr (std::is_same<Src, float>::value && std::is_same<A, float>::value &&
                  std::is_same<U, std::uint32_t>::value) {
        if (rc != nullptr && simd::coded_shared_taps<simd::SharedFloat8>(
                                 d, c, r, rc, taps, gap, static_cast<U>(place), n)) {
            return;
        }
    }
    if constexpr (std::is_same<Src, std::int16_t>::value && std::is_same<A, std::int16_t>::value &&
                  std::is_same<U, std::uint16_t>::value) {
        if (rc != nullptr && simd::coded_shared_taps<simd::SharedKeys16>(
                                 d, c, r, rc, taps, gap, static_cast<U>(place), n)) {
            return;
        }
    }
    if constexpr (std::is_same<Src, std::int16_t>::value && std::is_same<A, std::int16_t>::value &&
                  std::is_same<U, std::uint16_t>::value) {
        // (Sixteen entries at a time, every tap in registers, as below; fewer than eight
        // entries by the loops after.)
        auto offset = [gap](index_t t) { return t * gap; };
        index_t done =
            rc != nullptr
                ? simd::coded_taps16<true>(d, c, r, rc, taps, offset, static_cast<U>(place), n)
                : simd::coded_taps16<false>(d, c, r, rc, taps, offset, static_cast<U>(place), n);
        d += done;
        c += done;
        r += done;
        if (rc != nullptr) rc += done;
        n -= done;
        if (n == 0) return;
    }
    if constexpr (std::is_integral<A>::value && sizeof(A) == 1 && std::is_same<Src, A>::value) {
        // (1-byte integers, 32 entries at a time, every tap in registers; fewer than 8
        // entries by the loops after.)
        const index_t done =
            rc != nullptr
                ? simd::coded_taps_bytes<true>(d, c, r, rc, taps, gap, static_cast<U>(place), n)
                : simd::coded_taps_bytes<false>(d, c, r, rc, taps, gap, static_cast<U>(place), n);
        if (done == n) return;
    }
    if constexpr (std::is_same<Src, float>::value && std::is_same<A, float>::value &&
                  std::is_same<U, std::uint32_t>::value) {
        // (Eight entries at a time, every tap in registers: the same comparisons in the same
        // order, without storing and reloading the running winners at every tap.)
        auto offset = [gap](index_t t) { return t * gap; };
        if (rc != nullptr) {
            simd::coded_taps8<true>(d, c, r, rc, taps, offset, static_cast<U>(place), n);
        } else {
            simd::coded_taps8<false>(d, c, r, rc, taps, offset, static_cast<U>(place), n);
        }
        return;
    }
#endif
    coded_first2(d, c, r, r + gap, rc, rc != nullptr ? rc + gap : nullptr,
                       static_cast<U>(place), n);
    for (index_t t = 2; t < taps; ++t) {
        coded_next(d, c, r + t * gap, rc != nullptr ? rc + t * gap : nullptr,
                         static_cast<U>(t * place), n);
    }
}

// Windows first .. last-1 of one row, one at a time, into d[j] and c[j] (code = tap number
// times place).
template <class Src, class A, class U>
inline void coded_row_windows(const Src* row, A* d, U* c, const AxisTable& w, index_t first,
                              index_t last, index_t place, A empty_value) {
    for (index_t j = first; j < last; ++j) {
        if (w.count[j] == 0) {
            d[j] = empty_value;
            c[j] = 0;
            continue;
        }
        const Src* tap = row + w.begin[j];
        A best = load<A>(tap[0]);
        U code = 0;
        for (index_t t = 1; t < w.count[j]; ++t) {
            A value = load<A>(tap[t * w.dil]);
            bool better = replaces(value, best);
            best = better ? value : best;
            code = better ? static_cast<U>(t * place) : code;
        }
        d[j] = best;
        c[j] = code;
    }
}

// Edge windows first .. last-1 of the last axis for all rows at once: the columns they read
// are copied column-major into `columns` (so that each tap of a window is one contiguous run
// over the rows), reduced as the other passes reduce into `best`, `code` (window j's rows at
// (j - first) * rows), and written into d, c (32-bit values and codes under AVX2: the copy in,
// and the copy out of eight windows or more, eight rows by eight columns at a time, transposed
// in registers).
template <class Src, class A, class U>
void coded_edge_columns(const Src* x, A* d, U* c, index_t rows, index_t pitch,
                        const AxisTable& h, index_t first, index_t last, index_t place,
                        A* columns, A* best, U* code, A empty_value) {
    if (first >= last) return;
    index_t lo = h.length, hi = 0;
    for (index_t j = first; j < last; ++j) {
        if (h.count[j] == 0) continue;
        lo = std::min(lo, h.begin[j]);
        hi = std::max(hi, h.begin[j] + (h.count[j] - 1) * h.dil + 1);
    }
    index_t o = 0;
#if OVPOOL_CORE_HAVE_AVX2
    constexpr bool words = sizeof(Src) == 4 && std::is_same<Src, A>::value;
    if constexpr (words) {
        if (lo < hi && h.length >= 8) {
            o = simd::columns_of_rows8(reinterpret_cast<const float*>(x),
                                       reinterpret_cast<float*>(columns), rows, h.length, lo, hi);
        }
    }
    if constexpr (std::is_same<Src, std::int16_t>::value && std::is_same<A, std::int16_t>::value) {
        // (16-bit keys: eight rows by eight columns at a time, as above.)
        if (lo < hi && h.length >= 8) o = simd::columns_of_rows8(x, columns, rows, h.length, lo, hi);
    }
    // (1-byte values: 32 rows by 16 columns at a time, in and out.)
    constexpr bool bytes = sizeof(Src) == 1 && std::is_same<Src, A>::value;
    if constexpr (bytes) o = simd::columns_of_byte_rows(x, columns, rows, h.length, lo, hi);
#endif
    for (; o < rows && lo < hi; ++o) {
        const Src* row = x + o * h.length;
        for (index_t k = lo; k < hi; ++k) columns[(k - lo) * rows + o] = load<A>(row[k]);
    }
    for (index_t j = first; j < last; ++j) {
        index_t from = h.count[j] > 0 ? (h.begin[j] - lo) * rows : 0;
        coded_window(best + (j - first) * rows, code + (j - first) * rows,
                     static_cast<const A*>(columns + from), static_cast<const U*>(nullptr),
                     h.count[j], h.dil * rows, place, rows, empty_value);
    }
    o = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (words) {
        // (Groups of fewer than eight windows measured faster by the loop below.)
        if (last - first >= 8) {
            o = simd::rows_of_columns8(reinterpret_cast<const float*>(best),
                                       reinterpret_cast<float*>(d + first), rows, pitch,
                                       last - first);
            simd::rows_of_columns8(reinterpret_cast<const float*>(code),
                                   reinterpret_cast<float*>(c + first), rows, pitch,
                                   last - first);
        }
    }
    if constexpr (bytes) {
        // (Each row's 16 bytes from its first window within the rows' entries.)
        o = simd::rows_of_byte_columns(best, d + first, rows, pitch, last - first,
                                       rows * pitch - first);
        simd::rows_of_byte_columns(code, c + first, rows, pitch, last - first,
                                   rows * pitch - first);
    }
#endif
    for (index_t j = first; j < last; ++j) {
        for (index_t r = o; r < rows; ++r) {
            d[r * pitch + j] = best[(j - first) * rows + r];
            c[r * pitch + j] = code[(j - first) * rows + r];
        }
    }
}

// Strided windows lo .. hi-1 of each of `rows` rows picked from the run of every stride-1
// window (row o's at run + o * W; `readable` entries of values and of codes) into d, c at
// `pitch` (= out_len: entries past a row's picks are its edge windows or a later row's, which
// are written after the picks).
template <index_t Step, class A, class U>
void coded_pick_rows(const A* run_values, const U* run_codes, A* d, U* c, index_t rows,
                     const AxisTable& h, index_t pitch, index_t readable) {
    const index_t step = Step > 0 ? Step : h.step, n = h.hi - h.lo;
    index_t first_row = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (sizeof(A) == 1) {
        // 1-byte values and codes by byte shuffles (simd::pick_bytes), row by row while the
        // reads stay in the run.
        for (; first_row < rows; ++first_row) {
            const index_t from = first_row * h.length, room = (rows - first_row) * pitch - h.lo;
            A* to = d + first_row * pitch + h.lo;
            U* to_code = c + first_row * pitch + h.lo;
            if (simd::pick_bytes(run_values + from, to, n, step, readable - from, room) < n ||
                simd::pick_bytes(run_codes + from, to_code, n, step, readable - from, room) < n) {
                break;
            }
        }
    }
    if constexpr (sizeof(A) == 2) {
        // 16-bit keys and codes, rows of at most eight picks: one byte-shuffled vector a row
        // (simd::pick_rows16), rather than one scalar copy a pick.
        const index_t writable = rows * pitch - h.lo;
        first_row = simd::pick_rows16(run_values, d + h.lo, rows, n, step, h.length, pitch,
                                      readable, writable);
        simd::pick_rows16(run_codes, c + h.lo, first_row, n, step, h.length, pitch, readable,
                          writable);
    }
#else
    (void)readable;
#endif
    if (n < 8) {
        // (Few windows a row: one window of every row at a time, rather than loops of n.)
        for (index_t j = 0; j < n; ++j) {
            const A* from = run_values + j * step;
            const U* from_code = run_codes + j * step;
            A* to = d + h.lo + j;
            U* to_code = c + h.lo + j;
            for (index_t o = first_row; o < rows; ++o) {
                to[o * pitch] = from[o * h.length];
                to_code[o * pitch] = from_code[o * h.length];
            }
        }
        return;
    }
    for (index_t o = first_row; o < rows; ++o) {
        const A* from = run_values + o * h.length;
        const U* from_code = run_codes + o * h.length;
        A* to = d + o * pitch + h.lo;
        U* to_code = c + o * pitch + h.lo;
        for (index_t j = 0; j < n; ++j) to[j] = from[j * step];
        for (index_t j = 0; j < n; ++j) to_code[j] = from_code[j * step];
    }
}

// The phases of `rows` rows of x (length W each) for windows of step s: phase q of row o,
// at phases + q * rows * pitch + o * pitch, holds the row's elements q, q + s, q + 2s, ...
// (ceil((W - q) / s) of them), then `fill` up to the pitch (16-bit keys in AVX2 builds: mostly
// the next row's elements, see below; no window of [lo, hi) reads them). Window j's tap at
// row position begin[lo] + (j - lo) * s + t * dil is then element j - lo + (begin[lo] + t * dil) / s of
// phase (begin[lo] + t * dil) % s: each tap of the strided windows is one flat run over all
// rows, read with plain vector loads, and the strided reads are made once per element rather
// than once per tap (Step: s as a constant, so that the compiler vectorises them; 0: any s).
template <index_t Step, class Src, class A>
void coded_phases(const Src* x, A* phases, index_t rows, index_t width, index_t pitch,
                  index_t any_step, A fill) {
    const index_t step = Step > 0 ? Step : any_step;
    const index_t full = width / step, block = rows * pitch;
    for (index_t o = 0; o < rows; ++o) {
        const Src* row = x + o * width;
        A* to = phases + o * pitch;
        index_t j = 0;
#if OVPOOL_CORE_HAVE_AVX2
        // (32-bit elements, eight groups at a time: permuted out of vectors.)
        if constexpr (Step > 0 && sizeof(Src) == 4 && std::is_same<Src, A>::value) {
            if (full >= 8) {
                simd::row_phases8<static_cast<int>(Step)>(reinterpret_cast<const float*>(row),
                                                          reinterpret_cast<float*>(to), block,
                                                          full);
                j = full;
            }
        }
        // (16-bit keys, eight or sixteen groups at a time: byte shuffles of the row's vectors.
        // Where the block's input reaches that far, every group up to the pitch, the partial
        // one included: its slots past the row's end then hold the next row's elements, not
        // the fill, which only windows outside [lo, hi) would read, and those are rewritten
        // by the edge windows or are never outputs.)
        if constexpr (Step > 0 && std::is_same<Src, std::int16_t>::value &&
                      std::is_same<A, std::int16_t>::value) {
            if (full >= 8) {
                const index_t reach =
                    pitch > full && (o * width + pitch * step <= rows * width) ? pitch : full;
                simd::row_phases16<static_cast<int>(Step)>(row, to, block, reach);
                j = reach;
            }
        }
#endif
        for (; j < full; ++j) {
            for (index_t q = 0; q < step; ++q) to[q * block + j] = load<A>(row[j * step + q]);
        }
        // The partial group (full * step + q < width), then the fill.
        if (j < pitch) {
            for (index_t q = 0; q < step; ++q) {
                to[q * block + full] = full * step + q < width ? load<A>(row[full * step + q])
                                                               : fill;
            }
            for (index_t j = full + 1; j < pitch; ++j) {
                for (index_t q = 0; q < step; ++q) to[q * block + j] = fill;
            }
        }
    }
}

// The strided windows lo .. hi-1 of a last axis (plan.phased) of `rows` rows of x into d, c
// at plan.pitch, through their phases (coded_phases, in `phases`: plan.run elements). The
// run covers every row's windows and the slots between them, which the edge windows then
// overwrite or which are never outputs.
template <class Src, class A, class U>
void coded_phased_rows(const Src* x, A* d, U* c, A* phases, index_t rows, const AxisTable& h,
                       index_t pitch, index_t place, A empty_value) {
    if (h.step == 2) {
        coded_phases<2>(x, phases, rows, h.length, pitch, 2, empty_value);
    } else if (h.step == 3) {
        coded_phases<3>(x, phases, rows, h.length, pitch, 3, empty_value);
    } else if (h.step == 4) {
        coded_phases<4>(x, phases, rows, h.length, pitch, 4, empty_value);
    } else {
        coded_phases<0>(x, phases, rows, h.length, pitch, h.step, empty_value);
    }
    auto tap = [&](index_t t) -> const A* {
        index_t at = h.begin[h.lo] + t * h.dil;
        return phases + (at % h.step) * rows * pitch + at / h.step;
    };
    const index_t n = (rows - 1) * pitch + (h.hi - h.lo);
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<A, float>::value && std::is_same<U, std::uint32_t>::value) {
        // (Eight entries at a time, every tap in registers, as in coded_window.)
        const A* first = tap(0);
        std::vector<index_t> offsets(static_cast<std::size_t>(h.taps));
        for (index_t t = 0; t < h.taps; ++t) offsets[t] = tap(t) - first;
        const index_t* at = offsets.data();
        auto offset = [at](index_t t) { return at[t]; };
        simd::coded_taps8<false>(d + h.lo, c + h.lo, first, static_cast<const U*>(nullptr),
                                 h.taps, offset, static_cast<U>(place), n);
        return;
    }
#endif
    index_t done = 0;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<A, std::int16_t>::value && std::is_same<U, std::uint16_t>::value) {
        // (16-bit keys, sixteen entries at a time; fewer than eight by the loops below.)
        const A* first = tap(0);
        std::vector<index_t> offsets(static_cast<std::size_t>(h.taps));
        for (index_t t = 0; t < h.taps; ++t) offsets[t] = tap(t) - first;
        const index_t* at = offsets.data();
        auto offset = [at](index_t t) { return at[t]; };
        done = simd::coded_taps16<false>(d + h.lo, c + h.lo, first,
                                         static_cast<const U*>(nullptr), h.taps, offset,
                                         static_cast<U>(place), n);
    }
#endif
    if (done == n) return;
    coded_first2(d + h.lo + done, c + h.lo + done, tap(0) + done, tap(1) + done,
                 static_cast<const U*>(nullptr), static_cast<const U*>(nullptr),
                 static_cast<U>(place), n - done);
    for (index_t t = 2; t < h.taps; ++t) {
        coded_next(d + h.lo + done, c + h.lo + done, tap(t) + done,
                   static_cast<const U*>(nullptr), static_cast<U>(t * place), n - done);
    }
}

// d[i], c[i] = the later tap r[i] (code add) where it beats prev[i], else prev[i], pc[i].
template <class Src, class A, class U>
inline void coded_extend(A* d, U* c, const A* prev, const U* pc, const Src* r, U add, index_t n) {
    for (index_t i = 0; i < n; ++i) {
        // (Both earlier entries read whether or not they win, so that the loop has no
        // conditional load and vectorises.)
        A value = load<A>(r[i]);
        A best = prev[i];
        U code = pc[i];
        bool better = replaces(value, best);
        d[i] = better ? value : best;
        c[i] = better ? add : code;
    }
}

// An irregular last axis (plan.counted: adaptive windows, with no interior run that one flat
// strided run could read): for each tap count k of its windows, every stride-1 window of k taps
// at every position of the block's rows, as one flat run (the run of k + 1 taps is the run of
// k extended by one tap, so each count costs one vector sweep); then each window is picked
// from the run of its count at its first tap. Positions whose windows would cross a row's end
// are computed too but never picked. Taps combine in window order, as everywhere.
template <class Src, class A, class U>
void coded_counted_rows(const Src* x, A* d, U* c, A* run_values, U* run_codes, index_t rows,
                        const AxisTable& h, const CodedPlan& plan, index_t place,
                        A empty_value) {
    const index_t width = h.length, pitch = plan.pitch, stride = plan.count_stride;
    const index_t* pick = plan.pick.data();
    // (A few rows at a time, so that the runs are still in L1 when the picks read them.)
    for (index_t first = 0; first < rows; first += plan.count_chunk) {
        const index_t part = std::min(plan.count_chunk, rows - first), total = part * width;
        const Src* from_x = x + first * width;
        for (index_t k = 0; k < plan.count_runs; ++k) {
            // (A window of `taps` taps fits in a row, so n >= 1.)
            const index_t taps = plan.count_min + k, n = total - (taps - 1) * h.dil;
            A* rv = run_values + k * stride;
            U* rc = run_codes + k * stride;
            if (k == 0) {
                coded_window(rv, rc, from_x, static_cast<const U*>(nullptr), taps, h.dil,
                             place, n, empty_value);
            } else {
                coded_extend(rv, rc, static_cast<const A*>(rv - stride),
                             static_cast<const U*>(rc - stride), from_x + (taps - 1) * h.dil,
                             static_cast<U>((taps - 1) * place), n);
            }
        }
        for (index_t o = 0; o < part; ++o) {
            const A* from = run_values + o * width;
            const U* from_code = run_codes + o * width;
            A* to = d + (first + o) * pitch;
            U* to_code = c + (first + o) * pitch;
#if OVPOOL_CORE_HAVE_AVX2
            if constexpr (sizeof(A) == 1) {
                if (!plan.byte_picks.empty()) {
                    // (Sixteen windows at a time by byte shuffles of the runs.)
                    simd::pick_bytes_by_table(from, from_code, to, to_code, stride, h.out_len,
                                              plan.byte_picks.data(),
                                              plan.byte_pick_groups.data());
                    for (index_t j : plan.empty_last) {
                        to[j] = empty_value;
                        to_code[j] = 0;
                    }
                    continue;
                }
            }
#endif
            for (index_t j = 0; j < h.out_len; ++j) {
                to[j] = from[pick[j]];
                to_code[j] = from_code[pick[j]];
            }
            for (index_t j : plan.empty_last) {
                to[j] = empty_value;
                to_code[j] = 0;
            }
        }
    }
}

// The pass over the last axis: `rows` rows of x (length W each) into d, c at plan.pitch.
// run_values / run_codes: plan.run elements (strided and irregular windows only). half: the
// 16-bit floats whose keys x is to hold (half.keys == x), keyed here as far as they are read
// from x (HalfSource).
template <class Src, class A, class U>
void coded_last_pass(const Src* x, A* d, U* c, A* run_values, U* run_codes, index_t rows,
                     const AxisTable& h, const CodedPlan& plan, A empty_value,
                     const HalfSource& half = HalfSource()) {
    const index_t width = h.length, pitch = plan.pitch;
    const index_t place = plan.radix.back();
    // Rows keyed_from .. rows-1 of x hold their keys (all of them unless half.bits is given);
    // keys_from(o) makes those of rows o onwards (the paths below read x from a row on).
    index_t keyed_from = half.bits != nullptr ? rows : 0;
    auto keys_from = [&](index_t o) {
        if (o >= keyed_from) return;
        half_keys_of(half.bits + o * width, half.keys + o * width, (keyed_from - o) * width,
                     half.infinity);
        keyed_from = o;
    };
#if OVPOOL_CORE_HAVE_AVX2
    // (Picks straight from the bits: the keys of the 16-bit floats made as they are picked.)
    const simd::HalfKeys16 key_of(half.infinity);
    const std::uint16_t* bits = half.bits;
#endif
    // (Values of four or eight bytes in blocks of coded_edge_rows rows or more go by the edge
    // columns, whose copies cost less for wider values: by the runs, the last-axis pass of
    // int32 62x65 -> 138x108 took 41% more instructions, float64 71x78 -> 167x111 4% more in
    // all.)
    if (plan.counted && (sizeof(A) <= 2 || rows < coded_edge_rows)) {
        keys_from(0);
        coded_counted_rows(x, d, c, run_values, run_codes, rows, h, plan, place, empty_value);
        return;
    }
    if (h.hi > h.lo && h.taps == 1 && !plan.in_place) {
        // One tap per window with a stride: the windows are every step-th element, so they
        // are picked straight from x (code 0) rather than from a run of every element.
        // (Entries past a row's picks may be overwritten: they are its edge windows or a
        // later row's, written after.)
        const index_t n = h.hi - h.lo;
        index_t done = 0;
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (sizeof(A) == 1 && std::is_same<Src, A>::value) {
            // (1-byte values: sixteen picks of a row at a time, two rows to a vector, codes 0
            // written beside them, as for windows of more taps below, rather than a pick
            // call per row: int8 rows of 41, 14 windows three apart.)
            done = simd::coded_pick_taps_bytes(x, d + h.lo, c + h.lo, rows, n, h.step, width,
                                               pitch, h.begin[h.lo], index_t{1}, h.dil,
                                               std::uint8_t{0}, rows * width,
                                               rows * pitch - h.lo);
        }
        if constexpr (std::is_same<Src, std::int16_t>::value &&
                      std::is_same<A, std::int16_t>::value) {
            // (16-bit keys: the same by simd::coded_pick_taps16, eight picks of a row at a
            // time, two rows to a vector, rather than one scalar copy a pick: bfloat16 rows
            // of 133, 45 windows three apart.)
            if (bits != nullptr) {
                done = simd::coded_pick_taps16(bits, key_of, d + h.lo, c + h.lo, rows, n, h.step,
                                               width, pitch, h.begin[h.lo], index_t{1}, h.dil,
                                               std::uint16_t{0}, rows * width,
                                               rows * pitch - h.lo);
            }
        }
#endif
        keys_from(done);
        for (index_t o = done; o < rows; ++o) {
            const index_t at = o * width + h.begin[h.lo];
            pick_strided(x + at, d + o * pitch + h.lo, n, h.step, rows * width - at,
                         (rows - o) * pitch - h.lo);
        }
        // (Codes 0, in one run over the rows: the edge windows' entries in it are written
        // after.)
        if (done < rows) std::fill(c + done * pitch + h.lo, c + (rows - 1) * pitch + h.hi, U{0});
    } else if (plan.phased || h.hi > h.lo) {
        index_t done = 0;  // rows whose strided windows are written already
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (std::is_same<Src, std::int16_t>::value &&
                      std::is_same<A, std::int16_t>::value) {
            // 16-bit keys, strided windows: each tap's picks straight from the rows by byte
            // shuffles, eight windows at a time, combined in registers, for rows shorter than
            // 32 (bfloat16 rows of 13, three windows of two taps four apart: 29 instructions
            // a row through the run of all ten stride-1 windows and the picks) and for longer
            // rows of windows of two taps, or of no more taps than the step (float16 rows of
            // 56, 19 windows of two taps three apart: 160 instructions a row through the
            // phases; bfloat16 rows of 38, 13 windows of three taps three apart: 100 through
            // the phases, 70 picked). (The phases cost less with more taps than that: one
            // vector step per tap and sixteen windows, after the split; bfloat16 rows of 143,
            // windows of five taps two apart, took 1.4x the instructions picked.)
            if (bits != nullptr && !plan.in_place &&
                (!plan.phased || h.taps <= std::max<index_t>(2, h.step))) {
                done = simd::coded_pick_taps16(bits, key_of, d + h.lo, c + h.lo, rows,
                                               h.hi - h.lo, h.step, width, pitch, h.begin[h.lo],
                                               h.taps, h.dil, static_cast<std::uint16_t>(place),
                                               rows * width, rows * pitch - h.lo);
            }
        }
        if constexpr (sizeof(A) == 1 && std::is_same<Src, A>::value) {
            // 1-byte values, strided windows: the same, sixteen windows a row at a time (two
            // rows to a 256-bit vector), rather than every stride-1 window of the rows in a
            // run and then its values and codes picked (int8 rows of 53, windows of five taps
            // two apart: 107 instructions a row through the run).
            if (!plan.in_place && !plan.phased) {
                done = simd::coded_pick_taps_bytes(x, d + h.lo, c + h.lo, rows, h.hi - h.lo,
                                                   h.step, width, pitch, h.begin[h.lo], h.taps,
                                                   h.dil, static_cast<std::uint8_t>(place),
                                                   rows * width, rows * pitch - h.lo);
            }
        }
#endif
        keys_from(done);
        if (done < rows && plan.phased) {
            coded_phased_rows(x + done * width, d + done * pitch, c + done * pitch, run_values,
                              rows - done, h, pitch, place, empty_value);
        } else if (done < rows) {
            // Every stride-1 window from begin[lo] on, across rows: run element k holds the
            // window whose first tap is x[begin[lo] + k].
            const index_t rest = rows - done;
            const Src* xs = x + done * width;
            A* ds = d + done * pitch;
            U* cs = c + done * pitch;
            index_t span = (h.hi - h.lo - 1) * h.step + 1;
            index_t n = (rest - 1) * width + span;
            A* rv = plan.in_place ? ds + h.lo : run_values;
            U* rc = plan.in_place ? cs + h.lo : run_codes;
            coded_window(rv, rc, xs + h.begin[h.lo], static_cast<const U*>(nullptr), h.taps,
                         h.dil, place, n, empty_value);
            if (!plan.in_place) {
                // (Steps 2 to 4 as constants: the compiler vectorises the strided reads.)
                if (h.step == 2) {
                    coded_pick_rows<2>(run_values, run_codes, ds, cs, rest, h, pitch, plan.run);
                } else if (h.step == 3) {
                    coded_pick_rows<3>(run_values, run_codes, ds, cs, rest, h, pitch, plan.run);
                } else if (h.step == 4) {
                    coded_pick_rows<4>(run_values, run_codes, ds, cs, rest, h, pitch, plan.run);
                } else {
                    coded_pick_rows<0>(run_values, run_codes, ds, cs, rest, h, pitch, plan.run);
                }
            }
        }
    }
    index_t left = std::min(h.lo, h.out_len), right = std::max(h.hi, h.lo);
    bool left_done = false, right_done = false;
#if OVPOOL_CORE_HAVE_AVX2
    if constexpr (std::is_same<Src, std::int16_t>::value && std::is_same<A, std::int16_t>::value) {
        // 16-bit keys: each side's edge windows, when their taps lie within eight elements,
        // one shuffle a tap for the whole side of a row (simd::coded_edge_picks16), their
        // empty windows below.
        const std::uint16_t code_place = static_cast<std::uint16_t>(place);
        // (From the keys when the rows are keyed already, else from the bits.)
        const bool from_keys = keyed_from == 0;
        const std::uint16_t* edge_bits =
            from_keys ? reinterpret_cast<const std::uint16_t*>(x) : bits;
        const simd::HalfKeys16* edge_key_of = from_keys ? nullptr : &key_of;
        left_done = simd::coded_edge_picks16(edge_bits, edge_key_of, d, c, rows, width, pitch,
                                             h.begin, h.count, h.dil, 0, left, code_place);
        right_done = simd::coded_edge_picks16(edge_bits, edge_key_of, d, c, rows, width, pitch,
                                              h.begin, h.count, h.dil, right, h.out_len,
                                              code_place);
    }
    if constexpr (sizeof(A) == 1 && std::is_same<Src, A>::value) {
        // 1-byte values: the same, sixteen windows to a shuffle, two rows to a vector
        // (simd::coded_edge_picks_bytes), for blocks of rows the edge columns would take
        // (fewer rows go window by window below, at a few instructions a tap): int8 rows of
        // 53, two edge windows a side of three and four taps two apart, took about 90
        // instructions a row through the columns' 32x16 transposes in and out.
        if (rows >= coded_edge_rows) {
            const std::uint8_t code_place = static_cast<std::uint8_t>(place);
            left_done = simd::coded_edge_picks_bytes(x, d, c, rows, width, pitch, h.begin,
                                                     h.count, h.dil, 0, left, code_place);
            right_done = simd::coded_edge_picks_bytes(x, d, c, rows, width, pitch, h.begin,
                                                      h.count, h.dil, right, h.out_len,
                                                      code_place);
        }
    }
    for (index_t j : plan.empty_last) {
        if (!(j < left ? left_done : right_done)) continue;
        for (index_t o = 0; o < rows; ++o) {
            d[o * pitch + j] = empty_value;
            c[o * pitch + j] = 0;
        }
    }
#endif
    // (A side done above is an empty range below.)
    if (left_done) left = 0;
    if (right_done) right = h.out_len;
    if (left > 0 || right < h.out_len) keys_from(0);
    if (rows >= coded_edge_rows) {
        // (The run buffer is free again: the run has been consumed. The columns take at
        // most rows * W elements from its start, the results the edge windows' rows from its
        // end.)
        A* best = run_values + plan.run - rows * plan.edges;
        U* code = run_codes + plan.run - rows * plan.edges;
        coded_edge_columns(x, d, c, rows, pitch, h, 0, left, place, run_values, best, code,
                           empty_value);
        coded_edge_columns(x, d, c, rows, pitch, h, right, h.out_len, place, run_values, best,
                           code, empty_value);
    } else {
        for (index_t o = 0; o < rows; ++o) {
            const Src* row = x + o * width;
            coded_row_windows(row, d + o * pitch, c + o * pitch, h, 0, left, place,
                              empty_value);
            coded_row_windows(row, d + o * pitch, c + o * pitch, h, right, h.out_len, place,
                              empty_value);
        }
    }
    // The last row's slots past the outputs (in place only): never outputs, but later
    // passes read them in their flat runs.
    for (index_t j = h.out_len; j < pitch; ++j) {
        d[(rows - 1) * pitch + j] = empty_value;
        c[(rows - 1) * pitch + j] = 0;
    }
}

// Whether coded_column_pass computes the strided windows of v over rows of `inner` entries
// of type A as runs of every stride-1 window (see there) rather than window by window.
template <class A>
inline bool coded_short_strided(const AxisTable& v, index_t inner) {
    constexpr index_t lanes = 32 / static_cast<index_t>(sizeof(A));
    const index_t strided_span = v.hi > v.lo ? (v.hi - v.lo - 1) * v.step + 1 : 0;
    const index_t row_steps = sizeof(A) <= 2 && inner < lanes ? 2 : (inner + lanes - 1) / lanes;
    const bool rows_cheaper =
        inner >= 8 && (v.hi - v.lo) * row_steps * lanes <= strided_span * inner;
    return v.hi > v.lo && v.step != 1 && v.taps > 1 &&
           inner < coded_short_run / static_cast<index_t>(sizeof(A)) && !rows_cheaper;
}

#if OVPOOL_CORE_HAVE_AVX2
// Whether coded_narrow_windows16 takes the pass over v of 16-bit keys, rows of `inner` of
// which the first `narrow` are kept: strided windows of 2 to 8 taps that coded_column_pass
// would read window by window.
inline bool coded_narrows(const AxisTable& v, index_t inner, index_t narrow) {
    return narrow >= 8 && narrow < inner && v.hi > v.lo && v.step != 1 && v.taps >= 2 &&
           v.taps <= 8 && !coded_short_strided<std::int16_t>(v, inner);
}

// coded_column_pass for 16-bit keys (coded_narrows) with only the first `narrow` entries of
// each row of `inner` kept, into dst (outer, out_len, narrow): the outputs of a last-axis pass
// whose rows are wider than its outputs (at its pitch), so that later passes and the outputs
// read rows at the output's pitch (bfloat16 rows of 33 keys, 32 outputs: three vector steps
// a row become two, and the outputs one run a block instead of one a row). The interior
// windows by coded_windows16 and the edges by coded_taps16, as coded_column_pass takes them
// (apart from it, so that its own code stays as it was).
template <class A, class U>
OVPOOL_NOINLINE void coded_narrow_windows16(const A* src, const U* src_code, A* dst,
                                            U* dst_code, index_t outer, index_t inner,
                                            index_t narrow, const AxisTable& v, index_t place,
                                            A empty_value) {
    const index_t gap = v.dil * inner;
    for (index_t o = 0; o < outer; ++o) {
        const A* block = src + o * v.length * inner;
        const U* block_code = src_code + o * v.length * inner;
        A* out = dst + o * v.out_len * narrow;
        U* out_code = dst_code + o * v.out_len * narrow;
        for (index_t j = 0; j < v.out_len; ++j) {
            if (j == v.lo) {
                simd::coded_windows16(out + j * narrow, out_code + j * narrow,
                                      block + v.begin[j] * inner, block_code + v.begin[j] * inner,
                                      v.hi - j, v.step * inner, v.taps, gap,
                                      static_cast<U>(place), narrow);
                j = v.hi - 1;
                continue;
            }
            // (Edge windows: as coded_window takes 16-bit keys, empty ones filled, the others
            // by coded_taps16, whose 1-tap windows are copies.)
            if (v.count[j] == 0) {
                std::fill(out + j * narrow, out + (j + 1) * narrow, empty_value);
                std::fill(out_code + j * narrow, out_code + (j + 1) * narrow, U{0});
                continue;
            }
            auto offset = [gap](index_t t) { return t * gap; };
            simd::coded_taps16<true>(out + j * narrow, out_code + j * narrow,
                                     block + v.begin[j] * inner, block_code + v.begin[j] * inner,
                                     v.count[j], offset, static_cast<U>(place), narrow);
        }
    }
}
#endif

// The pass over axis a < n-1: src viewed as (outer, length, inner) into dst (outer, out_len,
// inner), codes gaining t * place at tap t.
template <class A, class U>
void coded_column_pass(const A* src, const U* src_code, A* dst, U* dst_code, A* run_values,
                       U* run_codes, index_t outer, index_t inner, const AxisTable& v,
                       index_t place, A empty_value, index_t run_size) {
    const index_t gap = v.dil * inner;
#if OVPOOL_CORE_HAVE_AVX2
    const index_t dst_size = outer * v.out_len * inner;
#else
    (void)run_size;
#endif
    // Strided windows over short rows (below): every stride-1 window of the interior in one
    // flat run per tap. When the blocks' runs would be short against their blocks, one run
    // over all blocks at once, across the rows between them too (computed, never picked):
    // fewer vector steps than a vector or two a block plus a run's set-up per block (bfloat16
    // blocks of ten rows of three entries, seven taps two apart: a run of 9 entries each).
    // Rows of eight entries or more whose strided windows, each read straight from its rows
    // (whole vectors, the last overlapping the one before; rows shorter than a vector of 1-
    // or 2-byte entries in two half vectors), take no more vector steps than that run: window
    // by window below, with no run and no copies out of it (rows of 33 16-bit keys, windows
    // of six taps three apart: the run computed three windows for each one kept).
    constexpr index_t lanes = 32 / static_cast<index_t>(sizeof(A));
    const index_t strided_span = v.hi > v.lo ? (v.hi - v.lo - 1) * v.step + 1 : 0;
    const bool short_strided = coded_short_strided<A>(v, inner);
    const index_t span = short_strided ? strided_span : 0;
    const bool one_run =
        short_strided && outer > 1 &&
        (outer * v.length * inner + lanes - 1) / lanes <=
            outer * ((span * inner + lanes - 1) / lanes + 1);
    if (one_run) {
        coded_window(run_values, run_codes, src + v.begin[v.lo] * inner,
                     src_code + v.begin[v.lo] * inner, v.taps, gap, place,
                     ((outer - 1) * v.length + span) * inner, empty_value);
    }
    for (index_t o = 0; o < outer; ++o) {
        const A* block = src + o * v.length * inner;
        const U* block_code = src_code + o * v.length * inner;
        A* out = dst + o * v.out_len * inner;
        U* out_code = dst_code + o * v.out_len * inner;
        for (index_t j = 0; j < v.out_len; ++j) {
            bool interior = v.lo <= j && j < v.hi;
            if (interior && v.step == 1) {
                // Stride-1 interior windows: one flat run per tap.
                index_t n = (v.hi - v.lo) * inner;
                coded_window(out + j * inner, out_code + j * inner, block + v.begin[j] * inner,
                             block_code + v.begin[j] * inner, v.taps, gap, place, n,
                             empty_value);
                j = v.hi - 1;
                continue;
            }
            if (interior && v.taps == 1) {
                // One tap a window: the rows the windows read, copied with their codes.
                for (index_t k = j; k < v.hi; ++k) {
                    coded_first(out + k * inner, out_code + k * inner,
                                block + v.begin[k] * inner, block_code + v.begin[k] * inner,
                                U{0}, inner);
                }
                j = v.hi - 1;
                continue;
            }
            if (interior && short_strided) {
                // Strided windows over short rows: every stride-1 window in one flat run per
                // tap (vector loops rather than loops shorter than a vector), then the
                // strided ones copied out.
                const index_t from = one_run ? o * v.length * inner : 0;
                if (!one_run) {
                    coded_window(run_values, run_codes, block + v.begin[j] * inner,
                                 block_code + v.begin[j] * inner, v.taps, gap, place,
                                 span * inner, empty_value);
                }
                const A* run_block = run_values + from;
                const U* run_block_codes = run_codes + from;
                index_t k = 0;
#if OVPOOL_CORE_HAVE_AVX2
                if constexpr (sizeof(A) == 2 && sizeof(U) == 2) {
                    // (Rows of at most eight 16-bit entries: one 16-byte copy each, rather
                    // than a memmove call; the entries past a row are later windows' rows,
                    // written after, or this block's edge windows', or a later block's, so
                    // only copies that stay inside the run and the pass's output go so.)
                    if (inner <= 8) {
                        const index_t at = (o * v.out_len + j) * inner;
                        for (; k < v.hi - v.lo && from + k * v.step * inner + 8 <= run_size &&
                               at + k * inner + 8 <= dst_size;
                             ++k) {
                            simd::copy16_bytes(run_block + k * v.step * inner,
                                               out + (j + k) * inner);
                            simd::copy16_bytes(run_block_codes + k * v.step * inner,
                                               out_code + (j + k) * inner);
                        }
                    }
                }
#endif
                for (; k < v.hi - v.lo; ++k) {
                    std::copy(run_block + k * v.step * inner,
                              run_block + (k * v.step + 1) * inner, out + (j + k) * inner);
                    std::copy(run_block_codes + k * v.step * inner,
                              run_block_codes + (k * v.step + 1) * inner,
                              out_code + (j + k) * inner);
                }
                j = v.hi - 1;
                continue;
            }
#if OVPOOL_CORE_HAVE_AVX2
            if constexpr (std::is_same<A, std::int16_t>::value &&
                          std::is_same<U, std::uint16_t>::value) {
                // (16-bit keys, the strided interior windows over rows of eight entries or
                // more: all of the block's in one call, the taps' offsets and code increments
                // made once, not once a window.)
                if (interior && simd::coded_windows16(out + j * inner, out_code + j * inner,
                                                      block + v.begin[j] * inner,
                                                      block_code + v.begin[j] * inner,
                                                      v.hi - j, v.step * inner, v.taps, gap,
                                                      static_cast<U>(place), inner)) {
                    j = v.hi - 1;
                    continue;
                }
            }
#endif
            coded_window(out + j * inner, out_code + j * inner, block + v.begin[j] * inner,
                         block_code + v.begin[j] * inner, v.count[j], gap, place, inner,
                         empty_value);
        }
    }
}

// index[j] for the n outputs of one row: base + the winner's offset, row_start + begin[j] +
// rel[code[j]] (rel null: + code[j], the codes being offsets) modulo `modulus` when that is
// not 0; base alone (offset 0) for empty windows: the whole row when row_empty, else the
// last-axis windows in `empty`.
template <class I, class U>
inline void coded_indices(I* index, const U* code, const std::int64_t* rel, const index_t* begin,
                          std::int64_t base, std::int64_t row_start, index_t n,
                          std::int64_t modulus, bool row_empty,
                          const std::vector<index_t>& empty, const CodeFields& fields) {
    if (row_empty) {
        for (index_t j = 0; j < n; ++j) index[j] = static_cast<I>(base);
        return;
    }
    const std::int64_t start = base + row_start;
    if (modulus == 0 && rel == nullptr) {
        for (index_t j = 0; j < n; ++j) {
            index[j] = static_cast<I>(start + begin[j] + static_cast<std::int64_t>(code[j]));
        }
    } else if (modulus == 0) {
        index_t j = 0;
#if OVPOOL_CORE_HAVE_AVX2
        // (uint8 codes: eight at a time, their offsets computed from their bit fields, or
        // their table entries gathered.)
        if constexpr (sizeof(U) == 1) {
            j = fields.axes > 0
                    ? simd::coded_field_indices8(index, code, fields.shift, fields.mask,
                                                 fields.step, fields.axes, begin, start, n)
                    : simd::coded_rel_indices8(index, code, rel, begin, start, n);
        }
#else
        (void)fields;
#endif
        for (; j < n; ++j) index[j] = static_cast<I>(start + begin[j] + rel[code[j]]);
    } else {
        for (index_t j = 0; j < n; ++j) {
            std::int64_t offset =
                rel != nullptr ? rel[code[j]] : static_cast<std::int64_t>(code[j]);
            index[j] = static_cast<I>(base + (row_start + begin[j] + offset) % modulus);
        }
    }
    for (index_t j : empty) index[j] = static_cast<I>(base);
}

// out[j].bits = half_of_key(key[j]) for j in [0, n); returns whether one of the keys is 0 or
// half_nan_key (values coded_half_row then reads from the input).
template <class S>
inline bool coded_half_run(S* out, const std::int16_t* key, index_t n) {
    int shared = 0;
    index_t j = 0;
#if OVPOOL_CORE_HAVE_AVX2
    j = simd::half_of_keys16(key, reinterpret_cast<std::uint16_t*>(out), n, &shared);
#endif
    for (; j < n; ++j) {
        out[j].bits = half_of_key(key[j]);
        shared |= (key[j] == 0) | (key[j] == half_nan_key);
    }
    return shared != 0;
}

// The n outputs of one row, out[j], from their winners' keys (16-bit floats, see half_key):
// the value of the key (already there when `converted`, by coded_half_run), or for keys 0 and
// half_nan_key the input's element at the winner's offset row_start + begin[j] + rel[code[j]]
// (rel null: + code[j]) in `plane`; empty_value for empty windows (the whole row when
// row_empty, else those in `empty`), whose key is neither.
template <class S, class U>
inline void coded_half_row(S* out, const std::int16_t* key, const U* code,
                           const std::int64_t* rel, const index_t* begin, const S* plane,
                           std::int64_t row_start, index_t n, bool row_empty,
                           const std::vector<index_t>& empty, S empty_value, bool converted) {
    if (row_empty) {
        for (index_t j = 0; j < n; ++j) out[j] = empty_value;
        return;
    }
    bool shared = true;
    if (!converted) shared = coded_half_run(out, key, n);
    if (shared) {
        for (index_t j = 0; j < n; ++j) {
            if (key[j] != 0 && key[j] != half_nan_key) continue;
            std::int64_t offset = rel != nullptr ? rel[code[j]] : static_cast<std::int64_t>(code[j]);
            out[j] = plane[row_start + begin[j] + offset];
        }
    }
    for (index_t j : empty) out[j] = empty_value;
}

// Max-pool one plane x of 16-bit floats, values alone, on its int16 keys `keys` (half_key):
// their integer order is the max rule's, so max_plane_values runs its separable passes on
// int16, sixteen to a vector and one compare each, with no NaN test and no widening to
// float32. Equal keys have equal bits except keys 0 and half_nan_key, so only outputs with
// those keys depend on which tap won: they are read from the input at the first element of
// their window in row-major order holding that key (for an all-NaN window its first tap),
// the max rule's winner. Empty windows get empty_key (not 0 nor half_nan_key: the empty
// value's key). `scratch`: g.out_plane keys, then 2 * g.scratch + max_row_buffers(g).
template <class S>
void max_plane_keys(const S* x, S* out, const std::int16_t* keys, std::int16_t* scratch,
                    const Geometry& g, std::int16_t empty_key) {
    std::int16_t* best = scratch;
    std::int16_t* passes = scratch + g.out_plane;
    max_plane_values(keys, best, passes, passes + 2 * g.scratch, g, empty_key);
    if (!coded_half_run(out, best, g.out_plane)) return;
    for (index_t k = 0; k < g.out_plane; ++k) {
        const std::int16_t key = best[k];
        if (key != 0 && key != half_nan_key) continue;
        out[k] = x[first_in_window(g, k, [&](index_t offset) { return keys[offset] == key; })];
    }
}

// index[k] = base + start[k] + the winner's offset from its first tap, rel[code[k]] (rel
// null: code[k]), for the n outputs of a plane (no offset modulus; empty windows are set
// after).
template <class I, class U>
inline void coded_flat_indices(I* index, const U* code, const std::int64_t* rel,
                               const std::int64_t* start, std::int64_t base, index_t n,
                               const CodeFields& fields) {
    if (rel == nullptr) {
        for (index_t k = 0; k < n; ++k) {
            index[k] = static_cast<I>(base + start[k] + static_cast<std::int64_t>(code[k]));
        }
    } else {
        index_t k = 0;
#if OVPOOL_CORE_HAVE_AVX2
        // (uint8 codes of bit fields: eight at a time, their offsets computed.)
        if constexpr (sizeof(U) == 1) {
            static_assert(sizeof(std::int64_t) == sizeof(index_t), "start as first taps");
            k = simd::coded_field_indices8(index, code, fields.shift, fields.mask, fields.step,
                                           fields.axes,
                                           reinterpret_cast<const index_t*>(start), base, n);
        }
#else
        (void)fields;
#endif
        for (; k < n; ++k) index[k] = static_cast<I>(base + start[k] + rel[code[k]]);
    }
}

// index[r * n + j] = base + row_start[r] + begin[j] + the winner's offset, rel[code] (rel null:
// the code), code being row r's at r * pitch + j, for the `rows` rows of n < coded_flat_row
// outputs of a plane (no offset modulus; empty windows are set after). The sums are made in
// I's unsigned width, which wraps to the same bits as the int64 sum cast to I, so that int32
// indices take eight lanes to a vector; rows of eight or more go eight entries at a time, the
// last eight overlapping the ones before rather than a scalar tail (rows of 19: 65
// instructions a row with the tail).
template <class I, class U>
inline void coded_row_indices(I* index, const U* code, index_t pitch, const std::int64_t* rel,
                              const std::int64_t* row_start, const index_t* begin,
                              std::int64_t base, index_t rows, index_t n) {
    typedef typename std::make_unsigned<I>::type W;
    W first[coded_flat_row];
    for (index_t j = 0; j < n; ++j) first[j] = static_cast<W>(begin[j]);
    for (index_t r = 0; r < rows; ++r) {
        const W start = static_cast<W>(base + row_start[r]);
        I* to = index + r * n;
        const U* from = code + r * pitch;
        if (rel != nullptr) {
            for (index_t j = 0; j < n; ++j) {
                to[j] = static_cast<I>(start + first[j] + static_cast<W>(rel[from[j]]));
            }
            continue;
        }
        auto eight = [&](index_t j) {
            for (index_t q = j; q < j + 8; ++q) {
                to[q] = static_cast<I>(start + first[q] + static_cast<W>(from[q]));
            }
        };
        if (n < 8) {
            for (index_t j = 0; j < n; ++j) {
                to[j] = static_cast<I>(start + first[j] + static_cast<W>(from[j]));
            }
            continue;
        }
        index_t j = 0;
        for (; j + 8 <= n; j += 8) eight(j);
        if (j < n) eight(n - 8);
    }
}

// Index entry k of spec's (int64 or int32) indices set to `value`.
inline void coded_set_index(const IndexSpec& spec, index_t k, std::int64_t value) {
    if (spec.out64 != nullptr) {
        spec.out64[k] = value;
    } else {
        spec.out32[k] = static_cast<std::int32_t>(value);
    }
}

// The outputs of a plane (rows of out_len) whose keys are 0 or half_nan_key (coded_half_row)
// read from `plane` at their winners' offsets, first tap + rel[code] (rel null: + code):
// with a table of first taps (start, keys and codes at the output's pitch), start[k]; else
// row_start[r] + begin[j], keys and codes of row r at r * pitch.
template <class S, class U>
inline void coded_half_shared(S* out, const std::int16_t* key, const U* code,
                              const std::int64_t* rel, const std::int64_t* start,
                              const std::int64_t* row_start, const index_t* begin,
                              index_t rows, index_t out_len, index_t pitch, const S* plane) {
    auto offset = [rel](U c) {
        return rel != nullptr ? rel[c] : static_cast<std::int64_t>(c);
    };
    if (start != nullptr) {
        for (index_t k = 0; k < rows * out_len; ++k) {
            if (key[k] != 0 && key[k] != half_nan_key) continue;
            out[k] = plane[start[k] + offset(code[k])];
        }
        return;
    }
    for (index_t r = 0; r < rows; ++r) {
        for (index_t j = 0; j < out_len; ++j) {
            const index_t at = r * pitch + j;
            if (key[at] != 0 && key[at] != half_nan_key) continue;
            out[r * out_len + j] = plane[row_start[r] + begin[j] + offset(code[at])];
        }
    }
}

// Max-pool planes first .. first + count - 1 (x and out point to the first one's) with
// indices (spec) through plan, made for blocks of at least `count` planes: the passes run over
// all of them at once (the rows of consecutive planes are consecutive rows). values and codes
// each hold plan.scratch() elements. 16-bit floats pooled by their keys (x: a buffer of
// count * g.in_plane keys, which the last pass makes there from `source` as far as it reads
// them (HalfSource); A int16, empty_value a key other than 0 and half_nan_key) take their
// values from the keys and `source` (coded_half_values); otherwise source is unused.
template <class Src, class S, class A>
void max_planes_coded(const Src* x, S* out, index_t first, index_t count, const IndexSpec& spec,
                      A* values, tap_code_t<A>* codes, const CodedPlan& plan, const Geometry& g,
                      A empty_value, const S* source = nullptr) {
    constexpr bool keyed = is_half_float<S> && std::is_same<A, std::int16_t>::value;
    typedef tap_code_t<A> U;
    const index_t n = g.naxes;
    AxisTable h = axis_table(g, n - 1);
    index_t pitch = plan.pitch;  // (rows of the passes' results; see coded_column_pass)
    A* d = values + plan.run;
    U* c = codes + plan.run;
    index_t rows = count * (g.in_plane / h.length);
    HalfSource half;
    if constexpr (keyed) {
        // (x: the keys' buffer, keyed by the last pass as far as it reads it.)
        half.bits = reinterpret_cast<const std::uint16_t*>(source);
        half.infinity = half_infinity_bits<S>;
        half.keys = const_cast<std::int16_t*>(x);  // (the job's keys buffer)
    }
    coded_last_pass(x, d, c, values, codes, rows, h, plan, empty_value, half);
    // Axes n-2 .. 0, ping-ponging between the two buffers. The pass over axis 0 writes its
    // values straight into the output when that holds them as the passes do (values of the
    // accumulator's type, rows at the output's pitch), not into a buffer copied out after
    // (upsampling, whose last pass writes the most: int32 4x4x62x65 -> 138x108 with indices
    // copied 238K values a call).
    bool values_out = false;
    if constexpr (std::is_same<A, S>::value && !keyed) values_out = n >= 2 && pitch == h.out_len;
    index_t inner = pitch;
    for (index_t a = n - 2; a >= 0; --a) {
        AxisTable v = axis_table(g, a);
        rows /= v.length;
        A* next = d == values + plan.run ? d + plan.buffer : values + plan.run;
        if constexpr (std::is_same<A, S>::value) {
            if (a == 0 && values_out) next = out;
        }
        U* next_code = c == codes + plan.run ? c + plan.buffer : codes + plan.run;
        bool narrowed = false;
#if OVPOOL_CORE_HAVE_AVX2
        if constexpr (keyed) {
            // (The first of these passes may leave the last pass's rows at the output's
            // pitch.)
            if (a == n - 2 && coded_narrows(v, inner, h.out_len)) {
                coded_narrow_windows16(static_cast<const A*>(d), static_cast<const U*>(c), next,
                                       next_code, rows, inner, h.out_len, v, plan.radix[a],
                                       empty_value);
                narrowed = true;
                pitch = inner = h.out_len;
            }
        }
#endif
        if (!narrowed) {
            coded_column_pass(static_cast<const A*>(d), static_cast<const U*>(c), next,
                              next_code, values, codes, rows, inner, v, plan.radix[a],
                              empty_value, plan.run);
        }
        d = next;
        c = next_code;
        inner *= v.out_len;
    }
    // Outputs. An empty window's offset is 0.
    const index_t out_len = h.out_len, out_plane = g.out_plane;
    const index_t out_rows = out_plane / out_len;
    const std::int64_t offset_modulus = spec.offset_modulus;
    const bool wrap = offset_modulus < g.in_plane;
    const std::int64_t* rel = plan.rel.empty() ? nullptr : plan.rel.data();
    const std::int64_t* start = pitch == out_len ? plan.start.get() : nullptr;
    // Flat outputs: each plane's indices in one loop over its outputs through the table of
    // their first taps, or for rows shorter than coded_flat_row, a loop per row from the
    // rows' first taps (coded_row_indices, at any pitch); row by row through coded_indices
    // otherwise, below.
    const bool flat = !wrap && (start != nullptr || out_len < coded_flat_row);
    // (Rows at the output's pitch: the block's values in one run rather than row by row.)
    bool shared = true;  // (keyed: whether a key of the block's run is 0 or half_nan_key)
    if constexpr (keyed) {
        if (pitch == out_len) {
            shared = coded_half_run(out, d, count * out_plane);
        } else if (flat) {
            shared = false;
            for (index_t r = 0; r < count * out_rows; ++r) {
                shared |= coded_half_run(out + r * out_len, d + r * pitch, out_len);
            }
        }
    } else if (!values_out) {  // (else the values are in the output already)
        if (pitch == out_len) {
            narrow_row(static_cast<const A*>(d), out, count * out_plane);
        } else if (flat) {
            for (index_t r = 0; r < count * out_rows; ++r) {
                narrow_row(static_cast<const A*>(d + r * pitch), out + r * out_len, out_len);
            }
        }
    }
    if (flat) {
        for (index_t p = 0; p < count; ++p) {
            const std::int64_t base = ((first + p) % spec.plane_modulus) * g.in_plane;
            const U* code = c + p * out_rows * pitch;
            if (start != nullptr && spec.out64 != nullptr) {
                coded_flat_indices(spec.out64 + (first + p) * out_plane, code, rel, start, base,
                                   out_plane, plan.fields);
            } else if (start != nullptr) {
                coded_flat_indices(spec.out32 + (first + p) * out_plane, code, rel, start, base,
                                   out_plane, plan.fields);
            } else if (spec.out64 != nullptr) {
                coded_row_indices(spec.out64 + (first + p) * out_plane, code, pitch, rel,
                                  plan.row_start.data(), h.begin, base, out_rows, out_len);
            } else {
                coded_row_indices(spec.out32 + (first + p) * out_plane, code, pitch, rel,
                                  plan.row_start.data(), h.begin, base, out_rows, out_len);
            }
            if constexpr (keyed) {
                if (shared) {
                    coded_half_shared(out + p * out_plane, d + p * out_rows * pitch, code, rel,
                                      start, plan.row_start.data(), h.begin, out_rows, out_len,
                                      pitch, source + p * g.in_plane);
                }
            }
            // Empty windows: offset 0 (their values are the empty value already).
            for (index_t r : plan.empty_rows) {
                for (index_t j = 0; j < out_len; ++j) {
                    coded_set_index(spec, (first + p) * out_plane + r * out_len + j, base);
                }
            }
            if (!plan.empty_last.empty()) {
                for (index_t r = 0; r < out_rows; ++r) {
                    for (index_t j : plan.empty_last) {
                        coded_set_index(spec, (first + p) * out_plane + r * out_len + j, base);
                    }
                }
            }
        }
        return;
    }
    // Row by row over the axes before the last.
    for (index_t p = 0; p < count; ++p) {
        const std::int64_t base = ((first + p) % spec.plane_modulus) * g.in_plane;
        std::int64_t* const out64 =
            spec.out64 != nullptr ? spec.out64 + (first + p) * out_plane : nullptr;
        std::int32_t* const out32 =
            spec.out32 != nullptr ? spec.out32 + (first + p) * out_plane : nullptr;
        for (index_t r = 0; r < out_rows; ++r) {
            const std::int64_t row_start = plan.row_start[r];
            const bool row_empty = plan.row_empty[r] != 0;
            const A* best = d + (p * out_rows + r) * pitch;
            const U* code = c + (p * out_rows + r) * pitch;
            if constexpr (keyed) {
                S empty;
                empty.bits = half_of_key(empty_value);
                if (pitch != out_len || shared || row_empty || !plan.empty_last.empty()) {
                    coded_half_row(out + p * out_plane + r * out_len, best, code, rel, h.begin,
                                   source + p * g.in_plane, row_start, out_len, row_empty,
                                   plan.empty_last, empty, pitch == out_len);
                }
            } else if (pitch != out_len) {
                narrow_row(best, out + p * out_plane + r * out_len, out_len);
            }
            if (out64 != nullptr) {
                coded_indices(out64 + r * out_len, code, rel, h.begin, base, row_start, out_len,
                              wrap ? offset_modulus : 0, row_empty, plan.empty_last,
                              plan.fields);
            } else {
                coded_indices(out32 + r * out_len, code, rel, h.begin, base, row_start, out_len,
                              wrap ? offset_modulus : 0, row_empty, plan.empty_last,
                              plan.fields);
            }
        }
    }
}

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
