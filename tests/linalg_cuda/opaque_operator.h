#pragma once
// A matrix-free operator for the CG tests: another operator behind the interface only (its apply), so
// that the solver takes its generic path (the operator's apply, then its own dot kernels), as it does
// for ceres_cuda's Schur complement and any user's operator.
#include <cstddef>

#include "linalg_cuda/linear_operator.h"

namespace cg_test {

class OpaqueOperator : public linalg_cuda::LinearOperator {
 public:
  explicit OpaqueOperator(const linalg_cuda::LinearOperator& a) : a_(a) {}
  std::size_t rows() const override { return a_.rows(); }
  std::size_t cols() const override { return a_.cols(); }
  void apply(const linalg_cuda::DeviceVector<double>& x, linalg_cuda::DeviceVector<double>& y) const override {
    a_.apply(x, y);
  }

 private:
  const linalg_cuda::LinearOperator& a_;
};

}  // namespace cg_test
