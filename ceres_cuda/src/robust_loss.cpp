#include "robust_loss.h"

#include <ceres/loss_function.h>

#include <cmath>
#include <typeinfo>

namespace ceres_cuda::detail {

bool recognise_builtin_loss(const ceres::LossFunction* loss, BuiltinLoss* out) {
  *out = BuiltinLoss{};
  // TrivialLoss is rho(s) = s, which Ceres' corrector applies as no loss at all.
  if (loss == nullptr || typeid(*loss) == typeid(ceres::TrivialLoss)) return true;
  // Their scales are private: recover a from rho where it is exact, then verify everywhere.
  double rho[3];
  BuiltinLoss candidate;
  if (typeid(*loss) == typeid(ceres::HuberLoss)) {
    loss->Evaluate(1e200, rho);  // outlier region for any a < 1e100: rho' = a / sqrt(s)
    candidate = {LossKind::Huber, rho[1] * 1e100};
  } else if (typeid(*loss) == typeid(ceres::CauchyLoss)) {
    loss->Evaluate(0.0, rho);  // rho''(0) = -1 / a^2
    candidate = {LossKind::Cauchy, std::sqrt(-1.0 / rho[2])};
  } else if (typeid(*loss) == typeid(ceres::SoftLOneLoss)) {
    loss->Evaluate(0.0, rho);  // rho''(0) = -1 / (2 a^2)
    candidate = {LossKind::SoftL1, std::sqrt(-1.0 / (2.0 * rho[2]))};
  } else {
    return false;
  }
  if (!(candidate.a > 0.0) || !std::isfinite(candidate.a)) return false;
  for (const double t : {0.0, 1e-8, 1e-3, 0.3, 1.0, 3.0, 1e2, 1e5, 1e9}) {
    const double s = t * candidate.a * candidate.a;
    double theirs[3], ours[3];
    loss->Evaluate(s, theirs);
    candidate.evaluate(s, ours);
    for (int k = 0; k < 3; ++k)
      if (std::fabs(theirs[k] - ours[k]) > 1e-10 * (std::fabs(theirs[k]) + 1e-300)) return false;
  }
  *out = candidate;
  return true;
}

}  // namespace ceres_cuda::detail
