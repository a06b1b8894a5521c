#pragma once
// The parameter values on the device, for the general GPU engine when every residual is evaluated on
// the GPU (device families) and every variable block's manifold is one the GPU applies
// (manifold_math.h): x and the candidate, Plus along the step, the PlusJacobians the families read,
// and the norms the LM loop asks for, all as kernels on the engine's stream. The whole LM step then
// stays on the device; the values come to the host when the solve writes them back. BlockState is
// its reference on the host, with the manifold objects' own Plus.
#include <cuda_runtime.h>

#include <memory>
#include <utility>
#include <vector>

#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "manifold_math.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class DeviceState {
 public:
  // Null unless every variable block's manifold is one the GPU applies. host_x: the state's ambient
  // values (BlockState's x); plus_jacobian_offset: per variable block, its PlusJacobian's place in
  // plus_jacobians(), or -1 (ThreadedEvaluator's layout, which the device families read).
  static std::unique_ptr<DeviceState> make(const SchurStructure& structure, const double* host_x,
                                           const std::vector<long>& plus_jacobian_offset, cudaStream_t stream);

  const double* x() const { return x_.data(); }
  const double* candidate() const { return candidate_.data(); }
  // The PlusJacobians at x, for the blocks with a manifold.
  const double* plus_jacobians() const { return plus_jacobians_.data(); }

  void update_plus_jacobians();
  // candidate = Plus(x, delta), delta a device tangent vector; the GPU's manifolds never fail.
  void move_candidate(const double* delta);
  void accept_candidate() { std::swap(x_, candidate_); }
  // |x| over the variable blocks, |x - candidate|, and the norm and max norm of x - Plus(x, -g) for
  // the device gradient g: Ceres' norms, each summed in a fixed order (one wait for the device).
  double x_norm();
  double step_norm();
  void projected_gradient_norms(const double* gradient, double* norm, double* max_norm);
  // x's values on the host (every block's, the state's layout).
  std::vector<double> download_x() const;

  DeviceState(const SchurStructure& structure, std::vector<ManifoldBlock> blocks, const double* host_x,
              long plus_jacobian_values, cudaStream_t stream);

 private:
  // norm, max norm of a - b over the variable blocks' values.
  void difference_norms(const double* a, const double* b, double* norm, double* max_norm);

  const SchurStructure& s_;
  cudaStream_t stream_;
  int num_blocks_ = 0;
  long variable_values_ = 0;
  linalg_cuda::DeviceBuffer blocks_;  // ManifoldBlock per variable block
  linalg_cuda::DeviceVector<double> x_, candidate_, plus_jacobians_, scratch_, minus_gradient_, partials_;
  linalg_cuda::DeviceBuffer scalars_;  // the sum, its ticket, the maximum's bits
};

}  // namespace ceres_cuda::detail
