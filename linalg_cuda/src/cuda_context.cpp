#include "linalg_cuda/cuda_context.h"

#include "linalg_cuda/cuda_check.h"

namespace linalg_cuda {

CudaContext::CudaContext() {
  int device = 0;
  LINALG_CUDA_CHECK(cudaGetDevice(&device));
  LINALG_CUDA_CHECK(cudaGetDeviceProperties(&properties_, device));
  LINALG_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  try {
    LINALG_CUDA_CHECK(cublasCreate(&cublas_));
    LINALG_CUDA_CHECK(cublasSetStream(cublas_, stream_));
    LINALG_CUDA_CHECK(cusparseCreate(&cusparse_));
    LINALG_CUDA_CHECK(cusparseSetStream(cusparse_, stream_));
  } catch (...) {
    if (cublas_) cublasDestroy(cublas_);
    cudaStreamDestroy(stream_);
    throw;
  }
}

CudaContext::~CudaContext() {
  // Destructors must not throw; at process exit the driver may already be gone, so errors are ignored.
  if (cusparse_) cusparseDestroy(cusparse_);
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaContext::synchronize() const { LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

CudaContext& thread_context() {
  thread_local CudaContext context;
  return context;
}

}  // namespace linalg_cuda
