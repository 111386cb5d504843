// Strided average windows along the last axis, eight rows at a time in columns (AVX2).
//
// Windows that step two or more elements apart along a contiguous row cannot be summed with
// one vector per tap across neighbouring outputs (their taps are not adjacent): the passes
// either sum every position densely and keep every step-th sum, or add one strided element at
// a time. Here eight rows are transposed into columns (column c: the eight rows' element c,
// 16-bit floats widened to float32 as they load), so that a tap of a window is one vector
// addition for all eight rows whatever the stride and dilation; the sums of eight windows are
// transposed back and stored row by row. The same goes for windows of no regular run
// (adaptive pooling: a window of a few taps starting every one or two elements, or 9 or 10
// every 8), which the passes would otherwise sum one window at a time. Integer sums (int32,
// of 8-, 32- or 64-bit inputs) go the same way.
//
// Order: every window sum starts from +0 and adds its taps in window order, as the passes'
// sequential sums do (the caller leaves float windows that sum_windows splits into partial
// sums, 16 or more unit-step taps, to the passes), so results are the same bits. (Integer sums
// are exact in any order.)
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_AVG_COLUMNS_AVX2_HPP
#define OVPOOL_CORE_SIMD_AVG_COLUMNS_AVX2_HPP

#include <algorithm>
#include <type_traits>

#include "../config.hpp"
#include "../geometry.hpp"
#include "../types.hpp"
#include "average_avx2.hpp"
#include "lanes_avx2.hpp"
#include "transpose_avx2.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Columns held at once (per eight rows: 16 KiB of 32-bit sums, within L1).
constexpr index_t columns_room = 512;

// Whether columns_last_axis exists for Src rows summed in A: float32 sums of float32,
// float16 or bfloat16, and int32 sums of 8-, 32- or 64-bit integers (these in int32 only
// when their sums fit, as load8_i32 assumes).
template <class Src, class A>
constexpr bool has_columns =
    (std::is_same<A, float>::value &&
     (std::is_same<Src, float>::value || std::is_same<Src, f16>::value ||
      std::is_same<Src, bf16>::value)) ||
    (std::is_same<A, std::int32_t>::value && std::is_integral<Src>::value &&
     (sizeof(Src) == 1 || sizeof(Src) == 4 || sizeof(Src) == 8));

// Whether columns_last_axis takes the windows of w (summed in float32 or, `exact`, in an
// integer accumulator): rows of at least eight elements whose windows either step two or more
// apart (float sums) or follow no regular run over half of them or more (adaptive pooling,
// whose windows the passes sum one at a time), each spanning at most columns_room elements,
// and, for float sums, each summed tap by tap by the passes (none of 16 or more unit-step
// taps: exact sums may take any order).
inline bool columns_suit(const AxisTable& w, bool exact) {
    const bool irregular = 2 * (w.hi - w.lo) < w.out_len;
    if (w.length < 8 || !(exact ? irregular : (w.step >= 2 || irregular))) return false;
    for (index_t j = 0; j < w.out_len; ++j) {
        if (!exact && w.dil == 1 && w.count[j] >= 16) return false;
        if (w.count[j] > 0 && (w.count[j] - 1) * w.dil >= columns_room) return false;
    }
    return true;
}

// Additions of eight sums of A held as the bits of an __m256 (as load_widened8 loads them),
// and one element widened to A.
template <class A>
struct ColumnOps;
template <>
struct ColumnOps<float> {
    static __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
    template <class Src>
    static float widen(Src v) { return load<float>(v); }
};
template <>
struct ColumnOps<std::int32_t> {
    static __m256 add(__m256 a, __m256 b) {
        return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
    }
    template <class Src>
    static std::int32_t widen(Src v) { return static_cast<std::int32_t>(v); }
};

// cols[(c - c0) * 8 + r] = A(row[r][c]) for r < 8, c0 <= c < c1 (c1 <= length, length
// >= 8), in 8x8 tiles (writing up to seven columns past c1 - c0 when a tile reaches past c1
// within the rows).
template <class A, class Src>
inline void columns_of_rows8(const Src* const* row, index_t length, index_t c0, index_t c1,
                             A* cols) {
    index_t c = c0;
    for (; c < c1 && c + 8 <= length; c += 8) {
        __m256 m[8];
        for (index_t r = 0; r < 8; ++r) m[r] = load_widened8(row[r] + c);
        transpose8x8(m);
        for (index_t k = 0; k < 8; ++k) {
            _mm256_storeu_ps(reinterpret_cast<float*>(cols + (c - c0 + k) * 8), m[k]);
        }
    }
    for (; c < c1; ++c) {
        for (index_t r = 0; r < 8; ++r) cols[(c - c0) * 8 + r] = ColumnOps<A>::widen(row[r][c]);
    }
}

// The windows of w over `outer` rows of src (rows of w.length elements, sums rows of
// w.out_len), eight rows at a time (a last group of fewer rows repeats its last row in the
// lanes past it, whose sums are not stored). The caller checks has_columns and columns_suit.
template <class Src, class A>
inline void columns_last_axis(const Src* src, A* dst, const AxisTable& w, index_t outer) {
    typedef ColumnOps<A> Ops;
    alignas(32) A cols[(columns_room + 8) * 8];
    const index_t length = w.length, out_len = w.out_len, dil8 = w.dil * 8, step8 = w.step * 8;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (index_t j0 = 0; j0 < out_len;) {
        // Windows j0 .. j1 - 1, whose taps lie in columns [c0, c1), at most columns_room of
        // them (first taps need not increase: padded dilated windows start at their first tap
        // inside the row); then every group of eight rows over those columns.
        index_t j1 = j0, c0 = length, c1 = 0;
        for (; j1 < out_len; ++j1) {
            if (w.count[j1] == 0) continue;  // (reads nothing)
            index_t first = std::min(c0, w.begin[j1]);
            index_t end = std::max(c1, w.begin[j1] + (w.count[j1] - 1) * w.dil + 1);
            if (end - first > columns_room) break;
            c0 = first;
            c1 = end;
        }
        for (index_t o = 0; o < outer; o += 8) {
            const index_t rows = std::min<index_t>(8, outer - o);
            const Src* row[8];
            for (index_t r = 0; r < 8; ++r) row[r] = src + (o + std::min(r, rows - 1)) * length;
            A* d = dst + o * out_len;
            if (c0 < c1) columns_of_rows8<A>(row, length, c0, c1, cols);
            for (index_t jt = j0; jt < j1; jt += 8) {
                const index_t n = std::min<index_t>(8, j1 - jt);
                __m256 acc[8];
                if (n == 8 && jt >= w.lo && jt + 8 <= w.hi) {
                    // Eight full windows: taps w.step apart from one window to the next.
                    for (index_t k = 0; k < 8; ++k) acc[k] = _mm256_setzero_ps();
                    const float* p = reinterpret_cast<const float*>(cols + (w.begin[jt] - c0) * 8);
                    for (index_t t = 0; t < w.taps; ++t, p += dil8) {
                        for (index_t k = 0; k < 8; ++k) {
                            acc[k] = Ops::add(acc[k], _mm256_load_ps(p + k * step8));
                        }
                    }
                } else {
                    for (index_t k = 0; k < 8; ++k) {
                        __m256 sum = _mm256_setzero_ps();
                        if (k < n) {
                            const index_t taps = w.count[jt + k];
                            const float* p =
                                reinterpret_cast<const float*>(cols + (w.begin[jt + k] - c0) * 8);
                            for (index_t t = 0; t < taps; ++t, p += dil8) {
                                sum = Ops::add(sum, _mm256_load_ps(p));
                            }
                        }
                        acc[k] = sum;
                    }
                }
                transpose8x8(acc);
                if (n == 8) {
                    for (index_t r = 0; r < rows; ++r) {
                        _mm256_storeu_ps(reinterpret_cast<float*>(d + r * out_len + jt), acc[r]);
                    }
                } else {
                    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
                    for (index_t r = 0; r < rows; ++r) {
                        _mm256_maskstore_ps(reinterpret_cast<float*>(d + r * out_len + jt), mask,
                                            acc[r]);
                    }
                }
            }
        }
        j0 = j1;
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
