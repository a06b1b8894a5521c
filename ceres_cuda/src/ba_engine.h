#pragma once
// What the Levenberg-Marquardt loop (lm_minimizer.cpp) asks of the linear algebra: evaluate at the
// current point, solve for a trust-region step, try it, accept it. Two families of implementations,
// each on the CPU and on the GPU: the BAL shape's (cpu_engine.cpp, blocks in natural layout, OpenMP;
// cuda_engine.cu, continuous-element layout, the fast path's problems only) and the general
// structure's (general_cpu_engine.cpp, general_cuda_engine.cu, on JacobianCells). Each keeps x, the candidate, residuals and the (scaled)
// Jacobian itself; the loop only sees scalars.
#include <ceres/solver.h>

#include <memory>
#include <string>
#include <vector>

#include "ba_layout.h"
#include "schur_structure.h"
#include "linalg_cuda/backend.h"
#include "linalg_cuda/cg_options.h"
#include "linalg_cuda/solver_summary.h"

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
  double pcg_seconds = 0;  // of linear_seconds, in the PCG iterations themselves (ITERATIVE_SCHUR)
  // Of every step solved, including a last one that Ceres' summary leaves out (a step that ends the
  // solve on the function or parameter tolerance is not an IterationSummary)
  int linear_iterations = 0;
  int residual_evaluations = 0, jacobian_evaluations = 0;
  long cameras_ceres_eliminates = 0;  // BaIndex's, from the BAL engines' set-up
};

class BaEngine {
 public:
  virtual ~BaEngine() = default;
  // Residuals, Jacobians (loss-corrected) and cost at x. false when a cost function failed.
  virtual bool evaluate_at_x(double* cost) = 0;
  // Norm and max norm of the (unscaled) gradient g = J'f at x, after evaluate_at_x, projected as Ceres
  // does: x - Plus(x, -g) (which is g without manifolds). False when a manifold's Plus fails.
  virtual bool gradient_norms(double* norm, double* max_norm) = 0;
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
  virtual double delta_norm() = 0;  // |x - candidate| (which is |delta| without manifolds)
  // x = candidate.
  virtual void accept_candidate() = 0;
  // Copies x into the user's parameter blocks.
  virtual void write_parameters() = 0;
  virtual const EngineCounters& counters() const = 0;
  virtual std::string description() const = 0;  // e.g. "cuda (fast path: SnavelyReprojectionError)"
};

// What the tests that compare engines piece by piece read, beside the minimizer's interface; every
// engine implements both (natural layout, every value as the engine holds it). After evaluate_at_x
// (and the scaling): the Jacobian (BAL engines: F then E, residual after residual; general engines:
// JacobianCells' layout). After solve_step: S x for an f-part vector x with that step's D and
// e-blocks; the preconditioner's inverted blocks (ITERATIVE_SCHUR); the step delta.
class EngineInspection {
 public:
  virtual ~EngineInspection() = default;
  virtual std::vector<double> jacobian() = 0;
  virtual std::vector<double> schur_product(const std::vector<double>& x) = 0;
  virtual std::vector<double> preconditioner_blocks() = 0;
  virtual std::vector<double> delta() = 0;
};

// How the general GPU engine forms the explicit S's e-block terms (DENSE_SCHUR, SPARSE_SCHUR): by its
// estimate of the cheapest, or one of the three (for the tests that check each against the CPU engine).
enum class ExplicitSchurMethod { Auto, Syrk, Pairs, Rows };

struct EngineOptions {
  ceres::LinearSolverType linear_solver = ceres::ITERATIVE_SCHUR;
  ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI;
  double eta = 0.1;
  int min_linear_iterations = 0;
  int max_linear_iterations = 500;
  double min_lm_diagonal = 1e-6;
  double max_lm_diagonal = 1e32;
  int num_threads = 1;
  ExplicitSchurMethod explicit_schur = ExplicitSchurMethod::Auto;
  // The GPU engine's Schur product on warp-interleaved copies of the Jacobian where they fit (false:
  // on JacobianCells' layout, which the tests compare too).
  bool interleaved_schur_product = true;
};

// Ceres' CG settings for an LM step: the residual test off (r_tolerance -1), the quadratic-model test
// with eta, min/max linear iterations.
inline linalg_cuda::CgOptions step_cg_options(const EngineOptions& o) {
  linalg_cuda::CgOptions cg;
  cg.stop.relative_tolerance = 0.0;
  cg.stop.absolute_tolerance = 0.0;
  cg.stop.quadratic_tolerance = o.eta;
  cg.stop.min_iterations = o.min_linear_iterations;
  cg.stop.max_iterations = o.max_linear_iterations;
  return cg;
}

// How Ceres' CG would have reported each way our CG stops.
inline LinearTermination to_linear_termination(linalg_cuda::CgTermination t) {
  switch (t) {
    case linalg_cuda::CgTermination::Converged:
    case linalg_cuda::CgTermination::QuadraticModelConverged: return LinearTermination::Success;
    case linalg_cuda::CgTermination::MaxIterations:
    case linalg_cuda::CgTermination::NotPositiveDefinite: return LinearTermination::NoConvergence;  // "indefinite"
    default: return LinearTermination::Failure;
  }
}

// The step's termination, PCG count and message as Ceres' CG reports them, from what our CG (run with
// step_cg_options) did. They differ where the iteration lands on r'z = 0, most often r = 0 exactly (a
// reduced system of one value, or a preconditioner that inverts it): our CG stops there, as converged
// (r'r <= 0, both tolerances being 0) or as r'z <= 0 (before min_linear_iterations). Ceres has no
// residual test in an LM step and checks rho = r'z only at the start of the next iteration: it stops
// with NO_CONVERGENCE when the iteration limit is reached first, otherwise it counts that iteration and
// fails it ("Numerical failure. rho = r'z = 0.000000e+00."), and the LM loop rejects the step as invalid.
// Converged after 0 iterations is |b| = 0, a success in Ceres too.
inline void set_ceres_cg_outcome(const linalg_cuda::SolverSummary& s, const EngineOptions& o, StepResult* result) {
  result->linear_iterations = s.iterations;
  result->message = s.message;
  result->termination = to_linear_termination(s.termination);
  const bool stopped_on_zero_rz = (s.termination == linalg_cuda::CgTermination::Converged && s.iterations > 0) ||
                                  s.termination == linalg_cuda::CgTermination::PreconditionerNotSpd;
  if (!stopped_on_zero_rz) return;
  if (s.iterations >= o.max_linear_iterations) {
    result->termination = LinearTermination::NoConvergence;
    result->message = "Maximum number of iterations reached.";
    return;
  }
  result->linear_iterations = s.iterations + 1;
  result->termination = LinearTermination::Failure;
  if (s.final_residual_norm == 0.0) result->message = "Numerical failure. rho = r'z = 0.000000e+00.";
}

std::unique_ptr<BaEngine> make_cpu_engine(const BaLayout& layout, const EngineOptions& options);
// The CPU engine of the general structure (manifolds, any number of f-blocks per residual, priors).
std::unique_ptr<BaEngine> make_general_cpu_engine(const SchurStructure& structure, const EngineOptions& options);
// Its GPU counterpart: cost functions on CPU threads, the linear algebra on the device. Throws
// linalg_cuda::CudaError when no device is usable.
std::unique_ptr<BaEngine> make_general_cuda_engine(const SchurStructure& structure, const EngineOptions& options);
// The fast path's GPU engine (layout.snavely: SnavelyReprojectionError everywhere, evaluated on the
// device with the whole step). Throws linalg_cuda::CudaError when no device is usable and
// linalg_cuda::InvalidArgument for a layout off the fast path.
std::unique_ptr<BaEngine> make_cuda_engine(const BaLayout& layout, const EngineOptions& options);

}  // namespace ceres_cuda::detail
