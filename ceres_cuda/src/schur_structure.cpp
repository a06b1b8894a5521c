#include "schur_structure.h"

#include <ceres/cost_function.h>
#include <ceres/ordered_groups.h>

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "block_use_table.h"
#include "counting_sort.h"
#include "phase_log.h"
#include "set_up_threads.h"

namespace ceres_cuda::detail {
namespace {

// What the analysis reads of one parameter block before the roles are known.
struct BlockInfo {
  double* user = nullptr;
  int size = 0, tangent_size = 0;
  const ceres::Manifold* manifold = nullptr;
  bool constant = false;
  bool used = false;  // by a residual block with a variable block (Ceres' reduced program)
  bool e_block = false;
};

// The residual blocks' parameter blocks, as indices into the analysis' blocks (CSR: residual r's at
// [start[r], start[r + 1]) of block).
struct ResidualBlocks {
  std::vector<long> start{0};
  std::vector<int> block;
};

// Ceres' ComputeStableSchurOrdering (parameter_block_ordering.cc, graph_algorithms.h): the variable
// blocks in program order, stably sorted by their degree in the Hessian graph (how many other
// variable blocks share a residual with them), then taken greedily into an independent set. The
// columns (each block's residuals), the degrees (one block per thread) and the stable sort (a counting
// sort by degree) run on all threads: millions of points at real sizes.
void choose_e_blocks(const ResidualBlocks& residuals, std::vector<BlockInfo>* blocks) {
  const int B = static_cast<int>(blocks->size());
  const long R = static_cast<long>(residuals.start.size()) - 1, P = residuals.start[R];
  auto variable = [&](int b) { return !(*blocks)[b].constant; };
  std::vector<int> residual_of(P);  // position -> its residual
#pragma omp parallel for schedule(static)
  for (long r = 0; r < R; ++r)
    for (long k = residuals.start[r]; k < residuals.start[r + 1]; ++k) residual_of[k] = static_cast<int>(r);
  std::vector<int> column(P);  // block -> its residuals, in residual order
  const std::vector<long> column_start = parallel_counting_sort(
      P, B, [&](long k) { return variable(residuals.block[k]) ? residuals.block[k] : -1; },
      [&](long k, long position) { column[position] = residual_of[k]; });

  // A neighbour counts once: each thread marks the ones it has met for the block at hand (last_seen
  // holds the block it was met for), which a block shared by every residual needs, with millions.
  std::vector<long> degree(B, 0);
#pragma omp parallel
  {
    std::vector<int> last_seen(B, -1);
#pragma omp for schedule(dynamic, 256)
    for (int b = 0; b < B; ++b) {
      long count = 0;
      for (long q = column_start[b]; q < column_start[b + 1]; ++q)
        for (long k = residuals.start[column[q]]; k < residuals.start[column[q] + 1]; ++k) {
          const int n = residuals.block[k];
          if (n == b || !variable(n) || last_seen[n] == b) continue;
          last_seen[n] = b;
          ++count;
        }
      degree[b] = count;
    }
  }
  long max_degree = 0;
#pragma omp parallel for schedule(static) reduction(max : max_degree)
  for (int b = 0; b < B; ++b) max_degree = std::max(max_degree, degree[b]);
  std::vector<int> queue(B);
  const long queued = parallel_counting_sort(
      B, static_cast<int>(max_degree) + 1, [&](long b) { return (*blocks)[b].used ? static_cast<int>(degree[b]) : -1; },
      [&](long b, long position) { queue[position] = static_cast<int>(b); })[max_degree + 1];
  queue.resize(queued);
  std::vector<char> taken_or_neighbour(B, 0);
  for (const int b : queue) {
    if (taken_or_neighbour[b]) continue;
    (*blocks)[b].e_block = true;
    taken_or_neighbour[b] = 1;
    for (long q = column_start[b]; q < column_start[b + 1]; ++q)
      for (long k = residuals.start[column[q]]; k < residuals.start[column[q] + 1]; ++k)
        taken_or_neighbour[residuals.block[k]] = 1;
  }
}

// The e-blocks from the user's ordering (its first group), or "" and nothing marked when the ordering
// leaves the choice to Ceres (no ordering, or one group). Ceres refuses an ordering, of any number of
// groups, that does not hold exactly the problem's blocks.
std::string e_blocks_from_ordering(const ceres::ParameterBlockOrdering* ordering,
                                   const std::unordered_map<const double*, int>& index_of,
                                   std::vector<BlockInfo>* blocks, bool* chosen) {
  *chosen = false;
  if (ordering == nullptr) return "";
  if (ordering->NumElements() != static_cast<int>(blocks->size()))
    return "linear_solver_ordering has " + std::to_string(ordering->NumElements()) + " parameter blocks, the problem " +
           std::to_string(blocks->size());
  for (const auto& group : ordering->group_to_elements())
    for (double* member : group.second)
      if (index_of.count(member) == 0) return "linear_solver_ordering names a block that is not in the problem";
  if (ordering->NumGroups() <= 1) return "";
  for (double* member : ordering->group_to_elements().begin()->second) (*blocks)[index_of.at(member)].e_block = true;
  *chosen = true;
  return "";
}

}  // namespace

bool has_bounds(const ceres::Problem& problem, double* block, int size) {
  for (int k = 0; k < size; ++k)
    if (problem.GetParameterLowerBound(block, k) > -std::numeric_limits<double>::max() ||
        problem.GetParameterUpperBound(block, k) < std::numeric_limits<double>::max())
      return true;
  return false;
}

std::string unsupported_options(const ceres::Solver::Options& o) {
  if (o.minimizer_type != ceres::TRUST_REGION) return "minimizer_type is not TRUST_REGION";
  if (o.trust_region_strategy_type != ceres::LEVENBERG_MARQUARDT) return "trust_region_strategy_type is not LEVENBERG_MARQUARDT";
  if (o.use_nonmonotonic_steps) return "use_nonmonotonic_steps is set";
  if (o.use_inner_iterations) return "use_inner_iterations is set";
  if (o.check_gradients) return "check_gradients is set";
  if (o.use_mixed_precision_solves) return "use_mixed_precision_solves is set";
  if (o.dynamic_sparsity) return "dynamic_sparsity is set";
  if (o.linear_solver_type == ceres::ITERATIVE_SCHUR && o.preconditioner_type != ceres::JACOBI &&
      o.preconditioner_type != ceres::SCHUR_JACOBI)
    return std::string("preconditioner_type ") + ceres::PreconditionerTypeToString(o.preconditioner_type) +
           " (ceres_cuda has JACOBI and SCHUR_JACOBI)";
  return "";
}

std::string SchurSizes::to_string() const {
  auto text = [](int v) { return v == kDynamic ? std::string("d") : std::to_string(v); };
  return text(row) + "," + text(e) + "," + text(f);
}

SchurSizes SchurSizes::specialization() const {
  // Ceres 2.1's list of specializations (schur_templates.cc), in its order of preference.
  static const SchurSizes kSpecializations[] = {
      {2, 2, 2}, {2, 2, 3}, {2, 2, 4}, {2, 2, kDynamic}, {2, 3, 3}, {2, 3, 4}, {2, 3, 6}, {2, 3, 9}, {2, 3, kDynamic},
      {2, 4, 3}, {2, 4, 4}, {2, 4, 6}, {2, 4, 8}, {2, 4, 9}, {2, 4, kDynamic}, {2, kDynamic, kDynamic}, {3, 3, 3},
      {4, 4, 2}, {4, 4, 3}, {4, 4, 4}, {4, 4, kDynamic}};
  auto matches = [](int wanted, int size) { return wanted == kDynamic || wanted == size; };
  for (const SchurSizes& s : kSpecializations)
    if (s.row == row && matches(s.e, e) && matches(s.f, f)) return s;
  return {kDynamic, kDynamic, kDynamic};
}

SchurSizes detect_schur_sizes(const SchurStructure& s) {
  SchurSizes sizes;
  auto merge = [](int* value, int size) {
    *value = *value == 0 ? size : (*value == size ? size : SchurSizes::kDynamic);
  };
  for (const SchurResidual& r : s.residuals) {
    if (r.e_block < 0) continue;
    merge(&sizes.row, r.size);
    merge(&sizes.e, s.blocks[r.e_block].tangent_size);
    const int* params = s.params_of(r);
    for (int k = 0; k < r.num_params; ++k)
      if (s.is_variable(params[k]) && !s.is_e_block(params[k])) merge(&sizes.f, s.blocks[params[k]].tangent_size);
  }
  return sizes;
}

std::string analyze_schur_structure(const ceres::Solver::Options& options, ceres::Problem* problem,
                                    SchurStructure* structure) {
  if (problem == nullptr) {
    *structure = SchurStructure{};
    return "problem is null";
  }
  return analyze_schur_structure(options, CeresProblemSource(*problem), structure);
}

std::string analyze_schur_structure(const ceres::Solver::Options& options, const ProblemSource& problem,
                                    SchurStructure* structure) {
  *structure = SchurStructure{};
  if (std::string reason = unsupported_options(options); !reason.empty()) return reason;
  const ceres::LinearSolverType solver = options.linear_solver_type;
  if (solver != ceres::ITERATIVE_SCHUR && solver != ceres::DENSE_SCHUR && solver != ceres::SPARSE_SCHUR)
    return std::string("linear_solver_type ") + ceres::LinearSolverTypeToString(solver) +
           " (ceres_cuda runs ITERATIVE_SCHUR, DENSE_SCHUR and SPARSE_SCHUR)";
  PhaseLog phase("general analysis");

  // Parameter blocks in Ceres' program order, which its independent set follows between blocks of equal
  // degree: the order in which AddResidualBlock first met them (Problem::GetParameterBlocks lists them
  // by address instead). A block added alone with AddParameterBlock takes its first residual's place
  // here; blocks that no residual uses come last (the reduced program drops them). Ceres' queries run
  // on all threads (millions of residual blocks at real sizes); a block's place is its first position
  // among all residuals' blocks, an integer minimum in a table of the blocks (the same whatever order
  // the threads take).
  const long R = problem.num_residual_blocks();
  if (R == 0) return "the problem has no residual blocks";
  structure->num_residual_blocks = static_cast<int>(R);
  const SetUpThreads threads(R);
  ResidualBlocks residual_blocks;
  residual_blocks.start.assign(R + 1, 0);
  // Each residual block's cost function, asked of Ceres once: every question to Ceres about a residual
  // block reads its scattered objects again.
  std::vector<const ceres::CostFunction*> cost_of(R);
  long bad_residual = R, residuals = 0;
#pragma omp parallel for schedule(static) reduction(min : bad_residual) reduction(+ : residuals)
  for (long r = 0; r < R; ++r) {
    const ceres::CostFunction* cost = problem.cost(r);
    cost_of[r] = cost;
    const int size = cost->num_residuals();
    residuals += size;
    if (size < 1 || size > kMaxResidualBlockSize) bad_residual = std::min(bad_residual, r);
    residual_blocks.start[r + 1] = static_cast<long>(cost->parameter_block_sizes().size());
  }
  if (bad_residual < R)
    return "a residual block has " + std::to_string(cost_of[bad_residual]->num_residuals()) +
           " residuals (ceres_cuda takes 1 to " + std::to_string(kMaxResidualBlockSize) + ")";
  structure->num_residuals = static_cast<int>(residuals);
  for (long r = 0; r < R; ++r) residual_blocks.start[r + 1] += residual_blocks.start[r];
  const long positions = residual_blocks.start[R];
  if (positions > std::numeric_limits<int>::max()) return "more than 2^31 parameter blocks in residual blocks";

  const long num_user_blocks = problem.num_parameter_blocks();
  BlockUseTable table(num_user_blocks);
  std::vector<int> slot_of(positions);
#pragma omp parallel
  {
    std::vector<double*> scratch;
#pragma omp for schedule(static)
    for (long r = 0; r < R; ++r) {
      problem.parameter_blocks(r, &scratch);
      for (std::size_t k = 0; k < scratch.size(); ++k) {
        const long position = residual_blocks.start[r] + static_cast<long>(k);
        const int slot = table.insert(scratch[k]);
        table.use(slot, 0, static_cast<int>(position));
        slot_of[position] = slot;
      }
    }
  }
  // The blocks in order of first position, then those no residual uses.
  std::vector<BlockInfo> blocks;
  std::vector<int> number_of_slot(table.capacity(), -1);
  const long used = parallel_counting_sort(
      positions, 1, [&](long p) { return table.first_use(slot_of[p], 0) == p ? 0 : -1; },
      [&](long p, long n) { number_of_slot[slot_of[p]] = static_cast<int>(n); })[1];
  blocks.resize(used);
#pragma omp parallel for schedule(static)
  for (long slot = 0; slot < table.capacity(); ++slot)
    if (number_of_slot[slot] >= 0) blocks[number_of_slot[slot]].user = table.key(slot);
  // Blocks no residual uses, only where there are some (GetParameterBlocks walks Ceres' std::map).
  if (used < num_user_blocks) {
    std::vector<double*> user_blocks;
    problem.all_parameter_blocks(&user_blocks);
    for (double* user : user_blocks)
      if (table.find(user) < 0) blocks.push_back(BlockInfo{user});
  }
  std::unordered_map<const double*, int> index_of;  // for the user's ordering, which names blocks by address
  if (options.linear_solver_ordering) {
    index_of.reserve(blocks.size());
    for (std::size_t b = 0; b < blocks.size(); ++b) index_of.emplace(blocks[b].user, static_cast<int>(b));
  }

  // What the source says of each block (for a ceres::Problem a look-up in its std::map per question),
  // on all threads, in the blocks' address order: consecutive look-ups then walk the same path of the
  // map, in cache.
  const long B = static_cast<long>(blocks.size());
  std::vector<int> by_address(B);
  for (long b = 0; b < B; ++b) by_address[b] = static_cast<int>(b);
  std::sort(by_address.begin(), by_address.end(),
            [&](int a, int b) { return std::less<const double*>()(blocks[a].user, blocks[b].user); });
  long parameters = 0, effective = 0, bounded = 0;
#pragma omp parallel for schedule(static) reduction(+ : parameters, effective, bounded)
  for (long k = 0; k < B; ++k) {
    const long b = by_address[k];
    BlockInfo& info = blocks[b];
    const ProblemSource::BlockFacts facts = problem.facts(info.user);
    info.size = facts.size;
    info.tangent_size = facts.tangent_size;
    info.manifold = facts.manifold;
    info.constant = facts.constant;
    info.used = !info.constant && b < used;  // the first `used` blocks are those residuals name
    parameters += info.size;
    effective += info.tangent_size;
    bounded += !info.constant && facts.bounded;
  }
  if (bounded > 0) return "a parameter block has bounds (ceres_cuda's minimizer has no bounds constraints)";
  structure->num_parameters = static_cast<int>(parameters);
  structure->num_effective_parameters = static_cast<int>(effective);

  // Residual blocks: their blocks as indices, and which blocks the reduced program keeps.
  residual_blocks.block.resize(positions);
#pragma omp parallel for schedule(static)
  for (long p = 0; p < positions; ++p) residual_blocks.block[p] = number_of_slot[slot_of[p]];
  phase("blocks and residual blocks");
  structure->num_parameter_blocks = static_cast<int>(blocks.size());

  bool chosen = false;
  if (std::string reason = e_blocks_from_ordering(options.linear_solver_ordering.get(), index_of, &blocks, &chosen);
      !reason.empty())
    return reason;
  if (!chosen) choose_e_blocks(residual_blocks, &blocks);
  phase("e-blocks");

  // Roles and numbering: used variable f-blocks, then used variable e-blocks (each in program order),
  // then every other block (constant, or unused: the reduced program drops those).
  std::vector<int> number(blocks.size(), -1);
  auto role = [&](const BlockInfo& b) { return !b.constant && b.used ? (b.e_block ? 1 : 0) : 2; };
  for (int pass = 0; pass < 3; ++pass)
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (role(blocks[b]) != pass) continue;
      const BlockInfo& info = blocks[b];
      if (pass == 0 && info.tangent_size > kMaxFBlockTangentSize)
        return "a parameter block has " + std::to_string(info.tangent_size) + " tangent values (ceres_cuda takes at most " +
               std::to_string(kMaxFBlockTangentSize) + " in blocks that are not eliminated)";
      if (pass < 2 && info.tangent_size < 1) return "a variable parameter block has a tangent space of size 0";
      if (pass == 1 && info.tangent_size > kMaxEBlockTangentSize)
        return "an eliminated (e-) block has " + std::to_string(info.tangent_size) + " tangent values (ceres_cuda takes 1 to " +
               std::to_string(kMaxEBlockTangentSize) + ")";
      number[b] = static_cast<int>(structure->blocks.size());
      SchurBlock block;
      block.user = info.user;
      block.size = info.size;
      block.tangent_size = info.tangent_size;
      block.manifold = info.manifold;
      block.offset = structure->state_size;
      structure->state_size += info.size;
      if (pass < 2) {
        block.tangent_offset = structure->f_tangent_size + structure->e_tangent_size;
        (pass == 0 ? structure->f_tangent_size : structure->e_tangent_size) += info.tangent_size;
        ++(pass == 0 ? structure->num_f_blocks : structure->num_e_blocks);
      }
      structure->blocks.push_back(block);
    }
  if (structure->num_variable_blocks() == 0) return "every parameter block is constant";
  if (structure->num_e_blocks == 0) return "no parameter block is eliminated (ordering group 0 has no variable block)";
  if (structure->num_f_blocks == 0) return "every variable parameter block is eliminated (no reduced system is left)";

  // Residual blocks, on all threads: their blocks' numbers, their e-block, whether any block varies and
  // their family; then placed family after family (the fixed ones apart), in program order within each.
  structure->params.resize(positions);
#pragma omp parallel for schedule(static)
  for (long p = 0; p < positions; ++p) structure->params[p] = number[residual_blocks.block[p]];
  std::vector<int> e_block_of(R, -1);
  std::vector<CostModel> model_of(R, CostModel::Host);
  std::vector<char> varies(R, 0);
  long two_e_blocks = R;
#pragma omp parallel for schedule(static) reduction(min : two_e_blocks)
  for (long r = 0; r < R; ++r) {
    for (long k = residual_blocks.start[r]; k < residual_blocks.start[r + 1]; ++k) {
      const int n = structure->params[k];
      varies[r] = varies[r] || structure->is_variable(n);
      if (!structure->is_e_block(n)) continue;
      if (e_block_of[r] >= 0) two_e_blocks = std::min(two_e_blocks, r);
      e_block_of[r] = n;
    }
    if (varies[r]) model_of[r] = cost_model_of(cost_of[r]);
  }
  if (two_e_blocks < R)
    return "a residual block depends on two eliminated (e-) blocks: group 0 of linear_solver_ordering is not an "
           "independent set";
  std::vector<int> family_of(R, -1);
  std::vector<const ceres::LossFunction*> loss_of(R, nullptr);
  FamilyAssignment assignment;
  for (long r = 0; r < R; ++r) {
    loss_of[r] = problem.loss(r);
    if (varies[r]) family_of[r] = assignment.family_of(model_of[r], loss_of[r]);
  }
  std::vector<int> rank;
  structure->families = assignment.ordered(&rank);
  const int F = static_cast<int>(structure->families.size());
  std::vector<SchurResidual> placed(R);
  const std::vector<long> family_start = parallel_counting_sort(
      R, F + 1, [&](long r) { return varies[r] ? rank[family_of[r]] : F; },
      [&](long r, long position) {
        SchurResidual& residual = placed[position];
        residual.cost = cost_of[r];
        residual.loss = loss_of[r];
        residual.size = cost_of[r]->num_residuals();
        residual.first_param = residual_blocks.start[r];
        residual.num_params = static_cast<int>(residual_blocks.start[r + 1] - residual_blocks.start[r]);
        residual.e_block = e_block_of[r];
      });
  for (int f = 0; f < F; ++f) {
    structure->families[f].first = static_cast<int>(family_start[f]);
    structure->families[f].last = static_cast<int>(family_start[f + 1]);
  }
  structure->fixed_residuals.assign(placed.begin() + family_start[F], placed.end());
  placed.resize(family_start[F]);
  structure->residuals = std::move(placed);
  phase("numbering and residuals");
  return "";
}

}  // namespace ceres_cuda::detail
