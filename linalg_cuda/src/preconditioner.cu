#include "linalg_cuda/preconditioner.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "linalg_cuda/internal/launch_geometry.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_csr_matrix.h"
#include "linalg_cuda/device_matrix.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"
#include "linalg_cuda/internal/small_spd_inverse.h"

namespace linalg_cuda {
namespace {

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();

__global__ void csr_diagonal_kernel(int n, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                    const double* __restrict__ values, double* __restrict__ diagonal) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    double d = 0.0;
    for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      if (col_idx[k] == i) d += values[k];
    diagonal[i] = d;
  }
}

__global__ void dense_diagonal_kernel(std::size_t n, const double* __restrict__ a, double* __restrict__ diagonal) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    diagonal[i] = a[i * n + i];
}

// inverse = 1 / diagonal; first_bad = smallest index whose entry is not positive and finite (an
// integer atomicMin, so the reported index does not depend on the schedule).
__global__ void invert_diagonal_kernel(std::size_t n, const double* __restrict__ diagonal, double* __restrict__ inverse,
                                       unsigned long long* first_bad) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const double d = diagonal[i];
    if (!(d > 0.0) || !isfinite(d)) atomicMin(first_bad, static_cast<unsigned long long>(i));
    inverse[i] = 1.0 / d;
  }
}

__global__ void scale_kernel(std::size_t n, const double* __restrict__ s, const double* __restrict__ r, double* __restrict__ z) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    z[i] = s[i] * r[i];
}

// Blocks in the continuous-element layout: entry (i, j) of block k at ((i * bs + j) * nb + k).
__device__ __forceinline__ std::size_t block_entry(int i, int j, int bs, std::size_t nb, std::size_t k) {
  return (static_cast<std::size_t>(i) * bs + j) * nb + k;
}

// One thread per row: copies the row's entries that fall in its own diagonal block.
__global__ void csr_diagonal_blocks_kernel(int n, int bs, std::size_t nb, const int* __restrict__ row_ptr,
                                           const int* __restrict__ col_idx, const double* __restrict__ values,
                                           double* __restrict__ blocks) {
  for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < n; row += gridDim.x * blockDim.x) {
    const int k = row / bs, i = row % bs;
    for (int e = row_ptr[row]; e < row_ptr[row + 1]; ++e) {
      const int col = col_idx[e];
      if (col / bs == k) blocks[block_entry(i, col % bs, bs, nb, k)] += values[e];
    }
  }
}

__global__ void dense_diagonal_blocks_kernel(std::size_t n, int bs, std::size_t nb, const double* __restrict__ a,
                                             double* __restrict__ blocks) {
  for (std::size_t row = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; row < n; row += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t k = row / bs;
    const int i = static_cast<int>(row % bs);
    for (int j = 0; j < bs; ++j) {
      const std::size_t col = k * bs + j;
      if (col < n) blocks[block_entry(i, j, bs, nb, k)] = a[col * n + row];
    }
  }
}

// One thread per block: the block's m x m leading part (m < bs only for the last block) is inverted
// with the Cholesky routine the CPU reference uses; padding rows become identity.
__global__ void invert_blocks_kernel(std::size_t n, int bs, std::size_t nb, double* __restrict__ blocks,
                                     unsigned long long* first_bad) {
  constexpr int kMax = BlockJacobiPreconditioner::kMaxBlockSize;
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < nb; k += std::size_t(gridDim.x) * blockDim.x) {
    const int m = static_cast<int>(min(static_cast<std::size_t>(bs), n - k * bs));
    double a[kMax * kMax];
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) a[i * kMax + j] = blocks[block_entry(i, j, bs, nb, k)];
    const bool ok = detail::invert_spd_in_place(a, m, kMax);
    if (!ok) atomicMin(first_bad, static_cast<unsigned long long>(k));
    for (int i = 0; i < bs; ++i)
      for (int j = 0; j < bs; ++j)
        blocks[block_entry(i, j, bs, nb, k)] = (i < m && j < m) ? (ok ? a[i * kMax + j] : 0.0) : (i == j ? 1.0 : 0.0);
  }
}

// continuous: the vectors in the continuous-element layout (row i of block k at i * nb + k; n = nb * bs).
__global__ void apply_blocks_kernel(std::size_t n, int bs, std::size_t nb, bool continuous,
                                    const double* __restrict__ inverse, const double* __restrict__ r,
                                    double* __restrict__ z) {
  constexpr int kMax = BlockJacobiPreconditioner::kMaxBlockSize;
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < nb; k += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t first = k * bs;
    const int m = static_cast<int>(min(static_cast<std::size_t>(bs), n - first));
    const auto row = [&](int i) { return continuous ? static_cast<std::size_t>(i) * nb + k : first + i; };
    double rk[kMax];
    for (int j = 0; j < m; ++j) rk[j] = r[row(j)];
    for (int i = 0; i < m; ++i) {
      double s = 0.0;
      for (int j = 0; j < m; ++j) s += inverse[block_entry(i, j, bs, nb, k)] * rk[j];
      z[row(i)] = s;
    }
  }
}

// Runs a check kernel that records the first bad index, and returns it (kNone when all are fine).
// One synchronisation, at set-up time only.
template <typename Launch>
unsigned long long first_bad_index(Launch launch) {
  DeviceBuffer bad(sizeof(unsigned long long));
  unsigned long long host = kNone;
  cudaStream_t stream = thread_context().stream();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(bad.data(), &host, sizeof(host), cudaMemcpyHostToDevice, stream));
  launch(bad.as<unsigned long long>());
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(&host, bad.data(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

void require_square(std::size_t rows, std::size_t cols, const char* who) {
  if (rows != cols)
    throw DimensionMismatch(std::string(who) + ": the matrix must be square, got " + std::to_string(rows) + "x" +
                            std::to_string(cols));
}

}  // namespace

// ---- Jacobi ------------------------------------------------------------------------------------

JacobiPreconditioner::JacobiPreconditioner(const DeviceCsrMatrix& a) {
  require_square(a.rows(), a.cols(), "JacobiPreconditioner");
  DeviceVector<double> diagonal(a.rows());
  if (a.rows() > 0) {
    csr_diagonal_kernel<<<detail::blocks_for(a.rows()), detail::kThreadsPerBlock, 0, thread_context().stream()>>>(
        static_cast<int>(a.rows()), a.row_ptr().data(), a.col_idx().data(), a.values().data(), diagonal.data());
    LINALG_CUDA_CHECK_LAUNCH();
  }
  invert_and_check(diagonal);
}

JacobiPreconditioner::JacobiPreconditioner(const DeviceMatrix& a) {
  require_square(a.rows(), a.cols(), "JacobiPreconditioner");
  DeviceVector<double> diagonal(a.rows());
  if (a.rows() > 0) {
    dense_diagonal_kernel<<<detail::blocks_for(a.rows()), detail::kThreadsPerBlock, 0, thread_context().stream()>>>(
        a.rows(), a.data(), diagonal.data());
    LINALG_CUDA_CHECK_LAUNCH();
  }
  invert_and_check(diagonal);
}

JacobiPreconditioner::JacobiPreconditioner(const DeviceVector<double>& diagonal) { invert_and_check(diagonal); }

void JacobiPreconditioner::invert_and_check(const DeviceVector<double>& diagonal) {
  const std::size_t n = diagonal.size();
  inverse_diagonal_ = DeviceVector<double>(n);
  if (n == 0) return;
  const unsigned long long bad = first_bad_index([&](unsigned long long* first_bad) {
    invert_diagonal_kernel<<<detail::blocks_for(n), detail::kThreadsPerBlock, 0, thread_context().stream()>>>(
        n, diagonal.data(), inverse_diagonal_.data(), first_bad);
  });
  if (bad != kNone) {
    double value = 0.0;
    LINALG_CUDA_CHECK(cudaMemcpy(&value, diagonal.data() + bad, sizeof(double), cudaMemcpyDeviceToHost));
    throw InvalidArgument("JacobiPreconditioner: diagonal entry " + std::to_string(bad) + " is " +
                          detail::readable(value) + "; an SPD matrix has a positive, finite diagonal");
  }
}

void JacobiPreconditioner::apply(const DeviceVector<double>& r, DeviceVector<double>& z) const {
  const std::size_t n = size();
  if (r.size() != n || z.size() != n)
    throw DimensionMismatch("JacobiPreconditioner::apply: size " + std::to_string(n) + ", got r " +
                            std::to_string(r.size()) + " and z " + std::to_string(z.size()));
  if (n == 0) return;
  scale_kernel<<<detail::blocks_for(n), detail::kThreadsPerBlock, 0, thread_context().stream()>>>(n, inverse_diagonal_.data(),
                                                                                      r.data(), z.data());
  LINALG_CUDA_CHECK_LAUNCH();
}

// ---- block Jacobi --------------------------------------------------------------------------------

void BlockJacobiPreconditioner::set_shape(std::size_t n, int block_size) {
  if (block_size < 1 || block_size > kMaxBlockSize)
    throw InvalidArgument("BlockJacobiPreconditioner: block size " + std::to_string(block_size) + " outside [1, " +
                          std::to_string(kMaxBlockSize) + "]");
  n_ = n;
  block_size_ = block_size;
  num_blocks_ = (n + block_size - 1) / block_size;
}

BlockJacobiPreconditioner::BlockJacobiPreconditioner(const DeviceCsrMatrix& a, int block_size) {
  require_square(a.rows(), a.cols(), "BlockJacobiPreconditioner");
  set_shape(a.rows(), block_size);
  inverse_blocks_ = DeviceVector<double>(num_blocks_ * block_size_ * block_size_, 0.0);
  if (n_ > 0) {
    csr_diagonal_blocks_kernel<<<detail::blocks_for(n_), detail::kThreadsPerBlock, 0, thread_context().stream()>>>(
        static_cast<int>(n_), block_size_, num_blocks_, a.row_ptr().data(), a.col_idx().data(), a.values().data(),
        inverse_blocks_.data());
    LINALG_CUDA_CHECK_LAUNCH();
  }
  invert_and_check();
}

BlockJacobiPreconditioner::BlockJacobiPreconditioner(const DeviceMatrix& a, int block_size) {
  require_square(a.rows(), a.cols(), "BlockJacobiPreconditioner");
  set_shape(a.rows(), block_size);
  inverse_blocks_ = DeviceVector<double>(num_blocks_ * block_size_ * block_size_, 0.0);
  if (n_ > 0) {
    dense_diagonal_blocks_kernel<<<detail::blocks_for(n_), detail::kThreadsPerBlock, 0, thread_context().stream()>>>(
        n_, block_size_, num_blocks_, a.data(), inverse_blocks_.data());
    LINALG_CUDA_CHECK_LAUNCH();
  }
  invert_and_check();
}

BlockJacobiPreconditioner::BlockJacobiPreconditioner(std::size_t n, int block_size, const DeviceVector<double>& blocks) {
  set_shape(n, block_size);
  set_blocks(blocks);
  invert_and_check();
}

BlockJacobiPreconditioner BlockJacobiPreconditioner::from_inverse_blocks(std::size_t num_blocks, int block_size,
                                                                         const DeviceVector<double>& inverse_blocks,
                                                                         BlockVectorLayout layout) {
  BlockJacobiPreconditioner m;
  m.set_shape(num_blocks * static_cast<std::size_t>(std::max(block_size, 0)), block_size);
  m.set_blocks(inverse_blocks);
  m.layout_ = layout;
  return m;
}

void BlockJacobiPreconditioner::update_inverse_blocks(const DeviceVector<double>& inverse_blocks) {
  check_block_values(inverse_blocks);
  inverse_blocks_.assign(inverse_blocks);
}

void BlockJacobiPreconditioner::check_block_values(const DeviceVector<double>& blocks) const {
  if (blocks.size() != num_blocks_ * block_size_ * block_size_)
    throw DimensionMismatch("BlockJacobiPreconditioner: expected " + std::to_string(num_blocks_) + " blocks of " +
                            std::to_string(block_size_) + "x" + std::to_string(block_size_) + " (" +
                            std::to_string(num_blocks_ * block_size_ * block_size_) + " values), got " +
                            std::to_string(blocks.size()));
}

void BlockJacobiPreconditioner::set_blocks(const DeviceVector<double>& blocks) {
  check_block_values(blocks);
  inverse_blocks_ = blocks.copy();
}

void BlockJacobiPreconditioner::invert_and_check() {
  if (num_blocks_ == 0) return;
  const unsigned long long bad = first_bad_index([&](unsigned long long* first_bad) {
    // Each thread keeps a kMax x kMax block in local memory; small blocks of threads keep that cheap.
    invert_blocks_kernel<<<detail::blocks_for(num_blocks_, 64), 64, 0, thread_context().stream()>>>(
        n_, block_size_, num_blocks_, inverse_blocks_.data(), first_bad);
  });
  if (bad != kNone)
    throw InvalidArgument("BlockJacobiPreconditioner: diagonal block " + std::to_string(bad) + " (rows " +
                          std::to_string(bad * block_size_) + "..) is not positive definite");
}

void BlockJacobiPreconditioner::apply(const DeviceVector<double>& r, DeviceVector<double>& z) const {
  if (r.size() != n_ || z.size() != n_)
    throw DimensionMismatch("BlockJacobiPreconditioner::apply: size " + std::to_string(n_) + ", got r " +
                            std::to_string(r.size()) + " and z " + std::to_string(z.size()));
  if (n_ == 0) return;
  apply_blocks_kernel<<<detail::blocks_for(num_blocks_), detail::kThreadsPerBlock, 0, thread_context().stream()>>>(
      n_, block_size_, num_blocks_, layout_ == BlockVectorLayout::kContinuousElement, inverse_blocks_.data(), r.data(),
      z.data());
  LINALG_CUDA_CHECK_LAUNCH();
}

}  // namespace linalg_cuda
