#pragma once
// Where an algorithm runs. Every algorithm of the project has a CPU reference and a CUDA version
// with the same results; Auto picks CUDA when a device is present and says so once on stderr.
#include <cstddef>
#include <string>

namespace linalg_cuda {

enum class Backend { Cpu, Cuda, Auto };

// Number of usable CUDA devices; 0 when there is no driver, no device, or the runtime refuses.
int cuda_device_count();
inline bool cuda_device_available() { return cuda_device_count() > 0; }
// Free memory of the calling thread's current device in bytes (cudaMemGetInfo); 0 without a device.
std::size_t free_device_memory();

// Auto -> Cuda or Cpu (logged once per process); Cuda without a device throws linalg_cuda::Error.
Backend resolve_backend(Backend requested);

const char* to_string(Backend backend);
// "cpu", "cuda"/"gpu", "auto" (case-insensitive); throws InvalidArgument otherwise.
Backend parse_backend(const std::string& text);

}  // namespace linalg_cuda
