#include "threaded_evaluator.h"

#include <ceres/cost_function.h>
#include <ceres/loss_function.h>

#include <cmath>
#include <vector>

#include "guarded_call.h"
#include "robust_loss.h"

namespace ceres_cuda::detail {
namespace {

// 0.5 rho(|f|^2), rho the identity without a loss; the correction of f and its Jacobian when there is
// a loss (Ceres' Corrector).
double residual_cost(const ceres::LossFunction* loss, const double* f, int m, LossCorrection* correction) {
  double s = 0.0;
  for (int a = 0; a < m; ++a) s += f[a] * f[a];
  if (loss == nullptr) return 0.5 * s;
  double rho[3];
  loss->Evaluate(s, rho);
  *correction = loss_correction(s, rho);
  return 0.5 * rho[0];
}

bool all_finite(const double* v, long n) {
  for (long k = 0; k < n; ++k)
    if (!std::isfinite(v[k])) return false;
  return true;
}

}  // namespace

ThreadedEvaluator::ThreadedEvaluator(const SchurStructure& structure, const JacobianCells& cells, int threads, int first,
                                     int last)
    : structure_(structure),
      cells_(cells),
      threads_(threads),
      first_(first),
      last_(last < 0 ? static_cast<int>(structure.residuals.size()) : last) {
  cost_.resize(last_ - first_);
  f_offset_ = cells.row_offset[first_];
  num_f_ = cells.row_offset[last_] - f_offset_;
  const int first_cell = cells.row_start[first_], end_cell = cells.row_start[last_];
  if (end_cell > first_cell) {
    const JacobianCell& last_cell = cells.cells[end_cell - 1];
    jacobian_offset_ = cells.cells[first_cell].values;
    num_jacobian_values_ = last_cell.values + static_cast<long>(structure.residuals[last_cell.residual].size) *
                                                  structure.blocks[last_cell.block].tangent_size -
                           jacobian_offset_;
  }
  long values = 0;
  plus_jacobian_offset_.assign(structure.num_variable_blocks(), -1);
  for (int b = 0; b < structure.num_variable_blocks(); ++b) {
    const SchurBlock& block = structure.blocks[b];
    if (block.manifold == nullptr) continue;
    plus_jacobian_offset_[b] = values;
    values += static_cast<long>(block.size) * block.tangent_size;
  }
  plus_jacobian_.resize(values);
}

bool ThreadedEvaluator::update_plus_jacobians(const double* state) {
  const SchurStructure& s = structure_;
  int failed = 0;
#pragma omp parallel for schedule(static) num_threads(threads_) reduction(+ : failed)
  for (int b = 0; b < s.num_variable_blocks(); ++b) {
    const long offset = plus_jacobian_offset_[b];
    if (offset < 0) continue;
    const SchurBlock& block = s.blocks[b];
    double* pj = plus_jacobian_.data() + offset;
    failed += !guarded_call([&] { return block.manifold->PlusJacobian(state + block.offset, pj); }) ||
              !all_finite(pj, static_cast<long>(block.size) * block.tangent_size);
  }
  return failed == 0;
}

bool ThreadedEvaluator::evaluate(const double* state, double* f_range, double* jacobian_range, double* cost) {
  const SchurStructure& s = structure_;
  int failed = 0;
  const bool want_jacobian = jacobian_range != nullptr;
  // A cell's values in the range's array.
  auto values_of = [&](const JacobianCell& cell) { return jacobian_range + (cell.values - jacobian_offset_); };
#pragma omp parallel num_threads(threads_) reduction(+ : failed)
  {
    std::vector<const double*> params;
    std::vector<double*> jacobians;
    std::vector<double> ambient;  // cost-function Jacobians of blocks with a manifold, before projection
    std::vector<long> ambient_offset;
#pragma omp for schedule(static)
    for (int r = first_; r < last_; ++r) {
      const SchurResidual& residual = s.residuals[r];
      const int m = residual.size;
      const int* blocks = s.params_of(residual);
      double* f = f_range + (cells_.row_offset[r] - f_offset_);
      params.resize(residual.num_params);
      jacobians.assign(residual.num_params, nullptr);
      ambient_offset.assign(residual.num_params, -1);
      long ambient_values = 0;
      for (int k = 0; k < residual.num_params; ++k) {
        const SchurBlock& block = s.blocks[blocks[k]];
        params[k] = state + block.offset;
        if (want_jacobian && s.is_variable(blocks[k]) && block.manifold != nullptr) {
          ambient_offset[k] = ambient_values;
          ambient_values += static_cast<long>(m) * block.size;
        }
      }
      if (want_jacobian) {
        ambient.resize(ambient_values);
        for (int c = cells_.row_start[r]; c < cells_.row_start[r + 1]; ++c) {
          const JacobianCell& cell = cells_.cells[c];
          jacobians[cell.slot] =
              ambient_offset[cell.slot] >= 0 ? ambient.data() + ambient_offset[cell.slot] : values_of(cell);
        }
      }
      double** out = want_jacobian ? jacobians.data() : nullptr;
      if (!guarded_call([&] { return residual.cost->Evaluate(params.data(), f, out); }) ||
          !all_finite(f, m)) {
        ++failed;
        continue;
      }
      LossCorrection correction;
      const bool loss_evaluated = guarded_call([&] {
        cost_[r - first_] = residual_cost(residual.loss, f, m, &correction);
        return true;
      });
      if (!loss_evaluated) {
        ++failed;
        continue;
      }
      if (!want_jacobian) continue;
      bool finite = true;
      for (int c = cells_.row_start[r]; c < cells_.row_start[r + 1]; ++c) {
        const JacobianCell& cell = cells_.cells[c];
        const SchurBlock& block = s.blocks[cell.block];
        double* J = values_of(cell);
        const int t = block.tangent_size;
        if (ambient_offset[cell.slot] >= 0) {  // J = (cost-function Jacobian) x PlusJacobian
          const double* A = ambient.data() + ambient_offset[cell.slot];
          const double* P = plus_jacobian_.data() + plus_jacobian_offset_[cell.block];
          for (int a = 0; a < m; ++a)
            for (int k = 0; k < t; ++k) {
              double v = 0.0;
              for (int q = 0; q < block.size; ++q) v += A[a * block.size + q] * P[q * t + k];
              J[a * t + k] = v;
            }
        }
        finite = finite && all_finite(J, static_cast<long>(m) * t);
        if (residual.loss != nullptr)
          correct_jacobian(correction, f, m, t, [J, t](int a, int k) -> double& { return J[a * t + k]; });
      }
      if (!finite) {
        ++failed;
        continue;
      }
      if (residual.loss != nullptr)
        for (int a = 0; a < m; ++a) f[a] *= correction.residual_scaling;
    }
  }
  if (failed) return false;
  double total = 0.0;
  for (const double v : cost_) total += v;
  *cost = total;
  return std::isfinite(total);
}

double ThreadedEvaluator::fixed_cost(const SchurStructure& s) {
  double total = 0.0;
  std::vector<const double*> params;
  std::vector<double> f;
  for (const SchurResidual& residual : s.fixed_residuals) {
    const int* blocks = s.params_of(residual);
    params.resize(residual.num_params);
    for (int k = 0; k < residual.num_params; ++k) params[k] = s.blocks[blocks[k]].user;
    f.resize(residual.size);
    if (!guarded_call([&] { return residual.cost->Evaluate(params.data(), f.data(), nullptr); }) ||
        !all_finite(f.data(), residual.size))
      return std::nan("");
    LossCorrection unused;
    total += residual_cost(residual.loss, f.data(), residual.size, &unused);
  }
  return total;
}

}  // namespace ceres_cuda::detail
