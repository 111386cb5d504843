// How many threads a pooling call is worth: the one place that decides it, for the Python
// kernels (ovpool/_kernels.pyx) and the native OpenVINO extension alike.
//
// Starting a second thread costs a wake-up, and on a busy machine a wait until the scheduler
// runs it (the call's end waits for every thread): a millisecond or more, against the few
// microseconds a small call takes. So a call gets one worker per bytes_per_worker bytes it
// reads and writes (input, output and indices), at most the caller's thread count; results do
// not depend on the count (see jobs.hpp).
#ifndef OVPOOL_CORE_THREADS_HPP
#define OVPOOL_CORE_THREADS_HPP

#include <algorithm>
#include <cstdint>

#include "config.hpp"

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// Bytes read and written per worker: a call reading and writing 256 KiB or more gets two.
// Measured on the 2-core development machine with nothing else running (float32 28x28
// planes; 3x3 average, 3x3 stride-2 max with int64 indices, adaptive average to 7x7), two
// threads against one: 1.15-1.28x the time at 32 KB of input, 0.6-0.85x at 64 KB in one run
// and 1.06-1.20x in another, 0.5-0.6x from 768 KB in both. (On a machine whose other cores are
// busy a second thread can cost a scheduler tick; a larger size would favour such machines.)
constexpr std::int64_t bytes_per_worker = std::int64_t(1) << 17;

// Workers for a call that reads and writes `bytes` bytes, given at most `most` threads
// (`per_worker`: bytes_per_worker, or another size for tests that run tiny inputs threaded).
inline int workers_for_bytes(std::int64_t bytes, int most,
                             std::int64_t per_worker = bytes_per_worker) {
    std::int64_t workers = std::min<std::int64_t>(most, bytes / std::max<std::int64_t>(1, per_worker));
    return static_cast<int>(std::max<std::int64_t>(1, workers));
}

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
