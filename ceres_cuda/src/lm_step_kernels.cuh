#pragma once
// The general GPU engine's element-wise kernels of an LM step (general_cuda_engine.cu), a thread per
// value over a grid-stride loop; the kernels over the Jacobian's cells are in block_schur_kernels.cuh.
#include "grid_stride.cuh"

namespace ceres_cuda::detail {
namespace {

// rows = f - rows.
__global__ void residual_minus_kernel(long n, const double* f, double* rows) {
  for (long k = blockIdx.x * static_cast<long>(kBlockThreads) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * kBlockThreads)
    rows[k] = f[k] - rows[k];
}

// Element-wise steps of the LM iteration over n tangent values.
__global__ void lm_diagonal_kernel(long n, const double* norms, double min_diagonal, double max_diagonal,
                                   double* diagonal) {
  for (long k = blockIdx.x * static_cast<long>(kBlockThreads) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * kBlockThreads)
    diagonal[k] = fmin(fmax(norms[k], min_diagonal), max_diagonal);
}

__global__ void damping_kernel(long n, const double* diagonal, double radius, double* d2) {
  for (long k = blockIdx.x * static_cast<long>(kBlockThreads) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * kBlockThreads) {
    const double d = sqrt(diagonal[k] / radius);
    d2[k] = d * d;
  }
}

__global__ void jacobi_scaling_kernel(long n, const double* norms, double* scaling) {
  for (long k = blockIdx.x * static_cast<long>(kBlockThreads) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * kBlockThreads)
    scaling[k] = 1.0 / (1.0 + sqrt(norms[k]));
}

// step = -y (f-part from the reduced solve, e-part from the back-substitution); delta = step .* scaling.
__global__ void step_kernel(long n, long nf, const double* y_f, const double* y_e, const double* scaling, double* step,
                            double* delta) {
  for (long k = blockIdx.x * static_cast<long>(kBlockThreads) + threadIdx.x; k < n; k += static_cast<long>(gridDim.x) * kBlockThreads) {
    step[k] = -(k < nf ? y_f[k] : y_e[k - nf]);
    delta[k] = step[k] * scaling[k];
  }
}

}  // namespace
}  // namespace ceres_cuda::detail
