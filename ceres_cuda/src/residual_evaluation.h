#pragma once
// How the general GPU engine evaluates its residuals, behind one interface: the library's cost
// functions on the GPU (DeviceFamilies) and the user's on CPU threads (ThreadedEvaluator, whose rows go
// to the device in one copy per evaluation). Each evaluation takes a range of the structure's
// residuals. The engine starts them all, the device's first so that the GPU works while the CPU
// threads do, then waits for each and adds their costs in a fixed order.
#include <cuda_runtime.h>

#include <memory>

#include "threaded_evaluator.h"

namespace ceres_cuda::detail {

// The point to evaluate at, as ParameterState holds it.
struct EvaluationPoint {
  const double* device_state = nullptr;  // every block's ambient values, on the device
  const double* host_state = nullptr;    // the same on the host; null where the state lives on the device alone
  // The PlusJacobians at the point on the device (ThreadedEvaluator's layout); null for the cost alone
  // or where no block has a manifold.
  const double* plus_jacobians = nullptr;
};

class ResidualEvaluation {
 public:
  virtual ~ResidualEvaluation() = default;
  // The structure's residuals [first(), first() + num_residuals()) are this evaluation's.
  virtual int first() const = 0;
  virtual int num_residuals() const = 0;
  // Starts the evaluation at `at`: with jacobian (the device's cells), the residual values into f (the
  // structure's residual vector on the device) and the cells into jacobian; without, the cost alone, f
  // being scratch that may be left unwritten. May return before the work is done.
  virtual void start(const EvaluationPoint& at, double* f, double* jacobian) = 0;
  // Waits for start()'s work: false when a residual could not be evaluated or gave a value that is not
  // finite; otherwise *cost is the range's cost, summed in a fixed order.
  virtual bool finish(double* cost) = 0;
};

// The evaluator's residuals on its CPU threads at EvaluationPoint::host_state, the rows uploaded on the
// stream from page-locked memory. evaluator outlives the evaluation.
std::unique_ptr<ResidualEvaluation> make_host_residual_evaluation(ThreadedEvaluator* evaluator, cudaStream_t stream);

}  // namespace ceres_cuda::detail
