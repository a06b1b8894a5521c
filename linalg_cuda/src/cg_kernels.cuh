#pragma once
// The kernels of the GPU conjugate-gradient iteration. All scalars (alpha, beta, norms) live in a
// CgState on the device; each reduction's last block updates it, and every kernel returns at once
// when the state says the iteration has stopped, so a batch of iterations can be launched blindly.
#include <cuda_runtime.h>

#include "cg_state.h"
#include "deterministic_reduce.cuh"

namespace linalg_cuda::detail {

constexpr int kCgThreads = 256;

__device__ __forceinline__ bool cg_stopped(const CgState* s) { return s->status != kCgRunning; }

#define CG_GRID_STRIDE(i, n) \
  for (int i = blockIdx.x * kCgThreads + threadIdx.x; i < (n); i += gridDim.x * kCgThreads)

// r = b - q (q = A x0); b'b and r'r.
__global__ void __launch_bounds__(kCgThreads) cg_initial_residual(int n, const double* __restrict__ b,
                                                                   const double* __restrict__ q, double* __restrict__ r,
                                                                   double* partials, CgState* s) {
  double rr = 0.0, bb = 0.0;
  CG_GRID_STRIDE(i, n) {
    const double bi = b[i];
    const double ri = bi - q[i];
    r[i] = ri;
    rr += ri * ri;
    bb += bi * bi;
  }
  const double sums[2] = {block_sum<kCgThreads>(rr), block_sum<kCgThreads>(bb)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total_rr = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    const double total_bb = sum_partials<kCgThreads>(partials, 1, &s->ticket);
    if (threadIdx.x == 0) {
      s->rr = total_rr;
      s->bb = total_bb;
    }
  }
}

// p = z, r'z; then the stopping threshold and the initial status.
__global__ void __launch_bounds__(kCgThreads) cg_initial_direction(int n, const double* __restrict__ r,
                                                                    const double* __restrict__ z, double* __restrict__ p,
                                                                    bool preconditioned, double* partials, CgState* s) {
  double rz = 0.0;
  CG_GRID_STRIDE(i, n) {
    const double zi = z[i];
    p[i] = zi;
    rz += r[i] * zi;
  }
  const double sums[1] = {block_sum<kCgThreads>(rz)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    if (threadIdx.x == 0) start_cg(s, s->rr, s->bb, total, preconditioned);
  }
}

// q = A p for a CSR matrix, kLanes threads per row, fused with p'q. Rows are taken warp by warp so
// that every lane of a warp runs the same number of loop trips (the shuffles need the whole warp).
template <int kLanes>
__global__ void __launch_bounds__(kCgThreads) cg_csr_spmv_dot(int n, const int* __restrict__ row_ptr,
                                                               const int* __restrict__ col_idx,
                                                               const double* __restrict__ values,
                                                               const double* __restrict__ p, double* __restrict__ q,
                                                               double* partials, CgState* s) {
  if (cg_stopped(s)) return;
  constexpr int kRowsPerWarp = 32 / kLanes;
  const int lane = threadIdx.x % kLanes;
  const int warp = (blockIdx.x * kCgThreads + threadIdx.x) / 32;
  const int warps = gridDim.x * kCgThreads / 32;
  const int row_in_warp = (threadIdx.x % 32) / kLanes;
  double pap = 0.0;
  for (int first = warp * kRowsPerWarp; first < n; first += warps * kRowsPerWarp) {
    const int row = first + row_in_warp;
    const bool active = row < n;
    const int begin = active ? row_ptr[row] : 0;
    const int end = active ? row_ptr[row + 1] : 0;
    double sum = 0.0;
    for (int k = begin + lane; k < end; k += kLanes) sum += values[k] * p[col_idx[k]];
    for (int offset = kLanes / 2; offset > 0; offset >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, offset, kLanes);
    if (active && lane == 0) {
      q[row] = sum;
      pap += sum * p[row];
    }
  }
  const double sums[1] = {block_sum<kCgThreads>(pap)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    if (threadIdx.x == 0) finish_alpha(s, total);
  }
}

// p'q after a generic operator computed q = A p.
__global__ void __launch_bounds__(kCgThreads) cg_dot_alpha(int n, const double* __restrict__ p,
                                                            const double* __restrict__ q, double* partials, CgState* s) {
  if (cg_stopped(s)) return;
  double pap = 0.0;
  CG_GRID_STRIDE(i, n) pap += p[i] * q[i];
  const double sums[1] = {block_sum<kCgThreads>(pap)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    if (threadIdx.x == 0) finish_alpha(s, total);
  }
}

// x += alpha p, r -= alpha q, and z = D^{-1} r when inverse_diagonal is given (else z is r): one pass
// for the whole update of the no-preconditioner and Jacobi cases, with r'r and r'z.
__global__ void __launch_bounds__(kCgThreads) cg_update_fused(int n, double* __restrict__ x, double* __restrict__ r,
                                                               double* __restrict__ z, const double* __restrict__ p,
                                                               const double* __restrict__ q,
                                                               const double* __restrict__ inverse_diagonal,
                                                               double* partials, CgState* s) {
  if (cg_stopped(s)) return;
  const double alpha = s->alpha;
  double rr = 0.0, rz = 0.0;
  CG_GRID_STRIDE(i, n) {
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    rr += ri * ri;
    if (inverse_diagonal) {
      const double zi = inverse_diagonal[i] * ri;
      z[i] = zi;
      rz += ri * zi;
    }
  }
  const double sums[2] = {block_sum<kCgThreads>(rr), block_sum<kCgThreads>(rz)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total_rr = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    const double total_rz = sum_partials<kCgThreads>(partials, 1, &s->ticket);
    if (threadIdx.x == 0) finish_beta(s, total_rr, inverse_diagonal ? total_rz : total_rr);
  }
}

// x += alpha p, r -= alpha q, r'r; a general preconditioner runs next, then cg_dot_beta.
__global__ void __launch_bounds__(kCgThreads) cg_update_xr(int n, double* __restrict__ x, double* __restrict__ r,
                                                            const double* __restrict__ p, const double* __restrict__ q,
                                                            double* partials, CgState* s) {
  if (cg_stopped(s)) return;
  const double alpha = s->alpha;
  double rr = 0.0;
  CG_GRID_STRIDE(i, n) {
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    rr += ri * ri;
  }
  const double sums[1] = {block_sum<kCgThreads>(rr)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    if (threadIdx.x == 0) s->rr_next = total;
  }
}

// r'z after a general preconditioner computed z = M^{-1} r.
__global__ void __launch_bounds__(kCgThreads) cg_dot_beta(int n, const double* __restrict__ r,
                                                           const double* __restrict__ z, double* partials, CgState* s) {
  if (cg_stopped(s)) return;
  double rz = 0.0;
  CG_GRID_STRIDE(i, n) rz += r[i] * z[i];
  const double sums[1] = {block_sum<kCgThreads>(rz)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    if (threadIdx.x == 0) finish_beta(s, s->rr_next, total);
  }
}

// p = z + beta p.
__global__ void __launch_bounds__(kCgThreads) cg_update_direction(int n, const double* __restrict__ z,
                                                                   double* __restrict__ p, const CgState* s) {
  if (cg_stopped(s)) return;
  const double beta = s->beta;
  CG_GRID_STRIDE(i, n) p[i] = z[i] + beta * p[i];
}

#undef CG_GRID_STRIDE

}  // namespace linalg_cuda::detail
