// Build configuration shared by every ovpool core header.
//
// The core is compiled once per instruction set by each library that uses it (a baseline build
// and one with -mavx2 -mfma -mf16c), sometimes into the same shared object. Every definition is
// therefore placed in an inline namespace named after the build, ovpool::core::OVPOOL_CORE_ISA,
// so the two copies of each inline function and template are distinct symbols (no ODR clash)
// while callers still spell them ovpool::core::name.
#ifndef OVPOOL_CORE_CONFIG_HPP
#define OVPOOL_CORE_CONFIG_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#ifndef OVPOOL_CORE_ISA
#define OVPOOL_CORE_ISA baseline
#endif

// 1 when the AVX2 row kernels (simd/rows_avx2.hpp) are compiled in. F16C is part of the set so
// that the float16 conversions of this build are the hardware ones.
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define OVPOOL_CORE_HAVE_AVX2 1
#else
#define OVPOOL_CORE_HAVE_AVX2 0
#endif

// Marks a helper to be inlined whatever gcc's heuristics say: transposes, widenings and
// loop bodies that hot loops call from many places, where gcc stopped inlining them once
// they had more callers (and the loops then took up to 1.6x the time). Empty for other
// compilers.
#if defined(__GNUC__)
#define OVPOOL_FORCE_INLINE __attribute__((always_inline))
#else
#define OVPOOL_FORCE_INLINE
#endif

// Keeps a large path out of a hot caller that takes it at most once per call of its own,
// so that adding the path does not change what gcc inlines into that caller.
#if defined(__GNUC__)
#define OVPOOL_NOINLINE __attribute__((noinline))
#else
#define OVPOOL_NOINLINE
#endif

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Element counts and offsets, as in the packed window tables (numpy's intp).
using index_t = std::ptrdiff_t;

// f(std::integral_constant<int, v>{}) for Lo <= v <= Hi, so that a kernel picks its version
// for a run-time value (a stride, a tap count) with the value a compile-time constant in it;
// for other values, f's result type value-initialised (nothing, for void). One dispatcher
// rather than a switch per kernel.
template <int Lo, int Hi, class F>
inline auto with_constant(index_t v, const F& f) -> decltype(f(std::integral_constant<int, Lo>{})) {
    if (v == Lo) return f(std::integral_constant<int, Lo>{});
    if constexpr (Lo < Hi) {
        return with_constant<Lo + 1, Hi>(v, f);
    } else {
        return decltype(f(std::integral_constant<int, Lo>{}))();
    }
}

// Input elements per block when planes of a single spatial axis are pooled as the rows of one
// pass (see AvgJob): enough to amortise a pass's set-up, small enough to stay in L2.
constexpr index_t rows_block_elements = 16384;

// Largest plane (elements) that max pooling with indices reduces window by window
// (max_plane_direct) instead of by separable passes.
constexpr index_t direct_max_plane = 1024;

// Max pooling of small planes a group of planes at a time through one table of every
// window's taps (max_planes_lanes), for planes whose windows hold at most tiny_max_taps taps in
// all: every plane of at most tiny_small_plane elements, and planes of two or more axes of at
// most tiny_max_plane<A> elements (A: the lanes' type) whose taps times sizeof(A) are at most
// tiny_tap_bytes per input element (tiny_half_tap_bytes for float16 / bfloat16, whose passes
// run on 16-bit keys while their lanes are float32). (Lane work grows with the taps and the
// lanes' width, the passes' with their rows: planes of 129-1024 elements, 60 random shapes, 1
// thread, gained 1.2-26x below those densities, and lost up to 2x above them or with one axis.)
// Bytes stop at 256 elements, whose one-byte tap codes must hold the winners' offsets. A work
// item is about tiny_block_elements input elements, whole groups of planes, at most
// tiny_block_planes planes, and with several workers at most a quarter of a worker's planes.
constexpr index_t tiny_small_plane = 128;
template <class A> constexpr index_t tiny_max_plane = sizeof(A) == 1 ? 256 : 1024;
constexpr index_t tiny_tap_bytes = 14;
constexpr index_t tiny_half_tap_bytes = 10;
constexpr index_t tiny_max_taps = 4096;
constexpr index_t tiny_block_elements = 32768;
constexpr index_t tiny_block_planes = 256;

// Divisors below this are exact in float32, so integer sums below 2^23 divide exactly in
// float32 over them (WindowPlan::small_divisors, Divisors::small_sums).
constexpr std::int64_t small_divisor_limit = 1LL << 24;

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
