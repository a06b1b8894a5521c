#pragma once
// COLMAP's camera models as its bundle adjustment projects with them (src/base/camera_models.h,
// WorldToImage, COLMAP 3.8), for the five models colmap_ba refines, with analytic derivatives, written
// once for the CPU and the GPU kernels:
//   SIMPLE_PINHOLE  f, cx, cy                        pixel = f (u, v) + c
//   PINHOLE         fx, fy, cx, cy                   pixel = (fx u, fy v) + c
//   SIMPLE_RADIAL   f, cx, cy, k                     pixel = f (1 + k r2) (u, v) + c
//   RADIAL          f, cx, cy, k1, k2                pixel = f (1 + k1 r2 + k2 r2^2) (u, v) + c
//   OPENCV          fx, fy, cx, cy, k1, k2, p1, p2   pixel = (fx x, fy y) + c, (x, y) = (u, v) + (du, dv),
//                   du = u radial + 2 p1 u v + p2 (r2 + 2 u^2), dv = v radial + 2 p2 u v + p1 (r2 + 2 v^2)
// with (u, v) = P.xy / P.z the point in the camera's normalised plane and r2 = u^2 + v^2, the
// operations in COLMAP's order.
#include "linalg_cuda/internal/host_device.h"
#include "unit_quaternion_transform.h"

namespace ceres_cuda::detail {

// The models' ids are ColmapCameraModel's.
constexpr int kColmapSimplePinhole = 0, kColmapPinhole = 1, kColmapSimpleRadial = 2, kColmapRadial = 3,
              kColmapOpenCV = 4;
constexpr int kColmapMaxProjectionParams = 8;

// The pixel of (u, v); with d_uv (2x2, row-major) the derivatives by u and v, and with d_params
// (2 x num_params) those by the parameters. False for a model it does not project.
LINALG_HD bool colmap_pixel(int model, const double* params, double u, double v, double* pixel, double* d_uv,
                            double* d_params) {
  switch (model) {
    case kColmapSimplePinhole:
    case kColmapPinhole: {
      const bool one = model == kColmapSimplePinhole;
      const double fx = params[0], fy = one ? params[0] : params[1];
      const double cx = params[one ? 1 : 2], cy = params[one ? 2 : 3];
      pixel[0] = fx * u + cx;
      pixel[1] = fy * v + cy;
      if (d_uv) {
        d_uv[0] = fx, d_uv[1] = 0.0, d_uv[2] = 0.0, d_uv[3] = fy;
      }
      if (d_params) {
        const int n = one ? 3 : 4;
        for (int k = 0; k < 2 * n; ++k) d_params[k] = 0.0;
        if (one) {
          d_params[0] = u, d_params[1] = 1.0, d_params[n] = v, d_params[n + 2] = 1.0;
        } else {
          d_params[0] = u, d_params[2] = 1.0, d_params[n + 1] = v, d_params[n + 3] = 1.0;
        }
      }
      return true;
    }
    case kColmapSimpleRadial:
    case kColmapRadial: {
      const bool one = model == kColmapSimpleRadial;
      const double f = params[0], cx = params[1], cy = params[2], k1 = params[3], k2 = one ? 0.0 : params[4];
      const double u2 = u * u, v2 = v * v, r2 = u2 + v2;
      const double radial = one ? k1 * r2 : k1 * r2 + k2 * r2 * r2;
      const double x = u + u * radial, y = v + v * radial;
      pixel[0] = f * x + cx;
      pixel[1] = f * y + cy;
      if (d_uv) {
        const double g = one ? k1 : k1 + 2.0 * k2 * r2;  // d radial / d r2
        d_uv[0] = f * (1.0 + radial + 2.0 * u2 * g);
        d_uv[1] = f * (2.0 * u * v * g);
        d_uv[2] = d_uv[1];
        d_uv[3] = f * (1.0 + radial + 2.0 * v2 * g);
      }
      if (d_params) {
        const int n = one ? 4 : 5;
        double* r0 = d_params;
        double* r1 = d_params + n;
        r0[0] = x, r0[1] = 1.0, r0[2] = 0.0, r0[3] = f * u * r2;
        r1[0] = y, r1[1] = 0.0, r1[2] = 1.0, r1[3] = f * v * r2;
        if (!one) r0[4] = f * u * r2 * r2, r1[4] = f * v * r2 * r2;
      }
      return true;
    }
    case kColmapOpenCV: {
      const double fx = params[0], fy = params[1], cx = params[2], cy = params[3];
      const double k1 = params[4], k2 = params[5], p1 = params[6], p2 = params[7];
      const double u2 = u * u, uv = u * v, v2 = v * v, r2 = u2 + v2;
      const double radial = k1 * r2 + k2 * r2 * r2;
      const double du = u * radial + 2.0 * p1 * uv + p2 * (r2 + 2.0 * u2);
      const double dv = v * radial + 2.0 * p2 * uv + p1 * (r2 + 2.0 * v2);
      const double x = u + du, y = v + dv;
      pixel[0] = fx * x + cx;
      pixel[1] = fy * y + cy;
      if (d_uv) {
        const double g = k1 + 2.0 * k2 * r2;
        d_uv[0] = fx * (1.0 + radial + 2.0 * u2 * g + 2.0 * p1 * v + 6.0 * p2 * u);
        d_uv[1] = fx * (2.0 * uv * g + 2.0 * p1 * u + 2.0 * p2 * v);
        d_uv[2] = fy * (2.0 * uv * g + 2.0 * p2 * v + 2.0 * p1 * u);
        d_uv[3] = fy * (1.0 + radial + 2.0 * v2 * g + 2.0 * p2 * u + 6.0 * p1 * v);
      }
      if (d_params) {
        double* r0 = d_params;
        double* r1 = d_params + 8;
        r0[0] = x, r0[1] = 0.0, r0[2] = 1.0, r0[3] = 0.0;
        r1[0] = 0.0, r1[1] = y, r1[2] = 0.0, r1[3] = 1.0;
        r0[4] = fx * u * r2, r0[5] = fx * u * r2 * r2, r0[6] = fx * 2.0 * uv, r0[7] = fx * (r2 + 2.0 * u2);
        r1[4] = fy * v * r2, r1[5] = fy * v * r2 * r2, r1[6] = fy * (r2 + 2.0 * v2), r1[7] = fy * 2.0 * uv;
      }
      return true;
    }
    default: return false;
  }
}

// COLMAP's reprojection residual of an image point: pixel(params, P.x / P.z, P.y / P.z) - observed,
// P = R(q) X + t. With jq (2x4) the Jacobians too, each of jt (2x3), jparams (2 x num_params) and jx
// (2x3) null where its block is constant. False when P.z == 0 (no projection) or for a model that
// colmap_pixel does not project.
LINALG_HD bool colmap_reprojection_residual(int model, const double* q, const double* t, const double* params,
                                            const double* X, double observed_x, double observed_y, double* residual,
                                            double* jq, double* jt, double* jparams, double* jx) {
  const QuaternionTransform r = unit_quaternion_transform(q, t, X);
  if (r.P[2] == 0.0) return false;
  const double u = r.P[0] / r.P[2], v = r.P[1] / r.P[2];
  const bool derivative = jq != nullptr || jt != nullptr || jparams != nullptr || jx != nullptr;
  double pixel[2], d_uv[4];
  if (!colmap_pixel(model, params, u, v, pixel, derivative ? d_uv : nullptr, jparams)) return false;
  residual[0] = pixel[0] - observed_x;
  residual[1] = pixel[1] - observed_y;
  if (!derivative) return true;
  // d pixel / d P = d_uv d(u, v)/dP, d(u, v)/dP = [1/z 0 -u/z; 0 1/z -v/z].
  const double iz = 1.0 / r.P[2];
  double A[6];
  for (int row = 0; row < 2; ++row) {
    A[3 * row] = d_uv[2 * row] * iz;
    A[3 * row + 1] = d_uv[2 * row + 1] * iz;
    A[3 * row + 2] = -(d_uv[2 * row] * u + d_uv[2 * row + 1] * v) * iz;
  }
  chain_through_unit_quaternion_transform(A, q, X, r, jq, jt, jx);
  return true;
}

}  // namespace ceres_cuda::detail
