#include "device_families.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "device_family_kernels.cuh"
#include "device_reductions.cuh"
#include "device_upload.h"
#include "linalg_cuda/cuda_check.h"
#include "residual_families.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::detail::blocks_covering;
using linalg_cuda::detail::blocks_for;

template <class Model>
void launch_family(const FamilyArgs& args, cudaStream_t stream) {
  // A thread per residual, no loop: a grid covering them all.
  evaluate_family_kernel<Model><<<blocks_covering(args.count), linalg_cuda::detail::kThreadsPerBlock, 0, stream>>>(args);
  LINALG_CUDA_CHECK_LAUNCH();
}

}  // namespace

DeviceFamilies::DeviceFamilies(const SchurStructure& structure, const std::vector<long>& plus_jacobian_offset,
                               const JacobianCell* device_cells, const int* device_row_start,
                               const long* device_row_offset, const int* device_tangent_size, cudaStream_t stream)
    : s_(structure),
      stream_(stream),
      cells_(device_cells),
      row_start_(device_row_start),
      row_offset_(device_row_offset),
      tangent_size_(device_tangent_size) {
  for (const ResidualFamily& family : structure.families) {
    if (family.model == CostModel::Host) continue;
    std::vector<int> blocks;
    std::vector<double> observations;
    pack_family(structure, family, &blocks, &observations);
    families_.push_back({family.model, family.loss, family.first, family.last - family.first,
                         upload_array(blocks, stream), upload_array(observations, stream)});
    residuals_ = std::max(residuals_, family.last);
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host arrays go out of scope
  }
  if (empty()) return;
  std::vector<long> block_offset(structure.blocks.size());
  for (std::size_t b = 0; b < structure.blocks.size(); ++b) block_offset[b] = structure.blocks[b].offset;
  block_offset_ = upload_array(block_offset, stream);
  plus_offset_ = upload_array(plus_jacobian_offset, stream);
  cost_ = linalg_cuda::DeviceVector<double>(residuals_);
  partials_ = linalg_cuda::DeviceVector<double>(kMaxReduceBlocks);
  scalars_.reserve(4 * sizeof(double));  // the failure flag, the sum's ticket and result
  LINALG_CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0, 4 * sizeof(double), stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void DeviceFamilies::start(const EvaluationPoint& at, double* f, double* jacobian) {
  if (empty()) return;
  int* failed = scalars_.as<int>();
  LINALG_CUDA_CHECK(cudaMemsetAsync(failed, 0, sizeof(int), stream_));
  for (const Family& family : families_) {
    FamilyArgs args;
    args.first = family.first;
    args.count = family.count;
    args.blocks = family.blocks.as<int>();
    args.observations = family.observations.as<double>();
    args.loss = family.loss;
    args.state = at.device_state;
    args.block_offset = block_offset_.as<long>();
    args.plus_offset = plus_offset_.as<long>();
    args.plus_jacobians = at.plus_jacobians;
    args.cells = cells_;
    args.row_start = row_start_;
    args.row_offset = row_offset_;
    args.tangent_size = tangent_size_;
    args.f = f;
    args.jacobian = jacobian;
    args.cost = cost_.data();
    args.failed = failed;
    with_cost_model(family.model, [&](auto model) { launch_family<decltype(model)>(args, stream_); });
  }
  double* sum = scalars_.as<double>() + 2;
  sum_kernel<<<std::min<unsigned>(kMaxReduceBlocks, blocks_for(residuals_)), kReduceThreads, 0, stream_>>>(
      cost_.data(), residuals_, false, partials_.data(), reinterpret_cast<unsigned*>(scalars_.as<double>() + 1), sum);
  LINALG_CUDA_CHECK_LAUNCH();
}

bool DeviceFamilies::finish(double* cost) {
  *cost = 0.0;
  if (empty()) return true;
  double scalars[3];
  LINALG_CUDA_CHECK(cudaMemcpyAsync(scalars, scalars_.data(), 3 * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  int failed = 0;
  std::memcpy(&failed, scalars, sizeof(int));
  *cost = scalars[2];
  return failed == 0 && std::isfinite(*cost);
}

}  // namespace ceres_cuda::detail
