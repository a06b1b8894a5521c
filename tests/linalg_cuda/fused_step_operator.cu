#include "fused_step_operator.h"

#include <cuda_runtime.h>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/internal/deterministic_reduce.cuh"
#include "linalg_cuda/internal/launch_geometry.h"

namespace cg_test {
namespace {

constexpr int kThreads = linalg_cuda::detail::kThreadsPerBlock;
constexpr int kDotBlocks = 32;  // fixed, so that the sum's order is too

__global__ void update_direction(int n, const double* z, const double* beta, double* p, const int* stopped) {
  if (*stopped) return;
  const double b = *beta;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) p[i] = z[i] + b * p[i];
}

__global__ void dot(int n, const double* p, const double* q, double* partials, double* pap, const int* stopped) {
  if (*stopped) return;
  double sum = 0.0;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) sum += p[i] * q[i];
  const double sums[1] = {linalg_cuda::detail::block_sum<kThreads>(sum)};
  auto* ticket = reinterpret_cast<unsigned int*>(partials + kDotBlocks);
  if (linalg_cuda::detail::store_partials_and_arrive(sums, partials, ticket)) {
    const double total = linalg_cuda::detail::sum_partials<kThreads>(partials, 0, ticket);
    if (threadIdx.x == 0) *pap = total;
  }
}

}  // namespace

FusedStepOperator::FusedStepOperator(const linalg_cuda::LinearOperator& a)
    : OpaqueOperator(a), partials_((kDotBlocks + 1) * sizeof(double)) {
  LINALG_CUDA_CHECK(cudaMemset(partials_.data(), 0, (kDotBlocks + 1) * sizeof(double)));  // the ticket starts at 0
}

bool FusedStepOperator::apply_cg_step(const linalg_cuda::CgProductStep& step) const {
  ++steps_;
  const int n = static_cast<int>(rows());
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  const unsigned blocks = linalg_cuda::detail::blocks_for(n, kThreads);
  update_direction<<<blocks, kThreads, 0, stream>>>(n, step.z.data(), step.beta, step.p.data(), step.stopped);
  LINALG_CUDA_CHECK_LAUNCH();
  apply(step.p, step.q);
  dot<<<kDotBlocks, kThreads, 0, stream>>>(n, step.p.data(), step.q.data(), partials_.as<double>(), step.pap, step.stopped);
  LINALG_CUDA_CHECK_LAUNCH();
  return true;
}

}  // namespace cg_test
