#include "linalg_cuda/poisson.h"

#include <climits>
#include <string>

#include "linalg_cuda/errors.h"

namespace linalg_cuda {
namespace {

// Dirichlet Laplacian of the n^dims grid with the standard (2*dims)-point stencil, natural ordering
// (x fastest). Written straight into the CSR arrays: going through triplets would need several times
// the memory and time at 128^3 (2 million rows, 14.6 million nonzeros).
CsrMatrix grid_laplacian(int n, int dims, const char* caller) {
  if (n <= 0) throw InvalidArgument(std::string(caller) + ": grid size must be positive, got " + std::to_string(n));

  long long rows = 1;
  for (int d = 0; d < dims; ++d) rows *= n;
  // Every dimension has n-1 neighbour pairs per grid line, each contributing two off-diagonal entries.
  const long long lines_per_dimension = rows / n;
  const long long nonzeros = rows + 2LL * dims * lines_per_dimension * (n - 1);
  if (rows > INT_MAX || nonzeros > INT_MAX) {
    throw InvalidArgument(std::string(caller) + ": n = " + std::to_string(n) +
                          " gives a matrix too large for 32-bit indices");
  }

  const int stride[3] = {1, n, n * n};
  CsrMatrix matrix(static_cast<int>(rows), static_cast<int>(rows));
  matrix.resizeNonZeros(static_cast<Eigen::Index>(nonzeros));
  int* row_start = matrix.outerIndexPtr();
  int* columns = matrix.innerIndexPtr();
  double* values = matrix.valuePtr();
  const double diagonal = 2.0 * dims;

  int next = 0;
  for (int row = 0; row < static_cast<int>(rows); ++row) {
    row_start[row] = next;
    int coordinate[3] = {0, 0, 0};
    for (int d = 0, rest = row; d < dims; ++d, rest /= n) coordinate[d] = rest % n;
    // Lower neighbours from the largest stride down, then the diagonal, then upper neighbours from the
    // smallest stride up: that keeps each row's column indices ascending, as CSR consumers expect.
    for (int d = dims - 1; d >= 0; --d) {
      if (coordinate[d] > 0) {
        columns[next] = row - stride[d];
        values[next++] = -1.0;
      }
    }
    columns[next] = row;
    values[next++] = diagonal;
    for (int d = 0; d < dims; ++d) {
      if (coordinate[d] < n - 1) {
        columns[next] = row + stride[d];
        values[next++] = -1.0;
      }
    }
  }
  row_start[rows] = next;
  return matrix;
}

}  // namespace

CsrMatrix poisson2d(int n) { return grid_laplacian(n, 2, "poisson2d"); }

CsrMatrix poisson3d(int n) { return grid_laplacian(n, 3, "poisson3d"); }

}  // namespace linalg_cuda
