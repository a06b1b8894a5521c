#pragma once
// Products with the Snavely model's camera Jacobian without storing it, for the camera pass of the GPU's
// Schur product on the fast path (snavely_schur_kernels.cuh): there all residuals of a chunk share one
// camera, so forming J_c from the camera and the point moves fewer bytes than reading its 18 stored
// values. From:
//   - per camera, once per Jacobian, its frame: R(r), t, f, k1, k2, the rotation's branch and J_l(r);
//   - per residual, the point seen through the frame (SnavelyView);
//   - for J_c x, the camera's tangent of x: (J_l x_r, x_t, x_f, x_k1, x_k2).
// The model and the derivatives are snavely_residual's (snavely_projection.h) in matrix form:
//   J_c = [A dP/dr, A, d p, f |p|^2 p, f |p|^4 p],  dP/dr = -[v]x J_l,
// with v = R X (v = X in the first-order branch); each product is written out at its function. They
// agree with snavely_residual's Jacobian to rounding (tests/ceres_cuda/snavely_jacobian_products_test).
#include "linalg_cuda/host_device.h"
#include "snavely_projection.h"

namespace ceres_cuda::detail {

// Frame: R [0, 9) row-major, t [9, 12), f k1 k2 [12, 15), 1 for Rodrigues or 0 for the first-order
// rotation [15], J_l [16, 25) row-major, zeros to 28 (a whole number of 32-byte sectors).
constexpr int kFrameSize = 28;
constexpr int kFrameRodrigues = 15, kFrameJl = 16;
// Tangent: J_l x_r [0, 3), x_t [3, 6), x_f x_k1 x_k2 [6, 9).
constexpr int kTangentSize = 9;

LINALG_HD void snavely_frame(const double* camera, double* frame) {
  const bool rodrigues = snavely_rotation(camera, frame, frame + kFrameJl);
  for (int k = 0; k < 6; ++k) frame[9 + k] = camera[3 + k];
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
  SnavelyImage image;   // p, |p|^2, distortion, A = d prediction / d P
};

// False when X is at the camera's depth zero (no projection).
LINALG_HD bool snavely_view(const double* frame, const double* X, SnavelyView* view) {
  const double* R = frame;
  double P[3];
  for (int i = 0; i < 3; ++i) P[i] = R[3 * i] * X[0] + R[3 * i + 1] * X[1] + R[3 * i + 2] * X[2];
  const bool rodrigues = frame[kFrameRodrigues] != 0.0;
  for (int i = 0; i < 3; ++i) {
    view->v[i] = rodrigues ? P[i] : X[i];
    P[i] += frame[9 + i];
  }
  if (P[2] == 0.0) return false;
  const double f = frame[12];
  view->image = snavely_image(P, f, frame[13], frame[14], true);
  for (int a = 0; a < 2; ++a) view->prediction[a] = f * view->image.distortion * view->image.p[a];
  return true;
}

// u = J_c x, the camera's tangent t of x: dP/dr x_r = -[v]x (J_l x_r) = (J_l x_r) x v, so
// u = A ((J_l x_r) x v + x_t) + p (d x_f + f |p|^2 x_k1 + f |p|^4 x_k2).
LINALG_HD void camera_jacobian_times(const SnavelyView& view, const double* frame, const double* tangent, double* u) {
  const double* w = tangent;
  const double* v = view.v;
  const double e[3] = {w[1] * v[2] - w[2] * v[1] + tangent[3], w[2] * v[0] - w[0] * v[2] + tangent[4],
                       w[0] * v[1] - w[1] * v[0] + tangent[5]};
  const SnavelyImage& im = view.image;
  const double f = frame[12];
  const double radial = im.distortion * tangent[6] + f * im.rr * (tangent[7] + im.rr * tangent[8]);
  for (int a = 0; a < 2; ++a) u[a] = im.A[3 * a] * e[0] + im.A[3 * a + 1] * e[1] + im.A[3 * a + 2] * e[2] + im.p[a] * radial;
}

// J_c' u summed over a camera's residuals in a form that leaves out the camera's constants (J_l, f):
// with b = A' u, acc += (v x b, b, d p.u, |p|^2 p.u, |p|^4 p.u); camera_jacobian_transpose_finish
// turns the sums into sum J_c' u, since dP/dr' b = J_l' [v]x b = J_l' (v x b).
LINALG_HD void camera_jacobian_transpose_accumulate(const SnavelyView& view, const double* u, double* acc) {
  const SnavelyImage& im = view.image;
  const double* v = view.v;
  double b[3];
  for (int j = 0; j < 3; ++j) b[j] = im.A[j] * u[0] + im.A[3 + j] * u[1];
  acc[0] += v[1] * b[2] - v[2] * b[1];
  acc[1] += v[2] * b[0] - v[0] * b[2];
  acc[2] += v[0] * b[1] - v[1] * b[0];
  for (int j = 0; j < 3; ++j) acc[3 + j] += b[j];
  const double pu = im.p[0] * u[0] + im.p[1] * u[1];
  acc[6] += im.distortion * pu;
  acc[7] += im.rr * pu;
  acc[8] += im.rr * im.rr * pu;
}

// The point pass's form of u = J_c x (snavely_schur_kernels.cuh): there the lanes of a warp see
// different cameras, so what is read per residual must be small. Per residual, stored once per
// Jacobian in point order: p (2), 1/P_z and v (3), kCompactViewSize values; everything else is per
// camera: the tangent of x with f, k1, k2 (kCameraTangentSize values, formed once per product).
// With M = d prediction / d p = f (d I + g p p'), g = 2 (k1 + 2 k2 |p|^2), and d p / d P e =
// -1/P_z (e_x + p_x e_z, e_y + p_y e_z) =: delta, camera_jacobian_times' A e is M delta, so
//   u = f (d delta + g p (p . delta)) + p (d x_f + f |p|^2 (x_k1 + |p|^2 x_k2)),  e = (J_l x_r) x v + x_t.
constexpr int kCompactViewSize = 6;     // p0 p1 1/P_z v0 v1 v2
constexpr int kCameraTangentSize = 12;  // the tangent (kTangentSize), then f k1 k2

LINALG_HD void compact_view(const SnavelyView& view, const double* frame, const double* X, double* out) {
  // P_z again from the frame, as snavely_view formed it (it keeps only the image quantities).
  const double* R = frame;
  const double Pz = R[6] * X[0] + R[7] * X[1] + R[8] * X[2] + frame[11];
  out[0] = view.image.p[0];
  out[1] = view.image.p[1];
  out[2] = 1.0 / Pz;
  for (int j = 0; j < 3; ++j) out[3 + j] = view.v[j];
}

// x: the camera's 9 values of the vector (Jacobi-scaled already).
LINALG_HD void camera_tangent(const double* frame, const double* x, double* out) {
  snavely_tangent(frame, x, out);
  for (int k = 0; k < 3; ++k) out[kTangentSize + k] = frame[12 + k];
}

// view: compact_view's values; camera: camera_tangent's.
LINALG_HD void compact_jacobian_times(const double* view, const double* camera, double* u) {
  const double p0 = view[0], p1 = view[1], iz = view[2];
  const double* v = view + 3;
  const double* w = camera;
  const double f = camera[kTangentSize], k1 = camera[kTangentSize + 1], k2 = camera[kTangentSize + 2];
  const double rr = p0 * p0 + p1 * p1;
  const double d = 1.0 + rr * (k1 + k2 * rr), g = 2.0 * (k1 + 2.0 * k2 * rr);
  const double e0 = w[1] * v[2] - w[2] * v[1] + camera[3], e1 = w[2] * v[0] - w[0] * v[2] + camera[4],
               e2 = w[0] * v[1] - w[1] * v[0] + camera[5];
  const double delta0 = -iz * (e0 + p0 * e2), delta1 = -iz * (e1 + p1 * e2);
  const double pd = p0 * delta0 + p1 * delta1;
  const double radial = d * camera[6] + f * rr * (camera[7] + rr * camera[8]);
  u[0] = f * (d * delta0 + g * p0 * pd) + p0 * radial;
  u[1] = f * (d * delta1 + g * p1 * pd) + p1 * radial;
}

LINALG_HD void camera_jacobian_transpose_finish(const double* frame, const double* acc, double* out) {
  const double* Jl = frame + kFrameJl;
  for (int j = 0; j < 3; ++j) out[j] = Jl[j] * acc[0] + Jl[3 + j] * acc[1] + Jl[6 + j] * acc[2];
  for (int j = 3; j < 7; ++j) out[j] = acc[j];
  out[7] = frame[12] * acc[7];
  out[8] = frame[12] * acc[8];
}

}  // namespace ceres_cuda::detail
