// The core's jobs for every storage type, compiled once per ISA (OVPOOL_CORE_ISA = baseline or
// avx2, set by CMakeLists.txt). Only core headers are included here: inline functions of other
// libraries must not be compiled with AVX2 flags (the baseline object is linked first, so the
// linker keeps its copies of shared inline functions).
#include <new>

#include "core/jobs.hpp"
#include "core/types.hpp"
#include "kernels.hpp"

namespace ovpool {
namespace native {
namespace OVPOOL_CORE_ISA {
namespace {

namespace core = ::ovpool::core;

core::Divisors plan_divisors(const AvgArgs& a) {
    core::Divisors d;
    d.count = a.divisor;
    d.real = a.divisor_real;
    d.real32 = a.real32;
    d.divisor32 = a.divisor32;
    d.inverse32 = a.inverse32;
    d.small_divisors = a.small_divisors;
    return d;
}

template <class S>
class AvgJobImpl final : public Job {
public:
    explicit AvgJobImpl(const AvgArgs& a)
        : m_job(static_cast<const S*>(a.x), static_cast<S*>(a.out), a.planes, a.packed,
                plan_divisors(a), a.workers) {}
    std::ptrdiff_t items() const override { return m_job.items(); }
    void run(std::ptrdiff_t item, int worker) const noexcept override { m_job.run(item, worker); }

private:
    core::AvgJob<S> m_job;
};

template <class S>
class MaxJobImpl final : public Job {
public:
    explicit MaxJobImpl(const MaxArgs& a)
        : m_job(static_cast<const S*>(a.x), static_cast<S*>(a.out), a.planes, a.packed, a.index64,
                a.index32, a.plane_modulus, a.offset_modulus, a.empty_value, a.workers) {}
    std::ptrdiff_t items() const override { return m_job.items(); }
    void run(std::ptrdiff_t item, int worker) const noexcept override { m_job.run(item, worker); }

private:
    core::MaxJob<S> m_job;
};

template <template <class> class Impl, class Args>
std::unique_ptr<Job> make(const Args& args) {
    switch (args.storage) {
    case Storage::f32: return std::unique_ptr<Job>(new Impl<float>(args));
    case Storage::f16: return std::unique_ptr<Job>(new Impl<core::f16>(args));
    case Storage::bf16: return std::unique_ptr<Job>(new Impl<core::bf16>(args));
    case Storage::f64: return std::unique_ptr<Job>(new Impl<double>(args));
    case Storage::i8: return std::unique_ptr<Job>(new Impl<std::int8_t>(args));
    case Storage::u8: return std::unique_ptr<Job>(new Impl<std::uint8_t>(args));
    case Storage::i32: return std::unique_ptr<Job>(new Impl<std::int32_t>(args));
    case Storage::i64: return std::unique_ptr<Job>(new Impl<std::int64_t>(args));
    }
    return nullptr;
}

}  // namespace

std::unique_ptr<Job> make_job(const AvgArgs& args) { return make<AvgJobImpl>(args); }
std::unique_ptr<Job> make_job(const MaxArgs& args) { return make<MaxJobImpl>(args); }

}  // namespace OVPOOL_CORE_ISA
}  // namespace native
}  // namespace ovpool
