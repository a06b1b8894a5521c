#include "cell_products.h"

#include <algorithm>

#include "block_schur_kernels.cuh"
#include "device_upload.h"
#include "linalg_cuda/cuda_check.h"

namespace ceres_cuda::detail {

using linalg_cuda::detail::blocks_for;

namespace {

// ColumnChunks' arrays on the device (kept in *storage), as the kernels take them.
ChunkView upload_chunks(const ColumnChunks& chunks, int stride, std::vector<linalg_cuda::DeviceBuffer>* storage,
                        cudaStream_t stream) {
  const std::size_t at = storage->size();
  storage->push_back(upload_array(chunks.block, stream));
  storage->push_back(upload_array(chunks.position, stream));
  storage->push_back(upload_array(chunks.block_start, stream));
  return {(*storage)[at].as<int>(), (*storage)[at + 1].as<int>(), (*storage)[at + 2].as<int>(), chunks.first, stride};
}

unsigned warps_for(long items) { return blocks_for(static_cast<std::size_t>(items) * kWarpLanes); }

}  // namespace

CellProducts::CellProducts(const SchurStructure& s, const JacobianCells& cells, const BlockSparseView& view,
                           const ColumnChunks& product_chunks, cudaStream_t stream)
    : s_(s),
      stream_(stream),
      view_(view),
      residuals_(static_cast<int>(s.residuals.size())),
      cells_(static_cast<int>(cells.cells.size())),
      points_(detect_schur_sizes(s).e == 3) {
  storage_.reserve(6);  // the views below point into it
  const ColumnChunks diagonal_chunks(cells, 0, s.num_f_blocks, kDiagonalChunkCells, true);
  product_chunks_ = upload_chunks(product_chunks, product_stride(product_chunks), &storage_, stream);
  diagonal_chunks_ = upload_chunks(diagonal_chunks, diagonal_stride(diagonal_chunks), &storage_, stream);
  product_chunk_start_ = product_chunks.block_start;
  diagonal_chunks_by_size_ = ChunksBySize(diagonal_chunks, cells.tangent_size);
  d_diagonal_chunks_by_size_ = upload_array(diagonal_chunks_by_size_.chunk, stream);
  product_partials_ = linalg_cuda::DeviceVector<double>(std::max(1, product_chunks.size()) *
                                                        static_cast<std::size_t>(product_chunks_.stride));
  diagonal_partials_ = linalg_cuda::DeviceVector<double>(std::max(1, diagonal_chunks.size()) *
                                                         static_cast<std::size_t>(diagonal_chunks_.stride));
}

void CellProducts::column_sums(const double* rows, int first, int last, double* out) const {
  const int first_chunk = product_chunk_start_[first], last_chunk = product_chunk_start_[last];
  column_chunk_kernel<<<warps_for(last_chunk - first_chunk), kBlockThreads, 0, stream_>>>(
      view_, product_chunks_, first_chunk, last_chunk, rows, rows == nullptr, product_partials_.data());
  LINALG_CUDA_CHECK_LAUNCH();
  sum_product_partials(first, last, out);
}

void CellProducts::column_norms(int first, int last, double* out) const { column_sums(nullptr, first, last, out); }

void CellProducts::sum_product_partials(int first, int last, double* out) const {
  column_sum_kernel<<<warps_for(last - first), kBlockThreads, 0, stream_>>>(view_, product_chunks_, first, last,
                                                                            product_partials_.data(), out);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::row_product(const double* x, bool f_only, double* rows) const {
  row_product_kernel<<<blocks_for(residuals_), kBlockThreads, 0, stream_>>>(view_, residuals_, x, f_only, rows);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::e_inverses(const double* d2, double* v_inverse, int* singular) const {
  const int first = s_.first_e_block(), last = s_.num_variable_blocks();
  const unsigned grid = blocks_for(s_.num_e_blocks, kNarrowBlockThreads);
  if (points_)
    e_inverse_kernel<3><<<grid, kNarrowBlockThreads, 0, stream_>>>(view_, first, last, d2, v_inverse, singular);
  else
    e_inverse_kernel<0><<<grid, kNarrowBlockThreads, 0, stream_>>>(view_, first, last, d2, v_inverse, singular);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::e_solve(const double* v_inverse, const double* rows, double* out) const {
  const int first = s_.first_e_block(), last = s_.num_variable_blocks();
  const unsigned grid = blocks_for(s_.num_e_blocks, kNarrowBlockThreads);
  if (points_)
    e_solve_kernel<3><<<grid, kNarrowBlockThreads, 0, stream_>>>(view_, first, last, v_inverse, rows, out);
  else
    e_solve_kernel<0><<<grid, kNarrowBlockThreads, 0, stream_>>>(view_, first, last, v_inverse, rows, out);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::subtract_e(const double* w, double* rows) const {
  subtract_e_kernel<<<blocks_for(residuals_), kBlockThreads, 0, stream_>>>(view_, residuals_, w, rows);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::diagonal_blocks(bool schur, const double* v_inverse) const {
  const ChunksBySize& groups = diagonal_chunks_by_size_;
  for (int g = 0; g < groups.groups(); ++g) {
    const int first = groups.group_start[g], count = groups.group_start[g + 1] - first, t = groups.tangent[g];
    const unsigned blocks = blocks_for(static_cast<std::size_t>(count) * lower_triangle_entries(t));
    diagonal_chunk_kernel<<<blocks, kBlockThreads, 0, stream_>>>(view_, diagonal_chunks_,
                                                                 d_diagonal_chunks_by_size_.as<int>() + first, count, t,
                                                                 schur, v_inverse, diagonal_partials_.data());
    LINALG_CUDA_CHECK_LAUNCH();
  }
}

void CellProducts::finish_diagonal_blocks(const double* d2, const long* offsets, double* blocks, int* singular) const {
  diagonal_sum_kernel<<<warps_for(s_.num_f_blocks), kBlockThreads, 0, stream_>>>(
      view_, diagonal_chunks_, s_.num_f_blocks, diagonal_partials_.data(), d2, offsets, blocks, singular);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::block_jacobi(const long* offsets, const double* inverse, const double* r, double* z) const {
  block_jacobi_kernel<<<blocks_for(s_.num_f_blocks), kBlockThreads, 0, stream_>>>(view_, s_.num_f_blocks, offsets,
                                                                                  inverse, r, z);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::add_damping(const double* d2, const double* x, double* out) const {
  const long nf = s_.f_tangent_size;
  add_damping_kernel<<<blocks_for(nf), kBlockThreads, 0, stream_>>>(nf, d2, x, out);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::scale_columns(const double* scaling, double* jacobian) const {
  scale_cells_kernel<<<blocks_for(cells_), kBlockThreads, 0, stream_>>>(view_, cells_, scaling, jacobian);
  LINALG_CUDA_CHECK_LAUNCH();
}

void CellProducts::model_change(const double* js, const double* f, double* per_residual) const {
  model_change_kernel<<<blocks_for(residuals_), kBlockThreads, 0, stream_>>>(view_, residuals_, js, f, per_residual);
  LINALG_CUDA_CHECK_LAUNCH();
}

}  // namespace ceres_cuda::detail
