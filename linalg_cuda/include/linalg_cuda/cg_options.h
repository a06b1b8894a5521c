#pragma once
// Options of the conjugate-gradient solvers (GPU and CPU reference alike): what to stop on, and how
// the GPU runs the iterations.
#include <string>

#include "linalg_cuda/backend.h"

namespace linalg_cuda {

enum class PreconditionerType { None, Jacobi, BlockJacobi };
const char* to_string(PreconditionerType type);
// "none", "jacobi", "block-jacobi"/"block_jacobi"; throws InvalidArgument otherwise.
PreconditionerType parse_preconditioner(const std::string& text);

// When the iteration stops. Both backends apply the same tests in the same order.
struct CgStoppingCriteria {
  // Stop when ||r|| <= max(relative_tolerance * ||b||, absolute_tolerance), r = b - A x (the
  // recursively updated residual, as Eigen and Ginkgo report it).
  double relative_tolerance = 1e-10;
  double absolute_tolerance = 0.0;
  int max_iterations = 10000;
  // Truncated-Newton stopping rule of Ceres' CG (Nash and Sofer): with Q(x) = x'Ax - 2b'x, stop at
  // iteration i when i (Q(x_i) - Q(x_i-1)) / Q(x_i) < quadratic_tolerance. 0 (the default) turns it
  // off; Levenberg-Marquardt steps use Ceres' eta (0.1). Q is tracked as -x'(b + r), r = b - Ax.
  double quadratic_tolerance = 0.0;
  // Neither stopping rule is applied before this many iterations (Ceres' min_linear_solver_iterations).
  int min_iterations = 0;
};

// Throws InvalidArgument naming the first option that no solve can honour: a tolerance that is negative
// or not finite, max_iterations below 1, min_iterations below 0 or above max_iterations (Ceres' rules
// for its linear solver's options). Both solvers call it before they start.
void validate(const CgStoppingCriteria& stop);

// How the GPU solver launches its iterations. None of these changes the iterates or where they stop.
struct CgExecution {
  // The GPU solver tests for convergence every check_every iterations; the ones in between run
  // blindly (one CUDA graph, no host synchronisation). The device stops updating at the exact
  // iteration that converged, so this never costs accuracy; it costs up to check_every - 1 leftover
  // iterations, whose own kernels return at once but whose operator and general preconditioner
  // applications run in full unless the operator implements FusedCgOperator::apply_unless_stopped (a
  // costly operator that does not wants a small value).
  int check_every = 16;
  // Capture the iterations in a CUDA graph (falls back to plain launches if an operator cannot be
  // captured).
  bool use_cuda_graph = true;
  // With graphs: run the whole loop on the device, as a conditional WHILE node (CUDA 12.4 and later)
  // whose body, check_every iterations, repeats until the state leaves "running", instead of the host
  // reading the state back after each batch. Where conditional nodes are missing the solver falls back
  // to those read-backs; so it does, whatever this says, where the environment variable
  // LINALG_CUDA_CG_HOST_LOOP is set: compute-sanitizer's racecheck and synccheck do not follow kernels
  // that a conditional node launches (docs/reliability.md).
  bool use_device_loop = true;
};

struct CgOptions {
  CgStoppingCriteria stop;
  CgExecution execution;
  // Used by the convenience solve() entry points that build the preconditioner and pick the backend
  // themselves.
  PreconditionerType preconditioner = PreconditionerType::None;
  int block_size = 1;
  Backend backend = Backend::Auto;
};

}  // namespace linalg_cuda
