#pragma once
// LinearOperator: anything that computes y = A x on device vectors. Dense and CSR matrices implement
// it, and so can a matrix-free operator (the bundle-adjustment implicit Schur complement), so that
// one conjugate-gradient solver serves them all.
#include <cstddef>

#include "linalg_cuda/device_vector.h"

namespace linalg_cuda {

// One conjugate-gradient iteration's direction update and product, for an operator that does them in
// its own kernels (LinearOperator::apply_cg_step). The vectors and device scalars are the solver's,
// fixed for a solve; the scalars are read and written on the device only.
struct CgProductStep {
  const DeviceVector<double>& z;  // M^{-1} r of the current iterate (r without preconditioner)
  DeviceVector<double>& p;        // the search direction: first p = z + beta p ...
  const double* beta;             // ... with this beta (0 on a solve's first iteration, where p = z already)
  DeviceVector<double>& q;        // then q = A p with the new p
  double* pap;                    // and p'q, summed in an order that does not change from run to run
  // Nonzero once the iterations have stopped: whatever the operator then does to p, q and pap is
  // discarded, so its kernels may return at once (as in apply_unless_stopped).
  const int* stopped;
};

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
  // Optional: the CG's whole direction update, product and p'Ap (see CgProductStep) in the operator's
  // own kernels, which spares the solver two launches an iteration (a product that ends in a reduction
  // of its own can add p'q to it, and one that starts with a pass over p can update it there). Same
  // rules as apply(). Returns false, having enqueued nothing, when the operator does not do this (the
  // default); the answer must not change from call to call. The solver then calls
  // apply_unless_stopped and does the rest itself.
  virtual bool apply_cg_step(const CgProductStep& step) const {
    (void)step;
    return false;
  }
};

}  // namespace linalg_cuda
