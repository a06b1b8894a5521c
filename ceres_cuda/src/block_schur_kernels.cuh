#pragma once
// The general GPU engine's kernels over the Jacobian's cells (CellProducts, cell_products.cu):
// block_schur_math.h's per-item functions, a thread per item (residual block, variable block or
// Jacobian cell) over a grid-stride loop. A thread owns what it writes, and every sum runs in
// block_schur_math.h's fixed order: the same bits run after run. The explicit reduced system's kernels
// are in explicit_schur_kernels.cuh, the element-wise ones of an LM step in lm_step_kernels.cuh.
#include "block_schur_math.h"
#include "grid_stride.cuh"
#include "linalg_cuda/internal/deterministic_reduce.cuh"
#include "linalg_cuda/internal/launch_geometry.h"
#include "linalg_cuda/internal/small_spd_inverse.h"

namespace ceres_cuda::detail {
namespace {

__global__ void row_product_kernel(BlockSparseView v, int residuals, const double* x, bool f_only, double* rows) {
  CERES_CUDA_FOR_EACH(r, 0, residuals) row_product(v, r, x, f_only, rows);
}

__global__ void subtract_e_kernel(BlockSparseView v, int residuals, const double* w, double* rows) {
  CERES_CUDA_FOR_EACH(r, 0, residuals) subtract_e_term(v, r, w, rows);
}

// Column sums in two stages (ColumnChunks): a warp per chunk (a lane per cell), then a warp per block.
__global__ void column_chunk_kernel(BlockSparseView v, ChunkView ch, int first, int last, const double* rows, bool norms,
                                    double* partials) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(k, first, last) {
    double acc[kMaxFBlockTangentSize];
#pragma unroll
    for (int j = 0; j < kMaxFBlockTangentSize; ++j) acc[j] = 0.0;
    column_chunk_lane(v, ch, k, lane, rows, norms, acc);
    const int t = v.tangent_size[ch.block[k]];
#pragma unroll
    for (int j = 0; j < kMaxFBlockTangentSize; ++j)
      if (j < t) {
        const double sum = linalg_cuda::detail::warp_sum(acc[j]);
        if (lane == 0) partials[static_cast<long>(k) * ch.stride + j] = sum;
      }
  }
}

// A warp per block (block_schur_math.h's warp order, which the CPU engine follows).
__global__ void column_sum_kernel(BlockSparseView v, ChunkView ch, int first, int last, const double* partials,
                                  double* out) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(b, first, last)
    for (int j = 0; j < v.tangent_size[b]; ++j) {
      const double sum = linalg_cuda::detail::warp_sum(lane_chunk_sum(ch, b, lane, partials, j));
      if (lane == 0) out[v.tangent_offset[b] + j] = sum;
    }
}

template <int kE>
__global__ void e_inverse_kernel(BlockSparseView v, int first, int last, const double* d2, double* v_inverse,
                                 int* singular) {
  CERES_CUDA_FOR_EACH(b, first, last) {
    if (e_block_inverse<kE>(v, b, d2, v_inverse) > 0) atomicAdd(singular, 1);  // an integer count: exact
  }
}

template <int kE>
__global__ void e_solve_kernel(BlockSparseView v, int first, int last, const double* v_inverse, const double* rows,
                               double* out) {
  CERES_CUDA_FOR_EACH(b, first, last) e_block_solve<kE>(v, b, v_inverse, rows, out);
}

// A thread per entry of the lower triangle of a chunk's block, over `count` chunks (listed in `chunks`)
// whose blocks have t tangent values: neighbouring threads read the same chunk's cells.
__global__ void diagonal_chunk_kernel(BlockSparseView v, ChunkView ch, const int* chunks, int count, int t, bool schur,
                                      const double* v_inverse, double* partials) {
  const int entries = lower_triangle_entries(t);
  const long items = static_cast<long>(count) * entries;
  for (long i = blockIdx.x * static_cast<long>(kBlockThreads) + threadIdx.x; i < items;
       i += static_cast<long>(gridDim.x) * kBlockThreads)
    diagonal_chunk_entry(v, ch, chunks[i / entries], static_cast<int>(i % entries), schur, v_inverse, partials);
}

__global__ void diagonal_sum_kernel(BlockSparseView v, ChunkView ch, int blocks, const double* partials, const double* d2,
                                    const long* offsets, double* out, int* singular) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(b, 0, blocks) {
    const int t = v.tangent_size[b];
    double* S = out + offsets[b];
    for (int j = 0; j < t * t; ++j) {
      const double sum = linalg_cuda::detail::warp_sum(lane_chunk_sum(ch, b, lane, partials, j));
      if (lane == 0) S[j] = sum;
    }
    if (lane == 0 && preconditioner_finish(v, b, d2, S) > 0) atomicAdd(singular, 1);
  }
}

// z_b = B_b r_b for every f-block b and its inverted block B_b (t x t at offsets[b]).
__global__ void block_jacobi_kernel(BlockSparseView v, int blocks, const long* offsets, const double* inverse,
                                    const double* r, double* z) {
  CERES_CUDA_FOR_EACH(b, 0, blocks) {
    const int t = v.tangent_size[b];
    const long o = v.tangent_offset[b];
    const double* B = inverse + offsets[b];
    for (int j = 0; j < t; ++j) {
      double sum = 0.0;
      for (int k = 0; k < t; ++k) sum += B[j * t + k] * r[o + k];
      z[o + j] = sum;
    }
  }
}

// Every cell's columns times the Jacobi scaling of its block.
__global__ void scale_cells_kernel(BlockSparseView v, int cells, const double* scaling, double* jacobian) {
  CERES_CUDA_FOR_EACH(c, 0, cells) {
    const int b = v.cells[c].block, t = v.tangent_size[b], m = v.rows(v.cells[c].residual);
    const double* s = scaling + v.tangent_offset[b];
    double* J = jacobian + v.cells[c].values;
    for (int a = 0; a < m; ++a)
      for (int k = 0; k < t; ++k) J[a * t + k] *= s[k];
  }
}

__global__ void model_change_kernel(BlockSparseView v, int residuals, const double* js, const double* f, double* out) {
  CERES_CUDA_FOR_EACH(r, 0, residuals) out[r] = model_cost_change(v, r, js, f);
}

// out += d2 .* x (the Schur product's damping), over the f-part.
__global__ void add_damping_kernel(long n, const double* d2, const double* x, double* out) {
  for (long k = blockIdx.x * static_cast<long>(kBlockThreads) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * kBlockThreads)
    out[k] += d2[k] * x[k];
}

}  // namespace
}  // namespace ceres_cuda::detail
