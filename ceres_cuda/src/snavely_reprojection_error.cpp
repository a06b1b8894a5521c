#include "ceres_cuda/snavely_reprojection_error.h"

#include "snavely_projection.h"

namespace ceres_cuda {

bool SnavelyReprojectionError::Evaluate(double const* const* parameters, double* residuals, double** jacobians) const {
  const bool want_jacobians = jacobians && (jacobians[0] || jacobians[1]);
  double jc[18], jp[6];
  if (!detail::snavely_residual(parameters[0], parameters[1], observed_x_, observed_y_, residuals,
                                want_jacobians ? jc : nullptr, want_jacobians ? jp : nullptr))
    return false;
  if (want_jacobians) {
    if (jacobians[0])
      for (int k = 0; k < 18; ++k) jacobians[0][k] = jc[k];
    if (jacobians[1])
      for (int k = 0; k < 6; ++k) jacobians[1][k] = jp[k];
  }
  return true;
}

}  // namespace ceres_cuda
