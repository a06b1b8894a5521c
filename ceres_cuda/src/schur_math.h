#pragma once
// The per-camera and per-point pieces of the Schur-complement Levenberg-Marquardt step, written once
// for the CPU reference (blocks stored one after another) and the GPU kernels (the continuous-element
// layout: entry k of every block contiguous). Storage is reached through Blocks, which knows both
// layouts, and every sum runs over a camera's or a point's residuals in a fixed order (gathers, no
// atomics), so the results do not depend on scheduling.
//
// Notation (Ceres' ImplicitSchurComplement): residual i has a camera Jacobian F_i (m x c), a point
// Jacobian E_i (m x 3) and residual f_i (m); D is the LM diagonal. Per point p: V_p = sum E_i'E_i +
// D_p^2; per camera: U_c = sum F_i'F_i + D_c^2. S = U - W V^-1 W', W the camera-point block F'E.
#include <math.h>

#include <cstddef>

#include "linalg_cuda/internal/host_device.h"
#include "linalg_cuda/internal/small_spd_inverse.h"

namespace ceres_cuda::detail {

// Entry k of block i: data[k * elem + i * block]. Natural layout: elem 1, block = block size;
// continuous-element layout: elem = number of blocks, block 1.
struct Blocks {
  double* data;
  std::size_t elem, block;
  LINALG_HD double& operator()(std::size_t i, int k) const { return data[k * elem + i * block]; }
};

struct ConstBlocks {
  const double* data;
  std::size_t elem, block;
  LINALG_HD ConstBlocks(const double* d, std::size_t e, std::size_t b) : data(d), elem(e), block(b) {}
  LINALG_HD ConstBlocks(const Blocks& b) : data(b.data), elem(b.elem), block(b.block) {}  // NOLINT
  LINALG_HD double operator()(std::size_t i, int k) const { return data[k * elem + i * block]; }
};

// The residuals of one camera or one point: ids[begin], ids[begin + stride], ... before ids[end]
// (stride > 1: one lane's share of a camera's residuals in a warp-per-camera kernel).
struct ResidualRange {
  const int* ids;
  int begin, end;
  int stride = 1;
};

// 3x3 SPD inverse through Cholesky (row-major). If the block is not numerically positive definite,
// it is regularised (lambda I added, lambda growing from 1e-12 of its trace) until it is; returns
// the number of regularisations (0 = none).
LINALG_HD int invert_spd3(const double* a, double* inverse) {
  double trace = fabs(a[0]) + fabs(a[4]) + fabs(a[8]);
  double lambda = 0.0;
  for (int attempt = 0; attempt < 40; ++attempt) {
    const double a00 = a[0] + lambda, a11 = a[4] + lambda, a22 = a[8] + lambda;
    const double l00 = a00 > 0.0 ? sqrt(a00) : 0.0;
    double l10 = 0, l20 = 0, l11 = 0, l21 = 0, l22 = 0;
    bool ok = l00 > 0.0 && isfinite(l00);
    if (ok) {
      l10 = a[3] / l00;
      l20 = a[6] / l00;
      const double d1 = a11 - l10 * l10;
      ok = d1 > 0.0 && isfinite(d1);
      if (ok) {
        l11 = sqrt(d1);
        l21 = (a[7] - l20 * l10) / l11;
        const double d2 = a22 - l20 * l20 - l21 * l21;
        ok = d2 > 0.0 && isfinite(d2);
        if (ok) l22 = sqrt(d2);
      }
    }
    if (ok) {
      // L^-1 (lower), then A^-1 = L^-T L^-1.
      const double i00 = 1.0 / l00, i11 = 1.0 / l11, i22 = 1.0 / l22;
      const double i10 = -l10 * i00 * i11;
      const double i21 = -l21 * i11 * i22;
      const double i20 = -(l20 * i00 + l21 * i10) * i22;
      inverse[0] = i00 * i00 + i10 * i10 + i20 * i20;
      inverse[1] = i10 * i11 + i20 * i21;
      inverse[2] = i20 * i22;
      inverse[4] = i11 * i11 + i21 * i21;
      inverse[5] = i21 * i22;
      inverse[8] = i22 * i22;
      inverse[3] = inverse[1];
      inverse[6] = inverse[2];
      inverse[7] = inverse[5];
      return attempt;
    }
    if (!isfinite(trace) || trace == 0.0) trace = 1.0;
    lambda = lambda == 0.0 ? 1e-12 * trace : lambda * 10.0;
  }
  for (int k = 0; k < 9; ++k) inverse[k] = 0.0;  // NaN input: no step for this point
  return 40;
}

// SPD inverse of an n x n block (n <= 16, row-major, leading dimension n) in place, regularised like
// invert_spd3; returns the number of regularisations. work: n * n doubles.
LINALG_HD int invert_spd_regularised(double* a, int n, double* work) {
  double trace = 0.0;
  for (int k = 0; k < n; ++k) trace += fabs(a[k * n + k]);
  if (!isfinite(trace) || trace == 0.0) trace = 1.0;
  double lambda = 0.0;
  for (int attempt = 0; attempt < 40; ++attempt) {
    for (int k = 0; k < n * n; ++k) work[k] = a[k];
    for (int k = 0; k < n; ++k) work[k * n + k] += lambda;
    if (linalg_cuda::detail::invert_spd_in_place(work, n, n)) {
      for (int k = 0; k < n * n; ++k) a[k] = work[k];
      return attempt;
    }
    lambda = lambda == 0.0 ? 1e-12 * trace : lambda * 10.0;
  }
  for (int k = 0; k < n * n; ++k) a[k] = 0.0;
  return 40;
}

// V_p = sum E_i'E_i + diag(d2) over the point's residuals (row-major 3x3).
LINALG_HD void point_block(ConstBlocks E, int m, ResidualRange r, const double* d2, double* V) {
  for (int k = 0; k < 9; ++k) V[k] = 0.0;
  for (int t = r.begin; t < r.end; t += r.stride) {
    const int i = r.ids[t];
    for (int a = 0; a < m; ++a) {
      const double e0 = E(i, 3 * a), e1 = E(i, 3 * a + 1), e2 = E(i, 3 * a + 2);
      V[0] += e0 * e0; V[1] += e0 * e1; V[2] += e0 * e2;
      V[4] += e1 * e1; V[5] += e1 * e2; V[8] += e2 * e2;
    }
  }
  V[0] += d2[0];
  V[4] += d2[1];
  V[8] += d2[2];
  V[3] = V[1];
  V[6] = V[2];
  V[7] = V[5];
}

// out = V^-1 * sum_i E_i' v_i over the point's residuals; v_i = vec(i, a) for a < m.
template <typename ResidualVector>
LINALG_HD void point_solve(ConstBlocks E, int m, ResidualRange r, const double* Vinv,
                                  const ResidualVector& vec, double* out) {
  double g0 = 0, g1 = 0, g2 = 0;
  for (int t = r.begin; t < r.end; t += r.stride) {
    const int i = r.ids[t];
    for (int a = 0; a < m; ++a) {
      const double v = vec(i, a);
      g0 += E(i, 3 * a) * v;
      g1 += E(i, 3 * a + 1) * v;
      g2 += E(i, 3 * a + 2) * v;
    }
  }
  out[0] = Vinv[0] * g0 + Vinv[1] * g1 + Vinv[2] * g2;
  out[1] = Vinv[3] * g0 + Vinv[4] * g1 + Vinv[5] * g2;
  out[2] = Vinv[6] * g0 + Vinv[7] * g1 + Vinv[8] * g2;
}

// out (c) = sum_i F_i' v_i over the camera's residuals.
template <typename ResidualVector>
LINALG_HD void camera_gather(ConstBlocks F, int m, int c, ResidualRange r, const ResidualVector& vec,
                                    double* out) {
  for (int k = 0; k < c; ++k) out[k] = 0.0;
  for (int t = r.begin; t < r.end; t += r.stride) {
    const int i = r.ids[t];
    for (int a = 0; a < m; ++a) {
      const double v = vec(i, a);
      for (int k = 0; k < c; ++k) out[k] += F(i, a * c + k) * v;
    }
  }
}

// Which residuals of a camera share its point (BaIndex::pair_next and pair_repeat; both null when
// none do).
struct RepeatedPairs {
  const int* next = nullptr;
  const unsigned char* repeat = nullptr;
};

// Accumulates the lower triangle of the c x c diagonal block of S (schur = true: sum F_i'F_i -
// sum over the camera's points W_p V_p^-1 W_p', W_p = sum F_i'E_i over its residuals with point p, as
// Ceres' SCHUR_JACOBI) or of U without D (schur = false) over the range, row-major into S (which the
// caller zeroes). point_of[i] is residual i's point (-1: constant point), Vinv the inverted point
// blocks (9 per point, in Blocks layout).
LINALG_HD void camera_block_accumulate(ConstBlocks F, ConstBlocks E, ConstBlocks Vinv, const int* point_of, int m,
                                              int c, ResidualRange r, bool schur, RepeatedPairs pairs, double* S) {
  for (int t = r.begin; t < r.end; t += r.stride) {
    const int i = r.ids[t];
    for (int a = 0; a < m; ++a)
      for (int j = 0; j < c; ++j) {
        const double fj = F(i, a * c + j);
        for (int k = 0; k <= j; ++k) S[j * c + k] += fj * F(i, a * c + k);
      }
    const int p = point_of[i];
    if (!schur || p < 0) continue;
    if (pairs.repeat && pairs.repeat[i]) continue;  // its F'E went into W at the pair's first residual
    // W = F'E (c x 3), summed over the camera's residuals with this point, then S -= W V^-1 W'.
    double W[3 * 16], WV[3 * 16];
    for (int j = 0; j < c; ++j)
      for (int q = 0; q < 3; ++q) {
        double s = 0.0;
        for (int a = 0; a < m; ++a) s += F(i, a * c + j) * E(i, 3 * a + q);
        W[3 * j + q] = s;
      }
    for (int k = pairs.next ? pairs.next[i] : -1; k >= 0; k = pairs.next[k])
      for (int j = 0; j < c; ++j)
        for (int q = 0; q < 3; ++q) {
          double s = 0.0;
          for (int a = 0; a < m; ++a) s += F(k, a * c + j) * E(k, 3 * a + q);
          W[3 * j + q] += s;
        }
    for (int j = 0; j < c; ++j)
      for (int q = 0; q < 3; ++q)
        WV[3 * j + q] = W[3 * j] * Vinv(p, q) + W[3 * j + 1] * Vinv(p, 3 + q) + W[3 * j + 2] * Vinv(p, 6 + q);
    for (int j = 0; j < c; ++j)
      for (int k = 0; k <= j; ++k)
        S[j * c + k] -= WV[3 * j] * W[3 * k] + WV[3 * j + 1] * W[3 * k + 1] + WV[3 * j + 2] * W[3 * k + 2];
  }
}

// Adds D^2 to the diagonal and mirrors the lower triangle.
LINALG_HD void camera_block_finish(int c, const double* d2, double* S) {
  for (int j = 0; j < c; ++j) {
    S[j * c + j] += d2[j];
    for (int k = 0; k < j; ++k) S[k * c + j] = S[j * c + k];
  }
}

}  // namespace ceres_cuda::detail
