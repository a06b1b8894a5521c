#pragma once
// The residual families of a SchurStructure that the GPU evaluates (residual_families.h): their
// constants on the device (block numbers and observations per residual, every block's place in the
// state, the PlusJacobians' places), and per evaluation a kernel per family (device_family_kernels.cuh)
// at the state on the device (parameter_state.h). The device families lead the structure's residuals, so their costs
// fill one per-residual array, summed in a fixed order. Only the general GPU engine includes this.
#include <cuda_runtime.h>

#include <vector>

#include "jacobian_cells.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class DeviceFamilies {
 public:
  // plus_jacobian_offset: per variable block, its PlusJacobian's place in the array that launch() takes,
  // or -1 (ThreadedEvaluator's layout). device_cells ... device_tangent_size: the engine's copies of
  // JacobianCells' arrays on the device.
  DeviceFamilies(const SchurStructure& structure, const std::vector<long>& plus_jacobian_offset,
                 const JacobianCell* device_cells, const int* device_row_start, const long* device_row_offset,
                 const int* device_tangent_size, cudaStream_t stream);

  bool empty() const { return residuals_ == 0; }
  int num_residuals() const { return residuals_; }  // the device families' residuals: [0, num_residuals())

  // Starts the evaluation at state (every block's ambient values, on the device) on the stream:
  // residual values into f (the structure's residual vector on the device) and, with jacobian, the cells
  // into jacobian, each block's PlusJacobian read from plus_jacobians (ThreadedEvaluator's layout, on
  // the device; null where no block has a manifold). Returns at once; finish() waits.
  void launch(const double* state, const double* plus_jacobians, double* f, double* jacobian);
  // Waits for launch()'s work: false when a residual could not be evaluated or gave a value that is
  // not finite; otherwise *cost is the families' cost, summed in a fixed order.
  bool finish(double* cost);

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
