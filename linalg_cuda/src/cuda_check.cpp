#include "linalg_cuda/cuda_check.h"

#include <string>

#include "linalg_cuda/errors.h"

namespace linalg_cuda::detail {
namespace {

std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " at " + file + ":" + std::to_string(line);
}

}  // namespace

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

}  // namespace linalg_cuda::detail
