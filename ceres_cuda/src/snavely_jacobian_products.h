#pragma once
// Products with the Snavely model's camera Jacobian without storing it, for the GPU's Schur product
// on the fast path (snavely_schur_kernels.cuh): forming J_c from the camera and a few values per
// residual moves fewer bytes than reading its 18 stored values. From:
//   - per camera, once per Jacobian, its frame: R(r), f, k1, k2, t, the rotation's branch and J_l(r);
//   - per residual, once per Jacobian, the compact view of the point seen through the frame;
//   - for J_c x, the camera's tangent of x (J_l x_r, x_t - (J_l x_r) x t~, x_f, x_k1, x_k2; t~ below),
//     once per product.
// The model and the derivatives are snavely_residual's (snavely_projection.h) in matrix form:
//   J_c = [A dP/dr, A, d p, f |p|^2 p, f |p|^4 p],  dP/dr = -[v]x J_l,
// with v = R X (v = X in the first-order branch); each product is written out at its function. They
// agree with snavely_residual's Jacobian to rounding (tests/ceres_cuda/snavely_jacobian_products_test).
#include "linalg_cuda/internal/host_device.h"
#include "snavely_projection.h"

namespace ceres_cuda::detail {

// Frame: R [0, 9) row-major, f k1 k2 [9, 12), t [12, 15), 1 for Rodrigues or 0 for the first-order
// rotation [15], J_l [16, 25) row-major, zeros to 28 (a whole number of 32-byte sectors).
constexpr int kFrameSize = 28;
constexpr int kFrameIntrinsics = 9, kFrameTranslation = 12, kFrameRodrigues = 15, kFrameJl = 16;

LINALG_HD void snavely_frame(const double* camera, double* frame) {
  const bool rodrigues = snavely_rotation(camera, frame, frame + kFrameJl);
  for (int k = 0; k < 3; ++k) frame[kFrameTranslation + k] = camera[3 + k];
  for (int k = 0; k < 3; ++k) frame[kFrameIntrinsics + k] = camera[6 + k];
  frame[kFrameRodrigues] = rodrigues ? 1.0 : 0.0;
  for (int k = kFrameJl + 9; k < kFrameSize; ++k) frame[k] = 0.0;
}

// A point X seen through a frame.
struct SnavelyView {
  double P[3];          // R X + t
  double prediction[2];
  SnavelyImage image;   // p, |p|^2, distortion (not A)
};

// False when X is at the camera's depth zero (no projection).
LINALG_HD bool snavely_view(const double* frame, const double* X, SnavelyView* view) {
  const double* R = frame;
  for (int i = 0; i < 3; ++i)
    view->P[i] = R[3 * i] * X[0] + R[3 * i + 1] * X[1] + R[3 * i + 2] * X[2] + frame[kFrameTranslation + i];
  if (view->P[2] == 0.0) return false;
  const double f = frame[kFrameIntrinsics];
  view->image = snavely_image(view->P, f, frame[kFrameIntrinsics + 1], frame[kFrameIntrinsics + 2], false);
  for (int a = 0; a < 2; ++a) view->prediction[a] = f * view->image.distortion * view->image.p[a];
  return true;
}

// The compact form both Schur passes use (snavely_schur_kernels.cuh): 3 values per residual, stored
// once per Jacobian (p and 1/P_z, kCompactViewSize values), and everything else per camera: for
// J_c x the tangent of x with f, k1, k2 (kCameraTangentSize values, formed once per product), for
// J_c' u the frame.
// With A = d prediction / d P = M D, M = d prediction / d p = f (d I + g p p'), g = 2 (k1 + 2 k2 |p|^2),
// and D e = d p / d P e = -1/P_z (e_x + p_x e_z, e_y + p_y e_z), and dP/dr x_r = -[v]x (J_l x_r) =
// (J_l x_r) x v:
//   J_c x = A e + p (d x_f + f |p|^2 (x_k1 + |p|^2 x_k2)),  e = (J_l x_r) x v + x_t,
//   J_c' u = (J_l' (v x b), b, d p.u, f |p|^2 p.u, f |p|^4 p.u),  b = A' u = D' M u.
// The rotation's point v is not stored: in the Rodrigues branch v = R X = P - t, and P = P_z q with
// q = (-p_x, -p_y, 1); in the first-order branch (R = I + [r]x, v = X) v = (I + [r]x)^-1 (P - t). So
// v = P_z q~ - t~ with q~ = B q (per residual) and t~ = B t (per camera), B = I or (I + [r]x)^-1
// (rotation_inverse), and with w = J_l x_r
//   e = P_z (w x q~) + (x_t - w x t~),  D (P_z (w x q~)) = -((w x q~)_x + p_x (w x q~)_z, ...)
// (x_t - w x t~ is per camera: the tangent holds it), and over a camera's residuals
//   sum v x b = sum b^ x q~ - t~ x sum b,  b = A' u = -b^ / P_z.
// The regrouping costs digits where the camera is far from the world's origin next to its points'
// distance from it (|t| >> |v|: the two terms nearly cancel), about log10(|t| / |v|) of them: 12 left
// at a ratio of 1e4, ample for a PCG that stops at a relative residual of eta (0.1 by default).
constexpr int kCompactViewSize = 3;     // p0 p1 1/P_z
// Tangent: J_l x_r [0, 3), x_t - (J_l x_r) x t~ [3, 6), x_f x_k1 x_k2 [6, 9), f k1 k2 [9, 12).
constexpr int kTangentIntrinsics = 9;
constexpr int kCameraTangentSize = 12;

LINALG_HD void compact_view(const SnavelyView& view, double* out) {
  out[0] = view.image.p[0];
  out[1] = view.image.p[1];
  out[2] = 1.0 / view.P[2];
}

LINALG_HD bool first_order_frame(const double* frame) { return frame[kFrameRodrigues] == 0.0; }

// y = (I + [r]x)^-1 y for a first_order_frame frame (r read off R = I + [r]x): (I + [r]x)^-1 =
// (I - [r]x + r r') / (1 + |r|^2), and to rounding (|r|^2 <= DBL_EPSILON) without the division:
// y + r (r.y) - r x y - |r|^2 y.
LINALG_HD void rotation_inverse(const double* frame, double* y) {
  const double r[3] = {frame[7], frame[2], frame[3]};
  const double rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2], ry = r[0] * y[0] + r[1] * y[1] + r[2] * y[2];
  const double rxy[3] = {r[1] * y[2] - r[2] * y[1], r[2] * y[0] - r[0] * y[2], r[0] * y[1] - r[1] * y[0]};
  for (int i = 0; i < 3; ++i) y[i] += r[i] * ry - rxy[i] - rr * y[i];
}

// t~ of a camera.
LINALG_HD void rotation_translation(const double* frame, double* t) {
  for (int i = 0; i < 3; ++i) t[i] = frame[kFrameTranslation + i];
  if (first_order_frame(frame)) rotation_inverse(frame, t);
}

// x: the camera's 9 values of the vector (Jacobi-scaled already).
LINALG_HD void camera_tangent(const double* frame, const double* x, double* out) {
  const double* Jl = frame + kFrameJl;
  double t[3], w[3];
  rotation_translation(frame, t);
  for (int i = 0; i < 3; ++i) w[i] = Jl[3 * i] * x[0] + Jl[3 * i + 1] * x[1] + Jl[3 * i + 2] * x[2];
  const double wt[3] = {w[1] * t[2] - w[2] * t[1], w[2] * t[0] - w[0] * t[2], w[0] * t[1] - w[1] * t[0]};
  for (int i = 0; i < 3; ++i) {
    out[i] = w[i];
    out[3 + i] = x[3 + i] - wt[i];
    out[6 + i] = x[6 + i];
    out[kTangentIntrinsics + i] = frame[kFrameIntrinsics + i];
  }
}

// A compact view's image quantities with its camera's f, k1, k2 (fk), for the products with A.
struct CompactImage {
  double p0, p1, iz, rr, d, g, f;
};

LINALG_HD CompactImage compact_image(const double* view, const double* fk) {
  CompactImage im;
  im.p0 = view[0];
  im.p1 = view[1];
  im.iz = view[2];
  im.rr = im.p0 * im.p0 + im.p1 * im.p1;
  im.f = fk[0];
  im.d = 1.0 + im.rr * (fk[1] + fk[2] * im.rr);
  im.g = 2.0 * (fk[1] + 2.0 * fk[2] * im.rr);
  return im;
}

// q~ of a residual from its compact view: q = (-p0, -p1, 1), and B q in the first-order branch
// (first_order: the frame's first_order_frame, which the point pass reads from a per-camera flag
// rather than the frame).
LINALG_HD void rotation_direction(const double* frame, bool first_order, const double* view, double* q) {
  q[0] = -view[0];
  q[1] = -view[1];
  q[2] = 1.0;
  if (first_order) rotation_inverse(frame, q);
}

// M u (M symmetric).
LINALG_HD void compact_image_m_times(const CompactImage& im, const double* u, double* m) {
  const double pu = im.p0 * u[0] + im.p1 * u[1];
  m[0] = im.f * (im.d * u[0] + im.g * im.p0 * pu);
  m[1] = im.f * (im.d * u[1] + im.g * im.p1 * pu);
}

// u = J_c x from the camera's tangent of x (camera_tangent's) and the residual's q~ (rotation_direction).
LINALG_HD void compact_jacobian_times(const CompactImage& im, const double* camera, const double* q, double* u) {
  const double* w = camera;
  const double* e = camera + 3;  // e = P_z c + e' with c = w x q~, e' = x_t - w x t~
  const double c0 = w[1] * q[2] - w[2] * q[1], c1 = w[2] * q[0] - w[0] * q[2], c2 = w[0] * q[1] - w[1] * q[0];
  const double delta[2] = {-(c0 + im.p0 * c2) - im.iz * (e[0] + im.p0 * e[2]),
                           -(c1 + im.p1 * c2) - im.iz * (e[1] + im.p1 * e[2])};
  compact_image_m_times(im, delta, u);
  const double radial = im.d * camera[6] + im.f * im.rr * (camera[7] + im.rr * camera[8]);
  u[0] += im.p0 * radial;
  u[1] += im.p1 * radial;
}

// J_c' u summed over a camera's residuals in a form that leaves out the camera's constants (J_l, f,
// t~): acc += (b^ x q~, b, d p.u, |p|^2 p.u, |p|^4 p.u) with b = A' u = -b^ / P_z, q~ the residual's
// rotation_direction; camera_jacobian_transpose_finish turns the sums into sum J_c' u.
LINALG_HD void compact_camera_jacobian_transpose_accumulate(const CompactImage& im, const double* q, const double* u,
                                                            double* acc) {
  double m[2];
  compact_image_m_times(im, u, m);
  const double bh[3] = {m[0], m[1], im.p0 * m[0] + im.p1 * m[1]};
  acc[0] += bh[1] * q[2] - bh[2] * q[1];
  acc[1] += bh[2] * q[0] - bh[0] * q[2];
  acc[2] += bh[0] * q[1] - bh[1] * q[0];
  for (int j = 0; j < 3; ++j) acc[3 + j] -= im.iz * bh[j];
  const double pu = im.p0 * u[0] + im.p1 * u[1];
  acc[6] += im.d * pu;
  acc[7] += im.rr * pu;
  acc[8] += im.rr * im.rr * pu;
}

LINALG_HD void camera_jacobian_transpose_finish(const double* frame, const double* acc, double* out) {
  const double* Jl = frame + kFrameJl;
  double t[3];  // sum v x b = sum b^ x q~ - t~ x sum b
  rotation_translation(frame, t);
  const double vb[3] = {acc[0] - (t[1] * acc[5] - t[2] * acc[4]), acc[1] - (t[2] * acc[3] - t[0] * acc[5]),
                        acc[2] - (t[0] * acc[4] - t[1] * acc[3])};
  for (int j = 0; j < 3; ++j) out[j] = Jl[j] * vb[0] + Jl[3 + j] * vb[1] + Jl[6 + j] * vb[2];
  for (int j = 3; j < 7; ++j) out[j] = acc[j];
  out[7] = frame[kFrameIntrinsics] * acc[7];
  out[8] = frame[kFrameIntrinsics] * acc[8];
}

}  // namespace ceres_cuda::detail
