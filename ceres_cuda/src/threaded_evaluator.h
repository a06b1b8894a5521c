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
  // Evaluates residuals [first, last) of the structure (all of them by default).
  ThreadedEvaluator(const SchurStructure& structure, const JacobianCells& cells, int threads, int first = 0,
                    int last = -1);

  // The PlusJacobian of every variable block with a manifold at state, for evaluate()'s Jacobians (and
  // for anyone else projecting Jacobians at that point); false when one fails or is not finite.
  bool update_plus_jacobians(const double* state);
  const std::vector<double>& plus_jacobians() const { return plus_jacobian_; }
  const std::vector<long>& plus_jacobian_offsets() const { return plus_jacobian_offset_; }  // -1: none

  // state: every block's ambient values at its SchurBlock::offset. f: the range's residual values, from
  // f_offset() of JacobianCells' residual vectors; jacobian: the range's cells' values, from
  // jacobian_offset() of the whole Jacobian, or null for the cost alone (which needs the PlusJacobians
  // of update_plus_jacobians at the same state). False when a cost function fails, or returns a value
  // that is not finite.
  bool evaluate(const double* state, double* f, double* jacobian, double* cost);

  long f_offset() const { return f_offset_; }
  long num_f() const { return num_f_; }
  long jacobian_offset() const { return jacobian_offset_; }
  long num_jacobian_values() const { return num_jacobian_values_; }
  int first() const { return first_; }
  int last() const { return last_; }

  // The cost of the structure's fixed residuals (every block constant) at the user's values; NaN when
  // one fails.
  static double fixed_cost(const SchurStructure& structure);

 private:
  const SchurStructure& structure_;
  const JacobianCells& cells_;
  int threads_;
  int first_, last_;
  long f_offset_ = 0, num_f_ = 0, jacobian_offset_ = 0, num_jacobian_values_ = 0;
  std::vector<double> cost_;           // per residual block of the range
  std::vector<double> plus_jacobian_;  // per variable block with a manifold: size x tangent, row-major
  std::vector<long> plus_jacobian_offset_;
};

}  // namespace ceres_cuda::detail
