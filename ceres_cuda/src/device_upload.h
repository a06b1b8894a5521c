#pragma once
// A host array's copy on the device, queued on a stream, for the GPU engines' set-up: the caller keeps
// the host array alive until the stream has run the copy. One element at least, so that a kernel
// argument always points somewhere.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/device_buffer.h"

namespace ceres_cuda::detail {

// Arrays up to this size go through page-locked memory from the library's cache: a copy from pageable
// memory first waits for everything queued on the stream, and the driver stages it in pieces. Larger
// arrays (millions of residuals) are copied from where they are rather than copied twice.
constexpr std::size_t kStagedUploadBytes = std::size_t(8) << 20;

template <typename T>
linalg_cuda::DeviceBuffer upload_array(const T* host, std::size_t n, cudaStream_t stream) {
  linalg_cuda::DeviceBuffer buffer(std::max<std::size_t>(1, n) * sizeof(T));
  const std::size_t bytes = n * sizeof(T);
  if (bytes > kStagedUploadBytes) {
    LINALG_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), host, bytes, cudaMemcpyHostToDevice, stream));
  } else if (bytes > 0) {
    // Freed at once: the cache hands the block out again only after the device has run this copy.
    linalg_cuda::PinnedBuffer staging(bytes);
    std::memcpy(staging.data(), host, bytes);
    LINALG_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), staging.data(), bytes, cudaMemcpyHostToDevice, stream));
  }
  return buffer;
}

template <typename T>
linalg_cuda::DeviceBuffer upload_array(const std::vector<T>& host, cudaStream_t stream) {
  return upload_array(host.data(), host.size(), stream);
}

}  // namespace ceres_cuda::detail
