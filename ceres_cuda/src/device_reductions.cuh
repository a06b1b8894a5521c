#pragma once
// Grid-wide reductions both GPU engines share: a sum in a fixed order (linalg_cuda's last-block
// reduction, the same bits every run) and the maximum of |v| (exact whatever the order).
#include <cstddef>

#include "linalg_cuda/internal/deterministic_reduce.cuh"
#include "linalg_cuda/internal/launch_geometry.h"

namespace ceres_cuda::detail {
namespace {

constexpr int kReduceThreads = linalg_cuda::detail::kThreadsPerBlock;
constexpr int kMaxReduceBlocks = 1024;

__global__ void __launch_bounds__(kReduceThreads) sum_kernel(const double* __restrict__ v, std::size_t n, bool squares,
                                                       double* partials, unsigned* ticket, double* out) {
  double s = 0.0;
  for (std::size_t i = blockIdx.x * std::size_t(kReduceThreads) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * kReduceThreads)
    s += squares ? v[i] * v[i] : v[i];
  const double sums[1] = {linalg_cuda::detail::block_sum<kReduceThreads>(s)};
  if (linalg_cuda::detail::store_partials_and_arrive(sums, partials, ticket)) {
    const double total = linalg_cuda::detail::sum_partials<kReduceThreads>(partials, 0, ticket);
    if (threadIdx.x == 0) *out = total;
  }
}

__global__ void max_abs_kernel(const double* __restrict__ v, std::size_t n, unsigned long long* out) {
  double m = 0.0;
  for (std::size_t i = blockIdx.x * std::size_t(kReduceThreads) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * kReduceThreads)
    m = fmax(m, fabs(v[i]));
  for (int offset = 16; offset > 0; offset >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, offset));
  // Non-negative doubles order like their bit patterns: an integer maximum is exact.
  if ((threadIdx.x & 31) == 0) atomicMax(out, static_cast<unsigned long long>(__double_as_longlong(m)));
}

}  // namespace
}  // namespace ceres_cuda::detail
