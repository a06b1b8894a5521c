#pragma once
// The library's buffers (DeviceVector, DeviceBuffer, PinnedBuffer and the rest) take device and
// page-locked host memory through a cache: a block they free is kept, by size class, and handed to
// the next request of its class instead of going back to the driver. cudaMalloc, cudaFree,
// cudaMallocHost and cudaFreeHost each cost tens to hundreds of microseconds, and cudaFree waits for
// the whole device; a program that solves many small problems (incremental SfM, a SLAM back-end, a
// planner's queries) paid them for every buffer of every solve.
//
// What it keeps: blocks of up to 64 MiB (larger ones go to the driver as before), sizes rounded up
// to a class at most 25% larger, at most 512 MiB of idle device memory per device and 256 MiB of
// idle page-locked memory. A freed block is reused only after the device has been synchronised once
// since it was freed (the cache does it when needed), as cudaFree's wait made reuse safe before.
// LINALG_CUDA_MEMORY_CACHE=0 in the environment turns it off, for compute-sanitizer's memcheck,
// which sees an access past a buffer's end or after its free only where the driver's blocks end.
#include <cstddef>

namespace linalg_cuda {

struct MemoryCacheStats {
  std::size_t idle_device_bytes = 0;  // on every device
  std::size_t idle_pinned_bytes = 0;
  long hits = 0;    // requests served from the cache
  long misses = 0;  // requests of a cached size class that went to the driver
};

// Hands every idle block back to the driver (after synchronising the devices that have some), e.g.
// before a phase that needs all of the device's memory. Blocks in use are not affected.
void release_cached_memory();

MemoryCacheStats memory_cache_stats();

}  // namespace linalg_cuda
