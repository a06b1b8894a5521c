#pragma once
// User code (cost functions, manifolds) runs inside OpenMP loops, which an exception must not leave:
// it would end the program. A call that throws counts as one that returned false (a failed
// evaluation, a failed Plus), which Ceres' minimizer already knows how to handle.

namespace ceres_cuda::detail {

template <typename Call>
bool guarded_call(Call&& call) noexcept {
  try {
    return call();
  } catch (...) {
    return false;
  }
}

}  // namespace ceres_cuda::detail
