#pragma once
// Where the general GPU engine keeps the parameters, behind one interface: on the host (BlockState,
// the manifold objects' Plus and PlusJacobian, the state uploaded for each evaluation and the step
// and gradient downloaded: any manifold, and the user's cost functions on CPU threads) or on the
// device (DeviceState: every manifold one the GPU applies, every residual a device family's, the whole
// LM step on the GPU). The engine's evaluation and linear algebra read device pointers either way.
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "block_state.h"
#include "residual_evaluation.h"
#include "schur_structure.h"
#include "threaded_evaluator.h"

namespace ceres_cuda::detail {

class ParameterState {
 public:
  virtual ~ParameterState() = default;
  // x for an evaluation with the Jacobian: on the device with the PlusJacobians at x there, and on the
  // host where the state lives there; false when a manifold's PlusJacobian failed.
  virtual bool at_x(EvaluationPoint* point) = 0;
  // The candidate, for the residuals alone (no PlusJacobians).
  virtual EvaluationPoint at_candidate() = 0;
  // Takes the step the engine solved (a device tangent vector, kept until the next step): whether all
  // its values are finite.
  virtual bool take_step(const double* delta) = 0;
  // candidate = Plus(x, step); false when a manifold's Plus failed.
  virtual bool move_candidate() = 0;
  // Ceres' norms: of x - Plus(x, -g) for the device gradient g, of x, of x - candidate.
  virtual bool gradient_norms(const double* gradient, double* norm, double* max_norm) = 0;
  virtual double x_norm() = 0;
  virtual double step_norm() = 0;
  virtual void accept_candidate() = 0;
  // x into the user's parameter blocks.
  virtual void write_to_user() = 0;
  virtual bool on_device() const = 0;
};

// The device state where it applies (on_device_possible: every residual is a device family's), the
// host's otherwise. host and evaluator are the engine's and outlive the state.
std::unique_ptr<ParameterState> make_parameter_state(const SchurStructure& structure, BlockState* host,
                                                     ThreadedEvaluator* evaluator, bool on_device_possible,
                                                     cudaStream_t stream);

}  // namespace ceres_cuda::detail
