// Generated Laplacians: sizes, CSR well-formedness, symmetry, row sums, and agreement with a plain
// triplet-assembled reference.
#include "linalg_cuda/poisson.h"

#include <vector>

#include <gtest/gtest.h>

#include "linalg_cuda/errors.h"

namespace linalg_cuda {
namespace {

// Reference assembly with explicit nested grid loops (x fastest) and triplets, written independently
// of the direct CSR construction it checks.
CsrMatrix reference_laplacian(int n, int dims) {
  const int nz = dims == 3 ? n : 1;
  const auto index = [n](int x, int y, int z) { return x + n * (y + n * z); };
  std::vector<Eigen::Triplet<double, int>> triplets;
  for (int z = 0; z < nz; ++z) {
    for (int y = 0; y < n; ++y) {
      for (int x = 0; x < n; ++x) {
        const int row = index(x, y, z);
        triplets.emplace_back(row, row, 2.0 * dims);
        if (x > 0) triplets.emplace_back(row, index(x - 1, y, z), -1.0);
        if (x < n - 1) triplets.emplace_back(row, index(x + 1, y, z), -1.0);
        if (y > 0) triplets.emplace_back(row, index(x, y - 1, z), -1.0);
        if (y < n - 1) triplets.emplace_back(row, index(x, y + 1, z), -1.0);
        if (dims == 3 && z > 0) triplets.emplace_back(row, index(x, y, z - 1), -1.0);
        if (dims == 3 && z < n - 1) triplets.emplace_back(row, index(x, y, z + 1), -1.0);
      }
    }
  }
  const int rows = n * n * nz;
  CsrMatrix a(rows, rows);
  a.setFromTriplets(triplets.begin(), triplets.end());
  a.makeCompressed();
  return a;
}

void expect_well_formed_csr(const CsrMatrix& a) {
  ASSERT_TRUE(a.isCompressed());
  ASSERT_EQ(a.outerIndexPtr()[0], 0);
  ASSERT_EQ(a.outerIndexPtr()[a.rows()], a.nonZeros());
  for (int i = 0; i < a.rows(); ++i) {
    const int begin = a.outerIndexPtr()[i];
    const int end = a.outerIndexPtr()[i + 1];
    ASSERT_LT(begin, end) << "row " << i << " is empty";
    for (int k = begin; k < end; ++k) {
      ASSERT_GE(a.innerIndexPtr()[k], 0);
      ASSERT_LT(a.innerIndexPtr()[k], a.cols());
      if (k > begin) {
        ASSERT_LT(a.innerIndexPtr()[k - 1], a.innerIndexPtr()[k]) << "row " << i << " unsorted";
      }
    }
  }
}

void expect_identical(const CsrMatrix& expected, const CsrMatrix& actual) {
  ASSERT_EQ(expected.rows(), actual.rows());
  ASSERT_EQ(expected.cols(), actual.cols());
  ASSERT_EQ(expected.nonZeros(), actual.nonZeros());
  for (int i = 0; i <= expected.rows(); ++i) ASSERT_EQ(expected.outerIndexPtr()[i], actual.outerIndexPtr()[i]);
  for (int k = 0; k < expected.nonZeros(); ++k) {
    ASSERT_EQ(expected.innerIndexPtr()[k], actual.innerIndexPtr()[k]) << "entry " << k;
    ASSERT_EQ(expected.valuePtr()[k], actual.valuePtr()[k]) << "entry " << k;
  }
}

// Dirichlet boundaries make each row sum equal to the number of grid neighbours that fall outside.
void expect_row_sums_count_missing_neighbours(const CsrMatrix& a, int n, int dims) {
  for (int row = 0; row < a.rows(); ++row) {
    double sum = 0;
    for (CsrMatrix::InnerIterator it(a, row); it; ++it) sum += it.value();
    int missing = 0;
    for (int d = 0, rest = row; d < dims; ++d, rest /= n) {
      const int coordinate = rest % n;
      missing += (coordinate == 0) + (coordinate == n - 1);
    }
    ASSERT_EQ(sum, missing) << "row " << row;
  }
}

bool exactly_symmetric(const CsrMatrix& a) {
  CsrMatrix transposed = a.transpose();
  transposed.makeCompressed();
  if (transposed.nonZeros() != a.nonZeros()) return false;
  const CsrMatrix difference = a - transposed;
  for (int k = 0; k < difference.nonZeros(); ++k) {
    if (difference.valuePtr()[k] != 0.0) return false;
  }
  return true;
}

TEST(Poisson2d, SizesFollowTheStencilFormula) {
  for (int n : {1, 2, 3, 10, 64}) {
    const CsrMatrix a = poisson2d(n);
    EXPECT_EQ(a.rows(), n * n);
    EXPECT_EQ(a.cols(), n * n);
    EXPECT_EQ(a.nonZeros(), 5 * n * n - 4 * n) << "n = " << n;
  }
}

TEST(Poisson3d, SizesFollowTheStencilFormula) {
  for (int n : {1, 2, 3, 10, 32}) {
    const CsrMatrix a = poisson3d(n);
    EXPECT_EQ(a.rows(), n * n * n);
    EXPECT_EQ(a.cols(), n * n * n);
    EXPECT_EQ(a.nonZeros(), 7 * n * n * n - 6 * n * n) << "n = " << n;
  }
}

TEST(Poisson3d, Size128MatchesDocumentedCounts) {
  const CsrMatrix a = poisson3d(128);
  EXPECT_EQ(a.rows(), 2097152);
  EXPECT_EQ(a.nonZeros(), 14581760);
  EXPECT_EQ(a.outerIndexPtr()[a.rows()], 14581760);
}

TEST(Poisson2d, MatchesTripletReferenceAndIsWellFormed) {
  for (int n : {1, 2, 3, 4, 7}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const CsrMatrix a = poisson2d(n);
    expect_well_formed_csr(a);
    expect_identical(reference_laplacian(n, 2), a);
    EXPECT_TRUE(exactly_symmetric(a));
    expect_row_sums_count_missing_neighbours(a, n, 2);
  }
}

TEST(Poisson3d, MatchesTripletReferenceAndIsWellFormed) {
  for (int n : {1, 2, 3, 4, 6}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const CsrMatrix a = poisson3d(n);
    expect_well_formed_csr(a);
    expect_identical(reference_laplacian(n, 3), a);
    EXPECT_TRUE(exactly_symmetric(a));
    expect_row_sums_count_missing_neighbours(a, n, 3);
  }
}

TEST(Poisson, InteriorRowsSumToZero) {
  const int n = 5;
  const CsrMatrix a2 = poisson2d(n);
  const int center2 = 2 + n * 2;
  EXPECT_EQ(a2.row(center2).sum(), 0.0);
  EXPECT_EQ(a2.coeff(center2, center2), 4.0);
  const CsrMatrix a3 = poisson3d(n);
  const int center3 = 2 + n * (2 + n * 2);
  EXPECT_EQ(a3.row(center3).sum(), 0.0);
  EXPECT_EQ(a3.coeff(center3, center3), 6.0);
  EXPECT_GT(a3.row(0).sum(), 0.0);
}

TEST(Poisson, NonPositiveSizeThrows) {
  EXPECT_THROW(poisson2d(0), InvalidArgument);
  EXPECT_THROW(poisson2d(-3), InvalidArgument);
  EXPECT_THROW(poisson3d(0), InvalidArgument);
  EXPECT_THROW(poisson3d(-1), InvalidArgument);
}

TEST(Poisson, SizeBeyond32BitIndicesThrows) {
  EXPECT_THROW(poisson3d(2000), InvalidArgument);
  EXPECT_THROW(poisson2d(50000), InvalidArgument);
}

}  // namespace
}  // namespace linalg_cuda
