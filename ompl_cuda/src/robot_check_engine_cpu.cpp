// RobotCheckEngine's checks on the CPU (the GPU's are in robot_check_engine.cu): single checks on the
// calling thread, batches on all cores, each state decided by the same code as a single check, so
// the answers do not depend on the number of threads.
#include "robot_check_engine.h"

namespace ompl_cuda::detail {

namespace {

// The check's scratch for the calling thread, grown once.
CheckScratch scratch_for(const RobotCheckData& data) {
  thread_local HostCheckScratch s;
  return s.fit(data);
}

}  // namespace

bool RobotCheckEngine::valid(const double* values) const {
  return robot_state_valid(view_, [values](int k) { return values[k]; }, scratch_for(data_));
}

int RobotCheckEngine::first_invalid(const double* from, const double* to, int segments) const {
  const CheckScratch s = scratch_for(data_);
  for (int j = 1; j < segments; ++j) {
    const double t = static_cast<double>(j) / static_cast<double>(segments);
    if (!robot_state_valid(view_, [from, to, t](int k) { return from[k] + (to[k] - from[k]) * t; }, s))
      return j;
  }
  if (!valid(to)) return segments > 0 ? segments : 1;
  return 0;
}

void RobotCheckEngine::check_states(const double* values, std::size_t count, char* valid) {
  if (count == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  run_states(values, count, valid);
}

void RobotCheckEngine::check_motions(const double* from, const double* to, const int* segments, std::size_t count,
                                     int* first_invalid) {
  if (count == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  run_motions(from, to, segments, count, first_invalid);
}

void RobotCheckEngine::run_states(const double* values, std::size_t count, char* valid) {
  if (backend_ == linalg_cuda::Backend::Cuda) {
    check_states_gpu(values, count, valid);
    return;
  }
  const long n = static_cast<long>(count);
  const std::size_t d = static_cast<std::size_t>(dimension());
  // Dynamic: a state that collides early costs a fraction of a valid one.
#pragma omp parallel for schedule(dynamic, 64) if (n > 256)
  for (long i = 0; i < n; ++i) valid[i] = this->valid(values + i * d) ? 1 : 0;
}

void RobotCheckEngine::run_motions(const double* from, const double* to, const int* segments, std::size_t count,
                                   int* first_invalid) {
  if (backend_ == linalg_cuda::Backend::Cuda) {
    check_motions_gpu(from, to, segments, count, first_invalid);
    return;
  }
  const long n = static_cast<long>(count);
  const std::size_t d = static_cast<std::size_t>(dimension());
#pragma omp parallel for schedule(dynamic, 4) if (n > 16)
  for (long i = 0; i < n; ++i) first_invalid[i] = this->first_invalid(from + i * d, to + i * d, segments[i]);
}

}  // namespace ompl_cuda::detail
