#include "device_upload.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace ceres_cuda::detail {

void upload_bytes(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  if (bytes <= kStagedUploadBytes) {
    // Freed at once: the cache hands the block out again only after the device has run this copy.
    linalg_cuda::PinnedBuffer staging(bytes);
    std::memcpy(staging.data(), host, bytes);
    LINALG_CUDA_CHECK(cudaMemcpyAsync(device, staging.data(), bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  // Pieces through two page-locked buffers in turn: the threads copy one piece in while the device
  // copies the other out, each buffer refilled once its event says its last copy has run.
  constexpr int kBuffers = 2;
  linalg_cuda::PinnedBuffer staging[kBuffers] = {linalg_cuda::PinnedBuffer(kStagedUploadBytes),
                                                 linalg_cuda::PinnedBuffer(kStagedUploadBytes)};
  cudaEvent_t done[kBuffers] = {nullptr, nullptr};
  for (cudaEvent_t& e : done) LINALG_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  const auto* from = static_cast<const char*>(host);
  auto* to = static_cast<char*>(device);
  cudaError_t status = cudaSuccess;
  for (std::size_t offset = 0, piece = 0; offset < bytes && status == cudaSuccess; offset += kStagedUploadBytes, ++piece) {
    const int b = static_cast<int>(piece % kBuffers);
    const std::size_t n = std::min(kStagedUploadBytes, bytes - offset);
    if (piece >= kBuffers && (status = cudaEventSynchronize(done[b])) != cudaSuccess) break;
    char* buffer = staging[b].as<char>();
    const long parts = omp_get_max_threads();
#pragma omp parallel for schedule(static)
    for (long p = 0; p < parts; ++p) {
      const std::size_t begin = n * p / parts, end = n * (p + 1) / parts;
      std::memcpy(buffer + begin, from + offset + begin, end - begin);
    }
    status = cudaMemcpyAsync(to + offset, buffer, n, cudaMemcpyHostToDevice, stream);
    if (status == cudaSuccess) status = cudaEventRecord(done[b], stream);
  }
  for (cudaEvent_t e : done) cudaEventDestroy(e);
  LINALG_CUDA_CHECK(status);
}

}  // namespace ceres_cuda::detail
