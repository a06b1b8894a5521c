#pragma once
// The products over the Jacobian's cells (JacobianCells' layout on the device) that the general GPU
// engine's steps, its Schur operator and its preconditioner are made of, with block_schur_math.h's
// functions (block_schur_kernels.cuh). Column sums (J' rows, the squared column norms) go by ColumnChunks,
// a warp per chunk and then a warp per block; the diagonal blocks of F'F or S by chunks of their own, a
// launch per tangent size. Every call launches on the stream and returns without waiting.
#include <cuda_runtime.h>

#include <vector>

#include "block_schur_math.h"
#include "jacobian_cells.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class CellProducts {
 public:
  // view: the cells' arrays and the Jacobian on the device; product_chunks: the column chunks over every
  // variable block (the f-blocks' first), kProductChunkCells cells each.
  CellProducts(const SchurStructure& s, const JacobianCells& cells, const BlockSparseView& view,
               const ColumnChunks& product_chunks, cudaStream_t stream);

  const BlockSparseView& view() const { return view_; }
  const ChunkView& product_chunks() const { return product_chunks_; }
  const ChunkView& diagonal_chunks() const { return diagonal_chunks_; }
  // The first stage's sums of column_sums, which InterleavedSchurProduct also fills.
  double* product_partials() const { return product_partials_.data(); }
  // The diagonal blocks' partial sums of the last diagonal_blocks().
  const double* diagonal_partials() const { return diagonal_partials_.data(); }

  // out = J' rows over variable blocks [first, last) (rows: a value per residual row).
  void column_sums(const double* rows, int first, int last, double* out) const;
  // out = the squared column norms of J over variable blocks [first, last).
  void column_norms(int first, int last, double* out) const;
  // out = the sum of product_partials()'s chunks over blocks [first, last) (column_sums' second stage).
  void sum_product_partials(int first, int last, double* out) const;
  // rows = J x (f_only: over the f-blocks' cells, x an f-vector).
  void row_product(const double* x, bool f_only, double* rows) const;
  // v_inverse = (E_p'E_p + D_p^2)^-1 per e-block p; *singular counts those regularised.
  void e_inverses(const double* d2, double* v_inverse, int* singular) const;
  // out (e-part) = V^-1 E' rows.
  void e_solve(const double* v_inverse, const double* rows, double* out) const;
  // rows -= E w.
  void subtract_e(const double* w, double* rows) const;
  // The diagonal blocks of F'F (schur false) or of F'F - F'E V^-1 E'F, chunk by chunk, into
  // diagonal_partials().
  void diagonal_blocks(bool schur, const double* v_inverse) const;
  // Each f-block's diagonal block (t x t at offsets[b] of blocks) from diagonal_partials(), plus D^2, then
  // inverted; *singular counts those regularised.
  void finish_diagonal_blocks(const double* d2, const long* offsets, double* blocks, int* singular) const;
  // z_b = B_b r_b per f-block b, B_b at offsets[b] of inverse.
  void block_jacobi(const long* offsets, const double* inverse, const double* r, double* z) const;
  // out += d2 .* x over the f-part.
  void add_damping(const double* d2, const double* x, double* out) const;
  // jacobian (the view's) with its columns times their block's scaling.
  void scale_columns(const double* scaling, double* jacobian) const;
  // Per residual block, -(J s)'(f + J s / 2) from js = J s.
  void model_change(const double* js, const double* f, double* per_residual) const;

 private:
  const SchurStructure& s_;
  cudaStream_t stream_;
  BlockSparseView view_;
  int residuals_ = 0, cells_ = 0;
  bool points_ = false;  // every e-block has 3 tangent values: the e-block kernels specialised for them
  std::vector<linalg_cuda::DeviceBuffer> storage_;
  ChunkView product_chunks_{}, diagonal_chunks_{};
  std::vector<int> product_chunk_start_;
  ChunksBySize diagonal_chunks_by_size_;  // the diagonal chunks by tangent size, for their kernel's launches
  linalg_cuda::DeviceBuffer d_diagonal_chunks_by_size_;
  mutable linalg_cuda::DeviceVector<double> product_partials_, diagonal_partials_;
};

}  // namespace ceres_cuda::detail
