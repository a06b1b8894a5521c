#pragma once
// How many OpenMP threads the set-up (the problem analysis and the index) runs on: all of them for
// large problems, one for small ones. On the 16-core GPU machine, the parallel set-up of a
// Ladybug-sized problem (32 thousand residual blocks) took 0.09 s against 0.008 s for the earlier,
// mostly serial one, 10-20 ms in each parallel region whatever its work; on one thread such a problem
// takes a few milliseconds. The results do not depend on the number of threads.
#include <omp.h>

namespace ceres_cuda::detail {

// Residual blocks from which the set-up runs on all threads: 2^18 (a test sets 0 to run its small
// problems on all threads too).
inline long& parallel_set_up_from() {
  static long from = 1L << 18;
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
