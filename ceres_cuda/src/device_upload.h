#pragma once
// A host array's copy on the device, queued on a stream, for the GPU engines' set-up: the caller keeps
// the host array alive until the stream has run the copy. One element at least, so that a kernel
// argument always points somewhere.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/device_buffer.h"

namespace ceres_cuda::detail {

template <typename T>
linalg_cuda::DeviceBuffer upload_array(const T* host, std::size_t n, cudaStream_t stream) {
  linalg_cuda::DeviceBuffer buffer(std::max<std::size_t>(1, n) * sizeof(T));
  if (n > 0) LINALG_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  return buffer;
}

template <typename T>
linalg_cuda::DeviceBuffer upload_array(const std::vector<T>& host, cudaStream_t stream) {
  return upload_array(host.data(), host.size(), stream);
}

}  // namespace ceres_cuda::detail
