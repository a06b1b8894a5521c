#pragma once
// DeviceMatrix: a dense double matrix in GPU memory, column-major (as cuBLAS and Eigen), owned with
// RAII and move-only; copies are explicit (copy()). Arithmetic goes through cuBLAS on the calling
// thread's stream. Mismatched shapes throw DimensionMismatch before anything is launched.
#include <cstddef>

#include <Eigen/Core>

#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/linear_operator.h"

namespace linalg_cuda {

class DeviceMatrix : public LinearOperator {
 public:
  DeviceMatrix() = default;
  DeviceMatrix(std::size_t rows, std::size_t cols);  // contents undefined
  DeviceMatrix(std::size_t rows, std::size_t cols, double value);
  explicit DeviceMatrix(const Eigen::MatrixXd& host);

  // A moved-from matrix is empty (0 x 0).
  DeviceMatrix(DeviceMatrix&& other) noexcept;
  DeviceMatrix& operator=(DeviceMatrix&& other) noexcept;
  DeviceMatrix(const DeviceMatrix&) = delete;
  DeviceMatrix& operator=(const DeviceMatrix&) = delete;

  DeviceMatrix copy() const;
  Eigen::MatrixXd to_eigen() const;

  std::size_t rows() const override { return rows_; }
  std::size_t cols() const override { return cols_; }
  // Column-major storage, leading dimension rows().
  double* data() { return storage_.data(); }
  const double* data() const { return storage_.data(); }

  // y = A x (cublasDgemv); the LinearOperator interface.
  void apply(const DeviceVector<double>& x, DeviceVector<double>& y) const override;

  DeviceMatrix operator+(const DeviceMatrix& other) const;
  DeviceMatrix operator-(const DeviceMatrix& other) const;
  DeviceMatrix operator*(const DeviceMatrix& other) const;  // cublasDgemm
  DeviceVector<double> operator*(const DeviceVector<double>& x) const;
  DeviceMatrix operator*(double scale) const;
  DeviceMatrix& operator*=(double scale);
  DeviceMatrix& operator+=(const DeviceMatrix& other);
  DeviceMatrix& operator-=(const DeviceMatrix& other);

 private:
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  DeviceVector<double> storage_;
};

inline DeviceMatrix operator*(double scale, const DeviceMatrix& a) { return a * scale; }

}  // namespace linalg_cuda
