#pragma once
// DeviceCsrMatrix: a sparse double matrix in CSR form (int32 indices) in GPU memory.
// apply() is cuSPARSE's generic SpMV (deterministic CSR_ALG2) with its work buffer allocated once, at
// construction. The CG solver uses its own fused SpMV + dot-product kernel on the same arrays.
#include <cstddef>
#include <memory>
#include <vector>

#include "linalg_cuda/csr_matrix.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/linear_operator.h"

namespace linalg_cuda {

class DeviceCsrMatrix : public LinearOperator {
 public:
  DeviceCsrMatrix();
  explicit DeviceCsrMatrix(const CsrMatrix& host);  // compressed or not
  // Raw CSR: row_ptr has rows+1 entries starting at 0, col_idx/values have row_ptr[rows] entries.
  // Validated: monotone row_ptr, column indices in [0, cols). Throws InvalidArgument otherwise.
  DeviceCsrMatrix(int rows, int cols, const int* row_ptr, const int* col_idx, const double* values);
  DeviceCsrMatrix(int rows, int cols, const std::vector<int>& row_ptr, const std::vector<int>& col_idx,
                  const std::vector<double>& values);
  ~DeviceCsrMatrix() override;

  // A moved-from matrix is empty (0 x 0).
  DeviceCsrMatrix(DeviceCsrMatrix&& other) noexcept;
  DeviceCsrMatrix& operator=(DeviceCsrMatrix&& other) noexcept;
  DeviceCsrMatrix(const DeviceCsrMatrix&) = delete;
  DeviceCsrMatrix& operator=(const DeviceCsrMatrix&) = delete;

  std::size_t rows() const override { return static_cast<std::size_t>(rows_); }
  std::size_t cols() const override { return static_cast<std::size_t>(cols_); }
  std::size_t nonzeros() const { return values_.size(); }

  // y = A x through cusparseSpMV. Not to be called on one matrix from two threads at once (the
  // cuSPARSE vector descriptors are shared); separate matrices are independent.
  void apply(const DeviceVector<double>& x, DeviceVector<double>& y) const override;

  CsrMatrix to_eigen() const;
  const DeviceVector<int>& row_ptr() const { return row_ptr_; }
  const DeviceVector<int>& col_idx() const { return col_idx_; }
  const DeviceVector<double>& values() const { return values_; }

 private:
  struct CusparseState;
  void upload(const int* row_ptr, const int* col_idx, const double* values);
  int rows_ = 0;
  int cols_ = 0;
  DeviceVector<int> row_ptr_;
  DeviceVector<int> col_idx_;
  DeviceVector<double> values_;
  std::unique_ptr<CusparseState> cusparse_;
};

}  // namespace linalg_cuda
