#pragma once
// P = R(q) X + t for a unit quaternion q = (w, x, y, z), as ceres::UnitQuaternionRotatePoint computes
// it operation for operation (X + w uv + v x uv, uv = 2 v x X, v = (x, y, z)), and its derivatives:
// those of that polynomial, not assuming |q| = 1, so that they agree with Ceres' autodiff of the same
// functor. Written once for the CPU and the GPU kernels; the cost functions that rotate by a
// quaternion (the SfM shape's, COLMAP's) share it.
#include "linalg_cuda/internal/host_device.h"

namespace ceres_cuda::detail {

struct QuaternionTransform {
  double P[3];
  double uv[3];  // 2 v x X, which the derivatives reuse
};

LINALG_HD QuaternionTransform unit_quaternion_transform(const double* q, const double* t, const double* X) {
  const double w = q[0], v0 = q[1], v1 = q[2], v2 = q[3];
  QuaternionTransform r;
  double uv0 = v1 * X[2] - v2 * X[1];
  double uv1 = v2 * X[0] - v0 * X[2];
  double uv2 = v0 * X[1] - v1 * X[0];
  uv0 += uv0;
  uv1 += uv1;
  uv2 += uv2;
  r.P[0] = X[0] + w * uv0;
  r.P[1] = X[1] + w * uv1;
  r.P[2] = X[2] + w * uv2;
  r.P[0] += v1 * uv2 - v2 * uv1;
  r.P[1] += v2 * uv0 - v0 * uv2;
  r.P[2] += v0 * uv1 - v1 * uv0;
  r.P[0] += t[0];
  r.P[1] += t[1];
  r.P[2] += t[2];
  r.uv[0] = uv0;
  r.uv[1] = uv1;
  r.uv[2] = uv2;
  return r;
}

// d P / d q (3x4, row-major, column 0 d/dw) and d P / d X (3x3), for the transform's q and X.
LINALG_HD void unit_quaternion_transform_derivatives(const double* q, const double* X, const QuaternionTransform& r,
                                                     double* dq, double* dX) {
  const double w = q[0], v0 = q[1], v1 = q[2], v2 = q[3];
  // d P / d X = I + 2 w [v]x + 2 [v]x^2, [v]x^2 = v v' - |v|^2 I.
  const double vv = v0 * v0 + v1 * v1 + v2 * v2;
  dX[0] = 1.0 + 2.0 * (v0 * v0 - vv);
  dX[1] = 2.0 * (v0 * v1 - w * v2);
  dX[2] = 2.0 * (v0 * v2 + w * v1);
  dX[3] = 2.0 * (v1 * v0 + w * v2);
  dX[4] = 1.0 + 2.0 * (v1 * v1 - vv);
  dX[5] = 2.0 * (v1 * v2 - w * v0);
  dX[6] = 2.0 * (v2 * v0 - w * v1);
  dX[7] = 2.0 * (v2 * v1 + w * v0);
  dX[8] = 1.0 + 2.0 * (v2 * v2 - vv);
  // d P / d w = uv; d P / d v = -2 w [X]x - [uv]x - 2 [v]x [X]x (columns x, y, z).
  const double Xx[9] = {0.0, -X[2], X[1], X[2], 0.0, -X[0], -X[1], X[0], 0.0};
  const double vx[9] = {0.0, -v2, v1, v2, 0.0, -v0, -v1, v0, 0.0};
  const double uvx[9] = {0.0, -r.uv[2], r.uv[1], r.uv[2], 0.0, -r.uv[0], -r.uv[1], r.uv[0], 0.0};
  for (int i = 0; i < 3; ++i) {
    dq[4 * i] = r.uv[i];
    for (int j = 0; j < 3; ++j) {
      double vxXx = 0.0;
      for (int l = 0; l < 3; ++l) vxXx += vx[3 * i + l] * Xx[3 * l + j];
      dq[4 * i + 1 + j] = -2.0 * w * Xx[3 * i + j] - uvx[3 * i + j] - 2.0 * vxXx;
    }
  }
}

// The Jacobians by q (2x4), t (2x3) and X (2x3) of a 2-vector with derivative A (2x3, row-major) by
// P, for the transform's q and X; each output may be null (its block constant).
LINALG_HD void chain_through_unit_quaternion_transform(const double* A, const double* q, const double* X,
                                                       const QuaternionTransform& r, double* jq, double* jt,
                                                       double* jx) {
  double dq[12], dX[9];
  unit_quaternion_transform_derivatives(q, X, r, dq, dX);
  for (int row = 0; row < 2; ++row) {
    const double* a = A + 3 * row;
    if (jq != nullptr)
      for (int j = 0; j < 4; ++j) jq[4 * row + j] = a[0] * dq[j] + a[1] * dq[4 + j] + a[2] * dq[8 + j];
    for (int j = 0; j < 3; ++j) {
      if (jt != nullptr) jt[3 * row + j] = a[j];
      if (jx != nullptr) jx[3 * row + j] = a[0] * dX[j] + a[1] * dX[3 + j] + a[2] * dX[6 + j];
    }
  }
}

}  // namespace ceres_cuda::detail
