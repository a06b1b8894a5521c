#pragma once
// The Snavely camera model with the rotation by a unit quaternion, the SfM shape's cost function
// (QuaternionSnavelyReprojectionError), with analytic derivatives written once for the CPU and the
// GPU kernels.
//
// Blocks: q (4: w, x, y, z), t (3), intrinsics k (3: f, k1, k2), X (3).
//   P = R(q) X + t,  p = -P.xy / P.z,  d = 1 + k1 |p|^2 + k2 |p|^4,  prediction = f d p,
//   residual = prediction - observation.
// R(q) X is ceres::UnitQuaternionRotatePoint operation for operation (X + w uv + v x uv, uv = 2 v x X,
// v = (x, y, z)), and the derivatives are those of that polynomial, not assuming |q| = 1, so that they
// agree with Ceres' autodiff of the same functor.
#include "linalg_cuda/internal/host_device.h"
#include "snavely_projection.h"

namespace ceres_cuda::detail {

// residual[2]; when jq (2x4), jt, jk, jx (2x3 each, row-major) are given, the Jacobians too (each may be
// null when jq is given: its block is constant). Returns false when the point is at the camera's depth
// zero (P.z == 0: no projection).
LINALG_HD bool quaternion_snavely_residual(const double* q, const double* t, const double* k, const double* X,
                                           double observed_x, double observed_y, double* residual, double* jq,
                                           double* jt, double* jk, double* jx) {
  const double w = q[0], v0 = q[1], v1 = q[2], v2 = q[3];
  double uv0 = v1 * X[2] - v2 * X[1];
  double uv1 = v2 * X[0] - v0 * X[2];
  double uv2 = v0 * X[1] - v1 * X[0];
  uv0 += uv0;
  uv1 += uv1;
  uv2 += uv2;
  double P[3];
  P[0] = X[0] + w * uv0;
  P[1] = X[1] + w * uv1;
  P[2] = X[2] + w * uv2;
  P[0] += v1 * uv2 - v2 * uv1;
  P[1] += v2 * uv0 - v0 * uv2;
  P[2] += v0 * uv1 - v1 * uv0;
  P[0] += t[0];
  P[1] += t[1];
  P[2] += t[2];
  if (P[2] == 0.0) return false;
  const bool derivative = jq != nullptr || jt != nullptr || jk != nullptr || jx != nullptr;
  const double f = k[0];
  const SnavelyImage im = snavely_image(P, f, k[1], k[2], derivative);
  residual[0] = f * im.distortion * im.p[0] - observed_x;
  residual[1] = f * im.distortion * im.p[1] - observed_y;
  if (!derivative) return true;

  const double* A = im.A;  // d prediction / d P
  // d P / d X = I + 2 w [v]x + 2 [v]x^2, [v]x^2 = v v' - |v|^2 I.
  const double vv = v0 * v0 + v1 * v1 + v2 * v2;
  const double dX[9] = {1.0 + 2.0 * (v0 * v0 - vv), 2.0 * (v0 * v1 - w * v2),       2.0 * (v0 * v2 + w * v1),
                        2.0 * (v1 * v0 + w * v2),       1.0 + 2.0 * (v1 * v1 - vv), 2.0 * (v1 * v2 - w * v0),
                        2.0 * (v2 * v0 - w * v1),       2.0 * (v2 * v1 + w * v0),       1.0 + 2.0 * (v2 * v2 - vv)};
  // d P / d w = uv; d P / d v = -2 w [X]x - [uv]x - 2 [v]x [X]x (columns x, y, z).
  const double Xx[9] = {0.0, -X[2], X[1], X[2], 0.0, -X[0], -X[1], X[0], 0.0};
  const double vx[9] = {0.0, -v2, v1, v2, 0.0, -v0, -v1, v0, 0.0};
  const double uvx[9] = {0.0, -uv2, uv1, uv2, 0.0, -uv0, -uv1, uv0, 0.0};
  double dq[12];  // 3x4: column 0 is d/dw
  for (int i = 0; i < 3; ++i) {
    dq[4 * i] = i == 0 ? uv0 : (i == 1 ? uv1 : uv2);
    for (int j = 0; j < 3; ++j) {
      double vxXx = 0.0;
      for (int l = 0; l < 3; ++l) vxXx += vx[3 * i + l] * Xx[3 * l + j];
      dq[4 * i + 1 + j] = -2.0 * w * Xx[3 * i + j] - uvx[3 * i + j] - 2.0 * vxXx;
    }
  }
  for (int row = 0; row < 2; ++row) {
    const double* a = A + 3 * row;
    if (jq != nullptr)
      for (int j = 0; j < 4; ++j) jq[4 * row + j] = a[0] * dq[j] + a[1] * dq[4 + j] + a[2] * dq[8 + j];
    for (int j = 0; j < 3; ++j) {
      if (jt != nullptr) jt[3 * row + j] = a[j];
      if (jx != nullptr) jx[3 * row + j] = a[0] * dX[j] + a[1] * dX[3 + j] + a[2] * dX[6 + j];
    }
    if (jk != nullptr) {
      const double pr = im.p[row];
      jk[3 * row] = im.distortion * pr;
      jk[3 * row + 1] = f * im.rr * pr;
      jk[3 * row + 2] = f * im.rr * im.rr * pr;
    }
  }
  return true;
}

}  // namespace ceres_cuda::detail
