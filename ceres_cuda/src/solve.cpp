#include "ceres_cuda/solve.h"

#include <ceres/cost_function.h>
#include <ceres/loss_function.h>
#include <ceres/ordered_groups.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ba_engine.h"
#include "ba_layout.h"
#include "fresh_memory.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/seconds_since.h"
#include "lm_minimizer.h"
#include "problem_source.h"
#include "schur_structure.h"
#include "solve_source.h"
#include "threaded_evaluator.h"

namespace ceres_cuda {
namespace {

using detail::BaLayout;
using linalg_cuda::detail::seconds_since;

// Cost of the BAL layout's residual blocks whose parameters are all constant (Ceres' fixed_cost).
double fixed_cost(const BaLayout& layout) {
  double total = 0.0;
  std::vector<double> residuals(layout.residual_size);
  for (const detail::BaResidual& r : layout.fixed_residuals) {
    const double* camera = layout.cameras[r.camera];
    const double* point = layout.points[r.point];
    const double* params[2] = {r.camera_first ? camera : point, r.camera_first ? point : camera};
    if (!r.cost->Evaluate(params, residuals.data(), nullptr)) return std::nan("");
    double s = 0.0;
    for (const double v : residuals) s += v * v;
    if (r.loss) {
      double rho[3];
      r.loss->Evaluate(s, rho);
      s = rho[0];
    }
    total += 0.5 * s;
  }
  return total;
}

// Ceres' check before it solves (Program::ParameterBlocksAreFinite): its message for the first block,
// in the order given, that holds a NaN or an infinity; "" when every value is finite.
template <typename BlockAt>
std::string non_finite_block_message(long count, const BlockAt& block_at) {
  long first = count;
#pragma omp parallel for schedule(static) reduction(min : first)
  for (long b = 0; b < count; ++b) {
    const std::pair<const double*, int> block = block_at(b);
    for (int k = 0; k < block.second; ++k)
      if (!std::isfinite(block.first[k])) {
        first = std::min(first, b);
        break;
      }
  }
  if (first == count) return "";
  const auto [values, size] = block_at(first);
  int index = 0;
  while (std::isfinite(values[index])) ++index;
  char text[256];
  std::snprintf(text, sizeof text,
                "ParameterBlock: %p with size %d has at least one invalid value.\n"
                "First invalid value is at index: %d.\nParameter block values: ",
                static_cast<const void*>(values), size, index);
  std::string message = text;
  for (int k = 0; k < size; ++k) {
    std::snprintf(text, sizeof text, "%12g ", values[k]);
    message += text;
  }
  return message;
}

// Ceres' message when a residual block whose parameter blocks are all constant does not evaluate to
// finite values (Program::RemoveFixedBlocks): the first such block in the problem's order, by its
// index in that order. Only an overflow of their sum is not one (Ceres goes on with an infinite
// fixed cost).
std::string fixed_residual_failure(const ceres::Problem& problem) {
  std::vector<ceres::ResidualBlockId> ids;
  problem.GetResidualBlocks(&ids);
  std::vector<double*> blocks;
  std::vector<double> residuals;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    problem.GetParameterBlocksForResidualBlock(ids[i], &blocks);
    if (!std::all_of(blocks.begin(), blocks.end(), [&](double* b) { return problem.IsParameterBlockConstant(b); }))
      continue;
    residuals.resize(problem.GetCostFunctionForResidualBlock(ids[i])->num_residuals());
    double cost = 0.0;
    bool evaluated = false;
    try {
      evaluated = problem.EvaluateResidualBlock(ids[i], true, &cost, residuals.data(), nullptr);
    } catch (...) {  // a cost function that throws fails its evaluation, as guarded_call has it
    }
    if (!evaluated)
      return "Evaluation of the residual " + std::to_string(i) + " failed during removal of fixed residual blocks.";
  }
  return "Residual evaluation of the constant residual blocks failed.";
}

// Ceres names the first block with a NaN or an infinity in its program's order: the order in which the
// residual blocks meet their blocks (as the engines number them, blocks in no residual block after
// those). The engines check their blocks in their own order, on all threads; where one fails, this
// finds the block Ceres names. `engines_message` where only blocks in no residual block hold one.
std::string first_non_finite_in_program_order(const ceres::Problem& problem, const std::string& engines_message) {
  std::vector<ceres::ResidualBlockId> ids;
  problem.GetResidualBlocks(&ids);
  std::unordered_set<const double*> seen;
  std::vector<std::pair<const double*, int>> order;
  std::vector<double*> blocks;
  for (ceres::ResidualBlockId id : ids) {
    problem.GetParameterBlocksForResidualBlock(id, &blocks);
    for (double* block : blocks)
      if (seen.insert(block).second) order.emplace_back(block, problem.ParameterBlockSize(block));
  }
  const std::string message =
      non_finite_block_message(static_cast<long>(order.size()), [&](long b) { return order[b]; });
  return message.empty() ? engines_message : message;
}

// What the Summary says of the problem and of the reduced program the engine solves.
struct ProblemShape {
  int num_parameter_blocks = 0, num_parameters = 0, num_effective_parameters = 0;
  int num_residual_blocks = 0, num_residuals = 0;
  int e_blocks = 0, f_blocks = 0;  // variable blocks of the reduced program
  int num_parameters_reduced = 0, num_effective_parameters_reduced = 0;
  int num_residual_blocks_reduced = 0, num_residuals_reduced = 0;
  detail::SchurSizes schur_sizes;
};

ProblemShape shape_of(const BaLayout& layout, const ceres::Problem& problem) {
  ProblemShape shape;
  // The analysis' counts: Ceres' NumParameters() and NumResiduals() walk every block on one thread
  // (about half a second together at Final-13682's size). No block has a manifold here, so the
  // effective parameters are the parameters.
  shape.num_parameter_blocks = layout.num_parameter_blocks;
  shape.num_parameters = shape.num_effective_parameters = layout.num_parameters;
  shape.num_residual_blocks = problem.NumResidualBlocks();
  shape.num_residuals = layout.num_residuals;
  shape.e_blocks = layout.variable_points;
  shape.f_blocks = layout.variable_cameras;
  shape.num_parameters_reduced = shape.num_effective_parameters_reduced =
      layout.variable_cameras * layout.camera_size + 3 * layout.variable_points;
  shape.num_residual_blocks_reduced = static_cast<int>(layout.residuals.size());
  shape.num_residuals_reduced = static_cast<int>(layout.residuals.size()) * layout.residual_size;
  shape.schur_sizes = {layout.residual_size, 3, layout.camera_size};
  return shape;
}

ProblemShape shape_of(const detail::SchurStructure& s) {
  ProblemShape shape;
  shape.num_parameter_blocks = s.num_parameter_blocks;
  shape.num_parameters = s.num_parameters;
  shape.num_effective_parameters = s.num_effective_parameters;
  shape.num_residual_blocks = s.num_residual_blocks;
  shape.num_residuals = s.num_residuals;
  shape.e_blocks = s.num_e_blocks;
  shape.f_blocks = s.num_f_blocks;
  for (int b = 0; b < s.num_variable_blocks(); ++b) shape.num_parameters_reduced += s.blocks[b].size;
  shape.num_effective_parameters_reduced = static_cast<int>(s.tangent_size());
  shape.num_residual_blocks_reduced = static_cast<int>(s.residuals.size());
  for (const detail::SchurResidual& r : s.residuals) shape.num_residuals_reduced += r.size;
  shape.schur_sizes = detail::detect_schur_sizes(s);
  return shape;
}

std::vector<int> ordering_group_sizes(const ceres::ParameterBlockOrdering* ordering) {
  std::vector<int> sizes;
  if (ordering)
    for (const auto& group : ordering->group_to_elements()) sizes.push_back(static_cast<int>(group.second.size()));
  return sizes;
}

// The blocks of Ceres' reduced program: those that are not constant and are in a residual block.
std::unordered_set<const double*> reduced_program_blocks(const detail::ProblemSource& problem) {
  std::unordered_set<const double*> kept;
  std::vector<double*> blocks;
  for (long r = 0; r < problem.num_residual_blocks(); ++r) {
    problem.parameter_blocks(r, &blocks);
    for (double* block : blocks)
      if (!kept.count(block) && !problem.facts(block).constant) kept.insert(block);
  }
  return kept;
}

// Summary::linear_solver_ordering_used as Ceres reports it: the sizes of the ordering's groups once
// its preprocessor has removed the blocks the reduced program does not hold and the groups left
// empty. That is the e- and f-blocks, but for a user's ordering of more than two groups (Ceres
// eliminates group 0 and reports the others as they are).
std::vector<int> ordering_used(const ceres::Solver::Options& o, const detail::ProblemSource& problem,
                               const ProblemShape& shape) {
  const ceres::ParameterBlockOrdering* ordering = o.linear_solver_ordering.get();
  if (!ordering || ordering->NumGroups() <= 2) return {shape.e_blocks, shape.f_blocks};
  const std::unordered_set<const double*> kept = reduced_program_blocks(problem);
  std::vector<int> sizes;
  for (const auto& group : ordering->group_to_elements()) {
    const int size = static_cast<int>(
        std::count_if(group.second.begin(), group.second.end(), [&](const double* b) { return kept.count(b) > 0; }));
    if (size > 0) sizes.push_back(size);
  }
  return sizes;
}

void fill_problem_fields(const ceres::Solver::Options& o, const detail::ProblemSource& problem,
                         const ProblemShape& shape, int threads_used, ceres::Solver::Summary* s) {
  s->minimizer_type = ceres::TRUST_REGION;
  s->linear_solver_type_given = s->linear_solver_type_used = o.linear_solver_type;
  s->preconditioner_type_given = s->preconditioner_type_used = o.preconditioner_type;
  s->visibility_clustering_type = o.visibility_clustering_type;
  s->trust_region_strategy_type = o.trust_region_strategy_type;
  s->dogleg_type = o.dogleg_type;
  s->dense_linear_algebra_library_type = o.dense_linear_algebra_library_type;
  s->sparse_linear_algebra_library_type = o.sparse_linear_algebra_library_type;
  s->line_search_direction_type = o.line_search_direction_type;
  s->line_search_type = o.line_search_type;
  s->line_search_interpolation_type = o.line_search_interpolation_type;
  s->nonlinear_conjugate_gradient_type = o.nonlinear_conjugate_gradient_type;
  s->max_lbfgs_rank = o.max_lbfgs_rank;
  s->num_threads_given = o.num_threads;
  s->num_threads_used = threads_used;
  s->linear_solver_ordering_given = ordering_group_sizes(o.linear_solver_ordering.get());
  s->linear_solver_ordering_used = ordering_used(o, problem, shape);
  s->schur_structure_given = shape.schur_sizes.to_string();
  s->schur_structure_used = shape.schur_sizes.specialization().to_string();
  s->is_constrained = false;
  s->num_parameter_blocks = shape.num_parameter_blocks;
  s->num_parameters = shape.num_parameters;
  s->num_effective_parameters = shape.num_effective_parameters;
  s->num_residual_blocks = shape.num_residual_blocks;
  s->num_residuals = shape.num_residuals;
  s->num_parameter_blocks_reduced = shape.e_blocks + shape.f_blocks;
  s->num_parameters_reduced = shape.num_parameters_reduced;
  s->num_effective_parameters_reduced = shape.num_effective_parameters_reduced;
  s->num_residual_blocks_reduced = shape.num_residual_blocks_reduced;
  s->num_residuals_reduced = shape.num_residuals_reduced;
  s->inner_iterations_given = o.use_inner_iterations;
  s->inner_iterations_used = false;
}

// "" unless ceres::Solve would abort the program on the ordering (a CHECK in
// ParameterBlockOrdering::MinNonZeroGroup, in its preprocessor): an ordering with no element, or, with
// a Schur solver, one whose every element is a block the reduced program drops (constant, or in no
// residual block) while some block varies. Otherwise a bad ordering is a FAILURE in Ceres.
std::string ordering_ceres_aborts_on(const ceres::Solver::Options& options, const ceres::Problem& problem) {
  const ceres::ParameterBlockOrdering* ordering = options.linear_solver_ordering.get();
  if (!ordering) return "";
  if (ordering->NumElements() == 0) return "linear_solver_ordering has no parameter block";
  const ceres::LinearSolverType type = options.linear_solver_type;
  if (type != ceres::DENSE_SCHUR && type != ceres::SPARSE_SCHUR && type != ceres::ITERATIVE_SCHUR) return "";
  const std::unordered_set<const double*> kept = reduced_program_blocks(detail::CeresProblemSource(problem));
  if (kept.empty()) return "";  // Ceres ends before it reads the ordering
  for (const auto& group : ordering->group_to_elements())  // (Ceres 2.1's element_to_group() does not compile)
    for (double* block : group.second)
      if (!problem.HasParameterBlock(block) || kept.count(block)) return "";  // a block that stays in the ordering
  return "linear_solver_ordering names no parameter block that varies (only constant or unused ones)";
}

void hand_to_ceres(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary,
                   const std::string& reason, bool log, SolveDetails* details) {
  details->path = SolveDetails::Path::CeresFallback;
  details->fallback_reason = reason;
  details->engine = "ceres::Solve";
  if (const std::string abort = ordering_ceres_aborts_on(options, *problem); !abort.empty()) {
    LOG(ERROR) << "ceres_cuda::Solve: " << abort << " (ceres::Solve would abort the program here)";
    summary->termination_type = ceres::FAILURE;
    summary->message = "ceres_cuda::Solve: " + abort + ".";
    return;
  }
  LOG_IF(WARNING, log) << "ceres_cuda::Solve: solving with ceres::Solve instead: " << reason;
  ceres::Solve(options, problem, summary);
}

}  // namespace

const char* to_string(SolveDetails::Path path) {
  switch (path) {
    case SolveDetails::Path::FastGpu: return "gpu (fast path)";
    case SolveDetails::Path::GenericGpu: return "gpu (general engine)";
    case SolveDetails::Path::Cpu: return "cpu reference";
    case SolveDetails::Path::CeresFallback: return "ceres::Solve (fallback)";
  }
  return "?";
}

void Solve(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary) {
  SolveDetails details;
  Solve(options, problem, summary, Backend::Auto, &details);
}

void Solve(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary,
           Backend backend, SolveDetails* details) {
  SolveOptions solve_options;
  solve_options.backend = backend;
  Solve(options, problem, summary, solve_options, details);
}

namespace {

// "" when the reduced camera matrix of DENSE_SCHUR or SPARSE_SCHUR, formed densely, fits: in device
// memory on the GPU (with room for the factorization and the engine), in 8 GiB on the CPU (DENSE_SCHUR;
// the CPU engine's SPARSE_SCHUR stores it sparse).
std::string exact_solver_reason(const ceres::Solver::Options& options, long f_parameters, Backend backend) {
  const double n = static_cast<double>(f_parameters);
  const double bytes = n * n * sizeof(double);
  const std::string size = std::to_string(static_cast<long long>(n)) + " x " + std::to_string(static_cast<long long>(n));
  const char* solver = ceres::LinearSolverTypeToString(options.linear_solver_type);
  if (backend == Backend::Cuda) {
    const double free_bytes = static_cast<double>(linalg_cuda::free_device_memory());
    if (bytes <= 0.7 * free_bytes) return "";
    char gib[64];
    std::snprintf(gib, sizeof gib, "%.1f GiB) does not fit in 70%% of the GPU's free %.1f GiB", bytes / (1u << 30),
                  free_bytes / (1u << 30));
    return std::string(solver) + ": the reduced camera matrix (" + size + ", " + gib +
           "; ITERATIVE_SCHUR suits this problem";
  }
  if (options.linear_solver_type == ceres::DENSE_SCHUR && bytes > 8.0 * (1u << 30))
    return std::string(solver) + ": the reduced camera matrix (" + size +
           ") would take more than 8 GiB; SPARSE_SCHUR or ITERATIVE_SCHUR suits this problem";
  return "";
}

// The GPU engine when the backend is CUDA and it starts, otherwise the CPU one; its path in details.
template <typename MakeGpu, typename MakeCpu>
std::unique_ptr<detail::BaEngine> start_engine(Backend backend, SolveDetails::Path gpu_path, const MakeGpu& make_gpu,
                                               const MakeCpu& make_cpu, SolveDetails* details) {
  if (backend == Backend::Cuda) {
    try {
      std::unique_ptr<detail::BaEngine> engine = make_gpu();
      details->path = gpu_path;
      return engine;
    } catch (const linalg_cuda::Error& e) {
      LOG(WARNING) << "ceres_cuda::Solve: the GPU engine could not start (" << e.what() << "); using the CPU engine";
    }
  }
  details->path = SolveDetails::Path::Cpu;
  return make_cpu();
}

// The problem a solve reads: `source` answers the analysis; problem() is the ceres::Problem for what
// only Ceres' API serves (the BAL fast path's analysis, a hand-over to ceres::Solve, Ceres' messages
// for a failure): the caller's, or built on first use.
struct ProblemInput {
  const detail::ProblemSource* source = nullptr;
  ceres::Problem* given = nullptr;
  std::function<ceres::Problem*()> build;

  ceres::Problem* problem() {
    if (!given) given = build();
    return given;
  }
};

// The engine for the problem, or null with the reason to hand it to ceres::Solve. A problem of the
// fast path (one camera and one 3-value point per residual, no manifolds, SnavelyReprojectionError
// everywhere with one built-in loss or none) runs on the BAL engines, any other Schur-shaped problem
// on the general structure's; each on the GPU when there is one.
struct EngineChoice {
  std::unique_ptr<detail::BaEngine> engine;
  std::string reason;
  std::string invalid_values;  // Ceres' message for a parameter block with NaN or Inf, which fails the solve
  double fixed_cost = 0.0;
  ProblemShape shape;
};

EngineChoice choose_engine(const ceres::Solver::Options& options, ProblemInput* input, Backend backend,
                           const detail::EngineOptions& engine_options, BaLayout* layout,
                           detail::SchurStructure* structure, SolveDetails* details) {
  EngineChoice choice;
  Backend resolved = Backend::Cpu;
  try {
    resolved = linalg_cuda::resolve_backend(backend);
  } catch (const linalg_cuda::Error& e) {
    LOG(WARNING) << "ceres_cuda::Solve: " << e.what() << "; using the CPU engine";
  }
  const auto start = std::chrono::steady_clock::now();
  // The fast path reads a ceres::Problem; a source without one is no BAL problem.
  const std::string bal_reason = input->given
                                     ? detail::analyze_problem(options, input->given, layout, /*fast_path_only=*/true)
                                     : std::string("not a ceres::Problem");
  details->analysis_seconds = seconds_since(start);
  const auto setup_start = std::chrono::steady_clock::now();
  if (bal_reason.empty()) {
    choice.engine = start_engine(
        resolved, SolveDetails::Path::FastGpu,
        [&] { return detail::make_cuda_engine(*layout, engine_options); },
        [&] { return detail::make_cpu_engine(*layout, engine_options); }, details);
    details->setup_seconds = seconds_since(setup_start);
    const long cameras = static_cast<long>(layout->cameras.size());
    choice.invalid_values = non_finite_block_message(cameras + static_cast<long>(layout->points.size()), [&](long b) {
      return b < cameras ? std::make_pair(static_cast<const double*>(layout->cameras[b]), layout->camera_size)
                         : std::make_pair(static_cast<const double*>(layout->points[b - cameras]), detail::kPointSize);
    });
    choice.fixed_cost = fixed_cost(*layout);
    choice.shape = shape_of(*layout, *input->given);
    return choice;
  }

  *layout = BaLayout{};
  choice.reason = detail::analyze_schur_structure(options, *input->source, structure);
  details->analysis_seconds = seconds_since(start);
  if (!choice.reason.empty()) return choice;
  const auto general_setup_start = std::chrono::steady_clock::now();
  if (options.linear_solver_type != ceres::ITERATIVE_SCHUR) {
    choice.reason = exact_solver_reason(options, structure->f_tangent_size, resolved);
    if (!choice.reason.empty()) return choice;
  }
  choice.engine = start_engine(
      resolved, SolveDetails::Path::GenericGpu, [&] { return detail::make_general_cuda_engine(*structure, engine_options); },
      [&] { return detail::make_general_cpu_engine(*structure, engine_options); }, details);
  details->setup_seconds = seconds_since(general_setup_start);
  choice.invalid_values = non_finite_block_message(static_cast<long>(structure->blocks.size()), [&](long b) {
    return std::make_pair(static_cast<const double*>(structure->blocks[b].user), structure->blocks[b].size);
  });
  choice.fixed_cost = detail::ThreadedEvaluator::fixed_cost(*structure);
  choice.shape = shape_of(*structure);
  return choice;
}

void solve_or_hand_over(const ceres::Solver::Options& options, ProblemInput* input, ceres::Solver::Summary* summary,
                        const SolveOptions& solve_options, SolveDetails* details) {
  const auto start = std::chrono::steady_clock::now();
  const detail::HugePageAdviceScope huge_page_advice(solve_options.advise_huge_pages);
  std::string error;
  if (!options.IsValid(&error))
    return hand_to_ceres(options, input->problem(), summary, "invalid options: " + error, solve_options.log_fallback,
                         details);

  detail::EngineOptions engine_options;
  engine_options.linear_solver = options.linear_solver_type;
  engine_options.preconditioner = options.preconditioner_type;
  engine_options.eta = options.eta;
  engine_options.min_linear_iterations = options.min_linear_solver_iterations;
  engine_options.max_linear_iterations = options.max_linear_solver_iterations;
  engine_options.min_lm_diagonal = options.min_lm_diagonal;
  engine_options.max_lm_diagonal = options.max_lm_diagonal;
  engine_options.num_threads = std::max(1, options.num_threads);

  // The engine keeps references into these: they live until the solve ends.
  BaLayout layout;
  detail::SchurStructure structure;
  EngineChoice choice =
      choose_engine(options, input, solve_options.backend, engine_options, &layout, &structure, details);
  if (!choice.engine)
    return hand_to_ceres(options, input->problem(), summary, choice.reason, solve_options.log_fallback, details);
  detail::BaEngine* engine = choice.engine.get();
  details->engine = engine->description();

  summary->fixed_cost = choice.fixed_cost;
  fill_problem_fields(options, *input->source, choice.shape, engine_options.num_threads, summary);
  const double preprocessor_seconds = seconds_since(start);
  summary->preprocessor_time_in_seconds = preprocessor_seconds;
  if (!choice.invalid_values.empty()) {
    summary->termination_type = ceres::FAILURE;
    summary->message = first_non_finite_in_program_order(*input->problem(), choice.invalid_values);
    summary->total_time_in_seconds = seconds_since(start);
    return;
  }
  if (!std::isfinite(choice.fixed_cost)) {
    summary->termination_type = ceres::FAILURE;
    summary->message = fixed_residual_failure(*input->problem());
    summary->total_time_in_seconds = seconds_since(start);
    return;
  }

  const auto minimizer_start = std::chrono::steady_clock::now();
  try {
    detail::minimize(options, engine, choice.fixed_cost, preprocessor_seconds, summary);
  } catch (const linalg_cuda::Error& e) {  // a device failure mid-solve: report it as Ceres reports failures
    LOG(ERROR) << "ceres_cuda::Solve: " << e.what();
    summary->termination_type = ceres::FAILURE;
    summary->message = std::string("ceres_cuda: ") + e.what();
  }
  summary->minimizer_time_in_seconds = seconds_since(minimizer_start);

  const detail::EngineCounters& counters = engine->counters();
  summary->linear_solver_time_in_seconds = counters.linear_seconds;
  summary->residual_evaluation_time_in_seconds = counters.residual_seconds;
  summary->num_residual_evaluations = counters.residual_evaluations;
  summary->jacobian_evaluation_time_in_seconds = counters.jacobian_seconds;
  summary->num_jacobian_evaluations = counters.jacobian_evaluations;
  summary->inner_iteration_time_in_seconds = 0.0;
  summary->line_search_cost_evaluation_time_in_seconds = 0.0;
  summary->line_search_gradient_evaluation_time_in_seconds = 0.0;
  summary->line_search_polynomial_minimization_time_in_seconds = 0.0;
  summary->line_search_total_time_in_seconds = 0.0;
  details->singular_point_blocks = counters.singular_point_blocks;
  details->singular_camera_blocks = counters.singular_camera_blocks;
  details->linear_seconds = counters.linear_seconds;
  details->pcg_seconds = counters.pcg_seconds;
  details->linear_iterations = counters.linear_iterations;
  if (counters.singular_point_blocks + counters.singular_camera_blocks > 0)
    LOG(WARNING) << "ceres_cuda::Solve: " << counters.singular_point_blocks << " eliminated and "
                 << counters.singular_camera_blocks
                 << " preconditioner blocks were not numerically positive definite and were regularised";
  if (counters.cameras_ceres_eliminates > 0)
    LOG(WARNING) << "ceres_cuda::Solve: without an ordering, Ceres would eliminate camera blocks too ("
                 << counters.cameras_ceres_eliminates
                 << " or more have fewer neighbours than their points); ceres_cuda eliminated every point "
                    "instead (the same problem, another reduced system). Give linear_solver_ordering to choose.";
  summary->postprocessor_time_in_seconds = 0.0;
  summary->total_time_in_seconds = seconds_since(start);
}

// Solve never throws: what escapes (memory exhausted, a user's cost function that throws) ends the
// solve as a failure, as Ceres reports one.
void guarded_solve(const ceres::Solver::Options& options, ProblemInput* input, ceres::Solver::Summary* summary,
                   const SolveOptions& solve_options, SolveDetails* details) {
  try {
    solve_or_hand_over(options, input, summary, solve_options, details);
  } catch (const std::exception& e) {
    LOG(ERROR) << "ceres_cuda::Solve: " << e.what();
    summary->termination_type = ceres::FAILURE;
    summary->message = std::string("ceres_cuda: ") + e.what();
  }
}

}  // namespace

void Solve(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary,
           const SolveOptions& solve_options, SolveDetails* details) {
  SolveDetails local_details;
  if (details == nullptr) details = &local_details;
  *details = SolveDetails{};
  if (summary == nullptr) {
    LOG(ERROR) << "ceres_cuda::Solve: summary is null";
    return;
  }
  *summary = ceres::Solver::Summary();
  if (problem == nullptr) {  // ceres::Solve would abort the program here
    LOG(ERROR) << "ceres_cuda::Solve: problem is null";
    summary->message = "ceres_cuda::Solve: problem is null.";
    summary->termination_type = ceres::FAILURE;
    return;
  }
  const detail::CeresProblemSource source(*problem);
  ProblemInput input{&source, problem, {}};
  guarded_solve(options, &input, summary, solve_options, details);
}

namespace detail {

void solve_from_source(const ceres::Solver::Options& options, const ProblemSource& source,
                       const std::function<ceres::Problem*()>& build_problem, ceres::Solver::Summary* summary,
                       const SolveOptions& solve_options, SolveDetails* details) {
  SolveDetails local_details;
  if (details == nullptr) details = &local_details;
  *details = SolveDetails{};
  *summary = ceres::Solver::Summary();
  ProblemInput input{&source, nullptr, build_problem};
  guarded_solve(options, &input, summary, solve_options, details);
}

}  // namespace detail

}  // namespace ceres_cuda
