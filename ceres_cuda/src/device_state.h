#pragma once
// ParameterState on the device (parameter_state.h), for the general GPU engine when every residual is
// evaluated on the GPU (device families) and every variable block's manifold is one the GPU applies
// (manifold_math.h): x and the candidate, Plus along the step, the PlusJacobians the families read, and
// the norms the LM loop asks for, all as kernels on the engine's stream. The whole LM step then stays
// on the device; the values come to the host when the solve writes them back. The host's state
// (BlockState, with the manifold objects' own Plus) is its reference.
#include <cuda_runtime.h>

#include <memory>
#include <utility>
#include <vector>

#include "block_state.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "manifold_math.h"
#include "parameter_state.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class DeviceState final : public ParameterState {
 public:
  // Null unless every variable block's manifold is one the GPU applies. host: the state it starts from
  // and writes back to; plus_jacobian_offset: per variable block, its PlusJacobian's place, or -1
  // (ThreadedEvaluator's layout, which the device families read).
  static std::unique_ptr<DeviceState> make(const SchurStructure& structure, BlockState* host,
                                           const std::vector<long>& plus_jacobian_offset, cudaStream_t stream);

  bool at_x(EvaluationPoint* point) override;
  EvaluationPoint at_candidate() override { return {candidate_.data(), nullptr, nullptr}; }
  // A NaN or Inf in the step makes its sum one too.
  bool take_step(const double* delta) override;
  bool move_candidate() override;  // the GPU's manifolds never fail
  bool gradient_norms(const double* gradient, double* norm, double* max_norm) override;
  double x_norm() override;
  double step_norm() override;
  void accept_candidate() override { std::swap(x_, candidate_); }
  void write_to_user() override;
  bool on_device() const override { return true; }

  // x's values on the host (every block's, the state's layout).
  std::vector<double> download_x() const;

  DeviceState(const SchurStructure& structure, BlockState* host, std::vector<ManifoldBlock> blocks,
              long plus_jacobian_values, cudaStream_t stream);

 private:
  void plus(const double* x, const double* delta, double* out);
  // sum of v[0, n) (squares: of their squares) into scalars_[0], without waiting.
  void queue_sum(const double* v, long n, bool squares);
  // norm, max norm of a - b over the variable blocks' values.
  void difference_norms(const double* a, const double* b, double* norm, double* max_norm);

  const SchurStructure& s_;
  BlockState& host_;
  cudaStream_t stream_;
  int num_blocks_ = 0;
  long variable_values_ = 0;
  const double* delta_ = nullptr;     // the engine's step, from take_step
  linalg_cuda::DeviceBuffer blocks_;  // ManifoldBlock per variable block
  linalg_cuda::DeviceVector<double> x_, candidate_, plus_jacobians_, scratch_, minus_gradient_, partials_;
  linalg_cuda::DeviceBuffer scalars_;  // the sum, its ticket, the maximum's bits
};

}  // namespace ceres_cuda::detail
