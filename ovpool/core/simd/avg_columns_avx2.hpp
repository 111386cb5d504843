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
// (The interior windows [lo, hi) all have w.taps taps, so they are checked once: the check
// runs on every pass over a block of rows, and a scan of every window took a quarter of
// bfloat16 96 rows of 2665 k4 s2 d3's instructions.)
inline bool columns_suit(const AxisTable& w, bool exact) {
    if (w.length < 8 || !(w.step >= 2 || columns_irregular(w))) return false;
    auto fits = [&](index_t taps) {
        if (!exact && w.dil == 1 && taps >= 16) return false;
        return taps == 0 || (taps - 1) * w.dil < columns_room;
    };
    if (w.hi > w.lo && !fits(w.taps)) return false;
    for (index_t j = 0; j < w.out_len; ++j) {
        if (j == w.lo && w.hi > w.lo) j = w.hi;
        if (j >= w.out_len) break;
        if (!fits(w.count[j])) return false;
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
// Interior windows (w.lo <= j < w.hi) at or right of a piece's first column c0 extend it by
// the same step each, so a run of them is added at once: the loop is then one step per
// edge window and per piece rather than per window (it runs on every pass over a block of
// rows). The same pieces as window by window.
inline index_t column_pieces(const AxisTable& w, index_t j0, ColumnPiece* pieces, index_t most) {
    index_t count = 0;
    const index_t span = w.taps > 0 ? (w.taps - 1) * w.dil + 1 : 0;  // an interior window's
    while (j0 < w.out_len && count < most) {
        index_t j1 = j0, c0 = w.length, c1 = 0;
        while (j1 < w.out_len) {
            if (w.count[j1] == 0) {  // (reads nothing)
                ++j1;
                continue;
            }
            const index_t b = w.begin[j1];
            if (j1 >= w.lo && j1 < w.hi && span > 0 && b >= c0 && c0 < w.length) {
                // Interior windows j1 .. last - 1 (begin b + (j - j1) * step >= c0): those
                // whose end stays within columns_room of c0.
                const index_t room = c0 + columns_room - span - b;  // >= 0 iff j1 fits
                if (room < 0) break;
                const index_t last = std::min(w.hi, j1 + room / w.step + 1);
                c1 = std::max(c1, b + (last - 1 - j1) * w.step + span);
                j1 = last;
                continue;
            }
            index_t first = std::min(c0, b);
            index_t end = std::max(c1, b + (w.count[j1] - 1) * w.dil + 1);
            if (end - first > columns_room) break;
            c0 = first;
            c1 = end;
            ++j1;
        }
        pieces[count++] = ColumnPiece{j0, j1, c0, c1};
        j0 = j1;
    }
    return count;
}

// f(row, rows, o, piece) for each group of G rows of src from row o (`rows` of them, the
// last repeated in row[] past them) and each piece of w's windows (column_pieces), pieces
// outermost: the loops of the column kernels.
template <index_t G, class Src, class F>
OVPOOL_FORCE_INLINE
inline void for_row_groups(const Src* src, const AxisTable& w, index_t outer, const F& f) {
    ColumnPiece pieces[columns_pieces_held];
    for (index_t from = 0; from < w.out_len;) {
        const index_t held = column_pieces(w, from, pieces, columns_pieces_held);
        from = pieces[held - 1].j1;
        for (index_t o = 0; o < outer; o += G) {
            const index_t rows = std::min<index_t>(G, outer - o);
            const Src* row[G];
            for (index_t r = 0; r < G; ++r) row[r] = src + (o + std::min(r, rows - 1)) * w.length;
            for (index_t q = 0; q < held; ++q) f(row, rows, o, pieces[q]);
        }
    }
}

// The windows of w over `outer` rows of src (rows of w.length elements, sums rows of
// w.out_len), eight rows at a time (a last group of fewer rows repeats its last row in the
// lanes past it, whose sums are not stored). The caller checks has_columns and columns_suit.
template <class Src, class A>
inline void columns_last_axis(const Src* src, A* dst, const AxisTable& w, index_t outer) {
    alignas(32) A cols[(columns_room + 8) * 8];
    const index_t length = w.length, out_len = w.out_len, dil8 = w.dil * 8, step8 = w.step * 8;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for_row_groups<8>(src, w, outer, [&](const Src* const* row, index_t rows, index_t o,
                                         const ColumnPiece& piece) OVPOOL_FORCE_INLINE {
        A* d = dst + o * out_len;
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
    });
}

// Whether the int16 columns (prefix_columns_last_axis16, columns_last_axis16) exist for Src
// rows: int16 sums of int8 / uint8 inputs or of an earlier pass's int16 sums.
template <class Src, class A>
constexpr bool has_columns16 =
    std::is_same<A, std::int16_t>::value && std::is_integral<Src>::value &&
    (sizeof(Src) == 1 || std::is_same<Src, std::int16_t>::value);

// Whether prefix_columns_last_axis16 takes the windows of w: irregular (adaptive) windows of
// adjacent taps (each window a difference of two running sums), as columns_suit allows.
inline bool prefix_columns_suit(const AxisTable& w) {
    return w.dil == 1 && columns_irregular(w) && columns_suit(w, true);
}

// Whether columns_last_axis16 takes the windows of w: regular windows of two taps or more
// strided two or more apart (any dilation), as columns_suit allows (one-tap windows, a plain
// subsample, gain nothing from the transposes, as in the int32 columns).
inline bool short_columns_suit(const AxisTable& w) {
    return w.step >= 2 && w.taps > 1 && !columns_irregular(w) && columns_suit(w, true);
}

// Eight elements at column `at` of each of sixteen rows as int16 lanes: m[p] holds row p's in
// its low half and row p + 8's in its high half (transpose8x8_epi16's two matrices).
template <class Src>
inline void rows16_as_short(const Src* const* row, index_t at, __m256i* m) {
    for (int p = 0; p < 8; ++p) {
        if constexpr (sizeof(Src) == 1) {
            m[p] = load8x2_as_short(row[p] + at, row[p + 8] + at);
        } else {
            m[p] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(row[p + 8] + at),
                                       reinterpret_cast<const __m128i*>(row[p] + at));
        }
    }
}

// f(c, column) for each column c0 <= c < c1 of sixteen rows of `length` >= 8 elements, left
// to right (column: the rows' elements c as int16, row r in lane r), eight columns to a
// transpose; the last ones out of the row's eight from min(c, length - 8), within the row.
template <class Src, class F>
OVPOOL_FORCE_INLINE inline void for_columns16(const Src* const* row, index_t length, index_t c0,
                                              index_t c1, const F& f) {
    index_t c = c0;
    for (; c + 8 <= c1; c += 8) {
        __m256i m[8];
        rows16_as_short(row, c, m);
        transpose8x8_epi16(m);
        for (index_t k = 0; k < 8; ++k) f(c + k, m[k]);
    }
    if (c < c1) {
        const index_t first = std::min(c, length - 8);
        __m256i m[8];
        rows16_as_short(row, first, m);
        transpose8x8_epi16(m);
        for (index_t k = c - first; k < 8 && first + k < c1; ++k) f(first + k, m[k]);
    }
}

// The sums of windows jt .. jt + n - 1 (n <= 8; sums[k]: window jt + k's, row r in lane r)
// stored into the first `rows` of sixteen rows of sums from d (rows of out_len), transposed
// back (sums is overwritten).
inline void store_windows16(__m256i* sums, index_t rows, std::int16_t* d, index_t out_len,
                            index_t jt, index_t n) {
    transpose8x8_epi16(sums);
    for (index_t r = 0; r < 8; ++r) {
        const __m128i halves[2] = {_mm256_castsi256_si128(sums[r]),
                                   _mm256_extracti128_si256(sums[r], 1)};
        for (index_t h = 0; h < 2; ++h) {
            if (r + 8 * h >= rows) continue;
            std::int16_t* out = d + (r + 8 * h) * out_len + jt;
            if (n == 8) {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out), halves[h]);
            } else {
                alignas(16) std::int16_t part[8];
                _mm_store_si128(reinterpret_cast<__m128i*>(part), halves[h]);
                std::copy(part, part + n, out);
            }
        }
    }
}

// windows8(jt, n) over the windows [j0, j1) of a piece, eight at a time: fewer than eight in
// one call, else groups of eight, the last one overlapping the one before when j1 - j0 is not
// a multiple of eight (it rewrites the same sums).
template <class F>
OVPOOL_FORCE_INLINE inline void for_window_groups8(index_t j0, index_t j1, const F& windows8) {
    if (j1 - j0 < 8) {
        windows8(j0, j1 - j0);
        return;
    }
    index_t jt = j0;
    for (; jt + 8 <= j1; jt += 8) windows8(jt, 8);
    if (jt < j1) windows8(j1 - 8, 8);
}

// The windows of w over `outer` rows of src summed in int16, sixteen rows at a time: the rows
// are transposed into columns (one vector of sixteen rows per column), the columns' running
// sums stored, and each window's sums are the difference of the running sums at its two ends,
// transposed back. Running sums wrap around (int16 vector additions), but a window's
// difference is its exact sum modulo 2^16, hence the exact sum when that fits int16, which the
// caller guarantees (short_passes_suit): the same sums as adding each window's taps. Every
// window costs one subtraction, whatever its taps, and no loop of its own (adaptive 652 -> 81
// windows of 9 or 10 taps, in int32 columns: about 300K instructions a call for 213 rows).
// A last group of fewer rows repeats its last row in the lanes past it, whose sums are not
// stored. The caller checks has_columns16 and prefix_columns_suit.
template <class Src>
inline void prefix_columns_last_axis16(const Src* src, std::int16_t* dst, const AxisTable& w,
                                       index_t outer) {
    // running[(c - c0) * 16 + r]: row r's sum of columns c0 .. c - 1 (c0 <= c <= c1)
    alignas(32) std::int16_t running[(columns_room + 1) * 16];
    const index_t length = w.length, out_len = w.out_len;
    auto at = [&](index_t column) { return reinterpret_cast<__m256i*>(running + column * 16); };
    for_row_groups<16>(src, w, outer, [&](const Src* const* row, index_t rows, index_t o,
                                          const ColumnPiece& piece) OVPOOL_FORCE_INLINE {
        std::int16_t* d = dst + o * out_len;
        const index_t c0 = piece.c0, c1 = piece.c1;
        if (c0 < c1) {
            __m256i total = _mm256_setzero_si256();
            _mm256_store_si256(at(0), total);
            for_columns16(row, length, c0, c1, [&](index_t c, __m256i column) {
                total = _mm256_add_epi16(total, column);
                _mm256_store_si256(at(c - c0 + 1), total);
            });
        }
        for_window_groups8(piece.j0, piece.j1, [&](index_t jt, index_t n) {
            __m256i sums[8];
            for (index_t k = 0; k < 8; ++k) {
                const index_t j = jt + k;
                sums[k] = _mm256_setzero_si256();
                if (k < n && w.count[j] > 0) {
                    const index_t b = w.begin[j] - c0;
                    sums[k] = _mm256_sub_epi16(_mm256_load_si256(at(b + w.count[j])),
                                               _mm256_load_si256(at(b)));
                }
            }
            store_windows16(sums, rows, d, out_len, jt, n);
        });
    });
}

// The windows of w over `outer` rows of src summed in int16, sixteen rows at a time in
// columns, as columns_last_axis sums eight rows in int32: the rows transposed into columns
// (one vector of sixteen rows per column), each window's taps added in window order, one
// vector addition per tap for sixteen rows, the sums transposed back. For regular strided
// windows of any dilation, which the running sums above do not take (a dilated window is no
// difference of two of them); the passes summed these in int32 columns, eight rows a vector,
// with every earlier pass in int32 too (uint8 4x4x31x31x17 k7,7,2 s4,1,2 d1,2,3). Exact sums
// when they fit int16, which the caller guarantees (short_passes_suit). A last group of fewer
// rows repeats its last row in the lanes past it, whose sums are not stored. The caller checks
// has_columns16 and short_columns_suit.
template <class Src>
inline void columns_last_axis16(const Src* src, std::int16_t* dst, const AxisTable& w,
                                index_t outer) {
    alignas(32) std::int16_t cols[columns_room * 16];
    const index_t length = w.length, out_len = w.out_len, dil = w.dil, step = w.step;
    auto at = [&](index_t column) { return reinterpret_cast<const __m256i*>(cols + column * 16); };
    for_row_groups<16>(src, w, outer, [&](const Src* const* row, index_t rows, index_t o,
                                          const ColumnPiece& piece) OVPOOL_FORCE_INLINE {
        std::int16_t* d = dst + o * out_len;
        const index_t c0 = piece.c0, c1 = piece.c1;
        if (c0 < c1) {
            for_columns16(row, length, c0, c1, [&](index_t c, __m256i column) {
                _mm256_store_si256(reinterpret_cast<__m256i*>(cols + (c - c0) * 16), column);
            });
        }
        for_window_groups8(piece.j0, piece.j1, [&](index_t jt, index_t n) {
            __m256i acc[8];
            for (index_t k = 0; k < 8; ++k) acc[k] = _mm256_setzero_si256();
            if (n == 8 && jt >= w.lo && jt + 8 <= w.hi) {
                // Eight full windows: taps `step` columns apart from one window to the next.
                const __m256i* p = at(w.begin[jt] - c0);
                for (index_t t = 0; t < w.taps; ++t, p += dil) {
                    for (index_t k = 0; k < 8; ++k) {
                        acc[k] = _mm256_add_epi16(acc[k], _mm256_load_si256(p + k * step));
                    }
                }
            } else {
                for (index_t k = 0; k < n; ++k) {
                    const index_t j = jt + k;
                    if (w.count[j] == 0) continue;
                    const __m256i* p = at(w.begin[j] - c0);
                    for (index_t t = 0; t < w.count[j]; ++t) {
                        acc[k] = _mm256_add_epi16(acc[k], _mm256_load_si256(p + t * dil));
                    }
                }
            }
            store_windows16(acc, rows, d, out_len, jt, n);
        });
    });
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
