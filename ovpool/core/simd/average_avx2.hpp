// AVX2 helpers of average pooling.
//
// - divide_round_even8: the rounded integer averages of eight window sums (int64 or int32) at
//   once: four double divisions per instruction (the scalar rule, average.hpp's
//   divide_round_even_small, one), or eight float32 ones when the sums are small enough.
//   The result is exact, so the same as the scalar rule's in every build.
// - sum_rows8 / sum_rows4: d[k] = 0 + s[k] + s[gap + k] + ... over `rows` runs, k < 8 (4),
//   for average.hpp's sum_rows_chunk (short rows), in one or two vector accumulators,
//   widening each input type as it loads (the compiler's own vectorisation of the scalar
//   chunk falls back to lane-by-lane extracts for the widening loads). Each lane adds its
//   taps in the scalar order, so the sums are the same bits.
// - slide_windows: windows of K consecutive runs of 16-bit floats sliding a run at a time,
//   each run widened once and added into the K window sums it belongs to, held in
//   registers; each window adds its runs from +0 in order (the scalar order).
// - strided_sums8: eight int8 / uint8 windows strided 2 to 4 apart along a row, each tap's
//   bytes picked from 16-byte loads and widened to int32 (exact sums, in any order).
// - last_axis_rows8: the windows along the last axis of eight rows of at most eight elements
//   (small planes), through an 8x8 transpose, so that a tap is one vector addition for eight
//   rows; each lane adds its taps in the scalar order.
// - divide_to_half8: eight float32 averages rounded to float16 (one F16C instruction) or
//   bfloat16 (widen.hpp's narrow8) at once (the scalar store converts one element at a time
//   and keeps the loop from vectorising); the same rounding, so the same bits.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_AVERAGE_AVX2_HPP
#define OVPOOL_CORE_SIMD_AVERAGE_AVX2_HPP

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "../types.hpp"
#include "transpose_avx2.hpp"
#include "widen.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// round_half_even(total / divisor) of four integer totals |total| < 2^31 held as doubles, as
// int32. `divisor` holds the divisors, +inf for an empty window (whose result is 0). The
// correctly rounded quotient rounds to the same integer as the exact one (see average.hpp's
// divide_round_even_small); the conversion rounds to nearest even (the default rounding
// mode).
inline __m128i divide_round_even4(__m256d total, __m256d divisor) {
    return _mm256_cvtpd_epi32(_mm256_div_pd(total, divisor));
}

// Eight divisors as float32: converted from doubles, or float32 ones made once per call
// (static_cast<float> of the same doubles: the same values).
inline __m256 divisors8_f32(const double* real) {
    return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(real + 4)),
                           _mm256_cvtpd_ps(_mm256_loadu_pd(real)));
}
inline __m256 divisors8_f32(const float* real32) { return _mm256_loadu_ps(real32); }

// The same for eight int32 sums |sum| < 2^23 over divisors below 2^24 (exact as float32):
// the float32 quotient rounds correctly too, and eight of them take one division.
template <class D>
inline __m256i divide_round_even8_small(__m256i sums, const D* real) {
    return _mm256_cvtps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(sums), divisors8_f32(real)));
}

template <class D>
inline __m256i divide_round_even8_small(const std::int32_t* sums, const D* real) {
    return divide_round_even8_small(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums)), real);
}

// The same for eight int16 sums (int8 / uint8 inputs summed in int16), widened first.
template <class D>
inline __m256i divide_round_even8_small(const std::int16_t* sums, const D* real) {
    return divide_round_even8_small(
        _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sums))), real);
}

// out[0 .. 8) = the eight int32 averages q, stored as S (each in S's range).
template <class S>
inline void store_averages8(S* out, __m256i q) {
    if constexpr (sizeof(S) == 1) {
        __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        __m128i bytes = std::is_signed<S>::value ? _mm_packs_epi16(words, words)
                                                 : _mm_packus_epi16(words, words);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
    } else if constexpr (sizeof(S) == 4) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), q);
    } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                            _mm256_cvtepi32_epi64(_mm256_castsi256_si128(q)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4),
                            _mm256_cvtepi32_epi64(_mm256_extracti128_si256(q, 1)));
    }
}

// *quotients = round_half_even(sums[i] / divisor) for i < 8 (0 for an empty window, whose
// `real` is +inf), as int32, when all eight sums fit in int32; otherwise false.
inline bool divide_round_even8(const long long* sums, const double* real, __m256i* quotients) {
    __m256i t0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums));
    __m256i t1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + 4));
    // The low 32 bits of each sum, sign-extended back: equal to the sum when it fits.
    __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m128i l0 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(t0, low_halves));
    __m128i l1 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(t1, low_halves));
    __m256i fits = _mm256_and_si256(_mm256_cmpeq_epi64(_mm256_cvtepi32_epi64(l0), t0),
                                    _mm256_cmpeq_epi64(_mm256_cvtepi32_epi64(l1), t1));
    if (_mm256_movemask_epi8(fits) != -1) return false;
    __m128i q0 = divide_round_even4(_mm256_cvtepi32_pd(l0), _mm256_loadu_pd(real));
    __m128i q1 = divide_round_even4(_mm256_cvtepi32_pd(l1), _mm256_loadu_pd(real + 4));
    *quotients = _mm256_set_m128i(q1, q0);
    return true;
}

// The same for eight int32 sums (always in range).
inline __m256i divide_round_even8(const std::int32_t* sums, const double* real) {
    __m256i t = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums));
    __m128i q0 = divide_round_even4(_mm256_cvtepi32_pd(_mm256_castsi256_si128(t)),
                                    _mm256_loadu_pd(real));
    __m128i q1 = divide_round_even4(_mm256_cvtepi32_pd(_mm256_extracti128_si256(t, 1)),
                                    _mm256_loadu_pd(real + 4));
    return _mm256_set_m128i(q1, q0);
}

// out[0 .. 8) = S(sums[i] / float(real[i])) for 16-bit float storage S (narrow8's rounding).
template <class S>
inline void divide_to_half8(const float* sums, const double* real, S* out) {
    __m256 divisor = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(real + 4)),
                                     _mm256_cvtpd_ps(_mm256_loadu_pd(real)));
    __m256 average = _mm256_div_ps(_mm256_loadu_ps(sums), divisor);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), narrow8<S>(average));
}

// The same with the divisors already float32 (Divisors::real32).
template <class S>
inline void divide_to_half8(const float* sums, const float* real32, S* out) {
    __m256 average = _mm256_div_ps(_mm256_loadu_ps(sums), _mm256_loadu_ps(real32));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), narrow8<S>(average));
}

// Eight inputs as int32 lanes (64-bit inputs: their low halves, for values that fit).
template <class Src>
inline __m256i load8_i32(const Src* p) {
    static_assert(std::is_integral<Src>::value, "integer inputs");
    if constexpr (sizeof(Src) == 1) {
        __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
        return std::is_signed<Src>::value ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
    } else if constexpr (sizeof(Src) == 4) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    } else {
        const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        __m256i a = _mm256_permutevar8x32_epi32(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), low_halves);
        __m256i b = _mm256_permutevar8x32_epi32(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4)), low_halves);
        return _mm256_inserti128_si256(a, _mm256_castsi256_si128(b), 1);
    }
}

// Eight inputs as float32 lanes.
inline __m256 load8_f32(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8_f32(const f16* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load8_f32(const bf16* p) {
    __m256i words = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(words, 16));
}

// Four inputs as int64 lanes.
template <class Src>
inline __m256i load4_i64(const Src* p) {
    static_assert(std::is_integral<Src>::value, "integer inputs");
    if constexpr (sizeof(Src) == 4) {
        return _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    } else {
        static_assert(sizeof(Src) == 8, "32- or 64-bit inputs");
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
}

// Four inputs as int32 lanes (64-bit inputs: their low halves).
template <class Src>
inline __m128i load4_i32(const Src* p) {
    static_assert(std::is_integral<Src>::value, "integer inputs");
    if constexpr (sizeof(Src) == 1) {
        std::int32_t word;
        std::memcpy(&word, p, 4);
        __m128i bytes = _mm_cvtsi32_si128(word);
        return std::is_signed<Src>::value ? _mm_cvtepi8_epi32(bytes) : _mm_cvtepu8_epi32(bytes);
    } else if constexpr (sizeof(Src) == 4) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    } else {
        return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
            _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
    }
}

// Four inputs as float32 lanes.
inline __m128 load4_f32(const float* p) { return _mm_loadu_ps(p); }
inline __m128 load4_f32(const f16* p) {
    return _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline __m128 load4_f32(const bf16* p) {
    __m128i words = _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm_castsi128_ps(_mm_slli_epi32(words, 16));
}

// Whether sum_rows8<Src, A> and sum_rows4<Src, A> exist.
template <class Src, class A>
constexpr bool has_sum_rows8 =
    (std::is_same<A, std::int32_t>::value && std::is_integral<Src>::value &&
     (sizeof(Src) == 1 || sizeof(Src) == 4 || sizeof(Src) == 8)) ||
    (std::is_same<A, float>::value &&
     (std::is_same<Src, float>::value || std::is_same<Src, f16>::value ||
      std::is_same<Src, bf16>::value)) ||
    (std::is_same<A, long long>::value && std::is_integral<Src>::value &&
     (sizeof(Src) == 4 || sizeof(Src) == 8)) ||
    (std::is_same<A, double>::value && std::is_same<Src, double>::value);

template <class Src, class A>
inline void sum_rows8(A* d, const Src* s, index_t gap, index_t rows) {
    if constexpr (std::is_same<A, std::int32_t>::value) {
        __m256i total = _mm256_setzero_si256();
        for (index_t t = 0; t < rows; ++t) total = _mm256_add_epi32(total, load8_i32(s + t * gap));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), total);
    } else if constexpr (std::is_same<A, float>::value) {
        __m256 total = _mm256_setzero_ps();
        for (index_t t = 0; t < rows; ++t) total = _mm256_add_ps(total, load8_f32(s + t * gap));
        _mm256_storeu_ps(d, total);
    } else if constexpr (std::is_same<A, long long>::value) {
        __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
        for (index_t t = 0; t < rows; ++t) {
            lo = _mm256_add_epi64(lo, load4_i64(s + t * gap));
            hi = _mm256_add_epi64(hi, load4_i64(s + t * gap + 4));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), lo);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 4), hi);
    } else {
        static_assert(std::is_same<A, double>::value, "see has_sum_rows8");
        __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
        for (index_t t = 0; t < rows; ++t) {
            lo = _mm256_add_pd(lo, _mm256_loadu_pd(s + t * gap));
            hi = _mm256_add_pd(hi, _mm256_loadu_pd(s + t * gap + 4));
        }
        _mm256_storeu_pd(d, lo);
        _mm256_storeu_pd(d + 4, hi);
    }
}

// The same for k < 16, int32 or float32 sums: two accumulators in one loop over the runs
// (int16 sums of int16 runs, avg_blocks.hpp's 16-bit lanes: one).
template <class Src, class A>
constexpr bool has_sum_rows16 =
    (has_sum_rows8<Src, A> &&
     (std::is_same<A, std::int32_t>::value || std::is_same<A, float>::value)) ||
    (std::is_same<A, std::int16_t>::value && std::is_same<Src, std::int16_t>::value);

// int16 sums of R runs (one vector each), the runs unrolled.
template <int R>
inline void sum_short_runs16(std::int16_t* d, const std::int16_t* s, index_t gap) {
    __m256i total = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    for (int t = 1; t < R; ++t) {
        total = _mm256_add_epi16(
            total, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + t * gap)));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), total);
}

// d[k] = 0 + s[k] + s[gap + k] + ... (`rows` runs), k < 16, in float32: sum_rows16's float
// sums. `rows` an index_t or, for runs unrolled, a std::integral_constant.
template <class Src, class Count>
inline void float_runs16(float* d, const Src* s, index_t gap, Count rows) {
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    for (index_t t = 0; t < rows; ++t) {
        lo = _mm256_add_ps(lo, load8_f32(s + t * gap));
        hi = _mm256_add_ps(hi, load8_f32(s + t * gap + 8));
    }
    _mm256_storeu_ps(d, lo);
    _mm256_storeu_ps(d + 8, hi);
}

template <class Src, class A>
inline void sum_rows16(A* d, const Src* s, index_t gap, index_t rows) {
    if constexpr (std::is_same<A, std::int16_t>::value) {
        // (A window of the int16 plane blocks: a few taps of one vector each, which a loop
        // over the taps spent five instructions on for each one-instruction addition; the
        // sums are exact, so the order is free.)
        switch (rows) {
            case 1: sum_short_runs16<1>(d, s, gap); return;
            case 2: sum_short_runs16<2>(d, s, gap); return;
            case 3: sum_short_runs16<3>(d, s, gap); return;
            case 4: sum_short_runs16<4>(d, s, gap); return;
            case 5: sum_short_runs16<5>(d, s, gap); return;
            case 6: sum_short_runs16<6>(d, s, gap); return;
            case 7: sum_short_runs16<7>(d, s, gap); return;
            case 8: sum_short_runs16<8>(d, s, gap); return;
            default: break;
        }
        __m256i total = _mm256_setzero_si256();
        for (index_t t = 0; t < rows; ++t) {
            const __m256i run = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + t * gap));
            total = _mm256_add_epi16(total, run);
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), total);
    } else if constexpr (std::is_same<A, std::int32_t>::value) {
        __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
        for (index_t t = 0; t < rows; ++t) {
            lo = _mm256_add_epi32(lo, load8_i32(s + t * gap));
            hi = _mm256_add_epi32(hi, load8_i32(s + t * gap + 8));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), lo);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 8), hi);
    } else {
        float_runs16(d, s, gap, rows);
    }
}

// float32 sums of R runs of sixteen elements: sum_rows16's sums for rows == R, the runs
// unrolled (for a row of windows of one tap count, the count picked once: see
// average.hpp's sum_pass_shaped).
template <int R, class Src>
inline void sum_runs16(float* d, const Src* s, index_t gap) {
    float_runs16(d, s, gap, std::integral_constant<int, R>{});
}

// The same for int16 sums of int16 runs (the int16 plane blocks' lanes).
template <int R>
inline void sum_runs16(std::int16_t* d, const std::int16_t* s, index_t gap) {
    sum_short_runs16<R>(d, s, gap);
}

// f(integral_constant<int, 0>), ..., f(integral_constant<int, N - 1>), in that order: a loop
// unrolled with its index a constant (so that arrays indexed by it stay in registers).
template <class F, int... I>
OVPOOL_FORCE_INLINE inline void each_constant(const F& f, std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
OVPOOL_FORCE_INLINE inline void each_constant(const F& f) {
    each_constant(f, std::make_integer_sequence<int, N>{});
}

// Windows of K consecutive runs sliding one run at a time, for 16-bit floats: out[m * out_gap
// + l] = 0 + in[m * in_gap + l] + in[(m + 1) * in_gap + l] + ... + in[(m + K - 1) * in_gap +
// l] for m < windows, l < 8 * V, each window adding its runs in order from +0 (sweep_rows'
// order, so the same bits). Each run is loaded and widened once and added into the K windows
// that read it, whose sums stay in registers (window m in slot m % K), rather than widened
// again for every window that reads it (average.hpp's sum_full_window_rows; float16 k7
// windows widened each input row seven times). The windows that the last K - 1 runs start
// are summed too, and never stored.
template <int K, int V, class Src>
inline void slide_windows(float* out, index_t out_gap, const Src* in, index_t in_gap,
                          index_t windows) {
    static_assert(K * V + V + 1 <= 16, "the sums, a run and +0 in the sixteen registers");
    const __m256 zero = _mm256_setzero_ps();
    __m256 sum[K][V];
    // The next run k (at `in`), whose slot is U = k % K: the windows k - K + 1 .. k - 1
    // (slots U + 1 .. U + K - 1, modulo K) add it, those from the Live-th on (the first runs
    // have fewer windows before them), and window k starts from +0 with it; with `store`,
    // window k - K + 1, then whole, is stored at `out`.
    auto take = [&](auto slot, auto live, bool store) {
        constexpr int U = decltype(slot)::value, Live = decltype(live)::value;
        __m256 run[V];
        each_constant<V>([&](auto v) { run[v] = load8_f32(in + 8 * decltype(v)::value); });
        each_constant<K>([&](auto t) {
            if constexpr (decltype(t)::value >= Live) {
                constexpr int S = (U + 1 + decltype(t)::value) % K;
                each_constant<V>([&](auto v) {
                    constexpr int L = decltype(v)::value;
                    sum[S][L] = _mm256_add_ps(S == U ? zero : sum[S][L], run[L]);
                });
            }
        });
        if (store) {
            constexpr int F = (U + 1) % K;
            each_constant<V>([&](auto v) {
                _mm256_storeu_ps(out + 8 * decltype(v)::value, sum[F][decltype(v)::value]);
            });
            out += out_gap;
        }
        in += in_gap;
    };
    // Runs 0 .. K - 2: run k is in windows 0 .. k, none of them whole yet.
    each_constant<K - 1>([&](auto k) {
        take(k, std::integral_constant<int, K - 1 - decltype(k)::value>{}, false);
    });
    // Then each run completes a window: run K - 1 + u is in slot (K - 1 + u) % K.
    const std::integral_constant<int, 0> all;
    index_t left = windows;
    for (; left >= K; left -= K) {
        each_constant<K>([&](auto u) {
            take(std::integral_constant<int, (K - 1 + decltype(u)::value) % K>{}, all, true);
        });
    }
    each_constant<K>([&](auto u) {
        if (decltype(u)::value < left) {
            take(std::integral_constant<int, (K - 1 + decltype(u)::value) % K>{}, all, true);
        }
    });
}

// The same for K = 2 to 8 runs, V vectors (1 or 2, 2 only up to K = 6) a column.
template <class Src>
inline void slide_windows(float* out, index_t out_gap, const Src* in, index_t in_gap,
                          index_t windows, index_t taps, int vectors) {
    auto slide = [&](auto k) {
        constexpr int K = decltype(k)::value;
        if constexpr (K <= 6) {
            if (vectors == 2) {
                slide_windows<K, 2>(out, out_gap, in, in_gap, windows);
                return true;
            }
        }
        slide_windows<K, 1>(out, out_gap, in, in_gap, windows);
        return true;
    };
    with_constant<2, 8>(taps, slide);
}

// The same for k < 4.
template <class Src, class A>
inline void sum_rows4(A* d, const Src* s, index_t gap, index_t rows) {
    if constexpr (std::is_same<A, std::int32_t>::value) {
        __m128i total = _mm_setzero_si128();
        for (index_t t = 0; t < rows; ++t) total = _mm_add_epi32(total, load4_i32(s + t * gap));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), total);
    } else if constexpr (std::is_same<A, float>::value) {
        __m128 total = _mm_setzero_ps();
        for (index_t t = 0; t < rows; ++t) total = _mm_add_ps(total, load4_f32(s + t * gap));
        _mm_storeu_ps(d, total);
    } else if constexpr (std::is_same<A, long long>::value) {
        __m256i total = _mm256_setzero_si256();
        for (index_t t = 0; t < rows; ++t) total = _mm256_add_epi64(total, load4_i64(s + t * gap));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), total);
    } else {
        static_assert(std::is_same<A, double>::value, "see has_sum_rows8");
        __m256d total = _mm256_setzero_pd();
        for (index_t t = 0; t < rows; ++t) total = _mm256_add_pd(total, _mm256_loadu_pd(s + t * gap));
        _mm256_storeu_pd(d, total);
    }
}

// The float32 sums of four runs of n >= 16 elements (run q at x + q * pitch), each in
// window_sum's order for a unit-step window of n taps (average.hpp): eight partial sums from
// +0 (lane k adds elements k, k + 8, ...), combined ((s0 + s1) + (s2 + s3)) + ((s4 + s5) +
// (s6 + s7)), then the elements after the last whole eight one by one. Four runs at once, so
// that four chains of dependent additions overlap (one run alone waits on each addition's
// latency: whole 17x17 float16 planes spent most of their time there). vhaddps adds its
// pairs with the operands the other way round, which gives the same sum of two numbers; of
// two NaNs it may keep the other payload, so the caller sums NaN totals again.
template <class Src>
inline void run_sums4(const Src* x, index_t pitch, index_t n, float* sums) {
    const Src* r0 = x;
    const Src* r1 = x + pitch;
    const Src* r2 = x + 2 * pitch;
    const Src* r3 = x + 3 * pitch;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    index_t t = 0;
    for (; t + 8 <= n; t += 8) {
        a0 = _mm256_add_ps(a0, load8_f32(r0 + t));
        a1 = _mm256_add_ps(a1, load8_f32(r1 + t));
        a2 = _mm256_add_ps(a2, load8_f32(r2 + t));
        a3 = _mm256_add_ps(a3, load8_f32(r3 + t));
    }
    // [s0+s1, s2+s3 of a0, then of a1 | s4+s5, s6+s7 of a0, then of a1], the same of a2, a3;
    // then [(s0+s1)+(s2+s3) of a0 .. a3 | (s4+s5)+(s6+s7) of a0 .. a3], and the two halves.
    __m256 pairs = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    _mm_storeu_ps(sums, _mm_add_ps(_mm256_castps256_ps128(pairs), _mm256_extractf128_ps(pairs, 1)));
    float s0 = sums[0], s1 = sums[1], s2 = sums[2], s3 = sums[3];
    for (; t < n; ++t) {
        s0 = s0 + load<float>(r0[t]);
        s1 = s1 + load<float>(r1[t]);
        s2 = s2 + load<float>(r2[t]);
        s3 = s3 + load<float>(r3[t]);
    }
    sums[0] = s0;
    sums[1] = s1;
    sums[2] = s2;
    sums[3] = s3;
}

// Whether strided_sums8<Src, A> exists: int32 or int16 sums of int8 / uint8 inputs.
template <class Src, class A>
constexpr bool has_strided_sums8 =
    (std::is_same<A, std::int32_t>::value || std::is_same<A, std::int16_t>::value) &&
    std::is_integral<Src>::value && sizeof(Src) == 1;

// The pshufb mask that picks bytes 0, step, 2 * step and 3 * step (step <= 4) of 16.
inline __m128i strided_pick(index_t step) {
    const char s = static_cast<char>(step);
    return _mm_setr_epi8(0, s, static_cast<char>(2 * s), static_cast<char>(3 * s), -1, -1, -1, -1,
                         -1, -1, -1, -1, -1, -1, -1, -1);
}

// One past the last byte strided_sums8 reads from p.
template <class Src>
inline const Src* strided_sums8_reach(const Src* p, index_t step, index_t dil, index_t taps) {
    return p + (taps - 1) * dil + 4 * step + 16;
}

// out[k] = 0 + p[k * step] + p[k * step + dil] + ... (`taps` taps) for k < 8, one-byte inputs
// 2 to 4 apart (`pick`: strided_pick(step)), in int32: each tap of the eight windows from two
// 16-byte loads (windows 0-3 and 4-7), its bytes picked and widened. Reads up to
// strided_sums8_reach. Integer sums: exact, so the same as one tap at a time in any order;
// int16 sums (A) narrowed from the int32 ones at the store, which the caller's sums fit.
template <class Src, class A>
inline void strided_sums8(const Src* p, __m128i pick, index_t step, index_t dil, index_t taps,
                          A* out) {
    __m256i total = _mm256_setzero_si256();
    for (index_t t = 0; t < taps; ++t, p += dil) {
        __m128i lo = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), pick);
        __m128i hi = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 4 * step)), pick);
        __m128i bytes = _mm_unpacklo_epi32(lo, hi);
        total = _mm256_add_epi32(total, std::is_signed<Src>::value ? _mm256_cvtepi8_epi32(bytes)
                                                                   : _mm256_cvtepu8_epi32(bytes));
    }
    if constexpr (std::is_same<A, std::int16_t>::value) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                         _mm_packs_epi32(_mm256_castsi256_si128(total),
                                         _mm256_extracti128_si256(total, 1)));
    } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), total);
    }
}

// Whether last_axis_rows8<Src, A> exists: float32 and int32 sums.
template <class Src, class A>
constexpr bool has_last_axis_rows8 =
    has_sum_rows8<Src, A> && (std::is_same<A, float>::value || std::is_same<A, std::int32_t>::value);

// The windows of eight rows of `length` <= 8 elements along the last axis (out_len <= 8
// windows each, window j: count[j] taps from begin[j], dil apart): dst[r * out_len + j] =
// 0 + x[begin[j]] + x[begin[j] + dil] + ... of row r, the scalar order. The rows are loaded
// eight elements each (reading up to 8 - length elements past a row: the caller keeps that
// within its input) and transposed, so that each tap of a window is one vector addition for
// all eight rows; the sums are transposed back and stored row by row in eight-lane stores,
// each store's lanes past out_len rewritten by the next rows'. A store that would reach past
// the group's 8 * out_len sums goes through a buffer instead, lane by lane.
template <class Src, class A>
inline void last_axis_rows8(const Src* src, A* dst, index_t length, index_t out_len,
                            const index_t* begin, const index_t* count, index_t dil) {
    constexpr bool integer = std::is_same<A, std::int32_t>::value;
    __m256 column[8], sums[8];
    for (index_t r = 0; r < 8; ++r) {
        if constexpr (integer) {
            column[r] = _mm256_castsi256_ps(load8_i32(src + r * length));
        } else {
            column[r] = load8_f32(src + r * length);
        }
    }
    transpose8x8(column);
    for (index_t j = 0; j < 8; ++j) {
        __m256 total = _mm256_setzero_ps();
        index_t taps = j < out_len ? count[j] : 0;
        for (index_t t = 0; t < taps; ++t) {
            __m256 tap = column[begin[j] + t * dil];
            if constexpr (integer) {
                total = _mm256_castsi256_ps(
                    _mm256_add_epi32(_mm256_castps_si256(total), _mm256_castps_si256(tap)));
            } else {
                total = _mm256_add_ps(total, tap);
            }
        }
        sums[j] = total;
    }
    transpose8x8(sums);
    index_t r = 0;
    for (; r < 8 && r * out_len + 8 <= 8 * out_len; ++r) {
        _mm256_storeu_ps(reinterpret_cast<float*>(dst + r * out_len), sums[r]);
    }
    for (; r < 8; ++r) {
        A row[8];
        _mm256_storeu_ps(reinterpret_cast<float*>(row), sums[r]);
        for (index_t j = 0; j < out_len; ++j) dst[r * out_len + j] = row[j];
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
