// DeviceCsrMatrix against Eigen (construction from Eigen and from raw CSR arrays, apply, exact round
// trips, determinism, validation of raw CSR input) and the Jacobi / block-Jacobi preconditioners
// against the CPU reference cpu::make_preconditioner. Validation that happens before any CUDA call
// (raw CSR checks, block sizes, empty operands) runs without a device; everything else skips.
#include "linalg_cuda/device_csr_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <gtest/gtest.h>

#include "linalg_cuda/cg_options.h"
#include "linalg_cuda/cpu_cg.h"
#include "linalg_cuda/device_matrix.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/linear_operator.h"
#include "linalg_cuda/poisson.h"
#include "linalg_cuda/preconditioner.h"
#include "test_support.h"

namespace linalg_cuda {
namespace {

using HostMatrix = linalg_cuda::CsrMatrix;

constexpr double kTolerance = 1e-12;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- helpers ------------------------------------------------------------------------------------------

Eigen::VectorXd random_vector(Eigen::Index n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = uniform(rng);
  return v;
}

// Random sparse matrix: each row gets 0..max_per_row entries at random columns (duplicates are
// summed by setFromTriplets); every empty_row_period-th row is left empty (0: none forced empty).
HostMatrix random_sparse(int rows, int cols, int max_per_row, unsigned seed, int empty_row_period = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<int> count(0, max_per_row);
  std::uniform_int_distribution<int> column(0, std::max(cols - 1, 0));
  std::vector<Eigen::Triplet<double, int>> triplets;
  for (int i = 0; i < rows && cols > 0; ++i) {
    if (empty_row_period > 0 && i % empty_row_period == 0) continue;
    for (int e = count(rng); e > 0; --e) triplets.emplace_back(i, column(rng), value(rng));
  }
  HostMatrix m(rows, cols);
  m.setFromTriplets(triplets.begin(), triplets.end());
  m.makeCompressed();
  return m;
}

// SPD: B^T B (B random sparse) plus a random positive diagonal, made exactly symmetric.
HostMatrix random_spd(int n, unsigned seed) {
  const Eigen::MatrixXd b = Eigen::MatrixXd(random_sparse(n, n, 4, seed));
  Eigen::MatrixXd a = b.transpose() * b;
  a = (0.5 * (a + a.transpose())).eval();
  std::mt19937 rng(seed + 1);
  std::uniform_real_distribution<double> shift(0.5, 1.5);
  for (int i = 0; i < n; ++i) a(i, i) += shift(rng);
  HostMatrix sparse = a.sparseView();
  sparse.makeCompressed();
  return sparse;
}

// 2-D Poisson matrix with a random positive diagonal shift.
HostMatrix shifted_poisson(int grid, unsigned seed) {
  HostMatrix a = poisson2d(grid);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> shift(0.1, 1.0);
  for (int i = 0; i < a.rows(); ++i) a.coeffRef(i, i) += shift(rng);
  a.makeCompressed();
  return a;
}

struct NamedMatrix {
  std::string name;
  HostMatrix matrix;
};

// Sizes 101 and 49: neither is a multiple of 2, 3 or 5.
std::vector<NamedMatrix> spd_matrices() {
  return {{"B^T B + D (n = 101)", random_spd(101, 17)}, {"shifted Poisson 7x7 (n = 49)", shifted_poisson(7, 19)}};
}

::testing::AssertionResult close(const Eigen::VectorXd& expected, const Eigen::VectorXd& actual, double tolerance) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << "size " << actual.size() << ", expected " << expected.size();
  for (Eigen::Index i = 0; i < actual.size(); ++i)
    if (!std::isfinite(actual[i])) return ::testing::AssertionFailure() << "entry " << i << " is " << actual[i];
  const double scale = expected.norm();
  const double error = (actual - expected).norm() / (scale > 0 ? scale : 1.0);
  if (!(error <= tolerance)) return ::testing::AssertionFailure() << "relative error " << error << " > " << tolerance;
  return ::testing::AssertionSuccess();
}

// Same dimensions, same CSR arrays, bit for bit.
::testing::AssertionResult identical(const HostMatrix& expected, const HostMatrix& actual) {
  if (expected.rows() != actual.rows() || expected.cols() != actual.cols())
    return ::testing::AssertionFailure() << "shape " << actual.rows() << "x" << actual.cols() << ", expected "
                                         << expected.rows() << "x" << expected.cols();
  if (!expected.isCompressed() || !actual.isCompressed()) return ::testing::AssertionFailure() << "not compressed";
  if (expected.nonZeros() != actual.nonZeros())
    return ::testing::AssertionFailure() << actual.nonZeros() << " nonzeros, expected " << expected.nonZeros();
  for (Eigen::Index i = 0; i <= expected.rows(); ++i)
    if (expected.outerIndexPtr()[i] != actual.outerIndexPtr()[i])
      return ::testing::AssertionFailure() << "row_ptr[" << i << "] differs";
  for (Eigen::Index k = 0; k < expected.nonZeros(); ++k) {
    if (expected.innerIndexPtr()[k] != actual.innerIndexPtr()[k])
      return ::testing::AssertionFailure() << "col_idx[" << k << "] differs";
    if (std::memcmp(&expected.valuePtr()[k], &actual.valuePtr()[k], sizeof(double)) != 0)
      return ::testing::AssertionFailure() << "values[" << k << "] differs";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0)
      return ::testing::AssertionFailure() << "entry " << i << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionSuccess();
}

// y = A x on the device (y pre-filled with NaN: apply must overwrite, not accumulate).
Eigen::VectorXd device_apply(const LinearOperator& a, const Eigen::VectorXd& x) {
  const DeviceVector<double> dx(x);
  DeviceVector<double> dy(a.rows(), kNaN);
  a.apply(dx, dy);
  return dy.to_eigen();
}

Eigen::VectorXd device_apply(const Preconditioner& m, const Eigen::VectorXd& r) {
  const DeviceVector<double> dr(r);
  DeviceVector<double> dz(m.size(), kNaN);
  m.apply(dr, dz);
  return dz.to_eigen();
}

Eigen::VectorXd cpu_apply(const HostMatrix& a, PreconditionerType type, int block_size, const Eigen::VectorXd& r) {
  const cpu::Apply m = cpu::make_preconditioner(a, type, block_size);
  Eigen::VectorXd z;
  m(r, z);
  return z;
}

// what() of the InvalidArgument that f throws ("" and a failure when it throws none).
std::string invalid_argument_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidArgument thrown";
  return {};
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) == std::string::npos)
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
  return ::testing::AssertionSuccess();
}

// The diagonal blocks of `inverse` (bs x bs, nb of them) times r, both vectors in the continuous-element
// layout (row i of block k at i * nb + k).
Eigen::VectorXd continuous_block_product(const Eigen::MatrixXd& inverse, int bs, std::size_t nb, const Eigen::VectorXd& r) {
  Eigen::VectorXd out(r.size());
  for (std::size_t k = 0; k < nb; ++k)
    for (int i = 0; i < bs; ++i) {
      double v = 0.0;
      for (int j = 0; j < bs; ++j) v += inverse(k * bs + i, k * bs + j) * r[j * nb + k];
      out[i * nb + k] = v;
    }
  return out;
}

// Diagonal blocks of a in the continuous-element layout of preconditioner.h; padding entries of a
// last partial block hold `padding`.
std::vector<double> continuous_blocks(const Eigen::MatrixXd& a, int bs, double padding) {
  const std::size_t n = static_cast<std::size_t>(a.rows());
  const std::size_t nb = (n + bs - 1) / bs;
  std::vector<double> blocks(nb * bs * bs, padding);
  for (std::size_t k = 0; k < nb; ++k)
    for (int i = 0; i < bs; ++i)
      for (int j = 0; j < bs; ++j) {
        const std::size_t row = k * bs + i, col = k * bs + j;
        if (row < n && col < n) blocks[(i * bs + j) * nb + k] = a(row, col);
      }
  return blocks;
}

struct RawCsr {
  int rows, cols;
  std::vector<int> row_ptr, col_idx;
  std::vector<double> values;
};

RawCsr raw_arrays(const HostMatrix& a) {
  return {static_cast<int>(a.rows()), static_cast<int>(a.cols()),
          std::vector<int>(a.outerIndexPtr(), a.outerIndexPtr() + a.rows() + 1),
          std::vector<int>(a.innerIndexPtr(), a.innerIndexPtr() + a.nonZeros()),
          std::vector<double>(a.valuePtr(), a.valuePtr() + a.nonZeros())};
}

// ---- DeviceCsrMatrix: validation without a device ------------------------------------------------------

// Each case is checked with the pointer and with the std::vector constructor: validation happens on
// the host, before anything is allocated, so no device is needed.
TEST(DeviceCsrMatrixTest, InvalidRawCsrThrowsInvalidArgumentWithoutDevice) {
  struct Case {
    std::string name;
    RawCsr csr;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"row_ptr[0] != 0", {2, 2, {1, 2, 3}, {0, 1, 1}, {1, 2, 3}}, "row_ptr[0] must be 0"},
      {"decreasing row_ptr", {3, 2, {0, 1, 0, 1}, {0}, {1}}, "row_ptr decreases at row 1"},
      // Jumps past nnz before decreasing: must be caught before any column index is read.
      {"row_ptr past nnz", {2, 2, {0, 3, 1}, {0}, {1.0}}, "row_ptr decreases at row 1"},
      {"column index == cols", {2, 2, {0, 1, 2}, {0, 2}, {1, 2}}, "column index 2 of row 1"},
      {"column index > cols", {2, 3, {0, 2, 2}, {1, 7}, {1, 2}}, "column index 7 of row 0"},
      {"negative column index", {2, 2, {0, 1, 2}, {-1, 0}, {1, 2}}, "column index -1 of row 0"},
      {"negative cols", {1, -1, {0, 0}, {}, {}}, "negative dimensions"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const RawCsr& m = c.csr;
    EXPECT_TRUE(contains(invalid_argument_message([&] {
                           DeviceCsrMatrix(m.rows, m.cols, m.row_ptr.data(), m.col_idx.data(), m.values.data());
                         }),
                         c.message_part));
    EXPECT_TRUE(contains(
        invalid_argument_message([&] { DeviceCsrMatrix(m.rows, m.cols, m.row_ptr, m.col_idx, m.values); }),
        c.message_part));
  }

  // Pointer constructor only: no row_ptr at all, negative rows.
  const std::vector<int> col_idx{0};
  const std::vector<double> values{1.0};
  EXPECT_TRUE(contains(invalid_argument_message([&] { DeviceCsrMatrix(1, 1, nullptr, col_idx.data(), values.data()); }),
                       "row_ptr is null"));
  const std::vector<int> row_ptr{0};
  EXPECT_THROW(DeviceCsrMatrix(-1, 1, row_ptr.data(), col_idx.data(), values.data()), InvalidArgument);
}

TEST(DeviceCsrMatrixTest, InconsistentVectorSizesThrowInvalidArgumentWithoutDevice) {
  using V = std::vector<int>;
  using D = std::vector<double>;
  // row_ptr must have rows + 1 entries.
  EXPECT_TRUE(contains(invalid_argument_message([] { DeviceCsrMatrix(2, 2, V{0, 1}, V{0}, D{1}); }),
                       "row_ptr has 2 entries, expected rows+1 = 3"));
  EXPECT_TRUE(contains(invalid_argument_message([] { DeviceCsrMatrix(2, 2, V{0, 1, 2, 2}, V{0, 1}, D{1, 2}); }),
                       "row_ptr has 4 entries"));
  EXPECT_THROW(DeviceCsrMatrix(2, 2, V{}, V{}, D{}), InvalidArgument);
  EXPECT_THROW(DeviceCsrMatrix(-1, 2, V{0}, V{}, D{}), InvalidArgument);
  // col_idx and values must have row_ptr[rows] entries.
  EXPECT_TRUE(contains(invalid_argument_message([] { DeviceCsrMatrix(2, 2, V{0, 1, 2}, V{0}, D{1, 2}); }),
                       "row_ptr[rows] = 2 but col_idx has 1 and values 2 entries"));
  EXPECT_TRUE(contains(invalid_argument_message([] { DeviceCsrMatrix(2, 2, V{0, 1, 2}, V{0, 1}, D{1, 2, 3}); }),
                       "row_ptr[rows] = 2 but col_idx has 2 and values 3 entries"));
  EXPECT_THROW(DeviceCsrMatrix(2, 2, V{0, 1, 2}, V{0, 1, 1}, D{1, 2, 3}), InvalidArgument);
  EXPECT_THROW(DeviceCsrMatrix(1, 2, V{0, -1}, V{}, D{}), InvalidArgument);  // negative row_ptr[rows]
}

TEST(DeviceCsrMatrixTest, DefaultConstructedIsEmptyWithoutDevice) {
  const DeviceCsrMatrix a;
  EXPECT_EQ(a.rows(), 0u);
  EXPECT_EQ(a.cols(), 0u);
  EXPECT_EQ(a.nonzeros(), 0u);
  EXPECT_TRUE(identical(HostMatrix(0, 0), a.to_eigen()));
  DeviceVector<double> x, y;
  a.apply(x, y);  // 0x0 times the empty vector: nothing to do
}

// ---- DeviceCsrMatrix on the device ----------------------------------------------------------------------

TEST(DeviceCsrMatrixTest, FromEigenApplyMatchesEigenAndRoundTripsExactly) {
  REQUIRE_CUDA_DEVICE();
  struct Shape {
    int rows, cols, max_per_row, empty_row_period;
  };
  const Shape shapes[] = {{1, 1, 1, 0},     {50, 50, 6, 0},   {100, 37, 5, 7}, {37, 100, 12, 5},
                          {1000, 1000, 8, 3}, {5000, 300, 20, 11}, {300, 5000, 40, 0}};
  unsigned seed = 1000;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.cols));
    const HostMatrix host = random_sparse(s.rows, s.cols, s.max_per_row, ++seed, s.empty_row_period);
    const DeviceCsrMatrix device(host);
    EXPECT_EQ(device.rows(), static_cast<std::size_t>(s.rows));
    EXPECT_EQ(device.cols(), static_cast<std::size_t>(s.cols));
    EXPECT_EQ(device.nonzeros(), static_cast<std::size_t>(host.nonZeros()));
    EXPECT_TRUE(identical(host, device.to_eigen()));

    const Eigen::VectorXd x = random_vector(s.cols, ++seed);
    const Eigen::VectorXd expected = host * x;
    const Eigen::VectorXd y = device_apply(device, x);
    EXPECT_TRUE(close(expected, y, kTolerance));
    for (int i = 0; i < s.rows; ++i)
      if (host.outerIndexPtr()[i] == host.outerIndexPtr()[i + 1]) {
        ASSERT_EQ(y[i], 0.0) << "empty row " << i;
      }
  }
}

TEST(DeviceCsrMatrixTest, FromUncompressedEigenMatrix) {
  REQUIRE_CUDA_DEVICE();
  const int rows = 60, cols = 45;
  std::mt19937 rng(2001);
  std::uniform_int_distribution<int> column(0, cols - 1);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  HostMatrix host(rows, cols);
  host.reserve(Eigen::VectorXi::Constant(rows, 8));
  for (int i = 0; i < rows; ++i) {
    if (i % 4 == 1) continue;  // empty rows
    std::set<int> used;
    for (int e = 0; e < 5; ++e) used.insert(column(rng));
    for (const int j : used) host.insert(i, j) = value(rng);
  }
  ASSERT_FALSE(host.isCompressed());
  HostMatrix compressed = host;
  compressed.makeCompressed();

  const DeviceCsrMatrix device(host);
  EXPECT_EQ(device.nonzeros(), static_cast<std::size_t>(compressed.nonZeros()));
  EXPECT_TRUE(identical(compressed, device.to_eigen()));
  const Eigen::VectorXd x = random_vector(cols, 2002);
  EXPECT_TRUE(close(Eigen::VectorXd(host * x), device_apply(device, x), kTolerance));
}

TEST(DeviceCsrMatrixTest, FromRawArraysBothConstructors) {
  REQUIRE_CUDA_DEVICE();
  unsigned seed = 3000;
  for (const auto& [rows, cols] : {std::pair<int, int>{1, 1}, {40, 40}, {90, 30}, {30, 90}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    const HostMatrix host = random_sparse(rows, cols, 6, ++seed, 4);
    const RawCsr raw = raw_arrays(host);
    const Eigen::VectorXd x = random_vector(cols, ++seed);
    const Eigen::VectorXd expected = host * x;

    const DeviceCsrMatrix from_pointers(raw.rows, raw.cols, raw.row_ptr.data(), raw.col_idx.data(), raw.values.data());
    const DeviceCsrMatrix from_vectors(raw.rows, raw.cols, raw.row_ptr, raw.col_idx, raw.values);
    for (const DeviceCsrMatrix* device : {&from_pointers, &from_vectors}) {
      EXPECT_EQ(device->rows(), static_cast<std::size_t>(rows));
      EXPECT_EQ(device->cols(), static_cast<std::size_t>(cols));
      EXPECT_EQ(device->nonzeros(), raw.values.size());
      EXPECT_TRUE(identical(host, device->to_eigen()));
      EXPECT_TRUE(close(expected, device_apply(*device, x), kTolerance));
      EXPECT_EQ(device->row_ptr().to_std(), raw.row_ptr);
      EXPECT_EQ(device->col_idx().to_std(), raw.col_idx);
      EXPECT_TRUE(same_bits(raw.values, device->values().to_std()));
    }
  }
}

TEST(DeviceCsrMatrixTest, MatrixWithoutNonzerosAppliesAsZero) {
  REQUIRE_CUDA_DEVICE();
  const std::vector<int> row_ptr{0, 0, 0, 0, 0};
  const DeviceCsrMatrix from_vectors(4, 3, row_ptr, std::vector<int>{}, std::vector<double>{});
  const DeviceCsrMatrix from_pointers(4, 3, row_ptr.data(), nullptr, nullptr);
  const DeviceCsrMatrix from_eigen(HostMatrix(4, 3));
  for (const DeviceCsrMatrix* device : {&from_vectors, &from_pointers, &from_eigen}) {
    EXPECT_EQ(device->nonzeros(), 0u);
    EXPECT_TRUE(identical(HostMatrix(4, 3), device->to_eigen()));
    EXPECT_TRUE(close(Eigen::VectorXd::Zero(4), device_apply(*device, random_vector(3, 3101)), 0.0));
  }
}

TEST(DeviceCsrMatrixTest, EmptyShapes) {
  REQUIRE_CUDA_DEVICE();
  for (const auto& [rows, cols] : {std::pair<int, int>{0, 5}, {5, 0}, {0, 0}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    const DeviceCsrMatrix from_eigen{HostMatrix(rows, cols)};
    const DeviceCsrMatrix from_vectors(rows, cols, std::vector<int>(rows + 1, 0), std::vector<int>{},
                                       std::vector<double>{});
    for (const DeviceCsrMatrix* device : {&from_eigen, &from_vectors}) {
      EXPECT_EQ(device->rows(), static_cast<std::size_t>(rows));
      EXPECT_EQ(device->cols(), static_cast<std::size_t>(cols));
      EXPECT_EQ(device->nonzeros(), 0u);
      EXPECT_TRUE(identical(HostMatrix(rows, cols), device->to_eigen()));
      // A 5x0 matrix maps the empty vector to zeros; a 0x5 one maps anything to the empty vector.
      EXPECT_TRUE(close(Eigen::VectorXd::Zero(rows), device_apply(*device, random_vector(cols, 3201)), 0.0));
    }
  }
}

TEST(DeviceCsrMatrixTest, ApplyIsDeterministic) {
  REQUIRE_CUDA_DEVICE();
  // Many rows of varied length and a few very long rows, where a non-deterministic split would show.
  const int n = 20000;
  std::mt19937 rng(4001);
  std::uniform_int_distribution<int> column(0, n - 1), count(0, 60);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<Eigen::Triplet<double, int>> triplets;
  for (int i = 0; i < n; ++i) {
    const int entries = (i == 5 || i == 777 || i == n - 2) ? 5000 : (i % 13 == 0 ? 0 : count(rng));
    for (int e = 0; e < entries; ++e) triplets.emplace_back(i, column(rng), value(rng));
  }
  HostMatrix host(n, n);
  host.setFromTriplets(triplets.begin(), triplets.end());
  host.makeCompressed();

  const DeviceCsrMatrix device(host);
  const DeviceVector<double> x(random_vector(n, 4003));
  const DeviceVector<double> other_x(random_vector(n, 4004));
  DeviceVector<double> y(n, kNaN);
  device.apply(x, y);
  const std::vector<double> first = y.to_std();
  device.apply(other_x, y);  // something else in between
  y.fill(kNaN);
  device.apply(x, y);
  EXPECT_TRUE(same_bits(first, y.to_std()));
  DeviceVector<double> y2(n, 0.0);
  device.apply(x, y2);
  EXPECT_TRUE(same_bits(first, y2.to_std()));
  EXPECT_TRUE(close(Eigen::VectorXd(host * x.to_eigen()), y2.to_eigen(), kTolerance));
}

TEST(DeviceCsrMatrixTest, ApplyWithWrongSizesThrowsDimensionMismatch) {
  REQUIRE_CUDA_DEVICE();
  const DeviceCsrMatrix a(random_sparse(30, 20, 4, 5001));
  DeviceVector<double> x20(20, 1.0), x30(30, 1.0), x21(21, 1.0), y30(30, 2.0), y20(20, 2.0), y29(29, 2.0), empty;
  EXPECT_THROW(a.apply(x30, y30), DimensionMismatch);
  EXPECT_THROW(a.apply(x21, y30), DimensionMismatch);
  EXPECT_THROW(a.apply(x20, y29), DimensionMismatch);
  EXPECT_THROW(a.apply(x20, y20), DimensionMismatch);
  EXPECT_THROW(a.apply(x30, y20), DimensionMismatch);
  EXPECT_THROW(a.apply(empty, y30), DimensionMismatch);
  EXPECT_THROW(a.apply(x20, empty), DimensionMismatch);
  EXPECT_TRUE(close(Eigen::VectorXd::Constant(30, 2.0), y30.to_eigen(), 0.0));  // refused calls write nothing
}

// ---- Jacobi preconditioner ------------------------------------------------------------------------------

TEST(JacobiPreconditionerTest, EmptyOperandsNeedNoDevice) {
  const JacobiPreconditioner from_vector{DeviceVector<double>()};
  const JacobiPreconditioner from_csr{DeviceCsrMatrix()};
  const JacobiPreconditioner from_dense{DeviceMatrix()};
  for (const JacobiPreconditioner* m : {&from_vector, &from_csr, &from_dense}) {
    EXPECT_EQ(m->size(), 0u);
    DeviceVector<double> r, z;
    m->apply(r, z);
  }
}

TEST(JacobiPreconditionerTest, MatchesCpuReference) {
  REQUIRE_CUDA_DEVICE();
  unsigned seed = 6000;
  for (const NamedMatrix& named : spd_matrices()) {
    SCOPED_TRACE(named.name);
    const HostMatrix& a = named.matrix;
    const Eigen::VectorXd diagonal = a.diagonal();
    const Eigen::VectorXd r = random_vector(a.rows(), ++seed);
    const Eigen::VectorXd expected = cpu_apply(a, PreconditionerType::Jacobi, 1, r);
    ASSERT_TRUE(close(diagonal.cwiseInverse().cwiseProduct(r), expected, kTolerance));

    const DeviceCsrMatrix csr(a);
    const DeviceMatrix dense{Eigen::MatrixXd(a)};
    const DeviceVector<double> device_diagonal(diagonal);
    const JacobiPreconditioner from_csr(csr), from_dense(dense), from_diagonal(device_diagonal);
    for (const JacobiPreconditioner* m : {&from_csr, &from_dense, &from_diagonal}) {
      EXPECT_EQ(m->size(), static_cast<std::size_t>(a.rows()));
      EXPECT_TRUE(close(diagonal.cwiseInverse(), m->inverse_diagonal().to_eigen(), kTolerance));
      EXPECT_TRUE(close(expected, device_apply(*m, r), kTolerance));
    }
  }
}

TEST(JacobiPreconditionerTest, WrongSizesThrowDimensionMismatch) {
  REQUIRE_CUDA_DEVICE();
  const HostMatrix square = shifted_poisson(4, 6101);  // 16 x 16
  const JacobiPreconditioner m{DeviceCsrMatrix(square)};
  DeviceVector<double> r16(16, 1.0), r15(15, 1.0), z16(16, 2.0), z17(17, 2.0);
  EXPECT_THROW(m.apply(r15, z16), DimensionMismatch);
  EXPECT_THROW(m.apply(r16, z17), DimensionMismatch);
  EXPECT_TRUE(close(Eigen::VectorXd::Constant(16, 2.0), z16.to_eigen(), 0.0));

  const DeviceCsrMatrix rectangular(random_sparse(16, 15, 3, 6102));
  EXPECT_THROW(JacobiPreconditioner{rectangular}, DimensionMismatch);
  EXPECT_THROW((JacobiPreconditioner{DeviceMatrix(16, 15, 1.0)}), DimensionMismatch);
}

// A zero, negative or missing diagonal entry: the GPU constructors and the CPU reference all refuse
// it with the same message, naming the first bad row.
TEST(JacobiPreconditionerTest, NonPositiveDiagonalThrowsLikeCpuReference) {
  REQUIRE_CUDA_DEVICE();
  struct Case {
    std::string name;
    HostMatrix matrix;
    int first_bad;
  };
  std::vector<Case> cases;
  {
    HostMatrix a = poisson2d(6);  // 36 x 36, diagonal 4
    a.coeffRef(7, 7) = 0.0;
    a.coeffRef(20, 20) = -1.0;
    cases.push_back({"zero at 7, negative at 20", a, 7});
  }
  {
    HostMatrix a = shifted_poisson(6, 6201);
    a.coeffRef(11, 11) = -3.0;
    cases.push_back({"negative at 11", a, 11});
  }
  {
    HostMatrix a = poisson2d(6);
    a.coeffRef(35, 35) = -0.5;
    cases.push_back({"negative at the last row", a, 35});
  }
  {
    // Row 4 holds no diagonal entry at all (its diagonal is zero).
    const HostMatrix p = poisson2d(6);
    std::vector<Eigen::Triplet<double, int>> triplets;
    for (int i = 0; i < p.rows(); ++i)
      for (HostMatrix::InnerIterator it(p, i); it; ++it)
        if (!(i == 4 && it.col() == 4)) triplets.emplace_back(i, it.col(), it.value());
    HostMatrix a(p.rows(), p.cols());
    a.setFromTriplets(triplets.begin(), triplets.end());
    a.makeCompressed();
    cases.push_back({"missing at 4", a, 4});
  }

  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    c.matrix.makeCompressed();
    const HostMatrix& a = c.matrix;
    const std::string expected = invalid_argument_message([&] { cpu::make_preconditioner(a, PreconditionerType::Jacobi, 1); });
    EXPECT_TRUE(contains(expected, "diagonal entry " + std::to_string(c.first_bad) + " "));

    const DeviceCsrMatrix csr(a);
    const DeviceMatrix dense{Eigen::MatrixXd(a)};
    const DeviceVector<double> diagonal{Eigen::VectorXd(a.diagonal())};
    EXPECT_EQ(expected, invalid_argument_message([&] { JacobiPreconditioner{csr}; }));
    EXPECT_EQ(expected, invalid_argument_message([&] { JacobiPreconditioner{dense}; }));
    EXPECT_EQ(expected, invalid_argument_message([&] { JacobiPreconditioner{diagonal}; }));
  }
}

// ---- block-Jacobi preconditioner ------------------------------------------------------------------------

TEST(BlockJacobiPreconditionerTest, InvalidBlockSizesThrowWithoutDevice) {
  for (const int bs : {0, -1, BlockJacobiPreconditioner::kMaxBlockSize + 1, 1000}) {
    SCOPED_TRACE("block size " + std::to_string(bs));
    EXPECT_TRUE(contains(invalid_argument_message([&] { BlockJacobiPreconditioner(DeviceCsrMatrix(), bs); }),
                         "block size " + std::to_string(bs)));
    EXPECT_THROW(BlockJacobiPreconditioner(DeviceMatrix(), bs), InvalidArgument);
    EXPECT_THROW(BlockJacobiPreconditioner(5, bs, DeviceVector<double>()), InvalidArgument);
    EXPECT_THROW(cpu::make_preconditioner(poisson2d(3), PreconditionerType::BlockJacobi, bs), InvalidArgument);
  }
  // Valid sizes on an empty operand: nothing to invert.
  for (const int bs : {1, BlockJacobiPreconditioner::kMaxBlockSize}) {
    const BlockJacobiPreconditioner m(DeviceCsrMatrix(), bs);
    EXPECT_EQ(m.size(), 0u);
    EXPECT_EQ(m.num_blocks(), 0u);
    EXPECT_EQ(m.block_size(), bs);
    DeviceVector<double> r, z;
    m.apply(r, z);
  }
}

TEST(BlockJacobiPreconditionerTest, WrongNumberOfBlockValuesThrowsWithoutDevice) {
  // n = 5, block size 2: 3 blocks of 4 values = 12 expected.
  EXPECT_THROW(BlockJacobiPreconditioner(5, 2, DeviceVector<double>()), DimensionMismatch);
}

TEST(BlockJacobiPreconditionerTest, MatchesCpuReference) {
  REQUIRE_CUDA_DEVICE();
  unsigned seed = 7000;
  for (const NamedMatrix& named : spd_matrices()) {
    const HostMatrix& a = named.matrix;
    const Eigen::MatrixXd dense_host(a);
    const std::size_t n = static_cast<std::size_t>(a.rows());
    const DeviceCsrMatrix csr(a);
    const DeviceMatrix dense(dense_host);
    for (const int bs : {1, 2, 3, 5}) {
      SCOPED_TRACE(named.name + ", block size " + std::to_string(bs));
      if (bs > 1) {
        ASSERT_NE(n % static_cast<std::size_t>(bs), 0u) << "n must not be a multiple of the block size";
      }
      const Eigen::VectorXd r = random_vector(a.rows(), ++seed);
      const Eigen::VectorXd expected = cpu_apply(a, PreconditionerType::BlockJacobi, bs, r);

      const DeviceVector<double> blocks(continuous_blocks(dense_host, bs, kNaN));  // NaN padding is ignored
      const BlockJacobiPreconditioner from_csr(csr, bs), from_dense(dense, bs), from_blocks(n, bs, blocks);
      for (const BlockJacobiPreconditioner* m : {&from_csr, &from_dense, &from_blocks}) {
        EXPECT_EQ(m->size(), n);
        EXPECT_EQ(m->block_size(), bs);
        EXPECT_EQ(m->num_blocks(), (n + bs - 1) / bs);
        EXPECT_TRUE(close(expected, device_apply(*m, r), kTolerance));
      }
      // Same blocks, same kernel: the inverses agree bit for bit.
      EXPECT_TRUE(same_bits(from_csr.inverse_blocks().to_std(), from_dense.inverse_blocks().to_std()));
      EXPECT_TRUE(same_bits(from_csr.inverse_blocks().to_std(), from_blocks.inverse_blocks().to_std()));
      EXPECT_TRUE(same_bits(blocks.to_std(), continuous_blocks(dense_host, bs, kNaN)));  // input untouched
    }
  }
}

// The constructor from continuous-element blocks, checked entry by entry: inverse_blocks() holds each
// block's inverse in the same layout.
TEST(BlockJacobiPreconditionerTest, ContinuousElementLayout) {
  REQUIRE_CUDA_DEVICE();
  const HostMatrix a = random_spd(23, 7101);  // 23 = 4 * 5 + 3: the last block is partial
  const Eigen::MatrixXd dense(a);
  const int bs = 5;
  const std::size_t n = 23, nb = 5;
  const BlockJacobiPreconditioner m(n, bs, DeviceVector<double>(continuous_blocks(dense, bs, kNaN)));
  ASSERT_EQ(m.num_blocks(), nb);
  const std::vector<double> inverse = m.inverse_blocks().to_std();
  ASSERT_EQ(inverse.size(), nb * bs * bs);
  for (std::size_t k = 0; k < nb; ++k) {
    SCOPED_TRACE("block " + std::to_string(k));
    const Eigen::Index first = static_cast<Eigen::Index>(k * bs);
    const Eigen::Index size = std::min<Eigen::Index>(bs, static_cast<Eigen::Index>(n) - first);
    const Eigen::MatrixXd expected = dense.block(first, first, size, size).inverse();
    Eigen::MatrixXd actual(size, size);
    for (Eigen::Index i = 0; i < size; ++i)
      for (Eigen::Index j = 0; j < size; ++j) actual(i, j) = inverse[(i * bs + j) * nb + k];
    EXPECT_LE((actual - expected).norm() / expected.norm(), kTolerance);
  }

  // apply() multiplies each block of r by its inverse.
  const Eigen::VectorXd r = random_vector(23, 7102);
  Eigen::VectorXd expected(23);
  for (std::size_t k = 0; k < nb; ++k) {
    const Eigen::Index first = static_cast<Eigen::Index>(k * bs);
    const Eigen::Index size = std::min<Eigen::Index>(bs, 23 - first);
    expected.segment(first, size) = dense.block(first, first, size, size).llt().solve(r.segment(first, size));
  }
  EXPECT_TRUE(close(expected, device_apply(m, r), kTolerance));
}

// Blocks inverted by the caller, for vectors in the continuous-element layout (row i of block k at
// i * nb + k): apply() multiplies each block's rows by the given inverse, nothing inverted again.
TEST(BlockJacobiPreconditionerTest, FromInverseBlocksInTheContinuousElementLayout) {
  REQUIRE_CUDA_DEVICE();
  const int bs = 3;
  const std::size_t nb = 4, n = nb * bs;
  const Eigen::MatrixXd inverse_dense = Eigen::MatrixXd(random_spd(static_cast<int>(n), 7301));
  const std::vector<double> blocks = continuous_blocks(inverse_dense, bs, kNaN);
  const auto m = BlockJacobiPreconditioner::from_inverse_blocks(nb, bs, DeviceVector<double>(blocks),
                                                                BlockVectorLayout::kContinuousElement);
  EXPECT_EQ(m.size(), n);
  EXPECT_EQ(m.num_blocks(), nb);
  EXPECT_EQ(m.layout(), BlockVectorLayout::kContinuousElement);
  EXPECT_EQ(m.inverse_blocks().to_std(), blocks);
  const Eigen::VectorXd r = random_vector(static_cast<int>(n), 7302);
  EXPECT_TRUE(close(continuous_block_product(inverse_dense, bs, nb, r), device_apply(m, r), kTolerance));
}

// New inverse blocks copied into the same storage: apply() uses them, nothing is reallocated, and a
// wrong number of values is refused with the old blocks kept.
TEST(BlockJacobiPreconditionerTest, UpdateInverseBlocksRefillsInPlace) {
  REQUIRE_CUDA_DEVICE();
  const int bs = 3;
  const std::size_t nb = 4, n = nb * bs;
  auto m = BlockJacobiPreconditioner::from_inverse_blocks(
      nb, bs, DeviceVector<double>(continuous_blocks(Eigen::MatrixXd(random_spd(static_cast<int>(n), 7311)), bs, kNaN)),
      BlockVectorLayout::kContinuousElement);
  const double* storage = m.inverse_blocks().data();
  const Eigen::MatrixXd inverse_dense = Eigen::MatrixXd(random_spd(static_cast<int>(n), 7312));
  const std::vector<double> blocks = continuous_blocks(inverse_dense, bs, kNaN);
  m.update_inverse_blocks(DeviceVector<double>(blocks));
  EXPECT_EQ(m.inverse_blocks().data(), storage);
  EXPECT_EQ(m.inverse_blocks().to_std(), blocks);
  const Eigen::VectorXd r = random_vector(static_cast<int>(n), 7313);
  EXPECT_TRUE(close(continuous_block_product(inverse_dense, bs, nb, r), device_apply(m, r), kTolerance));
  EXPECT_THROW(m.update_inverse_blocks(DeviceVector<double>(blocks.size() - 1, 1.0)), DimensionMismatch);
  EXPECT_EQ(m.inverse_blocks().to_std(), blocks);
}

TEST(BlockJacobiPreconditionerTest, FromInverseBlocksChecksItsShapeWithoutDevice) {
  EXPECT_THROW(BlockJacobiPreconditioner::from_inverse_blocks(2, 0, DeviceVector<double>(), BlockVectorLayout::kBlockByBlock),
               InvalidArgument);
  EXPECT_THROW(BlockJacobiPreconditioner::from_inverse_blocks(2, 3, DeviceVector<double>(), BlockVectorLayout::kContinuousElement),
               DimensionMismatch);
}

TEST(BlockJacobiPreconditionerTest, WrongSizesThrowDimensionMismatch) {
  REQUIRE_CUDA_DEVICE();
  const HostMatrix square = shifted_poisson(4, 7201);  // 16 x 16
  const BlockJacobiPreconditioner m(DeviceCsrMatrix(square), 3);
  DeviceVector<double> r16(16, 1.0), r15(15, 1.0), z16(16, 2.0), z17(17, 2.0);
  EXPECT_THROW(m.apply(r15, z16), DimensionMismatch);
  EXPECT_THROW(m.apply(r16, z17), DimensionMismatch);
  EXPECT_TRUE(close(Eigen::VectorXd::Constant(16, 2.0), z16.to_eigen(), 0.0));

  EXPECT_THROW(BlockJacobiPreconditioner(DeviceCsrMatrix(random_sparse(16, 15, 3, 7202)), 3), DimensionMismatch);
  EXPECT_THROW(BlockJacobiPreconditioner(DeviceMatrix(16, 15, 1.0), 3), DimensionMismatch);
  // n = 16, block size 3: 6 blocks of 9 values = 54 expected.
  EXPECT_THROW(BlockJacobiPreconditioner(16, 3, DeviceVector<double>(53, 1.0)), DimensionMismatch);
  EXPECT_THROW(BlockJacobiPreconditioner(16, 3, DeviceVector<double>(55, 1.0)), DimensionMismatch);
}

// Diagonal blocks that are indefinite although the diagonal itself is positive: block-Jacobi refuses
// them (GPU constructors and CPU reference alike, same message, first bad block) while Jacobi accepts.
TEST(BlockJacobiPreconditionerTest, IndefiniteBlockThrowsLikeCpuReference) {
  REQUIRE_CUDA_DEVICE();
  HostMatrix a = poisson2d(7);  // 49 x 49, diagonal 4; (12, 13) and (30, 31) are neighbours
  for (const auto& [i, j] : {std::pair<int, int>{12, 13}, {30, 31}}) {
    a.coeffRef(i, j) = 5.0;  // [[4, 5], [5, 4]] is indefinite
    a.coeffRef(j, i) = 5.0;
  }
  a.makeCompressed();
  const Eigen::MatrixXd dense_host(a);
  const DeviceCsrMatrix csr(a);
  const DeviceMatrix dense(dense_host);
  EXPECT_NO_THROW(JacobiPreconditioner{csr});
  EXPECT_NO_THROW(cpu::make_preconditioner(a, PreconditionerType::Jacobi, 1));
  EXPECT_NO_THROW(BlockJacobiPreconditioner(csr, 1));  // 1x1 blocks only see the diagonal
  EXPECT_NO_THROW(cpu::make_preconditioner(a, PreconditionerType::BlockJacobi, 1));

  for (const int bs : {2, 3, 5}) {
    SCOPED_TRACE("block size " + std::to_string(bs));
    const int first_bad = 12 / bs;  // rows 12 and 13 share that block for these sizes
    ASSERT_EQ(13 / bs, first_bad);
    const std::string expected =
        invalid_argument_message([&] { cpu::make_preconditioner(a, PreconditionerType::BlockJacobi, bs); });
    EXPECT_TRUE(contains(expected, "diagonal block " + std::to_string(first_bad) + " "));

    const DeviceVector<double> blocks(continuous_blocks(dense_host, bs, 0.0));
    EXPECT_EQ(expected, invalid_argument_message([&] { BlockJacobiPreconditioner(csr, bs); }));
    EXPECT_EQ(expected, invalid_argument_message([&] { BlockJacobiPreconditioner(dense, bs); }));
    EXPECT_EQ(expected, invalid_argument_message([&] { BlockJacobiPreconditioner(49, bs, blocks); }));
  }
}

TEST(BlockJacobiPreconditionerTest, NonPositiveDiagonalThrowsLikeCpuReference) {
  REQUIRE_CUDA_DEVICE();
  HostMatrix a = poisson2d(6);  // 36 x 36
  a.coeffRef(7, 7) = 0.0;
  a.coeffRef(33, 33) = -2.0;
  a.makeCompressed();
  const DeviceCsrMatrix csr(a);
  const DeviceMatrix dense{Eigen::MatrixXd(a)};
  for (const int bs : {1, 2, 3, 5}) {
    SCOPED_TRACE("block size " + std::to_string(bs));
    const std::string expected =
        invalid_argument_message([&] { cpu::make_preconditioner(a, PreconditionerType::BlockJacobi, bs); });
    EXPECT_TRUE(contains(expected, "diagonal block " + std::to_string(7 / bs) + " "));
    EXPECT_EQ(expected, invalid_argument_message([&] { BlockJacobiPreconditioner(csr, bs); }));
    EXPECT_EQ(expected, invalid_argument_message([&] { BlockJacobiPreconditioner(dense, bs); }));
  }
}

}  // namespace
TEST(DeviceCsrMatrixTest, MovedFromMatrixIsEmpty) {
  REQUIRE_CUDA_DEVICE();
  DeviceCsrMatrix a(poisson2d(3));
  DeviceCsrMatrix b(std::move(a));
  EXPECT_EQ(b.rows(), 9u);
  EXPECT_EQ(a.rows(), 0u);  // NOLINT(bugprone-use-after-move): the documented moved-from state
  EXPECT_EQ(a.cols(), 0u);
  DeviceCsrMatrix c;
  c = std::move(b);
  EXPECT_EQ(c.rows(), 9u);
  EXPECT_EQ(b.rows(), 0u);  // NOLINT(bugprone-use-after-move)
}

}  // namespace linalg_cuda
