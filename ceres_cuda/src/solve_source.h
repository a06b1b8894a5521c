#pragma once
// ceres_cuda::Solve for a problem that is not (yet) a ceres::Problem: the analysis reads `source`, and
// `build_problem` makes the ceres::Problem only where Ceres must see one (a hand-over to ceres::Solve,
// or Ceres' own message for a failure). ColmapBundleAdjuster solves its model this way.
#include <ceres/problem.h>
#include <ceres/solver.h>

#include <functional>

#include "ceres_cuda/solve.h"
#include "problem_source.h"

namespace ceres_cuda::detail {

void solve_from_source(const ceres::Solver::Options& options, const ProblemSource& source,
                       const std::function<ceres::Problem*()>& build_problem, ceres::Solver::Summary* summary,
                       const SolveOptions& solve_options, SolveDetails* details);

}  // namespace ceres_cuda::detail
