#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): the fast path's Schur product
// (schur_product_kernels.cuh) without reading the stored camera Jacobian blocks F
// (snavely_jacobian_products.h).
//  - The camera pass, y_c = sum F_i' v_i + D_c^2 x_c, forms each F_i from the camera's frame and the
//    point. A camera's residuals are consecutive, so all threads of a chunk share one frame (read once,
//    from cache) and each reads only its point (3 values) and v: about 80 bytes a residual instead of
//    the 180 of the stored blocks.
//  - The point pass forms u = F_i x from 6 values per residual stored in point order once per Jacobian
//    (the compact view) and its camera's tangent of x (12 values, formed once per product): the lanes
//    of a warp see residuals of different cameras, so per-lane frames (28 values) cost more than
//    streaming F did, while these 12 come from cache. It still streams E.
// Measured on the H100 at Venice scale: 0.926 -> 0.724 ms per PCG iteration for the compact point
// pass (docs/ceres_cuda.md).
//
// The blocks are the ones the evaluation stored: Snavely Jacobians corrected for the loss (Ceres'
// Corrector as an operator C, robust_loss.h) and Jacobi-scaled, F_s = C J_c diag(s_c). So
//   y = F_s' v = s_c .* J_c' (C v),  and for a residual whose point is constant  v = F_s x = C J_c (s_c .* x).
// The loss needs the residual, so with a loss the pass reads the observations too.
#include "robust_loss.h"
#include "schur_product_kernels.cuh"
#include "snavely_jacobian_products.h"

namespace ceres_cuda::detail {
namespace {

// Once per Jacobian: the frame of every variable camera (from its parameter block, natural layout;
// variable cameras and points come first, so a variable index is also the parameter block's).
__global__ void camera_frames_kernel(int cameras, const double* __restrict__ params, double* __restrict__ frames) {
  for (int cam = blockIdx.x * kThreads + threadIdx.x; cam < cameras; cam += gridDim.x * kThreads)
    snavely_frame(params + static_cast<std::size_t>(cam) * kSnavelyCameraSize,
                  frames + static_cast<std::size_t>(cam) * kFrameSize);
}

// Once per Jacobian, after the frames: the point pass's per-residual values in point order (entry k
// of slot q at k * slots + q): the compact view (snavely_jacobian_products.h) and, with a loss, the
// correction's sqrt_rho1, alpha_sq_norm and the residual. Zeros for a slot whose camera is constant.
__global__ void compact_views_kernel(Shape s, int slots, const int* __restrict__ slot_camera,
                                     const double* __restrict__ frames, const double* __restrict__ points,
                                     BuiltinLoss loss, const double* __restrict__ observations,
                                     double* __restrict__ views, double* __restrict__ corrections) {
  for (int q = blockIdx.x * kThreads + threadIdx.x; q < slots; q += gridDim.x * kThreads) {
    const int cam = slot_camera[q];
    double out[kCompactViewSize] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, correction[4] = {1.0, 0.0, 0.0, 0.0};
    if (cam >= 0) {
      const int i = s.point_residuals[q];
      const double* frame = frames + static_cast<std::size_t>(cam) * kFrameSize;
      const double* X = points + 3 * static_cast<std::size_t>(s.point_param[i]);
      SnavelyView view;
      snavely_view(frame, X, &view);  // off depth zero: the evaluation at these parameters succeeded
      compact_view(view, frame, X, out);
      if (loss.kind != LossKind::None) {
        const double r[2] = {view.prediction[0] - observations[i], view.prediction[1] - observations[s.R + i]};
        const double sq = r[0] * r[0] + r[1] * r[1];
        double rho[3];
        loss.evaluate(sq, rho);
        const LossCorrection c = loss_correction(sq, rho);
        correction[0] = c.sqrt_rho1;
        correction[1] = c.alpha_sq_norm;
        correction[2] = r[0];
        correction[3] = r[1];
      }
    }
    for (int k = 0; k < kCompactViewSize; ++k) views[static_cast<std::size_t>(k) * slots + q] = out[k];
    if (corrections)
      for (int k = 0; k < 4; ++k) corrections[static_cast<std::size_t>(k) * slots + q] = correction[k];
  }
}

// Once per Schur product: every variable camera's tangent of the Jacobi-scaled x with f, k1, k2.
__global__ void camera_tangents_kernel(Shape s, const double* __restrict__ frames, const double* __restrict__ scaling,
                                       const double* __restrict__ x, double* __restrict__ tangents) {
  for (int cam = blockIdx.x * kThreads + threadIdx.x; cam < s.C; cam += gridDim.x * kThreads) {
    double xs[kSnavelyCameraSize];
    for (int k = 0; k < kSnavelyCameraSize; ++k) xs[k] = scaling[cam_at(s, cam, k)] * x[cam_at(s, cam, k)];
    camera_tangent(frames + static_cast<std::size_t>(cam) * kFrameSize, xs,
                   tangents + static_cast<std::size_t>(cam) * kCameraTangentSize);
  }
}

// The point pass's terms on the fast path: u = F_s x from the slot's compact view and its camera's
// tangent (about 48 bytes a residual, 80 with a loss, instead of F's 144), then E as stored.
struct SnavelyPointTerms : StoredPointTerms<2, 9> {
  static constexpr int kMinBlocks = 4;  // 62 registers; 3 blocks (72) ran the same on the H100
  const double* views;        // compact_views_kernel's
  const double* corrections;  // likewise; null without a loss
  const double* tangents;     // camera_tangents_kernel's

  __device__ __forceinline__ void load(int q, Slot& slot) const {
    slot.u[0] = slot.u[1] = 0.0;
    const int cam = slot_camera[q];
    if (cam < 0) return;
    double view[kCompactViewSize], camera[kCameraTangentSize];
    for (int k = 0; k < kCompactViewSize; ++k) view[k] = views[static_cast<std::size_t>(k) * slots + q];
    for (int k = 0; k < kCameraTangentSize; ++k) camera[k] = tangents[static_cast<std::size_t>(cam) * kCameraTangentSize + k];
    compact_jacobian_times(view, camera, slot.u);
    if (corrections) {
      LossCorrection c;
      c.sqrt_rho1 = corrections[q];
      c.alpha_sq_norm = corrections[static_cast<std::size_t>(slots) + q];
      const double r[2] = {corrections[2 * static_cast<std::size_t>(slots) + q], corrections[3 * static_cast<std::size_t>(slots) + q]};
      apply_correction(c, r, 2, slot.u);
    }
  }
};

struct SnavelyCameraTerms {
  static constexpr int kSums = 9;
  static constexpr int kMinBlocks = 2;  // 3 (80 registers) spilled and ran slower on the H100
  // Two residuals' gathers in flight a thread: 233 us a launch against 298 us one at a time at Venice
  // scale on the H100 (with the single-barrier block sums); four, at 1 block per multiprocessor
  // (204 registers), or with the points padded to 32 bytes, made no difference.
  static constexpr int kBatch = 2;
  Shape s;
  const double* points;        // parameter blocks, natural layout
  const double* frames;        // per variable camera
  const double* scaling;       // Jacobi scaling, continuous-element like the variables
  BuiltinLoss loss;
  const double* observations;  // residual order (x of residual i at i, y at R + i); read with a loss only
  const int* residual_slot;
  const double* x;
  const double* v;
  struct Camera {
    int cam;
  };
  struct Fetched {
    double X[3];    // the point
    double u[2];    // v of its slot (a variable point)
    double obs[2];  // the observation (with a loss)
    int q;          // the slot, or -1 for a constant point
  };

  __device__ __forceinline__ const double* frame(int cam) const { return frames + static_cast<std::size_t>(cam) * kFrameSize; }

  __device__ __forceinline__ Camera camera(int i) const { return {s.camera_of[i]}; }

  __device__ __forceinline__ void fetch(const Camera&, int i, Fetched& f) const {
    const double* X = points + 3 * static_cast<std::size_t>(s.point_param[i]);
    for (int j = 0; j < 3; ++j) f.X[j] = X[j];
    f.q = residual_slot[i];
    if (f.q >= 0) {
      f.u[0] = v[2 * static_cast<std::size_t>(f.q)];
      f.u[1] = v[2 * static_cast<std::size_t>(f.q) + 1];
    }
    if (loss.kind != LossKind::None) {
      f.obs[0] = observations[i];
      f.obs[1] = observations[s.R + i];
    }
  }

  __device__ __forceinline__ void add(const Camera& camera, int, const Fetched& f, double (&acc)[kSums]) const {
    const double* frame = this->frame(camera.cam);
    SnavelyView view;
    // The evaluation at these parameters succeeded, so the point is off the camera's depth zero.
    snavely_view(frame, f.X, &view);
    LossCorrection correction;
    double r[2];
    const bool robust = loss.kind != LossKind::None;
    if (robust) {
      r[0] = view.prediction[0] - f.obs[0];
      r[1] = view.prediction[1] - f.obs[1];
      const double sq = r[0] * r[0] + r[1] * r[1];
      double rho[3];
      loss.evaluate(sq, rho);
      correction = loss_correction(sq, rho);
    }
    double u[2];
    if (f.q >= 0) {
      u[0] = f.u[0];
      u[1] = f.u[1];
    } else {  // a constant point: v = F_s x (rare: the tangent is formed here, per residual)
      double xs[kSnavelyCameraSize], tangent[kTangentSize];
      for (int k = 0; k < kSnavelyCameraSize; ++k) xs[k] = scaling[cam_at(s, camera.cam, k)] * x[cam_at(s, camera.cam, k)];
      snavely_tangent(frame, xs, tangent);
      camera_jacobian_times(view, frame, tangent, u);
      if (robust) apply_correction(correction, r, 2, u);
    }
    if (robust) apply_correction(correction, r, 2, u);
    camera_jacobian_transpose_accumulate(view, u, acc);
  }

  __device__ __forceinline__ void finish(const Camera& camera, const double (&sums)[kSums], double* out) const {
    double y[kSnavelyCameraSize];
    camera_jacobian_transpose_finish(frame(camera.cam), sums, y);
    for (int k = 0; k < kSnavelyCameraSize; ++k) out[k] = scaling[cam_at(s, camera.cam, k)] * y[k];
  }
};

}  // namespace
}  // namespace ceres_cuda::detail
