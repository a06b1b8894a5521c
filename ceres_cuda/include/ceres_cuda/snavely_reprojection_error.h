#pragma once
// SnavelyReprojectionError: the BAL camera model (angle-axis R, t, f, k1, k2; see bal_problem.h) as a
// ceres::SizedCostFunction<2, 9, 3> with analytic derivatives. It is an ordinary Ceres cost function
// (use it with ceres::Solve as with the AutoDiff functor of Ceres' bundle_adjuster example), and when
// every residual block of a problem uses it, ceres_cuda::Solve evaluates residuals and Jacobians on
// the GPU (the "fast path") instead of calling Evaluate on CPU threads.
#include <ceres/sized_cost_function.h>

namespace ceres_cuda {

class SnavelyReprojectionError final : public ceres::SizedCostFunction<2, 9, 3> {
 public:
  SnavelyReprojectionError(double observed_x, double observed_y) : observed_x_(observed_x), observed_y_(observed_y) {}

  // parameters[0]: camera (9), parameters[1]: point (3). Returns false (as Ceres expects from a cost
  // function that cannot evaluate) when the point lies in the camera's z = 0 plane.
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override;

  double observed_x() const { return observed_x_; }
  double observed_y() const { return observed_y_; }

  // For ceres::Problem::AddResidualBlock, like the Create() of Ceres' examples.
  static ceres::CostFunction* Create(double observed_x, double observed_y) {
    return new SnavelyReprojectionError(observed_x, observed_y);
  }

 private:
  double observed_x_, observed_y_;
};

}  // namespace ceres_cuda
