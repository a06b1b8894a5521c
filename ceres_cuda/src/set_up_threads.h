#pragma once
// How many OpenMP threads the set-up (the problem analysis, the cells, the index, the exact solvers'
// plans) runs on: one per set_up_blocks_per_thread() residual blocks, at most all of them, so that a
// parallel region over a small problem does not spend more on waking threads than on its work. On
// the 16-core H200 machine Ladybug's set-up (32 thousand residual blocks) is fastest on all 16
// threads, and slower the fewer it gets. The results do not depend on the number of threads.
#include <omp.h>

#include <algorithm>
#include <cstdlib>

namespace ceres_cuda::detail {

// Residual blocks per set-up thread: 2048, or CERES_CUDA_SET_UP_BLOCKS_PER_THREAD from the
// environment (to time the set-up on a machine); 0 runs every set-up on all threads (the tests do,
// to check their small problems that way too).
inline long& set_up_blocks_per_thread() {
  static long per_thread = [] {
    const char* value = std::getenv("CERES_CUDA_SET_UP_BLOCKS_PER_THREAD");
    return value != nullptr ? std::max(0L, std::strtol(value, nullptr, 10)) : 2048L;
  }();
  return per_thread;
}

// The threads for a set-up over `residual_blocks`.
inline int set_up_threads_for(long residual_blocks) {
  const long all = omp_get_max_threads(), per_thread = set_up_blocks_per_thread();
  if (per_thread == 0) return static_cast<int>(all);
  return static_cast<int>(std::clamp(residual_blocks / per_thread, 1L, all));
}

// For the lifetime of the object, this thread's parallel regions take set_up_threads_for(residual_blocks).
class SetUpThreads {
 public:
  explicit SetUpThreads(long residual_blocks) : saved_(omp_get_max_threads()) {
    omp_set_num_threads(set_up_threads_for(residual_blocks));
  }
  ~SetUpThreads() { omp_set_num_threads(saved_); }
  SetUpThreads(const SetUpThreads&) = delete;
  SetUpThreads& operator=(const SetUpThreads&) = delete;

 private:
  int saved_;
};

}  // namespace ceres_cuda::detail
