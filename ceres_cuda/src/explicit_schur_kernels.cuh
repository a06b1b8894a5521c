#pragma once
// The explicit reduced matrix S (n x n, column-major, the lower triangle as cuSOLVER reads it) for the
// exact solvers (explicit_schur_solver.cu), from the plans of reduced_matrix_plan.h and w_pair_plan.h:
// F'F's blocks by pairs of f-blocks and its diagonal blocks from column chunks, the e-blocks' terms by
// pairs of f-blocks over W slots, by block rows of W slots, or as dense columns for syrk. A thread owns
// what it writes, and every sum runs in a fixed order.
#include "block_schur_math.h"
#include "grid_stride.cuh"
#include "linalg_cuda/internal/deterministic_reduce.cuh"
#include "w_pair_plan.h"

namespace ceres_cuda::detail {
namespace {

// The e-block of the residual of the cell at position q of e_sorted_cells, or -1 (none).
__device__ int e_block_at(const BlockSparseView& v, int q) {
  const int ec = v.e_cell[v.cells[v.e_sorted_cells[q]].residual];
  return ec < 0 ? -1 : v.cells[ec].block;
}

// The slot (p, b) of e-block p and f-block b: W_pb = sum of F_rb'E_r over p's residuals r on b, whose
// cells are a run of f-block b's column in e_sorted_cells (sorted by e-block, in residual order within
// one). For q the first position of a run: calls visit(product) with F_rb'E_r (t x e) for each of its
// cells in order and returns p; for any other position (inside a run, or a residual without an
// e-block), returns -1. A thread per position: a Ladybug-sized problem's 95 thousand f-cells keep the
// GPU's loads in flight, where a thread per e-block walking all its cells left them waiting in turn.
// kF, kE: every f-block's and e-block's tangent size where the structure has one (0: read per block).
template <int kF, int kE, class Visit>
__device__ int visit_slot_at(const BlockSparseView& v, int q, Visit&& visit) {
  const int b = v.cells[v.e_sorted_cells[q]].block, p = e_block_at(v, q);
  if (p < 0 || (q > v.column_start[b] && e_block_at(v, q - 1) == p)) return -1;
  const int e = kE > 0 ? kE : v.tangent_size[p], t = kF > 0 ? kF : v.tangent_size[b];
  double product[kMaxFBlockTangentSize * kMaxEBlockTangentSize];
  for (int k = q; k < v.column_start[b + 1]; ++k) {
    const int d = v.e_sorted_cells[k], r = v.cells[d].residual, ec = v.e_cell[r];
    if (ec < 0 || v.cells[ec].block != p) break;
    cells_transpose_times(v.cell(d), t, v.cell(ec), e, v.rows(r), product);
    visit(product);
  }
  return p;
}

// W_pj = sum of F_rj'E_r over e-block p's residuals, for every slot of every e-block: a thread per
// position of the f-blocks' e-sorted columns, each slot's first position writing it.
__global__ void w_slots_kernel(BlockSparseView v, SlotsView plan, int positions, double* W) {
  CERES_CUDA_FOR_EACH(q, 0, positions) {
    double* w = nullptr;
    int values = 0;
    visit_slot_at<0, 0>(v, q, [&](const double* product) {
      if (w == nullptr) {
        const int p = e_block_at(v, q), b = v.cells[v.e_sorted_cells[q]].block;
        int slot = plan.slot_start[p - v.first_e_block];
        while (plan.slot_block[slot] != b) ++slot;
        w = W + plan.slot_values[slot];
        values = v.tangent_size[b] * v.tangent_size[p];
        for (int k = 0; k < values; ++k) w[k] = 0.0;
      }
      for (int k = 0; k < values; ++k) w[k] += product[k];
    });
  }
}

// F'F's blocks below the diagonal (FtfPairs): a thread per chunk of a pair's entries sums its
// F_rj'F_rk into partials (stride values per chunk), then pair_sum_kernel adds the pair's block to S.
struct FtfPairsView {
  PairBlocks pairs;
  const int* entry_j;
  const int* entry_k;
};

// Chunk q of pairs p: the sum over its entries e of term(e, t, tk, product), each a t x tk block (t, tk
// the pair's blocks' tangent sizes, or kF for both where every f-block has kF), at partials + q * stride.
template <int kF, class Term>
__device__ void pair_chunk_sum(const BlockSparseView& v, const PairBlocks& p, int q, double* partials, Term&& term) {
  const int i = p.chunks.block[q];
  const int t = kF > 0 ? kF : v.tangent_size[p.pair_j[i]], tk = kF > 0 ? kF : v.tangent_size[p.pair_k[i]];
  double* out = partials + static_cast<long>(q) * p.chunks.stride;
  for (int a = 0; a < t * tk; ++a) out[a] = 0.0;
  double product[kF > 0 ? kF * kF : kMaxFBlockTangentSize * kMaxFBlockTangentSize];
  for (int e = p.chunks.position[q]; e < p.chunks.position[q + 1]; ++e) {
    term(e, t, tk, product);
    for (int a = 0; a < t * tk; ++a) out[a] += product[a];
  }
}

template <int kF>
__global__ void ftf_pair_chunk_kernel(BlockSparseView v, FtfPairsView p, double* partials) {
  CERES_CUDA_FOR_EACH(q, 0, p.pairs.num_chunks) {
    pair_chunk_sum<kF>(v, p.pairs, q, partials, [&](int e, int t, int tk, double* product) {
      const int c = p.entry_j[e], d = p.entry_k[e];
      cells_transpose_times(v.cell(c), t, v.cell(d), tk, v.rows(v.cells[c].residual), product);
    });
  }
}

// The e-blocks' terms by pairs (WPairPlan): a thread per chunk of a pair's slot pairs sums its
// W_pj V_p^-1 W_pk' (W: the slots' values, w_slots_kernel's), then pair_sum_kernel subtracts the
// pair's block from S.
__global__ void w_pair_chunk_kernel(BlockSparseView v, SlotsView s, WPairsView p, const double* W,
                                    const double* v_inverse, double* partials) {
  CERES_CUDA_FOR_EACH(q, 0, p.pairs.num_chunks) {
    pair_chunk_sum<0>(v, p.pairs, q, partials, [&](int e, int t, int tk, double* product) {
      const int a = static_cast<int>(p.slots[e] >> 32), b = static_cast<int>(p.slots[e] & 0xffffffffu);
      const int pe = s.slot_e_block[a];
      const double* Vi = v_inverse + static_cast<long>(pe - v.first_e_block) * kEBlockValues;
      sandwich(W + s.slot_values[a], t, Vi, v.tangent_size[pe], W + s.slot_values[b], tk, product);
    });
  }
}

// A warp per pair (j, k): its chunks' partials summed in warp order, times sign, added to S's block at
// (j, k).
__global__ void pair_sum_kernel(BlockSparseView v, PairBlocks p, const double* partials, double sign, double* S,
                                long n) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(i, 0, p.num_pairs) {
    const int j = p.pair_j[i], k = p.pair_k[i], tk = v.tangent_size[k];
    const long row = v.tangent_offset[j], col = v.tangent_offset[k];
    for (int a = 0; a < v.tangent_size[j] * tk; ++a) {
      const double sum = linalg_cuda::detail::warp_sum(lane_chunk_sum(p.chunks, i, lane, partials, a));
      if (lane == 0) S[(col + a % tk) * n + row + a / tk] += sign * sum;
    }
  }
}

// S's diagonal blocks F_j'F_j + D_j^2 from diagonal_chunk_kernel's sums over the chunks of each f-block
// (a block shared by every residual is summed in parallel), a warp per block in block_schur_math.h's
// warp order.
__global__ void dense_diagonal_kernel(BlockSparseView v, ChunkView ch, int blocks, const double* partials,
                                      const double* d2, double* S, long n) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(b, 0, blocks) {
    const int t = v.tangent_size[b];
    const long row = v.tangent_offset[b];
    for (int j = 0; j < t * t; ++j) {
      const double sum = linalg_cuda::detail::warp_sum(lane_chunk_sum(ch, b, lane, partials, j));
      const int a = j / t, c = j % t;
      if (lane == 0) S[(row + c) * n + row + a] += sum + (a == c ? d2[row + a] : 0.0);
    }
  }
}

// f-blocks k up to j (ReducedMatrixPlan's slots): a warp per f-block j, whose lane l owns the blocks k
// with k % 32 == l. Every entry of S has one writer, which subtracts its terms in the row's slot order,
// and the warp's lanes keep that many more of the read-modify-writes of S in flight; the diagonal block
// in its owner's registers.
__global__ void w_rows_kernel(BlockSparseView v, SlotsView plan, RowsView rows, int f_blocks, const double* W,
                              const double* v_inverse, double* S, long n) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(j, 0, f_blocks) {
    const int t = v.tangent_size[j];
    const long row = v.tangent_offset[j];
    const bool owns_diagonal = j % kWarpLanes == lane;
    double product[kMaxFBlockTangentSize * kMaxFBlockTangentSize], diagonal[kMaxFBlockTangentSize * kMaxFBlockTangentSize];
    for (int a = 0; a < t * t; ++a) diagonal[a] = 0.0;
    for (int q = rows.row_start[j]; q < rows.row_start[j + 1]; ++q) {
      const int slot = rows.row_slots[q];
      const int p = plan.slot_e_block[slot], i = p - v.first_e_block, e = v.tangent_size[p];
      const double* Vi = v_inverse + static_cast<long>(i) * kEBlockValues;
      for (int other = plan.slot_start[i]; other < plan.slot_start[i + 1]; ++other) {
        const int k = plan.slot_block[other], tk = v.tangent_size[k];
        if (k > j || k % kWarpLanes != lane) continue;
        sandwich(W + plan.slot_values[slot], t, Vi, e, W + plan.slot_values[other], tk, product);
        if (k == j) {
          for (int a = 0; a < t * t; ++a) diagonal[a] += product[a];
          continue;
        }
        const long col = v.tangent_offset[k];
        for (int a = 0; a < t; ++a)
          for (int b = 0; b < tk; ++b) S[(col + b) * n + row + a] -= product[a * tk + b];
      }
    }
    if (owns_diagonal)
      for (int a = 0; a < t; ++a)
        for (int b = 0; b < t; ++b) S[(row + b) * n + row + a] -= diagonal[a * t + b];
  }
}

// G's columns for e-blocks [first, first + count): for e-block p, e_p columns holding W_pb M_p at the
// rows of every f-block b its residuals touch (M_p M_p' = V_p^-1), so that S -= G G' subtracts every
// W V^-1 W'. G is n x (width * count), column-major, zero on entry (width: the largest e_p). A thread
// per position of the f-blocks' e-sorted columns, each slot's first position writing its rows.
// kF, kE: as visit_slot_at's.
template <int kF, int kE>
__global__ void explicit_g_kernel(BlockSparseView v, int first, int count, int width, int positions,
                                  const double* v_inverse, double* G, long n) {
  CERES_CUDA_FOR_EACH(q, 0, positions) {
    const int p = e_block_at(v, q), i = p - v.first_e_block - first;
    if (p < 0 || i < 0 || i >= count) continue;
    const int b = v.cells[v.e_sorted_cells[q]].block, t = kF > 0 ? kF : v.tangent_size[b];
    if (q > v.column_start[b] && e_block_at(v, q - 1) == p) continue;  // inside its slot's run
    const int e = kE > 0 ? kE : v.tangent_size[p];
    double M[kEBlockValues];  // the Cholesky factor of V_p^-1 (lower), from its inverse's inverse
    const double* Vi = v_inverse + static_cast<long>(first + i) * kEBlockValues;
    for (int k = 0; k < e * e; ++k) M[k] = 0.0;
    bool ok = true;
    for (int j = 0; j < e && ok; ++j) {
      double d = Vi[j * e + j];
      for (int k = 0; k < j; ++k) d -= M[j * e + k] * M[j * e + k];
      ok = d > 0.0 && isfinite(d);
      if (!ok) break;
      M[j * e + j] = sqrt(d);
      for (int r = j + 1; r < e; ++r) {
        double s = Vi[r * e + j];
        for (int k = 0; k < j; ++k) s -= M[r * e + k] * M[j * e + k];
        M[r * e + j] = s / M[j * e + j];
      }
    }
    if (!ok) continue;  // V_p^-1 zeroed (a non-finite block): no Schur term, as in the implicit product
    double rows[kMaxFBlockTangentSize * kMaxEBlockTangentSize];  // W_pb M_p, summed cell by cell
    for (int k = 0; k < t * e; ++k) rows[k] = 0.0;
    const bool owner = visit_slot_at<kF, kE>(v, q, [&](const double* product) {  // F_rb'E_r, t x e
      for (int j = 0; j < t; ++j)
        for (int k = 0; k < e; ++k) {
          double sum = 0.0;
          for (int u = k; u < e; ++u) sum += product[j * e + u] * M[u * e + k];
          rows[j * e + k] += sum;
        }
    }) >= 0;
    if (!owner) continue;
    double* columns = G + static_cast<long>(i) * width * n;
    const long row = v.tangent_offset[b];
    for (int j = 0; j < t; ++j)
      for (int k = 0; k < e; ++k) columns[k * n + row + j] = rows[j * e + k];
  }
}

}  // namespace
}  // namespace ceres_cuda::detail
