#pragma once
// Launch geometry that every module's kernels share: how many blocks cover a count of threads, and
// how many blocks a whole device holds at once. Host code (a .cpp may include it).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

namespace linalg_cuda::detail {

// The block size of the element-wise and per-item kernels: whole warps, and enough blocks per
// multiprocessor to hide memory latency.
constexpr int kThreadsPerBlock = 256;

// A grid-stride kernel's block count stops growing here: its loop covers the rest, and a grid of
// this size still fills a device with many waves.
constexpr std::size_t kMaxGridStrideBlocks = 65535u * 8;

// Blocks of `block` threads that give each of `threads` items a thread of its own (at least 1), for a
// kernel that does not loop.
inline unsigned blocks_covering(std::size_t threads, int block = kThreadsPerBlock) {
  const std::size_t blocks = (threads + static_cast<std::size_t>(block) - 1) / static_cast<std::size_t>(block);
  return static_cast<unsigned>(std::max<std::size_t>(blocks, 1));
}

// Blocks of `block` threads enough for one thread per item of `threads` (at least 1), capped at
// kMaxGridStrideBlocks: the kernel must loop when the cap is reached.
inline unsigned blocks_for(std::size_t threads, int block = kThreadsPerBlock) {
  return static_cast<unsigned>(std::min<std::size_t>(blocks_covering(threads, block), kMaxGridStrideBlocks));
}

// Blocks of `block` threads that the device holds resident at once when occupancy is limited by
// threads alone: a grid of this size keeps every multiprocessor full with one wave.
inline int resident_blocks(const cudaDeviceProp& device, int block = kThreadsPerBlock) {
  return device.multiProcessorCount * std::max(1, device.maxThreadsPerMultiProcessor / block);
}

}  // namespace linalg_cuda::detail
