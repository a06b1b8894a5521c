#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): the fast path's camera pass of the Schur
// product (schur_product_kernels.cuh), y_c = sum F_i' v_i + D_c^2 x_c, with each F_i formed again
// from the camera and the point instead of read (snavely_jacobian_products.h). A camera's residuals are
// consecutive, so all threads of a chunk share one camera's frame (read once, from cache) and each
// reads only its point (3 values) and v: about 80 bytes a residual instead of the 180 of the stored
// blocks. (The point pass keeps reading stored blocks: there the lanes of a warp see residuals of
// different cameras, and gathering a frame per lane cost more than streaming F; measured on an H100,
// docs/ceres_cuda.md.)
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
