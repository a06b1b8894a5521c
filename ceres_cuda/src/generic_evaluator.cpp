#include "generic_evaluator.h"

#include <ceres/cost_function.h>
#include <ceres/loss_function.h>

#include <cmath>

#include "robust_loss.h"

namespace ceres_cuda::detail {

GenericEvaluator::GenericEvaluator(const BaLayout& layout, const BaIndex& index, int threads)
    : layout_(layout), index_(index), threads_(threads), cost_(index.residuals) {}

bool GenericEvaluator::evaluate(const double* cameras, const double* points, double* f_all, double* F, double* E,
                                double* cost) {
  const int c = index_.camera_size, m = index_.residual_size, R = index_.residuals;
  const bool jacobians = F != nullptr;
  int failed = 0;
#pragma omp parallel for schedule(static) num_threads(threads_) reduction(+ : failed)
  for (int i = 0; i < R; ++i) {
    const BaResidual& r = layout_.residuals[i];
    const double* camera = cameras + static_cast<std::size_t>(index_.camera_param[i]) * c;
    const double* point = points + 3 * static_cast<std::size_t>(index_.point_param[i]);
    double* f = f_all + static_cast<std::size_t>(i) * m;
    double* jc = jacobians && index_.camera_of[i] >= 0 ? F + static_cast<std::size_t>(i) * m * c : nullptr;
    double* jp = jacobians && index_.point_of[i] >= 0 ? E + static_cast<std::size_t>(i) * m * 3 : nullptr;
    const double* params[2] = {r.camera_first ? camera : point, r.camera_first ? point : camera};
    double* jac[2] = {r.camera_first ? jc : jp, r.camera_first ? jp : jc};
    if (!r.cost->Evaluate(params, f, jacobians ? jac : nullptr)) {
      ++failed;
      continue;
    }
    double s = 0.0;
    bool finite = true;
    for (int a = 0; a < m; ++a) {
      s += f[a] * f[a];
      finite = finite && std::isfinite(f[a]);
    }
    for (int k = 0; jc && k < m * c; ++k) finite = finite && std::isfinite(jc[k]);
    for (int k = 0; jp && k < m * 3; ++k) finite = finite && std::isfinite(jp[k]);
    if (!finite) {
      ++failed;
      continue;
    }
    if (r.loss == nullptr) {
      cost_[i] = 0.5 * s;
      continue;
    }
    double rho[3];
    r.loss->Evaluate(s, rho);
    cost_[i] = 0.5 * rho[0];
    const LossCorrection correction = loss_correction(s, rho);
    if (jc) correct_jacobian(correction, f, m, c, [jc, c](int a, int k) -> double& { return jc[a * c + k]; });
    if (jp) correct_jacobian(correction, f, m, 3, [jp](int a, int k) -> double& { return jp[a * 3 + k]; });
    for (int a = 0; a < m; ++a) f[a] *= correction.residual_scaling;
  }
  if (failed) return false;
  double total = 0.0;
  for (const double v : cost_) total += v;
  *cost = total;
  return std::isfinite(total);
}

}  // namespace ceres_cuda::detail
