#include "ceres_cuda/quaternion_snavely_reprojection_error.h"

#include "device_cost_models.h"

namespace ceres_cuda {

bool QuaternionSnavelyReprojectionError::Evaluate(double const* const* parameters, double* residuals,
                                                  double** jacobians) const {
  const double observation[2] = {observed_x_, observed_y_};
  return detail::QuaternionSnavelyModel::evaluate(parameters, observation, residuals, jacobians);
}

}  // namespace ceres_cuda
