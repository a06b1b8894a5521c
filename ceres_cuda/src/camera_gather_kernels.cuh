#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): per-camera sums F' v outside the PCG
// loop for BAL-sized blocks, over the camera pass's chunks (schur_product_kernels.cuh): the
// gradient's camera part F'f together with the squared column norms of F (one pass over F at each
// Jacobian; the Jacobi scaling and the LM diagonal come from those norms), and the reduced system's
// right-hand side F'(f - E e). A block per chunk of one camera's residuals sums in registers, then
// camera_chunk_sum_kernel adds each camera's chunks in order: no atomics, the same bits every run.
// (A warp per camera, camera_gather_kernel, left most of the GPU idle at a few thousand cameras: 0.59
// ms a launch at Venice scale on the H100.) Other block sizes keep the warp-per-camera kernels.
#include "schur_product_kernels.cuh"

namespace ceres_cuda::detail {
namespace {

// v_i = f_i - E_i w_p (w null, or a constant point: v_i = f_i); with kNorms also sum F_i .* F_i.
template <int M, int C, bool kNorms>
struct CameraGatherTerms : StreamedCameraTerms {
  static constexpr int kSums = kNorms ? 2 * C : C;  // F' v, then the column norms
  static constexpr int kMinBlocks = 1;
  Shape s;
  const double* F;
  const double* E;
  const double* f;
  const double* w;  // per point, continuous-element; null: none
  __device__ __forceinline__ void add(const Camera&, int i, const Fetched&, double (&acc)[kSums]) const {
    const int p = w ? s.point_of[i] : -1;
#pragma unroll
    for (int a = 0; a < M; ++a) {
      double v = f[static_cast<std::size_t>(a) * s.R + i];
      if (p >= 0)
#pragma unroll
        for (int q = 0; q < 3; ++q) v -= E[static_cast<std::size_t>(3 * a + q) * s.R + i] * w[pt_at(s, p, q)];
#pragma unroll
      for (int k = 0; k < C; ++k) {
        const double F_ak = F[static_cast<std::size_t>(a * C + k) * s.R + i];
        acc[k] += F_ak * v;
        if constexpr (kNorms) acc[C + k] += F_ak * F_ak;
      }
    }
  }

  __device__ __forceinline__ void finish(const Camera&, const double (&sums)[kSums], double* out) const {
#pragma unroll
    for (int k = 0; k < kSums; ++k) out[k] = sums[k];
  }
};

}  // namespace
}  // namespace ceres_cuda::detail
