#pragma once
// The Snavely camera model with the rotation by a unit quaternion, the SfM shape's cost function
// (QuaternionSnavelyReprojectionError), with analytic derivatives written once for the CPU and the
// GPU kernels.
//
// Blocks: q (4: w, x, y, z), t (3), intrinsics k (3: f, k1, k2), X (3).
//   P = R(q) X + t,  p = -P.xy / P.z,  d = 1 + k1 |p|^2 + k2 |p|^4,  prediction = f d p,
//   residual = prediction - observation.
// R(q) X and its derivatives: unit_quaternion_transform.h.
#include "linalg_cuda/internal/host_device.h"
#include "snavely_projection.h"
#include "unit_quaternion_transform.h"

namespace ceres_cuda::detail {

// residual[2]; when jq (2x4), jt, jk, jx (2x3 each, row-major) are given, the Jacobians too (each may be
// null when jq is given: its block is constant). Returns false when the point is at the camera's depth
// zero (P.z == 0: no projection).
LINALG_HD bool quaternion_snavely_residual(const double* q, const double* t, const double* k, const double* X,
                                           double observed_x, double observed_y, double* residual, double* jq,
                                           double* jt, double* jk, double* jx) {
  const QuaternionTransform r = unit_quaternion_transform(q, t, X);
  const double* P = r.P;
  if (P[2] == 0.0) return false;
  const bool derivative = jq != nullptr || jt != nullptr || jk != nullptr || jx != nullptr;
  const double f = k[0];
  const SnavelyImage im = snavely_image(P, f, k[1], k[2], derivative);
  residual[0] = f * im.distortion * im.p[0] - observed_x;
  residual[1] = f * im.distortion * im.p[1] - observed_y;
  if (!derivative) return true;

  chain_through_unit_quaternion_transform(im.A, q, X, r, jq, jt, jx);  // im.A: d prediction / d P
  if (jk != nullptr)
    for (int row = 0; row < 2; ++row) {
      const double pr = im.p[row];
      jk[3 * row] = im.distortion * pr;
      jk[3 * row + 1] = f * im.rr * pr;
      jk[3 * row + 2] = f * im.rr * im.rr * pr;
    }
  return true;
}

}  // namespace ceres_cuda::detail
