#include "linalg_cuda/device_matrix.h"

#include <string>
#include <utility>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/errors.h"

namespace linalg_cuda {
namespace {

std::string shape(std::size_t rows, std::size_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

void require_same_shape(const DeviceMatrix& a, const DeviceMatrix& b, const char* op) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw DimensionMismatch(std::string("DeviceMatrix ") + op + ": shapes " + shape(a.rows(), a.cols()) + " and " +
                            shape(b.rows(), b.cols()) + " differ");
}

// cuBLAS wants a leading dimension >= 1 even for empty matrices.
int64_t leading_dimension(const DeviceMatrix& a) { return a.rows() > 0 ? static_cast<int64_t>(a.rows()) : 1; }

// out = alpha * a + beta * b (cublasDgeam), shapes already checked.
void geam(double alpha, const DeviceMatrix& a, double beta, const DeviceMatrix& b, DeviceMatrix& out) {
  if (a.rows() == 0 || a.cols() == 0) return;
  const int64_t ld = leading_dimension(a);
  LINALG_CUDA_CHECK(cublasDgeam_64(thread_context().cublas(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int64_t>(a.rows()),
                                   static_cast<int64_t>(a.cols()), &alpha, a.data(), ld, &beta, b.data(), ld,
                                   out.data(), ld));
}

}  // namespace

DeviceMatrix::DeviceMatrix(std::size_t rows, std::size_t cols) : rows_(rows), cols_(cols), storage_(rows * cols) {}

DeviceMatrix::DeviceMatrix(std::size_t rows, std::size_t cols, double value)
    : rows_(rows), cols_(cols), storage_(rows * cols, value) {}

DeviceMatrix::DeviceMatrix(const Eigen::MatrixXd& host)
    : rows_(static_cast<std::size_t>(host.rows())),
      cols_(static_cast<std::size_t>(host.cols())),
      storage_(host.data(), static_cast<std::size_t>(host.size())) {}

DeviceMatrix::DeviceMatrix(DeviceMatrix&& other) noexcept
    : rows_(other.rows_), cols_(other.cols_), storage_(std::move(other.storage_)) {
  other.rows_ = other.cols_ = 0;
}

DeviceMatrix& DeviceMatrix::operator=(DeviceMatrix&& other) noexcept {
  if (this != &other) {
    rows_ = other.rows_;
    cols_ = other.cols_;
    storage_ = std::move(other.storage_);
    other.rows_ = other.cols_ = 0;
  }
  return *this;
}

DeviceMatrix DeviceMatrix::copy() const {
  DeviceMatrix out(rows_, cols_);
  out.storage_.assign(storage_);
  return out;
}

Eigen::MatrixXd DeviceMatrix::to_eigen() const {
  Eigen::MatrixXd host(static_cast<Eigen::Index>(rows_), static_cast<Eigen::Index>(cols_));
  storage_.download(host.data(), storage_.size());
  return host;
}

void DeviceMatrix::apply(const DeviceVector<double>& x, DeviceVector<double>& y) const {
  if (x.size() != cols_ || y.size() != rows_)
    throw DimensionMismatch("DeviceMatrix::apply: " + shape(rows_, cols_) + " matrix needs x of size " +
                            std::to_string(cols_) + " and y of size " + std::to_string(rows_) + ", got " +
                            std::to_string(x.size()) + " and " + std::to_string(y.size()));
  if (rows_ == 0) return;
  if (cols_ == 0) {
    y.fill(0.0);
    return;
  }
  const double one = 1.0, zero = 0.0;
  LINALG_CUDA_CHECK(cublasDgemv_64(thread_context().cublas(), CUBLAS_OP_N, static_cast<int64_t>(rows_),
                                   static_cast<int64_t>(cols_), &one, data(), leading_dimension(*this), x.data(), 1,
                                   &zero, y.data(), 1));
}

DeviceMatrix DeviceMatrix::operator+(const DeviceMatrix& other) const {
  require_same_shape(*this, other, "+");
  DeviceMatrix out(rows_, cols_);
  geam(1.0, *this, 1.0, other, out);
  return out;
}

DeviceMatrix DeviceMatrix::operator-(const DeviceMatrix& other) const {
  require_same_shape(*this, other, "-");
  DeviceMatrix out(rows_, cols_);
  geam(1.0, *this, -1.0, other, out);
  return out;
}

DeviceMatrix& DeviceMatrix::operator+=(const DeviceMatrix& other) {
  require_same_shape(*this, other, "+=");
  geam(1.0, *this, 1.0, other, *this);  // in-place geam is allowed when C == A
  return *this;
}

DeviceMatrix& DeviceMatrix::operator-=(const DeviceMatrix& other) {
  require_same_shape(*this, other, "-=");
  geam(1.0, *this, -1.0, other, *this);
  return *this;
}

DeviceMatrix DeviceMatrix::operator*(const DeviceMatrix& other) const {
  if (cols_ != other.rows_)
    throw DimensionMismatch("DeviceMatrix *: inner dimensions differ (" + shape(rows_, cols_) + " times " +
                            shape(other.rows_, other.cols_) + ")");
  DeviceMatrix out(rows_, other.cols_);
  if (out.storage_.empty()) return out;
  if (cols_ == 0) {
    out.storage_.fill(0.0);
    return out;
  }
  const double one = 1.0, zero = 0.0;
  LINALG_CUDA_CHECK(cublasDgemm_64(thread_context().cublas(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int64_t>(rows_),
                                   static_cast<int64_t>(other.cols_), static_cast<int64_t>(cols_), &one, data(),
                                   leading_dimension(*this), other.data(), leading_dimension(other), &zero,
                                   out.data(), leading_dimension(out)));
  return out;
}

DeviceVector<double> DeviceMatrix::operator*(const DeviceVector<double>& x) const {
  if (x.size() != cols_)
    throw DimensionMismatch("DeviceMatrix * vector: " + shape(rows_, cols_) + " matrix times vector of size " +
                            std::to_string(x.size()));
  DeviceVector<double> y(rows_);
  apply(x, y);
  return y;
}

DeviceMatrix DeviceMatrix::operator*(double scale) const {
  DeviceMatrix out = copy();
  out *= scale;
  return out;
}

DeviceMatrix& DeviceMatrix::operator*=(double scale) {
  if (storage_.empty()) return *this;
  LINALG_CUDA_CHECK(cublasDscal_64(thread_context().cublas(), static_cast<int64_t>(storage_.size()), &scale,
                                   storage_.data(), 1));
  return *this;
}

}  // namespace linalg_cuda
