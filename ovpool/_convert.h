/* Scalar conversions between 16-bit float storage and float32, used by the Cython kernels.
 *
 * float16 and bfloat16 arrays reach the kernels as uint16 bit patterns. float16 goes through
 * the compiler's _Float16 type when it has one (GCC >= 12, Clang >= 15 on x86-64 and arm64),
 * so that F16C / NEON conversion instructions are used when the target allows them; otherwise
 * a portable bit-level conversion with round-to-nearest-even is used.
 */
#ifndef OVPOOL_CONVERT_H
#define OVPOOL_CONVERT_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

/* Sums of int64 inputs need more than 64 bits to stay exact. */
#if defined(__SIZEOF_INT128__)
typedef __int128 ovp_wide_t;
#else
typedef long long ovp_wide_t;
#endif

/* total / divisor rounded half to even, for a positive divisor. */
static inline ovp_wide_t ovp_divide_round_even(ovp_wide_t total, int64_t divisor) {
    ovp_wide_t quotient = total / divisor;
    ovp_wide_t remainder = total - quotient * divisor;
    ovp_wide_t twice = 2 * (remainder >= 0 ? remainder : -remainder);
    if (twice > divisor || (twice == divisor && (quotient & 1))) {
        quotient += total >= 0 ? 1 : -1;
    }
    return quotient;
}

static inline float ovp_bits_to_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t ovp_f32_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static inline float ovp_bf16_to_f32(uint16_t h) { return ovp_bits_to_f32((uint32_t)h << 16); }

static inline uint16_t ovp_f32_to_bf16(float f) {
    uint32_t u = ovp_f32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((u >> 16) | 0x40u);  /* keep NaN a (quiet) NaN */
    }
    u += 0x7fffu + ((u >> 16) & 1u);  /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

#if defined(__FLT16_MANT_DIG__) && !defined(OVPOOL_PORTABLE_HALF)

static inline float ovp_f16_to_f32(uint16_t h) { _Float16 v; memcpy(&v, &h, 2); return (float)v; }

/* acc[i] += row[i] over a float16 row. The vectoriser has no _Float16 vectors short of
 * AVX512-FP16, so with F16C the conversion is spelled out, eight elements at a time. */
#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
static inline void ovp_add_f16_row(float *acc, const uint16_t *row, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 value = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + i)));
        _mm256_storeu_ps(acc + i, _mm256_add_ps(_mm256_loadu_ps(acc + i), value));
    }
    for (; i < n; ++i) acc[i] += ovp_f16_to_f32(row[i]);
}
#else
static inline void ovp_add_f16_row(float *acc, const uint16_t *row, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; ++i) acc[i] += ovp_f16_to_f32(row[i]);
}
#endif
static inline uint16_t ovp_f32_to_f16(float f) { _Float16 v = (_Float16)f; uint16_t h; memcpy(&h, &v, 2); return h; }

#else

static inline float ovp_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {
        float magnitude = (float)mantissa * 5.9604644775390625e-8f;  /* mantissa * 2^-24 */
        return ovp_bits_to_f32(ovp_f32_to_bits(magnitude) | sign);
    }
    if (exponent == 31) {
        return ovp_bits_to_f32(sign | 0x7f800000u | (mantissa << 13));
    }
    return ovp_bits_to_f32(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

static inline uint16_t ovp_f32_to_f16(float f) {
    uint32_t u = ovp_f32_to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t magnitude = u & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);      /* NaN */
    if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);     /* rounds to inf */
    if (magnitude < 0x38800000u) {                                       /* f16 subnormal */
        if (magnitude < 0x33000000u) return sign;                        /* below half of 2^-24 */
        uint32_t exponent = magnitude >> 23;
        uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - exponent;   /* bring to units of 2^-24 */
        uint32_t result = mantissa >> shift;
        uint32_t rest = mantissa & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rest > half || (rest == half && (result & 1u))) result += 1u;
        return (uint16_t)(sign | result);
    }
    uint32_t rebased = magnitude - 0x38000000u;  /* exponent bias 127 -> 15 */
    uint32_t result = rebased >> 13;
    uint32_t rest = rebased & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) result += 1u;
    return (uint16_t)(sign | result);
}

static inline void ovp_add_f16_row(float *acc, const uint16_t *row, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; ++i) acc[i] += ovp_f16_to_f32(row[i]);
}

#endif

#endif
