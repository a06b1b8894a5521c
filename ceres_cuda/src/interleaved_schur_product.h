#pragma once
// The general GPU engine's implicit Schur product on warp-interleaved copies of the Jacobian
// (interleaved_jacobian.h, interleaved_schur_kernels.cuh): the copies on the device, their refill after
// each Jacobian, and the two passes that leave per column chunk the partial sums of
// F'(F x - E V^-1 E'F x), which the engine adds up per f-block (column_sum_kernel) with the damping.
#include <cuda_runtime.h>

#include <memory>

#include "block_schur_math.h"
#include "jacobian_cells.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class InterleavedSchurProduct {
 public:
  // Null where the copies would take more than half the free device memory, or where the rows' offsets
  // or shapes do not fit the descriptions' ints: the engine's product reads JacobianCells' layout then.
  // product_chunks: the engine's ColumnChunks over every variable block (the f-blocks' come first).
  static std::unique_ptr<InterleavedSchurProduct> make(const SchurStructure& s, const JacobianCells& cells,
                                                       const ColumnChunks& product_chunks, cudaStream_t stream);

  // The Jacobian changed: refresh() refills the copies before the next product.
  void jacobian_changed() { stale_ = true; }
  // Refills the copies from view's Jacobian if it changed (on the stream; not inside a graph capture).
  void refresh(const BlockSparseView& view, const ChunkView& product_chunks);
  // rows = F x - E V^-1 E'F x for every row, and chunk k's F_b' rows at partials + k * stride.
  void apply(const BlockSparseView& view, const ChunkView& product_chunks, const double* x, const double* v_inverse,
             double* rows, double* partials) const;

  ~InterleavedSchurProduct();

 private:
  struct Tiles;  // the device views (interleaved_schur_product.cu)
  explicit InterleavedSchurProduct(cudaStream_t stream);

  // The point pass's bounds on the rows' and e-blocks' sizes, the column pass's on the f-blocks'.
  enum class RowShape { Rows2E3, Rows4E4, Bounds };
  enum class ColumnShape { Tangent3, Tangent9, Bounds };

  cudaStream_t stream_;
  std::unique_ptr<Tiles> tiles_;
  linalg_cuda::DeviceBuffer slot_residual_, slot_e_block_, slot_row_, tile_start_, tile_base_, tile_width_,
      column_base_, lane_row_, lane_rows_;
  linalg_cuda::DeviceVector<double> row_values_, column_values_;
  RowShape row_shape_ = RowShape::Bounds;
  ColumnShape column_shape_ = ColumnShape::Bounds;
  bool stale_ = true;
};

}  // namespace ceres_cuda::detail
