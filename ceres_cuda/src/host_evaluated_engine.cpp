#include "host_evaluated_engine.h"

#include <chrono>

#include "linalg_cuda/internal/seconds_since.h"

namespace ceres_cuda::detail {

using linalg_cuda::detail::seconds_since;

HostEvaluatedEngine::HostEvaluatedEngine(const SchurStructure& structure, const EngineOptions& options,
                                         int first_host_residual)
    : s_(structure),
      options_(options),
      cells_(structure),
      evaluator_(structure, cells_, options.num_threads, first_host_residual),
      state_(structure, options.num_threads) {}

bool HostEvaluatedEngine::evaluate_jacobian(double* f, double* jacobian, double* cost) {
  const auto start = std::chrono::steady_clock::now();
  const bool ok = evaluator_.update_plus_jacobians(state_.x()) && evaluator_.evaluate(state_.x(), f, jacobian, cost);
  counters_.jacobian_seconds += seconds_since(start);
  ++counters_.jacobian_evaluations;
  return ok;
}

bool HostEvaluatedEngine::candidate_cost(double* cost) {
  if (candidate_f_.empty()) candidate_f_.resize(evaluator_.num_f());
  return evaluator_.evaluate(state_.candidate(), candidate_f_.data(), nullptr, cost);
}

bool HostEvaluatedEngine::evaluate_candidate(double* cost) {
  if (!move_candidate()) return false;
  const auto start = std::chrono::steady_clock::now();
  const bool ok = candidate_cost(cost);
  counters_.residual_seconds += seconds_since(start);
  ++counters_.residual_evaluations;
  return ok;
}

}  // namespace ceres_cuda::detail
