#pragma once
// Ceres 2.1's trust-region minimizer with the Levenberg-Marquardt strategy (trust_region_minimizer.cc,
// levenberg_marquardt_strategy.cc), run against a BaEngine: the same radius updates, step
// acceptance, Jacobi scaling, tolerances, termination tests and messages, and the same
// IterationSummary entries, so that iterations compare one for one with ceres::Solve.
#include <ceres/solver.h>

#include "ba_engine.h"

namespace ceres_cuda::detail {

// Runs the loop and fills summary->iterations, initial/final cost (fixed_cost added), the step
// counts, termination_type and message. Writes the best x to the user's blocks at the end (and
// before callbacks when options.update_state_every_iteration). start_seconds: wall-clock origin of
// the solve (for cumulative times), preprocessor_seconds: time spent before the minimizer.
void minimize(const ceres::Solver::Options& options, BaEngine* engine, double fixed_cost,
              double preprocessor_seconds, ceres::Solver::Summary* summary);

}  // namespace ceres_cuda::detail
