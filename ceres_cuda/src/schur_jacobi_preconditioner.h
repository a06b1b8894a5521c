#pragma once
// The general GPU engine's preconditioner for its PCG (ITERATIVE_SCHUR): per f-block the inverse of the
// diagonal block of S (SCHUR_JACOBI) or of F'F (JACOBI), plus D_f^2, refilled at each step from the
// diagonal chunks of CellProducts and applied block by block.
#include <cstddef>
#include <vector>

#include "cell_products.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/preconditioner.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class SchurJacobiPreconditioner final : public linalg_cuda::Preconditioner {
 public:
  // products outlives the preconditioner.
  SchurJacobiPreconditioner(const SchurStructure& s, const CellProducts& products, cudaStream_t stream);

  // The step's blocks: of S (schur) or of F'F, plus d2, inverted; *singular (on the device) counts the
  // blocks regularised. Launches without waiting.
  void update(bool schur, const double* d2, const double* v_inverse, int* singular);

  std::size_t size() const override { return size_; }
  void apply(const linalg_cuda::DeviceVector<double>& r, linalg_cuda::DeviceVector<double>& z) const override {
    products_.block_jacobi(offsets_.as<long>(), blocks_.data(), r.data(), z.data());
  }

  // The inverted blocks, f-block after f-block (t x t each, row-major), for the engine's tests.
  std::vector<double> blocks() const { return blocks_.to_std(); }

 private:
  const CellProducts& products_;
  std::size_t size_;
  linalg_cuda::DeviceBuffer offsets_;  // per f-block, its block's first value in blocks_
  linalg_cuda::DeviceVector<double> blocks_;
};

}  // namespace ceres_cuda::detail
