#pragma once
// Products with the Snavely model's camera Jacobian without storing it, for the GPU's Schur product
// on the fast path (snavely_schur_kernels.cuh): forming J_c from the camera and a few values per
// residual moves fewer bytes than reading its 18 stored values. From:
//   - per camera, once per Jacobian, its frame: R(r), f, k1, k2, t, the rotation's branch and J_l(r);
//   - per residual, once per Jacobian, the compact view of the point seen through the frame;
//   - for J_c x, the camera's tangent of x: (J_l x_r, x_t, x_f, x_k1, x_k2), once per product.
// The model and the derivatives are snavely_residual's (snavely_projection.h) in matrix form:
//   J_c = [A dP/dr, A, d p, f |p|^2 p, f |p|^4 p],  dP/dr = -[v]x J_l,
// with v = R X (v = X in the first-order branch); each product is written out at its function. They
// agree with snavely_residual's Jacobian to rounding (tests/ceres_cuda/snavely_jacobian_products_test).
#include "linalg_cuda/host_device.h"
#include "snavely_projection.h"

namespace ceres_cuda::detail {

// Frame: R [0, 9) row-major, f k1 k2 [9, 12), t [12, 15), 1 for Rodrigues or 0 for the first-order
// rotation [15], J_l [16, 25) row-major, zeros to 28 (a whole number of 32-byte sectors).
constexpr int kFrameSize = 28;
constexpr int kFrameIntrinsics = 9, kFrameTranslation = 12, kFrameRodrigues = 15, kFrameJl = 16;
// Tangent: J_l x_r [0, 3), x_t [3, 6), x_f x_k1 x_k2 [6, 9).
constexpr int kTangentSize = 9;

LINALG_HD void snavely_frame(const double* camera, double* frame) {
  const bool rodrigues = snavely_rotation(camera, frame, frame + kFrameJl);
  for (int k = 0; k < 3; ++k) frame[kFrameTranslation + k] = camera[3 + k];
  for (int k = 0; k < 3; ++k) frame[kFrameIntrinsics + k] = camera[6 + k];
  frame[kFrameRodrigues] = rodrigues ? 1.0 : 0.0;
  for (int k = kFrameJl + 9; k < kFrameSize; ++k) frame[k] = 0.0;
}

// x: the camera's 9 values of the vector (Jacobi-scaled already).
LINALG_HD void snavely_tangent(const double* frame, const double* x, double* tangent) {
  const double* Jl = frame + kFrameJl;
  for (int i = 0; i < 3; ++i) tangent[i] = Jl[3 * i] * x[0] + Jl[3 * i + 1] * x[1] + Jl[3 * i + 2] * x[2];
  for (int k = 3; k < kTangentSize; ++k) tangent[k] = x[k];
}

// A point X seen through a frame.
struct SnavelyView {
  double v[3];          // the rotation derivative's point: R X, or X in the first-order branch
  double prediction[2];
  SnavelyImage image;   // p, |p|^2, distortion (not A)
};

// False when X is at the camera's depth zero (no projection).
LINALG_HD bool snavely_view(const double* frame, const double* X, SnavelyView* view) {
  const double* R = frame;
  double P[3];
  for (int i = 0; i < 3; ++i) P[i] = R[3 * i] * X[0] + R[3 * i + 1] * X[1] + R[3 * i + 2] * X[2];
  const bool rodrigues = frame[kFrameRodrigues] != 0.0;
  for (int i = 0; i < 3; ++i) {
    view->v[i] = rodrigues ? P[i] : X[i];
    P[i] += frame[kFrameTranslation + i];
  }
  if (P[2] == 0.0) return false;
  const double f = frame[kFrameIntrinsics];
  view->image = snavely_image(P, f, frame[kFrameIntrinsics + 1], frame[kFrameIntrinsics + 2], false);
  for (int a = 0; a < 2; ++a) view->prediction[a] = f * view->image.distortion * view->image.p[a];
  return true;
}

// The compact form both Schur passes use (snavely_schur_kernels.cuh): 6 values per residual, stored
// once per Jacobian (p (2), 1/P_z and v (3), kCompactViewSize values), and everything else per
// camera: for J_c x the tangent of x with f, k1, k2 (kCameraTangentSize values, formed once per
// product), for J_c' u the frame's f, k1, k2 and J_l.
// With A = d prediction / d P = M D, M = d prediction / d p = f (d I + g p p'), g = 2 (k1 + 2 k2 |p|^2),
// and D e = d p / d P e = -1/P_z (e_x + p_x e_z, e_y + p_y e_z), and dP/dr x_r = -[v]x (J_l x_r) =
// (J_l x_r) x v:
//   J_c x = A e + p (d x_f + f |p|^2 (x_k1 + |p|^2 x_k2)),  e = (J_l x_r) x v + x_t,
//   J_c' u = (J_l' (v x b), b, d p.u, f |p|^2 p.u, f |p|^4 p.u),  b = A' u = D' M u.
constexpr int kCompactViewSize = 6;     // p0 p1 1/P_z v0 v1 v2
constexpr int kCameraTangentSize = 12;  // the tangent (kTangentSize), then f k1 k2

LINALG_HD void compact_view(const SnavelyView& view, const double* frame, const double* X, double* out) {
  // P_z again from the frame, as snavely_view formed it (it keeps only the image quantities).
  const double* R = frame;
  const double Pz = R[6] * X[0] + R[7] * X[1] + R[8] * X[2] + frame[kFrameTranslation + 2];
  out[0] = view.image.p[0];
  out[1] = view.image.p[1];
  out[2] = 1.0 / Pz;
  for (int j = 0; j < 3; ++j) out[3 + j] = view.v[j];
}

// x: the camera's 9 values of the vector (Jacobi-scaled already).
LINALG_HD void camera_tangent(const double* frame, const double* x, double* out) {
  snavely_tangent(frame, x, out);
  for (int k = 0; k < 3; ++k) out[kTangentSize + k] = frame[kFrameIntrinsics + k];
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

// u = A e.
LINALG_HD void compact_image_times(const CompactImage& im, const double* e, double* u) {
  const double delta0 = -im.iz * (e[0] + im.p0 * e[2]), delta1 = -im.iz * (e[1] + im.p1 * e[2]);
  const double pd = im.p0 * delta0 + im.p1 * delta1;
  u[0] = im.f * (im.d * delta0 + im.g * im.p0 * pd);
  u[1] = im.f * (im.d * delta1 + im.g * im.p1 * pd);
}

// b = A' u = D' (M u), M being symmetric.
LINALG_HD void compact_image_transpose_times(const CompactImage& im, const double* u, double* b) {
  const double pu = im.p0 * u[0] + im.p1 * u[1];
  const double m0 = im.f * (im.d * u[0] + im.g * im.p0 * pu), m1 = im.f * (im.d * u[1] + im.g * im.p1 * pu);
  b[0] = -im.iz * m0;
  b[1] = -im.iz * m1;
  b[2] = -im.iz * (im.p0 * m0 + im.p1 * m1);
}

// view: compact_view's values; camera: camera_tangent's; im: compact_image of both.
LINALG_HD void compact_jacobian_times(const CompactImage& im, const double* view, const double* camera, double* u) {
  const double* v = view + 3;
  const double* w = camera;
  const double e[3] = {w[1] * v[2] - w[2] * v[1] + camera[3], w[2] * v[0] - w[0] * v[2] + camera[4],
                       w[0] * v[1] - w[1] * v[0] + camera[5]};
  compact_image_times(im, e, u);
  const double radial = im.d * camera[6] + im.f * im.rr * (camera[7] + im.rr * camera[8]);
  u[0] += im.p0 * radial;
  u[1] += im.p1 * radial;
}

LINALG_HD void compact_jacobian_times(const double* view, const double* camera, double* u) {
  compact_jacobian_times(compact_image(view, camera + kTangentSize), view, camera, u);
}

// J_c' u summed over a camera's residuals in a form that leaves out the camera's constants (J_l, f):
// acc += (v x b, b, d p.u, |p|^2 p.u, |p|^4 p.u); camera_jacobian_transpose_finish turns the sums into
// sum J_c' u. view: compact_view's values (v = view + 3).
LINALG_HD void compact_camera_jacobian_transpose_accumulate(const CompactImage& im, const double* view, const double* u,
                                                            double* acc) {
  const double* v = view + 3;
  double b[3];
  compact_image_transpose_times(im, u, b);
  acc[0] += v[1] * b[2] - v[2] * b[1];
  acc[1] += v[2] * b[0] - v[0] * b[2];
  acc[2] += v[0] * b[1] - v[1] * b[0];
  for (int j = 0; j < 3; ++j) acc[3 + j] += b[j];
  const double pu = im.p0 * u[0] + im.p1 * u[1];
  acc[6] += im.d * pu;
  acc[7] += im.rr * pu;
  acc[8] += im.rr * im.rr * pu;
}

LINALG_HD void camera_jacobian_transpose_finish(const double* frame, const double* acc, double* out) {
  const double* Jl = frame + kFrameJl;
  for (int j = 0; j < 3; ++j) out[j] = Jl[j] * acc[0] + Jl[3 + j] * acc[1] + Jl[6 + j] * acc[2];
  for (int j = 3; j < 7; ++j) out[j] = acc[j];
  out[7] = frame[kFrameIntrinsics] * acc[7];
  out[8] = frame[kFrameIntrinsics] * acc[8];
}

}  // namespace ceres_cuda::detail
