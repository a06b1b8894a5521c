#pragma once
// The general engine's kernels take a thread per item (or a warp per item) over a grid-stride loop.
#include "linalg_cuda/internal/launch_geometry.h"

namespace ceres_cuda::detail {

constexpr int kBlockThreads = linalg_cuda::detail::kThreadsPerBlock;

}  // namespace ceres_cuda::detail

#define CERES_CUDA_FOR_EACH(i, first, last)                                                            \
  for (int i = (first) + blockIdx.x * ::ceres_cuda::detail::kBlockThreads + threadIdx.x; i < (last);     \
       i += gridDim.x * ::ceres_cuda::detail::kBlockThreads)

// A warp per item: the warp index strides over [first, last); every lane of the warp sees the same i.
// (kWarpLanes: block_schur_math.h, which the kernels that use this include.)
#define CERES_CUDA_FOR_EACH_WARP(i, first, last)                                                                \
  for (int i = (first) + (blockIdx.x * ::ceres_cuda::detail::kBlockThreads + threadIdx.x) /                    \
                             ::ceres_cuda::detail::kWarpLanes;                                                \
       i < (last); i += gridDim.x * (::ceres_cuda::detail::kBlockThreads / ::ceres_cuda::detail::kWarpLanes))
