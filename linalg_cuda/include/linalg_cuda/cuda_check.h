#pragma once
// Checking of CUDA runtime, cuBLAS, cuSPARSE and cuSOLVER calls: the shared plumbing every module's .cu/.cpp
// files use. A failed call throws linalg_cuda::CudaError naming the call, the place and the reason.
// Plain C++ headers only (no kernels), so it compiles with a host compiler too.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolver_common.h>
#include <cusparse.h>

#include <cstddef>
#include <string>

namespace linalg_cuda::detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cusolver_error(cusolverStatus_t status, const char* call, const char* file, int line);

// Device memory through the library's cache (memory_cache.h), freed with device_free: throws
// DeviceMemoryError (what: the caller's description, e.g. "DeviceVector of 1e9 doubles") when the
// device has not the memory, CudaError on any other failure; null for 0 bytes.
void* device_malloc(std::size_t bytes, const char* what);
void device_free(void* p) noexcept;
// cudaMalloc itself, freed with cudaFree, for memory that lives as long as a thread (the cuBLAS
// workspace), which a stream capture may ask for: the cache could wait for the device there.
void* device_malloc_uncached(std::size_t bytes, const char* what);
// Page-locked host memory through the cache, freed with pinned_free; CudaError when there is none.
void* pinned_malloc(std::size_t bytes);
void pinned_free(void* p) noexcept;
// Throws DeviceMemoryError for `needed` bytes with the device's free and total memory now.
[[noreturn]] void throw_device_memory_error(const std::string& what, std::size_t needed);

inline void check(cudaError_t s, const char* call, const char* file, int line) {
  if (s != cudaSuccess) throw_cuda_error(s, call, file, line);
}
inline void check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) throw_cublas_error(s, call, file, line);
}
inline void check(cusparseStatus_t s, const char* call, const char* file, int line) {
  if (s != CUSPARSE_STATUS_SUCCESS) throw_cusparse_error(s, call, file, line);
}
inline void check(cusolverStatus_t s, const char* call, const char* file, int line) {
  if (s != CUSOLVER_STATUS_SUCCESS) throw_cusolver_error(s, call, file, line);
}

}  // namespace linalg_cuda::detail

// LINALG_CUDA_CHECK(cudaMalloc(&p, n)); works for cudaError_t, cublasStatus_t, cusparseStatus_t and
// cusolverStatus_t.
#define LINALG_CUDA_CHECK(call) ::linalg_cuda::detail::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: reports launch-configuration errors at the launch site, not later.
#define LINALG_CUDA_CHECK_LAUNCH() LINALG_CUDA_CHECK(cudaGetLastError())
