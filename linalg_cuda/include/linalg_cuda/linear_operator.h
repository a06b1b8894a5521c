#pragma once
// LinearOperator: anything that computes y = A x on device vectors. Dense and CSR matrices implement
// it, and so can a matrix-free operator (the bundle-adjustment implicit Schur complement), so that
// one conjugate-gradient solver serves them all.
#include <cstddef>

#include "linalg_cuda/device_vector.h"

namespace linalg_cuda {

class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual std::size_t rows() const = 0;
  virtual std::size_t cols() const = 0;
  // y = A x. x.size() == cols() and y.size() == rows() (else DimensionMismatch). Work is enqueued on
  // the calling thread's stream (thread_context().stream()) without synchronising the host, so that
  // the solver can capture it into a CUDA graph: an implementation must not synchronise, allocate,
  // or change what it launches from one call to the next with the same arguments.
  virtual void apply(const DeviceVector<double>& x, DeviceVector<double>& y) const = 0;
  // The same, inside an iterative solver's loop: `stopped` points to a device int that is nonzero once
  // the solver's iterations have stopped. The GPU CG runs its iterations in batches between its tests
  // for convergence, and a batch's iterations after the stop are discarded; an operator whose kernels
  // return at once when *stopped is nonzero makes them nearly free, so the solver can test less often
  // (CgOptions::check_every). The default ignores the flag.
  virtual void apply_unless_stopped(const DeviceVector<double>& x, DeviceVector<double>& y, const int* stopped) const {
    (void)stopped;
    apply(x, y);
  }
};

}  // namespace linalg_cuda
