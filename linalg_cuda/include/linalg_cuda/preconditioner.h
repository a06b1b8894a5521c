#pragma once
// Preconditioners for the conjugate-gradient solver: z = M^{-1} r on device vectors.
// Jacobi (M = diag(A)) and block-Jacobi (M = the b x b blocks on A's diagonal). Both can be built from
// a CSR or dense matrix, or from diagonal data a matrix-free operator supplies itself.
#include <cstddef>

#include "linalg_cuda/device_vector.h"

namespace linalg_cuda {

class DeviceCsrMatrix;
class DeviceMatrix;

class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  virtual std::size_t size() const = 0;
  // z = M^{-1} r; same rules as LinearOperator::apply (stream-ordered, no sync, capturable).
  virtual void apply(const DeviceVector<double>& r, DeviceVector<double>& z) const = 0;
};

class JacobiPreconditioner : public Preconditioner {
 public:
  // Throws InvalidArgument naming the first row whose diagonal is not positive (or not finite):
  // an SPD matrix has a positive diagonal.
  explicit JacobiPreconditioner(const DeviceCsrMatrix& a);
  explicit JacobiPreconditioner(const DeviceMatrix& a);
  // From the diagonal of an operator that is not stored (matrix-free); same checks.
  explicit JacobiPreconditioner(const DeviceVector<double>& diagonal);

  std::size_t size() const override { return inverse_diagonal_.size(); }
  void apply(const DeviceVector<double>& r, DeviceVector<double>& z) const override;
  const DeviceVector<double>& inverse_diagonal() const { return inverse_diagonal_; }

 private:
  void invert_and_check(const DeviceVector<double>& diagonal);
  DeviceVector<double> inverse_diagonal_;
};

// Where row i of diagonal block k sits in the vectors a block-Jacobi preconditioner is applied to:
// k * block_size + i (block by block, the usual), or i * num_blocks + k (the continuous-element
// layout: entry i of every block contiguous, as ceres_cuda keeps its camera values).
enum class BlockVectorLayout { kBlockByBlock, kContinuousElement };

class BlockJacobiPreconditioner : public Preconditioner {
 public:
  static constexpr int kMaxBlockSize = 16;

  // Blocks of block_size rows along the diagonal (the last one smaller when block_size does not
  // divide n). Each block is inverted through its Cholesky factor; throws InvalidArgument naming the
  // first block that is not positive definite. block_size in [1, kMaxBlockSize].
  BlockJacobiPreconditioner(const DeviceCsrMatrix& a, int block_size);
  BlockJacobiPreconditioner(const DeviceMatrix& a, int block_size);
  // From the diagonal blocks themselves, in the continuous-element layout: entry (i, j) of block k at
  // blocks[(i * block_size + j) * num_blocks + k], num_blocks = ceil(n / block_size); the padding rows
  // of a last partial block are ignored.
  BlockJacobiPreconditioner(std::size_t n, int block_size, const DeviceVector<double>& blocks);
  // From blocks the caller has inverted already (its own checks and regularisation stand; nothing is
  // inverted or checked here), in the same layout, for vectors of num_blocks * block_size rows in
  // the given layout. Throws InvalidArgument for a block size outside [1, kMaxBlockSize] and
  // DimensionMismatch for a wrong number of values.
  static BlockJacobiPreconditioner from_inverse_blocks(std::size_t num_blocks, int block_size,
                                                       const DeviceVector<double>& inverse_blocks,
                                                       BlockVectorLayout layout);
  // New inverted blocks for the same shape, copied in place (stream-ordered, no allocation): for a
  // solver whose blocks change every outer step (an LM step's damping), where a new preconditioner
  // would cost an allocation and a cudaFree, which waits for the device. Throws DimensionMismatch for
  // a wrong number of values.
  void update_inverse_blocks(const DeviceVector<double>& inverse_blocks);

  std::size_t size() const override { return n_; }
  int block_size() const { return block_size_; }
  std::size_t num_blocks() const { return num_blocks_; }
  BlockVectorLayout layout() const { return layout_; }
  void apply(const DeviceVector<double>& r, DeviceVector<double>& z) const override;
  // Inverted blocks, same layout as the constructor's input.
  const DeviceVector<double>& inverse_blocks() const { return inverse_blocks_; }

 private:
  BlockJacobiPreconditioner() = default;
  void set_shape(std::size_t n, int block_size);
  void set_blocks(const DeviceVector<double>& blocks);
  void check_block_values(const DeviceVector<double>& blocks) const;
  void invert_and_check();
  std::size_t n_ = 0;
  int block_size_ = 1;
  std::size_t num_blocks_ = 0;
  BlockVectorLayout layout_ = BlockVectorLayout::kBlockByBlock;
  DeviceVector<double> inverse_blocks_;
};

}  // namespace linalg_cuda
