// AVX2 kernels for max pooling with indices over float32 rows (float32, and float16 / bfloat16
// widened to float32): eight windows at a time, each lane carrying its window's best value and
// that value's plane offset (int32: the planes these serve are small), so the comparisons and
// the first-maximum rule run in vector registers instead of one window at a time.
//
// Bit-identical to the generic path: replaces_at8 is replaces_at lane by lane, and each lane
// visits the same taps in the same order.
//
// Compiled only when OVPOOL_CORE_HAVE_AVX2; callers test that macro.
#ifndef OVPOOL_CORE_SIMD_MAX_AVX2_HPP
#define OVPOOL_CORE_SIMD_MAX_AVX2_HPP

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"

#if OVPOOL_CORE_HAVE_AVX2
#include <immintrin.h>

#include "rows_avx2.hpp"
#include "transpose_avx2.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {
namespace simd {

// Lanes where (value, index) beats (best, best_index) under replaces_at: a larger value, a
// number against a NaN, and among equal values (or two NaNs) the smaller index.
inline __m256 replaces_at8(__m256 value, __m256i index, __m256 best, __m256i best_index) {
    __m256 value_nan = _mm256_cmp_ps(value, value, _CMP_UNORD_Q);
    __m256 best_nan = _mm256_cmp_ps(best, best, _CMP_UNORD_Q);
    __m256 tie = _mm256_or_ps(_mm256_cmp_ps(value, best, _CMP_EQ_OQ),
                              _mm256_and_ps(value_nan, best_nan));
    __m256 earlier = _mm256_castsi256_ps(_mm256_cmpgt_epi32(best_index, index));
    __m256 larger = _mm256_or_ps(_mm256_cmp_ps(value, best, _CMP_GT_OQ), best_nan);
    return _mm256_or_ps(_mm256_and_ps(tie, earlier), _mm256_andnot_ps(tie, larger));
}

// One tap of eight windows: the values and offsets at `at` (gathered; masked lanes read
// nothing) replace *value / *index where they win under replaces_at.
inline void max_tap8(const float* row, const std::int32_t* row_offset, __m256i at,
                     __m256i mask, __m256* value, __m256i* index) {
    __m256 candidate = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), row, at,
                                                _mm256_castsi256_ps(mask), 4);
    __m256i candidate_index = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), row_offset,
                                                          at, mask, 4);
    __m256 take = replaces_at8(candidate, candidate_index, *value, *index);
    *value = _mm256_blendv_ps(*value, candidate, take);
    *index = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(*index),
                                                  _mm256_castsi256_ps(candidate_index), take));
}

// best[0 .. lanes) and best_offset[0 .. lanes) = the first `lanes` lanes of value and index.
inline void store_windows8(float* best, std::int32_t* best_offset, __m256 value, __m256i index,
                           index_t lanes) {
    if (lanes == 8) {
        _mm256_storeu_ps(best, value);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(best_offset), index);
        return;
    }
    alignas(32) float values[8];
    alignas(32) std::int32_t indices[8];
    _mm256_store_ps(values, value);
    _mm256_store_si256(reinterpret_cast<__m256i*>(indices), index);
    for (index_t k = 0; k < lanes; ++k) {
        best[k] = values[k];
        best_offset[k] = indices[k];
    }
}

// Windows j in [0, windows) of a row of values `row` and their offsets `row_offset`: window j
// has `taps` taps, the first at first + j * step, then every `dil`. best[j] and best_offset[j]
// get its winner, taps combined in window order with replaces_at.
inline void max_windows_indexed8(const float* row, const std::int32_t* row_offset, float* best,
                                 std::int32_t* best_offset, index_t first, index_t step,
                                 index_t taps, index_t dil, index_t windows) {
    const __m256i lane_step = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                                 _mm256_set1_epi32(static_cast<int>(step)));
    const __m256i tap_step = _mm256_set1_epi32(static_cast<int>(dil));
    for (index_t j = 0; j < windows; j += 8) {
        index_t lanes = windows - j < 8 ? windows - j : 8;
        __m256i mask = lanes_below(lanes);
        __m256i at = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(first + j * step)),
                                      lane_step);
        // Lanes past `lanes` read nothing (masked gathers) and are not stored.
        __m256 value = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), row, at,
                                                _mm256_castsi256_ps(mask), 4);
        __m256i index = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), row_offset, at,
                                                    mask, 4);
        for (index_t t = 1; t < taps; ++t) {
            at = _mm256_add_epi32(at, tap_step);
            max_tap8(row, row_offset, at, mask, &value, &index);
        }
        store_windows8(best + j, best_offset + j, value, index, lanes);
    }
}

// Windows j in [0, windows), none empty, of a row as above, of any sizes and positions
// (adaptive windows, fixed ones cut by padding): window j has count[j] taps from begin[j],
// `dil` apart; `taps` is the largest count. Eight windows at a time, each lane gathering its
// window's taps: tap t of window j is its tap min(t, count[j] - 1), so a shorter window
// re-reads its last tap, which cannot replace itself (same value, same offset).
inline void max_windows_by_tap8(const float* row, const std::int32_t* row_offset, float* best,
                                std::int32_t* best_offset, const index_t* begin,
                                const index_t* count, index_t dil, index_t taps,
                                index_t windows) {
    const __m256i tap_step = _mm256_set1_epi32(static_cast<int>(dil));
    for (index_t j = 0; j < windows; j += 8) {
        index_t lanes = std::min<index_t>(windows - j, 8);
        // Each lane's first and last tap. Lanes past `lanes` repeat the last window: every
        // gather reads real taps.
        alignas(32) std::int32_t first[8], final[8];
        for (index_t k = 0; k < 8; ++k) {
            index_t w = j + std::min(k, lanes - 1);
            first[k] = static_cast<std::int32_t>(begin[w]);
            final[k] = static_cast<std::int32_t>(begin[w] + (count[w] - 1) * dil);
        }
        __m256i at = _mm256_load_si256(reinterpret_cast<const __m256i*>(first));
        const __m256i last = _mm256_load_si256(reinterpret_cast<const __m256i*>(final));
        const __m256i all = _mm256_set1_epi32(-1);
        __m256 value = _mm256_i32gather_ps(row, at, 4);
        __m256i index = _mm256_i32gather_epi32(row_offset, at, 4);
        for (index_t t = 1; t < taps; ++t) {
            // Tap t, or the window's last tap once past it.
            at = _mm256_min_epi32(_mm256_add_epi32(at, tap_step), last);
            max_tap8(row, row_offset, at, all, &value, &index);
        }
        store_windows8(best + j, best_offset + j, value, index, lanes);
    }
}

// Eight entries of coded_taps8 from entry i on (Full: all eight; else the lanes of mask).
template <bool Codes, bool Full, class Offset>
inline void coded_taps8_at(float* d, std::uint32_t* c, const float* r, const std::uint32_t* rc,
                           index_t taps, Offset offset, std::uint32_t place, index_t i,
                           __m256i mask) {
    auto values = [&](const float* at) {
        return Full ? _mm256_loadu_ps(at) : _mm256_maskload_ps(at, mask);
    };
    auto codes = [&](const std::uint32_t* at) {
        const int* p = reinterpret_cast<const int*>(at);
        return Full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                    : _mm256_maskload_epi32(p, mask);
    };
    __m256 best = values(r + i);
    __m256i code = Codes ? codes(rc + i) : _mm256_setzero_si256();
    for (index_t t = 1; t < taps; ++t) {
        const __m256 value = values(r + i + offset(t));
        const __m256i add = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(t) * place));
        const __m256i candidate = Codes ? _mm256_add_epi32(codes(rc + i + offset(t)), add) : add;
        // replaces: !(value <= best) and value not NaN.
        const __m256 better = _mm256_and_ps(_mm256_cmp_ps(value, best, _CMP_NLE_UQ),
                                            _mm256_cmp_ps(value, value, _CMP_ORD_Q));
        best = _mm256_blendv_ps(best, value, better);
        code = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(code),
                                                    _mm256_castsi256_ps(candidate), better));
    }
    if (Full) {
        _mm256_storeu_ps(d + i, best);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i), code);
    } else {
        _mm256_maskstore_ps(d + i, mask, best);
        _mm256_maskstore_epi32(reinterpret_cast<int*>(c + i), mask, code);
    }
}

// max_coded.hpp's coded_window for float32 values and uint32 codes (taps >= 1): d[i], c[i]
// for i in [0, n) get the winner among the taps r[i + offset(t)], t in [0, taps) (offset(0)
// is 0), under replaces, and its code rc[i + offset(t)] + t * place (rc null: t * place).
// Eight entries at a time with every tap in registers (the tail masked): the taps are
// compared in the scalar loops' order, so each entry gets the same winner.
template <bool Codes, class Offset>
inline void coded_taps8(float* d, std::uint32_t* c, const float* r, const std::uint32_t* rc,
                        index_t taps, Offset offset, std::uint32_t place, index_t n) {
    index_t i = 0;
    const __m256i all = _mm256_set1_epi32(-1);
    for (; i + 8 <= n; i += 8) {
        coded_taps8_at<Codes, true>(d, c, r, rc, taps, offset, place, i, all);
    }
    if (i < n) {
        coded_taps8_at<Codes, false>(d, c, r, rc, taps, offset, place, i, lanes_below(n - i));
    }
}

// A 256-bit (V = __m256i) or 128-bit (V = __m128i) unaligned load or store.
template <class V>
inline V load_bytes(const void* at) {
    if constexpr (sizeof(V) == 32) {
        return _mm256_loadu_si256(static_cast<const __m256i*>(at));
    } else {
        return _mm_loadu_si128(static_cast<const __m128i*>(at));
    }
}

template <class V>
inline void store_bytes(void* at, V v) {
    if constexpr (sizeof(V) == 32) {
        _mm256_storeu_si256(static_cast<__m256i*>(at), v);
    } else {
        _mm_storeu_si128(static_cast<__m128i*>(at), v);
    }
}

// Sixteen (V = __m256i) or eight (V = __m128i) entries of coded_taps16 from entry i on.
// Taps > 0: the tap count as a constant (the loop unrolled), tap t's offset at[t] and code
// increment adds[t] made once by the caller rather than again for every group of entries;
// Taps 0: `taps` taps, offset(t) and the increments made here.
template <bool Codes, class V, int Taps, class Offset>
inline void coded_taps16_at(std::int16_t* d, std::uint16_t* c, const std::int16_t* r,
                            const std::uint16_t* rc, index_t taps, Offset offset,
                            std::uint16_t place, index_t i, const index_t* at = nullptr,
                            const V* adds = nullptr) {
    constexpr bool wide = sizeof(V) == 32;
    auto load = [](const void* p) { return load_bytes<V>(p); };
    auto store = [](void* p, V v) { store_bytes(p, v); };
    V best = load(r + i);
    V code = Codes ? load(rc + i) : V{};  // (V{}: zeros)
    const index_t count = Taps > 0 ? Taps : taps;
    for (index_t t = 1; t < count; ++t) {
        const index_t from = i + (Taps > 0 ? at[t] : offset(t));
        const V value = load(r + from);
        const short increment = static_cast<short>(
            static_cast<std::uint16_t>(static_cast<std::uint32_t>(t) * place));
        if constexpr (wide) {
            const __m256i add = Taps > 0 ? adds[t] : _mm256_set1_epi16(increment);
            const __m256i candidate = Codes ? _mm256_add_epi16(load(rc + from), add) : add;
            const __m256i better = _mm256_cmpgt_epi16(value, best);
            best = _mm256_max_epi16(best, value);
            code = _mm256_blendv_epi8(code, candidate, better);
        } else {
            const __m128i add = Taps > 0 ? adds[t] : _mm_set1_epi16(increment);
            const __m128i candidate = Codes ? _mm_add_epi16(load(rc + from), add) : add;
            const __m128i better = _mm_cmpgt_epi16(value, best);
            best = _mm_max_epi16(best, value);
            code = _mm_blendv_epi8(code, candidate, better);
        }
    }
    store(d + i, best);
    store(c + i, code);
}

// One window of coded_taps16_count: n entries from r (codes rc) into d, c, the offsets at[t]
// and increments adds / adds8 made by the caller (Taps > 0).
template <bool Codes, int Taps, class Offset>
inline void coded_taps16_window(std::int16_t* d, std::uint16_t* c, const std::int16_t* r,
                                const std::uint16_t* rc, index_t taps, Offset offset,
                                std::uint16_t place, index_t n, const index_t* at,
                                const __m256i* adds, const __m128i* adds8) {
    if (n < 16) {
        coded_taps16_at<Codes, __m128i, Taps>(d, c, r, rc, taps, offset, place, 0, at, adds8);
        coded_taps16_at<Codes, __m128i, Taps>(d, c, r, rc, taps, offset, place, n - 8, at, adds8);
        return;
    }
    index_t i = 0;
    for (; i + 16 <= n; i += 16) {
        coded_taps16_at<Codes, __m256i, Taps>(d, c, r, rc, taps, offset, place, i, at, adds);
    }
    if (i < n) {
        coded_taps16_at<Codes, __m256i, Taps>(d, c, r, rc, taps, offset, place, n - 16, at, adds);
    }
}

// coded_taps16 for Taps taps (Taps > 0: a constant, the offsets and increments made once;
// 0: `taps`), for `windows` windows of n entries: window w reads r + w * window_step (codes
// rc + w * window_step) and writes d + w * n, c + w * n (the offsets and increments made once
// for all of them; one window: the loop left out).
template <bool Codes, int Taps, class Offset>
OVPOOL_FORCE_INLINE inline index_t coded_taps16_count(std::int16_t* d, std::uint16_t* c,
                                                      const std::int16_t* r,
                                                      const std::uint16_t* rc, index_t taps,
                                                      Offset offset, std::uint16_t place,
                                                      index_t n, index_t windows = 1,
                                                      index_t window_step = 0) {
    constexpr int most = Taps > 0 ? Taps : 1;
    index_t at[most];
    __m256i adds[most];
    __m128i adds8[most];
    for (int t = 0; t < (Taps > 0 ? Taps : 0); ++t) {
        at[t] = offset(t);
        const short increment = static_cast<short>(
            static_cast<std::uint16_t>(static_cast<std::uint32_t>(t) * place));
        adds[t] = _mm256_set1_epi16(increment);
        adds8[t] = _mm_set1_epi16(increment);
    }
    if (windows == 1) {
        coded_taps16_window<Codes, Taps>(d, c, r, rc, taps, offset, place, n, at, adds, adds8);
        return n;
    }
    for (index_t w = 0; w < windows; ++w) {
        coded_taps16_window<Codes, Taps>(d + w * n, c + w * n, r + w * window_step,
                                         Codes ? rc + w * window_step : rc, taps, offset,
                                         place, n, at, adds, adds8);
    }
    return n;
}

// coded_taps8 for int16 keys and uint16 codes (max_coded.hpp's half_key), sixteen entries at
// a time: returns the entries done, n when n >= 8 (the last vector overlaps the one before,
// recomputing some entries from the same inputs: d, c must not overlap r, rc), else 0 (left
// to the caller). A key replaces the best only when larger (ties keep the earlier tap), so
// the best key is the plain maximum and the code follows the comparison. (Two to eight taps
// go with the count as a constant: with it a variable, each tap of each vector also paid the
// loop, its offset and the broadcast of its code increment, about twice the instructions.
// Out of line, the counted loops always inlined: where gcc inlined it into coded_window
// instead, and left the counted loops out of line, float16 1x3640x9x59 k5,3 with indices
// went 8.55M -> 9.37M instructions a call.)
template <bool Codes, class Offset>
OVPOOL_NOINLINE index_t coded_taps16(std::int16_t* d, std::uint16_t* c, const std::int16_t* r,
                                     const std::uint16_t* rc, index_t taps, Offset offset,
                                     std::uint16_t place, index_t n) {
    if (n < 8) return 0;
    if (taps >= 2 && taps <= 8) {
        return with_constant<2, 8>(taps, [&](auto k) {
            return coded_taps16_count<Codes, decltype(k)::value>(d, c, r, rc, taps, offset,
                                                                 place, n);
        });
    }
    return coded_taps16_count<Codes, 0>(d, c, r, rc, taps, offset, place, n);
}

// Strided windows whose taps span two or more strides, for coded_windows16: windows
// 0 .. windows-1, window w's taps r + (w * Step + t) * gap (codes the same in rc), t below
// Groups * Step + rest, into d + w * n, c + w * n, the n entries from i on (one vector V).
// Each window's taps form Groups groups of Step (each group's first maximum, its codes
// counted from its first tap, made once and used by the Groups windows that hold it)
// combined in order, then its last `rest` taps one by one. Every combine takes an earlier
// range first, so each window gets the tap-by-tap winner and code (see coded_shared_windows
// below); (Groups - 1) * (Step - 1) fewer combines a window (bfloat16 rows of 33 keys,
// windows of six taps three apart: 5 -> 3).
template <int Step, int Groups, class V>
inline void coded_stride_groups16_at(std::int16_t* d, std::uint16_t* c, const std::int16_t* r,
                                     const std::uint16_t* rc, index_t windows, index_t gap,
                                     index_t rest, std::uint16_t place, index_t n, index_t i) {
    constexpr bool wide = sizeof(V) == 32;
    auto load = [](const void* p) { return load_bytes<V>(p); };
    auto store = [](void* p, V v) { store_bytes(p, v); };
    auto splat = [](index_t t, std::uint16_t place) -> V {
        const short k = static_cast<short>(
            static_cast<std::uint16_t>(static_cast<std::uint32_t>(t) * place));
        if constexpr (wide) {
            return _mm256_set1_epi16(k);
        } else {
            return _mm_set1_epi16(k);
        }
    };
    // (Later entry `value` with code `candidate` replaces best / code where larger.)
    auto combine = [](V& best, V& code, V value, V candidate) {
        if constexpr (wide) {
            const __m256i better = _mm256_cmpgt_epi16(value, best);
            best = _mm256_max_epi16(best, value);
            code = _mm256_blendv_epi8(code, candidate, better);
        } else {
            const __m128i better = _mm_cmpgt_epi16(value, best);
            best = _mm_max_epi16(best, value);
            code = _mm_blendv_epi8(code, candidate, better);
        }
    };
    auto add = [](V a, V b) -> V {
        if constexpr (wide) {
            return _mm256_add_epi16(a, b);
        } else {
            return _mm_add_epi16(a, b);
        }
    };
    V row_add[Step], group_add[Groups];
    for (int t = 0; t < Step; ++t) row_add[t] = splat(t, place);
    for (int q = 0; q < Groups; ++q) group_add[q] = splat(q * Step, place);
    // Group m: rows m * Step .. m * Step + Step - 1.
    auto group = [&](index_t m, V& best, V& code) {
        const index_t at = m * Step * gap + i;
        best = load(r + at);
        code = load(rc + at);
        for (int t = 1; t < Step; ++t) {
            combine(best, code, load(r + at + t * gap),
                    add(load(rc + at + t * gap), row_add[t]));
        }
    };
    V values[Groups], codes[Groups];
    for (int q = 0; q + 1 < Groups; ++q) group(q, values[q], codes[q]);
    for (index_t w = 0; w < windows; ++w) {
        group(w + Groups - 1, values[Groups - 1], codes[Groups - 1]);
        V best = values[0], code = codes[0];
        for (int q = 1; q < Groups; ++q) combine(best, code, values[q], add(codes[q], group_add[q]));
        for (index_t t = 0; t < rest; ++t) {
            const index_t at = ((w + Groups) * Step + t) * gap + i;
            combine(best, code, load(r + at),
                    add(load(rc + at), splat(Groups * Step + t, place)));
        }
        store(d + w * n + i, best);
        store(c + w * n + i, code);
        for (int q = 0; q + 1 < Groups; ++q) {
            values[q] = values[q + 1];
            codes[q] = codes[q + 1];
        }
    }
}

// coded_stride_groups16_at over the n >= 8 entries of each window (the last vector
// overlapping the one before).
template <int Step, int Groups>
inline void coded_stride_groups16(std::int16_t* d, std::uint16_t* c, const std::int16_t* r,
                                  const std::uint16_t* rc, index_t windows, index_t gap,
                                  index_t rest, std::uint16_t place, index_t n) {
    auto at = [&](auto vector, index_t i) {
        coded_stride_groups16_at<Step, Groups, decltype(vector)>(d, c, r, rc, windows, gap,
                                                                 rest, place, n, i);
    };
    if (n < 16) {
        at(__m128i{}, 0);
        at(__m128i{}, n - 8);
        return;
    }
    index_t i = 0;
    for (; i + 16 <= n; i += 16) at(__m256i{}, i);
    if (i < n) at(__m256i{}, n - 16);
}

// coded_taps16 with codes for `windows` windows of n >= 8 entries and 2 to 8 taps `gap`
// apart (returns false, doing nothing, otherwise): window w reads r + w * window_step (codes
// rc + w * window_step) and writes d + w * n, c + w * n. One call for a pass's strided
// windows over rows of eight keys or more, whose offsets and code increments are then made
// once rather than once a window (float16 rows of 19 keys, windows of six taps two apart:
// about 150 instructions a window went on that set-up and the calls, against 80 on the taps).
// Windows a multiple of `gap` apart whose taps span two or more of those steps share their
// steps' combines (coded_stride_groups16).
inline bool coded_windows16(std::int16_t* d, std::uint16_t* c, const std::int16_t* r,
                            const std::uint16_t* rc, index_t windows, index_t window_step,
                            index_t taps, index_t gap, std::uint16_t place, index_t n) {
    if (n < 8 || taps < 2 || taps > 8) return false;
    if (gap > 0 && window_step % gap == 0) {
        // (Steps and groups in taps, `gap` apart. Groups of two taps, two groups a window:
        // one combine fewer a window, not worth the groups' set-up.)
        const index_t step = window_step / gap, groups = step > 0 ? taps / step : 0;
        const index_t rest = groups > 0 ? taps - groups * step : 0;
        // (The shapes with a constant instance: steps of 2 in 3 or 4 groups, of 3 or 4 in 2.)
        auto shared = [&](auto s, auto g) {
            constexpr int Step = decltype(s)::value, Groups = decltype(g)::value;
            if (step != Step || groups != Groups) return false;
            coded_stride_groups16<Step, Groups>(d, c, r, rc, windows, gap, rest, place, n);
            return true;
        };
        typedef std::integral_constant<int, 2> two;
        if (shared(two{}, std::integral_constant<int, 3>{}) ||
            shared(two{}, std::integral_constant<int, 4>{}) ||
            shared(std::integral_constant<int, 3>{}, two{}) ||
            shared(std::integral_constant<int, 4>{}, two{})) {
            return true;
        }
    }
    auto offset = [gap](index_t t) { return t * gap; };
    with_constant<2, 8>(taps, [&](auto k) {
        return coded_taps16_count<true, decltype(k)::value>(d, c, r, rc, taps, offset, place, n,
                                                            windows, window_step);
    });
    return true;
}

// Stride-1 windows sharing their work (van Herk / Gil-Werman), for coded_window's runs with
// codes: entry e of n gets the winner among r[e + t * gap], t in [0, Taps), under replaces,
// with code rc[e + t * gap] + t * place, as the tap-by-tap loops give it, in about three
// combines an entry instead of Taps - 1. Taps consecutive outputs (entries e + v * gap, v in
// [0, Taps), "a group") read the 2 * Taps - 1 inputs e + m * gap: the suffixes S[m] of inputs
// m .. Taps-1 (codes from input m), the prefixes P[m] of inputs Taps .. m (codes from input
// Taps), and output v is S[v] combined with P[v + Taps - 1] (output 0: S[0]).
//
// Why the same winner. combine(E, L) keeps E's winner unless L's replaces it; E's inputs all
// come before L's. Under replaces the taps are totally preordered (NaN below -inf, -0 equal to
// +0, a NaN equal to a NaN), and a window's winner is the first tap holding the largest key.
// If each of E and L holds its own range's first largest, combine(E, L) holds the union's:
// when L's beats E's, the union's largest is L's and no tap of E holds it; otherwise it is
// E's, first held in E, which comes first. Every combine below takes an earlier range as E,
// so each S, P and output holds its range's first largest tap, the tap-by-tap winner, and
// the code of that tap (codes are sums of increments, wrapping as the loops' do).
//
// T: the vector type's operations (SharedFloat8, SharedKeys16). Groups of Taps outputs tile
// [0, n) a block of Taps * gap entries at a time, each block's groups `lanes` entries apart
// (the last at gap - lanes), the last block ending at n; overlapping groups recompute entries
// from the same inputs (d, c must not overlap r, rc). The entries fill at least one block
// (n >= Taps * gap) and the windows are a vector or more apart (gap >= lanes): see
// coded_shared_taps.
struct SharedFloat8 {
    typedef float value_type;
    typedef std::uint32_t code_type;
    typedef __m256 V;
    typedef __m256i C;
    static constexpr index_t lanes = 8;
    static constexpr index_t fewest_taps = 3;  // (a combine is five instructions)
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static C load_code(const std::uint32_t* p) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
    static void store(float* d, std::uint32_t* c, V v, C code) {
        _mm256_storeu_ps(d, v);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), code);
    }
    static C increment(std::uint32_t add) { return _mm256_set1_epi32(static_cast<int>(add)); }
    static C add(C code, C increment) { return _mm256_add_epi32(code, increment); }
    // (earlier, earlier_code) = the winner of (earlier, later) under replaces.
    static void combine(V& earlier, C& earlier_code, V later, C later_code) {
        const __m256 better = _mm256_and_ps(_mm256_cmp_ps(later, earlier, _CMP_NLE_UQ),
                                            _mm256_cmp_ps(later, later, _CMP_ORD_Q));
        earlier = _mm256_blendv_ps(earlier, later, better);
        earlier_code = _mm256_castps_si256(_mm256_blendv_ps(
            _mm256_castsi256_ps(earlier_code), _mm256_castsi256_ps(later_code), better));
    }
};

struct SharedKeys16 {
    typedef std::int16_t value_type;
    typedef std::uint16_t code_type;
    typedef __m256i V;
    typedef __m256i C;
    static constexpr index_t lanes = 16;
    // (A combine is three instructions: with five taps, the taps one by one cost less; sweep
    // #36, float16 with 5 taps: 9.24M -> 9.39M instructions a call through this path.)
    static constexpr index_t fewest_taps = 6;
    static V load(const std::int16_t* p) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
    static C load_code(const std::uint16_t* p) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
    static void store(std::int16_t* d, std::uint16_t* c, V v, C code) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), v);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), code);
    }
    static C increment(std::uint16_t add) {
        return _mm256_set1_epi16(static_cast<short>(add));
    }
    static C add(C code, C increment) { return _mm256_add_epi16(code, increment); }
    // (A larger key replaces; ties keep the earlier, as in coded_taps16.)
    static void combine(V& earlier, C& earlier_code, V later, C later_code) {
        const __m256i better = _mm256_cmpgt_epi16(later, earlier);
        earlier = _mm256_max_epi16(earlier, later);
        earlier_code = _mm256_blendv_epi8(earlier_code, later_code, better);
    }
};

// One group of coded_shared_windows: outputs e + v * gap, v in [0, Taps). adds[t] = t * place.
template <class T, int Taps>
inline void coded_shared_group(typename T::value_type* d, typename T::code_type* c,
                               const typename T::value_type* r,
                               const typename T::code_type* rc, index_t gap,
                               const typename T::C* adds, index_t e) {
    typename T::V suffix[Taps];
    typename T::C suffix_code[Taps];
    suffix[Taps - 1] = T::load(r + e + (Taps - 1) * gap);
    suffix_code[Taps - 1] = T::load_code(rc + e + (Taps - 1) * gap);
#pragma GCC unroll 16
    for (int m = Taps - 2; m >= 0; --m) {
        suffix[m] = T::load(r + e + m * gap);
        suffix_code[m] = T::load_code(rc + e + m * gap);
        T::combine(suffix[m], suffix_code[m], suffix[m + 1], T::add(suffix_code[m + 1], adds[1]));
    }
    T::store(d + e, c + e, suffix[0], suffix_code[0]);
    typename T::V prefix = T::load(r + e + Taps * gap);
    typename T::C prefix_code = T::load_code(rc + e + Taps * gap);
#pragma GCC unroll 16
    for (int v = 1; v < Taps; ++v) {
        if (v > 1) {
            const index_t m = v + Taps - 1;
            T::combine(prefix, prefix_code, T::load(r + e + m * gap),
                       T::add(T::load_code(rc + e + m * gap), adds[v - 1]));
        }
        typename T::V best = suffix[v];
        typename T::C best_code = suffix_code[v];
        T::combine(best, best_code, prefix, T::add(prefix_code, adds[Taps - v]));
        T::store(d + e + v * gap, c + e + v * gap, best, best_code);
    }
}

template <class T, int Taps>
inline void coded_shared_windows(typename T::value_type* d, typename T::code_type* c,
                                 const typename T::value_type* r,
                                 const typename T::code_type* rc, index_t gap,
                                 typename T::code_type place, index_t n) {
    typename T::C adds[Taps + 1];
    for (int t = 0; t <= Taps; ++t) {
        adds[t] = T::increment(static_cast<typename T::code_type>(
            static_cast<typename T::code_type>(t) * place));
    }
    const index_t last = n - Taps * gap;
    for (index_t block = 0;; block += Taps * gap) {
        if (block > last) block = last;
        index_t e = 0;
        for (; e + T::lanes < gap; e += T::lanes) {
            coded_shared_group<T, Taps>(d, c, r, rc, gap, adds, block + e);
        }
        coded_shared_group<T, Taps>(d, c, r, rc, gap, adds, block + gap - T::lanes);
        if (block == last) return;
    }
}

// coded_shared_windows for its tap count (out of line: see coded_shared_taps).
template <class T>
OVPOOL_NOINLINE void coded_shared_run(typename T::value_type* d, typename T::code_type* c,
                                      const typename T::value_type* r,
                                      const typename T::code_type* rc, index_t taps,
                                      index_t gap, typename T::code_type place, index_t n) {
    with_constant<3, 8>(taps, [&](auto k) {
        coded_shared_windows<T, decltype(k)::value>(d, c, r, rc, gap, place, n);
    });
}

// coded_shared_windows for float32 values of 3 to 8 taps or int16 keys of 6 to 8 (fewer
// share too little work: T::fewest_taps), windows a vector or more apart (closer, a group
// gives fewer than a vector of new outputs per step and the taps one by one cost less: sweep
// #26, bfloat16 with 7 taps a few entries apart, 1.16M -> 1.41M instructions a call when they
// took this path) and runs of at least one block; false, doing nothing, for the others. The
// test inline, the work out of line (coded_shared_run): inlined, the work made gcc stop
// inlining the taps one by one into coded_window (sweep #36, float16 with 5 taps: 9.24M ->
// 9.46M instructions a call), and a call per run only to test it cost as much (9.51M).
template <class T>
inline bool coded_shared_taps(typename T::value_type* d, typename T::code_type* c,
                              const typename T::value_type* r, const typename T::code_type* rc,
                              index_t taps, index_t gap, typename T::code_type place,
                              index_t n) {
    if (taps < T::fewest_taps || taps > 8 || gap < T::lanes || n < taps * gap) return false;
    coded_shared_run<T>(d, c, r, rc, taps, gap, place, n);
    return true;
}

// max_coded.hpp's half_keys on the bits of 16-bit floats (infinity: the bits of +inf),
// sixteen at a time: entries [0, returned), the rest left to the caller (none when n >= 16:
// the last sixteen then overlap the ones before, rewriting the same keys; keys must not
// overlap bits).
// The keys of sixteen 16-bit floats (max_coded.hpp's half_key; infinity: the bits of +inf).
struct HalfKeys16 {
    __m256i magnitude_bits, inf, nan_key;
    explicit HalfKeys16(int infinity)
        : magnitude_bits(_mm256_set1_epi16(0x7fff)),
          inf(_mm256_set1_epi16(static_cast<short>(infinity))),
          nan_key(_mm256_set1_epi16(static_cast<short>(-32768))) {}
    __m256i operator()(const std::uint16_t* bits) const {
        return of(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits)));
    }
    // The keys of the bits in v (sixteen), and of eight in a 16-byte vector: the magnitude
    // negated where the sign bit is set (vpsignw, the bits read as int16: negative exactly
    // then; bits 0 give 0, as the magnitude does), NaNs' set to the NaN key. (Checked
    // against half_key for all 65536 bits of both types.)
    __m256i of(__m256i v) const {
        const __m256i magnitude = _mm256_and_si256(v, magnitude_bits);
        const __m256i key = _mm256_sign_epi16(magnitude, v);
        return _mm256_blendv_epi8(key, nan_key, _mm256_cmpgt_epi16(magnitude, inf));
    }
    __m128i of(__m128i v) const {
        const __m128i magnitude = _mm_and_si128(v, _mm256_castsi256_si128(magnitude_bits));
        const __m128i key = _mm_sign_epi16(magnitude, v);
        return _mm_blendv_epi8(key, _mm256_castsi256_si128(nan_key),
                               _mm_cmpgt_epi16(magnitude, _mm256_castsi256_si128(inf)));
    }
};

inline index_t half_keys16(const std::uint16_t* bits, std::int16_t* keys, index_t n,
                           int infinity) {
    const HalfKeys16 key_of(infinity);
    auto keys_at = [&](index_t i) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(keys + i), key_of(bits + i));
    };
    index_t i = 0;
    for (; i + 16 <= n; i += 16) keys_at(i);
    if (i < n && n >= 16) {
        keys_at(n - 16);
        i = n;
    }
    return i;
}

// The winner of a whole run of n 16-bit floats (16 <= n <= half_winner_longest; infinity:
// the bits of +inf): the first offset holding the largest key, that key in *best. One sweep
// over the bits, each lane keeping its largest key and the offset where it first met it (a
// later key replaces it only when larger); the run's largest key is the lanes' largest, and
// its first offset the smallest offset among the lanes holding it. The last vector overlaps
// the one before: its lanes see elements again at their own offsets, later than any the lane
// saw before, so a tie keeps the lane's earlier offset. The same answer as reduce.hpp's
// largest key and first search, which the baseline build runs on the stored keys.
constexpr index_t half_winner_longest = 32768;  // offsets fit int16 lanes

inline index_t half_winner16(const std::uint16_t* bits, index_t n, int infinity,
                             std::int16_t* best) {
    const HalfKeys16 key_of(infinity);
    const __m256i step = _mm256_set1_epi16(16);
    __m256i at = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m256i key = key_of(bits), first = at;
    auto take = [&](__m256i candidate, __m256i offsets) {
        const __m256i larger = _mm256_cmpgt_epi16(candidate, key);
        key = _mm256_max_epi16(key, candidate);
        first = _mm256_blendv_epi8(first, offsets, larger);
    };
    index_t i = 16;
    for (; i + 16 <= n; i += 16) {
        at = _mm256_add_epi16(at, step);
        take(key_of(bits + i), at);
    }
    if (i < n) {
        take(key_of(bits + n - 16),
             _mm256_add_epi16(_mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                              _mm256_set1_epi16(static_cast<short>(n - 16))));
    }
    // The largest key: PHMINPOSUW on the keys flipped to an unsigned order that falls as the
    // key rises (key ^ 0x7fff).
    const __m128i flip = _mm_set1_epi16(0x7fff);
    const __m128i half_max = _mm_max_epi16(_mm256_castsi256_si128(key),
                                           _mm256_extracti128_si256(key, 1));
    const int largest =
        static_cast<std::int16_t>((_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(half_max, flip))) &
                                   0xffff) ^ 0x7fff);
    // The smallest offset of a lane holding it (other lanes 0x7fff, above every offset but
    // the last possible one, n - 1 = 0x7fff, which then is the answer anyway).
    const __m256i holds = _mm256_cmpeq_epi16(key, _mm256_set1_epi16(static_cast<short>(largest)));
    const __m256i offsets = _mm256_or_si256(first, _mm256_andnot_si256(holds, _mm256_set1_epi16(0x7fff)));
    const __m128i half_min = _mm_min_epu16(_mm256_castsi256_si128(offsets),
                                           _mm256_extracti128_si256(offsets, 1));
    *best = static_cast<std::int16_t>(largest);
    return _mm_cvtsi128_si32(_mm_minpos_epu16(half_min)) & 0xffff;
}

// max_coded.hpp's half_of_key for keys [0, returned) (sixteen at a time, the rest left to
// the caller) into bits; *shared set to 1 when one of them is 0 or the NaN key.
inline index_t half_of_keys16(const std::int16_t* keys, std::uint16_t* bits, index_t n,
                              int* shared) {
    const __m256i sign = _mm256_set1_epi16(static_cast<short>(0x8000));
    const __m256i nan_key = sign;
    __m256i odd = _mm256_setzero_si256();
    index_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i k = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys + i));
        const __m256i value = _mm256_or_si256(_mm256_abs_epi16(k),
                                              _mm256_and_si256(_mm256_srai_epi16(k, 15), sign));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(bits + i), value);
        odd = _mm256_or_si256(odd, _mm256_or_si256(_mm256_cmpeq_epi16(k, _mm256_setzero_si256()),
                                                   _mm256_cmpeq_epi16(k, nan_key)));
    }
    if (!_mm256_testz_si256(odd, odd)) *shared = 1;
    return i;
}

// The phases of 8 consecutive groups of S 32-bit elements at `from` (max_coded.hpp's
// coded_phases): phase q (elements q, q + S, ..., q + 7S) stored at to + q * block, each
// phase8's of the S loaded vectors.
template <int S>
inline void phases8(const float* from, float* to, index_t block) {
    __m256 in[S];
    for (int v = 0; v < S; ++v) in[v] = _mm256_loadu_ps(from + 8 * v);
    for (int q = 0; q < S; ++q) _mm256_storeu_ps(to + q * block, phase8<S>(in, q));
}

// Groups j in [0, full) of a row of 32-bit elements split into phases as above (full >= 8:
// the last eight groups overlap the ones before, rewriting the same values).
template <int S>
inline void row_phases8(const float* row, float* to, index_t block, index_t full) {
    index_t j = 0;
    for (; j + 8 <= full; j += 8) phases8<S>(row + j * S, to + j, block);
    if (j < full) phases8<S>(row + (full - 8) * S, to + full - 8, block);
}

// The phases of 16 (V = __m256i) or 8 (V = __m128i) consecutive groups of S 16-bit elements
// at `from` (max_coded.hpp's coded_phases): phase q stored at to + q * block, each
// transpose_avx2.hpp's phase16 of the loaded groups. No gathers; a copy, so the bits are the
// scalar loop's.
template <int S, class V>
inline void phases16_at(const std::int16_t* from, std::int16_t* to, index_t block) {
    V in[S];
    load_groups16<S>(from, in);
    for (int q = 0; q < S; ++q) {
        const V phase = phase16<S>(in, q);
        if constexpr (sizeof(V) == 32) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + q * block), phase);
        } else {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to + q * block), phase);
        }
    }
}

// Groups j in [0, full) of a row of 16-bit elements split into phases as above (full >= 8:
// the last eight or sixteen groups overlap the ones before, rewriting the same values).
template <int S>
inline void row_phases16(const std::int16_t* row, std::int16_t* to, index_t block, index_t full) {
    if (full < 16) {
        phases16_at<S, __m128i>(row, to, block);
        if (full > 8) phases16_at<S, __m128i>(row + (full - 8) * S, to + full - 8, block);
        return;
    }
    index_t j = 0;
    for (; j + 16 <= full; j += 16) phases16_at<S, __m256i>(row + j * S, to + j, block);
    if (j < full) phases16_at<S, __m256i>(row + (full - 16) * S, to + full - 16, block);
}

// The 16 bytes at `from` copied to `to` (one unaligned load and store: short runs whose
// callers know the bytes past the run may be overwritten).
inline void copy16_bytes(const void* from, void* to) {
    _mm_storeu_si128(static_cast<__m128i*>(to),
                     _mm_loadu_si128(static_cast<const __m128i*>(from)));
}

// Rows of few strided picks of 16-bit entries (max_coded.hpp's coded_pick_rows: fewer than
// nine windows a row): row o's picks from[o * length + j * S], j < n, into to[o * pitch + j],
// one 16-byte store a row, for rows [0, returned) (the rest is the caller's). The picks are
// phase 0 of phases16's masks, from the Blocks 16-byte blocks that hold picks 0 .. n-1 (lanes
// past n: other elements or zeros, which the caller writes again later). Reads from[o *
// length .. + 8 Blocks) below `readable`, writes to[o * pitch .. + 8) below `writable`.
template <int S, int Blocks>
inline index_t pick_rows16_blocks(const std::int16_t* from, std::int16_t* to, index_t rows,
                                  index_t length, index_t pitch, index_t readable,
                                  index_t writable) {
    static_assert(Blocks >= 1 && Blocks <= S, "picks within the S blocks of eight groups");
    __m128i mask[Blocks];
    for (int v = 0; v < Blocks; ++v) {
        mask[v] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(phase_masks16<S>.m[0][v]));
    }
    // (The rows in bounds counted once, so that the loop tests one counter.)
    if (readable < 8 * Blocks || writable < 8) return 0;
    const index_t count = std::min({rows, (readable - 8 * Blocks) / length + 1,
                                    (writable - 8) / pitch + 1});
    const std::int16_t* row = from;
    std::int16_t* out = to;
    for (index_t o = 0; o < count; ++o, row += length, out += pitch) {
        __m128i picks = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(row)), mask[0]);
        for (int v = 1; v < Blocks; ++v) {
            picks = _mm_or_si128(picks, _mm_shuffle_epi8(_mm_loadu_si128(
                reinterpret_cast<const __m128i*>(row + 8 * v)), mask[v]));
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), picks);
    }
    return count;
}

template <int S>
inline index_t pick_rows16_step(const std::int16_t* from, std::int16_t* to, index_t rows,
                                index_t n, index_t length, index_t pitch, index_t readable,
                                index_t writable) {
    switch ((n - 1) * S / 8) {
        case 0: return pick_rows16_blocks<S, 1>(from, to, rows, length, pitch, readable, writable);
        case 1: return pick_rows16_blocks<S, 2>(from, to, rows, length, pitch, readable, writable);
        case 2:
            if constexpr (S >= 3) {
                return pick_rows16_blocks<S, 3>(from, to, rows, length, pitch, readable, writable);
            }
            return 0;
        default: return 0;
    }
}

// pick_rows16_blocks for steps 2 to 8 and 1 <= n <= 8 picks a row whose picks lie in the
// first three blocks of 16 bytes (other cases: 0 rows). A copy, so the bits are the scalar
// loop's.
template <class T>
inline index_t pick_rows16(const T* from, T* to, index_t rows, index_t n, index_t step,
                           index_t length, index_t pitch, index_t readable, index_t writable) {
    static_assert(sizeof(T) == 2, "16-bit entries");
    if (n < 1 || n > 8) return 0;
    const std::int16_t* f = reinterpret_cast<const std::int16_t*>(from);
    std::int16_t* t = reinterpret_cast<std::int16_t*>(to);
    switch (step) {
        case 2: return pick_rows16_step<2>(f, t, rows, n, length, pitch, readable, writable);
        case 3: return pick_rows16_step<3>(f, t, rows, n, length, pitch, readable, writable);
        case 4: return pick_rows16_step<4>(f, t, rows, n, length, pitch, readable, writable);
        case 5: return pick_rows16_step<5>(f, t, rows, n, length, pitch, readable, writable);
        case 6: return pick_rows16_step<6>(f, t, rows, n, length, pitch, readable, writable);
        case 7: return pick_rows16_step<7>(f, t, rows, n, length, pitch, readable, writable);
        case 8: return pick_rows16_step<8>(f, t, rows, n, length, pitch, readable, writable);
        default: return 0;
    }
}

// The strided windows lo .. hi-1 of rows, straight from the rows of 16-bit floats `bits`
// (rows `length` apart, window lo's first tap at `first`) into keys d and codes c (rows
// `pitch` apart), eight windows at a time (`groups` of them a row): for each tap t, the
// elements first + t * dil, + S, + 2S, ... gathered into one 16-byte vector by byte shuffles
// (as pick_rows16_blocks picks) and turned into their keys there (key_of: only the picked
// elements are keyed, where keying the whole input first cost about as much as the picks;
// lanes past the windows hold some element's key), then combined as coded_taps16 combines taps (a later tap replaces only when
// larger; its code t * place). One vector step per tap and eight windows, rather than every
// stride-1 window of the row computed and then picked, or the row split into its phases
// (max_coded.hpp's coded_last_pass). Rows while their reads stay below `readable` and their
// writes (8 * groups entries) below `writable` (returned; lanes past the row's windows hold
// other entries, which the caller writes again later or which are never outputs).
// The taps of eight windows (V = __m128i; two rows' eight: __m256i) picked by pick(row + t *
// dil) for t = 0 .. taps-1, combined as coded_taps16 combines taps: a later tap replaces
// only when larger, its code t * place (step: place in every lane).
template <class V, class Pick>
inline void picked_taps16(const Pick& pick, const std::uint16_t* row, index_t taps, index_t dil,
                          V step, V* best, V* code) {
    constexpr bool wide = sizeof(V) == 32;
    V b = pick(row), c{}, add{};  // (V{}: zeros)
    for (index_t t = 1; t < taps; ++t) {
        const V value = pick(row + t * dil);
        if constexpr (wide) {
            add = _mm256_add_epi16(add, step);
            const __m256i better = _mm256_cmpgt_epi16(value, b);
            b = _mm256_max_epi16(b, value);
            c = _mm256_blendv_epi8(c, add, better);
        } else {
            add = _mm_add_epi16(add, step);
            const __m128i better = _mm_cmpgt_epi16(value, b);
            b = _mm_max_epi16(b, value);
            c = _mm_blendv_epi8(c, add, better);
        }
    }
    *best = b;
    *code = c;
}

template <int S, int Blocks>
inline index_t coded_pick_taps16_blocks(const std::uint16_t* x, const HalfKeys16& key_of,
                                        std::int16_t* d, std::uint16_t* c, index_t rows,
                                        index_t groups, index_t length, index_t pitch,
                                        index_t first, index_t taps, index_t dil,
                                        std::uint16_t place, index_t readable, index_t writable) {
    static_assert(Blocks >= 1 && Blocks <= S, "picks within the S blocks of eight groups");
    __m128i mask[Blocks];
    for (int v = 0; v < Blocks; ++v) {
        mask[v] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(phase_masks16<S>.m[0][v]));
    }
    // (Read from a row's start, and written.)
    const index_t reach = first + (taps - 1) * dil + (groups - 1) * 8 * S + 8 * Blocks;
    const index_t wide = 8 * groups;
    if (readable < reach || writable < wide) return 0;
    const index_t count =
        std::min({rows, (readable - reach) / length + 1, (writable - wide) / pitch + 1});
    auto pick = [&](const std::uint16_t* at) {
        __m128i picks = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)), mask[0]);
        for (int v = 1; v < Blocks; ++v) {
            picks = _mm_or_si128(picks, _mm_shuffle_epi8(_mm_loadu_si128(
                reinterpret_cast<const __m128i*>(at + 8 * v)), mask[v]));
        }
        return key_of.of(picks);
    };
    // Two rows at a time in the halves of 256-bit vectors (the shuffles work within each
    // half), then a last one on its own.
    __m256i mask2[Blocks];
    for (int v = 0; v < Blocks; ++v) mask2[v] = _mm256_broadcastsi128_si256(mask[v]);
    auto pick2 = [&](const std::uint16_t* at) {
        auto rows2 = [&](const std::uint16_t* p) {
            return _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + length)), 1);
        };
        __m256i picks = _mm256_shuffle_epi8(rows2(at), mask2[0]);
        for (int v = 1; v < Blocks; ++v) {
            picks = _mm256_or_si256(picks, _mm256_shuffle_epi8(rows2(at + 8 * v), mask2[v]));
        }
        return key_of.of(picks);
    };
    const __m256i step2 = _mm256_set1_epi16(static_cast<short>(place));
    index_t o = 0;
    for (; o + 2 <= count; o += 2) {
        // (Groups from the last: row o's last group may reach into row o + 1's first, which
        // is then written after it.)
        for (index_t g = groups - 1; g >= 0; --g) {
            __m256i best, code;
            picked_taps16(pick2, x + o * length + first + g * 8 * S, taps, dil, step2, &best,
                          &code);
            // (Row o first: its entries past its windows may be row o + 1's.)
            std::int16_t* to = d + o * pitch + 8 * g;
            std::uint16_t* to_code = c + o * pitch + 8 * g;
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to), _mm256_castsi256_si128(best));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to_code), _mm256_castsi256_si128(code));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to + pitch),
                             _mm256_extracti128_si256(best, 1));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to_code + pitch),
                             _mm256_extracti128_si256(code, 1));
        }
    }
    const __m128i step = _mm_set1_epi16(static_cast<short>(place));
    for (; o < count; ++o) {
        for (index_t g = 0; g < groups; ++g) {
            __m128i best, code;
            picked_taps16(pick, x + o * length + first + g * 8 * S, taps, dil, step, &best,
                          &code);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + o * pitch + 8 * g), best);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(c + o * pitch + 8 * g), code);
        }
    }
    return count;
}

template <int S>
inline index_t coded_pick_taps16_step(const std::uint16_t* x, const HalfKeys16& key_of,
                                      std::int16_t* d, std::uint16_t* c, index_t rows, index_t n, index_t length, index_t pitch,
                                      index_t first, index_t taps, index_t dil,
                                      std::uint16_t place, index_t readable, index_t writable) {
    // (More than eight windows: whole groups of eight, each S blocks wide.)
    if (n > 8) {
        return coded_pick_taps16_blocks<S, S>(x, key_of, d, c, rows, (n + 7) / 8, length, pitch, first,
                                              taps, dil, place, readable, writable);
    }
    switch ((n - 1) * S / 8) {
        case 0:
            return coded_pick_taps16_blocks<S, 1>(x, key_of, d, c, rows, 1, length, pitch, first, taps,
                                                  dil, place, readable, writable);
        case 1:
            return coded_pick_taps16_blocks<S, 2>(x, key_of, d, c, rows, 1, length, pitch, first, taps,
                                                  dil, place, readable, writable);
        default:
            if constexpr (S >= 3) {
                return coded_pick_taps16_blocks<S, S>(x, key_of, d, c, rows, 1, length, pitch, first,
                                                      taps, dil, place, readable, writable);
            }
            return 0;
    }
}

// coded_pick_taps16_blocks for steps 2 to 8, n >= 1 windows a row, taps >= 1 (other cases:
// 0 rows).
inline index_t coded_pick_taps16(const std::uint16_t* x, const HalfKeys16& key_of,
                                 std::int16_t* d, std::uint16_t* c,
                                 index_t rows, index_t n, index_t step, index_t length,
                                 index_t pitch, index_t first, index_t taps, index_t dil,
                                 std::uint16_t place, index_t readable, index_t writable) {
    if (n < 1 || taps < 1) return 0;
    return with_constant<2, 8>(step, [&](auto s) {
        return coded_pick_taps16_step<decltype(s)::value>(x, key_of, d, c, rows, n, length, pitch, first,
                                                          taps, dil, place, readable, writable);
    });
}

// Where the last-axis windows first .. last-1 of rows `width` long (results `pitch` apart)
// fit one vector of `lanes` elements for coded_edge_picks16 / coded_edge_picks_bytes: the
// first element read (*from), the first entry written (*at) and the most taps of a window
// (*taps; 0: empty windows only). false when they do not fit (width or pitch below lanes,
// more than lanes windows, taps spread over more than lanes elements, more than
// most_edge_taps taps).
constexpr index_t most_edge_taps = 16;

inline bool edge_picks_fit(index_t width, index_t pitch, const index_t* begin,
                           const index_t* count, index_t dil, index_t first, index_t last,
                           index_t lanes, index_t* from, index_t* at, index_t* taps) {
    if (first >= last || width < lanes || pitch < lanes || last - first > lanes) return false;
    index_t lo = width, hi = 0;
    *taps = 0;
    for (index_t j = first; j < last; ++j) {
        if (count[j] == 0) continue;
        lo = std::min(lo, begin[j]);
        hi = std::max(hi, begin[j] + (count[j] - 1) * dil + 1);
        *taps = std::max(*taps, count[j]);
    }
    if (*taps == 0) return true;
    *from = std::min(lo, width - lanes);
    *at = std::min(first, pitch - lanes);
    return *taps <= most_edge_taps && hi - *from <= lanes;
}

// The byte shuffles of coded_edge_picks16 / coded_edge_picks_bytes (elements of `Bytes`
// bytes, 16 / Bytes of them to a 16-byte vector): masks[t] moves each lane's window's tap t
// (a window of fewer taps its last one again) from the load at `from` into the lane of
// window at + l; kept has all bits set in the lanes of windows first .. last-1 with taps,
// which are blended in, and none elsewhere.
template <int Bytes>
inline void edge_pick_masks(const index_t* begin, const index_t* count, index_t dil,
                            index_t first, index_t last, index_t from, index_t at, index_t taps,
                            std::uint8_t (*masks)[16], std::uint8_t* kept) {
    for (index_t l = 0; l < 16 / Bytes; ++l) {
        const index_t j = at + l;
        const bool keep = j >= first && j < last && count[j] > 0;
        for (int b = 0; b < Bytes; ++b) kept[Bytes * l + b] = keep ? 0xff : 0;
        for (index_t t = 0; t < taps; ++t) {
            const index_t e = keep ? begin[j] + std::min(t, count[j] - 1) * dil - from : 0;
            for (int b = 0; b < Bytes; ++b) {
                masks[t][Bytes * l + b] = static_cast<std::uint8_t>(Bytes * e + b);
            }
        }
    }
}

// The last-axis windows first .. last-1 of each of `rows` rows of 16-bit floats x (rows
// `width` apart, keyed by *key_of as they are read; key_of null: x holds keys already) into
// keys d and codes c (rows `pitch` apart), straight from the rows: every tap of the windows
// within eight consecutive elements, so that for each tap t one byte shuffle of the row's
// 16-byte load gives the lanes of windows at .. at + 7 their tap t (a window of fewer taps
// its last one again, which cannot replace itself), combined as coded_taps16 combines taps;
// the group's lanes are blended into the row's entries already there (the others kept), one
// 16-byte load and store a row for values and for codes. The edge windows of a row (cut by
// padding or the row's end) are few and short: one vector step a tap for all of them, where
// their columns went through transposes in and scalar copies out. Empty windows (no taps)
// are left to the caller. Returns false, doing nothing, when the windows do not fit so
// (width or pitch below eight, more than eight windows, taps spread over more than eight
// elements, more than 16 taps).
inline bool coded_edge_picks16(const std::uint16_t* x, const HalfKeys16* key_of,
                               std::int16_t* d, std::uint16_t* c,
                               index_t rows, index_t width, index_t pitch, const index_t* begin,
                               const index_t* count, index_t dil, index_t first, index_t last,
                               std::uint16_t place) {
    constexpr index_t most_taps = most_edge_taps;
    index_t from = 0, at = 0, taps = 0;  // (first element read, first entry written)
    if (!edge_picks_fit(width, pitch, begin, count, dil, first, last, 8, &from, &at, &taps)) {
        return false;
    }
    if (taps == 0) return true;  // (empty windows only)
    alignas(16) std::uint8_t masks[most_taps][16];
    alignas(16) std::uint8_t lanes[16];
    edge_pick_masks<2>(begin, count, dil, first, last, from, at, taps, masks, lanes);
    const __m128i group = _mm_load_si128(reinterpret_cast<const __m128i*>(lanes));
    __m128i mask[most_taps];
    for (index_t t = 0; t < taps; ++t) {
        mask[t] = _mm_load_si128(reinterpret_cast<const __m128i*>(masks[t]));
    }
    const __m128i step = _mm_set1_epi16(static_cast<short>(place));
    const std::uint16_t* row = x + from;
    index_t o = 0;
    {
        // Two rows to a 256-bit vector (row o in the low half, o + 1 in the high), the same
        // shuffles in both halves: half the shuffles and combines a row (bfloat16 rows of
        // 33, three and two edge windows of two taps: about 26 instructions a row and side
        // one row at a time). Rows are at least eight entries apart (pitch >= 8), so a
        // pair's two loads and stores of eight entries do not overlap.
        __m256i mask2[most_taps];
        for (index_t t = 0; t < taps; ++t) mask2[t] = _mm256_broadcastsi128_si256(mask[t]);
        const __m256i group2 = _mm256_broadcastsi128_si256(group);
        const __m256i step2 = _mm256_broadcastsi128_si256(step);
        auto two = [](const void* low, const void* high) {
            return _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(low))),
                _mm_loadu_si128(static_cast<const __m128i*>(high)), 1);
        };
        auto put = [](void* low, void* high, __m256i v) {
            _mm_storeu_si128(static_cast<__m128i*>(low), _mm256_castsi256_si128(v));
            _mm_storeu_si128(static_cast<__m128i*>(high), _mm256_extracti128_si256(v, 1));
        };
        for (; o + 2 <= rows; o += 2, row += 2 * width) {
            __m256i v = two(row, row + width);
            if (key_of != nullptr) v = key_of->of(v);
            __m256i best = _mm256_shuffle_epi8(v, mask2[0]), code = _mm256_setzero_si256();
            __m256i add = code;
            for (index_t t = 1; t < taps; ++t) {
                const __m256i value = _mm256_shuffle_epi8(v, mask2[t]);
                add = _mm256_add_epi16(add, step2);
                const __m256i better = _mm256_cmpgt_epi16(value, best);
                best = _mm256_max_epi16(best, value);
                code = _mm256_blendv_epi8(code, add, better);
            }
            std::int16_t* to = d + o * pitch + at;
            std::uint16_t* to_code = c + o * pitch + at;
            put(to, to + pitch, _mm256_blendv_epi8(two(to, to + pitch), best, group2));
            put(to_code, to_code + pitch,
                _mm256_blendv_epi8(two(to_code, to_code + pitch), code, group2));
        }
    }
    for (; o < rows; ++o, row += width) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row));
        if (key_of != nullptr) v = key_of->of(v);
        __m128i best = _mm_shuffle_epi8(v, mask[0]), code = _mm_setzero_si128(), add = code;
        for (index_t t = 1; t < taps; ++t) {
            const __m128i value = _mm_shuffle_epi8(v, mask[t]);
            add = _mm_add_epi16(add, step);
            const __m128i better = _mm_cmpgt_epi16(value, best);
            best = _mm_max_epi16(best, value);
            code = _mm_blendv_epi8(code, add, better);
        }
        __m128i* to = reinterpret_cast<__m128i*>(d + o * pitch + at);
        __m128i* to_code = reinterpret_cast<__m128i*>(c + o * pitch + at);
        _mm_storeu_si128(to, _mm_blendv_epi8(_mm_loadu_si128(to), best, group));
        _mm_storeu_si128(to_code, _mm_blendv_epi8(_mm_loadu_si128(to_code), code, group));
    }
    return true;
}

// columns[(k - lo) * rows + o] = x[o * width + k] for k in [lo, hi) and the rows o below
// rows - rows % 8 (returned; the rest is the caller's), 32- or 16-bit elements T, width >= 8:
// eight rows by eight columns at a time through transpose_block, each row read in bounds (the
// last block of columns starts at most at width - 8; columns outside [lo, hi) or already
// written go to a spare row). Blocks of columns outside, rows inside, so that each column's
// destination is worked out once per block of columns rather than once per eight rows
// (bfloat16 rows of 33 with five edge windows: about 150 instructions a transpose went on
// those pointers).
template <class T>
inline index_t columns_of_rows8(const T* x, T* columns, index_t rows, index_t width, index_t lo,
                                index_t hi) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 2, "32- or 16-bit elements");
    alignas(32) T spare[8];
    const index_t whole = rows - rows % 8;
    for (index_t c = lo; c < hi; c += 8) {
        const index_t at = std::min(c, width - 8), end = std::min(c + 8, hi);
        // Column at + k of rows o.. goes to to[k] + o * moves[k] (the spare row stays put).
        T* to[8];
        index_t moves[8];
        for (index_t k = 0; k < 8; ++k) {
            const bool kept = at + k >= c && at + k < end;
            to[k] = kept ? columns + (at + k - lo) * rows : spare;
            moves[k] = kept ? 1 : 0;
        }
        for (index_t o = 0; o < whole; o += 8) {
            const void* src[8];
            void* dst[8];
            for (index_t k = 0; k < 8; ++k) {
                src[k] = x + (o + k) * width + at;
                dst[k] = to[k] + o * moves[k];
            }
            transpose_block<static_cast<int>(sizeof(T))>(src, dst);
        }
    }
    return whole;
}

// d[o * pitch + i] = from[i * rows + o] for i in [0, n) and the rows o below rows - rows % 8
// (returned; the rest is the caller's), 32-bit elements: eight rows by eight columns at a
// time, transposed in registers and stored with a mask (only d's entries i < n change).
inline index_t rows_of_columns8(const float* from, float* d, index_t rows, index_t pitch,
                                index_t n) {
    index_t o = 0;
    for (; o + 8 <= rows; o += 8) {
        for (index_t i = 0; i < n; i += 8) {
            const index_t lanes = std::min<index_t>(n - i, 8);
            __m256 m[8];
            for (index_t k = 0; k < 8; ++k) {
                // (Rows past the n columns: any column, never stored.)
                m[k] = _mm256_loadu_ps(from + (i + std::min(k, lanes - 1)) * rows + o);
            }
            transpose8x8(m);
            const __m256i mask = lanes_below(lanes);
            for (index_t k = 0; k < 8; ++k) _mm256_maskstore_ps(d + (o + k) * pitch + i, mask, m[k]);
        }
    }
    return o;
}

// index[j] = start + begin[j] + rel[code[j]] for j in [0, n - n % 8) (the rest is the
// caller's): the indices of the tap-code passes whose codes (uint8, beside int8 values) are
// looked up in a table (max_coded.hpp's coded_indices), four table entries per gather. The
// sums are the scalar loop's, in 64 bits; int32 indices keep their low halves, as its cast.
template <class I>
inline index_t coded_rel_indices8(I* index, const std::uint8_t* code, const std::int64_t* rel,
                                  const index_t* begin, std::int64_t start, index_t n) {
    static_assert(sizeof(index_t) == 8, "begin holds 64-bit entries");
    const __m256i base = _mm256_set1_epi64x(start);
    const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const long long* table = reinterpret_cast<const long long*>(rel);
    index_t j = 0;
    for (; j + 8 <= n; j += 8) {
        std::int64_t eight;
        std::memcpy(&eight, code + j, 8);
        __m256i codes = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(eight));
        __m256i sums[2];
        for (int h = 0; h < 2; ++h) {
            __m128i half = h == 0 ? _mm256_castsi256_si128(codes)
                                  : _mm256_extracti128_si256(codes, 1);
            __m256i offsets = _mm256_i32gather_epi64(table, half, 8);
            __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(begin + j + 4 * h));
            sums[h] = _mm256_add_epi64(_mm256_add_epi64(base, first), offsets);
        }
        if constexpr (sizeof(I) == 8) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + j), sums[0]);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + j + 4), sums[1]);
        } else {
            __m128i lo = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(sums[0], low_halves));
            __m128i hi = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(sums[1], low_halves));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + j),
                                _mm256_set_m128i(hi, lo));
        }
    }
    return j;
}

// index[j] = start + begin[j] + offset(code[j]) for j in [0, n - n % 8) (the rest is the
// caller's), for uint8 codes made of bit fields (max_coded.hpp's CodeFields): offset(code) =
// sum over the `axes` fields of ((code >> shift[a]) & mask[a]) * step[a], below 2^31, computed
// in 32-bit lanes, eight codes at a time, with no table and no gather. The same sums as the
// scalar loop's rel[code[j]] (rel: that offset for every code); int32 indices are the low
// halves of the 64-bit sums, as its cast.
template <class I, int Axes>
inline index_t coded_field_indices8_axes(I* index, const std::uint8_t* code, const int* shift,
                                         const std::int32_t* mask, const std::int32_t* step,
                                         const index_t* begin, std::int64_t start, index_t n) {
    __m128i shifts[Axes];
    __m256i masks[Axes], steps[Axes];
    for (int a = 0; a < Axes; ++a) {
        shifts[a] = _mm_cvtsi32_si128(shift[a]);
        masks[a] = _mm256_set1_epi32(mask[a]);
        steps[a] = _mm256_set1_epi32(step[a]);
    }
    const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256i base64 = _mm256_set1_epi64x(start);
    const __m256i base32 = _mm256_set1_epi32(static_cast<std::int32_t>(start));
    index_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256i codes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(
            reinterpret_cast<const __m128i*>(code + j)));
        __m256i offsets = _mm256_mullo_epi32(
            _mm256_and_si256(_mm256_srl_epi32(codes, shifts[0]), masks[0]), steps[0]);
        for (int a = 1; a < Axes; ++a) {
            const __m256i digit = _mm256_and_si256(_mm256_srl_epi32(codes, shifts[a]), masks[a]);
            offsets = _mm256_add_epi32(offsets, _mm256_mullo_epi32(digit, steps[a]));
        }
        const __m256i first0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(begin + j));
        const __m256i first1 =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(begin + j + 4));
        if constexpr (sizeof(I) == 8) {
            const __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(offsets));
            const __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(offsets, 1));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + j),
                                _mm256_add_epi64(_mm256_add_epi64(base64, first0), lo));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + j + 4),
                                _mm256_add_epi64(_mm256_add_epi64(base64, first1), hi));
        } else {
            // (Low halves: the sum's low 32 bits are those of its terms' low halves.)
            const __m128i lo =
                _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(first0, low_halves));
            const __m128i hi =
                _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(first1, low_halves));
            _mm256_storeu_si256(
                reinterpret_cast<__m256i*>(index + j),
                _mm256_add_epi32(_mm256_add_epi32(_mm256_set_m128i(hi, lo), base32), offsets));
        }
    }
    return j;
}

// (The field count a constant: the loop over the fields unrolled, their constants kept in
// registers.)
template <class I>
inline index_t coded_field_indices8(I* index, const std::uint8_t* code, const int* shift,
                                    const std::int32_t* mask, const std::int32_t* step, int axes,
                                    const index_t* begin, std::int64_t start, index_t n) {
    static_assert(sizeof(index_t) == 8, "begin holds 64-bit entries");
    switch (axes) {
        case 1:
            return coded_field_indices8_axes<I, 1>(index, code, shift, mask, step, begin, start, n);
        case 2:
            return coded_field_indices8_axes<I, 2>(index, code, shift, mask, step, begin, start, n);
        case 3:
            return coded_field_indices8_axes<I, 3>(index, code, shift, mask, step, begin, start, n);
        case 4:
            return coded_field_indices8_axes<I, 4>(index, code, shift, mask, step, begin, start, n);
        default: return 0;
    }
}

// Strided picks of 1-byte elements by byte shuffles (AVX2 gathers are slow on AMD EPYC).
// Sixteen picks j .. j + 15 of step s read the s 16-byte blocks from[16 * c + j * s], c < s;
// byte_step_masks.m[s][c] moves the picks that block c holds (picks k with 16c <= k s < 16c +
// 16, at k s - 16 c) into lanes k and zeroes the other lanes, so the picks are the OR of the
// s shuffled blocks.
constexpr int max_byte_step = 16;

struct ByteStepMasks {
    std::uint8_t m[max_byte_step + 1][max_byte_step][16];
};

constexpr ByteStepMasks make_byte_step_masks() {
    ByteStepMasks t{};
    for (int s = 1; s <= max_byte_step; ++s) {
        for (int c = 0; c < s; ++c) {
            for (int k = 0; k < 16; ++k) {
                const int at = k * s - 16 * c;
                t.m[s][c][k] = static_cast<std::uint8_t>(0 <= at && at < 16 ? at : 0x80);
            }
        }
    }
    return t;
}

alignas(16) inline constexpr ByteStepMasks byte_step_masks = make_byte_step_masks();

// Picks j .. j + 15 of step S from `from` (reads from[j * S .. (j + 16) * S)).
template <int S>
inline __m128i byte_picks16(const std::uint8_t* from) {
    const __m128i* mask = reinterpret_cast<const __m128i*>(byte_step_masks.m[S]);
    __m128i picks = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from)),
                                     _mm_load_si128(mask));
    for (int c = 1; c < S; ++c) {
        picks = _mm_or_si128(picks, _mm_shuffle_epi8(_mm_loadu_si128(
                                        reinterpret_cast<const __m128i*>(from + 16 * c)),
                                                     _mm_load_si128(mask + c)));
    }
    return picks;
}

// Thirty-two picks (reads from[0 .. 32 * S)): the low lane's sixteen as byte_picks16, the high
// lane's from from + 16 * S with the same masks.
template <int S>
inline __m256i byte_picks32(const std::uint8_t* from) {
    const __m128i* mask = reinterpret_cast<const __m128i*>(byte_step_masks.m[S]);
    __m256i picks = _mm256_setzero_si256();
    for (int c = 0; c < S; ++c) {
        const __m256i blocks = _mm256_inserti128_si256(
            _mm256_castsi128_si256(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 16 * c))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 16 * (S + c))), 1);
        picks = _mm256_or_si256(
            picks, _mm256_shuffle_epi8(blocks, _mm256_broadcastsi128_si256(_mm_load_si128(mask + c))));
    }
    return picks;
}

template <int S>
inline index_t pick_bytes_step(const std::uint8_t* from, std::uint8_t* to, index_t n,
                               index_t readable, index_t writable) {
    index_t j = 0;
    for (; j + 32 <= n && (j + 32) * S <= readable; j += 32) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + j), byte_picks32<S>(from + j * S));
    }
    for (; j + 16 <= n && (j + 16) * S <= readable; j += 16) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + j), byte_picks16<S>(from + j * S));
    }
    if (j < n) {
        // The last picks: sixteen ending at pick n (overlapping picks already stored, with the
        // same bytes), or, with room to write, sixteen from pick j (lanes past n: bytes the
        // caller writes again later).
        const index_t at = n >= 16 ? n - 16 : j;
        if ((at + 16) * S <= readable && at + 16 <= writable) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to + at), byte_picks16<S>(from + at * S));
            j = n;
        }
    }
    return j;
}

// to[j] = from[j * step] for 1-byte elements, j in [0, returned) of [0, n) (the rest is the
// caller's), 2 <= step <= max_byte_step (other steps: 0 picks): reads from[0 .. readable)
// only and writes to[0 .. max(n, writable)) only; to[n .. writable) may get any bytes, and
// [to, to + writable) must not overlap [from, from + readable). A copy, so the bytes are the
// scalar loop's.
template <class F, class T>
inline index_t pick_bytes(const F* from, T* to, index_t n, index_t step, index_t readable,
                          index_t writable) {
    static_assert(sizeof(F) == 1 && sizeof(T) == 1, "1-byte elements");
    const std::uint8_t* f = reinterpret_cast<const std::uint8_t*>(from);
    std::uint8_t* t = reinterpret_cast<std::uint8_t*>(to);
    writable = std::max(writable, n);
    switch (step) {
        case 2: return pick_bytes_step<2>(f, t, n, readable, writable);
        case 3: return pick_bytes_step<3>(f, t, n, readable, writable);
        case 4: return pick_bytes_step<4>(f, t, n, readable, writable);
        case 5: return pick_bytes_step<5>(f, t, n, readable, writable);
        case 6: return pick_bytes_step<6>(f, t, n, readable, writable);
        case 7: return pick_bytes_step<7>(f, t, n, readable, writable);
        case 8: return pick_bytes_step<8>(f, t, n, readable, writable);
        case 9: return pick_bytes_step<9>(f, t, n, readable, writable);
        case 10: return pick_bytes_step<10>(f, t, n, readable, writable);
        case 11: return pick_bytes_step<11>(f, t, n, readable, writable);
        case 12: return pick_bytes_step<12>(f, t, n, readable, writable);
        case 13: return pick_bytes_step<13>(f, t, n, readable, writable);
        case 14: return pick_bytes_step<14>(f, t, n, readable, writable);
        case 15: return pick_bytes_step<15>(f, t, n, readable, writable);
        case 16: return pick_bytes_step<16>(f, t, n, readable, writable);
        default: return 0;
    }
}

// Max of 1-byte integers, values only (max_plane_values' byte rows): integer maxima do not
// depend on the order of the taps, so these combine them in any order and give the scalar
// loops' bytes. T: std::int8_t or std::uint8_t.
template <class T>
inline __m256i max_bytes(__m256i a, __m256i b) {
    return std::is_signed<T>::value ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
}

template <class T>
inline __m128i max_bytes(__m128i a, __m128i b) {
    return std::is_signed<T>::value ? _mm_max_epi8(a, b) : _mm_max_epu8(a, b);
}

// Picks of 1-byte entries at irregular positions, sixteen at a time by byte shuffles
// (max_coded.hpp's coded_counted_rows: each window read from the run of its tap count at its
// first tap). One BytePick per 16-byte block of a run that holds picks of a group of sixteen
// windows: the block starts `at` entries into run `run` of a row, and mask moves its picks
// into their windows' lanes (0x80 elsewhere), so a group is the OR of its blocks' shuffles.
struct BytePick {
    index_t run = 0;
    index_t at = 0;
    std::uint8_t mask[16];
};

// The BytePicks of windows j < out_len (out_len >= 16; fewer: none) reading count[j] taps
// from begin[j] (count 0: no pick), from the run of count[j] - count_min taps, in groups of
// sixteen windows from min(16 g, out_len - 16); group g's BytePicks are picks[groups[g] ..
// groups[g + 1]).
inline void byte_pick_table(const index_t* begin, const index_t* count, index_t out_len,
                            index_t count_min, std::vector<BytePick>* picks,
                            std::vector<index_t>* groups) {
    picks->clear();
    groups->clear();
    if (out_len < 16) return;
    const index_t group_count = (out_len + 15) / 16;
    groups->reserve(static_cast<std::size_t>(group_count + 1));
    // (About two blocks a run and group for windows a few elements apart: one allocation.)
    picks->reserve(static_cast<std::size_t>(group_count * 8));
    // A group's latest BytePick of each run (block `latest_at[run]`, entry latest[run]): the
    // windows' first taps rarely go back, so a window's block is mostly its run's latest, or
    // a new one. (Where a first tap does go back to an earlier block, that block gets a
    // second BytePick: its picks ORed in twice, the same bytes.)
    // (Sized once: growing them would instantiate std::vector's fill-insert here alone, an
    // AVX2-encoded copy of a library function the baseline build does not have.)
    index_t runs = 0;
    for (index_t j = 0; j < out_len; ++j) {
        if (count[j] > 0) runs = std::max(runs, count[j] - count_min + 1);
    }
    std::vector<index_t> latest, latest_at;
    latest.assign(static_cast<std::size_t>(runs), 0);
    for (index_t g = 0; g < group_count; ++g) {
        groups->push_back(static_cast<index_t>(picks->size()));
        const index_t s = std::min(16 * g, out_len - 16);
        index_t low = -1;
        for (index_t j = s; j < s + 16; ++j) {
            if (count[j] > 0 && (low < 0 || begin[j] < low)) low = begin[j];
        }
        latest_at.assign(static_cast<std::size_t>(runs), -1);
        for (index_t j = s; j < s + 16; ++j) {
            if (count[j] == 0) continue;
            const index_t run = count[j] - count_min, at = low + (begin[j] - low) / 16 * 16;
            if (latest_at[run] != at) {
                BytePick pick;
                pick.run = run;
                pick.at = at;
                std::memset(pick.mask, 0x80, sizeof(pick.mask));
                latest[run] = static_cast<index_t>(picks->size());
                latest_at[run] = at;
                picks->push_back(pick);
            }
            (*picks)[latest[run]].mask[j - s] = static_cast<std::uint8_t>(begin[j] - at);
        }
    }
    groups->push_back(static_cast<index_t>(picks->size()));
}

// to[j] = from[run(j) * stride + begin[j]], to_code[j] likewise from from_code, for the
// windows j < out_len of byte_pick_table's picks and groups (windows of no pick: 0). Reads
// 16 bytes from each BytePick's block.
template <class T>
inline void pick_bytes_by_table(const T* from, const std::uint8_t* from_code, T* to,
                                std::uint8_t* to_code, index_t stride, index_t out_len,
                                const BytePick* picks, const index_t* groups) {
    static_assert(sizeof(T) == 1, "1-byte entries");
    for (index_t g = 0; g * 16 < out_len; ++g) {
        __m128i values = _mm_setzero_si128(), codes = values;
        for (index_t e = groups[g]; e < groups[g + 1]; ++e) {
            const BytePick& pick = picks[e];
            const index_t at = pick.run * stride + pick.at;
            const __m128i mask = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pick.mask));
            values = _mm_or_si128(values, _mm_shuffle_epi8(load_bytes<__m128i>(from + at), mask));
            codes = _mm_or_si128(codes, _mm_shuffle_epi8(load_bytes<__m128i>(from_code + at), mask));
        }
        const index_t s = std::min(16 * g, out_len - 16);
        store_bytes(to + s, values);
        store_bytes(to_code + s, codes);
    }
}

// The max of r[i + t * gap] over t in [0, taps) (taps >= 1), for the sizeof(V) bytes from i.
// Taps > 0: the tap count as a constant (the loop unrolled, each tap one max with a memory
// operand rather than also the loop's add, compare and branch); 0: `taps`.
template <class T, class V, int Taps = 0>
inline V max_taps_bytes(const T* r, index_t i, index_t gap, index_t taps) {
    const index_t count = Taps > 0 ? Taps : taps;
    V best = load_bytes<V>(r + i);
    for (index_t t = 1; t < count; ++t) best = max_bytes<T>(best, load_bytes<V>(r + i + t * gap));
    return best;
}

// Largest tap count the byte max kernels below take as a constant (more: a loop).
constexpr int max_constant_byte_taps = 8;

// f(std::integral_constant<int, taps>{}) for 1 <= taps <= max_constant_byte_taps, else
// f(std::integral_constant<int, 0>{}) (the count a run-time value).
template <class F>
inline auto with_byte_taps(index_t taps, const F& f) {
    if (taps >= 1 && taps <= max_constant_byte_taps) {
        return with_constant<1, max_constant_byte_taps>(taps, f);
    }
    return f(std::integral_constant<int, 0>{});
}

// dst[i] = the max of r[i + t * gap], t in [0, taps), for i in [0, n), n >= 16 (taps >= 1):
// 32 (or 16) bytes at a time with every tap in registers, the last group overlapping the one
// before (dst must not overlap the rows).
template <class T, int Taps>
inline void max_rows_bytes_taps(T* dst, const T* r, index_t gap, index_t taps, index_t n) {
    if (n >= 32) {
        for (index_t i = 0;; i = std::min(i + 32, n - 32)) {
            store_bytes(dst + i, max_taps_bytes<T, __m256i, Taps>(r, i, gap, taps));
            if (i == n - 32) break;
        }
    } else {
        for (index_t i = 0;; i = std::min(i + 16, n - 16)) {
            store_bytes(dst + i, max_taps_bytes<T, __m128i, Taps>(r, i, gap, taps));
            if (i == n - 16) break;
        }
    }
}

template <class T>
inline void max_rows_bytes(T* dst, const T* r, index_t gap, index_t taps, index_t n) {
    with_byte_taps(taps, [&](auto k) {
        max_rows_bytes_taps<T, decltype(k)::value>(dst, r, gap, taps, n);
    });
}

// Windows j .. j + 31 (V = __m256i) or j .. j + 15 (__m128i) of step S: window k's taps are
// src[k * S + t * dil], t < taps. The stride-1 windows at k * S .. (k + lanes) * S - 1 are
// computed in S vectors (reading src[j * S .. (j + lanes) * S + (taps - 1) * dil)), and every
// S-th is picked out of them by byte shuffles (byte_step_masks; for __m256i, the two lanes'
// blocks brought together by vperm2i128).
template <int S, int Taps, class T, class V>
inline V max_strided_windows_bytes(const T* src, index_t j, index_t taps, index_t dil) {
    constexpr index_t lanes = sizeof(V);
    V w[S];
    for (int m = 0; m < S; ++m) {
        w[m] = max_taps_bytes<T, V, Taps>(src, j * S + m * lanes, dil, taps);
    }
    const __m128i* mask = reinterpret_cast<const __m128i*>(byte_step_masks.m[S]);
    if constexpr (S == 1) {
        return w[0];
    } else if constexpr (lanes == 16) {
        V picks = _mm_shuffle_epi8(w[0], _mm_load_si128(mask));
        for (int c = 1; c < S; ++c) {
            picks = _mm_or_si128(picks, _mm_shuffle_epi8(w[c], _mm_load_si128(mask + c)));
        }
        return picks;
    } else {
        // Block c (picks 0 .. 15) is half c % 2 of w[c / 2]; block S + c (picks 16 .. 31) is
        // half (S + c) % 2 of w[(S + c) / 2].
        V picks = _mm256_setzero_si256();
        for (int c = 0; c < S; ++c) {
            const V a = w[c / 2], b = w[(S + c) / 2];
            V blocks;
            if (c % 2 == 0 && (S + c) % 2 == 0) {
                blocks = _mm256_permute2x128_si256(a, b, 0x20);
            } else if (c % 2 == 0) {
                blocks = _mm256_permute2x128_si256(a, b, 0x30);
            } else if ((S + c) % 2 == 0) {
                blocks = _mm256_permute2x128_si256(a, b, 0x21);
            } else {
                blocks = _mm256_permute2x128_si256(a, b, 0x31);
            }
            picks = _mm256_or_si256(
                picks, _mm256_shuffle_epi8(blocks,
                                           _mm256_broadcastsi128_si256(_mm_load_si128(mask + c))));
        }
        return picks;
    }
}

template <int S, int Taps, class T>
inline index_t max_windows_bytes_step(const T* src, T* out, index_t n, index_t taps,
                                      index_t dil, index_t readable) {
    const index_t reach = (taps - 1) * dil;  // (beyond a group's S * lanes bytes)
    index_t j = 0;
    for (; j + 32 <= n && (j + 32) * S + reach <= readable; j += 32) {
        store_bytes(out + j, max_strided_windows_bytes<S, Taps, T, __m256i>(src, j, taps, dil));
    }
    for (; j + 16 <= n && (j + 16) * S + reach <= readable; j += 16) {
        store_bytes(out + j, max_strided_windows_bytes<S, Taps, T, __m128i>(src, j, taps, dil));
    }
    if (j < n && n >= 16 && n * S + reach <= readable) {
        // (The last sixteen windows, overlapping ones already stored with the same bytes.)
        store_bytes(out + n - 16,
                    max_strided_windows_bytes<S, Taps, T, __m128i>(src, n - 16, taps, dil));
        j = n;
    }
    return j;
}

// out[j] = the max of src[j * step + t * dil] over t in [0, taps) (taps >= 1), for j in
// [0, returned) of [0, n) (the rest is the caller's), 1 <= step <= 8: reads src[0 ..
// readable) only (a group of windows reads up to step - 1 bytes past its last tap). out
// must not overlap src.
template <class T>
inline index_t max_windows_bytes(const T* src, T* out, index_t n, index_t step, index_t taps,
                                 index_t dil, index_t readable) {
    // (Step and tap count as constants.)
    return with_constant<1, 8>(step, [&](auto s) {
        return with_byte_taps(taps, [&](auto k) {
            return max_windows_bytes_step<decltype(s)::value, decltype(k)::value>(
                src, out, n, taps, dil, readable);
        });
    });
}

// Tap-code passes over 1-byte integers (max_coded.hpp's coded_window, uint8 codes): 32
// (or 16) entries at a time, every tap in registers. A later tap replaces the best only when
// larger, so the best is the plain maximum, and the code follows where the maximum changed.
inline __m256i bytes_equal(__m256i a, __m256i b) { return _mm256_cmpeq_epi8(a, b); }
inline __m128i bytes_equal(__m128i a, __m128i b) { return _mm_cmpeq_epi8(a, b); }
inline __m256i bytes_add(__m256i a, __m256i b) { return _mm256_add_epi8(a, b); }
inline __m128i bytes_add(__m128i a, __m128i b) { return _mm_add_epi8(a, b); }
inline __m256i bytes_blend(__m256i a, __m256i b, __m256i mask) {
    return _mm256_blendv_epi8(a, b, mask);
}
inline __m128i bytes_blend(__m128i a, __m128i b, __m128i mask) {
    return _mm_blendv_epi8(a, b, mask);
}
template <class V>
inline V bytes_all(std::uint8_t b) {
    if constexpr (sizeof(V) == 32) {
        return _mm256_set1_epi8(static_cast<char>(b));
    } else {
        return _mm_set1_epi8(static_cast<char>(b));
    }
}

// The vector of Lanes byte lanes (8: the low half of an __m128i).
template <index_t Lanes> struct byte_vector { typedef __m128i type; };
template <> struct byte_vector<32> { typedef __m256i type; };

// Entries i .. i + Lanes - 1 of coded_taps_bytes (Lanes 32, 16, or 8: the low half of an
// __m128i, loaded and stored as 8 bytes). Taps > 0: the tap count as a constant (the loop
// unrolled) and adds[t] the code increment of tap t, made once by the caller rather than
// broadcast again for every group; Taps 0: `taps` taps, the increments made here.
template <bool Codes, class T, index_t Lanes, int Taps = 0>
inline void coded_taps_bytes_at(T* d, std::uint8_t* c, const T* r, const std::uint8_t* rc,
                                index_t taps, index_t gap, std::uint8_t place, index_t i,
                                const typename byte_vector<Lanes>::type* adds = nullptr) {
    typedef typename byte_vector<Lanes>::type V;
    auto load = [](const void* at) -> V {
        if constexpr (Lanes == 8) {
            return _mm_loadl_epi64(static_cast<const __m128i*>(at));
        } else {
            return load_bytes<V>(at);
        }
    };
    auto store = [](void* at, V v) {
        if constexpr (Lanes == 8) {
            _mm_storel_epi64(static_cast<__m128i*>(at), v);
        } else {
            store_bytes(at, v);
        }
    };
    V best = load(r + i);
    V code = Codes ? load(rc + i) : V{};  // (V{}: zeros)
    const index_t count = Taps > 0 ? Taps : taps;
    for (index_t t = 1; t < count; ++t) {
        const index_t at = i + t * gap;
        const V add = Taps > 0 ? adds[t]
                               : bytes_all<V>(static_cast<std::uint8_t>(
                                     static_cast<std::uint32_t>(t) * place));
        const V candidate = Codes ? bytes_add(load(rc + at), add) : add;
        const V next = max_bytes<T>(best, load(r + at));
        code = bytes_blend(candidate, code, bytes_equal(next, best));
        best = next;
    }
    store(d + i, best);
    store(c + i, code);
}

// The groups of 32 entries of coded_taps_bytes (n >= 32) for Taps taps, a constant.
template <bool Codes, class T, int Taps>
inline void coded_taps_bytes_fixed(T* d, std::uint8_t* c, const T* r, const std::uint8_t* rc,
                                   index_t gap, std::uint8_t place, index_t n) {
    __m256i adds[Taps];
    for (int t = 0; t < Taps; ++t) {
        adds[t] = bytes_all<__m256i>(
            static_cast<std::uint8_t>(static_cast<std::uint32_t>(t) * place));
    }
    index_t i = 0;
    for (; i + 32 <= n; i += 32) {
        coded_taps_bytes_at<Codes, T, 32, Taps>(d, c, r, rc, Taps, gap, place, i, adds);
    }
    if (i < n) {
        coded_taps_bytes_at<Codes, T, 32, Taps>(d, c, r, rc, Taps, gap, place, n - 32, adds);
    }
}

// d[i], c[i] for i in [0, n): the winner among the taps r[i + t * gap], t in [0, taps)
// (taps >= 2), and its code rc[i + t * gap] + t * place (rc null: t * place), both modulo
// 256 as the scalar loops' uint8 sums. Returns n when n >= 8 (the last group overlapping the
// one before, recomputed from the same inputs: d, c must not overlap r, rc), else 0 (left to
// the caller). (Runs of two to eight taps go with the count as a constant: with it a
// variable, each tap of each vector also paid the loop and the broadcast of its increment.)
template <bool Codes, class T>
inline index_t coded_taps_bytes(T* d, std::uint8_t* c, const T* r, const std::uint8_t* rc,
                                index_t taps, index_t gap, std::uint8_t place, index_t n) {
    if (n < 8) return 0;
    if (n < 16) {
        coded_taps_bytes_at<Codes, T, 8>(d, c, r, rc, taps, gap, place, 0);
        coded_taps_bytes_at<Codes, T, 8>(d, c, r, rc, taps, gap, place, n - 8);
        return n;
    }
    if (n < 32) {
        coded_taps_bytes_at<Codes, T, 16>(d, c, r, rc, taps, gap, place, 0);
        coded_taps_bytes_at<Codes, T, 16>(d, c, r, rc, taps, gap, place, n - 16);
        return n;
    }
    switch (taps) {
        case 2: coded_taps_bytes_fixed<Codes, T, 2>(d, c, r, rc, gap, place, n); return n;
        case 3: coded_taps_bytes_fixed<Codes, T, 3>(d, c, r, rc, gap, place, n); return n;
        case 4: coded_taps_bytes_fixed<Codes, T, 4>(d, c, r, rc, gap, place, n); return n;
        case 5: coded_taps_bytes_fixed<Codes, T, 5>(d, c, r, rc, gap, place, n); return n;
        case 6: coded_taps_bytes_fixed<Codes, T, 6>(d, c, r, rc, gap, place, n); return n;
        case 7: coded_taps_bytes_fixed<Codes, T, 7>(d, c, r, rc, gap, place, n); return n;
        case 8: coded_taps_bytes_fixed<Codes, T, 8>(d, c, r, rc, gap, place, n); return n;
        default: break;
    }
    index_t i = 0;
    for (; i + 32 <= n; i += 32) coded_taps_bytes_at<Codes, T, 32>(d, c, r, rc, taps, gap, place, i);
    if (i < n) coded_taps_bytes_at<Codes, T, 32>(d, c, r, rc, taps, gap, place, n - 32);
    return n;
}

// The strided windows lo .. hi-1 of rows of 1-byte values x (rows `length` apart, window lo's
// first tap at `first`) into d, c (rows `pitch` apart), sixteen windows at a time (`groups` of
// them a row), as coded_pick_taps16 does for 16-bit keys: for each tap t, the elements first
// + t * dil, + S, + 2S, ... picked into one 16-byte vector by byte shuffles (byte_step_masks,
// from the Blocks 16-byte blocks that hold them), combined as coded_taps_bytes combines taps
// (a later tap replaces only when larger; its code t * place), two rows at a time in the
// halves of 256-bit vectors. One vector step per tap and sixteen windows, with neither the run
// of every stride-1 window (values and codes) nor its two picks (max_coded.hpp's
// coded_last_pass). Rows while their reads stay below `readable` and their writes (16 *
// groups entries) below `writable` (returned; lanes past the row's windows hold other
// entries, which the caller writes again later or which are never outputs).
// The 16 bytes at p (low half) and at p + length (high half): two rows' blocks in one vector.
template <class T>
inline __m256i two_rows_bytes(const T* p, index_t length) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(load_bytes<__m128i>(p)),
                                   load_bytes<__m128i>(p + length), 1);
}

// Two rows' sixteen values and codes (the halves of best, code) to `to`, `to_code` and a pitch
// further; row o first: its entries past its windows may be row o + 1's.
template <class T>
inline void store_two_rows(T* to, std::uint8_t* to_code, index_t pitch, __m256i best,
                           __m256i code) {
    store_bytes(to, _mm256_castsi256_si128(best));
    store_bytes(to_code, _mm256_castsi256_si128(code));
    store_bytes(to + pitch, _mm256_extracti128_si256(best, 1));
    store_bytes(to_code + pitch, _mm256_extracti128_si256(code, 1));
}

template <class T, class V, class Pick>
inline void picked_taps_bytes(const Pick& pick, const T* row, index_t taps, index_t dil, V step,
                              V* best, V* code) {
    V b = pick(row), c{}, add{};  // (V{}: zeros)
    for (index_t t = 1; t < taps; ++t) {
        const V next = max_bytes<T>(b, pick(row + t * dil));
        add = bytes_add(add, step);
        c = bytes_blend(add, c, bytes_equal(next, b));
        b = next;
    }
    *best = b;
    *code = c;
}

template <class T, int S, int Blocks>
inline index_t coded_pick_taps_bytes_blocks(const T* x, T* d, std::uint8_t* c, index_t rows,
                                            index_t groups, index_t length, index_t pitch,
                                            index_t first, index_t taps, index_t dil,
                                            std::uint8_t place, index_t readable,
                                            index_t writable) {
    static_assert(Blocks >= 1 && Blocks <= S, "picks within the S blocks of sixteen groups");
    const __m128i* masks = reinterpret_cast<const __m128i*>(byte_step_masks.m[S]);
    __m128i mask[Blocks];
    __m256i mask2[Blocks];
    for (int v = 0; v < Blocks; ++v) {
        mask[v] = _mm_load_si128(masks + v);
        mask2[v] = _mm256_broadcastsi128_si256(mask[v]);
    }
    // (Read from a row's start, and written.)
    const index_t reach = first + (taps - 1) * dil + (groups - 1) * 16 * S + 16 * Blocks;
    const index_t wide = 16 * groups;
    if (readable < reach || writable < wide) return 0;
    const index_t count =
        std::min({rows, (readable - reach) / length + 1, (writable - wide) / pitch + 1});
    auto pick = [&](const T* at) {
        __m128i picks = _mm_shuffle_epi8(load_bytes<__m128i>(at), mask[0]);
        for (int v = 1; v < Blocks; ++v) {
            picks = _mm_or_si128(picks, _mm_shuffle_epi8(load_bytes<__m128i>(at + 16 * v),
                                                         mask[v]));
        }
        return picks;
    };
    auto pick2 = [&](const T* at) {
        __m256i picks = _mm256_shuffle_epi8(two_rows_bytes(at, length), mask2[0]);
        for (int v = 1; v < Blocks; ++v) {
            picks = _mm256_or_si256(
                picks, _mm256_shuffle_epi8(two_rows_bytes(at + 16 * v, length), mask2[v]));
        }
        return picks;
    };
    const __m256i step2 = bytes_all<__m256i>(place);
    index_t o = 0;
    for (; o + 2 <= count; o += 2) {
        // (Groups from the last: row o's last group may reach into row o + 1's first, which
        // is then written after it.)
        for (index_t g = groups - 1; g >= 0; --g) {
            __m256i best, code;
            picked_taps_bytes<T>(pick2, x + o * length + first + g * 16 * S, taps, dil, step2,
                                 &best, &code);
            store_two_rows(d + o * pitch + 16 * g, c + o * pitch + 16 * g, pitch, best, code);
        }
    }
    const __m128i step = bytes_all<__m128i>(place);
    for (; o < count; ++o) {
        for (index_t g = 0; g < groups; ++g) {
            __m128i best, code;
            picked_taps_bytes<T>(pick, x + o * length + first + g * 16 * S, taps, dil, step,
                                 &best, &code);
            store_bytes(d + o * pitch + 16 * g, best);
            store_bytes(c + o * pitch + 16 * g, code);
        }
    }
    return count;
}

template <class T, int S>
inline index_t coded_pick_taps_bytes_step(const T* x, T* d, std::uint8_t* c, index_t rows,
                                          index_t n, index_t length, index_t pitch,
                                          index_t first, index_t taps, index_t dil,
                                          std::uint8_t place, index_t readable,
                                          index_t writable) {
    // (More than sixteen windows: whole groups of sixteen, each S blocks wide.)
    const index_t groups = (n + 15) / 16;
    if (n > 16 || (n - 1) * S / 16 >= 2) {
        return coded_pick_taps_bytes_blocks<T, S, S>(x, d, c, rows, groups, length, pitch,
                                                     first, taps, dil, place, readable,
                                                     writable);
    }
    if ((n - 1) * S / 16 == 0) {
        return coded_pick_taps_bytes_blocks<T, S, 1>(x, d, c, rows, 1, length, pitch, first,
                                                     taps, dil, place, readable, writable);
    }
    return coded_pick_taps_bytes_blocks<T, S, 2>(x, d, c, rows, 1, length, pitch, first, taps,
                                                 dil, place, readable, writable);
}

// coded_pick_taps_bytes_blocks with the blocks held: the Blocks 16-byte blocks that hold
// every tap of a group of sixteen windows are loaded once (two rows to a 256-bit vector), and
// each tap's picks are shuffled out of them by masks made once a call, rather than each tap's
// blocks loaded again (two loads and an insert a block and tap). Blocks at most
// max_held_byte_blocks, taps at most max_held_byte_taps.
constexpr int max_held_byte_blocks = 8;
constexpr index_t max_held_byte_taps = 16;

inline __m256i bytes_shuffle(__m256i a, __m256i mask) { return _mm256_shuffle_epi8(a, mask); }
inline __m128i bytes_shuffle(__m128i a, __m128i mask) { return _mm_shuffle_epi8(a, mask); }
inline __m256i bytes_or(__m256i a, __m256i b) { return _mm256_or_si256(a, b); }
inline __m128i bytes_or(__m128i a, __m128i b) { return _mm_or_si128(a, b); }

// mask[t * blocks + c] (both halves alike) moves the picks of tap t that block c holds
// (elements q = k * step + t * dil of the group, k < 16, with 16 c <= q < 16 c + 16) into
// lanes k, and zeroes the other lanes. Needs 15 * step + (taps - 1) * dil < 256.
inline void held_byte_masks(__m256i* mask, index_t taps, index_t blocks, index_t step,
                            index_t dil) {
    alignas(16) std::uint8_t first[16];
    for (int k = 0; k < 16; ++k) first[k] = static_cast<std::uint8_t>(k * step);
    const __m128i k_step = _mm_load_si128(reinterpret_cast<const __m128i*>(first));
    const __m128i low = _mm_set1_epi8(15), zero = _mm_set1_epi8(static_cast<char>(0x80));
    for (index_t t = 0; t < taps; ++t) {
        const __m128i q = _mm_add_epi8(k_step, _mm_set1_epi8(static_cast<char>(t * dil)));
        const __m128i block = _mm_and_si128(_mm_srli_epi16(q, 4), low);
        const __m128i lane = _mm_and_si128(q, low);
        for (index_t c = 0; c < blocks; ++c) {
            const __m128i here = _mm_cmpeq_epi8(block, _mm_set1_epi8(static_cast<char>(c)));
            mask[t * blocks + c] =
                _mm256_broadcastsi128_si256(_mm_or_si128(lane, _mm_andnot_si128(here, zero)));
        }
    }
}

// The taps of sixteen windows (V = __m128i; two rows' sixteen: __m256i) from their held
// blocks, combined as picked_taps_bytes combines them. Taps > 0: the tap count as a constant
// (the loop unrolled: each tap its shuffles, ORs, a max, a compare and a blend, not also the
// loop's counter, mask pointer and branch); 0: `taps`.
template <class T, int Blocks, int Taps, class V>
inline void held_taps_bytes(const V* block, const __m256i* mask, const __m256i* adds,
                            index_t taps, V* best, V* code) {
    auto half = [](__m256i m) -> V {
        if constexpr (sizeof(V) == 32) {
            return m;
        } else {
            return _mm256_castsi256_si128(m);
        }
    };
    auto picks = [&](index_t t) {
        const __m256i* m = mask + t * Blocks;
        V p = bytes_shuffle(block[0], half(m[0]));
        for (int b = 1; b < Blocks; ++b) p = bytes_or(p, bytes_shuffle(block[b], half(m[b])));
        return p;
    };
    V b = picks(0), c{};  // (V{}: zeros)
    const index_t count = Taps > 0 ? Taps : taps;
#pragma GCC unroll 8
    for (index_t t = 1; t < count; ++t) {
        const V next = max_bytes<T>(b, picks(t));
        c = bytes_blend(half(adds[t]), c, bytes_equal(next, b));
        b = next;
    }
    *best = b;
    *code = c;
}

template <class T, int Blocks, int Taps>
inline index_t coded_pick_taps_bytes_held(const T* x, T* d, std::uint8_t* c, index_t rows,
                                          index_t groups, index_t length, index_t pitch,
                                          index_t first, index_t step, index_t taps,
                                          index_t dil, std::uint8_t place, index_t readable,
                                          index_t writable) {
    // (Read from a row's start, and written.)
    const index_t reach = first + (groups - 1) * 16 * step + 16 * Blocks;
    const index_t wide = 16 * groups;
    if (readable < reach || writable < wide) return 0;
    const index_t count =
        std::min({rows, (readable - reach) / length + 1, (writable - wide) / pitch + 1});
    __m256i mask[max_held_byte_taps * Blocks], adds[max_held_byte_taps];
    held_byte_masks(mask, taps, Blocks, step, dil);
    for (index_t t = 0; t < taps; ++t) {
        adds[t] = bytes_all<__m256i>(
            static_cast<std::uint8_t>(static_cast<std::uint32_t>(t) * place));
    }
    index_t o = 0;
    for (; o + 2 <= count; o += 2) {
        // (Groups from the last: row o's last group may reach into row o + 1's first, which
        // is then written after it.)
        for (index_t g = groups - 1; g >= 0; --g) {
            const T* at = x + o * length + first + g * 16 * step;
            __m256i block[Blocks], best, code;
            for (int b = 0; b < Blocks; ++b) block[b] = two_rows_bytes(at + 16 * b, length);
            held_taps_bytes<T, Blocks, Taps>(block, mask, adds, taps, &best, &code);
            store_two_rows(d + o * pitch + 16 * g, c + o * pitch + 16 * g, pitch, best, code);
        }
    }
    for (; o < count; ++o) {
        for (index_t g = 0; g < groups; ++g) {
            const T* at = x + o * length + first + g * 16 * step;
            __m128i block[Blocks], best, code;
            for (int b = 0; b < Blocks; ++b) block[b] = load_bytes<__m128i>(at + 16 * b);
            held_taps_bytes<T, Blocks, Taps>(block, mask, adds, taps, &best, &code);
            store_bytes(d + o * pitch + 16 * g, best);
            store_bytes(c + o * pitch + 16 * g, code);
        }
    }
    return count;
}

// coded_pick_taps_bytes_blocks for steps 2 to 8, n >= 1 windows a row, taps >= 1 (other
// cases: 0 rows). T: std::int8_t or std::uint8_t.
template <class T>
inline index_t coded_pick_taps_bytes(const T* x, T* d, std::uint8_t* c, index_t rows, index_t n,
                                     index_t step, index_t length, index_t pitch, index_t first,
                                     index_t taps, index_t dil, std::uint8_t place,
                                     index_t readable, index_t writable) {
    if (n < 1 || taps < 1) return 0;
    // (The blocks held when they are few against the step: a tap then costs a shuffle and
    // an OR a block, where the loads cost two loads and an insert more.)
    const index_t groups = (n + 15) / 16;
    const index_t span = (std::min<index_t>(n, 16) - 1) * step + (taps - 1) * dil + 1;
    const index_t blocks = (span + 15) / 16;
    if (step >= 2 && step <= 8 && taps <= max_held_byte_taps && blocks <= max_held_byte_blocks &&
        blocks <= 2 * step) {
        // (Blocks and, up to max_constant_byte_taps, taps as constants.)
        return with_constant<1, max_held_byte_blocks>(blocks, [&](auto b) {
            return with_byte_taps(taps, [&](auto k) {
                return coded_pick_taps_bytes_held<T, decltype(b)::value, decltype(k)::value>(
                    x, d, c, rows, groups, length, pitch, first, step, taps, dil, place,
                    readable, writable);
            });
        });
    }
    return with_constant<2, 8>(step, [&](auto s) {
        return coded_pick_taps_bytes_step<T, decltype(s)::value>(
            x, d, c, rows, n, length, pitch, first, taps, dil, place, readable, writable);
    });
}

// The rows of coded_edge_picks_bytes, Taps taps (a constant; 0: `taps`): two rows to a
// 256-bit vector (the shuffles work within each half), a last one on its own.
template <class T, int Taps>
inline void coded_edge_picks_bytes_taps(const T* row, T* d, std::uint8_t* c, index_t rows,
                                        index_t width, index_t pitch, const __m256i* mask,
                                        const __m256i* adds, index_t taps, __m256i group) {
    const index_t count = Taps > 0 ? Taps : taps;
    auto combine = [&](auto v, auto half) {
        auto best = bytes_shuffle(v, half(mask[0]));
        decltype(best) code{};  // (zeros)
#pragma GCC unroll 8
        for (index_t t = 1; t < count; ++t) {
            const auto next = max_bytes<T>(best, bytes_shuffle(v, half(mask[t])));
            code = bytes_blend(half(adds[t]), code, bytes_equal(next, best));
            best = next;
        }
        return std::make_pair(best, code);
    };
    auto whole = [](__m256i m) { return m; };
    auto low = [](__m256i m) { return _mm256_castsi256_si128(m); };
    index_t o = 0;
    for (; o + 2 <= rows; o += 2, row += 2 * width, d += 2 * pitch, c += 2 * pitch) {
        const auto [best, code] = combine(two_rows_bytes(row, width), whole);
        const __m256i values = _mm256_blendv_epi8(two_rows_bytes(d, pitch), best, group);
        const __m256i codes = _mm256_blendv_epi8(two_rows_bytes(c, pitch), code, group);
        store_two_rows(d, c, pitch, values, codes);
    }
    if (o < rows) {
        const auto [best, code] = combine(load_bytes<__m128i>(row), low);
        store_bytes(d, _mm_blendv_epi8(load_bytes<__m128i>(d), best, low(group)));
        store_bytes(c, _mm_blendv_epi8(load_bytes<__m128i>(c), code, low(group)));
    }
}

// The last-axis windows first .. last-1 of each of `rows` rows of 1-byte values x (rows
// `width` apart) into d, c (rows `pitch` apart): coded_edge_picks16 for bytes. Every tap of
// the windows lies within sixteen consecutive elements, so for each tap t one byte shuffle of
// the row's 16-byte load gives the lanes of windows at .. at + 15 their tap t (a window of
// fewer taps its last one again, which cannot replace the maximum it is part of), combined as
// coded_taps_bytes combines taps; the lanes are blended into the entries already there, two
// rows to a 256-bit vector. One vector step a tap for a side's edge windows of two rows,
// where their columns went through 32x16 transposes in and out (values and codes). Empty
// windows are left to the caller. Returns false, doing nothing, when the windows do not fit
// so (width or pitch below sixteen, more than sixteen windows, taps spread over more than
// sixteen elements, more than sixteen taps).
template <class T>
inline bool coded_edge_picks_bytes(const T* x, T* d, std::uint8_t* c, index_t rows,
                                   index_t width, index_t pitch, const index_t* begin,
                                   const index_t* count, index_t dil, index_t first,
                                   index_t last, std::uint8_t place) {
    static_assert(sizeof(T) == 1, "1-byte values");
    constexpr index_t most_taps = most_edge_taps;
    index_t from = 0, at = 0, taps = 0;  // (first element read, first entry written)
    if (!edge_picks_fit(width, pitch, begin, count, dil, first, last, 16, &from, &at, &taps)) {
        return false;
    }
    if (taps == 0) return true;  // (empty windows only)
    alignas(16) std::uint8_t masks[most_taps][16];
    alignas(16) std::uint8_t lanes[16];
    edge_pick_masks<1>(begin, count, dil, first, last, from, at, taps, masks, lanes);
    __m256i mask[most_taps], adds[most_taps];
    for (index_t t = 0; t < taps; ++t) {
        mask[t] = _mm256_broadcastsi128_si256(
            _mm_load_si128(reinterpret_cast<const __m128i*>(masks[t])));
        adds[t] = bytes_all<__m256i>(
            static_cast<std::uint8_t>(static_cast<std::uint32_t>(t) * place));
    }
    const __m256i group =
        _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(lanes)));
    with_byte_taps(taps, [&](auto k) {
        coded_edge_picks_bytes_taps<T, decltype(k)::value>(x + from, d + at, c + at, rows, width,
                                                           pitch, mask, adds, taps, group);
    });
    return true;
}

// columns[(k - lo) * rows + o] = x[o * width + k] for k in [lo, hi) and the rows o below
// rows - rows % 32 (returned; the rest is the caller's), 1-byte elements, width >= 16: 32 rows
// by 16 columns at a time through transpose16x16_bytes (rows o and o + 16 in the two halves),
// each row read in bounds (the last block of columns starts at most at width - 16; columns
// outside [lo, hi) are not stored).
template <class T>
inline index_t columns_of_byte_rows(const T* x, T* columns, index_t rows, index_t width,
                                    index_t lo, index_t hi) {
    static_assert(sizeof(T) == 1, "1-byte elements");
    if (width < 16 || hi <= lo) return 0;
    const index_t full = rows - rows % 32;
    for (index_t o = 0; o < full; o += 32) {
        for (index_t k0 = std::min(lo, width - 16);; k0 = std::min(k0 + 16, width - 16)) {
            __m256i m[16];
            for (index_t r = 0; r < 16; ++r) {
                m[r] = _mm256_inserti128_si256(
                    _mm256_castsi128_si256(_mm_loadu_si128(
                        reinterpret_cast<const __m128i*>(x + (o + r) * width + k0))),
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + (o + 16 + r) * width + k0)),
                    1);
            }
            transpose16x16_bytes(m);
            for (index_t e = 0; e < 16; ++e) {
                const index_t k = k0 + e;
                if (k >= lo && k < hi) {
                    _mm256_storeu_si256(reinterpret_cast<__m256i*>(columns + (k - lo) * rows + o),
                                        m[e]);
                }
            }
            if (k0 + 16 >= hi) break;
        }
    }
    return full;
}

// d[r * pitch + j] = from[j * rows + r] for j in [0, n) (n <= 16) and the rows r of the blocks
// of 32 rows whose 16 bytes from d + r * pitch lie below d + limit (the rows done returned;
// the rest is the caller's), 1-byte elements: 16 columns by 32 rows transposed at a time, each
// row's n bytes blended into the 16 it loads and stores back (d must not overlap from).
template <class T>
inline index_t rows_of_byte_columns(const T* from, T* d, index_t rows, index_t pitch,
                                    index_t n, index_t limit) {
    static_assert(sizeof(T) == 1, "1-byte elements");
    if (n > 16 || n < 1) return 0;
    alignas(16) std::uint8_t lanes[16];
    for (index_t k = 0; k < 16; ++k) lanes[k] = k < n ? 0xff : 0;
    const __m128i keep = _mm_load_si128(reinterpret_cast<const __m128i*>(lanes));
    index_t r0 = 0;
    for (; r0 + 32 <= rows && (r0 + 31) * pitch + 16 <= limit; r0 += 32) {
        __m256i m[16];
        for (index_t e = 0; e < 16; ++e) {
            m[e] = e < n ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + e * rows + r0))
                         : _mm256_setzero_si256();
        }
        transpose16x16_bytes(m);
        for (index_t i = 0; i < 32; ++i) {
            const __m128i row = i < 16 ? _mm256_castsi256_si128(m[i])
                                       : _mm256_extracti128_si256(m[i - 16], 1);
            __m128i* to = reinterpret_cast<__m128i*>(d + (r0 + i) * pitch);
            _mm_storeu_si128(to, _mm_blendv_epi8(_mm_loadu_si128(to), row, keep));
        }
    }
    return r0;
}

// index[k] = base + code[k] for k in [0, returned) of [0, n) (the rest is the caller's):
// 8- or 16-bit codes (U) widened to int32 (eight at a time) or int64 (four) indices, the last
// group overlapping the one before (returns n when n is at least a group, else 0); int32
// indices keep the low half of the 64-bit sum, as the scalar cast.
template <class I, class U>
inline index_t codes_plus_base(I* index, const U* code, std::int64_t base, index_t n) {
    static_assert(sizeof(U) == 1 || sizeof(U) == 2, "8- or 16-bit codes");
    constexpr index_t group = sizeof(I) == 4 ? 8 : 4;
    auto store = [&](index_t at) {
        if constexpr (sizeof(I) == 4) {
            __m256i wide;
            if constexpr (sizeof(U) == 1) {
                std::int64_t eight;
                std::memcpy(&eight, code + at, 8);
                wide = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(eight));
            } else {
                wide = _mm256_cvtepu16_epi32(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(code + at)));
            }
            const __m256i sum =
                _mm256_add_epi32(wide, _mm256_set1_epi32(static_cast<std::int32_t>(base)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + at), sum);
        } else {
            __m256i wide;
            if constexpr (sizeof(U) == 1) {
                std::int32_t four;
                std::memcpy(&four, code + at, 4);
                wide = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four));
            } else {
                std::int64_t four;
                std::memcpy(&four, code + at, 8);
                wide = _mm256_cvtepu16_epi64(_mm_cvtsi64_si128(four));
            }
            const __m256i sum = _mm256_add_epi64(wide, _mm256_set1_epi64x(base));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + at), sum);
        }
    };
    if (n < group) return 0;
    index_t k = 0;
    for (; k + group <= n; k += group) store(k);
    if (k < n) store(n - group);
    return n;
}

}  // namespace simd
}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif  // OVPOOL_CORE_HAVE_AVX2
#endif
