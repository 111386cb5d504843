// Picks the kernel build the CPU runs and runs jobs on OpenVINO's threads.
#include "kernels.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/threads.hpp"
#include "openvino/core/parallel.hpp"

namespace ovpool {
namespace native {

Job::~Job() = default;

namespace {

bool cpu_has_avx2() {
#if defined(OVPOOL_NATIVE_HAVE_AVX2_BUILD) && (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c");
#else
    return false;
#endif
}

// OVPOOL_NATIVE_ISA=baseline in the environment runs the baseline kernels on an AVX2 CPU too
// (the tests use it to check both builds).
bool choose_avx2() {
    const char* forced = std::getenv("OVPOOL_NATIVE_ISA");
    if (forced && std::strcmp(forced, "baseline") == 0)
        return false;
    return cpu_has_avx2();
}

const bool use_avx2 = choose_avx2();

template <class Args>
std::unique_ptr<Job> make_for_cpu(const Args& args) {
#ifdef OVPOOL_NATIVE_HAVE_AVX2_BUILD
    if (use_avx2)
        return avx2::make_job(args);
#endif
    return baseline::make_job(args);
}

}  // namespace

const char* kernel_isa() { return use_avx2 ? "avx2" : "baseline"; }

std::unique_ptr<Job> make_job(const AvgArgs& args) { return make_for_cpu(args); }
std::unique_ptr<Job> make_job(const MaxArgs& args) { return make_for_cpu(args); }

int workers_for(std::int64_t bytes) {
    return core::workers_for_bytes(bytes, parallel_get_max_threads());
}

void run_job(const Job& job, int workers) {
    const std::ptrdiff_t items = job.items();
    if (workers > items) workers = static_cast<int>(items);
    if (workers <= 1 || items <= 1) {
        for (std::ptrdiff_t i = 0; i < items; ++i)
            job.run(i, 0);
        return;
    }
    // Contiguous runs of items per worker; `worker` indexes the job's scratch, and each worker
    // index runs on one thread at a time.
    ov::parallel_nt(workers, [&](int ithr, int nthr) {
        std::ptrdiff_t begin = 0, end = 0;
        ov::splitter(items, nthr, ithr, begin, end);
        for (std::ptrdiff_t i = begin; i < end; ++i)
            job.run(i, ithr);
    });
}

}  // namespace native
}  // namespace ovpool
