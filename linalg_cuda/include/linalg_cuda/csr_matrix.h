#pragma once
// The host-side sparse matrix of the project: Eigen's compressed-row matrix with 32-bit indices, the
// layout cuSPARSE and the CG kernels read (DeviceCsrMatrix uploads it as it is).
#include <Eigen/SparseCore>

namespace linalg_cuda {

using CsrMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

}  // namespace linalg_cuda
