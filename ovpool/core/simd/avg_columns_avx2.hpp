// Strided average windows along the last axis, eight rows at a time in columns (AVX2).
//
// Windows that step two or more elements apart along a contiguous row cannot be summed with
// one vector per tap across neighbouring outputs (their taps are not adjacent): the passes
// either sum every position densely and keep every step-th sum, or add one strided element at
// a time. Here eight rows are transposed into columns (column c: the eight rows' element c,
// 16-bit floats widened to float32, int8 / uint8 to int32 as they load), so that a tap of a window is one vector
// addition for all eight rows whatever the stride and dilation; the sums of eight windows are
// transposed back and stored row by row. The same goes for windows of no regular run
// (adaptive pooling: a window of a few taps starting every one or two elements, or 9 or 10
// every 8), which the passes would otherwise sum one window at a time.
//
// Order: every window sum starts from +0 and adds its taps in window order, as the passes'
// sequential sums do (the caller leaves windows that sum_windows splits into partial sums,
// 16 or more unit-step taps, to the passes), so results are the same bits. Integer sums
// (int32 lanes of 8-, 32- or 64-bit inputs, these last two only when the block's sums fit, as
// load8_i32 assumes) are exact in any order.
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
// float16 or bfloat16, int32 sums of 8-, 32- or 64-bit integers.
template <class Src, class A>
constexpr bool has_columns =
    (std::is_same<A, float>::value &&
     (std::is_same<Src, float>::value || std::is_same<Src, f16>::value || std::is_same<Src, bf16>::value)) ||
    (std::is_same<A, std::int32_t>::value && std::is_integral<Src>::value &&
     (sizeof(Src) == 1 || sizeof(Src) == 4 || sizeof(Src) == 8));

// Eight inputs as A lanes (float32 or int32), in a float vector's bits.
template <class A, class Src>
inline __m256 load8_lanes(const Src* p) {
    if constexpr (std::is_same<A, float>::value) {
        return load8_f32(p);
    } else {
        return _mm256_castsi256_ps(load8_i32(p));
    }
}

// a + b in A lanes (float32 or int32).
template <class A>
inline __m256 add8_lanes(__m256 a, __m256 b) {
    if constexpr (std::is_same<A, float>::value) {
        return _mm256_add_ps(a, b);
    } else {
        return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
    }
}

// Whether w's windows follow no regular run over half of them or more (adaptive pooling,
// whose windows the passes sum one at a time).
inline bool columns_irregular(const AxisTable& w) { return 2 * (w.hi - w.lo) < w.out_len; }

// Whether columns_last_axis takes the windows of w (summed in float32 or, `exact`, in an
// integer accumulator): rows of at least eight elements whose windows step two or more apart
// or are irregular, each spanning at most columns_room elements and, for float sums, each
// summed tap by tap by the passes (none of 16 or more unit-step taps: exact sums may take any
// order).
inline bool columns_suit(const AxisTable& w, bool exact) {
    if (w.length < 8 || !(w.step >= 2 || columns_irregular(w))) return false;
    for (index_t j = 0; j < w.out_len; ++j) {
        if (!exact && w.dil == 1 && w.count[j] >= 16) return false;
        if (w.count[j] > 0 && (w.count[j] - 1) * w.dil >= columns_room) return false;
    }
    return true;
}

// cols[(c - c0) * 8 + r] = A(row[r][c]) for r < 8, c0 <= c < c1 (c1 <= length, length
// >= 8), in 8x8 tiles (writing up to seven columns past c1 - c0 when a tile reaches past c1
// within the rows).
template <class A, class Src>
inline void columns_of_rows8(const Src* const* row, index_t length, index_t c0, index_t c1,
                             A* cols) {
    auto tile = [&](index_t at) {
        __m256 m[8];
        for (index_t r = 0; r < 8; ++r) m[r] = load8_lanes<A>(row[r] + at);
        transpose8x8(m);
        for (index_t k = 0; k < 8; ++k) {
            _mm256_storeu_ps(reinterpret_cast<float*>(cols + (at - c0 + k) * 8), m[k]);
        }
    };
    index_t c = c0;
    for (; c < c1 && c + 8 <= length; c += 8) tile(c);
    if (c < c1 && length - 8 >= c0) {
        // The row's last columns as its last eight, overlapping columns already written
        // (the same values again), rather than 8 conversions and stores per column.
        tile(length - 8);
        return;
    }
    for (; c < c1; ++c) {
        for (index_t r = 0; r < 8; ++r) cols[(c - c0) * 8 + r] = load<A>(row[r][c]);
    }
}

// The windows j0 .. j1 - 1 of a row whose taps lie in columns [c0, c1), at most columns_room
// of them (c0 >= c1: windows that read nothing).
struct ColumnPiece {
    index_t j0, j1, c0, c1;
};

// Pieces computed at once (rows of up to 64 * columns_room elements in one go).
constexpr index_t columns_pieces_held = 64;

// w's windows from j0 on in pieces of at most columns_room columns, left to right (first taps
// need not increase: padded dilated windows start at their first tap inside the row), at most
// `most` of them: their number. The same for every row, so computed once per call rather than
// per eight rows (a window's bookkeeping costs as much as summing one tap of it).
inline index_t column_pieces(const AxisTable& w, index_t j0, ColumnPiece* pieces, index_t most) {
    index_t count = 0;
    while (j0 < w.out_len && count < most) {
        index_t j1 = j0, c0 = w.length, c1 = 0;
        for (; j1 < w.out_len; ++j1) {
            if (w.count[j1] == 0) continue;  // (reads nothing)
            index_t first = std::min(c0, w.begin[j1]);
            index_t end = std::max(c1, w.begin[j1] + (w.count[j1] - 1) * w.dil + 1);
            if (end - first > columns_room) break;
            c0 = first;
            c1 = end;
        }
        pieces[count++] = ColumnPiece{j0, j1, c0, c1};
        j0 = j1;
    }
    return count;
}

// The windows of w over `outer` rows of src (rows of w.length elements, sums rows of
// w.out_len), eight rows at a time (a last group of fewer rows repeats its last row in the
// lanes past it, whose sums are not stored). The caller checks has_columns and columns_suit.
template <class Src, class A>
inline void columns_last_axis(const Src* src, A* dst, const AxisTable& w, index_t outer) {
    alignas(32) A cols[(columns_room + 8) * 8];
    const index_t length = w.length, out_len = w.out_len, dil8 = w.dil * 8, step8 = w.step * 8;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    ColumnPiece pieces[columns_pieces_held];
    for (index_t from = 0; from < out_len;) {
        const index_t held = column_pieces(w, from, pieces, columns_pieces_held);
        from = pieces[held - 1].j1;
        for (index_t o = 0; o < outer; o += 8) {
            const index_t rows = std::min<index_t>(8, outer - o);
            const Src* row[8];
            for (index_t r = 0; r < 8; ++r) row[r] = src + (o + std::min(r, rows - 1)) * length;
            A* d = dst + o * out_len;
            for (index_t q = 0; q < held; ++q) {
                const ColumnPiece& piece = pieces[q];
                const index_t j0 = piece.j0, j1 = piece.j1, c0 = piece.c0, c1 = piece.c1;
                if (c0 < c1) columns_of_rows8(row, length, c0, c1, cols);
                for (index_t jt = j0; jt < j1; jt += 8) {
                    const index_t n = std::min<index_t>(8, j1 - jt);
                    __m256 acc[8];
                    for (index_t k = 0; k < 8; ++k) acc[k] = _mm256_setzero_ps();
                    if (n == 8 && jt >= w.lo && jt + 8 <= w.hi) {
                        // Eight full windows: taps w.step apart from one window to the next.
                        const float* p = reinterpret_cast<const float*>(cols + (w.begin[jt] - c0) * 8);
                        for (index_t t = 0; t < w.taps; ++t, p += dil8) {
                            for (index_t k = 0; k < 8; ++k) {
                                acc[k] = add8_lanes<A>(acc[k], _mm256_load_ps(p + k * step8));
                            }
                        }
                    } else {
                        for (index_t k = 0; k < n; ++k) {
                            if (w.count[jt + k] == 0) continue;
                            const float* p = reinterpret_cast<const float*>(cols + (w.begin[jt + k] - c0) * 8);
                            for (index_t t = 0; t < w.count[jt + k]; ++t) {
                                acc[k] = add8_lanes<A>(acc[k], _mm256_load_ps(p + t * dil8));
                            }
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
                            _mm256_maskstore_ps(reinterpret_cast<float*>(d + r * out_len + jt), mask, acc[r]);
                        }
                    }
                }
            }
        }
    }
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
