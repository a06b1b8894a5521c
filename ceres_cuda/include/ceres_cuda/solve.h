#pragma once
// ceres_cuda::Solve: a drop-in for ceres::Solve on the problems Ceres' Schur solvers take.
//
//   ceres::Solver::Options options;                       // as before
//   options.linear_solver_type = ceres::ITERATIVE_SCHUR;  // or DENSE_SCHUR, SPARSE_SCHUR
//   options.preconditioner_type = ceres::SCHUR_JACOBI;    // or JACOBI
//   ceres::Solver::Summary summary;
//   ceres_cuda::Solve(options, &problem, &summary);       // was ceres::Solve
//   std::cout << summary.FullReport() << "\n";
//
// The eliminated (e-) blocks are group 0 of options.linear_solver_ordering or, without one, those
// Ceres would choose (its independent set). Each residual block depends on at most one e-block (of 1
// to 4 tangent values) and on any number of other blocks (up to 16 tangent values each, shared by
// any number of residuals), with 1 to 16 residuals. Any manifold, cost function and loss function;
// constant blocks. It runs Ceres' Levenberg-Marquardt loop (radius updates, step acceptance, Jacobi
// scaling, tolerances and termination tests as Ceres 2.1) with the Schur-complement linear algebra
// on the GPU, and fills the Summary as Ceres does. A problem of another shape, or options it cannot
// honour (another minimizer, linear solver or preconditioner, bounds, non-monotonic steps, inner
// iterations, ...), is handed to ceres::Solve unchanged, and the reason is logged (glog WARNING) and
// returned in SolveDetails: swapping the call never breaks a program. Solve never throws: an internal
// error ends the solve with termination_type FAILURE and the message.
#include <ceres/problem.h>
#include <ceres/solver.h>

#include <string>

#include "linalg_cuda/backend.h"

namespace ceres_cuda {

using linalg_cuda::Backend;

struct SolveDetails {
  enum class Path {
    FastGpu,      // SnavelyReprojectionError everywhere: evaluation and the LM step on the GPU
    GenericGpu,   // any other problem: the step on the GPU; the library's cost functions evaluated there,
                  // the user's on CPU threads (`engine` says which)
    Cpu,          // the CPU reference engine (Backend::Cpu, or no CUDA device)
    CeresFallback // handed to ceres::Solve; fallback_reason says why
  };
  Path path = Path::Cpu;
  std::string fallback_reason;
  std::string engine;                  // one line: which engine and evaluation path ran
  int singular_point_blocks = 0;       // e-blocks V_p (points) that needed regularisation (summed over steps)
  int singular_camera_blocks = 0;      // camera blocks of the preconditioner that did
  int linear_iterations = 0;           // PCG iterations, all steps solved (also a last step that ends the
                                       // solve on a tolerance, which Summary::iterations leaves out as
                                       // Ceres does; pcg_seconds includes its time)
  double linear_seconds = 0;           // time in the linear solver (PCG or dense Schur), all steps
  double pcg_seconds = 0;              // of which in the PCG iterations (the rest: forming the reduced
                                       // system, its preconditioner and the point back-substitution)
  double analysis_seconds = 0;         // reading the problem's structure through Ceres' API
  double setup_seconds = 0;            // building the engine (index, device memory, uploads)
};
const char* to_string(SolveDetails::Path path);

// How ceres_cuda::Solve runs, beyond what ceres::Solver::Options says.
struct SolveOptions {
  Backend backend = Backend::Auto;  // Auto: the GPU when there is one
  // Advise Linux to back the set-up's large host arrays (gigabytes at tens of millions of residuals)
  // with 2 MiB pages and fault them in on all threads (madvise MADV_HUGEPAGE and MADV_POPULATE_WRITE),
  // which shortens the set-up where the first touch of fresh memory is slow. Off by default: how a
  // process's memory is paged is its owner's choice. While any Solve that asks for it runs, it
  // applies to all Solves of the process.
  bool advise_huge_pages = false;
  // Log (glog WARNING) the reason each time a problem goes to ceres::Solve; a caller that reports the
  // reason itself (once, say) turns it off.
  bool log_fallback = true;
};

// The same contract as ceres::Solve (see above).
void Solve(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary);

// The same, choosing the engine and how it runs, and reporting what ran (details may be null).
void Solve(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary,
           const SolveOptions& solve_options, SolveDetails* details);
void Solve(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary,
           Backend backend, SolveDetails* details);

}  // namespace ceres_cuda
