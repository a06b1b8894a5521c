#pragma once
// The residual families of a SchurStructure that the GPU evaluates (residual_families.h), as the general
// GPU engine's ResidualEvaluation: their constants on the device (block numbers and observations per
// residual, every block's place in the state, the PlusJacobians' places), and per evaluation a kernel
// per family (device_family_kernels.cuh) at the state on the device. The device families lead the
// structure's residuals, so their costs fill one per-residual array, summed in a fixed order.
#include <cuda_runtime.h>

#include <vector>

#include "jacobian_cells.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "residual_evaluation.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class DeviceFamilies final : public ResidualEvaluation {
 public:
  // plus_jacobian_offset: per variable block, its PlusJacobian's place in the array that launch() takes,
  // or -1 (ThreadedEvaluator's layout). device_cells ... device_tangent_size: the engine's copies of
  // JacobianCells' arrays on the device.
  DeviceFamilies(const SchurStructure& structure, const std::vector<long>& plus_jacobian_offset,
                 const JacobianCell* device_cells, const int* device_row_start, const long* device_row_offset,
                 const int* device_tangent_size, cudaStream_t stream);

  bool empty() const { return residuals_ == 0; }
  int first() const override { return 0; }
  int num_residuals() const override { return residuals_; }

  // Launches the families' kernels at EvaluationPoint::device_state on the stream and returns; the
  // residual values go to f whether or not the Jacobian is asked for.
  void start(const EvaluationPoint& at, double* f, double* jacobian) override;
  bool finish(double* cost) override;

 private:
  struct Family {
    CostModel model;
    BuiltinLoss loss;
    int first, count;
    linalg_cuda::DeviceBuffer blocks, observations;
  };

  const SchurStructure& s_;
  cudaStream_t stream_;
  int residuals_ = 0;
  std::vector<Family> families_;
  const JacobianCell* cells_;
  const int* row_start_;
  const long* row_offset_;
  const int* tangent_size_;
  linalg_cuda::DeviceBuffer block_offset_, plus_offset_, scalars_;
  linalg_cuda::DeviceVector<double> cost_, partials_;
};

}  // namespace ceres_cuda::detail
