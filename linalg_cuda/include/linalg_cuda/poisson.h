#pragma once
// Generated SPD test systems: the standard finite-difference Laplacians with Dirichlet boundaries.
#include "linalg_cuda/csr_matrix.h"

namespace linalg_cuda {

// 5-point Laplacian on an n x n grid: n^2 rows, diagonal 4, off-diagonals -1.
CsrMatrix poisson2d(int n);
// 7-point Laplacian on an n x n x n grid: n^3 rows, diagonal 6, off-diagonals -1
// (128^3: 2,097,152 rows, 14,581,760 nonzeros).
CsrMatrix poisson3d(int n);

}  // namespace linalg_cuda
