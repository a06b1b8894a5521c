#include "problem_source.h"

#include "schur_structure.h"

namespace ceres_cuda::detail {

CeresProblemSource::CeresProblemSource(const ceres::Problem& problem) : problem_(problem) {
  problem.GetResidualBlocks(&ids_);
}

ProblemSource::BlockFacts CeresProblemSource::facts(double* block) const {
  BlockFacts f;
  f.size = problem_.ParameterBlockSize(block);
  f.tangent_size = problem_.ParameterBlockTangentSize(block);
  f.manifold = problem_.GetManifold(block);
  f.constant = problem_.IsParameterBlockConstant(block);
  f.bounded = !f.constant && has_bounds(problem_, block, f.size);
  return f;
}

}  // namespace ceres_cuda::detail
