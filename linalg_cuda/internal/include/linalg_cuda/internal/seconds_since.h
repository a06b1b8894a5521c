#pragma once
// Wall-clock seconds since a steady-clock time point: the solvers' timings and the programs' reports.
#include <chrono>

namespace linalg_cuda::detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace linalg_cuda::detail
