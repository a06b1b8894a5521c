#pragma once
// A test operator that takes the CG's direction update and p'Ap on itself (FusedCgOperator::
// apply_cg_step), as ceres_cuda's Schur complement does, around any other operator's product: its own
// kernels for p = z + beta p and for p'q (a fixed-order reduction), the wrapped operator for q = A p.
#include <cstddef>

#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/fused_cg_operator.h"
#include "linalg_cuda/linear_operator.h"
#include "opaque_operator.h"

namespace cg_test {

class FusedStepOperator : public OpaqueOperator, public linalg_cuda::FusedCgOperator {
 public:
  explicit FusedStepOperator(const linalg_cuda::LinearOperator& a);
  void apply_unless_stopped(const linalg_cuda::DeviceVector<double>& x, linalg_cuda::DeviceVector<double>& y,
                            const int* /*stopped*/) const override {
    apply(x, y);
  }
  bool apply_cg_step(const linalg_cuda::CgProductStep& step) const override;
  // How many times the solver handed it an iteration (enqueued, captured or not).
  int steps_taken() const { return steps_; }

 private:
  mutable linalg_cuda::DeviceBuffer partials_;  // one per block of the dot kernel, then its ticket
  mutable int steps_ = 0;
};

}  // namespace cg_test
