#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): the launch shape, the index arrays the
// kernels take by value, the continuous-element indexing of the vectors over the variables, and the
// per-residual and per-warp helpers that several kernels share.
#include <algorithm>
#include <cstddef>

#include "linalg_cuda/internal/deterministic_reduce.cuh"
#include "linalg_cuda/internal/launch_geometry.h"
#include "schur_math.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::detail::blocks_for;
using linalg_cuda::detail::warp_sum;
constexpr int kThreads = linalg_cuda::detail::kThreadsPerBlock;
constexpr int kWarpsPerBlock = kThreads / 32;

// Index arrays and sizes the kernels need, by value.
struct Shape {
  int R, C, P, c, m;
  const int* camera_of;
  const int* point_of;
  const int* camera_param;
  const int* point_param;
  const int* camera_start;
  const int* camera_residuals;
  const int* point_start;
  const int* point_residuals;
  RepeatedPairs pairs;  // residuals of a camera that share its point (null when none do)
};

__device__ __forceinline__ ConstBlocks soa(const double* data, int count) { return ConstBlocks(data, count, 1); }

// Vectors over the variables are continuous-element too: entry k of camera c at k * C + c, then
// entry q of point p at C * c_size + q * P + p (cam_at / pt_at index the camera and point parts).
__host__ __device__ __forceinline__ std::size_t cam_at(const Shape& s, int cam, int k) {
  return static_cast<std::size_t>(k) * s.C + cam;
}
__host__ __device__ __forceinline__ std::size_t pt_at(const Shape& s, int p, int q) {
  return static_cast<std::size_t>(q) * s.P + p;
}

// ---- per-residual helpers in the continuous-element layout.
__device__ __forceinline__ double camera_term(const Shape& s, const double* F, int i, int a, const double* x) {
  const int cam = s.camera_of[i];
  if (cam < 0 || x == nullptr) return 0.0;
  double v = 0.0;
  for (int k = 0; k < s.c; ++k) v += F[static_cast<std::size_t>(a * s.c + k) * s.R + i] * x[cam_at(s, cam, k)];
  return v;
}

__device__ __forceinline__ double point_term(const Shape& s, const double* E, int i, int a, const double* w) {
  const int pt = s.point_of[i];
  if (pt < 0 || w == nullptr) return 0.0;
  double v = 0.0;
  for (int q = 0; q < 3; ++q) v += E[static_cast<std::size_t>(3 * a + q) * s.R + i] * w[pt_at(s, pt, q)];
  return v;
}

// The Schur product's kernels inside the PCG's loop get the CG's status
// (FusedCgOperator::apply_unless_stopped): nonzero once its iterations have stopped, and then the
// products the loop runs before its next test return at once. Null elsewhere: always run.
__device__ __forceinline__ bool cg_has_stopped(const int* stopped) { return stopped != nullptr && *stopped != 0; }

}  // namespace
}  // namespace ceres_cuda::detail
