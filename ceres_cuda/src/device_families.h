#pragma once
// The residual families of a SchurStructure that the GPU evaluates (residual_families.h): their
// constants on the device (block numbers and observations per residual, every block's place in the
// state, the PlusJacobians' places), and per evaluation a kernel per family (device_family_kernels.cuh)
// at a state uploaded from the host or already on the device (DeviceState). The device families lead the structure's residuals, so their costs
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
  // plus_jacobian_offset: per variable block, its PlusJacobian's place in the host array that launch()
  // takes, or -1 (ThreadedEvaluator's). device_cells ... device_tangent_size: the engine's copies of
  // JacobianCells' arrays on the device.
  DeviceFamilies(const SchurStructure& structure, const std::vector<long>& plus_jacobian_offset,
                 const JacobianCell* device_cells, const int* device_row_start, const long* device_row_offset,
                 const int* device_tangent_size, cudaStream_t stream);

  bool empty() const { return residuals_ == 0; }
  int num_residuals() const { return residuals_; }  // the device families' residuals: [0, num_residuals())

  // Starts the evaluation at state (the host's ambient values of every block) on the stream: residual
  // values into f (the structure's residual vector on the device) and, with plus_jacobians (the host
  // array of PlusJacobians at state), the cells into jacobian. Returns at once; finish() waits.
  void launch(const double* state, const std::vector<double>* plus_jacobians, double* f, double* jacobian);
  // The same at a state already on the device (DeviceState's), with its PlusJacobians there (null
  // when jacobian is null: the residuals alone).
  void launch_on_device(const double* device_state, const double* device_plus_jacobians, double* f, double* jacobian);
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
  linalg_cuda::DeviceVector<double> state_, plus_jacobians_, cost_, partials_;
  // The state's copy in page-locked memory: its upload then waits for nothing queued before it.
  linalg_cuda::PinnedBuffer host_state_;
};

}  // namespace ceres_cuda::detail
