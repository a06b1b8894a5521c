#pragma once
// The stream and library handles the project's GPU code runs on. Every thread gets its own
// context (one non-blocking stream, one cuBLAS and one cuSPARSE handle bound to it), created on
// first use and kept for the thread's life, so no call creates handles or streams in a hot path.
// All operations of linalg_cuda on a thread are ordered on that thread's stream; transfers to the
// host synchronise it. Hand device data to another thread only after synchronize().
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

namespace linalg_cuda {

class CudaContext {
 public:
  CudaContext();
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cusparseHandle_t cusparse() const { return cusparse_; }
  // Properties of the current device, read once.
  const cudaDeviceProp& device_properties() const { return properties_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cusparseHandle_t cusparse_ = nullptr;
  cudaDeviceProp properties_{};
};

// The calling thread's context (created on first call; throws CudaError without a device).
CudaContext& thread_context();

}  // namespace linalg_cuda
