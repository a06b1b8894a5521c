#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): the preconditioner's camera blocks for
// BAL-sized blocks (SCHUR_JACOBI: the diagonal blocks of the Schur complement, U + D^2 - W V^-1 W';
// JACOBI: U + D^2), over the camera pass's chunks (schur_product_kernels.cuh): a block per chunk of
// one camera's residuals sums their parts in registers, then a thread per camera adds its chunks in
// order, adds D^2 and inverts. camera_blocks_kernel, a warp per camera with arrays sized for any
// camera, remains for other sizes, for repeated camera-point pairs and for DENSE_SCHUR; its arrays live
// in local memory (7 ms a solve at Venice scale on the H100, against about 1 ms here).
//
// Without repeated camera-point pairs, W V^-1 W' of a camera is a sum over its residuals, so residual
// i adds F_i' N_i F_i with N_i = I - E_i V_p^-1 E_i' (N_i = I for JACOBI or a constant point).
#include "schur_math.h"
#include "schur_product_kernels.cuh"

namespace ceres_cuda::detail {
namespace {

template <int M, int C>
struct CameraBlockTerms : StreamedCameraTerms {  // a residual at a time: the registers go to the 45 sums
  static constexpr int kSums = C * (C + 1) / 2;  // the lower triangle, row by row
  static constexpr int kMinBlocks = 1;
  Shape s;
  const double* F;
  const double* E;
  const double* Vinv;
  bool schur;
  __device__ __forceinline__ void add(const Camera&, int i, const Fetched&, double (&acc)[kSums]) const {
    double f[M][C];
#pragma unroll
    for (int a = 0; a < M; ++a)
#pragma unroll
      for (int k = 0; k < C; ++k) f[a][k] = F[static_cast<std::size_t>(a * C + k) * s.R + i];
    double N[M][M];
#pragma unroll
    for (int a = 0; a < M; ++a)
#pragma unroll
      for (int b = 0; b < M; ++b) N[a][b] = a == b ? 1.0 : 0.0;
    const int p = s.point_of[i];
    if (schur && p >= 0) {
      double V[9], ev[M][3];
#pragma unroll
      for (int k = 0; k < 9; ++k) V[k] = Vinv[static_cast<std::size_t>(k) * s.P + p];
#pragma unroll
      for (int a = 0; a < M; ++a)
#pragma unroll
        for (int q = 0; q < 3; ++q) {
          ev[a][q] = 0.0;
#pragma unroll
          for (int r = 0; r < 3; ++r) ev[a][q] += E[static_cast<std::size_t>(3 * a + r) * s.R + i] * V[3 * r + q];
        }
#pragma unroll
      for (int a = 0; a < M; ++a)
#pragma unroll
        for (int b = 0; b < M; ++b)
#pragma unroll
          for (int q = 0; q < 3; ++q) N[a][b] -= ev[a][q] * E[static_cast<std::size_t>(3 * b + q) * s.R + i];
    }
    int t = 0;
#pragma unroll
    for (int j = 0; j < C; ++j) {
      double nf[M];  // (N F)(:, j)
#pragma unroll
      for (int b = 0; b < M; ++b) {
        nf[b] = 0.0;
#pragma unroll
        for (int a = 0; a < M; ++a) nf[b] += N[b][a] * f[a][j];
      }
#pragma unroll
      for (int k = 0; k <= j; ++k, ++t)
#pragma unroll
        for (int b = 0; b < M; ++b) acc[t] += nf[b] * f[b][k];
    }
  }

  __device__ __forceinline__ void finish(const Camera&, const double (&sums)[kSums], double* out) const {
#pragma unroll
    for (int t = 0; t < kSums; ++t) out[t] = sums[t];
  }
};

// Per camera: its chunks' sums in order, + D^2, inverted (regularised if need be), continuous-element.
template <int C>
__global__ void camera_block_sum_kernel(Shape s, const int* __restrict__ camera_chunk_start,
                                        const double* __restrict__ partial, const double* __restrict__ d2,
                                        double* __restrict__ blocks, int* singular) {
  constexpr int kSums = C * (C + 1) / 2;
  for (int cam = blockIdx.x * kThreads + threadIdx.x; cam < s.C; cam += gridDim.x * kThreads) {
    double S[C * C], d2c[C], work[C * C];
    for (int j = 0, t = 0; j < C; ++j)
      for (int k = 0; k <= j; ++k, ++t) {
        double total = 0.0;
        for (int chunk = camera_chunk_start[cam]; chunk < camera_chunk_start[cam + 1]; ++chunk)
          total += partial[static_cast<std::size_t>(chunk) * kSums + t];
        S[j * C + k] = total;
      }
    for (int k = 0; k < C; ++k) d2c[k] = d2[cam_at(s, cam, k)];
    camera_block_finish(C, d2c, S);
    if (invert_spd_regularised(S, C, work) > 0) atomicAdd(singular, 1);
    for (int k = 0; k < C * C; ++k) blocks[static_cast<std::size_t>(k) * s.C + cam] = S[k];
  }
}

}  // namespace
}  // namespace ceres_cuda::detail
