#include "ceres_cuda/colmap_reprojection_error.h"

#include <string>

#include "colmap_camera_projection.h"
#include "linalg_cuda/errors.h"

namespace ceres_cuda {

ColmapReprojectionError::ColmapReprojectionError(ColmapCameraModel model, double observed_x, double observed_y)
    : model_(model), observed_x_(observed_x), observed_y_(observed_y) {
  switch (model) {
    case ColmapCameraModel::SimplePinhole:
    case ColmapCameraModel::Pinhole:
    case ColmapCameraModel::SimpleRadial:
    case ColmapCameraModel::Radial:
    case ColmapCameraModel::OpenCV: break;
    default:
      throw linalg_cuda::InvalidArgument(std::string("ColmapReprojectionError: the ") + colmap_camera_model_name(model) +
                                         " model is not one it projects (SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, "
                                         "RADIAL, OPENCV)");
  }
  set_num_residuals(2);
  *mutable_parameter_block_sizes() = {4, 3, colmap_camera_model_num_params(model), 3};
}

bool ColmapReprojectionError::Evaluate(double const* const* parameters, double* residuals, double** jacobians) const {
  double* none[4] = {nullptr, nullptr, nullptr, nullptr};
  double* const* j = jacobians != nullptr ? jacobians : none;
  double jq[8];
  // colmap_reprojection_residual computes the other blocks' Jacobians where jq is given.
  const bool any = j[0] != nullptr || j[1] != nullptr || j[2] != nullptr || j[3] != nullptr;
  return detail::colmap_reprojection_residual(static_cast<int>(model_), parameters[0], parameters[1], parameters[2],
                                              parameters[3], observed_x_, observed_y_, residuals,
                                              any ? (j[0] != nullptr ? j[0] : jq) : nullptr, j[1], j[2], j[3]);
}

}  // namespace ceres_cuda
