#include "ba_layout.h"

#include <ceres/cost_function.h>
#include <ceres/ordered_groups.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <limits>
#include <string>
#include <typeinfo>
#include <unordered_set>

#include "ceres_cuda/snavely_reprojection_error.h"
#include "phase_log.h"
#include "pointer_index.h"

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

constexpr int kNotUsed = INT_MAX;

// target = min(target, value), atomically (an integer minimum: the result does not depend on the order).
void store_minimum(std::atomic<int>& target, int value) {
  int current = target.load(std::memory_order_relaxed);
  while (value < current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
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
  PhaseLog phase("analysis");
  std::vector<ceres::ResidualBlockId> residual_ids;
  problem->GetResidualBlocks(&residual_ids);
  if (residual_ids.empty()) return "the problem has no residual blocks";
  phase("residual blocks");
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

  phase("per-residual queries");
  // Number the blocks in order of first use, on all threads. The hash table of the problem's blocks
  // is filled on all threads and then only read (PointerIndex: at Venice scale on 2 cores it takes
  // 0.05 s where std::unordered_map's fill on one thread took 0.17 s); each block's first residual is
  // an integer minimum (the same whatever order the threads take); only the ranking is a sequential
  // pass, over one byte per residual.
  std::vector<double*> all_blocks;
  problem->GetParameterBlocks(&all_blocks);
  const PointerIndex block_index(all_blocks);
  phase("parameter blocks and their table");
  const long blocks = static_cast<long>(all_blocks.size());
  std::vector<int> camera_block(count), point_block(count);
  std::vector<std::atomic<int>> first_as_camera(blocks), first_as_point(blocks);
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (long b = 0; b < blocks; ++b) {
      first_as_camera[b].store(kNotUsed, std::memory_order_relaxed);
      first_as_point[b].store(kNotUsed, std::memory_order_relaxed);
    }
#pragma omp for schedule(static)
    for (long r = 0; r < count; ++r) {
      camera_block[r] = block_index.find(seen[r].camera);
      point_block[r] = block_index.find(seen[r].point);
      store_minimum(first_as_camera[camera_block[r]], static_cast<int>(r));
      store_minimum(first_as_point[point_block[r]], static_cast<int>(r));
    }
  }
  layout->camera_size = seen[0].cost->parameter_block_sizes()[1 - seen[0].point_slot];
  const int residual_size = seen[0].cost->num_residuals();
  std::vector<unsigned char> first_use(count);  // bit 0: first use of its camera, bit 1: of its point
  long other_camera_size = 0, other_residual_size = 0;
#pragma omp parallel for schedule(static) reduction(+ : other_camera_size, other_residual_size)
  for (long r = 0; r < count; ++r) {
    const Seen& x = seen[r];
    other_camera_size += x.cost->parameter_block_sizes()[1 - x.point_slot] != layout->camera_size;
    other_residual_size += x.cost->num_residuals() != residual_size;
    first_use[r] = (first_as_camera[camera_block[r]].load(std::memory_order_relaxed) == r ? 1 : 0) |
                   (first_as_point[point_block[r]].load(std::memory_order_relaxed) == r ? 2 : 0);
  }
  if (other_camera_size > 0) return "camera blocks of different sizes";
  if (other_residual_size > 0) return "residual blocks of different sizes";
  long both_roles = 0;
#pragma omp parallel for schedule(static) reduction(+ : both_roles)
  for (long b = 0; b < blocks; ++b)
    both_roles += first_as_camera[b].load(std::memory_order_relaxed) != kNotUsed &&
                  first_as_point[b].load(std::memory_order_relaxed) != kNotUsed;
  if (both_roles > 0) return "a parameter block is used both as camera and as point";
  std::vector<int> camera_of(blocks, -1), point_of(blocks, -1);
  std::vector<double*> cameras, points;
  for (long r = 0; r < count; ++r) {
    if (first_use[r] & 1) {
      camera_of[camera_block[r]] = static_cast<int>(cameras.size());
      cameras.push_back(seen[r].camera);
    }
    if (first_use[r] & 2) {
      point_of[point_block[r]] = static_cast<int>(points.size());
      points.push_back(seen[r].point);
    }
  }
  phase("numbering by first use");
  layout->residual_size = residual_size;

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

  phase("manifolds, bounds and constancy");
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
  // GPU's per-camera sums read each camera's Jacobian blocks as one contiguous run. On all threads:
  // each counts its own run of residuals per camera, the runs' offsets go camera by camera and, within
  // a camera, thread by thread (so problem order is kept), then each thread builds its run's residuals
  // straight into their places (no unsorted copy: at millions of residuals, fresh memory is slow).
  auto camera_of_residual = [&](long r) { return camera_index[camera_of[camera_block[r]]]; };
  const std::size_t camera_count = layout->cameras.size();
  std::vector<BaResidual> sorted(count);
  std::vector<long> offsets;
  int team = 1;
#pragma omp parallel
  {
#pragma omp single
    {
      team = omp_get_num_threads();
      offsets.assign(static_cast<std::size_t>(team) * camera_count, 0);
    }
    const int t = omp_get_thread_num();
    const long begin = count * t / team, end = count * (t + 1) / team;
    long* mine = offsets.data() + static_cast<std::size_t>(t) * camera_count;
    for (long r = begin; r < end; ++r) ++mine[camera_of_residual(r)];
#pragma omp barrier
#pragma omp single
    {
      long running = 0;
      for (std::size_t c = 0; c < camera_count; ++c)
        for (int u = 0; u < team; ++u) {
          long& slot = offsets[static_cast<std::size_t>(u) * camera_count + c];
          const long n = slot;
          slot = running;
          running += n;
        }
    }
    for (long r = begin; r < end; ++r) {
      const int camera = camera_of_residual(r);
      sorted[mine[camera]++] = {residual_ids[r], seen[r].cost, problem->GetLossFunctionForResidualBlock(residual_ids[r]),
                                camera, point_index[point_of[point_block[r]]], seen[r].point_slot == 1};
    }
  }
  phase("camera-major order");
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
  const std::vector<BaResidual>& kept_residuals = layout->residuals;
  const long kept_count = static_cast<long>(kept_residuals.size());
  const ceres::LossFunction* shared_loss = kept_residuals.front().loss;
  long other = 0;
#pragma omp parallel for schedule(static) reduction(+ : other)
  for (long r = 0; r < kept_count; ++r) {
    const BaResidual& x = kept_residuals[r];
    other += typeid(*x.cost) != typeid(SnavelyReprojectionError) || !x.camera_first || x.loss != shared_loss;
  }
  layout->snavely = other == 0 && recognise_builtin_loss(shared_loss, &layout->loss);
  if (layout->snavely) {
    layout->observations.resize(2 * kept_residuals.size());
#pragma omp parallel for schedule(static)
    for (long r = 0; r < kept_count; ++r) {
      const auto* cost = static_cast<const SnavelyReprojectionError*>(kept_residuals[r].cost);
      layout->observations[2 * r] = cost->observed_x();
      layout->observations[2 * r + 1] = cost->observed_y();
    }
  }
  phase("fixed residuals and the fast path's check");
  return "";
}

}  // namespace ceres_cuda::detail
