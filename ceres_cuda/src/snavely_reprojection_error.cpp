#include "ceres_cuda/snavely_reprojection_error.h"

#include "device_cost_models.h"

namespace ceres_cuda {

bool SnavelyReprojectionError::Evaluate(double const* const* parameters, double* residuals, double** jacobians) const {
  const double observation[2] = {observed_x_, observed_y_};
  return detail::SnavelyModel::evaluate(parameters, observation, residuals, jacobians);
}

}  // namespace ceres_cuda
