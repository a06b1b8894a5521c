#include "ceres_cuda/colmap_reprojection_error.h"

#include <string>

#include "device_cost_models.h"
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
  const double observation[2] = {observed_x_, observed_y_};
  return detail::colmap_evaluate(static_cast<int>(model_), parameters, observation, residuals, jacobians);
}

}  // namespace ceres_cuda
