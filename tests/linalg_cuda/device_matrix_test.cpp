// DeviceMatrix against Eigen on random matrices: construction, exact host round trips, element-wise
// arithmetic, scaling, matrix products, matrix-vector products, empty shapes, shape checks, deep
// copies and moves. GPU tests skip without a device; shape checks on empty matrices (which never
// allocate) run everywhere.
#include "linalg_cuda/device_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include <Eigen/Core>
#include <gtest/gtest.h>

#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/linear_operator.h"
#include "test_support.h"

namespace linalg_cuda {
namespace {

// Element-wise operations (one rounding per entry) must match Eigen to the last bits; products to 1e-12.
constexpr double kElementwiseTolerance = 1e-14;
constexpr double kProductTolerance = 1e-12;

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = uniform(rng);
  return m;
}

Eigen::VectorXd random_vector(Eigen::Index n, unsigned seed) { return random_matrix(n, 1, seed); }

std::string shape(Eigen::Index rows, Eigen::Index cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

// ||actual - expected||_F / ||expected||_F (absolute when expected is zero).
::testing::AssertionResult close(const Eigen::MatrixXd& expected, const Eigen::MatrixXd& actual, double tolerance) {
  if (expected.rows() != actual.rows() || expected.cols() != actual.cols())
    return ::testing::AssertionFailure() << "shape " << shape(actual.rows(), actual.cols()) << ", expected "
                                         << shape(expected.rows(), expected.cols());
  const double scale = expected.norm();
  const double error = (actual - expected).norm() / (scale > 0 ? scale : 1.0);
  if (!(error <= tolerance))
    return ::testing::AssertionFailure() << "relative Frobenius error " << error << " > " << tolerance;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult identical(const Eigen::MatrixXd& expected, const Eigen::MatrixXd& actual) {
  if (expected.rows() != actual.rows() || expected.cols() != actual.cols())
    return ::testing::AssertionFailure() << "shape " << shape(actual.rows(), actual.cols()) << ", expected "
                                         << shape(expected.rows(), expected.cols());
  for (Eigen::Index j = 0; j < expected.cols(); ++j)
    for (Eigen::Index i = 0; i < expected.rows(); ++i)
      if (expected(i, j) != actual(i, j))
        return ::testing::AssertionFailure() << "entry (" << i << ", " << j << "): expected " << expected(i, j)
                                             << ", got " << actual(i, j);
  return ::testing::AssertionSuccess();
}

void expect_shape(const DeviceMatrix& m, std::size_t rows, std::size_t cols) {
  EXPECT_EQ(m.rows(), rows);
  EXPECT_EQ(m.cols(), cols);
}

struct ProductShape {
  Eigen::Index m, k, n;  // (m x k) * (k x n)
};

const ProductShape kProductShapes[] = {
    {1, 1, 1}, {7, 3, 5}, {33, 65, 17}, {128, 257, 64}, {64, 64, 64}, {100, 100, 100}, {1, 300, 1}, {300, 1, 200},
};

// ---- no device needed: empty matrices own no memory, so their shape checks make no CUDA call ----------

TEST(DeviceMatrixTest, EmptyShapeMismatchesThrowWithoutDevice) {
  const DeviceMatrix zero_by_three(0, 3);
  const DeviceMatrix three_by_zero(3, 0);
  DeviceMatrix target(0, 3);
  expect_shape(zero_by_three, 0, 3);
  expect_shape(three_by_zero, 3, 0);
  expect_shape(DeviceMatrix(), 0, 0);

  EXPECT_THROW(zero_by_three + three_by_zero, DimensionMismatch);
  EXPECT_THROW(zero_by_three - three_by_zero, DimensionMismatch);
  EXPECT_THROW(target += three_by_zero, DimensionMismatch);
  EXPECT_THROW(target -= three_by_zero, DimensionMismatch);
  EXPECT_THROW(zero_by_three * zero_by_three, DimensionMismatch);  // inner 3 vs 0

  DeviceVector<double> empty_x, empty_y;
  EXPECT_THROW(zero_by_three * empty_x, DimensionMismatch);       // needs x of size 3
  EXPECT_THROW(zero_by_three.apply(empty_x, empty_y), DimensionMismatch);
  EXPECT_THROW(three_by_zero.apply(empty_x, empty_y), DimensionMismatch);  // needs y of size 3
  expect_shape(target, 0, 3);
}

// ---- construction and round trips ---------------------------------------------------------------------

TEST(DeviceMatrixTest, ConstructWithValue) {
  REQUIRE_CUDA_DEVICE();
  for (const double value : {0.0, 2.5, -1e-3}) {
    const DeviceMatrix m(7, 5, value);
    expect_shape(m, 7, 5);
    EXPECT_TRUE(identical(Eigen::MatrixXd::Constant(7, 5, value), m.to_eigen())) << "value " << value;
  }
  const DeviceMatrix column(1000, 1, 3.0);
  EXPECT_TRUE(identical(Eigen::MatrixXd::Constant(1000, 1, 3.0), column.to_eigen()));
}

TEST(DeviceMatrixTest, EigenRoundTripIsExact) {
  REQUIRE_CUDA_DEVICE();
  const std::pair<Eigen::Index, Eigen::Index> shapes[] = {{1, 1}, {7, 3}, {3, 7}, {33, 65}, {128, 257}, {1000, 1}, {1, 1000}};
  unsigned seed = 100;
  for (const auto& [rows, cols] : shapes) {
    SCOPED_TRACE(shape(rows, cols));
    const Eigen::MatrixXd host = random_matrix(rows, cols, ++seed);
    const DeviceMatrix device(host);
    expect_shape(device, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
    EXPECT_TRUE(identical(host, device.to_eigen()));
  }
}

// ---- element-wise arithmetic and scaling -----------------------------------------------------------------

TEST(DeviceMatrixTest, AddAndSubtractMatchEigen) {
  REQUIRE_CUDA_DEVICE();
  const std::pair<Eigen::Index, Eigen::Index> shapes[] = {{1, 1}, {7, 3}, {33, 65}, {128, 257}};
  unsigned seed = 200;
  for (const auto& [rows, cols] : shapes) {
    SCOPED_TRACE(shape(rows, cols));
    const Eigen::MatrixXd ea = random_matrix(rows, cols, ++seed);
    const Eigen::MatrixXd eb = random_matrix(rows, cols, ++seed);
    const DeviceMatrix a(ea), b(eb);

    const DeviceMatrix sum = a + b;
    const DeviceMatrix difference = a - b;
    EXPECT_TRUE(close(ea + eb, sum.to_eigen(), kElementwiseTolerance));
    EXPECT_TRUE(close(ea - eb, difference.to_eigen(), kElementwiseTolerance));
    EXPECT_TRUE(close(Eigen::MatrixXd(2.0 * ea), (a + a).to_eigen(), kElementwiseTolerance));
    EXPECT_TRUE(close(Eigen::MatrixXd::Zero(rows, cols), (a - a).to_eigen(), kElementwiseTolerance));

    // The operands are untouched.
    EXPECT_TRUE(identical(ea, a.to_eigen()));
    EXPECT_TRUE(identical(eb, b.to_eigen()));
  }
}

TEST(DeviceMatrixTest, CompoundAddAndSubtractMatchEigen) {
  REQUIRE_CUDA_DEVICE();
  const Eigen::MatrixXd ea = random_matrix(33, 65, 301);
  const Eigen::MatrixXd eb = random_matrix(33, 65, 302);
  DeviceMatrix a(ea);
  const DeviceMatrix b(eb);
  const double* storage = a.data();

  a += b;
  EXPECT_EQ(a.data(), storage);  // in place
  expect_shape(a, 33, 65);
  EXPECT_TRUE(close(ea + eb, a.to_eigen(), kElementwiseTolerance));

  DeviceMatrix c(ea);
  c -= b;
  EXPECT_TRUE(close(ea - eb, c.to_eigen(), kElementwiseTolerance));

  // Chained: (a + b) - b - b = a - b.
  (a -= b) -= b;
  EXPECT_TRUE(close(Eigen::MatrixXd((ea + eb) - eb - eb), a.to_eigen(), kElementwiseTolerance));
  EXPECT_TRUE(identical(eb, b.to_eigen()));
}

TEST(DeviceMatrixTest, ScalarMultiplicationMatchesEigen) {
  REQUIRE_CUDA_DEVICE();
  const Eigen::MatrixXd ea = random_matrix(128, 257, 401);
  const DeviceMatrix a(ea);

  EXPECT_TRUE(close(Eigen::MatrixXd(ea * 2.5), (a * 2.5).to_eigen(), kElementwiseTolerance));
  EXPECT_TRUE(close(Eigen::MatrixXd(-0.75 * ea), (-0.75 * a).to_eigen(), kElementwiseTolerance));
  EXPECT_TRUE(identical(Eigen::MatrixXd::Zero(128, 257), (0.0 * a).to_eigen()));
  EXPECT_TRUE(identical(ea, a.to_eigen()));  // a * s does not modify a

  DeviceMatrix b(ea);
  b *= 3.0;
  EXPECT_TRUE(close(Eigen::MatrixXd(3.0 * ea), b.to_eigen(), kElementwiseTolerance));
  (b *= -0.5) *= 2.0;
  EXPECT_TRUE(close(Eigen::MatrixXd(-3.0 * ea), b.to_eigen(), kElementwiseTolerance));
}

// ---- products -----------------------------------------------------------------------------------------

TEST(DeviceMatrixTest, MatrixProductMatchesEigen) {
  REQUIRE_CUDA_DEVICE();
  unsigned seed = 500;
  for (const ProductShape& s : kProductShapes) {
    SCOPED_TRACE(shape(s.m, s.k) + " * " + shape(s.k, s.n));
    const Eigen::MatrixXd ea = random_matrix(s.m, s.k, ++seed);
    const Eigen::MatrixXd eb = random_matrix(s.k, s.n, ++seed);
    const DeviceMatrix a(ea), b(eb);
    const DeviceMatrix c = a * b;
    expect_shape(c, static_cast<std::size_t>(s.m), static_cast<std::size_t>(s.n));
    EXPECT_TRUE(close(ea * eb, c.to_eigen(), kProductTolerance));
    EXPECT_TRUE(identical(ea, a.to_eigen()));
    EXPECT_TRUE(identical(eb, b.to_eigen()));
  }
}

TEST(DeviceMatrixTest, SquareProductWithItself) {
  REQUIRE_CUDA_DEVICE();
  const Eigen::MatrixXd ea = random_matrix(65, 65, 601);
  const DeviceMatrix a(ea);
  EXPECT_TRUE(close(ea * ea, (a * a).to_eigen(), kProductTolerance));
}

TEST(DeviceMatrixTest, MatrixVectorProductAndApplyMatchEigen) {
  REQUIRE_CUDA_DEVICE();
  const std::pair<Eigen::Index, Eigen::Index> shapes[] = {{1, 1}, {7, 3}, {3, 7}, {33, 65}, {257, 128}, {1, 1000}, {1000, 1}};
  unsigned seed = 700;
  for (const auto& [rows, cols] : shapes) {
    SCOPED_TRACE(shape(rows, cols));
    const Eigen::MatrixXd ea = random_matrix(rows, cols, ++seed);
    const Eigen::VectorXd ex = random_vector(cols, ++seed);
    const Eigen::VectorXd expected = ea * ex;
    const DeviceMatrix a(ea);
    const DeviceVector<double> x(ex);

    const DeviceVector<double> product = a * x;
    ASSERT_EQ(product.size(), static_cast<std::size_t>(rows));
    EXPECT_TRUE(close(expected, product.to_eigen(), kProductTolerance));

    // apply() overwrites y (y = A x, not y += A x), also through the LinearOperator interface.
    DeviceVector<double> y(static_cast<std::size_t>(rows), std::numeric_limits<double>::quiet_NaN());
    const LinearOperator& op = a;
    EXPECT_EQ(op.rows(), static_cast<std::size_t>(rows));
    EXPECT_EQ(op.cols(), static_cast<std::size_t>(cols));
    op.apply(x, y);
    EXPECT_TRUE(close(expected, y.to_eigen(), kProductTolerance));
    EXPECT_TRUE(identical(ex, x.to_eigen()));
  }
}

// ---- empty shapes ---------------------------------------------------------------------------------------

TEST(DeviceMatrixTest, EmptyShapes) {
  REQUIRE_CUDA_DEVICE();
  const DeviceMatrix zero_by_five(0, 5), five_by_zero(5, 0), empty;
  EXPECT_TRUE(identical(Eigen::MatrixXd(0, 5), zero_by_five.to_eigen()));
  EXPECT_TRUE(identical(Eigen::MatrixXd(5, 0), five_by_zero.to_eigen()));
  EXPECT_TRUE(identical(Eigen::MatrixXd(0, 0), empty.to_eigen()));
  EXPECT_TRUE(identical(Eigen::MatrixXd(0, 5), DeviceMatrix(Eigen::MatrixXd(0, 5)).to_eigen()));

  // Element-wise operations and scaling on empty matrices.
  expect_shape(zero_by_five + DeviceMatrix(0, 5), 0, 5);
  expect_shape(five_by_zero - DeviceMatrix(5, 0), 5, 0);
  DeviceMatrix target(0, 5);
  target += zero_by_five;
  target -= zero_by_five;
  target *= 2.0;
  expect_shape(target, 0, 5);
  expect_shape(3.0 * five_by_zero, 5, 0);
  expect_shape(empty.copy(), 0, 0);

  // Products with an empty inner dimension are zero matrices; with an empty outer one, empty.
  const Eigen::MatrixXd e53 = random_matrix(5, 3, 801);
  const DeviceMatrix a53(e53);
  EXPECT_TRUE(identical(Eigen::MatrixXd::Zero(5, 3), (five_by_zero * DeviceMatrix(0, 3)).to_eigen()));
  EXPECT_TRUE(identical(Eigen::MatrixXd(0, 3), (zero_by_five * a53).to_eigen()));
  EXPECT_TRUE(identical(Eigen::MatrixXd(5, 0), (a53 * DeviceMatrix(3, 0)).to_eigen()));
  EXPECT_TRUE(identical(Eigen::MatrixXd(0, 0), (zero_by_five * five_by_zero).to_eigen()));

  // Matrix-vector products: a 5x0 matrix maps the empty vector to zeros, a 0x5 one to the empty vector.
  DeviceVector<double> x0, y5(5, std::numeric_limits<double>::quiet_NaN());
  five_by_zero.apply(x0, y5);
  EXPECT_TRUE(identical(Eigen::VectorXd::Zero(5), y5.to_eigen()));
  EXPECT_TRUE(identical(Eigen::VectorXd::Zero(5), (five_by_zero * x0).to_eigen()));
  const DeviceVector<double> x5(random_vector(5, 802));
  DeviceVector<double> y0;
  zero_by_five.apply(x5, y0);
  EXPECT_TRUE((zero_by_five * x5).empty());
  DeviceVector<double> none;
  empty.apply(DeviceVector<double>(), none);
  EXPECT_TRUE((empty * DeviceVector<double>()).empty());
}

// ---- shape checks -------------------------------------------------------------------------------------

TEST(DeviceMatrixTest, DimensionMismatchesThrowAndLeaveOperandsUnchanged) {
  REQUIRE_CUDA_DEVICE();
  const Eigen::MatrixXd ea = random_matrix(3, 4, 901);
  DeviceMatrix a(ea);
  const DeviceMatrix transposed_shape(4, 3, 1.0), more_rows(4, 4, 1.0), more_cols(3, 5, 1.0), other(3, 4, 1.0);

  for (const DeviceMatrix* b : {&transposed_shape, &more_rows, &more_cols}) {
    SCOPED_TRACE("other operand " + shape(static_cast<Eigen::Index>(b->rows()), static_cast<Eigen::Index>(b->cols())));
    EXPECT_THROW(a + *b, DimensionMismatch);
    EXPECT_THROW(a - *b, DimensionMismatch);
    EXPECT_THROW(*b + a, DimensionMismatch);
    EXPECT_THROW(a += *b, DimensionMismatch);
    EXPECT_THROW(a -= *b, DimensionMismatch);
  }
  // (3x4) * (3x4) and (3x4) * (3x5): inner dimensions 4 and 3 differ; (3x4) * (4x3) is fine.
  EXPECT_THROW(a * other, DimensionMismatch);
  EXPECT_THROW(a * more_cols, DimensionMismatch);
  expect_shape(a * transposed_shape, 3, 3);

  const DeviceVector<double> x3(3, 1.0), x4(4, 1.0), x5(5, 1.0);
  EXPECT_THROW(a * x3, DimensionMismatch);
  EXPECT_THROW(a * x5, DimensionMismatch);
  EXPECT_THROW(a * DeviceVector<double>(), DimensionMismatch);

  DeviceVector<double> y3(3, 7.0), y4(4, 7.0);
  EXPECT_THROW(a.apply(x3, y3), DimensionMismatch);  // x too short
  EXPECT_THROW(a.apply(x5, y3), DimensionMismatch);  // x too long
  EXPECT_THROW(a.apply(x4, y4), DimensionMismatch);  // y too long
  EXPECT_THROW(a.apply(x3, y4), DimensionMismatch);  // both transposed
  EXPECT_TRUE(identical(Eigen::VectorXd::Constant(3, 7.0), y3.to_eigen()));  // refused calls write nothing

  expect_shape(a, 3, 4);
  EXPECT_TRUE(identical(ea, a.to_eigen()));
}

// ---- copies and moves -----------------------------------------------------------------------------------

TEST(DeviceMatrixTest, CopyIsDeep) {
  REQUIRE_CUDA_DEVICE();
  const Eigen::MatrixXd ea = random_matrix(33, 17, 1001);
  DeviceMatrix a(ea);
  DeviceMatrix c = a.copy();
  expect_shape(c, 33, 17);
  EXPECT_NE(c.data(), a.data());
  EXPECT_TRUE(identical(ea, c.to_eigen()));

  c *= 2.0;
  c += DeviceMatrix(33, 17, 1.0);
  EXPECT_TRUE(identical(ea, a.to_eigen()));
  EXPECT_TRUE(close(Eigen::MatrixXd(2.0 * ea + Eigen::MatrixXd::Ones(33, 17)), c.to_eigen(), kElementwiseTolerance));

  a *= -1.0;
  EXPECT_TRUE(close(Eigen::MatrixXd(2.0 * ea + Eigen::MatrixXd::Ones(33, 17)), c.to_eigen(), kElementwiseTolerance));
}

TEST(DeviceMatrixTest, MovedFromMatrixIsEmpty) {
  REQUIRE_CUDA_DEVICE();
  const Eigen::MatrixXd ea = random_matrix(7, 3, 1101);
  DeviceMatrix a(ea);
  const double* storage = a.data();

  DeviceMatrix b(std::move(a));
  expect_shape(b, 7, 3);
  EXPECT_EQ(b.data(), storage);
  EXPECT_TRUE(identical(ea, b.to_eigen()));
  expect_shape(a, 0, 0);  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.to_eigen().size(), 0);

  DeviceMatrix c(2, 2, 1.0);
  c = std::move(b);
  expect_shape(c, 7, 3);
  EXPECT_EQ(c.data(), storage);
  EXPECT_TRUE(identical(ea, c.to_eigen()));
  expect_shape(b, 0, 0);  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(b.data(), nullptr);

  // A moved-from matrix can be assigned again and used.
  a = DeviceMatrix(ea);
  EXPECT_TRUE(identical(ea, (a + DeviceMatrix(7, 3, 0.0)).to_eigen()));
}

}  // namespace
}  // namespace linalg_cuda
