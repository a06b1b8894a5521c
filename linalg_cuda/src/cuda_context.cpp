#include "linalg_cuda/cuda_context.h"

#include "linalg_cuda/cuda_check.h"

namespace linalg_cuda {

CudaContext::CudaContext() {
  int device = 0;
  LINALG_CUDA_CHECK(cudaGetDevice(&device));
  LINALG_CUDA_CHECK(cudaGetDeviceProperties(&properties_, device));
  LINALG_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

cublasHandle_t CudaContext::cublas() const {
  if (!cublas_) {
    cublasHandle_t handle = nullptr;
    LINALG_CUDA_CHECK(cublasCreate(&handle));
    if (const cublasStatus_t status = cublasSetStream(handle, stream_); status != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(handle);
      LINALG_CUDA_CHECK(status);
    }
    cublas_ = handle;
  }
  return cublas_;
}

cusparseHandle_t CudaContext::cusparse() const {
  if (!cusparse_) {
    cusparseHandle_t handle = nullptr;
    LINALG_CUDA_CHECK(cusparseCreate(&handle));
    if (const cusparseStatus_t status = cusparseSetStream(handle, stream_); status != CUSPARSE_STATUS_SUCCESS) {
      cusparseDestroy(handle);
      LINALG_CUDA_CHECK(status);
    }
    cusparse_ = handle;
  }
  return cusparse_;
}

cusolverDnHandle_t CudaContext::cusolver_dense() const {
  if (!cusolver_dense_) {
    cusolverDnHandle_t handle = nullptr;
    LINALG_CUDA_CHECK(cusolverDnCreate(&handle));
    if (const cusolverStatus_t status = cusolverDnSetStream(handle, stream_); status != CUSOLVER_STATUS_SUCCESS) {
      cusolverDnDestroy(handle);
      LINALG_CUDA_CHECK(status);
    }
    cusolver_dense_ = handle;
  }
  return cusolver_dense_;
}

CudaContext::~CudaContext() {
  // Destructors must not throw; at process exit the driver may already be gone, so errors are ignored.
  if (cusolver_dense_) cusolverDnDestroy(cusolver_dense_);
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
