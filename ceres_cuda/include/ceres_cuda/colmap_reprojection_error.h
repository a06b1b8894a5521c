#pragma once
// ColmapReprojectionError: the residual COLMAP's bundle adjustment gives each image point
// (BundleAdjustmentCostFunction<CameraModel>, COLMAP 3.8), as a ceres::CostFunction with analytic
// derivatives over four blocks:
//   qvec: the image's rotation, a unit quaternion (w, x, y, z), COLMAP's order and Ceres'
//         (ceres::QuaternionManifold);
//   tvec: its translation (3);
//   params: its camera's parameters, as many as the model has (colmap_model.h);
//   point3D: the point (3);
// residual = WorldToImage(params, P.x / P.z, P.y / P.z) - observation, P = R(qvec) point3D + tvec
// (ceres::UnitQuaternionRotatePoint), for the SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL and
// OPENCV models. An ordinary Ceres cost function (ceres::Solve evaluates it on CPU threads);
// ceres_cuda::Solve's general path evaluates its residual blocks on the GPU, cameras of the five
// models mixed in one problem, whatever the blocks' manifolds, when their loss is null or Huber,
// Cauchy or SoftL1 (with any other loss, on CPU threads like any cost function).
#include <ceres/cost_function.h>

#include "ceres_cuda/colmap_model.h"

namespace ceres_cuda {

class ColmapReprojectionError final : public ceres::CostFunction {
 public:
  // Throws linalg_cuda::InvalidArgument for a model other than the five above.
  ColmapReprojectionError(ColmapCameraModel model, double observed_x, double observed_y);

  // Returns false (as Ceres expects from a cost function that cannot evaluate) when the point lies in
  // the camera's z = 0 plane.
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override;

  ColmapCameraModel model() const { return model_; }
  double observed_x() const { return observed_x_; }
  double observed_y() const { return observed_y_; }

  static ceres::CostFunction* Create(ColmapCameraModel model, double observed_x, double observed_y) {
    return new ColmapReprojectionError(model, observed_x, observed_y);
  }

 private:
  ColmapCameraModel model_;
  double observed_x_, observed_y_;
};

}  // namespace ceres_cuda
