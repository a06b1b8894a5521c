#include "linalg_cuda/device_csr_matrix.h"

#include <string>
#include <utility>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/errors.h"

namespace linalg_cuda {

// The cuSPARSE descriptors and the SpMV work buffer, made once per matrix. The dense-vector
// descriptors are re-pointed at each call's x and y (a host-side field update, no allocation).
struct DeviceCsrMatrix::CusparseState {
  cusparseSpMatDescr_t matrix = nullptr;
  cusparseDnVecDescr_t x = nullptr;
  cusparseDnVecDescr_t y = nullptr;
  void* buffer = nullptr;

  ~CusparseState() {
    detail::device_free(buffer);
    if (y) cusparseDestroyDnVec(y);
    if (x) cusparseDestroyDnVec(x);
    if (matrix) cusparseDestroySpMat(matrix);
  }
};

namespace {

// CSR_ALG2 gives bit-identical results run to run (ALG1 does not promise it).
constexpr cusparseSpMVAlg_t kSpmvAlgorithm = CUSPARSE_SPMV_CSR_ALG2;

void validate_csr(int rows, int cols, const int* row_ptr, const int* col_idx) {
  if (rows < 0 || cols < 0)
    throw InvalidArgument("DeviceCsrMatrix: negative dimensions " + std::to_string(rows) + "x" + std::to_string(cols));
  if (row_ptr == nullptr) throw InvalidArgument("DeviceCsrMatrix: row_ptr is null");
  if (row_ptr[0] != 0) throw InvalidArgument("DeviceCsrMatrix: row_ptr[0] must be 0, got " + std::to_string(row_ptr[0]));
  // Row pointers first: once they never decrease, every column index read below is within
  // [0, row_ptr[rows]), the extent the caller vouched for.
  for (int i = 0; i < rows; ++i)
    if (row_ptr[i + 1] < row_ptr[i])
      throw InvalidArgument("DeviceCsrMatrix: row_ptr decreases at row " + std::to_string(i));
  for (int i = 0; i < rows; ++i)
    for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      if (col_idx[k] < 0 || col_idx[k] >= cols)
        throw InvalidArgument("DeviceCsrMatrix: column index " + std::to_string(col_idx[k]) + " of row " +
                              std::to_string(i) + " is outside [0, " + std::to_string(cols) + ")");
}

}  // namespace

DeviceCsrMatrix::DeviceCsrMatrix() = default;
DeviceCsrMatrix::~DeviceCsrMatrix() = default;
DeviceCsrMatrix::DeviceCsrMatrix(DeviceCsrMatrix&& other) noexcept
    : rows_(other.rows_),
      cols_(other.cols_),
      row_ptr_(std::move(other.row_ptr_)),
      col_idx_(std::move(other.col_idx_)),
      values_(std::move(other.values_)),
      cusparse_(std::move(other.cusparse_)) {
  other.rows_ = other.cols_ = 0;
}

DeviceCsrMatrix& DeviceCsrMatrix::operator=(DeviceCsrMatrix&& other) noexcept {
  if (this != &other) {
    rows_ = other.rows_;
    cols_ = other.cols_;
    row_ptr_ = std::move(other.row_ptr_);
    col_idx_ = std::move(other.col_idx_);
    values_ = std::move(other.values_);
    cusparse_ = std::move(other.cusparse_);
    other.rows_ = other.cols_ = 0;
  }
  return *this;
}

DeviceCsrMatrix::DeviceCsrMatrix(const CsrMatrix& host) : rows_(static_cast<int>(host.rows())), cols_(static_cast<int>(host.cols())) {
  if (host.isCompressed()) {
    upload(host.outerIndexPtr(), host.innerIndexPtr(), host.valuePtr());
  } else {
    CsrMatrix compressed = host;
    compressed.makeCompressed();
    upload(compressed.outerIndexPtr(), compressed.innerIndexPtr(), compressed.valuePtr());
  }
}

DeviceCsrMatrix::DeviceCsrMatrix(int rows, int cols, const int* row_ptr, const int* col_idx, const double* values)
    : rows_(rows), cols_(cols) {
  validate_csr(rows, cols, row_ptr, col_idx);
  upload(row_ptr, col_idx, values);
}

DeviceCsrMatrix::DeviceCsrMatrix(int rows, int cols, const std::vector<int>& row_ptr, const std::vector<int>& col_idx,
                                 const std::vector<double>& values)
    : rows_(rows), cols_(cols) {
  if (rows < 0 || row_ptr.size() != static_cast<std::size_t>(rows) + 1)
    throw InvalidArgument("DeviceCsrMatrix: row_ptr has " + std::to_string(row_ptr.size()) + " entries, expected rows+1 = " +
                          std::to_string(static_cast<long long>(rows) + 1));
  const std::size_t nnz = static_cast<std::size_t>(row_ptr.back());
  if (col_idx.size() != nnz || values.size() != nnz)
    throw InvalidArgument("DeviceCsrMatrix: row_ptr[rows] = " + std::to_string(nnz) + " but col_idx has " +
                          std::to_string(col_idx.size()) + " and values " + std::to_string(values.size()) + " entries");
  validate_csr(rows, cols, row_ptr.data(), col_idx.data());
  upload(row_ptr.data(), col_idx.data(), values.data());
}

void DeviceCsrMatrix::upload(const int* row_ptr, const int* col_idx, const double* values) {
  const std::size_t nnz = static_cast<std::size_t>(row_ptr[rows_]);
  row_ptr_ = DeviceVector<int>(row_ptr, static_cast<std::size_t>(rows_) + 1);
  col_idx_ = DeviceVector<int>(col_idx, nnz);
  values_ = DeviceVector<double>(values, nnz);

  auto state = std::make_unique<CusparseState>();
  // cuSPARSE rejects null pointers for empty arrays; point them at the row_ptr array instead.
  void* cols_ptr = nnz ? static_cast<void*>(col_idx_.data()) : static_cast<void*>(row_ptr_.data());
  void* vals_ptr = nnz ? static_cast<void*>(values_.data()) : static_cast<void*>(row_ptr_.data());
  LINALG_CUDA_CHECK(cusparseCreateCsr(&state->matrix, rows_, cols_, static_cast<int64_t>(nnz), row_ptr_.data(),
                                      cols_ptr, vals_ptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  // The buffer-size query needs vectors of the right sizes; their contents are never read.
  DeviceVector<double> probe_x(cols_ > 0 ? cols_ : 1), probe_y(rows_ > 0 ? rows_ : 1);
  LINALG_CUDA_CHECK(cusparseCreateDnVec(&state->x, cols_, probe_x.data(), CUDA_R_64F));
  LINALG_CUDA_CHECK(cusparseCreateDnVec(&state->y, rows_, probe_y.data(), CUDA_R_64F));
  const double one = 1.0, zero = 0.0;
  std::size_t buffer_bytes = 0;
  LINALG_CUDA_CHECK(cusparseSpMV_bufferSize(thread_context().cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                            state->matrix, state->x, &zero, state->y, CUDA_R_64F, kSpmvAlgorithm,
                                            &buffer_bytes));
  state->buffer = detail::device_malloc(buffer_bytes, "cuSPARSE SpMV buffer");
  cusparse_ = std::move(state);
}

void DeviceCsrMatrix::apply(const DeviceVector<double>& x, DeviceVector<double>& y) const {
  if (x.size() != cols() || y.size() != rows())
    throw DimensionMismatch("DeviceCsrMatrix::apply: " + std::to_string(rows_) + "x" + std::to_string(cols_) +
                            " matrix needs x of size " + std::to_string(cols_) + " and y of size " +
                            std::to_string(rows_) + ", got " + std::to_string(x.size()) + " and " +
                            std::to_string(y.size()));
  if (rows_ == 0) return;
  if (cols_ == 0 || nonzeros() == 0) {
    y.fill(0.0);
    return;
  }
  LINALG_CUDA_CHECK(cusparseDnVecSetValues(cusparse_->x, const_cast<double*>(x.data())));
  LINALG_CUDA_CHECK(cusparseDnVecSetValues(cusparse_->y, y.data()));
  const double one = 1.0, zero = 0.0;
  LINALG_CUDA_CHECK(cusparseSpMV(thread_context().cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cusparse_->matrix,
                                 cusparse_->x, &zero, cusparse_->y, CUDA_R_64F, kSpmvAlgorithm, cusparse_->buffer));
}

CsrMatrix DeviceCsrMatrix::to_eigen() const {
  if (row_ptr_.empty()) return CsrMatrix(rows_, cols_);
  const std::vector<int> row_ptr = row_ptr_.to_std();
  const std::vector<int> col_idx = col_idx_.to_std();
  const std::vector<double> values = values_.to_std();
  return Eigen::Map<const CsrMatrix>(rows_, cols_, static_cast<Eigen::Index>(values.size()), row_ptr.data(),
                                      col_idx.data(), values.data());
}

}  // namespace linalg_cuda
