#pragma once
// The evaluation of a family of residual blocks of one library cost function model on the GPU
// (device_families.h): a thread per residual block reads its blocks' ambient values, evaluates the
// model (device_cost_models.h, the code the cost function's Evaluate runs on the CPU), projects each
// variable block's Jacobian by its manifold's PlusJacobian at x (computed on the host, whatever the
// manifold), applies Ceres' Corrector for the family's loss, and writes its residual values, its cells
// (JacobianCells' layout) and its cost. What ThreadedEvaluator does for any cost function, in the same
// order of operations.
#include <math.h>

#include "device_cost_models.h"
#include "jacobian_cells.h"
#include "linalg_cuda/internal/launch_geometry.h"
#include "robust_loss.h"

namespace ceres_cuda::detail {
namespace {

struct FamilyArgs {
  int first = 0, count = 0;             // the family's residuals [first, first + count)
  const int* blocks = nullptr;          // per residual, Model::kBlocks block numbers
  const double* observations = nullptr; // per residual, Model::kObservationSize values
  BuiltinLoss loss;                     // kind None: no loss
  const double* state = nullptr;        // every block's ambient values
  const long* block_offset = nullptr;   // per block, its values in state
  const long* plus_offset = nullptr;    // per variable block, its PlusJacobian in plus_jacobians, or -1
  const double* plus_jacobians = nullptr;
  const JacobianCell* cells = nullptr;
  const int* row_start = nullptr;
  const long* row_offset = nullptr;
  const int* tangent_size = nullptr;    // per variable block
  double* f = nullptr;                  // residual vector of the whole structure
  double* jacobian = nullptr;           // the whole Jacobian, or null for residuals and cost alone
  double* cost = nullptr;               // per residual of the device families (indexed by residual)
  int* failed = nullptr;                // set when a residual cannot be evaluated or is not finite
};

template <class Model>
__device__ bool evaluate_family_residual(const FamilyArgs& a, int i) {
  constexpr int m = Model::kResiduals;
  const int r = a.first + i;
  double values[Model::kParameters];
  const double* params[Model::kBlocks];
  for (int k = 0; k < Model::kBlocks; ++k) {
    const double* source = a.state + a.block_offset[a.blocks[static_cast<long>(i) * Model::kBlocks + k]];
    double* local = values + Model::block_start(k);
    for (int q = 0; q < Model::block_size(k); ++q) local[q] = source[q];
    params[k] = local;
  }
  double f[m];
  double ambient[m * Model::kParameters];
  double* jacobians[Model::kBlocks];
  for (int k = 0; k < Model::kBlocks; ++k) jacobians[k] = ambient + m * Model::block_start(k);
  const bool want = a.jacobian != nullptr;
  if (!Model::evaluate(params, a.observations + static_cast<long>(i) * Model::kObservationSize, f,
                       want ? jacobians : nullptr))
    return false;
  double s = 0.0;
  for (int q = 0; q < m; ++q) {
    if (!isfinite(f[q])) return false;
    s += f[q] * f[q];
  }
  double rho[3];
  a.loss.evaluate(s, rho);
  a.cost[r] = 0.5 * rho[0];
  const bool has_loss = a.loss.kind != LossKind::None;
  const LossCorrection correction = has_loss ? loss_correction(s, rho) : LossCorrection{};
  if (want)
    for (int c = a.row_start[r]; c < a.row_start[r + 1]; ++c) {
      const JacobianCell cell = a.cells[c];
      const int t = a.tangent_size[cell.block], size = Model::block_size(cell.slot);
      const double* A = jacobians[cell.slot];
      double J[m * 16];  // tangent sizes of a model's blocks are at most its ambient sizes
      const long plus = a.plus_offset[cell.block];
      for (int row = 0; row < m; ++row)
        for (int k = 0; k < t; ++k) {
          double v = 0.0;
          if (plus < 0) {
            v = A[row * size + k];
          } else {  // (cost-function Jacobian) x PlusJacobian
            const double* P = a.plus_jacobians + plus;
            for (int q = 0; q < size; ++q) v += A[row * size + q] * P[q * t + k];
          }
          if (!isfinite(v)) return false;
          J[row * t + k] = v;
        }
      if (has_loss)
        correct_jacobian(correction, f, m, t, [&J, t](int row, int k) -> double& { return J[row * t + k]; });
      double* out = a.jacobian + cell.values;
      for (int q = 0; q < m * t; ++q) out[q] = J[q];
    }
  double* out = a.f + a.row_offset[r];
  for (int q = 0; q < m; ++q) out[q] = has_loss ? f[q] * correction.residual_scaling : f[q];
  return true;
}

template <class Model>
__global__ void __launch_bounds__(linalg_cuda::detail::kThreadsPerBlock) evaluate_family_kernel(FamilyArgs a) {
  const int i = blockIdx.x * linalg_cuda::detail::kThreadsPerBlock + threadIdx.x;
  if (i >= a.count) return;
  if (!evaluate_family_residual<Model>(a, i)) atomicOr(a.failed, 1);  // an integer flag: exact
}

}  // namespace
}  // namespace ceres_cuda::detail
