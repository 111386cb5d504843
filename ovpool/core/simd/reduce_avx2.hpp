// AVX2 kernels for whole-plane reductions (see reduce.hpp): the largest number of a contiguous
// run and the first element equal to a value, 32 bytes per instruction. Both are free of any
// summation order (a maximum is the same whatever the order it is taken in, and a search has
// one answer), so they give the results of the portable loops of the baseline build exactly.
//
// Runs of at least one vector end with an overlapping load of the run's last vector instead of
// a scalar remainder: a maximum may see an element twice, and a search reaches the overlap
// only when the elements before it did not match.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_REDUCE_AVX2_HPP
#define OVPOOL_CORE_SIMD_REDUCE_AVX2_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../config.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Per element type: a vector of it, loads, the maximum (NaN in `value` ignored), equality as a
// byte mask, and its lowest value (the maximum's start).
template <class T> struct Lanes;

template <> struct Lanes<float> {
    typedef __m256 V;
    static constexpr index_t width = 8;
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static V set(float v) { return _mm256_set1_ps(v); }
    // MAXPS returns its second operand when either is NaN: a NaN value leaves best.
    static V max(V value, V best) { return _mm256_max_ps(value, best); }
    static unsigned equal(V a, V b) {
        return static_cast<unsigned>(_mm256_movemask_epi8(
            _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_EQ_OQ))));
    }
    static float lowest() { return -std::numeric_limits<float>::infinity(); }
};

template <> struct Lanes<double> {
    typedef __m256d V;
    static constexpr index_t width = 4;
    static V load(const double* p) { return _mm256_loadu_pd(p); }
    static V set(double v) { return _mm256_set1_pd(v); }
    static V max(V value, V best) { return _mm256_max_pd(value, best); }
    static unsigned equal(V a, V b) {
        return static_cast<unsigned>(_mm256_movemask_epi8(
            _mm256_castpd_si256(_mm256_cmp_pd(a, b, _CMP_EQ_OQ))));
    }
    static double lowest() { return -std::numeric_limits<double>::infinity(); }
};

// Integer lanes share loads and equality's mask.
template <class T> struct IntLanes {
    typedef __m256i V;
    static constexpr index_t width = 32 / static_cast<index_t>(sizeof(T));
    static V load(const T* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static T lowest() { return std::numeric_limits<T>::lowest(); }
};

template <> struct Lanes<std::int8_t> : IntLanes<std::int8_t> {
    static V set(std::int8_t v) { return _mm256_set1_epi8(v); }
    static V max(V a, V b) { return _mm256_max_epi8(a, b); }
    static unsigned equal(V a, V b) {
        return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b)));
    }
};

template <> struct Lanes<std::uint8_t> : IntLanes<std::uint8_t> {
    static V set(std::uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
    static V max(V a, V b) { return _mm256_max_epu8(a, b); }
    static unsigned equal(V a, V b) {
        return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b)));
    }
};

template <> struct Lanes<std::int16_t> : IntLanes<std::int16_t> {
    static V set(std::int16_t v) { return _mm256_set1_epi16(v); }
    static V max(V a, V b) { return _mm256_max_epi16(a, b); }
    static unsigned equal(V a, V b) {
        return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi16(a, b)));
    }
};

template <> struct Lanes<std::int32_t> : IntLanes<std::int32_t> {
    static V set(std::int32_t v) { return _mm256_set1_epi32(v); }
    static V max(V a, V b) { return _mm256_max_epi32(a, b); }
    static unsigned equal(V a, V b) {
        return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi32(a, b)));
    }
};

template <> struct Lanes<long long> : IntLanes<long long> {
    static V set(long long v) { return _mm256_set1_epi64x(v); }
    static V max(V a, V b) { return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b)); }
    static unsigned equal(V a, V b) {
        return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi64(a, b)));
    }
};

// True for the element types these kernels take.
template <class T> struct has_lanes : std::false_type {};
template <> struct has_lanes<float> : std::true_type {};
template <> struct has_lanes<double> : std::true_type {};
template <> struct has_lanes<std::int8_t> : std::true_type {};
template <> struct has_lanes<std::uint8_t> : std::true_type {};
template <> struct has_lanes<std::int16_t> : std::true_type {};
template <> struct has_lanes<std::int32_t> : std::true_type {};
template <> struct has_lanes<long long> : std::true_type {};

// A lanes vector's bits, and back.
inline __m256i cast_bits(__m256 v) { return _mm256_castps_si256(v); }
inline __m256i cast_bits(__m256d v) { return _mm256_castpd_si256(v); }
inline __m256i cast_bits(__m256i v) { return v; }
template <class T>
inline typename Lanes<T>::V from_bits(__m256i v) {
    if constexpr (std::is_same<T, float>::value) {
        return _mm256_castsi256_ps(v);
    } else if constexpr (std::is_same<T, double>::value) {
        return _mm256_castsi256_pd(v);
    } else {
        return v;
    }
}

// The max of each lane and the lane `Bytes` bytes further on (rotating within each half).
template <class T, int Bytes>
inline __m256i rotate_max(__m256i bits) {
    return cast_bits(Lanes<T>::max(from_bits<T>(_mm256_alignr_epi8(bits, bits, Bytes)),
                                   from_bits<T>(bits)));
}

// The largest number of x[0 .. n), n >= Lanes<T>::width, NaN ignored (-inf when all are NaN).
template <class T>
inline T max_run(const T* x, index_t n) {
    typedef Lanes<T> L;
    const index_t w = L::width;
    typename L::V m0 = L::set(L::lowest()), m1 = m0, m2 = m0, m3 = m0;
    index_t i = 0;
    for (; i + 4 * w <= n; i += 4 * w) {
        m0 = L::max(L::load(x + i), m0);
        m1 = L::max(L::load(x + i + w), m1);
        m2 = L::max(L::load(x + i + 2 * w), m2);
        m3 = L::max(L::load(x + i + 3 * w), m3);
    }
    for (; i + w <= n; i += w) m0 = L::max(L::load(x + i), m0);
    if (i < n) m1 = L::max(L::load(x + n - w), m1);
    m0 = L::max(L::max(m0, m1), L::max(m2, m3));
    // The lanes' largest (none is NaN), halving by rotations: the two halves, then within
    // each half by 8, 4, 2 and 1 bytes, down to the element size.
    __m256i bits = cast_bits(m0);
    bits = cast_bits(L::max(from_bits<T>(_mm256_permute2x128_si256(bits, bits, 1)), m0));
    if constexpr (sizeof(T) <= 4) bits = rotate_max<T, 8>(bits);
    if constexpr (sizeof(T) <= 2) bits = rotate_max<T, 4>(bits);
    if constexpr (sizeof(T) <= 2) bits = rotate_max<T, 2>(bits);
    if constexpr (sizeof(T) == 8) bits = rotate_max<T, 8>(bits);
    else if constexpr (sizeof(T) == 4) bits = rotate_max<T, 4>(bits);
    else if constexpr (sizeof(T) == 1) bits = rotate_max<T, 1>(bits);
    T best;
    std::memcpy(&best, &bits, sizeof(T));
    return best;
}

// The first i with x[i] == value, or -1. n >= Lanes<T>::width.
template <class T>
inline index_t find_run(const T* x, index_t n, T value) {
    typedef Lanes<T> L;
    const index_t w = L::width;
    typename L::V v = L::set(value);
    index_t i = 0;
    for (; i + w <= n; i += w) {
        unsigned hit = L::equal(L::load(x + i), v);
        if (hit != 0) return i + __builtin_ctz(hit) / static_cast<int>(sizeof(T));
    }
    if (i < n) {
        unsigned hit = L::equal(L::load(x + n - w), v);
        if (hit != 0) return n - w + __builtin_ctz(hit) / static_cast<int>(sizeof(T));
    }
    return -1;
}

// The largest of each of `planes` planes of n >= 16 bytes (T int8 or uint8) at x, n apart,
// into out[0 .. returned), sixteen planes at a time (the rest is the caller's): each plane
// folded into 16 bytes (its vectors' maximum, the last vector an overlapping load), then the
// sixteen folds halved together by unpacking pairs of them and taking the maximum, four times,
// so that the sixteen planes' maxima end in one vector in plane order. A plane of a few dozen
// bytes pays a few instructions rather than max_run's reduction of its own vector. Integer
// maxima: the portable loops' values.
template <class T>
inline __m128i max_bytes16(__m128i a, __m128i b) {
    return std::is_signed<T>::value ? _mm_max_epi8(a, b) : _mm_max_epu8(a, b);
}

template <class T>
inline index_t max_byte_planes(const T* x, index_t n, index_t planes, T* out) {
    static_assert(sizeof(T) == 1 && std::is_integral<T>::value, "1-byte integer planes");
    if (n < 16) return 0;
    auto load16 = [](const T* at) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    };
    auto fold = [&](const T* plane) {
        if (n < 32) return max_bytes16<T>(load16(plane), load16(plane + n - 16));
        typedef Lanes<T> L;
        typename L::V m = L::load(plane);
        index_t i = 32;
        for (; i + 32 <= n; i += 32) m = L::max(m, L::load(plane + i));
        if (i < n) m = L::max(m, L::load(plane + n - 32));
        return max_bytes16<T>(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    };
    index_t p = 0;
    for (; p + 16 <= planes; p += 16) {
        __m128i v[16];
        for (int k = 0; k < 16; ++k) v[k] = fold(x + (p + k) * n);
        // (After each level, unit k of the wider element size holds planes in order, half as
        // many of each plane's bytes left.)
        for (int k = 0; k < 8; ++k) {
            v[k] = max_bytes16<T>(_mm_unpacklo_epi8(v[2 * k], v[2 * k + 1]),
                                  _mm_unpackhi_epi8(v[2 * k], v[2 * k + 1]));
        }
        for (int k = 0; k < 4; ++k) {
            v[k] = max_bytes16<T>(_mm_unpacklo_epi16(v[2 * k], v[2 * k + 1]),
                                  _mm_unpackhi_epi16(v[2 * k], v[2 * k + 1]));
        }
        for (int k = 0; k < 2; ++k) {
            v[k] = max_bytes16<T>(_mm_unpacklo_epi32(v[2 * k], v[2 * k + 1]),
                                  _mm_unpackhi_epi32(v[2 * k], v[2 * k + 1]));
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + p),
                         max_bytes16<T>(_mm_unpacklo_epi64(v[0], v[1]),
                                        _mm_unpackhi_epi64(v[0], v[1])));
    }
    return p;
}

// Sums of planes of n <= 8 bytes (int8 or uint8), four planes per instruction: two planes
// to each 128-bit half, each spread by a byte shuffle to its own eight bytes (zeros after its
// n), then summed by PSADBW against zero. int8 bytes are biased by 128 first (their sign bit
// flipped), and 128 * n taken off each sum. Integer sums, exact: the portable loops' values.
// Sums planes [0, done) of x into sums[0 .. done) and returns done, a multiple of four: the
// planes whose 16-byte loads stay within the `readable` bytes from x.
template <class S>
inline index_t sum_byte_planes(const S* x, index_t n, index_t planes, index_t readable,
                               std::int32_t* sums) {
    static_assert(sizeof(S) == 1, "byte planes only");
    alignas(16) std::int8_t order[16];
    for (int j = 0; j < 16; ++j) {
        const int k = j % 8;
        order[j] = static_cast<std::int8_t>(k < n ? (j / 8) * n + k : -1);  // -1: a zero byte
    }
    const __m256i spread = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(order)));
    const __m256i bias = _mm256_set1_epi8(std::is_signed<S>::value ? char(0x80) : 0);
    const __m256i unbias = _mm256_set1_epi32(std::is_signed<S>::value ? 128 * static_cast<int>(n) : 0);
    const __m256i gather = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    index_t p = 0;
    for (; p + 4 <= planes && (p + 2) * n + 16 <= readable; p += 4) {
        const __m128i front = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + p * n));
        const __m128i back = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + (p + 2) * n));
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(front), back, 1);
        v = _mm256_shuffle_epi8(_mm256_xor_si256(v, bias), spread);
        const __m256i total = _mm256_sub_epi32(
            _mm256_permutevar8x32_epi32(_mm256_sad_epu8(v, _mm256_setzero_si256()), gather), unbias);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(sums + p), _mm256_castsi256_si128(total));
    }
    return p;
}

// The sum of a run of n >= 32 bytes (int8 or uint8) by PSADBW, 32 bytes per instruction into
// four 64-bit partial sums: int8 bytes biased by 128 (their sign bit flipped) and 128 per
// byte taken off the total. The last n % 32 bytes come from a load of the run's last 32,
// the bytes already summed masked to zero. Exact: the portable loop's value. (A whole plane
// of 66 bytes took about 75 instructions in the compiler's vector loop of int32 lanes, its
// set-up and remainder included.)
template <class S>
inline long long sum_bytes(const S* x, index_t n) {
    static_assert(sizeof(S) == 1, "bytes only");
    alignas(32) static const std::int8_t tail_mask[64] = {
        0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
        0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    const __m256i bias = _mm256_set1_epi8(std::is_signed<S>::value ? char(0x80) : 0);
    const __m256i zero = _mm256_setzero_si256();
    __m256i total = zero;
    index_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
        total = _mm256_add_epi64(total, _mm256_sad_epu8(_mm256_xor_si256(v, bias), zero));
    }
    if (i < n) {
        // (bytes 32 - (n - i) .. 31 of the last 32 are the ones not summed yet)
        const __m256i keep =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tail_mask + (n - i)));
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + n - 32));
        total = _mm256_add_epi64(
            total, _mm256_sad_epu8(_mm256_and_si256(_mm256_xor_si256(v, bias), keep), zero));
    }
    const __m128i half = _mm_add_epi64(_mm256_castsi256_si128(total),
                                       _mm256_extracti128_si256(total, 1));
    const long long sum = _mm_cvtsi128_si64(_mm_add_epi64(half, _mm_unpackhi_epi64(half, half)));
    return std::is_signed<S>::value ? sum - 128 * static_cast<long long>(n) : sum;
}

// A bound on |x[i]| for i < n (n >= 8), for the narrower sums of int32 / int64 averages
// (avg_ranged.hpp's magnitude_bound): four vectors a step, one instruction per vector and
// accumulator (the loop gcc made of the portable OR reduction took about eight an int32
// vector). int32: one more than the larger of the largest element and ~(the smallest), the
// elements' largest magnitude or one more. int64 (no 64-bit shift or minimum in AVX2): one
// more than the OR of x ^ sign(x), as the portable loop. The last vector overlaps the one
// before when n is not a multiple of the width (an element seen twice changes no bound).
template <class S>
inline std::uint64_t magnitude_bound(const S* x, index_t n) {
    constexpr index_t W = 32 / sizeof(S);
    auto at = [&](index_t i) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)); };
    if constexpr (sizeof(S) == 4) {
        __m256i hi0 = at(0), lo0 = hi0, hi1 = hi0, lo1 = hi0;
        index_t i = 0;
        for (; i + 4 * W <= n; i += 4 * W) {
            hi0 = _mm256_max_epi32(hi0, at(i));
            lo0 = _mm256_min_epi32(lo0, at(i));
            hi1 = _mm256_max_epi32(hi1, at(i + W));
            lo1 = _mm256_min_epi32(lo1, at(i + W));
            hi0 = _mm256_max_epi32(hi0, at(i + 2 * W));
            lo0 = _mm256_min_epi32(lo0, at(i + 2 * W));
            hi1 = _mm256_max_epi32(hi1, at(i + 3 * W));
            lo1 = _mm256_min_epi32(lo1, at(i + 3 * W));
        }
        for (;; i += W) {
            if (i + W > n) i = n - W;
            hi0 = _mm256_max_epi32(hi0, at(i));
            lo0 = _mm256_min_epi32(lo0, at(i));
            if (i + W >= n) break;
        }
        __m256i hi = _mm256_max_epi32(hi0, hi1), lo = _mm256_min_epi32(lo0, lo1);
        __m128i h = _mm_max_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
        __m128i l = _mm_min_epi32(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
        h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4e));
        l = _mm_min_epi32(l, _mm_shuffle_epi32(l, 0x4e));
        h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xb1));
        l = _mm_min_epi32(l, _mm_shuffle_epi32(l, 0xb1));
        const long long largest = _mm_cvtsi128_si32(h), smallest = _mm_cvtsi128_si32(l);
        return static_cast<std::uint64_t>(std::max(largest, ~smallest)) + 1;
    } else {
        static_assert(sizeof(S) == 8, "int32 or int64 elements");
        const __m256i zero = _mm256_setzero_si256();
        // (x ^ sign(x): sign(x) all ones exactly where 0 > x)
        auto folded = [&](index_t i) {
            const __m256i v = at(i);
            return _mm256_xor_si256(v, _mm256_cmpgt_epi64(zero, v));
        };
        __m256i b0 = zero, b1 = zero, b2 = zero, b3 = zero;
        index_t i = 0;
        for (; i + 4 * W <= n; i += 4 * W) {
            b0 = _mm256_or_si256(b0, folded(i));
            b1 = _mm256_or_si256(b1, folded(i + W));
            b2 = _mm256_or_si256(b2, folded(i + 2 * W));
            b3 = _mm256_or_si256(b3, folded(i + 3 * W));
        }
        for (;; i += W) {
            if (i + W > n) i = n - W;
            b0 = _mm256_or_si256(b0, folded(i));
            if (i + W >= n) break;
        }
        const __m256i b = _mm256_or_si256(_mm256_or_si256(b0, b1), _mm256_or_si256(b2, b3));
        const __m128i h = _mm_or_si128(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
        const std::uint64_t bits = static_cast<std::uint64_t>(
            _mm_cvtsi128_si64(_mm_or_si128(h, _mm_unpackhi_epi64(h, h))));
        return bits + 1;
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
#endif
