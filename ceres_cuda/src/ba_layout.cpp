#include "ba_layout.h"

#include <ceres/cost_function.h>
#include <ceres/ordered_groups.h>

#include <limits>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>

#include "ceres_cuda/snavely_reprojection_error.h"

namespace ceres_cuda::detail {
namespace {

std::string options_reason(const ceres::Solver::Options& o) {
  if (o.minimizer_type != ceres::TRUST_REGION) return "minimizer_type is not TRUST_REGION";
  if (o.trust_region_strategy_type != ceres::LEVENBERG_MARQUARDT) return "trust_region_strategy_type is not LEVENBERG_MARQUARDT";
  if (o.linear_solver_type != ceres::ITERATIVE_SCHUR && o.linear_solver_type != ceres::DENSE_SCHUR)
    return std::string("linear_solver_type ") + ceres::LinearSolverTypeToString(o.linear_solver_type) +
           " (ceres_cuda runs ITERATIVE_SCHUR and DENSE_SCHUR)";
  if (o.linear_solver_type == ceres::ITERATIVE_SCHUR && o.preconditioner_type != ceres::JACOBI &&
      o.preconditioner_type != ceres::SCHUR_JACOBI)
    return std::string("preconditioner_type ") + ceres::PreconditionerTypeToString(o.preconditioner_type) +
           " (ceres_cuda has JACOBI and SCHUR_JACOBI)";
  if (o.use_nonmonotonic_steps) return "use_nonmonotonic_steps is set";
  if (o.use_inner_iterations) return "use_inner_iterations is set";
  if (o.check_gradients) return "check_gradients is set";
  if (o.use_mixed_precision_solves) return "use_mixed_precision_solves is set";
  if (o.dynamic_sparsity) return "dynamic_sparsity is set";
  return "";
}

bool has_bounds(const ceres::Problem& problem, double* block, int size) {
  for (int k = 0; k < size; ++k)
    if (problem.GetParameterLowerBound(block, k) > -std::numeric_limits<double>::max() ||
        problem.GetParameterUpperBound(block, k) < std::numeric_limits<double>::max())
      return true;
  return false;
}

}  // namespace

std::string analyze_problem(const ceres::Solver::Options& options, ceres::Problem* problem, BaLayout* layout) {
  *layout = BaLayout{};
  if (std::string reason = options_reason(options); !reason.empty()) return reason;
  if (problem == nullptr) return "problem is null";
  std::vector<ceres::ResidualBlockId> residual_ids;
  problem->GetResidualBlocks(&residual_ids);
  if (residual_ids.empty()) return "the problem has no residual blocks";

  // Points from the ordering's first group when one is given.
  std::unordered_set<const double*> ordered_points;
  if (options.linear_solver_ordering) {
    const auto& groups = options.linear_solver_ordering->group_to_elements();
    if (groups.size() != 2) return "linear_solver_ordering must have exactly two groups (points, then cameras)";
    for (double* p : groups.begin()->second) ordered_points.insert(p);
  }

  std::unordered_map<double*, int> camera_of, point_of;  // block -> provisional index
  std::vector<double*> cameras, points;
  std::vector<BaResidual> residuals;
  residuals.reserve(residual_ids.size());
  std::vector<double*> blocks;
  int residual_size = -1;
  for (const ceres::ResidualBlockId id : residual_ids) {
    problem->GetParameterBlocksForResidualBlock(id, &blocks);
    const ceres::CostFunction* cost = problem->GetCostFunctionForResidualBlock(id);
    if (blocks.size() != 2)
      return "a residual block depends on " + std::to_string(blocks.size()) +
             " parameter blocks (bundle adjustment needs one camera and one point)";
    const int size0 = problem->ParameterBlockSize(blocks[0]), size1 = problem->ParameterBlockSize(blocks[1]);
    int point_slot;
    if (!ordered_points.empty()) {
      const bool p0 = ordered_points.count(blocks[0]) > 0, p1 = ordered_points.count(blocks[1]) > 0;
      if (p0 == p1) return "a residual block does not connect one point (ordering group 0) and one camera";
      point_slot = p0 ? 0 : 1;
    } else if (size0 == kPointSize && size1 != kPointSize) {
      point_slot = 0;
    } else if (size1 == kPointSize && size0 != kPointSize) {
      point_slot = 1;
    } else if (size0 == kPointSize && size1 == kPointSize) {
      // Both have 3 values: a block already known as a camera or point decides, else the second is
      // the point (the BAL convention, camera then point).
      point_slot = camera_of.count(blocks[1]) || point_of.count(blocks[0]) ? 0 : 1;
    } else {
      return "a residual block has no 3-vector point (blocks of size " + std::to_string(size0) + " and " +
             std::to_string(size1) + ")";
    }
    double* point = blocks[point_slot];
    double* camera = blocks[1 - point_slot];
    if (problem->ParameterBlockSize(point) != kPointSize) return "a point block does not have 3 values";
    if (camera_of.count(point) || point_of.count(camera)) return "a parameter block is used both as camera and as point";
    const int camera_size = problem->ParameterBlockSize(camera);
    if (camera_size > kMaxCameraSize) return "a camera block has " + std::to_string(camera_size) + " values (at most 16)";
    if (layout->camera_size == 0) layout->camera_size = camera_size;
    if (camera_size != layout->camera_size) return "camera blocks of different sizes";
    if (residual_size < 0) residual_size = cost->num_residuals();
    if (cost->num_residuals() != residual_size) return "residual blocks of different sizes";
    if (residual_size > kMaxResidualSize || residual_size < 1)
      return "residual blocks of " + std::to_string(residual_size) + " values (ceres_cuda takes 1 to 8)";
    auto [c_it, c_new] = camera_of.emplace(camera, static_cast<int>(cameras.size()));
    if (c_new) cameras.push_back(camera);
    auto [p_it, p_new] = point_of.emplace(point, static_cast<int>(points.size()));
    if (p_new) points.push_back(point);
    residuals.push_back({id, cost, problem->GetLossFunctionForResidualBlock(id), c_it->second, p_it->second,
                         point_slot == 1});
  }
  layout->residual_size = residual_size;

  for (double* block : cameras)
    if (problem->HasManifold(block) || has_bounds(*problem, block, layout->camera_size))
      return "a camera block has a manifold (local parameterization) or bounds";
  for (double* block : points)
    if (problem->HasManifold(block) || has_bounds(*problem, block, kPointSize))
      return "a point block has a manifold (local parameterization) or bounds";

  // Variable blocks first, keeping the order of first use; residuals renumbered accordingly.
  auto partition = [&](const std::vector<double*>& all, std::vector<double*>* ordered, int* variable) {
    std::vector<int> new_index(all.size());
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t i = 0; i < all.size(); ++i)
        if (problem->IsParameterBlockConstant(all[i]) == (pass == 1)) {
          new_index[i] = static_cast<int>(ordered->size());
          ordered->push_back(all[i]);
          if (pass == 0) ++*variable;
        }
    return new_index;
  };
  const std::vector<int> camera_index = partition(cameras, &layout->cameras, &layout->variable_cameras);
  const std::vector<int> point_index = partition(points, &layout->points, &layout->variable_points);
  for (BaResidual& r : residuals) {
    r.camera = camera_index[r.camera];
    r.point = point_index[r.point];
    if (layout->camera_is_variable(r.camera) || layout->point_is_variable(r.point)) layout->residuals.push_back(r);
    else layout->fixed_residuals.push_back(r);
  }
  if (layout->residuals.empty()) return "every parameter block is constant";

  layout->num_parameter_blocks = problem->NumParameterBlocks();
  layout->num_parameters = problem->NumParameters();
  layout->num_residuals = problem->NumResiduals();

  // The fast path: SnavelyReprojectionError everywhere (camera first), one built-in loss or none.
  layout->snavely = true;
  const ceres::LossFunction* shared_loss = layout->residuals.front().loss;
  for (const BaResidual& r : layout->residuals)
    if (typeid(*r.cost) != typeid(SnavelyReprojectionError) || !r.camera_first || r.loss != shared_loss) {
      layout->snavely = false;
      break;
    }
  if (layout->snavely && !recognise_builtin_loss(shared_loss, &layout->loss)) layout->snavely = false;
  if (layout->snavely) {
    layout->observations.reserve(2 * layout->residuals.size());
    for (const BaResidual& r : layout->residuals) {
      const auto* s = static_cast<const SnavelyReprojectionError*>(r.cost);
      layout->observations.push_back(s->observed_x());
      layout->observations.push_back(s->observed_y());
    }
  }
  return "";
}

}  // namespace ceres_cuda::detail
