#include "interleaved_schur_product.h"

#include <algorithm>
#include <climits>

#include "device_upload.h"
#include "interleaved_jacobian.h"
#include "interleaved_schur_kernels.cuh"
#include "linalg_cuda/backend.h"
#include "linalg_cuda/cuda_check.h"

namespace ceres_cuda::detail {

using linalg_cuda::detail::blocks_for;

struct InterleavedSchurProduct::Tiles {
  RowTilesView rows;
  ColumnTilesView columns;
};

InterleavedSchurProduct::InterleavedSchurProduct(cudaStream_t stream) : stream_(stream) {}
InterleavedSchurProduct::~InterleavedSchurProduct() = default;

std::unique_ptr<InterleavedSchurProduct> InterleavedSchurProduct::make(const SchurStructure& s,
                                                                       const JacobianCells& cells,
                                                                       const ColumnChunks& product_chunks,
                                                                       cudaStream_t stream) {
  const RowTiles rows(s, cells);
  const int f_chunks = product_chunks.block_start[s.num_f_blocks];
  const ColumnTiles columns(product_chunks, f_chunks, cells);
  const bool fits_int =
      cells.num_rows < INT_MAX && s.tangent_size() < INT_MAX && rows.row_entries <= kSlotFirstCell + 2 * 254;
  const std::size_t bytes = (rows.num_values + columns.num_values) * sizeof(double) +
                            (rows.row_entries * rows.slots() + 2 * columns.lanes) * sizeof(int);
  if (!fits_int || rows.tiles() == 0 || bytes > linalg_cuda::free_device_memory() / 2) return nullptr;

  std::unique_ptr<InterleavedSchurProduct> p(new InterleavedSchurProduct(stream));
  p->slot_residual_ = upload_array(rows.slot_residual, stream);
  p->slot_e_block_ = upload_array(rows.slot_e_block, stream);
  p->slot_row_ = upload_array(rows.slot_row.get(), static_cast<std::size_t>(rows.row_entries) * rows.slots(), stream);
  p->tile_start_ = upload_array(rows.tile_start, stream);
  p->tile_base_ = upload_array(rows.tile_base, stream);
  p->tile_width_ = upload_array(rows.tile_width, stream);
  p->column_base_ = upload_array(columns.base, stream);
  p->lane_row_ = upload_array(columns.lane_row.get(), columns.lanes, stream);
  p->lane_rows_ = upload_array(columns.lane_rows.get(), columns.lanes, stream);
  p->row_values_ = linalg_cuda::DeviceVector<double>(std::max<long>(1, rows.num_values));
  p->column_values_ = linalg_cuda::DeviceVector<double>(std::max<long>(1, columns.num_values));
  p->tiles_ = std::make_unique<Tiles>(Tiles{
      {p->slot_residual_.as<int>(), p->slot_e_block_.as<int>(), p->slot_row_.as<int>(),
       rows.slots(), p->tile_start_.as<int>(), p->tile_base_.as<long>(),
       p->tile_width_.as<int>(), rows.tiles(), p->row_values_.data()},
      {p->column_base_.as<long>(), p->lane_row_.as<int>(), p->lane_rows_.as<int>(), f_chunks,
       p->column_values_.data()}});
  int max_f_tangent = 0;
  for (int b = 0; b < s.num_f_blocks; ++b) max_f_tangent = std::max(max_f_tangent, cells.tangent_size[b]);
  p->column_shape_ = max_f_tangent <= 3   ? ColumnShape::Tangent3
                     : max_f_tangent <= 9 ? ColumnShape::Tangent9
                                          : ColumnShape::Bounds;
  p->row_shape_ = rows.max_rows <= 2 && rows.max_e <= 3 ? RowShape::Rows2E3
                  : rows.max_rows <= 4                  ? RowShape::Rows4E4
                                                        : RowShape::Bounds;
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));  // the plans' host arrays go out of scope
  return p;
}

void InterleavedSchurProduct::refresh(const BlockSparseView& view, const ChunkView& product_chunks) {
  if (!stale_) return;
  const auto warps = [](long n) { return blocks_for(static_cast<std::size_t>(n) * kWarpLanes); };
  fill_row_tiles_kernel<<<warps(tiles_->rows.tiles), kBlockThreads, 0, stream_>>>(view, tiles_->rows);
  LINALG_CUDA_CHECK_LAUNCH();
  if (tiles_->columns.chunks > 0) {
    fill_column_tiles_kernel<<<warps(tiles_->columns.chunks), kBlockThreads, 0, stream_>>>(view, product_chunks,
                                                                                          tiles_->columns);
    LINALG_CUDA_CHECK_LAUNCH();
  }
  stale_ = false;
}

namespace {

template <int M, int E>
void point_pass(const BlockSparseView& view, const RowTilesView& tiles, const double* x, const double* v_inverse,
                double* rows, cudaStream_t stream) {
  tile_point_pass_kernel<M, E><<<blocks_for(static_cast<std::size_t>(tiles.tiles) * kWarpLanes), kBlockThreads, 0,
                                 stream>>>(view, tiles, x, v_inverse, rows);
  LINALG_CUDA_CHECK_LAUNCH();
}

template <int T>
void column_pass(const BlockSparseView& view, const ChunkView& chunks, const ColumnTilesView& tiles,
                 const double* rows, double* partials, cudaStream_t stream) {
  if (tiles.chunks == 0) return;
  tile_column_kernel<T><<<blocks_for(static_cast<std::size_t>(tiles.chunks) * kWarpLanes), kBlockThreads, 0,
                          stream>>>(view, chunks, tiles, rows, partials);
  LINALG_CUDA_CHECK_LAUNCH();
}

}  // namespace

void InterleavedSchurProduct::apply(const BlockSparseView& view, const ChunkView& product_chunks, const double* x,
                                    const double* v_inverse, double* rows, double* partials) const {
  switch (row_shape_) {
    case RowShape::Rows2E3: point_pass<2, 3>(view, tiles_->rows, x, v_inverse, rows, stream_); break;
    case RowShape::Rows4E4: point_pass<4, kMaxEBlockTangentSize>(view, tiles_->rows, x, v_inverse, rows, stream_); break;
    case RowShape::Bounds:
      point_pass<kMaxResidualBlockSize, kMaxEBlockTangentSize>(view, tiles_->rows, x, v_inverse, rows, stream_);
      break;
  }
  switch (column_shape_) {
    case ColumnShape::Tangent3: column_pass<3>(view, product_chunks, tiles_->columns, rows, partials, stream_); break;
    case ColumnShape::Tangent9: column_pass<9>(view, product_chunks, tiles_->columns, rows, partials, stream_); break;
    case ColumnShape::Bounds:
      column_pass<kMaxFBlockTangentSize>(view, product_chunks, tiles_->columns, rows, partials, stream_);
      break;
  }
}

}  // namespace ceres_cuda::detail
