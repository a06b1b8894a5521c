#pragma once
// The reduced camera system that the general GPU engine's PCG solves (ITERATIVE_SCHUR), as a
// matrix-free operator: S x = F'(F x - E V^-1 E'F x) + D_f^2 x, taken on the warp-interleaved copies of
// the Jacobian where they fit (InterleavedSchurProduct) and on its cells otherwise (CellProducts).
// Like every LinearOperator it only launches on the stream, so that the PCG can capture it.
#include <cstddef>

#include "cell_products.h"
#include "interleaved_schur_product.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/linear_operator.h"

namespace ceres_cuda::detail {

class SchurOperator final : public linalg_cuda::LinearOperator {
 public:
  // interleaved: null where the copies do not fit (refreshed by the engine). v_inverse and d2: the
  // step's e-block inverses and damping; rows (a value per residual row) and e_values (per e-tangent
  // value): scratch. All outlive the operator.
  SchurOperator(const CellProducts& products, const InterleavedSchurProduct* interleaved, const double* v_inverse,
                const double* d2, double* rows, double* e_values);

  std::size_t rows() const override { return size_; }
  std::size_t cols() const override { return size_; }
  void apply(const linalg_cuda::DeviceVector<double>& x, linalg_cuda::DeviceVector<double>& y) const override {
    apply(x.data(), y.data());
  }
  void apply(const double* x, double* y) const;

 private:
  const CellProducts& products_;
  const InterleavedSchurProduct* interleaved_;
  const double *v_inverse_, *d2_;
  double *rows_, *e_values_;
  std::size_t size_;
  int f_blocks_;
};

}  // namespace ceres_cuda::detail
