#pragma once
// What a conjugate-gradient solve did and why it stopped.
#include <string>

#include "linalg_cuda/backend.h"

namespace linalg_cuda {

enum class CgTermination {
  Converged,               // ||r|| reached the tolerance
  QuadraticModelConverged, // the quadratic-model (Nash-Sofer) test of CgOptions::quadratic_tolerance
  MaxIterations,           // iteration limit reached first
  NotPositiveDefinite,     // p'Ap <= 0: the operator is not SPD (x holds the last good iterate)
  PreconditionerNotSpd,    // r'z <= 0: the preconditioner is not SPD
  NonFinite,               // NaN/Inf appeared in b, x0 or the iteration
};
const char* to_string(CgTermination termination);

struct SolverSummary {
  bool converged = false;
  CgTermination termination = CgTermination::MaxIterations;
  std::string message;             // one line, for people
  int iterations = 0;
  double initial_residual_norm = 0;  // ||b - A x0||
  double final_residual_norm = 0;
  double rhs_norm = 0;               // ||b||
  double seconds = 0;                // wall time of the solve, setup and transfers included
  Backend backend = Backend::Cpu;
  // "converged in 57 iterations, |r| 1.2e-03 -> 3.4e-13 (rel 2.8e-10), 1.3 ms on cuda"
  std::string brief() const;
};

}  // namespace linalg_cuda
