#pragma once
// A host array's copy on the device, queued on a stream, for the GPU engines' set-up. One element at
// least, so that a kernel argument always points somewhere.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/device_buffer.h"

namespace ceres_cuda::detail {

// Copies go through page-locked memory from the library's cache: a copy from pageable memory first
// waits for everything queued on the stream, and the driver stages it in small pieces on one thread.
// Arrays up to this size are staged whole; larger ones (millions of residuals) in pieces of this size
// that the host's threads fill while the device copies the previous piece out.
constexpr std::size_t kStagedUploadBytes = std::size_t(8) << 20;

// `bytes` from host to device memory, queued on the stream; the host memory may go when it returns.
void upload_bytes(void* device, const void* host, std::size_t bytes, cudaStream_t stream);

template <typename T>
linalg_cuda::DeviceBuffer upload_array(const T* host, std::size_t n, cudaStream_t stream) {
  linalg_cuda::DeviceBuffer buffer(std::max<std::size_t>(1, n) * sizeof(T));
  upload_bytes(buffer.data(), host, n * sizeof(T), stream);
  return buffer;
}

template <typename T>
linalg_cuda::DeviceBuffer upload_array(const std::vector<T>& host, cudaStream_t stream) {
  return upload_array(host.data(), host.size(), stream);
}

}  // namespace ceres_cuda::detail
