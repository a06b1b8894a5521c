#pragma once
// LinearOperator: anything that computes y = A x on device vectors. Dense and CSR matrices implement
// it, and so can a matrix-free operator (the bundle-adjustment implicit Schur complement), so that
// one conjugate-gradient solver serves them all. An operator that can also take part of the CG
// iteration on itself implements FusedCgOperator (fused_cg_operator.h) besides.
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
};

}  // namespace linalg_cuda
