// Storage types, accumulator types and the conversions between them.
//
// float16 and bfloat16 arrays reach the core as uint16 bit patterns, viewed through the tag
// types f16 / bf16 (standard layout, two bytes, so a uint16 buffer is cast to them). All 16-bit
// float arithmetic happens in float32: load() widens, store() rounds once to nearest even.
//
// float16 conversions must give the same bits in every build, NaN payloads included, because
// the baseline and AVX2 builds are compared bit for bit. With F16C they are the hardware
// instructions; otherwise a portable conversion that does what F16C (and GCC's soft-float
// _Float16 of the earlier C kernels) does: a NaN keeps its sign and the payload bits that fit,
// and is made quiet; everything else rounds to nearest even.
#ifndef OVPOOL_CORE_TYPES_HPP
#define OVPOOL_CORE_TYPES_HPP

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "config.hpp"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

struct f16 { std::uint16_t bits; };
struct bf16 { std::uint16_t bits; };
static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2, "16-bit tag types must be two bytes");
static_assert(std::is_standard_layout<f16>::value && std::is_standard_layout<bf16>::value,
              "16-bit tag types must be standard layout");

// Sums of int64 inputs need more than 64 bits to stay exact.
#if defined(__SIZEOF_INT128__)
__extension__ typedef __int128 wide_t;
#else
typedef long long wide_t;
#endif

// Accumulators. Averages: float32 for the 32- and 16-bit floats (a 16-bit float average
// rounds once, from float32), double for double, exact integer sums (128 bits for int64).
// Maxima: float32 for 16-bit floats, otherwise the input's type (long long for int64).
template <class S> struct avg_accumulator { typedef float type; };
template <> struct avg_accumulator<double> { typedef double type; };
template <> struct avg_accumulator<std::int8_t> { typedef long long type; };
template <> struct avg_accumulator<std::uint8_t> { typedef long long type; };
template <> struct avg_accumulator<std::int32_t> { typedef long long type; };
template <> struct avg_accumulator<std::int64_t> { typedef wide_t type; };
template <class S> using avg_accumulator_t = typename avg_accumulator<S>::type;

// A narrower exact accumulator for averages whose windows are small enough (see AvgJob and
// sums_fit): int32 sums for int8 / uint8 inputs hold eight lanes per AVX2 register, not four.
// `largest` is the inputs' largest magnitude. Types without one name their own accumulator.
template <class S> struct narrow_avg_accumulator {
    typedef avg_accumulator_t<S> type;
    static constexpr long long largest = 0;
};
template <> struct narrow_avg_accumulator<std::int8_t> {
    typedef std::int32_t type;
    static constexpr long long largest = 128;
};
template <> struct narrow_avg_accumulator<std::uint8_t> {
    typedef std::int32_t type;
    static constexpr long long largest = 255;
};

// (Integer maxima stay in the input's own type: exact, and the vector loops then hold 32
// int8 lanes rather than four int64 ones.)
template <class S> struct max_accumulator { typedef S type; };
template <> struct max_accumulator<std::int64_t> { typedef long long type; };
template <> struct max_accumulator<float> { typedef float type; };
template <> struct max_accumulator<double> { typedef double type; };
template <> struct max_accumulator<f16> { typedef float type; };
template <> struct max_accumulator<bf16> { typedef float type; };
template <class S> using max_accumulator_t = typename max_accumulator<S>::type;

// Uninitialised storage (new T[n], not a vector: zeroing a large scratch would cost more than
// some poolings).
template <class T> inline std::unique_ptr<T[]> allocate(index_t n) {
    return std::unique_ptr<T[]>(new T[static_cast<std::size_t>(n > 0 ? n : 1)]);
}

// `p` moved up to the next 64-byte boundary, for scratch allocated cache_line_slack<T> elements
// longer than it needs (new[] aligns to 16 bytes only, and vector loads that straddle cache
// lines cost more).
template <class T> constexpr index_t cache_line_slack = 64 / static_cast<index_t>(sizeof(T));
template <class T> inline T* cache_line_aligned(T* p) {
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);
    return reinterpret_cast<T*>((at + 63) & ~static_cast<std::uintptr_t>(63));
}

// ---- bit-level float32 <-> 16-bit float conversions ----------------------------------------

inline float bits_to_f32(std::uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline std::uint32_t f32_to_bits(float f) { std::uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float bf16_to_f32(std::uint16_t h) { return bits_to_f32(static_cast<std::uint32_t>(h) << 16); }

inline std::uint16_t f32_to_bf16(float f) {
    std::uint32_t u = f32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // keep NaN a (quiet) NaN
    }
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
    return static_cast<std::uint16_t>(u >> 16);
}

// Portable float16 conversions (used by builds without F16C; tested against it).
inline float f16_to_f32_portable(std::uint16_t h) {
    std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1fu;
    std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {
        float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // * 2^-24, exact
        return bits_to_f32(f32_to_bits(magnitude) | sign);
    }
    if (exponent == 31) {
        // Infinity, or a NaN: payload kept, made quiet.
        std::uint32_t quiet = mantissa ? 0x400000u : 0u;
        return bits_to_f32(sign | 0x7f800000u | quiet | (mantissa << 13));
    }
    return bits_to_f32(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline std::uint16_t f32_to_f16_portable(float f) {
    std::uint32_t u = f32_to_bits(f);
    std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    std::uint32_t magnitude = u & 0x7fffffffu;
    if (magnitude > 0x7f800000u) {  // NaN: the payload's top bits, made quiet
        return static_cast<std::uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    }
    if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // to inf
    if (magnitude < 0x38800000u) {                                   // float16 subnormal
        if (magnitude < 0x33000000u) return sign;                    // below half of 2^-24
        std::uint32_t exponent = magnitude >> 23;
        std::uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
        std::uint32_t shift = 126u - exponent;  // bring to units of 2^-24
        std::uint32_t result = mantissa >> shift;
        std::uint32_t rest = mantissa & ((1u << shift) - 1u);
        std::uint32_t half = 1u << (shift - 1u);
        if (rest > half || (rest == half && (result & 1u))) result += 1u;
        return static_cast<std::uint16_t>(sign | result);
    }
    std::uint32_t rebased = magnitude - 0x38000000u;  // exponent bias 127 -> 15
    std::uint32_t result = rebased >> 13;
    std::uint32_t rest = rebased & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) result += 1u;
    return static_cast<std::uint16_t>(sign | result);
}

#if defined(__F16C__)
inline float f16_to_f32(std::uint16_t h) { return _cvtsh_ss(h); }
inline std::uint16_t f32_to_f16(float f) {
    return static_cast<std::uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
#else
inline float f16_to_f32(std::uint16_t h) { return f16_to_f32_portable(h); }
inline std::uint16_t f32_to_f16(float f) { return f32_to_f16_portable(f); }
#endif

// ---- load / store ---------------------------------------------------------------------------

// load<A>(v): a stored (or intermediate) value as accumulator type A.
template <class A, class T> inline A load(T value) { return static_cast<A>(value); }
template <class A> inline A load(f16 value) { return static_cast<A>(f16_to_f32(value.bits)); }
template <class A> inline A load(bf16 value) { return static_cast<A>(bf16_to_f32(value.bits)); }

// store<S>(a): an accumulator value in storage type S (16-bit floats: rounded from float32).
template <class S> struct storer {
    template <class A> static S apply(A value) { return static_cast<S>(value); }
};
template <> struct storer<f16> {
    template <class A> static f16 apply(A value) {
        return f16{f32_to_f16(static_cast<float>(value))};
    }
};
template <> struct storer<bf16> {
    template <class A> static bf16 apply(A value) {
        return bf16{f32_to_bf16(static_cast<float>(value))};
    }
};
template <class S, class A> inline S store(A value) { return storer<S>::apply(value); }

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
