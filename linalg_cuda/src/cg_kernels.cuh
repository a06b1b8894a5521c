#pragma once
// The kernels of the GPU conjugate-gradient iteration. All scalars (alpha, beta, norms) live in a
// CgState on the device; each reduction's last block updates it, and every kernel returns at once
// when the state says the iteration has stopped, so a batch of iterations can be launched blindly.
#include <cuda_runtime.h>

#include "cg_state.h"
#include "linalg_cuda/internal/deterministic_reduce.cuh"
#include "linalg_cuda/internal/dependent_launch.cuh"
#include "linalg_cuda/internal/launch_geometry.h"

namespace linalg_cuda::detail {

constexpr int kCgThreads = kThreadsPerBlock;
constexpr int kCgMaxBlockSize = 16;  // BlockJacobiPreconditioner::kMaxBlockSize (checked where both are seen)

__device__ __forceinline__ bool cg_stopped(const CgState* s) { return s->status != kCgRunning; }

#define CG_GRID_STRIDE(i, n) \
  for (int i = blockIdx.x * kCgThreads + threadIdx.x; i < (n); i += gridDim.x * kCgThreads)

// r = b - q (q = A x0); b'b, r'r and x0'(b + r) (for the quadratic-model test).
__global__ void __launch_bounds__(kCgThreads) cg_initial_residual(int n, const double* __restrict__ b,
                                                                   const double* __restrict__ q,
                                                                   const double* __restrict__ x, double* __restrict__ r,
                                                                   double* partials, CgState* s) {
  double rr = 0.0, bb = 0.0, xbr = 0.0;
  CG_GRID_STRIDE(i, n) {
    const double bi = b[i];
    const double ri = bi - q[i];
    r[i] = ri;
    rr += ri * ri;
    bb += bi * bi;
    xbr += x[i] * (bi + ri);
  }
  const double sums[3] = {block_sum<kCgThreads>(rr), block_sum<kCgThreads>(bb), block_sum<kCgThreads>(xbr)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total_rr = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    const double total_bb = sum_partials<kCgThreads>(partials, 1, &s->ticket);
    const double total_xbr = sum_partials<kCgThreads>(partials, 2, &s->ticket);
    if (threadIdx.x == 0) {
      s->rr = total_rr;
      s->bb = total_bb;
      s->xbr_next = total_xbr;
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
    if (threadIdx.x == 0) start_cg(s, s->rr, s->bb, total, preconditioned, s->xbr_next);
  }
}

// q = A p for a CSR matrix, fused with p'q ("CSR-stream", after Greathouse and Daga's CSR-Adaptive).
// Each warp takes a chunk of consecutive rows whose nonzeros are contiguous: the warp streams the
// chunk's values and column indices with fully coalesced loads, kStageLoads independent loads per
// lane in flight, stages the products in shared memory, and then each lane adds up its own row in
// order. Chunks with more nonzeros than the stage holds (long rows) fall back to one row at a time
// across the whole warp. Both orders are fixed, so the result is deterministic.
constexpr int kStagePerWarp = 256;
constexpr int kStageLoads = kStagePerWarp / 32;

__global__ void __launch_bounds__(kCgThreads) cg_csr_spmv_dot(int n, int rows_per_chunk, const int* __restrict__ row_ptr,
                                                               const int* __restrict__ col_idx,
                                                               const double* __restrict__ values,
                                                               const double* __restrict__ p, double* __restrict__ q,
                                                               double* partials, CgState* s) {
  if (cg_stopped(s)) return;
  constexpr unsigned kFull = 0xffffffffu;
  __shared__ double stage[kCgThreads / 32][kStagePerWarp];
  const int lane = threadIdx.x & 31;
  double* products = stage[threadIdx.x >> 5];
  const int warp = blockIdx.x * (kCgThreads / 32) + (threadIdx.x >> 5);
  const int warps = gridDim.x * (kCgThreads / 32);
  const int chunks = (n + rows_per_chunk - 1) / rows_per_chunk;
  double pap = 0.0;
  for (int chunk = warp; chunk < chunks; chunk += warps) {
    const int first = chunk * rows_per_chunk;
    const int rows = min(rows_per_chunk, n - first);
    const int row = first + lane;
    const bool owns_row = lane < rows;
    const int begin = owns_row ? row_ptr[row] : 0;
    const int end = owns_row ? row_ptr[row + 1] : 0;
    const int chunk_begin = __shfl_sync(kFull, begin, 0);
    const int chunk_end = __shfl_sync(kFull, end, rows - 1);
    if (chunk_end - chunk_begin <= kStagePerWarp) {
      // All loads of the chunk first, then all gathers: kStageLoads independent requests per lane.
      int cols[kStageLoads];
      double vals[kStageLoads];
#pragma unroll
      for (int j = 0; j < kStageLoads; ++j) {
        const int k = chunk_begin + j * 32 + lane;
        const bool inside = k < chunk_end;
        cols[j] = inside ? col_idx[k] : -1;
        vals[j] = inside ? values[k] : 0.0;
      }
#pragma unroll
      for (int j = 0; j < kStageLoads; ++j)
        if (cols[j] >= 0) products[j * 32 + lane] = vals[j] * p[cols[j]];
      __syncwarp();
      if (owns_row) {
        double sum = 0.0;
        for (int k = begin; k < end; ++k) sum += products[k - chunk_begin];
        q[row] = sum;
        pap += sum * p[row];
      }
      __syncwarp();  // the stage is rewritten by the next chunk
    } else {
      for (int r = 0; r < rows; ++r) {
        const int row_begin = __shfl_sync(kFull, begin, r);
        const int row_end = __shfl_sync(kFull, end, r);
        double sum = 0.0;
        for (int k = row_begin + lane; k < row_end; k += 32) sum += values[k] * p[col_idx[k]];
        for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(kFull, sum, offset);
        if (lane == r) {
          q[first + r] = sum;
          pap += sum * p[first + r];
        }
      }
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

// The step length at the start of an update kernel: the state's (cg_dot_alpha or the CSR product set
// it), or, where an operator summed p'Ap itself (apply_cg_step: operator_pap non-null), alpha from that
// sum here. Every block decides alike from the same values; block 0 records the decision. False: the
// iteration has stopped (now or before), and the caller returns.
__device__ __forceinline__ bool cg_step_alpha(CgState* s, const double* operator_pap, double* alpha) {
  if (cg_stopped(s)) return false;
  if (!operator_pap) {
    *alpha = s->alpha;
    return true;
  }
  CgState decided;
  decided.rz = s->rz;
  finish_alpha(&decided, *operator_pap);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    s->last_pap = decided.last_pap;
    s->alpha = decided.alpha;
    if (decided.status != kCgRunning) s->status = decided.status;
  }
  *alpha = decided.alpha;
  return decided.status == kCgRunning;
}

// The end of a fused update: this block's r'r, r'z and x'(b + r) to the partials; the last block to
// arrive sums them all in block order (a fixed order) and sets beta.
__device__ __forceinline__ void finish_update(double rr, double rz, double xbr, double* partials, CgState* s) {
  const double sums[3] = {block_sum<kCgThreads>(rr), block_sum<kCgThreads>(rz), block_sum<kCgThreads>(xbr)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total_rr = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    const double total_rz = sum_partials<kCgThreads>(partials, 1, &s->ticket);
    const double total_xbr = sum_partials<kCgThreads>(partials, 2, &s->ticket);
    if (threadIdx.x == 0) finish_beta(s, total_rr, total_rz, total_xbr);
  }
}

// x += alpha p, r -= alpha q, and z = D^{-1} r when inverse_diagonal is given (else z is r): one pass
// for the whole update of the no-preconditioner and Jacobi cases, with r'r and r'z, and x'(b + r)
// when b is given (the quadratic-model test is on).
__global__ void __launch_bounds__(kCgThreads) cg_update_fused(int n, double* __restrict__ x, double* __restrict__ r,
                                                               double* __restrict__ z, const double* __restrict__ p,
                                                               const double* __restrict__ q,
                                                               const double* __restrict__ inverse_diagonal,
                                                               const double* __restrict__ b,
                                                               const double* operator_pap, double* partials,
                                                               CgState* s) {
  double alpha;
  if (!cg_step_alpha(s, operator_pap, &alpha)) return;
  double rr = 0.0, rz = 0.0, xbr = 0.0;
  CG_GRID_STRIDE(i, n) {
    const double xi = x[i] + alpha * p[i];
    x[i] = xi;
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    rr += ri * ri;
    if (inverse_diagonal) {
      const double zi = inverse_diagonal[i] * ri;
      z[i] = zi;
      rz += ri * zi;
    }
    if (b) xbr += xi * (b[i] + ri);
  }
  finish_update(rr, inverse_diagonal ? rz : rr, xbr, partials, s);
}

// cg_update_fused for a block-Jacobi preconditioner (inverse blocks, entry (i, j) of block k at
// (i * bs + j) * nb + k; continuous: row i of block k at i * nb + k, else at k * bs + i): a thread
// block takes kCgThreads / bs whole blocks at a time, a thread per row; the rows' updated r go through
// shared memory to the threads of their block. Threads are ordered so that neighbours read neighbouring
// values: block-fastest in the continuous layout (entry (i, j) of consecutive blocks is contiguous, as
// are their rows i), row-fastest otherwise. One kernel where the update, the preconditioner and r'z
// took three.
__global__ void __launch_bounds__(kCgThreads) cg_update_block_jacobi(int n, int bs, int nb, bool continuous,
                                                                      double* __restrict__ x, double* __restrict__ r,
                                                                      double* __restrict__ z, const double* __restrict__ p,
                                                                      const double* __restrict__ q,
                                                                      const double* __restrict__ inverse,
                                                                      const double* __restrict__ b,
                                                                      const double* operator_pap, double* partials,
                                                                      CgState* s) {
  constexpr int kMax = kCgMaxBlockSize;
  __shared__ double updated_r[kCgThreads];  // the pass's new r: row i of its block l at i * blocks_per_pass + l
  const int blocks_per_pass = kCgThreads / bs;
  const int t = static_cast<int>(threadIdx.x);
  const int i = continuous ? t / blocks_per_pass : t % bs;  // this thread's row in its block
  const int local = continuous ? t % blocks_per_pass : t / bs;
  const bool in_pass = t < blocks_per_pass * bs;
  // This thread's row of its inverse block in a pass, all its loads issued together (in registers:
  // the loop is unrolled to the largest block size).
  double inverse_row[kMax];
  const auto load_inverse_row = [&](int first) {
    const int k = first + local;
    const bool inside = in_pass && k < nb;
#pragma unroll
    for (int j = 0; j < kMax; ++j)
      inverse_row[j] = inside && j < bs ? inverse[(static_cast<std::size_t>(i) * bs + j) * nb + k] : 0.0;
  };
  // The first pass's row before waiting for the operator's kernel: the inverse blocks do not change
  // during a solve, so their loads overlap the previous kernel's end.
  load_inverse_row(blockIdx.x * blocks_per_pass);
  begin_dependent_kernel();  // launched after the operator's last kernel (launch_after_previous)
  double alpha;
  if (!cg_step_alpha(s, operator_pap, &alpha)) return;
  double rr = 0.0, rz = 0.0, xbr = 0.0;
  // The bound is the same on every thread of the block (it waits for the block twice a pass).
  for (int first = blockIdx.x * blocks_per_pass; first < nb; first += gridDim.x * blocks_per_pass) {
    const int k = first + local;
    const long long row = continuous ? static_cast<long long>(i) * nb + k : static_cast<long long>(k) * bs + i;
    const bool active = in_pass && k < nb && row < n;  // the last block may be smaller (natural layout)
    double xi = 0.0, ri = 0.0;
    if (active) {
      xi = x[row] + alpha * p[row];
      x[row] = xi;
      ri = r[row] - alpha * q[row];
      r[row] = ri;
    }
    if (in_pass) updated_r[i * blocks_per_pass + local] = ri;  // 0 past the last row
    __syncthreads();
    if (active) {
      double zi = 0.0;
#pragma unroll
      for (int j = 0; j < kMax; ++j)
        if (j < bs) zi += inverse_row[j] * updated_r[j * blocks_per_pass + local];
      z[row] = zi;
      rr += ri * ri;
      rz += ri * zi;
      if (b) xbr += xi * (b[row] + ri);
    }
    __syncthreads();  // updated_r is rewritten by the next pass
    if (first + gridDim.x * blocks_per_pass < nb) load_inverse_row(first + gridDim.x * blocks_per_pass);
  }
  finish_update(rr, rz, xbr, partials, s);
}

// x += alpha p, r -= alpha q, r'r (and x'(b + r) when b is given); a general preconditioner runs
// next, then cg_dot_beta.
__global__ void __launch_bounds__(kCgThreads) cg_update_xr(int n, double* __restrict__ x, double* __restrict__ r,
                                                            const double* __restrict__ p, const double* __restrict__ q,
                                                            const double* __restrict__ b, const double* operator_pap,
                                                            double* partials, CgState* s) {
  double alpha;
  if (!cg_step_alpha(s, operator_pap, &alpha)) return;
  double rr = 0.0, xbr = 0.0;
  CG_GRID_STRIDE(i, n) {
    const double xi = x[i] + alpha * p[i];
    x[i] = xi;
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    rr += ri * ri;
    if (b) xbr += xi * (b[i] + ri);
  }
  const double sums[2] = {block_sum<kCgThreads>(rr), block_sum<kCgThreads>(xbr)};
  if (store_partials_and_arrive(sums, partials, &s->ticket)) {
    const double total = sum_partials<kCgThreads>(partials, 0, &s->ticket);
    const double total_xbr = sum_partials<kCgThreads>(partials, 1, &s->ticket);
    if (threadIdx.x == 0) {
      s->rr_next = total;
      s->xbr_next = total_xbr;
    }
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
    if (threadIdx.x == 0) finish_beta(s, s->rr_next, total, s->xbr_next);
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

#if CUDART_VERSION >= 12040
// The last node of the device-side loop's body: go round again while the iteration runs.
__global__ void cg_continue_while_running(cudaGraphConditionalHandle handle, const CgState* s) {
  cudaGraphSetConditional(handle, s->status == kCgRunning ? 1u : 0u);
}
#endif

}  // namespace linalg_cuda::detail
