#include "host_evaluated_engine.h"

#include <chrono>

#include "linalg_cuda/internal/seconds_since.h"

namespace ceres_cuda::detail {

using linalg_cuda::detail::seconds_since;

HostEvaluatedEngine::HostEvaluatedEngine(const SchurStructure& structure, const EngineOptions& options)
    : s_(structure),
      options_(options),
      cells_(structure),
      evaluator_(structure, cells_, options.num_threads),
      state_(structure, options.num_threads),
      candidate_f_(cells_.num_rows) {}

bool HostEvaluatedEngine::evaluate_jacobian(double* f, double* jacobian, double* cost) {
  const auto start = std::chrono::steady_clock::now();
  const bool ok = evaluator_.evaluate(state_.x(), f, jacobian, cost);
  counters_.jacobian_seconds += seconds_since(start);
  ++counters_.jacobian_evaluations;
  return ok;
}

bool HostEvaluatedEngine::evaluate_candidate(double* cost) {
  if (!state_.move_candidate(step())) return false;
  const auto start = std::chrono::steady_clock::now();
  const bool ok = evaluator_.evaluate(state_.candidate(), candidate_f_.data(), nullptr, cost);
  counters_.residual_seconds += seconds_since(start);
  ++counters_.residual_evaluations;
  return ok;
}

}  // namespace ceres_cuda::detail
