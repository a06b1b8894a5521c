// The CPU backend's batch checks of ChainCheckEngine (the GPU's are in chain_check_engine.cu): on all
// cores, each configuration or motion decided by the same code as a single check, so the answers do
// not depend on the number of threads.
#include "chain_check_engine.h"

namespace ompl_cuda::detail {

void ChainCheckEngine::check_states_cpu(const double* q, std::size_t count, char* valid) const {
  const long n = static_cast<long>(count);
  const std::size_t d = static_cast<std::size_t>(chain_.links());
#pragma omp parallel for schedule(static) if (n > 1024)
  for (long i = 0; i < n; ++i) valid[i] = this->valid(q + i * d) ? 1 : 0;
}

void ChainCheckEngine::check_motions_cpu(std::size_t first, std::size_t n, const MotionStaging& staging) const {
  const long begin = static_cast<long>(first), end = static_cast<long>(first + n);
  const std::size_t d = static_cast<std::size_t>(chain_.links());
  // Dynamic: a motion that collides early costs a fraction of a valid one.
#pragma omp parallel for schedule(dynamic, 16) if (n > 64)
  for (long i = begin; i < end; ++i)
    staging.first_invalid[i] = this->first_invalid(staging.from + i * d, staging.to + i * d, staging.segments[i]);
}

}  // namespace ompl_cuda::detail
