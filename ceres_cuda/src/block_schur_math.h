#pragma once
// The Schur-complement algebra of a block-sparse Jacobian in JacobianCells' layout, one item (a
// residual block's row of cells, a block's column of cells) at a time, written once for the CPU
// loops (cpu_block_schur.cpp) and the GPU kernels (general_cuda_engine.cu): the view holds raw
// pointers that are host or device memory alike. Every sum runs over cells in a fixed order.
#include <algorithm>

#include "jacobian_cells.h"
#include "linalg_cuda/internal/host_device.h"
#include "schur_math.h"

namespace ceres_cuda::detail {

constexpr int kEBlockValues = kMaxEBlockTangentSize * kMaxEBlockTangentSize;  // stride of V^-1 blocks

struct BlockSparseView {
  const JacobianCell* cells;
  const int* row_start;       // per residual block, its cells
  const int* e_cell;          // per residual block, its e-block's cell or -1
  const long* row_offset;     // per residual block, its first value in residual vectors
  const int* column_start;    // per variable block, its cells ...
  const int* column_cells;    // ... in residual order
  const int* e_sorted_cells;  // per f-block (column_start's ranges), its cells stably sorted by e-block
  const int* tangent_size;    // per variable block
  const long* tangent_offset; // per variable block
  const double* jacobian;
  long f_tangent_size;
  int first_e_block;

  LINALG_HD int rows(int r) const { return static_cast<int>(row_offset[r + 1] - row_offset[r]); }
  LINALG_HD const double* cell(int c) const { return jacobian + cells[c].values; }
};

// out (t_a x t_b, row-major) = A' B for cells A (m x t_a) and B (m x t_b).
LINALG_HD void cells_transpose_times(const double* A, int t_a, const double* B, int t_b, int m, double* out) {
  for (int j = 0; j < t_a; ++j)
    for (int k = 0; k < t_b; ++k) {
      double v = 0.0;
      for (int a = 0; a < m; ++a) v += A[a * t_a + j] * B[a * t_b + k];
      out[j * t_b + k] = v;
    }
}

// out (t_a x t_b) = W_a V W_b' for W_a (t_a x e), W_b (t_b x e), V (e x e).
LINALG_HD void sandwich(const double* Wa, int t_a, const double* V, int e, const double* Wb, int t_b, double* out) {
  double WV[kMaxFBlockTangentSize * kMaxEBlockTangentSize];
  for (int j = 0; j < t_a; ++j)
    for (int q = 0; q < e; ++q) {
      double v = 0.0;
      for (int u = 0; u < e; ++u) v += Wa[j * e + u] * V[u * e + q];
      WV[j * e + q] = v;
    }
  for (int j = 0; j < t_a; ++j)
    for (int k = 0; k < t_b; ++k) {
      double v = 0.0;
      for (int q = 0; q < e; ++q) v += WV[j * e + q] * Wb[k * e + q];
      out[j * t_b + k] = v;
    }
}

// A residual block's row of cells as row_times reads it: its size, and per cell (in order) the tangent
// size and place in tangent vectors of its block, and whether it is the e-cell. NaturalRow reads them
// from JacobianCells' arrays; the GPU's point pass has them per slot (interleaved_jacobian.h).
struct NaturalRow {
  const BlockSparseView& v;
  int r;
  int first, e_cell;

  LINALG_HD NaturalRow(const BlockSparseView& view, int residual)
      : v(view), r(residual), first(view.row_start[residual]), e_cell(view.e_cell[residual]) {}
  LINALG_HD int rows() const { return v.rows(r); }
  LINALG_HD int cells() const { return v.row_start[r + 1] - first; }
  LINALG_HD int tangent(int i) const { return v.tangent_size[v.cells[first + i].block]; }
  LINALG_HD long offset(int i) const { return v.tangent_offset[v.cells[first + i].block]; }
  LINALG_HD bool is_e(int i) const { return first + i == e_cell; }
};

// u = the sum over a row's cells of J x (its e-cell left out when f_only), for rows of at most M values;
// x a tangent vector. The row's values are read at J[j * stride]: JacobianCells' layout (J its first
// cell, stride 1) or a warp-interleaved copy (interleaved_jacobian.h: stride kWarpLanes). Returns the
// position of the e-cell's first value in the row, or -1. The sums run in arrays of the bound's size,
// unrolled and guarded, so that on the GPU they stay in registers instead of read-modify-writes of
// memory; the order of the additions is the same.
template <int M, class Row>
LINALG_HD int row_times(const Row& row, const double* J, int stride, const double* x, bool f_only, double (&u)[M]) {
  const int m = row.rows();
#pragma unroll
  for (int a = 0; a < M; ++a) u[a] = 0.0;
  int e_position = -1;
  long j = 0;  // the cell's first value in the row
  for (int i = 0, n = row.cells(); i < n; ++i) {
    const int t = row.tangent(i);
    if (row.is_e(i)) {
      e_position = static_cast<int>(j);
      if (f_only) {
        j += static_cast<long>(m) * t;
        continue;
      }
    }
    const double* xb = x + row.offset(i);
#pragma unroll
    for (int a = 0; a < M; ++a) {
      if (a >= m) break;
      double sum = 0.0;
      for (int k = 0; k < t; ++k) sum += J[(j + a * t + k) * stride] * xb[k];
      u[a] += sum;
    }
    j += static_cast<long>(m) * t;
  }
  return e_position;
}

// rows_r = sum over residual r's cells of J x (f_only: its e-cell left out).
LINALG_HD void row_product(const BlockSparseView& v, int r, const double* x, bool f_only, double* rows) {
  double acc[kMaxResidualBlockSize];
  const NaturalRow row(v, r);
  row_times(row, row.cells() > 0 ? v.cell(row.first) : nullptr, 1, x, f_only, acc);
  double* out = rows + v.row_offset[r];
#pragma unroll
  for (int a = 0; a < kMaxResidualBlockSize; ++a)
    if (a < v.rows(r)) out[a] = acc[a];
}

// g = E'u for an m x e cell E read at E[j * stride] (row_times' layouts), rows of at most M values.
template <int M, int EMax>
LINALG_HD void cell_transpose_times(const double* E, int stride, int m, int e, const double (&u)[M], double (&g)[EMax]) {
#pragma unroll
  for (int k = 0; k < EMax; ++k) {
    g[k] = 0.0;
    if (k >= e) continue;
#pragma unroll
    for (int a = 0; a < M; ++a)
      if (a < m) g[k] += E[(a * e + k) * stride] * u[a];
  }
}

// u -= E w for an m x e cell E read at E[j * stride].
template <int M, int EMax>
LINALG_HD void cell_times_subtract(const double* E, int stride, int m, int e, const double (&w)[EMax], double (&u)[M]) {
#pragma unroll
  for (int a = 0; a < M; ++a) {
    if (a >= m) break;
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < EMax; ++k)
      if (k < e) sum += E[(a * e + k) * stride] * w[k];
    u[a] -= sum;
  }
}

// rows_r -= E_r w_p for residual r's e-block p; w an e-part vector (tangent offsets less f_tangent_size).
LINALG_HD void subtract_e_term(const BlockSparseView& v, int r, const double* w, double* rows) {
  const int c = v.e_cell[r];
  if (c < 0) return;
  const int b = v.cells[c].block, t = v.tangent_size[b], m = v.rows(r);
  const double* E = v.cell(c);
  const double* wb = w + (v.tangent_offset[b] - v.f_tangent_size);
  double* out = rows + v.row_offset[r];
  for (int a = 0; a < m; ++a) {
    double sum = 0.0;
    for (int q = 0; q < t; ++q) sum += E[a * t + q] * wb[q];
    out[a] -= sum;
  }
}

// ColumnChunks' arrays, and the two stages of a chunked column sum: a chunk's partial sums (at
// chunk * stride), then a block's chunks added in order.
struct ChunkView {
  const int* block;
  const int* position;
  const int* block_start;
  int first;   // the first block chunked
  int stride;  // values per chunk in the partial sums (chunk k's at k * stride)

  LINALG_HD int chunks_of(int b, int* end) const {
    *end = block_start[b - first + 1];
    return block_start[b - first];
  }
};

// Cells per chunk of the column sums (products and norms; the preconditioner's blocks, which hold a
// t x t partial each): the CPU and GPU engines chunk alike, so that both sum in the same order.
constexpr int kProductChunkCells = 32;
constexpr int kDiagonalChunkCells = 32;

// The partial sums' stride: a chunk of products holds t values, a chunk of diagonal blocks t x t.
inline int product_stride(const ColumnChunks& chunks) { return std::max(1, chunks.max_tangent); }
inline int diagonal_stride(const ColumnChunks& chunks) { return std::max(1, chunks.max_tangent * chunks.max_tangent); }

inline ChunkView view_of(const ColumnChunks& chunks, int stride) {
  return {chunks.block.data(), chunks.position.data(), chunks.block_start.data(), chunks.first, stride};
}

// The second stage adds a block's chunks as a warp does on the GPU: lane l takes chunks l, l + 32, ...
// in order, and the 32 lanes' sums meet in linalg_cuda's warp_sum tree. A block shared by every
// image has a chunk per 32 observations, too many for one thread to add in turn. The CPU engine
// follows the same order (warp_order_sum), so that both engines' sums have the same bits.
constexpr int kWarpLanes = 32;

// Lane `lane`'s sum of value j over block b's chunks lane, lane + 32, ...
LINALG_HD double lane_chunk_sum(const ChunkView& ch, int b, int lane, const double* partials, int j) {
  int end;
  double sum = 0.0;
  for (int k = ch.chunks_of(b, &end) + lane; k < end; k += kWarpLanes)
    sum += partials[static_cast<long>(k) * ch.stride + j];
  return sum;
}

// On the CPU: 32 lanes' values combined in warp_sum's tree, as lane 0 has them (lanes is overwritten).
inline double warp_tree_sum(double* lanes) {
  for (int offset = kWarpLanes / 2; offset > 0; offset >>= 1)
    for (int lane = 0; lane < offset; ++lane) lanes[lane] += lanes[lane + offset];
  return lanes[0];
}

// On the CPU: the 32 lanes' sums of value j combined in warp_sum's tree.
inline double warp_order_sum(const ChunkView& ch, int b, const double* partials, int j) {
  double lanes[kWarpLanes];
  for (int lane = 0; lane < kWarpLanes; ++lane) lanes[lane] = lane_chunk_sum(ch, b, lane, partials, j);
  return warp_tree_sum(lanes);
}

// acc += J' y (norms: the squares of J's columns) for an m x t cell J read at J[j * stride] (row_times'
// layouts); acc holds T >= t values, t of them used.
template <int T = kMaxFBlockTangentSize>
LINALG_HD void cell_column_terms(const double* J, int stride, int m, int t, const double* y, bool norms, double* acc) {
  for (int a = 0; a < m; ++a)
#pragma unroll
    for (int j = 0; j < T; ++j)
      if (j < t) {
        const double value = J[(a * t + j) * stride];
        acc[j] += value * (norms ? value : y[a]);
      }
}

// The first stage of a product (or norms) chunk on a warp: lane `lane` adds its cell's J_b' rows
// (norms: the squares of its columns) to acc (kMaxFBlockTangentSize values, the block's t used).
// A chunk holds at most a warp's cells, so that all of them are read at once.
static_assert(kProductChunkCells == kWarpLanes, "a product chunk is a cell per lane");
LINALG_HD void column_chunk_lane(const BlockSparseView& v, const ChunkView& ch, int k, int lane, const double* rows,
                                 bool norms, double* acc) {
  const int q = ch.position[k] + lane;
  if (q >= ch.position[k + 1]) return;
  const int c = v.column_cells[q];
  const int r = v.cells[c].residual;
  cell_column_terms(v.cell(c), 1, v.rows(r), v.tangent_size[ch.block[k]], norms ? nullptr : rows + v.row_offset[r],
                    norms, acc);
}

// Chunk k's J_b' rows (norms: its squared column norms instead) at partials + k * stride,
// its lanes' sums combined as warp_sum does (CPU).
inline void column_chunk(const BlockSparseView& v, const ChunkView& ch, int k, const double* rows, bool norms,
                         double* partials) {
  const int t = v.tangent_size[ch.block[k]];
  double lanes[kMaxFBlockTangentSize][kWarpLanes];
  for (int lane = 0; lane < kWarpLanes; ++lane) {
    double acc[kMaxFBlockTangentSize] = {};
    column_chunk_lane(v, ch, k, lane, rows, norms, acc);
    for (int j = 0; j < t; ++j) lanes[j][lane] = acc[j];
  }
  for (int j = 0; j < t; ++j) partials[static_cast<long>(k) * ch.stride + j] = warp_tree_sum(lanes[j]);
}

// out[tangent_offset[b] ...] = the sum of block b's chunks (CPU).
inline void column_chunks_sum(const BlockSparseView& v, const ChunkView& ch, int b, const double* partials, double* out) {
  for (int j = 0; j < v.tangent_size[b]; ++j)
    out[v.tangent_offset[b] + j] = warp_order_sum(ch, b, partials, j);
}

// The e-block functions take kE, the tangent size of every e-block when the structure has one
// (SchurSizes::e), or 0 to read each block's: a size known when compiled keeps a block's arrays in
// registers, where sizes read at run time leave them in local memory.

// V_p^-1 = (E_p'E_p + D_p^2)^-1 for e-block b (row-major, stride kEBlockValues); returns the
// regularisations invert_spd_regularised needed.
template <int kE = 0>
LINALG_HD int e_block_inverse(const BlockSparseView& v, int b, const double* d2, double* v_inverse) {
  const int t = kE > 0 ? kE : v.tangent_size[b];
  double V[kEBlockValues], EtE[kEBlockValues], work[kEBlockValues];
  for (int k = 0; k < t * t; ++k) V[k] = 0.0;
  for (int q = v.column_start[b]; q < v.column_start[b + 1]; ++q) {
    const int c = v.column_cells[q];
    cells_transpose_times(v.cell(c), t, v.cell(c), t, v.rows(v.cells[c].residual), EtE);
    for (int k = 0; k < t * t; ++k) V[k] += EtE[k];
  }
  for (int k = 0; k < t; ++k) V[k * t + k] += d2[v.tangent_offset[b] + k];
  const int regularised = invert_spd_regularised(V, t, work);
  double* out = v_inverse + static_cast<long>(b - v.first_e_block) * kEBlockValues;
  for (int k = 0; k < t * t; ++k) out[k] = V[k];
  return regularised;
}

// out (e-part vector) at e-block b = V_b^-1 E_b' rows.
template <int kE = 0>
LINALG_HD void e_block_solve(const BlockSparseView& v, int b, const double* v_inverse, const double* rows, double* out) {
  const int t = kE > 0 ? kE : v.tangent_size[b];
  double z[kMaxEBlockTangentSize];
#pragma unroll
  for (int k = 0; k < kMaxEBlockTangentSize; ++k) z[k] = 0.0;
  for (int q = v.column_start[b]; q < v.column_start[b + 1]; ++q) {
    const int c = v.column_cells[q];
    const int r = v.cells[c].residual;
    const double* E = v.cell(c);
    const double* y = rows + v.row_offset[r];
    for (int a = 0, m = v.rows(r); a < m; ++a)
#pragma unroll
      for (int k = 0; k < kMaxEBlockTangentSize; ++k)
        if (k < t) z[k] += E[a * t + k] * y[a];
  }
  const double* V = v_inverse + static_cast<long>(b - v.first_e_block) * kEBlockValues;
  double* o = out + (v.tangent_offset[b] - v.f_tangent_size);
#pragma unroll
  for (int j = 0; j < kMaxEBlockTangentSize; ++j) {
    if (j >= t) break;
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < kMaxEBlockTangentSize; ++k)
      if (k < t) sum += V[j * t + k] * z[k];
    o[j] = sum;
  }
}

// Entry (j, l) of part of f-block b's diagonal block of S (schur: F_b'F_b - sum_p W_pb V_p^-1 W_pb', W_pb
// the sum of F_rb'E_r over the residuals r of e-block p that touch b) or of F'F (not schur), over
// positions [begin, end) of b's cells sorted by e-block, which hold whole e-blocks' runs. One entry
// alone, so that a GPU thread can own it: only rows j and l of W are formed, in arrays of the bound's
// size, unrolled and guarded (registers on the GPU).
LINALG_HD double preconditioner_entry(const BlockSparseView& v, int b, int begin, int end, bool schur,
                                      const double* v_inverse, int j, int l) {
  const int t = v.tangent_size[b];
  double S = 0.0;
  double Wj[kMaxEBlockTangentSize], Wl[kMaxEBlockTangentSize];
  int current = -1, e = 0;
  for (int q = begin; q <= end; ++q) {
    const int c = q < end ? v.e_sorted_cells[q] : -1;
    const int r = c >= 0 ? v.cells[c].residual : -1;
    const int m = r >= 0 ? v.rows(r) : 0;
    const double* F = c >= 0 ? v.cell(c) : nullptr;
    double FF = 0.0;
    for (int a = 0; a < m; ++a) FF += F[a * t + j] * F[a * t + l];
    S += FF;
    if (!schur) continue;
    const int ec = r >= 0 ? v.e_cell[r] : -1;
    const int p = ec >= 0 ? v.cells[ec].block : -1;
    if (p != current && current >= 0) {  // the previous e-block's W rows are complete: S -= W_j V^-1 W_l'
      const double* V = v_inverse + static_cast<long>(current - v.first_e_block) * kEBlockValues;
      double WVW = 0.0;
#pragma unroll
      for (int k = 0; k < kMaxEBlockTangentSize; ++k) {
        if (k >= e) break;
        double WV = 0.0;
#pragma unroll
        for (int u = 0; u < kMaxEBlockTangentSize; ++u)
          if (u < e) WV += Wj[u] * V[u * e + k];
        WVW += WV * Wl[k];
      }
      S -= WVW;
    }
    if (p < 0) {
      current = -1;
      continue;
    }
    if (p != current) {
      current = p;
      e = v.tangent_size[p];
#pragma unroll
      for (int k = 0; k < kMaxEBlockTangentSize; ++k) Wj[k] = Wl[k] = 0.0;
    }
    const double* E = v.cell(ec);
#pragma unroll
    for (int k = 0; k < kMaxEBlockTangentSize; ++k) {
      if (k >= e) break;
      double FEj = 0.0, FEl = 0.0;
      for (int a = 0; a < m; ++a) {
        FEj += F[a * t + j] * E[a * e + k];
        FEl += F[a * t + l] * E[a * e + k];
      }
      Wj[k] += FEj;
      Wl[k] += FEl;
    }
  }
  return S;
}

// The entries of a t x t block that its lower triangle holds: entry i is (j, l), j >= l, row by row.
LINALG_HD int lower_triangle_entries(int t) { return t * (t + 1) / 2; }
LINALG_HD void lower_triangle_entry(int i, int* j, int* l) {
  int row = 0;
  while ((row + 1) * (row + 2) / 2 <= i) ++row;
  *j = row;
  *l = i - row * (row + 1) / 2;
}

// Adds D_b^2 to block b's diagonal block S and inverts it in place; returns the regularisations.
LINALG_HD int preconditioner_finish(const BlockSparseView& v, int b, const double* d2, double* S) {
  const int t = v.tangent_size[b];
  for (int k = 0; k < t; ++k) S[k * t + k] += d2[v.tangent_offset[b] + k];
  double work[kMaxFBlockTangentSize * kMaxFBlockTangentSize];
  return invert_spd_regularised(S, t, work);
}

// Entry i of the lower triangle of chunk k's part of its block's preconditioner block (ColumnChunks
// over whole e-groups), written to both triangles of its partial: the block is symmetric.
LINALG_HD void diagonal_chunk_entry(const BlockSparseView& v, const ChunkView& ch, int k, int i, bool schur,
                                    const double* v_inverse, double* partials) {
  const int b = ch.block[k], t = v.tangent_size[b];
  int j, l;
  lower_triangle_entry(i, &j, &l);
  double* S = partials + static_cast<long>(k) * ch.stride;
  S[j * t + l] = S[l * t + j] = preconditioner_entry(v, b, ch.position[k], ch.position[k + 1], schur, v_inverse, j, l);
}

// Block b's preconditioner block from its chunks, with D^2, inverted at out; returns the
// regularisations (CPU).
inline int diagonal_chunks_sum(const BlockSparseView& v, const ChunkView& ch, int b, const double* partials,
                               const double* d2, double* out) {
  const int t = v.tangent_size[b];
  for (int j = 0; j < t * t; ++j) out[j] = warp_order_sum(ch, b, partials, j);
  return preconditioner_finish(v, b, d2, out);
}

// -(J s)_r'(f_r + (J s)_r / 2): residual r's share of the model cost change, js = J s.
LINALG_HD double model_cost_change(const BlockSparseView& v, int r, const double* js, const double* f) {
  double sum = 0.0;
  for (long k = v.row_offset[r]; k < v.row_offset[r + 1]; ++k) sum += js[k] * (f[k] + 0.5 * js[k]);
  return -sum;
}

}  // namespace ceres_cuda::detail
