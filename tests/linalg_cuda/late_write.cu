#include "late_write.h"

#include "linalg_cuda/cuda_check.h"

namespace cache_test {
namespace {

__global__ void late_write_kernel(double* p, std::size_t n, double value, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) p[i] = value;
}

}  // namespace

void launch_late_write(double* p, std::size_t n, double value, double microseconds, cudaStream_t stream) {
  int device = 0, khz = 0;
  LINALG_CUDA_CHECK(cudaGetDevice(&device));
  LINALG_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  late_write_kernel<<<1, 256, 0, stream>>>(p, n, value, static_cast<long long>(microseconds * 1e-3 * khz));
  LINALG_CUDA_CHECK_LAUNCH();
}

}  // namespace cache_test
