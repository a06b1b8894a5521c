#pragma once
// QuaternionSnavelyReprojectionError: the BAL camera model (see bal_problem.h) in the shape SfM
// systems give Ceres, a ceres::SizedCostFunction<2, 4, 3, 3, 3> with analytic derivatives over
//   rotation: unit quaternion (w, x, y, z), Ceres' convention (ceres::QuaternionManifold),
//   translation (3), intrinsics (f, k1, k2), point (3),
// residual = f (1 + k1 |p|^2 + k2 |p|^4) p - observation, p = -P.xy / P.z, P = R(q) X + t, R(q) X as
// ceres::UnitQuaternionRotatePoint computes it. It is an ordinary Ceres cost function (ceres::Solve
// evaluates it on CPU threads, as an AutoDiff functor of the same model); ceres_cuda::Solve's general
// path evaluates its residual blocks on the GPU, whatever the blocks' manifolds, when their loss is
// null or Huber, Cauchy or SoftL1 (with any other loss, on CPU threads like any cost function).
#include <ceres/sized_cost_function.h>

namespace ceres_cuda {

class QuaternionSnavelyReprojectionError final : public ceres::SizedCostFunction<2, 4, 3, 3, 3> {
 public:
  QuaternionSnavelyReprojectionError(double observed_x, double observed_y)
      : observed_x_(observed_x), observed_y_(observed_y) {}

  // parameters: rotation, translation, intrinsics, point. Returns false (as Ceres expects from a cost
  // function that cannot evaluate) when the point lies in the camera's z = 0 plane.
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override;

  double observed_x() const { return observed_x_; }
  double observed_y() const { return observed_y_; }

  static ceres::CostFunction* Create(double observed_x, double observed_y) {
    return new QuaternionSnavelyReprojectionError(observed_x, observed_y);
  }

 private:
  double observed_x_, observed_y_;
};

}  // namespace ceres_cuda
