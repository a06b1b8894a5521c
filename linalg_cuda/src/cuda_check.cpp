#include "linalg_cuda/cuda_check.h"

#include <string>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"

namespace linalg_cuda::detail {
namespace {

std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " at " + file + ":" + std::to_string(line);
}

// cuSOLVER has no function that names its statuses.
const char* cusolver_status_name(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default: return "CUSOLVER_STATUS_OTHER";
  }
}

}  // namespace

void throw_device_memory_error(const std::string& what, std::size_t needed) {
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
  throw DeviceMemoryError(what, needed, free_bytes, total_bytes);
}

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw CudaError("CUDA error " + std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) +
                  ") in " + where(call, file, line));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw CudaError("cuBLAS error " + std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) +
                  ") in " + where(call, file, line));
}

void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line) {
  throw CudaError("cuSPARSE error " + std::string(cusparseGetErrorName(status)) + " (" +
                  cusparseGetErrorString(status) + ") in " + where(call, file, line));
}

void throw_cusolver_error(cusolverStatus_t status, const char* call, const char* file, int line) {
  throw CudaError("cuSOLVER error " + std::string(cusolver_status_name(status)) + " (status " +
                  std::to_string(static_cast<int>(status)) + ") in " + where(call, file, line));
}

}  // namespace linalg_cuda::detail

namespace linalg_cuda {
namespace {

std::string gib(std::size_t bytes) { return detail::readable(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace

DeviceMemoryError::DeviceMemoryError(const std::string& what, std::size_t needed_bytes, std::size_t free_bytes,
                                     std::size_t total_bytes)
    : CudaError(what + ": out of device memory: " + gib(needed_bytes) + " GiB needed, " + gib(free_bytes) + " of " +
                gib(total_bytes) + " GiB free"),
      needed_(needed_bytes),
      free_(free_bytes),
      total_(total_bytes) {}

}  // namespace linalg_cuda
