#pragma once
// The stream and library handles the project's GPU code runs on. Every thread gets its own
// context: one non-blocking stream, created on the thread's first use, and cuBLAS / cuSPARSE /
// cuSOLVER (dense) handles bound to it, created on their first use (code that only launches kernels
// never pays for them; a solver made per solve would pay a handle's creation each time).
// All are kept for the thread's life. Programs that run work on short-lived threads (OMPL's
// Benchmark solves each run on a new thread) pay the stream's creation once per thread.
// All operations of linalg_cuda on a thread are ordered on that thread's stream; transfers to the
// host synchronise it. Hand device data to another thread only after synchronize().
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <cusparse.h>

namespace linalg_cuda {

class CudaContext {
 public:
  CudaContext();
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const;
  cusparseHandle_t cusparse() const;
  cusolverDnHandle_t cusolver_dense() const;
  // Properties of the current device, read once.
  const cudaDeviceProp& device_properties() const { return properties_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
  mutable cublasHandle_t cublas_ = nullptr;
  mutable void* cublas_workspace_ = nullptr;  // the cuBLAS handle's workspace (device memory)
  mutable cusparseHandle_t cusparse_ = nullptr;
  mutable cusolverDnHandle_t cusolver_dense_ = nullptr;
  cudaDeviceProp properties_{};
};

// The calling thread's context (created on first call; throws CudaError without a device).
CudaContext& thread_context();

}  // namespace linalg_cuda
