#pragma once
// The general engine's kernels take a thread per item (or a warp per item) over a grid-stride loop.
#include "linalg_cuda/internal/launch_geometry.h"

namespace ceres_cuda::detail {

constexpr int kBlockThreads = linalg_cuda::detail::kThreadsPerBlock;
// Blocks of a kernel with a thread per item whose items are few and heavy (an e-block, a chunk of
// pairs): a Ladybug-sized problem's 7776 e-blocks fill 122 blocks of 64 threads, where blocks of 256
// would leave three quarters of a Hopper GPU's 132 multiprocessors idle.
constexpr int kNarrowBlockThreads = 64;

}  // namespace ceres_cuda::detail

#define CERES_CUDA_FOR_EACH(i, first, last)                                                              \
  for (int i = (first) + blockIdx.x * blockDim.x + threadIdx.x; i < (last); i += gridDim.x * blockDim.x)

// A warp per item: the warp index strides over [first, last); every lane of the warp sees the same i.
// (kWarpLanes: block_schur_math.h, which the kernels that use this include.)
#define CERES_CUDA_FOR_EACH_WARP(i, first, last)                                                        \
  for (int i = (first) + (blockIdx.x * blockDim.x + threadIdx.x) / ::ceres_cuda::detail::kWarpLanes;     \
       i < (last); i += gridDim.x * (blockDim.x / ::ceres_cuda::detail::kWarpLanes))
