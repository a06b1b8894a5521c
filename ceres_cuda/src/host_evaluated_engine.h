#pragma once
// What the general structure's engines share (general_cpu_engine.cpp, general_cuda_engine.cu): the
// Jacobian's cell layout, the user's cost functions on CPU threads (ThreadedEvaluator) and the
// parameter values on the host (BlockState), with the steps of the LM loop that only touch those:
// the candidate's cost, the norms of x and of the step, accepting the candidate, writing x back.
// A subclass solves the step and moves the candidate along it (move_candidate). The evaluator takes the
// residuals from first_host_residual on (all of them unless a subclass evaluates others elsewhere).
#include <vector>

#include "ba_engine.h"
#include "block_state.h"
#include "jacobian_cells.h"
#include "schur_structure.h"
#include "threaded_evaluator.h"

namespace ceres_cuda::detail {

class HostEvaluatedEngine : public BaEngine {
 public:
  // candidate = Plus(x, step); a Plus that fails makes it a point of infinite cost, as in Ceres.
  bool evaluate_candidate(double* cost) override;
  double x_norm() override { return state_.x_norm(); }
  double delta_norm() override { return state_.step_norm(); }
  void accept_candidate() override { state_.accept_candidate(); }
  void write_parameters() override { state_.write_to_user(); }
  const EngineCounters& counters() const override { return counters_; }

 protected:
  HostEvaluatedEngine(const SchurStructure& structure, const EngineOptions& options, int first_host_residual = 0);
  // The evaluator's residuals and Jacobian at x into host arrays (its range of JacobianCells' layout),
  // timed and counted.
  bool evaluate_jacobian(double* f, double* jacobian, double* cost);
  // candidate = Plus(x, the last step delta, scaled back by the Jacobi scaling) (evaluate_candidate's
  // first part); false when a Plus fails.
  virtual bool move_candidate() = 0;
  // The cost at the candidate (evaluate_candidate times and counts it); by default, the evaluator's.
  virtual bool candidate_cost(double* cost);

  const SchurStructure& s_;
  EngineOptions options_;
  JacobianCells cells_;
  ThreadedEvaluator evaluator_;
  BlockState state_;
  EngineCounters counters_;

 private:
  std::vector<double> candidate_f_;  // the candidate's residuals (kept apart from x's)
};

}  // namespace ceres_cuda::detail
