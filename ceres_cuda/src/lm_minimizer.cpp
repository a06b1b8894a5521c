#include "lm_minimizer.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>

#include "linalg_cuda/internal/seconds_since.h"

namespace ceres_cuda::detail {
namespace {

template <typename... Args>
std::string format(const char* fmt, Args... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, fmt, args...);
  return buffer;
}

// LevenbergMarquardtStrategy's radius bookkeeping.
struct LmRadius {
  double radius, max_radius, decrease_factor = 2.0;
  bool reuse_diagonal = false;
  void accepted(double step_quality) {
    radius = radius / std::max(1.0 / 3.0, 1.0 - std::pow(2.0 * step_quality - 1.0, 3));
    radius = std::min(max_radius, radius);
    decrease_factor = 2.0;
    reuse_diagonal = false;
  }
  void rejected() {
    radius = radius / decrease_factor;
    decrease_factor *= 2.0;
    reuse_diagonal = true;
  }
};

// Ceres' LoggingCallback with log_to_stdout (minimizer_progress_to_stdout).
void print_progress(const ceres::IterationSummary& s) {
  std::string line;
  if (s.iteration == 0)
    line = "iter      cost      cost_change  |gradient|   |step|    tr_ratio  tr_radius  ls_iter  iter_time  total_time\n";
  line += format("% 4d % 8e   % 3.2e   % 3.2e  % 3.2e  % 3.2e % 3.2e     % 4d   % 3.2e   % 3.2e", s.iteration, s.cost,
                 s.cost_change, s.gradient_max_norm, s.step_norm, s.relative_decrease, s.trust_region_radius,
                 s.linear_solver_iterations, s.iteration_time_in_seconds, s.cumulative_time_in_seconds);
  std::cout << line << std::endl;
}

class Minimizer {
 public:
  Minimizer(const ceres::Solver::Options& options, BaEngine* engine, double fixed_cost, double preprocessor_seconds,
            ceres::Solver::Summary* summary)
      : o_(options), engine_(engine), fixed_cost_(fixed_cost), preprocessor_seconds_(preprocessor_seconds),
        summary_(summary), start_(std::chrono::steady_clock::now()) {
    radius_.radius = options.initial_trust_region_radius;
    radius_.max_radius = options.max_trust_region_radius;
  }

  void run() {
    summary_->termination_type = ceres::NO_CONVERGENCE;
    summary_->num_successful_steps = 0;
    summary_->num_unsuccessful_steps = 0;
    summary_->num_inner_iteration_steps = 0;
    summary_->num_line_search_steps = 0;
    if (!iteration_zero()) return finish();
    while (finalize_iteration_and_check_if_can_continue()) {
      iteration_start_ = std::chrono::steady_clock::now();
      const double previous_gradient_norm = it_.gradient_norm;
      const double previous_gradient_max_norm = it_.gradient_max_norm;
      it_ = ceres::IterationSummary();
      it_.iteration = summary_->iterations.back().iteration + 1;
      if (!compute_trust_region_step()) return finish();
      if (!it_.step_is_valid) {
        if (!handle_invalid_step()) return finish();
        continue;
      }
      compute_candidate_point_and_evaluate_cost();
      if (parameter_tolerance_reached()) return finish();
      if (function_tolerance_reached()) return finish();
      if (is_step_successful()) {
        if (!handle_successful_step()) return finish();
      } else {
        it_.step_is_successful = false;
        it_.cost = candidate_cost_ + fixed_cost_;
        it_.gradient_norm = previous_gradient_norm;
        it_.gradient_max_norm = previous_gradient_max_norm;
        radius_.rejected();
      }
    }
    finish();
  }

 private:
  double elapsed() const { return linalg_cuda::detail::seconds_since(start_); }

  bool evaluate_gradient_and_jacobian() {
    if (!engine_->evaluate_at_x(&x_cost_)) {
      summary_->message = "Residual and Jacobian evaluation failed.";
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    it_.cost = x_cost_ + fixed_cost_;
    if (o_.jacobi_scaling) {
      if (it_.iteration == 0) engine_->compute_jacobi_scaling();
      engine_->apply_jacobi_scaling();
    }
    if (!engine_->gradient_norms(&it_.gradient_norm, &it_.gradient_max_norm)) {
      summary_->message = "projected_gradient_step = Plus(x, -gradient) failed.";
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    return true;
  }

  bool iteration_zero() {
    iteration_start_ = start_;
    it_ = ceres::IterationSummary();
    it_.iteration = 0;
    it_.step_is_valid = false;
    it_.step_is_successful = false;
    it_.cost_change = 0.0;
    it_.gradient_max_norm = 0.0;
    it_.gradient_norm = 0.0;
    it_.step_norm = 0.0;
    it_.relative_decrease = 0.0;
    it_.eta = o_.eta;
    it_.linear_solver_iterations = 0;
    it_.step_solver_time_in_seconds = 0;
    if (!evaluate_gradient_and_jacobian()) return false;
    summary_->initial_cost = x_cost_ + fixed_cost_;
    reference_cost_ = x_cost_;
    it_.step_is_valid = true;
    it_.step_is_successful = true;
    return true;
  }

  bool finalize_iteration_and_check_if_can_continue() {
    if (it_.step_is_successful) {
      ++summary_->num_successful_steps;
    } else {
      ++summary_->num_unsuccessful_steps;
    }
    it_.trust_region_radius = radius_.radius;
    it_.iteration_time_in_seconds = linalg_cuda::detail::seconds_since(iteration_start_);
    it_.cumulative_time_in_seconds = elapsed() + preprocessor_seconds_;
    summary_->iterations.push_back(it_);
    if (!run_callbacks()) return false;
    if (max_solver_time_reached()) return false;
    if (max_solver_iterations_reached()) return false;
    if (gradient_tolerance_reached()) return false;
    if (min_trust_region_radius_reached()) return false;
    return true;
  }

  bool run_callbacks() {
    if (o_.minimizer_progress_to_stdout) print_progress(it_);
    if (o_.update_state_every_iteration) engine_->write_parameters();
    for (ceres::IterationCallback* callback : o_.callbacks) {
      switch (callback->operator()(it_)) {
        case ceres::SOLVER_TERMINATE_SUCCESSFULLY:
          summary_->termination_type = ceres::USER_SUCCESS;
          summary_->message = "User callback returned SOLVER_TERMINATE_SUCCESSFULLY.";
          return false;
        case ceres::SOLVER_ABORT:
          summary_->termination_type = ceres::USER_FAILURE;
          summary_->message = "User callback returned SOLVER_ABORT.";
          return false;
        case ceres::SOLVER_CONTINUE: break;
      }
    }
    return true;
  }

  bool max_solver_time_reached() {
    const double total = elapsed() + preprocessor_seconds_;
    if (total < o_.max_solver_time_in_seconds) return false;
    summary_->message = format("Maximum solver time reached. Total solver time: %e >= %e.", total,
                               o_.max_solver_time_in_seconds);
    summary_->termination_type = ceres::NO_CONVERGENCE;
    return true;
  }

  bool max_solver_iterations_reached() {
    if (it_.iteration < o_.max_num_iterations) return false;
    summary_->message = format("Maximum number of iterations reached. Number of iterations: %d.", it_.iteration);
    summary_->termination_type = ceres::NO_CONVERGENCE;
    return true;
  }

  bool gradient_tolerance_reached() {
    if (!it_.step_is_successful || it_.gradient_max_norm > o_.gradient_tolerance) return false;
    summary_->message = format("Gradient tolerance reached. Gradient max norm: %e <= %e", it_.gradient_max_norm,
                               o_.gradient_tolerance);
    summary_->termination_type = ceres::CONVERGENCE;
    return true;
  }

  bool min_trust_region_radius_reached() {
    if (it_.trust_region_radius > o_.min_trust_region_radius) return false;
    summary_->message = format("Minimum trust region radius reached. Trust region radius: %e <= %e",
                               it_.trust_region_radius, o_.min_trust_region_radius);
    summary_->termination_type = ceres::CONVERGENCE;
    return true;
  }

  bool compute_trust_region_step() {
    const auto step_start = std::chrono::steady_clock::now();
    it_.step_is_valid = false;
    const StepResult step = engine_->solve_step(radius_.radius, radius_.reuse_diagonal);
    ++num_linear_solves_;
    if (step.termination == LinearTermination::FatalError) {
      LOG(WARNING) << "Linear solver fatal error: " << step.message;  // LevenbergMarquardtStrategy's warnings
      summary_->message = "Linear solver failed due to unrecoverable non-numeric causes. Please see the error log for clues. ";
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    it_.step_solver_time_in_seconds = linalg_cuda::detail::seconds_since(step_start);
    it_.linear_solver_iterations = step.linear_iterations;
    if (step.termination == LinearTermination::Failure) {
      LOG(WARNING) << "Linear solver failure. Failed to compute a step: " << step.message;
      return true;
    }
    if (!step.finite) {
      LOG(WARNING) << "Linear solver failure. Failed to compute a finite step.";
      return true;
    }
    model_cost_change_ = step.model_cost_change;
    it_.step_is_valid = model_cost_change_ > 0.0;
    if (it_.step_is_valid) num_consecutive_invalid_steps_ = 0;
    return true;
  }

  bool handle_invalid_step() {
    it_.step_is_valid = false;
    it_.step_is_successful = false;
    ++num_consecutive_invalid_steps_;
    if (num_consecutive_invalid_steps_ >= o_.max_num_consecutive_invalid_steps) {
      summary_->message = format(
          "Number of consecutive invalid steps more than Solver::Options::max_num_consecutive_invalid_steps: %d",
          o_.max_num_consecutive_invalid_steps);
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    radius_.rejected();
    it_.cost = x_cost_ + fixed_cost_;
    it_.cost_change = 0.0;
    it_.gradient_max_norm = summary_->iterations.back().gradient_max_norm;
    it_.gradient_norm = summary_->iterations.back().gradient_norm;
    it_.step_norm = 0.0;
    it_.relative_decrease = 0.0;
    it_.eta = o_.eta;
    return true;
  }

  void compute_candidate_point_and_evaluate_cost() {
    if (!engine_->evaluate_candidate(&candidate_cost_)) candidate_cost_ = std::numeric_limits<double>::max();
  }

  // As in Ceres 2.1, |x| is taken as -1 until the first accepted step (its Init overwrites the norm
  // with -1; Ceres issue 885), so this test cannot stop the solve before then.
  bool parameter_tolerance_reached() {
    it_.step_norm = engine_->delta_norm();
    const double step_size_tolerance = o_.parameter_tolerance * (x_norm_ + o_.parameter_tolerance);
    if (it_.step_norm > step_size_tolerance) return false;
    summary_->message = format("Parameter tolerance reached. Relative step_norm: %e <= %e.",
                               it_.step_norm / (x_norm_ + o_.parameter_tolerance), o_.parameter_tolerance);
    summary_->termination_type = ceres::CONVERGENCE;
    return true;
  }

  bool function_tolerance_reached() {
    it_.cost_change = x_cost_ - candidate_cost_;
    const double absolute_function_tolerance = o_.function_tolerance * x_cost_;
    if (std::fabs(it_.cost_change) > absolute_function_tolerance) return false;
    summary_->message = format("Function tolerance reached. |cost_change|/cost: %e <= %e",
                               std::fabs(it_.cost_change) / x_cost_, o_.function_tolerance);
    summary_->termination_type = ceres::CONVERGENCE;
    return true;
  }

  // Ceres' TrustRegionStepEvaluator with monotonic steps: the reference is the cost of the last
  // accepted candidate as its residual-only evaluation gave it.
  bool is_step_successful() {
    it_.relative_decrease = candidate_cost_ >= std::numeric_limits<double>::max()
                                ? std::numeric_limits<double>::lowest()
                                : (reference_cost_ - candidate_cost_) / model_cost_change_;
    return it_.relative_decrease > o_.min_relative_decrease;
  }

  bool handle_successful_step() {
    engine_->accept_candidate();
    x_norm_ = engine_->x_norm();
    reference_cost_ = candidate_cost_;
    if (!evaluate_gradient_and_jacobian()) return false;
    it_.step_is_successful = true;
    radius_.accepted(it_.relative_decrease);
    return true;
  }

  void finish() {
    // The accepted point is the best one (steps are monotonic); like Ceres, the user's blocks get it
    // only when the solution is usable.
    const ceres::TerminationType t = summary_->termination_type;
    if (t == ceres::CONVERGENCE || t == ceres::NO_CONVERGENCE || t == ceres::USER_SUCCESS) engine_->write_parameters();
    // Ceres 2.1's PostSolveSummarize: the smallest cost of initial_cost and every recorded iteration.
    summary_->final_cost = summary_->initial_cost;
    for (const ceres::IterationSummary& it : summary_->iterations)
      summary_->final_cost = std::min(summary_->final_cost, it.cost);
    summary_->num_linear_solves = num_linear_solves_;
  }

  const ceres::Solver::Options& o_;
  BaEngine* engine_;
  double fixed_cost_, preprocessor_seconds_;
  ceres::Solver::Summary* summary_;
  std::chrono::steady_clock::time_point start_, iteration_start_;
  ceres::IterationSummary it_;
  LmRadius radius_{};
  double x_cost_ = 0, candidate_cost_ = 0, model_cost_change_ = 0, reference_cost_ = 0;
  double x_norm_ = -1.0;
  int num_consecutive_invalid_steps_ = 0;
  int num_linear_solves_ = 0;
};

}  // namespace

void minimize(const ceres::Solver::Options& options, BaEngine* engine, double fixed_cost, double preprocessor_seconds,
              ceres::Solver::Summary* summary) {
  Minimizer(options, engine, fixed_cost, preprocessor_seconds, summary).run();
}

}  // namespace ceres_cuda::detail
