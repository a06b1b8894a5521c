#pragma once
// How many OpenMP threads the set-up (the problem analysis and the index) runs on: all of them from
// 2^14 residual blocks, one below, where each parallel region would have little work. On the
// 16-core H200 machine, the general engine's set-up of Dubrovnik-16 (84 thousand residual blocks)
// takes 0.054 s on all threads against 0.078 s on one, Ladybug's (32 thousand) 0.028 s against
// 0.038 s. The results do not depend on the number of threads.
#include <omp.h>

#include <cstdlib>

namespace ceres_cuda::detail {

// Residual blocks from which the set-up runs on all threads: 2^14, or CERES_CUDA_PARALLEL_SET_UP_FROM
// from the environment (to time the set-up both ways on a machine; a test sets 0 to run its small
// problems on all threads too).
inline long& parallel_set_up_from() {
  static long from = [] {
    const char* value = std::getenv("CERES_CUDA_PARALLEL_SET_UP_FROM");
    return value != nullptr ? std::strtol(value, nullptr, 10) : 1L << 14;
  }();
  return from;
}

// For the lifetime of the object, this thread's parallel regions take one thread when the set-up is
// over fewer than parallel_set_up_from() residual blocks (and the usual number otherwise).
class SetUpThreads {
 public:
  explicit SetUpThreads(long residual_blocks) : saved_(omp_get_max_threads()) {
    if (residual_blocks < parallel_set_up_from()) omp_set_num_threads(1);
  }
  ~SetUpThreads() { omp_set_num_threads(saved_); }
  SetUpThreads(const SetUpThreads&) = delete;
  SetUpThreads& operator=(const SetUpThreads&) = delete;

 private:
  int saved_;
};

}  // namespace ceres_cuda::detail
