#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): the fast path's kernels outside the
// Schur product, in grid-stride loops. The observations' split at set-up; the evaluation of
// SnavelyReprojectionError with its loss (residuals, Jacobians in the continuous-element layout, cost
// per residual); the gradient's point part with E's column norms; the Jacobi scaling; the LM
// diagonal; the point blocks V^-1 and the cameras' preconditioner blocks (a warp per camera); the
// candidate's parameters, the model cost and the back-substitution. No floating-point atomics.
#include <cstddef>

#include "engine_kernel_support.cuh"
#include "robust_loss.h"
#include "schur_block_kernels.cuh"
#include "schur_math.h"
#include "snavely_projection.h"

namespace ceres_cuda::detail {
namespace {

// ---- set-up: n interleaved pairs into two halves (out[i] = in[2 i], out[n + i] = in[2 i + 1]).
__global__ void deinterleave_kernel(int n, const double* __restrict__ in, double* __restrict__ out) {
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) {
    out[i] = in[2 * static_cast<std::size_t>(i)];
    out[static_cast<std::size_t>(n) + i] = in[2 * static_cast<std::size_t>(i) + 1];
  }
}

// ---- evaluation (fast path): residual, Jacobians, loss, cost per residual.
__global__ void __launch_bounds__(kThreads) snavely_kernel(Shape s, const double* __restrict__ cameras,
                                                           const double* __restrict__ points,
                                                           const double* __restrict__ observations, BuiltinLoss loss,
                                                           bool jacobians, const double* __restrict__ scaling,
                                                           double* __restrict__ f,
                                                           double* __restrict__ F, double* __restrict__ E,
                                                           double* __restrict__ cost, int* failed) {
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < s.R; i += gridDim.x * kThreads) {
    const double* camera = cameras + static_cast<std::size_t>(s.camera_param[i]) * kSnavelyCameraSize;
    const double* point = points + 3 * static_cast<std::size_t>(s.point_param[i]);
    double r[2], jc[18], jp[6];
    const bool ok = snavely_residual(camera, point, observations[i], observations[s.R + i], r,
                                     jacobians ? jc : nullptr, jacobians ? jp : nullptr);
    const double sq = r[0] * r[0] + r[1] * r[1];
    bool finite = ok && isfinite(sq);
    if (jacobians)
      for (int k = 0; k < 18; ++k) finite = finite && isfinite(jc[k]);
    if (!finite) {
      atomicAdd(failed, 1);
      cost[i] = 0.0;
      continue;
    }
    double rho[3];
    loss.evaluate(sq, rho);
    cost[i] = 0.5 * rho[0];
    if (loss.kind != LossKind::None) {
      const LossCorrection corr = loss_correction(sq, rho);
      if (jacobians) {
        correct_jacobian(corr, r, 2, 9, [&jc](int a, int k) -> double& { return jc[a * 9 + k]; });
        correct_jacobian(corr, r, 2, 3, [&jp](int a, int k) -> double& { return jp[a * 3 + k]; });
      }
      r[0] *= corr.residual_scaling;
      r[1] *= corr.residual_scaling;
    }
    f[i] = r[0];
    f[s.R + i] = r[1];
    if (!jacobians) continue;
    // With the Jacobi scaling (null: none yet), the scaled columns J diag(s).
    const int cam = s.camera_of[i], pt = s.point_of[i];
    if (cam >= 0)
      for (int k = 0; k < 18; ++k)
        F[static_cast<std::size_t>(k) * s.R + i] = scaling ? jc[k] * scaling[cam_at(s, cam, k % 9)] : jc[k];
    if (pt >= 0)
      for (int k = 0; k < 6; ++k)
        E[static_cast<std::size_t>(k) * s.R + i] = scaling ? jp[k] * scaling[static_cast<std::size_t>(s.C) * s.c + pt_at(s, pt, k % 3)] : jp[k];
  }
}

// The gradient's point part, out_p = sum_i E_i' f_i, and the squared column norms of E (one thread per
// point).
__global__ void __launch_bounds__(kThreads) point_gradient_kernel(Shape s, const double* __restrict__ E,
                                                                  const double* __restrict__ f, double* __restrict__ out,
                                                                  double* __restrict__ norms) {
  for (int p = blockIdx.x * kThreads + threadIdx.x; p < s.P; p += gridDim.x * kThreads) {
    double g[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    for (int t = s.point_start[p]; t < s.point_start[p + 1]; ++t) {
      const int i = s.point_residuals[t];
      for (int a = 0; a < s.m; ++a) {
        const double v = f[static_cast<std::size_t>(a) * s.R + i];
        for (int q = 0; q < 3; ++q) {
          const double e = E[static_cast<std::size_t>(3 * a + q) * s.R + i];
          g[q] += e * v;
          n[q] += e * e;
        }
      }
    }
    for (int q = 0; q < 3; ++q) {
      out[pt_at(s, p, q)] = g[q];
      norms[pt_at(s, p, q)] = n[q];
    }
  }
}

// out_p = Vinv_p (s_p .* g_p): the right-hand side's V^-1 E'f from the gradient's point part g = E'f of
// the unscaled Jacobian (E scaled is E diag(s_p)), without another pass over the residuals.
__global__ void scaled_point_inverse_kernel(Shape s, const double* __restrict__ Vinv, const double* __restrict__ scaling,
                                            const double* __restrict__ g, double* __restrict__ out) {
  for (int p = blockIdx.x * kThreads + threadIdx.x; p < s.P; p += gridDim.x * kThreads) {
    double sg[3];
    for (int q = 0; q < 3; ++q) sg[q] = scaling[pt_at(s, p, q)] * g[pt_at(s, p, q)];
    for (int r = 0; r < 3; ++r) {
      double v = 0.0;
      for (int q = 0; q < 3; ++q) v += Vinv[static_cast<std::size_t>(3 * r + q) * s.P + p] * sg[q];
      out[pt_at(s, p, r)] = v;
    }
  }
}

// The gradient and the squared column norms of a Jacobian evaluated scaled (J diag(s)): s .* g and
// s.^2 .* n, divided back (s is in (0, 1]).
__global__ void unscale_kernel(std::size_t n, const double* __restrict__ scaling, double* __restrict__ gradient,
                               double* __restrict__ norms) {
  for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * kThreads) {
    gradient[i] /= scaling[i];
    norms[i] /= scaling[i] * scaling[i];
  }
}

// Jacobi scaling from the squared column norms.
__global__ void scaling_kernel(std::size_t n, const double* __restrict__ norms, double* __restrict__ scaling) {
  for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * kThreads)
    scaling[i] = 1.0 / (1.0 + sqrt(norms[i]));
}

__global__ void __launch_bounds__(kThreads) scale_columns_kernel(Shape s, const double* __restrict__ scaling,
                                                                 double* __restrict__ F, double* __restrict__ E) {
  const double* point_scaling = scaling + static_cast<std::size_t>(s.C) * s.c;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < s.R; i += gridDim.x * kThreads) {
    const int cam = s.camera_of[i], pt = s.point_of[i];
    for (int a = 0; a < s.m; ++a) {
      if (cam >= 0)
        for (int k = 0; k < s.c; ++k) F[static_cast<std::size_t>(a * s.c + k) * s.R + i] *= scaling[cam_at(s, cam, k)];
      if (pt >= 0)
        for (int q = 0; q < 3; ++q) E[static_cast<std::size_t>(3 * a + q) * s.R + i] *= point_scaling[pt_at(s, pt, q)];
    }
  }
}

// diag = clamp(column norms of the scaled Jacobian) (unless reused), d2 = sqrt(diag / radius)^2. The
// scaled Jacobian's squared column norms are those of the Jacobian (norms, taken at its evaluation)
// times the squared scaling: the same to rounding, without another pass over the Jacobian.
__global__ void lm_diagonal_kernel(std::size_t n, bool recompute, double min_d, double max_d, double radius,
                                   const double* __restrict__ norms, const double* __restrict__ scaling,
                                   double* __restrict__ diagonal, double* __restrict__ d2) {
  for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * kThreads) {
    if (recompute) diagonal[i] = fmin(fmax(norms[i] * (scaling[i] * scaling[i]), min_d), max_d);
    const double d = sqrt(diagonal[i] / radius);
    d2[i] = d * d;
  }
}

// V_p = E'E + D_p^2, inverted (regularised if need be), continuous-element layout.
__global__ void __launch_bounds__(kThreads) point_blocks_kernel(Shape s, const double* __restrict__ E,
                                                                const double* __restrict__ d2_points,
                                                                double* __restrict__ Vinv, int* singular) {
  for (int p = blockIdx.x * kThreads + threadIdx.x; p < s.P; p += gridDim.x * kThreads) {
    double V[9], inverse[9];
    const ResidualRange r{s.point_residuals, s.point_start[p], s.point_start[p + 1]};
    const double d2p[3] = {d2_points[pt_at(s, p, 0)], d2_points[pt_at(s, p, 1)], d2_points[pt_at(s, p, 2)]};
    point_block(soa(E, s.R), s.m, r, d2p, V);
    if (invert_spd3(V, inverse) > 0) atomicAdd(singular, 1);
    for (int k = 0; k < 9; ++k) Vinv[static_cast<std::size_t>(k) * s.P + p] = inverse[k];
  }
}

// The preconditioner's camera blocks, of S (schur) or U + D^2: one warp per camera accumulates, lane 0
// finishes and inverts (regularised if need be); written in the continuous-element layout to out (c*c
// per camera).
__global__ void __launch_bounds__(kThreads) camera_blocks_kernel(Shape s, const double* __restrict__ F,
                                                                 const double* __restrict__ E,
                                                                 const double* __restrict__ Vinv,
                                                                 const double* __restrict__ d2, bool schur,
                                                                 double* __restrict__ out, int* singular) {
  const int lane = threadIdx.x & 31;
  for (int cam = (blockIdx.x * kThreads + threadIdx.x) / 32; cam < s.C; cam += gridDim.x * kWarpsPerBlock) {
    double S[kMaxCameraSize * kMaxCameraSize];
    const int cc = s.c * s.c;
    for (int k = 0; k < cc; ++k) S[k] = 0.0;
    const ResidualRange r{s.camera_residuals, s.camera_start[cam] + lane, s.camera_start[cam + 1], 32};
    camera_block_accumulate(soa(F, s.R), soa(E, s.R), soa(Vinv, s.P), s.point_of, s.m, s.c, r, schur, s.pairs, S);
    for (int j = 0; j < s.c; ++j)
      for (int k = 0; k <= j; ++k) S[j * s.c + k] = warp_sum(S[j * s.c + k]);
    if (lane != 0) continue;
    double d2c[kMaxCameraSize];
    for (int k = 0; k < s.c; ++k) d2c[k] = d2[cam_at(s, cam, k)];
    camera_block_finish(s.c, d2c, S);
    double work[kMaxCameraSize * kMaxCameraSize];
    if (invert_spd_regularised(S, s.c, work) > 0) atomicAdd(singular, 1);  // an integer count: exact
    for (int k = 0; k < cc; ++k) out[static_cast<std::size_t>(k) * s.C + cam] = S[k];
  }
}

// candidate = x + delta: parameters in their natural layout, delta continuous-element.
__global__ void apply_delta_kernel(Shape s, const double* __restrict__ cameras, const double* __restrict__ points,
                                   const double* __restrict__ delta, double* __restrict__ candidate_cameras,
                                   double* __restrict__ candidate_points) {
  const std::size_t camera_values = static_cast<std::size_t>(s.C) * s.c;
  const std::size_t n = camera_values + 3 * static_cast<std::size_t>(s.P);
  for (std::size_t j = blockIdx.x * std::size_t(kThreads) + threadIdx.x; j < n; j += std::size_t(gridDim.x) * kThreads) {
    if (j < camera_values) {
      const int cam = static_cast<int>(j % s.C), k = static_cast<int>(j / s.C);
      const std::size_t at = static_cast<std::size_t>(cam) * s.c + k;
      candidate_cameras[at] = cameras[at] + delta[j];
    } else {
      const std::size_t jp = j - camera_values;
      const int p = static_cast<int>(jp % s.P), q = static_cast<int>(jp / s.P);
      const std::size_t at = 3 * static_cast<std::size_t>(p) + q;
      candidate_points[at] = points[at] + delta[j];
    }
  }
}

// Per residual: -(J s)'(f + J s / 2) (scaled J and step).
__global__ void __launch_bounds__(kThreads) model_cost_kernel(Shape s, const double* __restrict__ F,
                                                              const double* __restrict__ E, const double* __restrict__ f,
                                                              const double* __restrict__ step, double* __restrict__ out) {
  const double* step_points = step + static_cast<std::size_t>(s.C) * s.c;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < s.R; i += gridDim.x * kThreads) {
    double sum = 0.0;
    for (int a = 0; a < s.m; ++a) {
      const double js = camera_term(s, F, i, a, step) + point_term(s, E, i, a, step_points);
      sum += js * (f[static_cast<std::size_t>(a) * s.R + i] + 0.5 * js);
    }
    out[i] = -sum;
  }
}

// step = -(y_c, y_p) with y_p = e - w (the back-substitution: e = V^-1 E'f, w = V^-1 E'F y_c);
// delta = step .* scaling; count non-finite entries.
__global__ void finish_step_kernel(std::size_t camera_values, std::size_t n, const double* __restrict__ yc,
                                   const double* __restrict__ e, const double* __restrict__ w,
                                   const double* __restrict__ scaling, double* __restrict__ step,
                                   double* __restrict__ delta, int* nonfinite) {
  for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * kThreads) {
    const double v = -(i < camera_values ? yc[i] : e[i - camera_values] - w[i - camera_values]);
    step[i] = v;
    delta[i] = v * scaling[i];
    if (!isfinite(v)) atomicAdd(nonfinite, 1);
  }
}

}  // namespace
}  // namespace ceres_cuda::detail
