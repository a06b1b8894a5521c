#pragma once
// A kernel that waits on the GPU before it writes, for tests of what must wait for the device (the
// memory cache's reuse of a block that a kernel still writes).
#include <cuda_runtime_api.h>

#include <cstddef>

namespace cache_test {

// Queues on `stream` a kernel that spins for about `microseconds` of GPU clock, then sets p[0, n) to
// `value`.
void launch_late_write(double* p, std::size_t n, double value, double microseconds, cudaStream_t stream);

}  // namespace cache_test
