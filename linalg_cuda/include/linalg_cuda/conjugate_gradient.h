#pragma once
// Conjugate gradients on the GPU for a symmetric positive definite LinearOperator.
//
// Every scalar of the iteration (alpha, beta, residual norms) lives on the device: the whole loop is
// one CUDA graph launch whose conditional node repeats check_every iterations until the state says
// stop (or, where conditional nodes are missing, a batch of check_every iterations is launched at a
// time and the host reads the convergence state back once per batch). Dot products are deterministic
// (fixed-order block reductions, no floating-point atomics), so a solve gives the same bits run after
// run.
// For a DeviceCsrMatrix the product A p and the dot p'Ap are one fused kernel; with no or a Jacobi
// preconditioner the updates of x, r, z and both dot products are one kernel as well.
#include <memory>

#include "linalg_cuda/cg_options.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/linear_operator.h"
#include "linalg_cuda/preconditioner.h"
#include "linalg_cuda/solver_summary.h"

namespace linalg_cuda {

// A reusable solver: its workspace (r, z, p, q, reduction scratch, device state) is allocated on the
// first solve and kept while the system size stays the same, so repeated solves (e.g. one per
// Levenberg-Marquardt step) allocate nothing.
class ConjugateGradient {
 public:
  explicit ConjugateGradient(CgOptions options = {});
  ~ConjugateGradient();
  ConjugateGradient(ConjugateGradient&&) noexcept;
  ConjugateGradient& operator=(ConjugateGradient&&) noexcept;

  const CgOptions& options() const { return options_; }
  void set_options(const CgOptions& options);

  // Solves A x = b starting from the x given (x must have A.cols() entries; use fill(0) for a cold
  // start). preconditioner may be null. Throws DimensionMismatch on inconsistent sizes and CudaError
  // on device failures; every numerical outcome (indefinite A, NaN in b, ...) is reported in the
  // summary instead, with x left at the last finite iterate.
  SolverSummary solve(const LinearOperator& a, const DeviceVector<double>& b, DeviceVector<double>& x,
                      const Preconditioner* preconditioner = nullptr);

 private:
  struct Workspace;
  CgOptions options_;
  std::unique_ptr<Workspace> workspace_;
};

// One-shot form of ConjugateGradient::solve.
SolverSummary cg(const LinearOperator& a, const DeviceVector<double>& b, DeviceVector<double>& x,
                 const CgOptions& options = {}, const Preconditioner* preconditioner = nullptr);

}  // namespace linalg_cuda
