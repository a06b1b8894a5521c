#include "device_state.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "device_reductions.cuh"
#include "device_upload.h"
#include "grid_stride.cuh"
#include "linalg_cuda/cuda_check.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::detail::blocks_for;

__global__ void plus_kernel(const ManifoldBlock* blocks, int n, const double* x, const double* delta, double* out) {
  CERES_CUDA_FOR_EACH(b, 0, n) {
    const ManifoldBlock block = blocks[b];
    block_plus(block, x + block.offset, delta + block.tangent_offset, out + block.offset);
  }
}

__global__ void plus_jacobian_kernel(const ManifoldBlock* blocks, int n, const double* x, double* out) {
  CERES_CUDA_FOR_EACH(b, 0, n) {
    const ManifoldBlock block = blocks[b];
    if (block.plus_jacobian_offset >= 0) block_plus_jacobian(block, x + block.offset, out + block.plus_jacobian_offset);
  }
}

__global__ void difference_kernel(long n, const double* a, const double* b, double* out) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long>(gridDim.x) * blockDim.x)
    out[i] = a[i] - b[i];
}

__global__ void negate_kernel(long n, const double* v, double* out) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long>(gridDim.x) * blockDim.x)
    out[i] = -v[i];
}

unsigned reduce_blocks(long n) { return std::min<unsigned>(kMaxReduceBlocks, blocks_for(std::max<long>(1, n))); }

}  // namespace

std::unique_ptr<DeviceState> DeviceState::make(const SchurStructure& structure, BlockState* host,
                                               const std::vector<long>& plus_jacobian_offset, cudaStream_t stream) {
  std::vector<ManifoldBlock> blocks(structure.num_variable_blocks());
  long plus_jacobian_values = 0;
  for (int b = 0; b < structure.num_variable_blocks(); ++b) {
    const SchurBlock& s = structure.blocks[b];
    ManifoldBlock& m = blocks[b];
    if (!recognise(s.manifold, s.size, &m.kind, &m.constant_mask)) return nullptr;
    m.offset = s.offset;
    m.tangent_offset = s.tangent_offset;
    m.size = s.size;
    m.tangent_size = s.tangent_size;
    m.plus_jacobian_offset = s.manifold != nullptr ? plus_jacobian_offset[b] : -1;
    if (m.plus_jacobian_offset >= 0)
      plus_jacobian_values = std::max(plus_jacobian_values, m.plus_jacobian_offset + static_cast<long>(s.size) * s.tangent_size);
  }
  return std::make_unique<DeviceState>(structure, host, std::move(blocks), plus_jacobian_values, stream);
}

DeviceState::DeviceState(const SchurStructure& structure, BlockState* host, std::vector<ManifoldBlock> blocks,
                         long plus_jacobian_values, cudaStream_t stream)
    : s_(structure), host_(*host), stream_(stream), num_blocks_(static_cast<int>(blocks.size())) {
  variable_values_ = structure.num_variable_blocks() == static_cast<int>(structure.blocks.size())
                         ? structure.state_size
                         : structure.blocks[structure.num_variable_blocks()].offset;
  // Staged uploads (upload_array): the host arrays may go as soon as these return.
  blocks_ = upload_array(blocks, stream);
  const long n = std::max<long>(1, structure.state_size);
  const linalg_cuda::DeviceBuffer x = upload_array(host->x(), structure.state_size, stream);
  x_ = linalg_cuda::DeviceVector<double>(n);
  candidate_ = linalg_cuda::DeviceVector<double>(n);
  for (double* to : {x_.data(), candidate_.data()})
    LINALG_CUDA_CHECK(cudaMemcpyAsync(to, x.data(), structure.state_size * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  plus_jacobians_ = linalg_cuda::DeviceVector<double>(std::max<long>(1, plus_jacobian_values));
  scratch_ = linalg_cuda::DeviceVector<double>(n);
  minus_gradient_ = linalg_cuda::DeviceVector<double>(std::max<long>(1, structure.tangent_size()));
  partials_ = linalg_cuda::DeviceVector<double>(kMaxReduceBlocks);
  scalars_.reserve(4 * sizeof(double));
  LINALG_CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0, 4 * sizeof(double), stream));
}

bool DeviceState::at_x(EvaluationPoint* point) {
  plus_jacobian_kernel<<<blocks_for(std::max(1, num_blocks_)), kReduceThreads, 0, stream_>>>(
      blocks_.as<ManifoldBlock>(), num_blocks_, x_.data(), plus_jacobians_.data());
  LINALG_CUDA_CHECK_LAUNCH();
  *point = {x_.data(), nullptr, plus_jacobians_.data()};
  return true;
}

void DeviceState::plus(const double* x, const double* delta, double* out) {
  plus_kernel<<<blocks_for(std::max(1, num_blocks_)), kReduceThreads, 0, stream_>>>(blocks_.as<ManifoldBlock>(),
                                                                                   num_blocks_, x, delta, out);
  LINALG_CUDA_CHECK_LAUNCH();
}

bool DeviceState::take_step(const double* delta) {
  delta_ = delta;
  queue_sum(delta, s_.tangent_size(), false);
  double sum = 0.0;
  LINALG_CUDA_CHECK(cudaMemcpyAsync(&sum, scalars_.data(), sizeof(double), cudaMemcpyDeviceToHost, stream_));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return std::isfinite(sum);
}

bool DeviceState::move_candidate() {
  plus(x_.data(), delta_, candidate_.data());
  return true;
}

void DeviceState::queue_sum(const double* v, long n, bool squares) {
  auto* ticket = reinterpret_cast<unsigned*>(scalars_.as<double>() + 1);
  sum_kernel<<<reduce_blocks(n), kReduceThreads, 0, stream_>>>(v, n, squares, partials_.data(), ticket,
                                                              scalars_.as<double>());
  LINALG_CUDA_CHECK_LAUNCH();
}

void DeviceState::difference_norms(const double* a, const double* b, double* norm, double* max_norm) {
  const long n = variable_values_;
  difference_kernel<<<blocks_for(std::max<long>(1, n)), kReduceThreads, 0, stream_>>>(n, a, b, scratch_.data());
  LINALG_CUDA_CHECK_LAUNCH();
  auto* largest = reinterpret_cast<unsigned long long*>(scalars_.as<double>() + 2);
  queue_sum(scratch_.data(), n, true);
  if (max_norm != nullptr) {
    LINALG_CUDA_CHECK(cudaMemsetAsync(largest, 0, sizeof(unsigned long long), stream_));
    max_abs_kernel<<<reduce_blocks(n), kReduceThreads, 0, stream_>>>(scratch_.data(), n, largest);
    LINALG_CUDA_CHECK_LAUNCH();
  }
  double host[3] = {0.0, 0.0, 0.0};
  LINALG_CUDA_CHECK(cudaMemcpyAsync(host, scalars_.data(), 3 * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  *norm = std::sqrt(host[0]);
  if (max_norm != nullptr) *max_norm = host[2];
}

double DeviceState::x_norm() {
  double norm = 0.0;
  queue_sum(x_.data(), variable_values_, true);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(&norm, scalars_.data(), sizeof(double), cudaMemcpyDeviceToHost, stream_));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return std::sqrt(norm);
}

double DeviceState::step_norm() {
  double norm = 0.0;
  difference_norms(x_.data(), candidate_.data(), &norm, nullptr);
  return norm;
}

bool DeviceState::gradient_norms(const double* gradient, double* norm, double* max_norm) {
  const long t = s_.tangent_size();
  negate_kernel<<<blocks_for(std::max<long>(1, t)), kReduceThreads, 0, stream_>>>(t, gradient, minus_gradient_.data());
  LINALG_CUDA_CHECK_LAUNCH();
  // The moved point goes to the candidate's array, which the next step's Plus overwrites; the constant
  // blocks' values, which Plus leaves alone, are the same in both arrays.
  plus(x_.data(), minus_gradient_.data(), candidate_.data());
  difference_norms(x_.data(), candidate_.data(), norm, max_norm);
  return true;
}

void DeviceState::write_to_user() {
  host_.assign_x(download_x());
  host_.write_to_user();
}

std::vector<double> DeviceState::download_x() const {
  std::vector<double> host(s_.state_size);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(host.data(), x_.data(), s_.state_size * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return host;
}

}  // namespace ceres_cuda::detail
