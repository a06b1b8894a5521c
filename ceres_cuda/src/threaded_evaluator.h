#pragma once
// Evaluation of a SchurStructure's residual blocks with the user's cost and loss functions on CPU
// threads (OpenMP), as Ceres' ProgramEvaluator does: Jacobians in the tangent space (the cost
// function's Jacobian times the block manifold's PlusJacobian at x), corrected for the loss as
// Ceres' Corrector does, into JacobianCells' layout; the cost summed in residual order, so that the
// result has the same bits for any number of threads.
#include <vector>

#include "jacobian_cells.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class ThreadedEvaluator {
 public:
  ThreadedEvaluator(const SchurStructure& structure, const JacobianCells& cells, int threads);

  // state: every block's ambient values at its SchurBlock::offset. f: JacobianCells::num_rows values;
  // jacobian: num_values values, or null for the cost alone. False when a cost function or a
  // PlusJacobian fails, or returns a value that is not finite.
  bool evaluate(const double* state, double* f, double* jacobian, double* cost);

  // The cost of the structure's fixed residuals (every block constant) at the user's values; NaN when
  // one fails.
  static double fixed_cost(const SchurStructure& structure);

 private:
  const SchurStructure& structure_;
  const JacobianCells& cells_;
  int threads_;
  std::vector<double> cost_;           // per residual block
  std::vector<double> plus_jacobian_;  // per variable block with a manifold: size x tangent, row-major
  std::vector<long> plus_jacobian_offset_;  // -1: no manifold
};

}  // namespace ceres_cuda::detail
