#pragma once
// Set-up phase times at glog verbosity 1 (GLOG_v=1 in the environment, or --v=1 where a program
// parses glog's flags; Ceres' own VLOG lines use the same switch): reading a problem of millions of
// residual blocks and building an engine take seconds, and these lines say where.
#include <glog/logging.h>

#include <chrono>

namespace ceres_cuda::detail {

class PhaseLog {
 public:
  explicit PhaseLog(const char* stage) : stage_(stage), last_(std::chrono::steady_clock::now()) {}

  // Logs the time since the previous call (or the construction) as `phase`.
  void operator()(const char* phase) {
    const auto now = std::chrono::steady_clock::now();
    VLOG(1) << "ceres_cuda " << stage_ << ": " << phase << " " << std::chrono::duration<double>(now - last_).count()
            << " s";
    last_ = now;
  }

 private:
  const char* stage_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace ceres_cuda::detail
