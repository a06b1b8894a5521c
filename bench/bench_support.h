#pragma once
// What every benchmark needs: the device's copy bandwidth (the floor's denominator), medians, timers.
#include <algorithm>
#include <chrono>
#include <vector>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/internal/seconds_since.h"

namespace bench {

using linalg_cuda::detail::seconds_since;

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Device-to-device copy bandwidth of a 1 GiB buffer, counting bytes read plus bytes written (GB/s);
// median of 10 copies after 2 warm-ups, timed with events.
inline double copy_bandwidth_gbs() {
  const std::size_t bytes = std::size_t(1) << 30;
  linalg_cuda::DeviceBuffer src(bytes), dst(bytes);
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  LINALG_CUDA_CHECK(cudaMemsetAsync(src.data(), 1, bytes, stream));
  cudaEvent_t start, stop;
  LINALG_CUDA_CHECK(cudaEventCreate(&start));
  LINALG_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> samples;
  for (int r = 0; r < 12; ++r) {
    LINALG_CUDA_CHECK(cudaEventRecord(start, stream));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    LINALG_CUDA_CHECK(cudaEventRecord(stop, stream));
    LINALG_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    LINALG_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r >= 2) samples.push_back(2.0 * bytes / (ms * 1e-3) / 1e9);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(samples);
}

// Host-to-device bandwidth from pinned memory (GB/s), 256 MiB copies, median of 8 after 2 warm-ups.
inline double host_to_device_bandwidth_gbs() {
  const std::size_t bytes = std::size_t(1) << 28;
  linalg_cuda::PinnedBuffer src(bytes);
  linalg_cuda::DeviceBuffer dst(bytes);
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  std::vector<double> samples;
  for (int r = 0; r < 10; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    LINALG_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyHostToDevice, stream));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (r >= 2) samples.push_back(bytes / seconds_since(t0) / 1e9);
  }
  return median(samples);
}

}  // namespace bench
