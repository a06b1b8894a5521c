#pragma once
// The BAL / Snavely camera model with analytic derivatives, written once for the CPU (the public
// SnavelyReprojectionError, the CPU engine) and the GPU kernels.
//
// Camera (9): angle-axis rotation r, translation t, focal length f, radial distortion k1, k2.
//   P = R(r) X + t,  p = -P.xy / P.z,  d = 1 + k1 |p|^2 + k2 |p|^4,  prediction = f d p,
//   residual = prediction - observation.
// R(r) follows ceres::AngleAxisRotatePoint: Rodrigues' formula when |r|^2 > DBL_EPSILON, else the
// first-order rotation X + r x X, so that residuals and Jacobians agree with Ceres' autodiff of the
// same model (the derivative of R(r) X in r is -[R X]x J_l(r), J_l the left Jacobian of SO(3)).
#include <math.h>

#include "linalg_cuda/internal/host_device.h"

namespace ceres_cuda::detail {

constexpr int kSnavelyCameraSize = 9;
constexpr int kSnavelyResiduals = 2;

// R(r) (row-major) and the left Jacobian J_l(r) of SO(3), in the branch ceres::AngleAxisRotatePoint
// takes: Rodrigues' formula when |r|^2 > DBL_EPSILON (returns true), else the first-order rotation
// R = I + [r]x with J_l = I (returns false).
LINALG_HD bool snavely_rotation(const double* r, double* R, double* Jl) {
  const double r0 = r[0], r1 = r[1], r2 = r[2];
  const double theta2 = r0 * r0 + r1 * r1 + r2 * r2;
  if (!(theta2 > 2.220446049250313080847e-16)) {
    R[0] = 1.0; R[1] = -r2; R[2] = r1;
    R[3] = r2;  R[4] = 1.0; R[5] = -r0;
    R[6] = -r1; R[7] = r0;  R[8] = 1.0;
    for (int k = 0; k < 9; ++k) Jl[k] = k % 4 == 0 ? 1.0 : 0.0;
    return false;
  }
  const double theta = sqrt(theta2);
  const double c = cos(theta), s = sin(theta);
  const double w0 = r0 / theta, w1 = r1 / theta, w2 = r2 / theta;
  const double oc = 1.0 - c;
  R[0] = c + w0 * w0 * oc;      R[1] = w0 * w1 * oc - w2 * s; R[2] = w0 * w2 * oc + w1 * s;
  R[3] = w1 * w0 * oc + w2 * s; R[4] = c + w1 * w1 * oc;      R[5] = w1 * w2 * oc - w0 * s;
  R[6] = w2 * w0 * oc - w1 * s; R[7] = w2 * w1 * oc + w0 * s; R[8] = c + w2 * w2 * oc;
  double a, b;  // (1 - cos)/theta^2 and (theta - sin)/theta^3, by series where they cancel
  if (theta < 1e-4) {
    a = 0.5 - theta2 / 24.0 + theta2 * theta2 / 720.0;
    b = 1.0 / 6.0 - theta2 / 120.0 + theta2 * theta2 / 5040.0;
  } else {
    a = (1.0 - c) / theta2;
    b = (theta - s) / (theta2 * theta);
  }
  // J = I + a [r]x + b [r]x^2, [r]x^2 = r r' - theta^2 I
  const double rs[9] = {r0 * r0 - theta2, r0 * r1, r0 * r2, r1 * r0, r1 * r1 - theta2, r1 * r2,
                        r2 * r0, r2 * r1, r2 * r2 - theta2};
  const double rx[9] = {0.0, -r2, r1, r2, 0.0, -r0, -r1, r0, 0.0};
  for (int k = 0; k < 9; ++k) Jl[k] = (k % 4 == 0 ? 1.0 : 0.0) + a * rx[k] + b * rs[k];
  return true;
}

// The image of a camera-frame point P (P.z != 0): p = -P.xy / P.z, |p|^2, the distortion factor, and
// A = d prediction / d P (2x3, row-major), which is also the derivative in the translation.
struct SnavelyImage {
  double p[2], rr, distortion, A[6];
};

LINALG_HD SnavelyImage snavely_image(const double* P, double f, double k1, double k2, bool derivative) {
  SnavelyImage im;
  const double xp = -P[0] / P[2], yp = -P[1] / P[2];
  im.p[0] = xp;
  im.p[1] = yp;
  im.rr = xp * xp + yp * yp;
  im.distortion = 1.0 + im.rr * (k1 + k2 * im.rr);
  if (!derivative) return im;
  // d prediction / d p = f (d I + 2 (k1 + 2 k2 |p|^2) p p')
  const double g = 2.0 * (k1 + 2.0 * k2 * im.rr);
  const double M00 = f * (im.distortion + g * xp * xp), M01 = f * g * xp * yp, M11 = f * (im.distortion + g * yp * yp);
  // d p / d P = [[-1/Pz, 0, Px/Pz^2], [0, -1/Pz, Py/Pz^2]] = (1/Pz) [[-1, 0, -xp], [0, -1, -yp]]
  const double iz = 1.0 / P[2];
  im.A[0] = -M00 * iz;
  im.A[1] = -M01 * iz;
  im.A[2] = -(M00 * xp + M01 * yp) * iz;
  im.A[3] = -M01 * iz;
  im.A[4] = -M11 * iz;
  im.A[5] = -(M01 * xp + M11 * yp) * iz;
  return im;
}

// residual[2]; when jc (2x9, row-major) and jp (2x3, row-major) are given, the Jacobians too.
// Returns false when the point is at the camera's depth zero (P.z == 0: no projection).
LINALG_HD bool snavely_residual(const double* camera, const double* point, double observed_x,
                                       double observed_y, double* residual, double* jc, double* jp) {
  const double r0 = camera[0], r1 = camera[1], r2 = camera[2];
  const double theta2 = r0 * r0 + r1 * r1 + r2 * r2;
  double P[3];
  const double X0 = point[0], X1 = point[1], X2 = point[2];
  const bool rodrigues = theta2 > 2.220446049250313080847e-16;
  if (rodrigues) {
    const double theta = sqrt(theta2);
    const double c = cos(theta), s = sin(theta);
    const double w0 = r0 / theta, w1 = r1 / theta, w2 = r2 / theta;
    // ceres::AngleAxisRotatePoint, operation for operation.
    const double w_cross_x0 = w1 * X2 - w2 * X1;
    const double w_cross_x1 = w2 * X0 - w0 * X2;
    const double w_cross_x2 = w0 * X1 - w1 * X0;
    const double tmp = (w0 * X0 + w1 * X1 + w2 * X2) * (1.0 - c);
    P[0] = X0 * c + w_cross_x0 * s + w0 * tmp;
    P[1] = X1 * c + w_cross_x1 * s + w1 * tmp;
    P[2] = X2 * c + w_cross_x2 * s + w2 * tmp;
  } else {
    P[0] = X0 + (r1 * X2 - r2 * X1);
    P[1] = X1 + (r2 * X0 - r0 * X2);
    P[2] = X2 + (r0 * X1 - r1 * X0);
  }
  // The rotated point before translation (for the rotation derivative).
  const double RX0 = P[0], RX1 = P[1], RX2 = P[2];
  P[0] += camera[3];
  P[1] += camera[4];
  P[2] += camera[5];
  if (P[2] == 0.0) return false;
  const double f = camera[6];
  const SnavelyImage im = snavely_image(P, f, camera[7], camera[8], jc != nullptr);
  const double xp = im.p[0], yp = im.p[1], rr = im.rr, distortion = im.distortion;
  residual[0] = f * distortion * xp - observed_x;
  residual[1] = f * distortion * yp - observed_y;
  if (!jc) return true;

  const double* A = im.A;
  // Rotation part: dP/dr = -[v]x J_l, v = R X (first-order branch: v = X, J_l = I).
  double R[9], Jl[9];
  snavely_rotation(camera, R, Jl);
  const double v0 = rodrigues ? RX0 : X0, v1 = rodrigues ? RX1 : X1, v2 = rodrigues ? RX2 : X2;
  // -[v]x = [[0, v2, -v1], [-v2, 0, v0], [v1, -v0, 0]]
  const double nvx[9] = {0.0, v2, -v1, -v2, 0.0, v0, v1, -v0, 0.0};
  double dPdr[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      dPdr[3 * i + j] = nvx[3 * i] * Jl[j] + nvx[3 * i + 1] * Jl[3 + j] + nvx[3 * i + 2] * Jl[6 + j];
  for (int row = 0; row < 2; ++row) {
    const double* a_row = A + 3 * row;
    double* jc_row = jc + 9 * row;
    for (int j = 0; j < 3; ++j) {
      jc_row[j] = a_row[0] * dPdr[j] + a_row[1] * dPdr[3 + j] + a_row[2] * dPdr[6 + j];
      jc_row[3 + j] = a_row[j];
      if (jp) jp[3 * row + j] = a_row[0] * R[j] + a_row[1] * R[3 + j] + a_row[2] * R[6 + j];
    }
    const double pr = row == 0 ? xp : yp;
    jc_row[6] = distortion * pr;
    jc_row[7] = f * rr * pr;
    jc_row[8] = f * rr * rr * pr;
  }
  return true;
}

}  // namespace ceres_cuda::detail
