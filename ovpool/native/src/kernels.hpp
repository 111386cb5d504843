// The kernel interface of the extension: plain data in, a job out.
//
// The kernels come from ovpool's C++ core (core/jobs.hpp), compiled twice: kernels_isa.cpp is
// built once as the baseline and once with -mavx2 -mfma -mf16c (OVPOOL_CORE_ISA=avx2). This
// header includes no core header, so the op code never sees either ISA; make_job picks the build the CPU can run, and run_job runs a job's items on OpenVINO's
// threads (TBB), never OpenMP.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ovpool {
namespace native {

// Storage types of the kernels, one per OpenVINO element type the ops accept.
enum class Storage { f32, f16, bf16, f64, i8, u8, i32, i64 };

// What every job takes: the data, the plan's packed window table, the worker count.
struct JobArgs {
    Storage storage;
    const void* x;
    void* out;
    std::ptrdiff_t planes;
    const std::ptrdiff_t* packed;
    int workers;
};

// The plan's divisors in every form (core/rules.hpp's WindowPlan).
struct AvgArgs : JobArgs {
    const std::int64_t* divisor;
    const double* divisor_real;
    const float* real32;
    const float* divisor32;
    const float* inverse32;
    bool small_divisors;
};

struct MaxArgs : JobArgs {
    std::int64_t* index64;  // at most one of index64 / index32 is non-null
    std::int32_t* index32;
    std::int64_t plane_modulus;
    std::int64_t offset_modulus;
    double empty_value;
};

// A core job (AvgJob<S> / MaxJob<S>) behind a virtual interface.
class Job {
public:
    virtual ~Job();
    virtual std::ptrdiff_t items() const = 0;
    virtual void run(std::ptrdiff_t item, int worker) const noexcept = 0;
};

std::unique_ptr<Job> make_job(const AvgArgs& args);
std::unique_ptr<Job> make_job(const MaxArgs& args);

// Runs every item of `job` on `workers` OpenVINO threads (workers <= 1: on the caller).
void run_job(const Job& job, int workers);

// How many workers a pooling that reads and writes `bytes` bytes gets: at most OpenVINO's
// thread count, one per core::bytes_per_worker bytes (core/threads.hpp, the rule ovpool's Python
// side follows too: below that, waking threads costs more than it saves). Jobs run on no more
// workers than they have items.
int workers_for(std::int64_t bytes);

// "avx2" or "baseline": the kernel build this CPU runs.
const char* kernel_isa();

// One set of factories per ISA build (defined in kernels_isa.cpp).
namespace baseline {
std::unique_ptr<Job> make_job(const AvgArgs& args);
std::unique_ptr<Job> make_job(const MaxArgs& args);
}  // namespace baseline
namespace avx2 {
std::unique_ptr<Job> make_job(const AvgArgs& args);
std::unique_ptr<Job> make_job(const MaxArgs& args);
}  // namespace avx2

}  // namespace native
}  // namespace ovpool
