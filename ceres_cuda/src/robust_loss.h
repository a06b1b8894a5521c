#pragma once
// Loss functions in the evaluation: Ceres' Corrector (the Triggs correction of residual and Jacobian
// that makes the Gauss-Newton model of a robustified cost right to first order), and the built-in
// Huber, Cauchy and SoftL1 losses evaluated exactly as Ceres' loss_function.cc does, so that the
// fast path can apply them on the GPU. Written once for the CPU and the GPU (LINALG_HD).
#include <math.h>

#include "linalg_cuda/internal/host_device.h"

namespace ceres {
class LossFunction;
}

namespace ceres_cuda::detail {

enum class LossKind : int { None = 0, Huber = 1, Cauchy = 2, SoftL1 = 3 };

struct BuiltinLoss {
  LossKind kind = LossKind::None;
  double a = 1.0;  // the scale ceres' constructor took

  // rho[0..2] = rho(s), rho'(s), rho''(s), as ceres::HuberLoss / CauchyLoss / SoftLOneLoss compute them.
  LINALG_HD void evaluate(double s, double rho[3]) const {
    const double b = a * a;
    switch (kind) {
      case LossKind::Huber:
        if (s > b) {
          const double r = sqrt(s);
          rho[0] = 2.0 * a * r - b;
          rho[1] = a / r > 2.2250738585072014e-308 ? a / r : 2.2250738585072014e-308;
          rho[2] = -rho[1] / (2.0 * s);
        } else {
          rho[0] = s;
          rho[1] = 1.0;
          rho[2] = 0.0;
        }
        return;
      case LossKind::Cauchy: {
        const double c = 1.0 / b;
        const double sum = 1.0 + s * c;
        const double inv = 1.0 / sum;
        rho[0] = b * log(sum);
        rho[1] = inv > 2.2250738585072014e-308 ? inv : 2.2250738585072014e-308;
        rho[2] = -c * (inv * inv);
        return;
      }
      case LossKind::SoftL1: {
        const double c = 1.0 / b;
        const double sum = 1.0 + s * c;
        const double tmp = sqrt(sum);
        rho[0] = 2.0 * b * (tmp - 1.0);
        rho[1] = 1.0 / tmp > 2.2250738585072014e-308 ? 1.0 / tmp : 2.2250738585072014e-308;
        rho[2] = -(c * rho[1]) / (2.0 * sum);
        return;
      }
      default:
        rho[0] = s;
        rho[1] = 1.0;
        rho[2] = 0.0;
    }
  }
};

// Ceres' Corrector for one residual block of squared norm s and loss values rho: residuals are
// scaled by residual_scaling and the Jacobian J becomes sqrt_rho1 (J - alpha_sq_norm f f' J).
struct LossCorrection {
  double sqrt_rho1 = 1.0;
  double residual_scaling = 1.0;
  double alpha_sq_norm = 0.0;
};

LINALG_HD LossCorrection loss_correction(double s, const double rho[3]) {
  LossCorrection c;
  c.sqrt_rho1 = sqrt(rho[1]);
  if (s == 0.0 || rho[2] <= 0.0) {
    c.residual_scaling = c.sqrt_rho1;
    c.alpha_sq_norm = 0.0;
  } else {
    const double d = 1.0 + 2.0 * s * rho[2] / rho[1];
    const double alpha = 1.0 - sqrt(d);
    c.residual_scaling = c.sqrt_rho1 / (1.0 - alpha);
    c.alpha_sq_norm = alpha / s;
  }
  return c;
}

// Applies the correction to residual f (m) and Jacobian columns: j(a, k) = entry (a, k), m rows and
// `cols` columns, through the accessor (so that any storage layout works). f must be the
// uncorrected residual while the Jacobian is corrected; it is scaled last.
template <typename Jacobian>
LINALG_HD void correct_jacobian(const LossCorrection& c, const double* f, int m, int cols, Jacobian&& j) {
  if (c.alpha_sq_norm == 0.0) {
    for (int a = 0; a < m; ++a)
      for (int k = 0; k < cols; ++k) j(a, k) *= c.sqrt_rho1;
    return;
  }
  for (int k = 0; k < cols; ++k) {
    double fj = 0.0;
    for (int a = 0; a < m; ++a) fj += f[a] * j(a, k);
    for (int a = 0; a < m; ++a) j(a, k) = c.sqrt_rho1 * (j(a, k) - c.alpha_sq_norm * f[a] * fj);
  }
}

// The corrected Jacobian as an operator: correct_jacobian makes J into C J with the symmetric
// C = sqrt_rho1 (I - alpha_sq_norm f f'), so (C J) x = C (J x) and (C J)' v = J' (C v). Applies C to
// v (m values) in place; f is the uncorrected residual.
LINALG_HD void apply_correction(const LossCorrection& c, const double* f, int m, double* v) {
  double fv = 0.0;
  if (c.alpha_sq_norm != 0.0)
    for (int a = 0; a < m; ++a) fv += f[a] * v[a];
  for (int a = 0; a < m; ++a) v[a] = c.sqrt_rho1 * (v[a] - c.alpha_sq_norm * f[a] * fv);
}

// Recognises ceres::HuberLoss, CauchyLoss and SoftLOneLoss (exact type) and recovers their scale
// by probing rho; the result is verified against the loss on a range of s, so a loss is only taken
// as built-in when our formulas reproduce it. kind None for null and ceres::TrivialLoss; returns
// false for anything else.
bool recognise_builtin_loss(const ceres::LossFunction* loss, BuiltinLoss* out);

}  // namespace ceres_cuda::detail
