#pragma once
// The scalar state of a conjugate-gradient iteration and its decisions (step length, convergence,
// breakdown), written once for the CPU reference and the GPU kernels, so both stop at the same
// iteration for the same reason.
#include <math.h>  // isfinite/fmax unqualified, valid in host and device code
#include <string>

#include "linalg_cuda/cg_options.h"
#include "linalg_cuda/internal/host_device.h"
#include "linalg_cuda/solver_summary.h"

namespace linalg_cuda::detail {

enum CgStatus : int {
  kCgRunning = 0,
  kCgConverged = 1,
  kCgMaxIterations = 2,
  kCgNotPositiveDefinite = 3,
  kCgPreconditionerNotSpd = 4,
  kCgNonFinite = 5,
  kCgQuadraticConverged = 6,
};

struct CgState {
  double rz = 0;           // r'z of the current iterate (r'r without preconditioner)
  double rr = 0;           // r'r of the current iterate
  double bb = 0;           // b'b
  double alpha = 0, beta = 0;
  double rr_next = 0;      // r'r of the next iterate, between update and preconditioner kernels
  double xbr_next = 0;     // x'(b + r) of the next iterate, likewise (quadratic-model test)
  double last_pap = 0;     // p'Ap of the last step (reported when it is not positive)
  double operator_pap = 0; // p'Ap as an operator's apply_cg_step summed it (CgProductStep::pap)
  double relative_tolerance2 = 0, absolute_tolerance2 = 0, threshold2 = 0;
  double quadratic_tolerance = 0;  // > 0: the quadratic-model test is on
  double q_previous = 0;           // Q(x) = -x'(b + r) of the previous iterate
  int iteration = 0;
  int min_iterations = 0;
  int max_iterations = 0;
  int status = kCgRunning;
  unsigned int ticket = 0;  // last-block counter of the GPU reductions
};

inline CgState make_cg_state(const CgStoppingCriteria& options) {
  CgState s;
  s.relative_tolerance2 = options.relative_tolerance * options.relative_tolerance;
  s.absolute_tolerance2 = options.absolute_tolerance * options.absolute_tolerance;
  s.max_iterations = options.max_iterations;
  s.min_iterations = options.min_iterations;
  s.quadratic_tolerance = options.quadratic_tolerance;
  return s;
}

// After r0 = b - A x0, b'b, r0'r0, r0'z0 and x0'(b + r0) are known: the threshold and whether to
// iterate at all.
LINALG_HD void start_cg(CgState* s, double rr, double bb, double rz, bool preconditioned, double xbr = 0.0) {
  s->rr = rr;
  s->bb = bb;
  s->rz = rz;
  s->q_previous = -xbr;
  s->threshold2 = fmax(s->relative_tolerance2 * bb, s->absolute_tolerance2);
  if (!isfinite(bb) || !isfinite(rr) || !isfinite(rz)) s->status = kCgNonFinite;
  else if (rr <= s->threshold2 && s->min_iterations <= 0) s->status = kCgConverged;
  else if (preconditioned && !(rz > 0.0)) s->status = kCgPreconditionerNotSpd;
  else if (s->max_iterations <= 0) s->status = kCgMaxIterations;
  else s->status = kCgRunning;
}

// p'Ap is known: alpha = r'z / p'Ap, unless the operator turned out not to be SPD.
LINALG_HD void finish_alpha(CgState* s, double pap) {
  s->last_pap = pap;
  if (!isfinite(pap)) s->status = kCgNonFinite;
  else if (!(pap > 0.0)) s->status = kCgNotPositiveDefinite;
  else {
    s->alpha = s->rz / pap;
    if (!isfinite(s->alpha)) s->status = kCgNonFinite;  // p'Ap underflowed: stop before x is spoiled
  }
}

// The new residual is known: count the iteration, test convergence (the quadratic model first, as
// Ceres does, when it is on: xbr = x'(b + r) of the new iterate), else beta = r'z_new / r'z.
LINALG_HD void finish_beta(CgState* s, double rr, double rz, double xbr = 0.0) {
  s->iteration += 1;
  s->rr = rr;
  const bool may_stop = s->iteration >= s->min_iterations;
  bool quadratic_converged = false;
  if (s->quadratic_tolerance > 0.0) {
    const double q = -xbr;
    const double zeta = s->iteration * (q - s->q_previous) / q;
    quadratic_converged = may_stop && zeta < s->quadratic_tolerance;
    s->q_previous = q;
  }
  if (!isfinite(rr) || !isfinite(rz)) s->status = kCgNonFinite;
  else if (quadratic_converged) s->status = kCgQuadraticConverged;
  else if (rr <= s->threshold2 && may_stop) s->status = kCgConverged;
  else if (!(rz > 0.0)) s->status = kCgPreconditionerNotSpd;
  else if (s->iteration >= s->max_iterations) s->status = kCgMaxIterations;
  else {
    s->beta = rz / s->rz;
    s->rz = rz;
  }
}

// The summary fields that follow from the final state (not the timing or backend).
void fill_summary(const CgState& s, const CgStoppingCriteria& options, SolverSummary* summary);

}  // namespace linalg_cuda::detail
