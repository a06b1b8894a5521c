#pragma once
// Inversion of a small symmetric positive definite block through its Cholesky factor, written once
// for the CPU reference and the GPU block-Jacobi kernels (LINALG_HD).
#include <math.h>  // isfinite/sqrt unqualified, valid in host and device code

#include "linalg_cuda/internal/host_device.h"

namespace linalg_cuda::detail {

// a: m x m, row-major with leading dimension ld, symmetric (only the lower triangle is read).
// On success a holds A^{-1} (full, symmetric) and the result is true. Returns false, leaving a in an
// unspecified state, when a pivot is not positive or not finite (A is not SPD, or holds NaN/Inf).
LINALG_HD bool invert_spd_in_place(double* a, int m, int ld) {
  // Cholesky: A = L L^T, L stored in the lower triangle.
  for (int j = 0; j < m; ++j) {
    double d = a[j * ld + j];
    for (int k = 0; k < j; ++k) d -= a[j * ld + k] * a[j * ld + k];
    if (!(d > 0.0) || !isfinite(d)) return false;
    const double l_jj = sqrt(d);
    a[j * ld + j] = l_jj;
    for (int i = j + 1; i < m; ++i) {
      double s = a[i * ld + j];
      for (int k = 0; k < j; ++k) s -= a[i * ld + k] * a[j * ld + k];
      a[i * ld + j] = s / l_jj;
    }
  }
  // L^{-1} in place (lower triangle).
  for (int j = 0; j < m; ++j) {
    a[j * ld + j] = 1.0 / a[j * ld + j];
    for (int i = j + 1; i < m; ++i) {
      double s = 0.0;
      for (int k = j; k < i; ++k) s -= a[i * ld + k] * a[k * ld + j];
      a[i * ld + j] = s / a[i * ld + i];
    }
  }
  // A^{-1} = L^{-T} L^{-1}: entry (i, j), i >= j, is sum_{k >= i} Linv(k, i) Linv(k, j). It only reads
  // the lower triangle at rows k >= i, so writing it to the upper triangle (j, i) is safe: the one
  // overlap, the diagonal (j, j), is written when column j starts and never read again.
  for (int j = 0; j < m; ++j) {
    for (int i = j; i < m; ++i) {
      double s = 0.0;
      for (int k = i; k < m; ++k) s += a[k * ld + i] * a[k * ld + j];
      a[j * ld + i] = s;  // upper triangle: (j, i)
    }
  }
  for (int j = 0; j < m; ++j)
    for (int i = j + 1; i < m; ++i) a[i * ld + j] = a[j * ld + i];
  return true;
}

}  // namespace linalg_cuda::detail
