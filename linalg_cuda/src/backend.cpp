#include "linalg_cuda/backend.h"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <mutex>

#include <cuda_runtime_api.h>

#include "linalg_cuda/errors.h"

namespace linalg_cuda {

int cuda_device_count() {
  // Asked once: the answer does not change during a process, and the query costs a driver call.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no device"/"no driver" error
      return 0;
    }
    return n;
  }();
  return count;
}

std::size_t free_device_memory() {
  if (!cuda_device_available()) return 0;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return free_bytes;
}

Backend resolve_backend(Backend requested) {
  if (requested == Backend::Cpu) return Backend::Cpu;
  if (requested == Backend::Cuda) {
    if (!cuda_device_available()) throw Error("Backend::Cuda requested but no CUDA device is available");
    return Backend::Cuda;
  }
  const Backend chosen = cuda_device_available() ? Backend::Cuda : Backend::Cpu;
  static std::once_flag logged;
  std::call_once(logged, [chosen] {
    std::cerr << "[cuda_solvers] Backend::Auto -> "
              << (chosen == Backend::Cuda ? "CUDA (device found)" : "CPU (no CUDA device found)") << "\n";
  });
  return chosen;
}

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
    case Backend::Auto: return "auto";
  }
  return "?";
}

Backend parse_backend(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t == "cpu") return Backend::Cpu;
  if (t == "cuda" || t == "gpu") return Backend::Cuda;
  if (t == "auto") return Backend::Auto;
  throw InvalidArgument("unknown backend '" + text + "' (expected cpu, cuda/gpu or auto)");
}

}  // namespace linalg_cuda
