#pragma once
// The parameter values of a SchurStructure on the host, for the engines whose cost functions run on
// CPU threads: x and a candidate point (every block's ambient values), the move along a tangent-space
// step through each block's Plus (its manifold's, or x + delta), and the norms Ceres' minimizer
// reports of them, measured in the ambient space as Ceres does.
#include <utility>
#include <vector>

#include "schur_structure.h"

namespace ceres_cuda::detail {

class BlockState {
 public:
  BlockState(const SchurStructure& structure, int threads);

  const double* x() const { return x_.data(); }
  const double* candidate() const { return candidate_.data(); }
  // candidate = Plus(x, delta), delta a tangent vector; false when a manifold's Plus fails.
  bool move_candidate(const double* delta);
  void accept_candidate() { x_.swap(candidate_); }
  // |x| over the variable blocks, and |x - candidate| (Ceres' step_norm).
  double x_norm() const;
  double step_norm() const;
  // Norm and max norm of x - Plus(x, -g) for the gradient g (tangent_size() values; Ceres' projected
  // gradient); false when Plus fails.
  bool projected_gradient_norms(const double* gradient, double* norm, double* max_norm) const;
  // Copies x into the user's blocks.
  void write_to_user() const;
  // x = values (the state's layout), where the state was moved elsewhere (DeviceState).
  void assign_x(std::vector<double> values) { x_ = std::move(values); }

 private:
  bool plus(const double* x, const double* delta, double* out) const;
  void difference_norms(const std::vector<double>& a, const std::vector<double>& b, double* norm, double* max_norm) const;

  const SchurStructure& s_;
  int threads_;
  long variable_values_;  // the variable blocks' ambient values lead the state
  std::vector<double> x_, candidate_;
  // projected_gradient_norms' scratch, once per LM iteration: kept, so that it allocates nothing.
  mutable std::vector<double> minus_gradient_, moved_;
};

}  // namespace ceres_cuda::detail
