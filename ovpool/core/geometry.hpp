// The geometry of one pooling call: the packed per-axis window tables.
//
// Data layout: a C-contiguous input viewed as (planes, in_plane), where a plane is one (n, c)
// slice of the spatial axes, and an output (planes, out_plane). Each spatial axis comes with a
// window table: output position j reads count[j] input positions starting at begin[j] and
// stepping by the axis's dilation (padding already clipped away). Fixed and adaptive windows
// are both expressed that way; the caller has resolved every attribute and checked every size.
#ifndef OVPOOL_CORE_GEOMETRY_HPP
#define OVPOOL_CORE_GEOMETRY_HPP

#include <cstdint>

#include "config.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

struct Geometry {
    index_t naxes;
    const index_t* length;    // input length of each spatial axis
    const index_t* output;    // output length of each spatial axis
    const index_t* dilation;  // step between taps of each axis
    const index_t* offset;    // where each axis's windows start in begin/count
    const index_t* begin;     // first input position of each window (all axes, flat)
    const index_t* count;     // number of in-bounds taps of each window
    const index_t* stride;    // step between the begins of consecutive full windows
    const index_t* interior;  // per axis [lo, hi): windows there all have count[lo] taps and
                              // begin[j] = begin[lo] + (j - lo) * stride
    index_t in_plane;         // elements of one input plane
    index_t out_plane;        // elements of one output plane
    index_t scratch;          // elements of one scratch buffer (largest pass intermediate)
};

// The packed tables, one array instead of nine (each array argument costs the Python layer
// about as much as a tiny pooling):
//   [naxes, scratch, length[n], output[n], dilation[n], offset[n], stride[n], interior[2n],
//    begin[sum(output)], count[sum(output)]]
inline Geometry make_geometry(const index_t* packed) {
    Geometry g;
    index_t n = packed[0], windows = 0;
    g.naxes = n;
    g.scratch = packed[1];
    g.length = packed + 2;
    g.output = packed + 2 + n;
    g.dilation = packed + 2 + 2 * n;
    g.offset = packed + 2 + 3 * n;
    g.stride = packed + 2 + 4 * n;
    g.interior = packed + 2 + 5 * n;
    g.in_plane = 1;
    g.out_plane = 1;
    for (index_t a = 0; a < n; ++a) {
        g.in_plane *= g.length[a];
        g.out_plane *= g.output[a];
        windows += g.output[a];
    }
    g.begin = packed + 2 + 7 * n;
    g.count = g.begin + windows;
    return g;
}

// One spatial axis's window table, as the passes read it.
struct AxisTable {
    index_t length, out_len, dil, step;  // input and output lengths, tap and window steps
    index_t lo, hi, taps;                // interior run [lo, hi) of windows with `taps` taps
    const index_t* begin;                // first tap of each window
    const index_t* count;                // taps of each window
};

inline AxisTable axis_table(const Geometry& g, index_t axis) {
    AxisTable w;
    w.length = g.length[axis];
    w.out_len = g.output[axis];
    w.dil = g.dilation[axis];
    w.step = g.stride[axis];
    w.lo = g.interior[2 * axis];
    w.hi = g.interior[2 * axis + 1];
    w.begin = g.begin + g.offset[axis];
    w.count = g.count + g.offset[axis];
    w.taps = w.hi > w.lo ? w.count[w.lo] : 0;
    return w;
}

// A pass over `axis` views the current intermediate as (outer, length, inner): outer is the
// product of the already-reduced axes' outputs, inner the product of the later axes' lengths.
inline void pass_shape(const Geometry& g, index_t axis, index_t* outer, index_t* inner) {
    *outer = 1;
    *inner = 1;
    for (index_t a = 0; a < axis; ++a) *outer *= g.output[a];
    for (index_t a = axis + 1; a < g.naxes; ++a) *inner *= g.length[a];
}

// Average divisors. A job gets the plan's (every table, from rules.hpp's set_divisor, one per
// output of a plane) and hands each path the ones it divides by, the others null.
struct Divisors {
    const std::int64_t* count;  // each output's divisor, for integer averages
    const double* real;         // the same as floats, +inf where it is 0 (so 0 / inf = 0)
    bool small_divisors = false;  // every divisor below small_divisor_limit
    bool small_sums = false;    // integer sums all below 2^23 in magnitude, divisors below 2^24
    const float* real32 = nullptr;  // real as float32 (float32 sums; integer small_sums of the
                                    // passes), or null
    // int16 sums with small_sums (AVX2): the divisors as float32 (1 for an empty window) and
    // their inverses (0 for an empty window), so that the averages come from the inverses
    // (simd::quotients_by_inverse), not divisions; or null.
    const float* divisor32 = nullptr;
    const float* inverse32 = nullptr;
};

// The divisors of the outputs from `first` on.
inline Divisors divisors_from(const Divisors& d, index_t first) {
    Divisors part = d;
    part.count = d.count + first;
    part.real = d.real + first;
    if (d.real32) part.real32 = d.real32 + first;
    if (d.divisor32) part.divisor32 = d.divisor32 + first;
    if (d.inverse32) part.inverse32 = d.inverse32 + first;
    return part;
}

// Where max pooling writes its indices. The index of an output is
//   (plane % plane_modulus) * in_plane + offset % offset_modulus
// with `offset` the chosen element's offset within its input plane.
struct IndexSpec {
    std::int64_t* out64;          // int64 indices, or null
    std::int32_t* out32;          // int32 indices, or null
    std::int64_t plane_modulus;
    std::int64_t offset_modulus;
};

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
