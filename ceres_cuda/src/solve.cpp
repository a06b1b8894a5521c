#include "ceres_cuda/solve.h"

#include <ceres/cost_function.h>
#include <ceres/loss_function.h>
#include <ceres/ordered_groups.h>
#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "ba_engine.h"
#include "ba_layout.h"
#include "fresh_memory.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/seconds_since.h"
#include "lm_minimizer.h"

namespace ceres_cuda {
namespace {

using detail::BaLayout;
using linalg_cuda::detail::seconds_since;

// Cost of the residual blocks whose parameters are all constant (Ceres' fixed_cost).
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

std::vector<int> ordering_group_sizes(const ceres::ParameterBlockOrdering* ordering) {
  std::vector<int> sizes;
  if (ordering)
    for (const auto& group : ordering->group_to_elements()) sizes.push_back(static_cast<int>(group.second.size()));
  return sizes;
}

void fill_problem_fields(const ceres::Solver::Options& o, const ceres::Problem& problem, const BaLayout& layout,
                         int threads_used, ceres::Solver::Summary* s) {
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
  s->linear_solver_ordering_used = {layout.variable_points, layout.variable_cameras};
  char structure[64];
  std::snprintf(structure, sizeof structure, "%d,3,%d", layout.residual_size, layout.camera_size);
  s->schur_structure_given = s->schur_structure_used = structure;
  s->is_constrained = false;
  // The analysis' counts: Ceres' NumParameters() and NumResiduals() walk every block on one thread
  // (about half a second together at Final-13682's size). No block has a manifold here, so the
  // effective parameters are the parameters.
  s->num_parameter_blocks = layout.num_parameter_blocks;
  s->num_parameters = layout.num_parameters;
  s->num_effective_parameters = layout.num_parameters;
  s->num_residual_blocks = problem.NumResidualBlocks();
  s->num_residuals = layout.num_residuals;
  s->num_parameter_blocks_reduced = layout.variable_cameras + layout.variable_points;
  s->num_parameters_reduced = layout.variable_cameras * layout.camera_size + 3 * layout.variable_points;
  s->num_effective_parameters_reduced = s->num_parameters_reduced;
  s->num_residual_blocks_reduced = static_cast<int>(layout.residuals.size());
  s->num_residuals_reduced = static_cast<int>(layout.residuals.size()) * layout.residual_size;
  s->inner_iterations_given = o.use_inner_iterations;
  s->inner_iterations_used = false;
}

void hand_to_ceres(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary,
                   const std::string& reason, SolveDetails* details) {
  LOG(WARNING) << "ceres_cuda::Solve: solving with ceres::Solve instead: " << reason;
  details->path = SolveDetails::Path::CeresFallback;
  details->fallback_reason = reason;
  details->engine = "ceres::Solve";
  ceres::Solve(options, problem, summary);
}

}  // namespace

const char* to_string(SolveDetails::Path path) {
  switch (path) {
    case SolveDetails::Path::FastGpu: return "gpu (fast path)";
    case SolveDetails::Path::GenericGpu: return "gpu (generic evaluation on CPU threads)";
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

void Solve(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary,
           const SolveOptions& solve_options, SolveDetails* details) {
  const auto start = std::chrono::steady_clock::now();
  const detail::HugePageAdviceScope huge_page_advice(solve_options.advise_huge_pages);
  const Backend backend = solve_options.backend;
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
  std::string error;
  if (!options.IsValid(&error)) return hand_to_ceres(options, problem, summary, "invalid options: " + error, details);
  BaLayout layout;
  if (std::string reason = detail::analyze_problem(options, problem, &layout); !reason.empty())
    return hand_to_ceres(options, problem, summary, reason, details);
  details->analysis_seconds = seconds_since(start);
  const auto setup_start = std::chrono::steady_clock::now();

  if (options.linear_solver_type == ceres::DENSE_SCHUR) {
    const double n = static_cast<double>(layout.variable_cameras) * layout.camera_size;
    if (n * n * sizeof(double) > 8.0 * (1u << 30))
      return hand_to_ceres(options, problem, summary,
                           "DENSE_SCHUR: the reduced camera matrix (" + std::to_string(static_cast<long long>(n)) +
                               " x the same) would take more than 8 GiB; ITERATIVE_SCHUR suits this problem",
                           details);
  }

  detail::EngineOptions engine_options;
  engine_options.linear_solver = options.linear_solver_type;
  engine_options.preconditioner = options.preconditioner_type;
  engine_options.eta = options.eta;
  engine_options.min_linear_iterations = options.min_linear_solver_iterations;
  engine_options.max_linear_iterations = options.max_linear_solver_iterations;
  engine_options.min_lm_diagonal = options.min_lm_diagonal;
  engine_options.max_lm_diagonal = options.max_lm_diagonal;
  engine_options.num_threads = std::max(1, options.num_threads);

  std::unique_ptr<detail::BaEngine> engine;
  Backend resolved = Backend::Cpu;
  try {
    resolved = linalg_cuda::resolve_backend(backend);
  } catch (const linalg_cuda::Error& e) {
    LOG(WARNING) << "ceres_cuda::Solve: " << e.what() << "; using the CPU engine";
  }
  if (resolved == Backend::Cuda) {
    try {
      engine = detail::make_cuda_engine(layout, engine_options);
      details->path = layout.snavely ? SolveDetails::Path::FastGpu : SolveDetails::Path::GenericGpu;
    } catch (const linalg_cuda::Error& e) {
      LOG(WARNING) << "ceres_cuda::Solve: the GPU engine could not start (" << e.what() << "); using the CPU engine";
    }
  }
  if (!engine) {
    engine = detail::make_cpu_engine(layout, engine_options);
    details->path = SolveDetails::Path::Cpu;
  }
  details->engine = engine->description();
  details->setup_seconds = seconds_since(setup_start);

  const double fixed = fixed_cost(layout);
  summary->fixed_cost = fixed;
  fill_problem_fields(options, *problem, layout, engine_options.num_threads, summary);
  const double preprocessor_seconds = seconds_since(start);
  summary->preprocessor_time_in_seconds = preprocessor_seconds;
  if (!std::isfinite(fixed)) {
    summary->termination_type = ceres::FAILURE;
    summary->message = "Residual evaluation of the constant residual blocks failed.";
    summary->total_time_in_seconds = seconds_since(start);
    return;
  }

  const auto minimizer_start = std::chrono::steady_clock::now();
  try {
    detail::minimize(options, engine.get(), fixed, preprocessor_seconds, summary);
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
    LOG(WARNING) << "ceres_cuda::Solve: " << counters.singular_point_blocks << " point and "
                 << counters.singular_camera_blocks
                 << " camera blocks were not numerically positive definite and were regularised";
  summary->postprocessor_time_in_seconds = 0.0;
  summary->total_time_in_seconds = seconds_since(start);
}

}  // namespace ceres_cuda
