#pragma once
// FusedCgOperator: an opt-in interface for a LinearOperator that takes part of the GPU conjugate
// gradient's iteration on itself, to spare the solver launches and passes over memory. The solver
// detects it (ConjugateGradient::solve); an operator without it is applied with apply() alone and
// gives the same iterates. The CPU reference never uses it.
#include "linalg_cuda/device_vector.h"

namespace linalg_cuda {

// One conjugate-gradient iteration's direction update and product, for an operator that does them in
// its own kernels (FusedCgOperator::apply_cg_step). The vectors and device scalars are the solver's,
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

// Implemented beside LinearOperator:
//   class MyOperator final : public LinearOperator, public FusedCgOperator { ... };
// Both hooks follow apply()'s rules: enqueue on the calling thread's stream, never synchronise or
// allocate, launch the same work for the same arguments.
class FusedCgOperator {
 public:
  virtual ~FusedCgOperator() = default;
  // y = A x inside the solver's loop, where `stopped` points to a device int that is nonzero once the
  // iterations have stopped. The GPU CG runs its iterations in batches between its tests for
  // convergence (CgExecution::check_every) and discards a batch's iterations after the stop; kernels
  // that return at once when *stopped is nonzero make those nearly free.
  virtual void apply_unless_stopped(const DeviceVector<double>& x, DeviceVector<double>& y,
                                    const int* stopped) const = 0;
  // The CG's whole direction update, product and p'Ap (see CgProductStep) in the operator's own
  // kernels, which spares the solver two launches an iteration (a product that ends in a reduction of
  // its own can add p'q to it, and one that starts with a pass over p can update it there). Returns
  // false, having enqueued nothing, when the operator does not do this (the default; the answer must
  // not change from call to call): the solver then calls apply_unless_stopped and does the rest.
  virtual bool apply_cg_step(const CgProductStep& step) const {
    (void)step;
    return false;
  }
};

}  // namespace linalg_cuda
