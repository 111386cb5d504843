// A tiny program against the C++ core alone (no Python): one average and one max job per
// case, with hand-worked results. Built and run by tests/test_core_cpp.py, once for the
// baseline and once for the AVX2 build (-DOVPOOL_CORE_ISA=avx2 -mavx2 -mfma -mf16c).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/avg_blocks.hpp"
#include "core/jobs.hpp"
#include "core/rules.hpp"

namespace core = ovpool::core;
using core::index_t;

static int failures = 0, checks = 0;

template <class T>
static void expect_equal(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
    ++checks;
    if (got.size() == want.size() &&
        (got.empty() || std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0)) {
        return;
    }
    ++failures;
    std::printf("FAIL %s:", what);
    for (const T& v : got) std::printf(" %g", static_cast<double>(v));
    std::printf("\n");
}

// Every item of a job, spread over its workers (as that many threads would take them).
template <class Job> static void run_all(const Job& job, int workers) {
    for (index_t item = 0; item < job.items(); ++item) {
        job.run(item, static_cast<int>(item % workers));
    }
}

// 3x3 planes, 2x2 windows, stride 1, no padding: outputs 2x2, every window 4 taps.
static const std::vector<index_t> k2_tables = {
    2, 6,                 // naxes, scratch (largest intermediate: 2 x 3 after the first pass)
    3, 3, 2, 2,           // length, output
    1, 1, 0, 2,           // dilation, offset of each axis's windows in begin/count
    1, 1, 0, 2, 0, 2,     // stride, interior [lo, hi) per axis
    0, 1, 0, 1,           // begin
    2, 2, 2, 2};          // count

// 3x3 planes, 3x3 windows, stride 1, one element of padding per side ("same"): the AVX2
// build takes its dedicated float32 plane kernel for these.
static const std::vector<index_t> same_tables = {
    2, 9, 3, 3, 3, 3, 1, 1, 0, 3, 1, 1, 1, 2, 1, 2,
    0, 0, 1, 0, 0, 1,
    2, 3, 2, 2, 3, 2};

// A plan's divisors in every form (rules.hpp's set_divisor), as a job takes them; they point
// into `plan`.
static core::Divisors plan_divisors(core::WindowPlan& plan, std::vector<std::int64_t> divisor) {
    core::detail::set_divisor(plan, std::move(divisor));
    core::Divisors d{plan.divisor.data(), plan.divisor_real.data()};
    d.small_divisors = plan.small_divisors;
    d.real32 = plan.real32.data();
    d.divisor32 = plan.divisor32.data();
    d.inverse32 = plan.inverse32.data();
    return d;
}

static void test_average() {
    std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    std::vector<float> out(8);
    core::WindowPlan k2_plan;
    const core::Divisors k2_divisors = plan_divisors(k2_plan, {4, 4, 4, 4});
    core::AvgJob<float> job(x.data(), out.data(), 2, k2_tables.data(), k2_divisors, 2);
    run_all(job, 2);
    expect_equal("avg float32 2x2", out, {3, 4, 6, 7, 3, 4, 6, 7});

    // Integer averages round half to even: sums 12, 16, 28, 32 + odd offsets.
    std::vector<std::int32_t> xi = {1, 2, 3, 4, 5, 6, 7, 8, 10};  // windows: 12, 16, 24, 29
    std::vector<std::int32_t> outi(4);
    core::AvgJob<std::int32_t> jobi(xi.data(), outi.data(), 1, k2_tables.data(), k2_divisors, 1);
    run_all(jobi, 1);
    expect_equal("avg int32 2x2", outi, {3, 4, 6, 7});  // 3, 4, 6, 7.25

    std::vector<float> xs = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    std::vector<float> outs(9);
    core::WindowPlan same_plan;
    core::AvgJob<float> jobs(xs.data(), outs.data(), 1, same_tables.data(),
                             plan_divisors(same_plan, {4, 6, 4, 6, 9, 6, 4, 6, 4}), 2);
    run_all(jobs, 2);
    expect_equal("avg float32 3x3 same", outs, {3, 3.5f, 4, 4.5f, 5, 5.5f, 6, 6.5f, 7});
}

static void test_max() {
    const float nan = std::nanf("");
    std::vector<float> x = {1, 5, 5, nan, 2, 0, 5, nan, 3, 1, 5, 5, nan, 2, 0, 5, nan, 3};
    std::vector<float> out(8);
    std::vector<std::int64_t> index(8);
    // Ties go to the smaller offset, NaN loses to any number; plane 1's indices start at 9.
    core::MaxJob<float> job(x.data(), out.data(), 2, k2_tables.data(), index.data(), nullptr,
                            2, 9, -3.4e38, 2);
    run_all(job, 2);
    expect_equal("max float32 values", out, {5, 5, 5, 3, 5, 5, 5, 3});
    expect_equal("max float32 indices", index, {1, 1, 6, 8, 10, 10, 15, 17});

    std::vector<std::int32_t> index32(8);
    core::MaxJob<float> job32(x.data(), out.data(), 2, k2_tables.data(), nullptr,
                              index32.data(), 1, 9, -3.4e38, 1);
    run_all(job32, 1);
    expect_equal("max float32 int32 indices", index32, {1, 1, 6, 8, 1, 1, 6, 8});

    // float16 storage, values only: 1, 5, 5, NaN, 2, 0, 5, NaN, 3.
    std::vector<std::uint16_t> h = {0x3c00, 0x4500, 0x4500, 0x7e00, 0x4000, 0x0000,
                                    0x4500, 0x7e00, 0x4200};
    std::vector<std::uint16_t> outh(4);
    core::MaxJob<core::f16> jobh(reinterpret_cast<const core::f16*>(h.data()),
                                 reinterpret_cast<core::f16*>(outh.data()), 1, k2_tables.data(),
                                 nullptr, nullptr, 1, 9, -65504.0, 1);
    run_all(jobh, 1);
    expect_equal("max float16 values", outh, {0x4500, 0x4500, 0x4500, 0x4200});
}

static void test_conversions() {
    // The float16 conversion of this build against the portable one, every bit pattern
    // (NaN payloads included) and a sweep of float32 values.
    std::vector<std::uint32_t> bad;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        float a = core::f16_to_f32(static_cast<std::uint16_t>(b));
        float p = core::f16_to_f32_portable(static_cast<std::uint16_t>(b));
        if (std::memcmp(&a, &p, 4) != 0) bad.push_back(b);
    }
    for (std::uint64_t u = 0; u < (1ull << 32); u += 9973) {
        float f;
        std::uint32_t bits = static_cast<std::uint32_t>(u);
        std::memcpy(&f, &bits, 4);
        if (core::f32_to_f16(f) != core::f32_to_f16_portable(f)) bad.push_back(bits);
    }
    expect_equal("float16 conversions", bad, {});
}

// The rounded integer average (half to even) against the exact 128-bit rule, on sums near
// ties and near the fast paths' limits (int32 for the vector path, 2^51 for the scalar one),
// through write_averages (eight at a time in the AVX2 build) and divide_round_even.
static void test_integer_division() {
    std::vector<long long> sums;
    std::vector<std::int64_t> divisor;
    const long long edges[] = {0, 1, 2, 3, 5, 7, 2147483647LL, 2147483648LL, 1LL << 40,
                               (1LL << 51) - 1, 1LL << 51, 1LL << 52, 1LL << 60};
    const std::int64_t divisors[] = {0, 1, 2, 3, 4, 6, 7, 8, 9, 12, 49, 343, 1000003};
    for (long long base : edges) {
        for (std::int64_t d : divisors) {
            for (long long delta = -3; delta <= 3; ++delta) {
                for (long long sign : {1LL, -1LL}) {
                    // Around base and around the ties base * d +- d / 2.
                    sums.push_back(sign * (base + delta));
                    divisor.push_back(d);
                    sums.push_back(sign * (base * (d > 0 ? d : 1) + d / 2 + delta));
                    divisor.push_back(d);
                }
            }
        }
    }
    unsigned long long state = 12345;
    for (int i = 0; i < 20000; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        long long span = (i % 2) ? 2000000LL : 4000000000LL;
        sums.push_back(static_cast<long long>((state >> 11) % span) - span / 2);
        divisor.push_back(static_cast<std::int64_t>((state >> 3) % 50));
    }
    std::vector<double> real(divisor.size());
    for (std::size_t i = 0; i < divisor.size(); ++i) {
        real[i] = divisor[i] ? static_cast<double>(divisor[i]) : HUGE_VAL;
    }
    core::Divisors d{divisor.data(), real.data()};
    std::vector<long long> want(sums.size()), scalar(sums.size()), written(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i) {
        want[i] = divisor[i] ? static_cast<long long>(core::divide_round_even_wide(sums[i], divisor[i]))
                             : 0;
        scalar[i] = core::divide_round_even(sums[i], divisor[i], real[i]);
    }
    core::write_averages(written.data(), sums.data(), static_cast<index_t>(sums.size()), d);
    expect_equal("divide_round_even", scalar, want);
    // int32 outputs of int32-sized sums (the vector path's case).
    std::vector<std::int32_t> out32(sums.size()), want32(sums.size());
    core::write_averages(out32.data(), sums.data(), static_cast<index_t>(sums.size()), d);
    for (std::size_t i = 0; i < sums.size(); ++i) want32[i] = static_cast<std::int32_t>(want[i]);
    expect_equal("write_averages int32", out32, want32);
    expect_equal("write_averages int64", written, want);
}

// Eight rows of four int8 elements, one window each (taps 0..1 of a k3 window with one
// element of left padding, stride 4): the AVX2 build sums them transposed, eight rows at a
// time. Its stores must stay within the group's 8 * out_len sums: the sums after them are
// guards that must come out untouched.
static void test_short_rows_stay_in_their_group() {
#if OVPOOL_CORE_HAVE_AVX2
    std::vector<std::int8_t> rows(8 * 4 + 8);  // (eight more: a row is read eight wide)
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int8_t>(i * 7 - 60);
    const index_t begin[] = {0, 0, 0}, count[] = {2, 2, 2};
    for (index_t out_len : {1, 2, 3}) {
        std::vector<std::int32_t> sums(8 * out_len + 8, -12345), want(sums);
        core::OVPOOL_CORE_ISA::simd::last_axis_rows8(rows.data(), sums.data(), 4, out_len,
                                                     begin, count, 1);
        for (index_t r = 0; r < 8; ++r) {
            for (index_t j = 0; j < out_len; ++j) {
                // (every window of this test takes the same two taps of its row)
                want[r * out_len + j] = rows[r * 4] + rows[r * 4 + 1];
            }
        }
        expect_equal("last_axis_rows8 stays within its rows", sums, want);
    }
#endif
}

// The int16 plane blocks' transpose of up to sixteen int8 / uint8 planes of n elements into
// lanes (avg_blocks.hpp's transpose_into_lanes; with AVX2, whole blocks of 32 elements or
// more go in tiles of 32, the last one overlapping, eight-element tiles below 32): every lane
// the element it stands for, sign- or zero-extended, and the lanes past `count` zeros, for
// every n from 1 to 99 and full and part-empty blocks.
template <class S>
static void test_transpose_into_lanes() {
    std::uint32_t state = 12345;
    for (index_t n = 1; n < 100; ++n) {
        for (index_t count : {16, 15, 8, 3}) {
            std::vector<S> x(static_cast<std::size_t>(count * n));
            for (S& v : x) v = static_cast<S>((state = state * 1103515245u + 12345u) >> 16);
            std::vector<std::int16_t> got(static_cast<std::size_t>(16 * n), 777), want(got);
            core::OVPOOL_CORE_ISA::transpose_into_lanes<16>(x.data(), n, count, got.data());
            for (index_t i = 0; i < n; ++i) {
                for (index_t p = 0; p < 16; ++p) {
                    want[i * 16 + p] = p < count ? static_cast<std::int16_t>(x[p * n + i]) : 0;
                }
            }
            expect_equal("transpose_into_lanes", got, want);
        }
    }
}

int main() {
    test_transpose_into_lanes<std::int8_t>();
    test_transpose_into_lanes<std::uint8_t>();
    test_short_rows_stay_in_their_group();
    test_average();
    test_max();
    test_conversions();
    test_integer_division();
    std::printf("%s: %d checks, %d failures (have_avx2=%d)\n", failures ? "FAILED" : "ok",
                checks, failures, OVPOOL_CORE_HAVE_AVX2);
    return failures ? 1 : 0;
}
