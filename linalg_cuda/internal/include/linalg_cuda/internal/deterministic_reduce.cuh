#pragma once
// Deterministic grid-wide sums without floating-point atomics: every block reduces its values in a
// fixed order and stores one partial per quantity; the block that arrives last (an integer ticket,
// the only atomic) adds the partials in a fixed order. For a fixed launch geometry the result is
// the same bits on every run, whatever the order in which blocks were scheduled.
#include <cuda_runtime.h>

namespace linalg_cuda::detail {

// Sum of the warp's 32 values (a fixed shuffle tree); the result is valid in lane 0. All lanes call it.
__device__ __forceinline__ double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum of v over the block; the result is valid in thread 0. All threads of the block must call it.
template <int kThreads>
__device__ __forceinline__ double block_sum(double v) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block must be whole warps");
  __shared__ double warp_sums[kThreads / 32];
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  double s = 0.0;
  if (threadIdx.x < 32) s = warp_sum(threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.0);
  __syncthreads();  // warp_sums may be reused by the next call
  return s;
}

// Sums of N values over the block at once, into `out` (shared memory, valid in thread 0 on return):
// the same tree and so the same bits as N calls of block_sum, with two barriers instead of 2N (each
// warp reduces all N values, then warp 0 reduces the warps' sums of each).
template <int kThreads, int N>
__device__ __forceinline__ void block_sums(double (&v)[N], double* out) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block must be whole warps");
  constexpr int kWarps = kThreads / 32;
  __shared__ double warp_sums[N][kWarps];
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    v[k] = warp_sum(v[k]);
    if (lane == 0) warp_sums[k][threadIdx.x >> 5] = v[k];
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    for (int k = 0; k < N; ++k) {
      const double s = warp_sum(lane < kWarps ? warp_sums[k][lane] : 0.0);
      if (lane == 0) out[k] = s;
    }
  }
  __syncthreads();  // warp_sums may be reused by the next call
}

// Stores this block's partial sums (kCount quantities, thread 0's values) and returns true in the
// block that arrives last, after which that block may read every partial. `ticket` must be 0 on
// entry of each launch; the last block resets it.
template <int kCount>
__device__ __forceinline__ bool store_partials_and_arrive(const double (&sums)[kCount], double* partials,
                                                         unsigned int* ticket) {
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    for (int q = 0; q < kCount; ++q) partials[q * gridDim.x + blockIdx.x] = sums[q];
    __threadfence();  // partials visible device-wide before the ticket is taken
    const unsigned int arrived = atomicAdd(ticket, 1u);
    is_last = (arrived == gridDim.x - 1);
  }
  __syncthreads();
  return is_last;
}

// In the last block: total of quantity q over all blocks (valid in thread 0). Resets the ticket.
template <int kThreads>
__device__ __forceinline__ double sum_partials(const double* partials, int q, unsigned int* ticket) {
  double s = 0.0;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += kThreads) s += __ldcg(partials + q * gridDim.x + b);
  s = block_sum<kThreads>(s);
  if (threadIdx.x == 0) *ticket = 0u;
  return s;
}

}  // namespace linalg_cuda::detail
