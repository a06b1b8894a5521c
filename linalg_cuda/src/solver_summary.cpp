#include "linalg_cuda/solver_summary.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "cg_state.h"
#include "linalg_cuda/cg_options.h"
#include "linalg_cuda/errors.h"

namespace linalg_cuda {
namespace {

template <typename... Args>
std::string format(const char* fmt, Args... args) {
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

}  // namespace

const char* to_string(CgTermination termination) {
  switch (termination) {
    case CgTermination::Converged: return "converged";
    case CgTermination::QuadraticModelConverged: return "quadratic-model-converged";
    case CgTermination::MaxIterations: return "max-iterations";
    case CgTermination::NotPositiveDefinite: return "not-positive-definite";
    case CgTermination::PreconditionerNotSpd: return "preconditioner-not-spd";
    case CgTermination::NonFinite: return "non-finite";
  }
  return "?";
}

const char* to_string(PreconditionerType type) {
  switch (type) {
    case PreconditionerType::None: return "none";
    case PreconditionerType::Jacobi: return "jacobi";
    case PreconditionerType::BlockJacobi: return "block-jacobi";
  }
  return "?";
}

void validate(const CgStoppingCriteria& stop) {
  const auto tolerance = [](const char* name, double value) {
    if (!std::isfinite(value) || value < 0)
      throw InvalidArgument(format("cg: %s is %g; it must be a finite number >= 0", name, value));
  };
  tolerance("relative_tolerance", stop.relative_tolerance);
  tolerance("absolute_tolerance", stop.absolute_tolerance);
  tolerance("quadratic_tolerance", stop.quadratic_tolerance);
  if (stop.max_iterations < 1)
    throw InvalidArgument(format("cg: max_iterations is %d; it must be at least 1", stop.max_iterations));
  if (stop.min_iterations < 0 || stop.min_iterations > stop.max_iterations)
    throw InvalidArgument(format("cg: min_iterations is %d; it must be in [0, max_iterations = %d]",
                                 stop.min_iterations, stop.max_iterations));
}

PreconditionerType parse_preconditioner(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(t.begin(), t.end(), '_', '-');
  if (t == "none") return PreconditionerType::None;
  if (t == "jacobi") return PreconditionerType::Jacobi;
  if (t == "block-jacobi") return PreconditionerType::BlockJacobi;
  throw InvalidArgument("unknown preconditioner '" + text + "' (expected none, jacobi or block-jacobi)");
}

std::string SolverSummary::brief() const {
  const double relative = rhs_norm > 0 ? final_residual_norm / rhs_norm : 0.0;
  return format("%s after %d iterations, |r| %.3e -> %.3e (|r|/|b| %.3e), %.3f ms on %s", to_string(termination),
                iterations, initial_residual_norm, final_residual_norm, relative, seconds * 1e3, to_string(backend));
}

namespace detail {

void fill_summary(const CgState& s, const CgStoppingCriteria& options, SolverSummary* summary) {
  summary->iterations = s.iteration;
  summary->rhs_norm = std::sqrt(s.bb);
  summary->final_residual_norm = std::sqrt(s.rr);
  summary->converged = s.status == kCgConverged || s.status == kCgQuadraticConverged;
  const double relative = summary->rhs_norm > 0 ? summary->final_residual_norm / summary->rhs_norm : 0.0;
  switch (s.status) {
    case kCgConverged:
      summary->termination = CgTermination::Converged;
      summary->message = format("converged: |r|/|b| = %.3e", relative);
      break;
    case kCgQuadraticConverged:
      summary->termination = CgTermination::QuadraticModelConverged;
      summary->message = format("quadratic model converged (Nash-Sofer test < %.3e) with |r|/|b| = %.3e",
                                options.quadratic_tolerance, relative);
      break;
    case kCgMaxIterations:
      summary->termination = CgTermination::MaxIterations;
      summary->message = format("iteration limit %d reached with |r|/|b| = %.3e", options.max_iterations, relative);
      break;
    case kCgNotPositiveDefinite:
      summary->termination = CgTermination::NotPositiveDefinite;
      summary->message = format("operator is not positive definite: p'Ap = %.3e <= 0 in iteration %d", s.last_pap,
                                s.iteration + 1);
      break;
    case kCgPreconditionerNotSpd:
      summary->termination = CgTermination::PreconditionerNotSpd;
      summary->message = format("preconditioner is not positive definite: r'z <= 0 after iteration %d", s.iteration);
      break;
    default:
      summary->termination = CgTermination::NonFinite;
      summary->message = s.iteration == 0 ? std::string("b or the initial x holds NaN or Inf (or A x0 overflowed)")
                                          : format("NaN or Inf appeared in iteration %d", s.iteration);
      break;
  }
}

}  // namespace detail
}  // namespace linalg_cuda
