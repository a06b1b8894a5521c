#include "linalg_cuda/cuda_context.h"

#include <cstddef>

#include "linalg_cuda/cuda_check.h"

namespace linalg_cuda {

CudaContext::CudaContext() {
  int device = 0;
  LINALG_CUDA_CHECK(cudaGetDevice(&device));
  LINALG_CUDA_CHECK(cudaGetDeviceProperties(&properties_, device));
  LINALG_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

namespace {

// Creating a handle allocates device memory, which a stream capture in the global or thread-local
// mode forbids on its thread: a handle first asked for while the thread captures (a CG's device
// loop around a user's operator) is made as in relaxed mode, outside the graph.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

// cuBLAS' recommended workspace: 32 MiB on Hopper and later, 4 MiB before (cuBLAS guide,
// cublasSetWorkspace).
std::size_t cublas_workspace_bytes(const cudaDeviceProp& properties) {
  return std::size_t(properties.major >= 9 ? 32 : 4) << 20;
}

}  // namespace

cublasHandle_t CudaContext::cublas() const {
  if (!cublas_) {
    // A workspace of the handle's own: without one, cuBLAS allocates its workspace stream-ordered
    // while a stream is captured, and a graph with allocation nodes cannot be the body of a
    // conditional node (the CG's device loop). Zeroed once, outside any capture of stream_, so
    // that no kernel reads unset memory.
    const RelaxedCaptureMode relaxed;
    const std::size_t workspace_bytes = cublas_workspace_bytes(properties_);
    if (!cublas_workspace_) {
      cublas_workspace_ = detail::device_malloc_uncached(workspace_bytes, "the cuBLAS workspace");
      LINALG_CUDA_CHECK(cudaMemset(cublas_workspace_, 0, workspace_bytes));
    }
    cublasHandle_t handle = nullptr;
    LINALG_CUDA_CHECK(cublasCreate(&handle));
    cublasStatus_t status = cublasSetStream(handle, stream_);
    if (status == CUBLAS_STATUS_SUCCESS) status = cublasSetWorkspace(handle, cublas_workspace_, workspace_bytes);
    if (status != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(handle);
      LINALG_CUDA_CHECK(status);
    }
    cublas_ = handle;
  }
  return cublas_;
}

cusparseHandle_t CudaContext::cusparse() const {
  if (!cusparse_) {
    const RelaxedCaptureMode relaxed;
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
    const RelaxedCaptureMode relaxed;
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
  if (cublas_workspace_) cudaFree(cublas_workspace_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaContext::synchronize() const { LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

CudaContext& thread_context() {
  thread_local CudaContext context;
  return context;
}

}  // namespace linalg_cuda
