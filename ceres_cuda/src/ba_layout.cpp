#include "ba_layout.h"

#include <ceres/cost_function.h>
#include <ceres/ordered_groups.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "block_use_table.h"
#include "ceres_cuda/snavely_reprojection_error.h"
#include "counting_sort.h"
#include "fresh_memory.h"
#include "phase_log.h"
#include "schur_structure.h"
#include "set_up_threads.h"

namespace ceres_cuda::detail {
namespace {

// The BAL-shaped engines solve ITERATIVE_SCHUR; DENSE_SCHUR and SPARSE_SCHUR go to the general ones,
// whose explicit Schur solver serves every shape.
std::string options_reason(const ceres::Solver::Options& o) {
  if (std::string reason = unsupported_options(o); !reason.empty()) return reason;
  if (o.linear_solver_type != ceres::ITERATIVE_SCHUR)
    return std::string("linear_solver_type ") + ceres::LinearSolverTypeToString(o.linear_solver_type) +
           " (the BAL-shaped engines run ITERATIVE_SCHUR)";
  return "";
}

constexpr const char* kOffTheFastPath =
    "not every residual block is a SnavelyReprojectionError (camera first) with one built-in loss or none";

// One residual block as the analysis sees it.
struct ResidualShape {
  double* camera = nullptr;
  double* point = nullptr;
  const ceres::CostFunction* cost = nullptr;
  int point_slot = -1;  // the point is the cost function's parameter point_slot
  int camera_size = 0;
};

// "" when residual block id connects one camera and one point as Solve takes them, otherwise why
// not. Sizes come from the cost function, which declares them, instead of the Problem's block map.
// blocks is scratch space, kept by the caller so that no residual allocates.
std::string inspect_residual(const ceres::Problem& problem, ceres::ResidualBlockId id, const BlockUseTable* ordered_points,
                             std::vector<double*>* blocks, ResidualShape* shape) {
  problem.GetParameterBlocksForResidualBlock(id, blocks);
  const ceres::CostFunction* cost = problem.GetCostFunctionForResidualBlock(id);
  if (blocks->size() != 2)
    return "a residual block depends on " + std::to_string(blocks->size()) +
           " parameter blocks (bundle adjustment needs one camera and one point)";
  const auto& sizes = cost->parameter_block_sizes();
  std::string reason;  // the last check that fails names it
  int point_slot = -1;
  if (ordered_points != nullptr) {
    const bool p0 = ordered_points->find((*blocks)[0]) >= 0, p1 = ordered_points->find((*blocks)[1]) >= 0;
    if (p0 == p1) reason = "a residual block does not connect one point (ordering group 0) and one camera";
    point_slot = p0 ? 0 : 1;
  } else if (sizes[0] == kPointSize && sizes[1] != kPointSize) {
    point_slot = 0;
  } else if (sizes[1] == kPointSize) {
    point_slot = 1;  // also when both have 3 values: camera then point, the BAL convention
  } else {
    reason = "a residual block has no 3-vector point (blocks of size " + std::to_string(sizes[0]) + " and " +
             std::to_string(sizes[1]) + ")";
  }
  if (point_slot >= 0 && sizes[point_slot] != kPointSize) reason = "a point block does not have 3 values";
  const int camera_size = point_slot >= 0 ? sizes[1 - point_slot] : 0;
  if (camera_size > kMaxCameraSize) reason = "a camera block has " + std::to_string(camera_size) + " values (at most 16)";
  if (cost->num_residuals() < 1 || cost->num_residuals() > kMaxResidualSize)
    reason = "residual blocks of " + std::to_string(cost->num_residuals()) + " values (ceres_cuda takes 1 to 8)";
  *shape = {point_slot >= 0 ? (*blocks)[1 - point_slot] : nullptr, point_slot >= 0 ? (*blocks)[point_slot] : nullptr,
            cost, point_slot, camera_size};
  return reason;
}

// A residual's camera and point: their slots in the BlockUseTable, then their indices in the layout.
struct ResidualUse {
  std::uint32_t camera_and_order;  // the camera << 1, | 1 when the camera is the cost function's parameter 0
  std::uint32_t point;
  int camera() const { return static_cast<int>(camera_and_order >> 1); }
  bool camera_first() const { return (camera_and_order & 1) != 0; }
  void renumber(const int* number) {
    camera_and_order = static_cast<std::uint32_t>(number[camera()]) << 1 | (camera_and_order & 1);
    point = static_cast<std::uint32_t>(number[point]);
  }
};

// Points renumbered by their first use in the camera-major order of residuals (variable points still
// first): the points a camera sees then lie in a few runs of numbers (those it is the first to see,
// and its neighbours' along the trajectory), so that the GPU's per-residual gathers of point-indexed
// values in camera order (the Schur product's camera pass) touch few cache lines, and the points of a
// point-order tile are seen by few cameras. The first use is an integer minimum over the residuals
// (the same whatever order the threads take), then a counting sort of the residuals that are first
// uses, by constancy.
void number_points_camera_major(std::vector<BaResidual>* residuals, std::vector<double*>* points, int variable_points,
                                std::vector<int>* point_position) {
  const long count = static_cast<long>(residuals->size());
  const long n = static_cast<long>(points->size());
  const std::unique_ptr<std::atomic<int>[]> first(new std::atomic<int>[n]);
  const std::unique_ptr<int[]> number = uninitialised_array<int>(n);
  std::vector<BaResidual>& all = *residuals;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (long p = 0; p < n; ++p) first[p].store(INT_MAX, std::memory_order_relaxed);
#pragma omp for schedule(static)
    for (long r = 0; r < count; ++r) {
      std::atomic<int>& f = first[all[r].point];
      int seen = f.load(std::memory_order_relaxed);
      while (r < seen && !f.compare_exchange_weak(seen, static_cast<int>(r), std::memory_order_relaxed)) {
      }
    }
  }
  std::vector<double*> renumbered(n);
  std::vector<int> renumbered_position(point_position->empty() ? 0 : n);
  parallel_counting_sort(
      count, 2,
      [&](long r) {
        const int p = all[r].point;
        return first[p].load(std::memory_order_relaxed) == r ? (p < variable_points ? 0 : 1) : -1;
      },
      [&](long r, long position) {
        number[all[r].point] = static_cast<int>(position);
        renumbered[position] = (*points)[all[r].point];
        if (!renumbered_position.empty()) renumbered_position[position] = (*point_position)[all[r].point];
      });
#pragma omp parallel for schedule(static)
  for (long r = 0; r < count; ++r) all[r].point = number[all[r].point];
  points->swap(renumbered);
  point_position->swap(renumbered_position);
}

}  // namespace

std::string analyze_problem(const ceres::Solver::Options& options, ceres::Problem* problem, BaLayout* layout,
                            bool fast_path_only) {
  *layout = BaLayout{};
  if (std::string reason = options_reason(options); !reason.empty()) return reason;
  if (problem == nullptr) return "problem is null";
  const SetUpThreads threads(problem->NumResidualBlocks());
  PhaseLog phase("analysis");
  std::vector<ceres::ResidualBlockId> residual_ids;
  reserve_fresh(&residual_ids, static_cast<std::size_t>(problem->NumResidualBlocks()));  // Ceres copies into it
  problem->GetResidualBlocks(&residual_ids);
  if (residual_ids.empty()) return "the problem has no residual blocks";
  const long count = static_cast<long>(residual_ids.size());

  // Points from the ordering's first group when one is given, in a table filled on all threads
  // (Ceres keeps the group as a std::set, which only one thread can walk, once).
  std::unique_ptr<BlockUseTable> ordered_points;
  if (options.linear_solver_ordering) {
    const auto& groups = options.linear_solver_ordering->group_to_elements();
    if (groups.size() != 2) return "linear_solver_ordering must have exactly two groups (points, then cameras)";
    const std::vector<double*> members(groups.begin()->second.begin(), groups.begin()->second.end());
    if (!members.empty()) {
      ordered_points = std::make_unique<BlockUseTable>(members.size());
#pragma omp parallel for schedule(static)
      for (long k = 0; k < static_cast<long>(members.size()); ++k) ordered_points->insert(members[k]);
    }
  }
  phase("residual blocks");

  // One pass over the residuals, on all threads (Problem's const queries: millions of residuals in
  // real problems, each a few cache misses in Ceres' own objects, so each is read once): its two
  // blocks, which one is the point, or why it does not fit; its camera and point go into the table of
  // blocks. The first residual sets the sizes and the loss all others are compared with, and the first
  // one that does not fit names the reason (the first thread with a reason has it).
  ResidualShape reference;
  {
    std::vector<double*> blocks;
    if (std::string reason = inspect_residual(*problem, residual_ids[0], ordered_points.get(), &blocks, &reference);
        !reason.empty())
      return reason;
  }
  const int residual_size = reference.cost->num_residuals();
  const ceres::LossFunction* reference_loss = problem->GetLossFunctionForResidualBlock(residual_ids[0]);
  // (A residual of constant blocks only is not evaluated, and may be of any kind.)
  const bool reference_varies =
      !problem->IsParameterBlockConstant(reference.camera) || !problem->IsParameterBlockConstant(reference.point);
  if (fast_path_only && reference_varies &&
      !(reference.point_slot == 1 && typeid(*reference.cost) == typeid(SnavelyReprojectionError)))
    return kOffTheFastPath;
  BlockUseTable table(static_cast<std::size_t>(problem->NumParameterBlocks()));
  const std::unique_ptr<ResidualUse[]> uses = uninitialised_array<ResidualUse>(count);
  std::vector<std::string> thread_reason(omp_get_max_threads());
  long other_camera_size = 0, other_residual_size = 0, not_snavely = 0, other_loss = 0;
#pragma omp parallel reduction(+ : other_camera_size, other_residual_size, not_snavely, other_loss)
  {
    // A run of residuals per thread, in thread order, taken a batch at a time: Ceres' queries for the
    // batch first, prefetching the table slots of its blocks, then the inserts (a new block's slot is
    // a cache miss: one per point, millions of them).
    const int team = omp_get_num_threads(), t = omp_get_thread_num();
    const long begin = count * t / team, end = count * (t + 1) / team;
    std::string& reason = thread_reason[t];
    std::vector<double*> blocks;
    constexpr long kBatch = 16;
    ResidualShape batch[kBatch];
    for (long first = begin; first < end && reason.empty(); first += kBatch) {
      const long n = std::min(kBatch, end - first);
      for (long k = 0; k < n && reason.empty(); ++k) {
        ResidualShape& x = batch[k];
        reason = inspect_residual(*problem, residual_ids[first + k], ordered_points.get(), &blocks, &x);
        if (!reason.empty()) break;
        other_camera_size += x.camera_size != reference.camera_size;
        other_residual_size += x.cost->num_residuals() != residual_size;
        not_snavely += x.point_slot != 1 || typeid(*x.cost) != typeid(SnavelyReprojectionError);
        other_loss += problem->GetLossFunctionForResidualBlock(residual_ids[first + k]) != reference_loss;
        table.prefetch(x.camera);
        table.prefetch(x.point);
      }
      if (!reason.empty()) break;  // the first residual that does not fit ends the thread's run
      for (long k = 0; k < n; ++k) {
        const int r = static_cast<int>(first + k);
        const int camera = table.insert(batch[k].camera), point = table.insert(batch[k].point);
        table.use(camera, 0, r);
        table.use(point, 1, r);
        uses[r] = {static_cast<std::uint32_t>(camera) << 1 | (batch[k].point_slot == 1 ? 1u : 0u),
                   static_cast<std::uint32_t>(point)};
      }
    }
  }
  for (const std::string& reason : thread_reason)
    if (!reason.empty()) return reason;
  if (other_camera_size > 0) return "camera blocks of different sizes";
  if (other_residual_size > 0) return "residual blocks of different sizes";
  phase("per-residual queries and the table of blocks");

  // The blocks' roles, from the table on all threads: the residual that first uses each camera and
  // each point, marked for the numbering below.
  std::unique_ptr<unsigned char[]> first_camera_use = uninitialised_array<unsigned char>(count),
                                 first_point_use = uninitialised_array<unsigned char>(count);
  long cameras = 0, points = 0, both_roles = 0;
  const long capacity = table.capacity();
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (long r = 0; r < count; ++r) first_camera_use[r] = first_point_use[r] = 0;
#pragma omp for schedule(static) reduction(+ : cameras, points, both_roles)
    for (long s = 0; s < capacity; ++s) {
      if (table.key(s) == nullptr) continue;
      const int as_camera = table.first_use(s, 0), as_point = table.first_use(s, 1);
      if (as_camera != BlockUseTable::kNotUsed) first_camera_use[as_camera] = 1;
      if (as_point != BlockUseTable::kNotUsed) first_point_use[as_point] = 1;
      cameras += as_camera != BlockUseTable::kNotUsed;
      points += as_point != BlockUseTable::kNotUsed;
      both_roles += as_camera != BlockUseTable::kNotUsed && as_point != BlockUseTable::kNotUsed;
    }
  }
  if (both_roles > 0) return "a parameter block is used both as camera and as point";
  // Ceres refuses an ordering that does not hold exactly the problem's blocks. Every residual's point
  // is in group 0 and its camera is not (inspect_residual); group 0 must hold nothing else, and group 1
  // nothing outside the problem, for the counts to say that the ordering is the problem's blocks.
  // Otherwise the general analysis, which checks every block, has the problem.
  if (options.linear_solver_ordering) {
    const auto& groups = options.linear_solver_ordering->group_to_elements();
    bool exact = options.linear_solver_ordering->NumElements() == problem->NumParameterBlocks() &&
                 static_cast<long>(groups.begin()->second.size()) == points;
    for (double* block : std::next(groups.begin())->second) exact = exact && problem->HasParameterBlock(block);
    if (!exact) return "linear_solver_ordering does not hold exactly the points in group 0 and the other blocks in group 1";
  }
  phase("roles of the blocks");

  // Cameras and points in order of first use (a counting sort of the residuals that first use one,
  // all in one bucket), then what Ceres says of each (constancy, manifold, bounds: a std::map look-up
  // per question, so once per block, on all threads, and in this order, in which neighbouring points
  // tend to share their look-ups' paths), then variable ones first (a counting sort by constancy).
  // By slot: the block's index in layout cameras or points.
  const std::unique_ptr<int[]> number = uninitialised_array<int>(capacity);
  // Without an ordering, per block by index its place in Ceres' program order (2 x its first residual +
  // its slot there), for the index's check of Ceres' e-blocks (ba_index.h); 2 x the residuals fit an int.
  const bool positions = !options.linear_solver_ordering && count < INT_MAX / 2;
  auto number_blocks = [&](const unsigned char* first_use, bool as_camera, long n, int size, std::vector<double*>* ordered,
                           std::vector<int>* position) {
    const std::unique_ptr<int[]> slot_by_use = uninitialised_array<int>(n);
    const std::unique_ptr<int[]> position_by_use = uninitialised_array<int>(positions ? n : 0);
    parallel_counting_sort(
        count, 1, [&](long r) { return first_use[r] ? 0 : -1; },
        [&](long r, long at) {
          slot_by_use[at] = as_camera ? uses[r].camera() : static_cast<int>(uses[r].point);
          if (positions) position_by_use[at] = 2 * static_cast<int>(r) + (uses[r].camera_first() == as_camera ? 0 : 1);
        });
    const std::unique_ptr<unsigned char[]> constant = uninitialised_array<unsigned char>(n);
    long unsupported = 0;
#pragma omp parallel for schedule(static) reduction(+ : unsupported)
    for (long k = 0; k < n; ++k) {
      double* block = table.key(slot_by_use[k]);
      unsupported += problem->HasManifold(block) || has_bounds(*problem, block, size);
      constant[k] = problem->IsParameterBlockConstant(block) ? 1 : 0;
    }
    if (unsupported > 0) return -1;
    reserve_fresh(ordered, n);
    ordered->resize(n);
    if (positions) position->resize(n);
    const std::vector<long> start = parallel_counting_sort(
        n, 2, [&](long k) { return static_cast<int>(constant[k]); },
        [&](long k, long at) {
          const int s = slot_by_use[k];
          number[s] = static_cast<int>(at);
          (*ordered)[at] = table.key(s);
          if (positions) (*position)[at] = position_by_use[k];
        });
    return static_cast<int>(start[1]);  // the variable ones
  };
  layout->variable_cameras = number_blocks(first_camera_use.get(), true, cameras, reference.camera_size,
                                           &layout->cameras, &layout->camera_position);
  if (layout->variable_cameras < 0) return "a camera block has a manifold (local parameterization) or bounds";
  layout->variable_points =
      number_blocks(first_point_use.get(), false, points, kPointSize, &layout->points, &layout->point_position);
  if (layout->variable_points < 0) return "a point block has a manifold (local parameterization) or bounds";
  first_camera_use.reset();
  first_point_use.reset();
  // From here on, residuals name their camera and point by index (one pass of scattered reads of
  // number, prefetched a few residuals ahead, instead of one in each pass below).
#pragma omp parallel for schedule(static)
  for (long r = 0; r < count; ++r) {
    if (r + 16 < count) __builtin_prefetch(&number[uses[r + 16].point]);
    uses[r].renumber(number.get());
  }
  phase("numbering by first use, constancy, manifolds and bounds");

  // The fast path (SnavelyReprojectionError everywhere, camera first, one built-in loss or none) is
  // known here in the common case, where every residual passes; then the observations are gathered
  // in the same pass as the order below. Otherwise the residuals that are kept decide, further down.
  layout->camera_size = reference.camera_size;
  layout->residual_size = residual_size;
  const bool snavely_everywhere = not_snavely == 0 && other_loss == 0;
  BuiltinLoss loss;
  const bool gather_observations = snavely_everywhere && recognise_builtin_loss(reference_loss, &loss);
  std::vector<double> observations;
  if (gather_observations) {
    reserve_fresh(&observations, 2 * count);
    observations.resize(2 * count);
  }

  // Residuals camera by camera (stable: problem order within a camera), so that the GPU's per-camera
  // sums read each camera's Jacobian blocks as one contiguous run; those of constant cameras come
  // last, and those whose point is constant too only add fixed cost: they go after all the others
  // (buckets camera_count and on), in the same camera-major order.
  const int camera_count = static_cast<int>(cameras);
  const int variable_cameras = layout->variable_cameras, variable_points = layout->variable_points;
  std::vector<BaResidual> sorted;
  reserve_fresh(&sorted, count);
  sorted.resize(count);  // not zero-filled (BaResidual's constructor): filled just below
  const std::vector<long> start = parallel_counting_sort(
      count, 2 * camera_count,
      [&](long r) {
        const int camera = uses[r].camera();
        return camera >= variable_cameras && static_cast<int>(uses[r].point) >= variable_points ? camera_count + camera : camera;
      },
      [&](long r, long position) {
        const ResidualUse& use = uses[r];
        const ceres::ResidualBlockId id = residual_ids[r];
        const ceres::CostFunction* cost = problem->GetCostFunctionForResidualBlock(id);
        sorted[position] = {id, cost, problem->GetLossFunctionForResidualBlock(id), use.camera(), static_cast<int>(use.point),
                            use.camera_first()};
        if (gather_observations) {
          const auto* snavely = static_cast<const SnavelyReprojectionError*>(cost);
          observations[2 * position] = snavely->observed_x();
          observations[2 * position + 1] = snavely->observed_y();
        }
      });
  phase("camera-major order");
  number_points_camera_major(&sorted, &layout->points, variable_points, &layout->point_position);
  const long kept = start[camera_count];
  layout->fixed_residuals.assign(sorted.begin() + kept, sorted.end());
  sorted.resize(kept);
  layout->residuals = std::move(sorted);
  phase("points numbered in the camera-major order");
  if (layout->residuals.empty()) return "every parameter block is constant";

  // Ceres' NumParameters() and NumResiduals() walk every block on one thread (seconds at
  // Final-13682's size); the analysis knows both, the first when every block is a camera or a point.
  layout->num_parameter_blocks = problem->NumParameterBlocks();
  layout->num_parameters = layout->num_parameter_blocks == cameras + points
                               ? static_cast<int>(cameras * layout->camera_size + points * kPointSize)
                               : problem->NumParameters();
  layout->num_residuals = static_cast<int>(count * residual_size);

  if (snavely_everywhere) {
    layout->snavely = gather_observations;
    layout->loss = loss;
    if (layout->snavely) {
      observations.resize(2 * kept);
      layout->observations = std::move(observations);
    }
  } else {
    // Some residual is not on the fast path: the kept ones decide, with the first one's loss.
    const std::vector<BaResidual>& kept_residuals = layout->residuals;
    const ceres::LossFunction* shared_loss = kept_residuals.front().loss;
    long other = 0;
#pragma omp parallel for schedule(static) reduction(+ : other)
    for (long r = 0; r < kept; ++r) {
      const BaResidual& x = kept_residuals[r];
      other += typeid(*x.cost) != typeid(SnavelyReprojectionError) || !x.camera_first || x.loss != shared_loss;
    }
    layout->snavely = other == 0 && recognise_builtin_loss(shared_loss, &layout->loss);
    if (layout->snavely) {
      layout->observations.resize(2 * kept);
#pragma omp parallel for schedule(static)
      for (long r = 0; r < kept; ++r) {
        const auto* cost = static_cast<const SnavelyReprojectionError*>(kept_residuals[r].cost);
        layout->observations[2 * r] = cost->observed_x();
        layout->observations[2 * r + 1] = cost->observed_y();
      }
    }
  }
  phase("fast path's check");
  return fast_path_only && !layout->snavely ? kOffTheFastPath : "";
}

}  // namespace ceres_cuda::detail
