#include "ba_layout.h"

#include <ceres/cost_function.h>
#include <ceres/ordered_groups.h>
#include <omp.h>

#include <algorithm>
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
  const long count = static_cast<long>(residual_ids.size());

  // Points from the ordering's first group when one is given.
  std::unordered_set<const double*> ordered_points;
  if (options.linear_solver_ordering) {
    const auto& groups = options.linear_solver_ordering->group_to_elements();
    if (groups.size() != 2) return "linear_solver_ordering must have exactly two groups (points, then cameras)";
    for (double* p : groups.begin()->second) ordered_points.insert(p);
  }

  // Per residual, on all threads (Problem's const queries; millions of residuals in real problems):
  // its two blocks, which one is the point, or why it does not fit. Sizes come from the cost
  // function, which declares them, instead of the Problem's block map.
  struct Seen {
    double* camera;
    double* point;
    const ceres::CostFunction* cost;
    int point_slot;
  };
  std::vector<Seen> seen(count);
  std::vector<std::string> thread_reason(omp_get_max_threads());
#pragma omp parallel
  {
    std::vector<double*> blocks;
    std::string& reason = thread_reason[omp_get_thread_num()];
#pragma omp for schedule(static)
    for (long r = 0; r < count; ++r) {
      if (!reason.empty()) continue;
      problem->GetParameterBlocksForResidualBlock(residual_ids[r], &blocks);
      const ceres::CostFunction* cost = problem->GetCostFunctionForResidualBlock(residual_ids[r]);
      if (blocks.size() != 2) {
        reason = "a residual block depends on " + std::to_string(blocks.size()) +
                 " parameter blocks (bundle adjustment needs one camera and one point)";
        continue;
      }
      const int size0 = cost->parameter_block_sizes()[0], size1 = cost->parameter_block_sizes()[1];
      int point_slot = -1;
      if (!ordered_points.empty()) {
        const bool p0 = ordered_points.count(blocks[0]) > 0, p1 = ordered_points.count(blocks[1]) > 0;
        if (p0 == p1) reason = "a residual block does not connect one point (ordering group 0) and one camera";
        point_slot = p0 ? 0 : 1;
      } else if (size0 == kPointSize && size1 != kPointSize) {
        point_slot = 0;
      } else if (size1 == kPointSize) {
        point_slot = 1;  // also when both have 3 values: camera then point, the BAL convention
      } else {
        reason = "a residual block has no 3-vector point (blocks of size " + std::to_string(size0) + " and " +
                 std::to_string(size1) + ")";
      }
      if (point_slot >= 0 && cost->parameter_block_sizes()[point_slot] != kPointSize)
        reason = "a point block does not have 3 values";
      const int camera_size = point_slot >= 0 ? cost->parameter_block_sizes()[1 - point_slot] : 0;
      if (camera_size > kMaxCameraSize)
        reason = "a camera block has " + std::to_string(camera_size) + " values (at most 16)";
      if (cost->num_residuals() < 1 || cost->num_residuals() > kMaxResidualSize)
        reason = "residual blocks of " + std::to_string(cost->num_residuals()) + " values (ceres_cuda takes 1 to 8)";
      seen[r] = {point_slot >= 0 ? blocks[1 - point_slot] : nullptr, point_slot >= 0 ? blocks[point_slot] : nullptr, cost,
                 point_slot};
    }
  }
  for (const std::string& reason : thread_reason)
    if (!reason.empty()) return reason;

  // Number the blocks in order of first use. The hash map is built once over the problem's blocks and
  // then only read (on all threads); the first-use numbering is a sequential pass over arrays.
  std::vector<double*> all_blocks;
  problem->GetParameterBlocks(&all_blocks);
  std::unordered_map<const double*, int> block_index;
  block_index.reserve(all_blocks.size() * 2);
  for (int b = 0; b < static_cast<int>(all_blocks.size()); ++b) block_index.emplace(all_blocks[b], b);
  std::vector<int> camera_block(count), point_block(count);
#pragma omp parallel for schedule(static)
  for (long r = 0; r < count; ++r) {
    camera_block[r] = block_index.find(seen[r].camera)->second;
    point_block[r] = block_index.find(seen[r].point)->second;
  }
  std::vector<int> camera_of(all_blocks.size(), -1), point_of(all_blocks.size(), -1);
  std::vector<double*> cameras, points;
  std::vector<BaResidual> residuals(count);
  layout->camera_size = seen[0].cost->parameter_block_sizes()[1 - seen[0].point_slot];
  const int residual_size = seen[0].cost->num_residuals();
  for (long r = 0; r < count; ++r) {
    const Seen& x = seen[r];
    if (x.cost->parameter_block_sizes()[1 - x.point_slot] != layout->camera_size) return "camera blocks of different sizes";
    if (x.cost->num_residuals() != residual_size) return "residual blocks of different sizes";
    int& c = camera_of[camera_block[r]];
    if (c < 0) {
      c = static_cast<int>(cameras.size());
      cameras.push_back(x.camera);
    }
    int& p = point_of[point_block[r]];
    if (p < 0) {
      p = static_cast<int>(points.size());
      points.push_back(x.point);
    }
    residuals[r] = {residual_ids[r], x.cost, nullptr, c, p, x.point_slot == 1};
  }
  for (std::size_t b = 0; b < all_blocks.size(); ++b)
    if (camera_of[b] >= 0 && point_of[b] >= 0) return "a parameter block is used both as camera and as point";
  layout->residual_size = residual_size;
#pragma omp parallel for schedule(static)
  for (long r = 0; r < count; ++r) residuals[r].loss = problem->GetLossFunctionForResidualBlock(residual_ids[r]);

  // Manifolds, bounds and constancy of every block (in parallel: one map lookup per query).
  auto inspect = [&](const std::vector<double*>& blocks, int size, std::vector<char>* constant) {
    constant->assign(blocks.size(), 0);
    int unsupported = 0;
#pragma omp parallel for schedule(static) reduction(+ : unsupported)
    for (long k = 0; k < static_cast<long>(blocks.size()); ++k) {
      if (problem->HasManifold(blocks[k]) || has_bounds(*problem, blocks[k], size)) ++unsupported;
      (*constant)[k] = problem->IsParameterBlockConstant(blocks[k]) ? 1 : 0;
    }
    return unsupported;
  };
  std::vector<char> camera_constant, point_constant;
  if (inspect(cameras, layout->camera_size, &camera_constant) > 0)
    return "a camera block has a manifold (local parameterization) or bounds";
  if (inspect(points, kPointSize, &point_constant) > 0)
    return "a point block has a manifold (local parameterization) or bounds";

  // Variable blocks first, keeping the order of first use; residuals renumbered accordingly.
  auto partition = [](const std::vector<double*>& all, const std::vector<char>& constant, std::vector<double*>* ordered,
                      int* variable) {
    std::vector<int> new_index(all.size());
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t i = 0; i < all.size(); ++i)
        if (constant[i] == pass) {
          new_index[i] = static_cast<int>(ordered->size());
          ordered->push_back(all[i]);
          if (pass == 0) ++*variable;
        }
    return new_index;
  };
  const std::vector<int> camera_index = partition(cameras, camera_constant, &layout->cameras, &layout->variable_cameras);
  const std::vector<int> point_index = partition(points, point_constant, &layout->points, &layout->variable_points);
  // Residuals camera by camera (a counting sort, stable: problem order within a camera), so that the
  // GPU's per-camera sums read each camera's Jacobian blocks as one contiguous run.
  std::vector<long> start(layout->cameras.size() + 1, 0);
  for (BaResidual& r : residuals) {
    r.camera = camera_index[r.camera];
    r.point = point_index[r.point];
    ++start[r.camera + 1];
  }
  for (std::size_t c = 0; c + 1 < start.size(); ++c) start[c + 1] += start[c];
  std::vector<BaResidual> sorted(count);
  for (const BaResidual& r : residuals) sorted[start[r.camera]++] = r;
  residuals = std::vector<BaResidual>();
  // Residuals of constant cameras come last; those whose point is constant too only add fixed cost.
  long variable = count;
  while (variable > 0 && !layout->camera_is_variable(sorted[variable - 1].camera)) --variable;
  long kept = variable;
  for (long r = variable; r < count; ++r) {
    if (layout->point_is_variable(sorted[r].point)) sorted[kept++] = sorted[r];
    else layout->fixed_residuals.push_back(sorted[r]);
  }
  sorted.resize(kept);
  layout->residuals = std::move(sorted);
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
