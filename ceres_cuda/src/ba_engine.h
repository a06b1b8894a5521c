#pragma once
// What the Levenberg-Marquardt loop (lm_minimizer.cpp) asks of the linear algebra: evaluate at the
// current point, solve for a trust-region step, try it, accept it. Two implementations: the CPU
// reference (cpu_engine.cpp, blocks in natural layout, OpenMP) and the GPU one (cuda_engine.cu,
// continuous-element layout). Both keep x, the candidate, residuals and the (scaled) Jacobian
// themselves; the loop only sees scalars.
#include <ceres/solver.h>

#include <memory>
#include <string>

#include "ba_layout.h"
#include "linalg_cuda/backend.h"

namespace ceres_cuda::detail {

// Ceres' LinearSolverTerminationType (internal to Ceres, so mirrored here).
enum class LinearTermination { Success, NoConvergence, Failure, FatalError };

struct StepResult {
  LinearTermination termination = LinearTermination::Success;
  std::string message;
  int linear_iterations = 0;
  double model_cost_change = 0;  // -(J s)'(f + J s / 2) for the scaled step s
  bool finite = true;            // the step has no NaN/Inf
};

struct EngineCounters {
  int singular_point_blocks = 0;   // V_p blocks regularised (Cholesky failed)
  int singular_camera_blocks = 0;  // preconditioner / Schur diagonal blocks regularised
  double residual_seconds = 0, jacobian_seconds = 0, linear_seconds = 0;
  int residual_evaluations = 0, jacobian_evaluations = 0;
};

class BaEngine {
 public:
  virtual ~BaEngine() = default;
  // Residuals, Jacobians (loss-corrected) and cost at x. false when a cost function failed.
  virtual bool evaluate_at_x(double* cost) = 0;
  // |g| and max |g_i| of the (unscaled) gradient J'f at x, after evaluate_at_x.
  virtual void gradient_norms(double* norm, double* max_norm) = 0;
  // Jacobi scaling: compute 1 / (1 + |column|) from the current Jacobian (first iteration only), and
  // scale the current Jacobian by it (every evaluation).
  virtual void compute_jacobi_scaling() = 0;
  virtual void apply_jacobi_scaling() = 0;
  // The LM step for radius mu (D = sqrt(diag / mu), diag recomputed unless reuse_diagonal); the
  // scaled step is kept, and delta = step .* scaling.
  virtual StepResult solve_step(double radius, bool reuse_diagonal) = 0;
  // candidate = x + delta; its cost (false when a cost function failed there).
  virtual bool evaluate_candidate(double* cost) = 0;
  virtual double x_norm() = 0;
  virtual double delta_norm() = 0;
  // x = candidate.
  virtual void accept_candidate() = 0;
  // Copies x into the user's parameter blocks.
  virtual void write_parameters() = 0;
  virtual const EngineCounters& counters() const = 0;
  virtual std::string description() const = 0;  // e.g. "cuda (fast path: SnavelyReprojectionError)"
};

struct EngineOptions {
  ceres::LinearSolverType linear_solver = ceres::ITERATIVE_SCHUR;
  ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI;
  double eta = 0.1;
  int min_linear_iterations = 0;
  int max_linear_iterations = 500;
  double min_lm_diagonal = 1e-6;
  double max_lm_diagonal = 1e32;
  int num_threads = 1;
};

std::unique_ptr<BaEngine> make_cpu_engine(const BaLayout& layout, const EngineOptions& options);
// Throws linalg_cuda::CudaError when no device is usable.
std::unique_ptr<BaEngine> make_cuda_engine(const BaLayout& layout, const EngineOptions& options);

}  // namespace ceres_cuda::detail
