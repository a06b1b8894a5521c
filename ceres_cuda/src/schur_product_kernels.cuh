#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): what the implicit Schur product's
// passes share, whatever forms their terms: the point pass's finish per point, the camera pass's walk
// over chunks of a camera's residuals (plain, and staged through shared memory with cp.async), and the
// cameras' sums of their chunks with the damping and the PCG's p'Ap.
#include <cuda_pipeline.h>

#include "ba_layout.h"
#include "engine_kernel_support.cuh"
#include "linalg_cuda/internal/dependent_launch.cuh"
#include "linalg_cuda/internal/deterministic_reduce.cuh"

namespace ceres_cuda::detail {
namespace {

// ---- the Schur product S x = (U + D^2) x - W V^-1 W' x in two passes, each streaming its residuals
// in storage order:
//  1. the point pass, over the residuals in point order (grouped_point_pass_kernel.cuh): per point
//     g_p = sum E_q' F_q x_c, w_p = V_p^-1 g_p, left per point (scaled: w~ = s_p .* w_p);
//  2. the camera pass, over the residuals in camera order: y_c = sum F_i' (F_i x_c - E_i w_p) + D_c^2 x_c.
// Neither reads F or E: both form what they need from compact views of the residuals
// (snavely_schur_kernels.cuh). What a pass leaves (PointPassResult, each form its own kernel
// instance): w per point, the back-substitution's V^-1 E'F y_c (the same pass with y_c for x); or
// w~ = s_p .* w per point, for the camera pass. The point pass's Terms have
//   void scale_point(int p, double (&g)[3]) const;              the point's column scaling
//   void store_point(int p, const double (&w)[3]) const;       the per-point result
//   void scaled_inverse(int p, const double (&g)[3], double (&w)[3]) const;  w~ = s_p .* V^-1 (s_p .* g)
__device__ __forceinline__ void apply_point_inverse(const Shape& s, const double* Vinv, int p, const double (&g)[3],
                                                    double (&w)[3]) {
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    w[r] = 0.0;
#pragma unroll
    for (int j = 0; j < 3; ++j) w[r] += Vinv[static_cast<std::size_t>(3 * r + j) * s.P + p] * g[j];
  }
}

enum class PointPassResult { kPerPoint, kPerPointScaled };

// w_p into a per-point result (continuous-element, like the points' part of the variables).
__device__ __forceinline__ void store_point_result(const Shape& s, double* result, int p, const double (&w)[3]) {
#pragma unroll
  for (int j = 0; j < 3; ++j) result[pt_at(s, p, j)] = w[j];
}

// On the lane that has the point's sum g: w = V^-1 (s_p .* g) into the per-point result. The scaled
// form (in the PCG loop) reads w~ = (diag(s_p) V^-1 diag(s_p)) g in one product from Terms'
// scaled_inverse: 6 values a point where the scaling and V^-1 are 12.
template <PointPassResult kResult, class Terms>
__device__ __forceinline__ void finish_point(const Terms& terms, const double* Vinv, int p, double (&g)[3],
                                             double (&w)[3]) {
  if constexpr (kResult == PointPassResult::kPerPointScaled) {
    terms.scaled_inverse(p, g, w);
    terms.store_point(p, w);
  } else {
    terms.scale_point(p, g);
    apply_point_inverse(terms.s, Vinv, p, g, w);
    terms.store_point(p, w);
  }
}

// The camera pass in two steps. Cameras differ a lot in size (tens to thousands of residuals), so the
// residuals are cut into chunks of at most kChunk residuals of one camera; one block per chunk sums
// F_i' v_i over its residuals (a fixed-order block sum per entry), and then each camera adds up its
// chunks in order, plus D_c^2 x_c.
constexpr int kChunk = 4096;  // at Venice scale on the H100, 0.398 ms a PCG iteration in the loop against 0.407 with 2048

// The camera pass's walk over the chunks, whatever forms the residuals' terms. Terms has
//   static constexpr int kSums, kMinBlocks;                                  sums per chunk, blocks per SM
//   struct Camera; struct SharedCamera;                                      what a chunk's threads share of its camera
//   Camera camera(int i, SharedCamera&) const;                               per chunk, from its first residual i (called
//                                                                            by the whole block: it may fill SharedCamera
//                                                                            and wait for the block)
//   struct Fetched;                                                          a residual's inputs
//   void add(const Camera&, int i, const Fetched&, double (&acc)[kSums]) const;  residual i's part (of F_i' v_i)
//   void finish(const Camera&, const double (&sums)[kSums], double* out) const;   the chunk's values
// into partial, `stride` values per chunk; residuals(camera, begin, end, acc) walks a thread's
// residuals of the chunk (begin + threadIdx.x, then every kThreads), in order.
template <class Terms, class Residuals>
__device__ __forceinline__ void camera_chunks(const Shape& s, const int* __restrict__ chunk_begin, int chunks,
                                              const Terms& terms, double* __restrict__ partial, int stride,
                                              const Residuals& residuals) {
  constexpr int N = Terms::kSums;
  for (int chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    // Residuals are camera-major (see ba_layout.cpp): a chunk is a run of residual indices.
    const int begin = chunk_begin[chunk], end = chunk_begin[chunk + 1];
    __shared__ typename Terms::SharedCamera shared_camera;
    const typename Terms::Camera camera = terms.camera(begin, shared_camera);
    double acc[N];
#pragma unroll
    for (int k = 0; k < N; ++k) acc[k] = 0.0;
    residuals(camera, begin, end, acc);
    __shared__ double sums[N];  // thread 0's (shared memory rather than N more registers per thread)
    linalg_cuda::detail::block_sums<kThreads>(acc, sums);
    if (threadIdx.x == 0) terms.finish(camera, sums, partial + static_cast<std::size_t>(chunk) * stride);
  }
}

// camera_chunks with Terms' inputs loaded kBatch residuals at a time (Terms also has kBatch and
// void fetch(const Camera&, int i, Fetched&) const): all a thread's loads for the batch are issued before
// any is used, the sums still taking the residuals in order.
template <class Terms>
__global__ void __launch_bounds__(kThreads, Terms::kMinBlocks)
    camera_chunk_kernel(Terms terms, const int* chunk_begin, int chunks, double* partial, int stride,
                        const int* stopped) {
  if (cg_has_stopped(stopped)) return;
  camera_chunks(terms.s, chunk_begin, chunks, terms, partial, stride,
                [&](const typename Terms::Camera& camera, int begin, int end, double (&acc)[Terms::kSums]) {
                  for (int base = begin + threadIdx.x; base < end; base += Terms::kBatch * kThreads) {
                    typename Terms::Fetched fetched[Terms::kBatch];
#pragma unroll
                    for (int b = 0; b < Terms::kBatch; ++b)
                      if (base + b * kThreads < end) terms.fetch(camera, base + b * kThreads, fetched[b]);
#pragma unroll
                    for (int b = 0; b < Terms::kBatch; ++b)
                      if (base + b * kThreads < end) terms.add(camera, base + b * kThreads, fetched[b], acc);
                  }
                });
}

// The fast path's camera pass: camera_chunks' walk with each thread's inputs copied into shared memory
// ahead of use (cp.async), for Terms whose residuals gather by an index they stream. Terms has
//   static constexpr int kSums, kMinBlocks, kRing;   sums per chunk, blocks per SM, residuals in flight
//   struct SharedCamera; struct Camera; struct Fetched; template <int> struct Staged;
//   void stage_camera(int cam, SharedCamera&) const;       asynchronous copies of the camera's values
//                                                          (cp.async, on the block's first threads)
//   Camera camera(int cam, const SharedCamera&) const;     once they have landed
//   void stage_camera_constants(int cam, SharedCamera&) const;  the camera's values fixed during a
//                                                          solve (cp.async, on threads after the record's)
//   void stage_streamed(int i, int slot, Staged&) const;  residual i's streamed inputs and gather index
//   void stage_gathered(int slot, Staged&) const;         its gathers, once the index has landed
//   void load_staged(int slot, const Staged&, Fetched&) const;
//   and add as for camera_chunks, finish(const SharedCamera&, sums, out), linear in the sums, on each
//   warp's lane 0: a chunk's values are kWarpsPerBlock parts (camera_chunk_sum_kernel's `parts`).
// Staged is a ring of kRing slots per thread, in dynamic shared memory (staged_camera_shared_bytes):
// residual j + kRing - 1's streamed inputs and the gathers of residuals j + 1 .. j + kRing - 2 are in
// flight while residual j is added, so that a residual waits for neither its stream nor its
// index-then-gather round trips. A thread reads back only what it staged. The commit groups, in
// order: S0 S1 K G0 (K: the camera's record), then S(k) G(k - 1) for k = 2 .. kRing - 2 (the
// prologue), then per residual j S(j + kRing - 1) G(j + kRing - 2). Before G(k), S(k) must be done:
// all but the last 2 groups (for G0: S1 and K); before residual j is added, G(j): all but the last
// 2 (kRing - 2) groups; K is done once S2's wait has returned.
// A chunk's camera comes with its bounds (chunk_camera), so that a chunk starts after two round trips
// (its bounds, then its first residuals and its camera) where reading the camera off its first
// residual and then loading it before the streams took four: a block's start is latency that the
// other blocks on its multiprocessor must hide. On a block's first chunk the streams S0 and S1 are
// issued before the kernel waits for the one before it (programmatic dependent launch): only the
// camera's record and the gathers depend on it.
template <class Terms, int kRing>
constexpr std::size_t staged_camera_shared_bytes() {
  return sizeof(typename Terms::template Staged<kRing>);
}

template <class Terms, int kRing>
__global__ void __launch_bounds__(kThreads, Terms::kMinBlocks)
    staged_camera_chunk_kernel(Terms terms, const int* __restrict__ chunk_begin, const int* __restrict__ chunk_camera,
                               int chunks, double* __restrict__ partial, int stride, const int* stopped) {
  static_assert(kRing >= 4, "the ring holds at least residuals j .. j + 3 (the camera's copy lands by the third)");
  constexpr int N = Terms::kSums;
  using Staged = typename Terms::template Staged<kRing>;
  extern __shared__ __align__(16) unsigned char staged_bytes[];
  Staged& staged = *reinterpret_cast<Staged*>(staged_bytes);
  __shared__ __align__(16) typename Terms::SharedCamera shared_camera;
  bool waited = false;  // for the kernel before (begin_dependent_kernel), on the block's first chunk
  for (int chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const int begin = chunk_begin[chunk], end = chunk_begin[chunk + 1], cam = chunk_camera[chunk];
    const int first = begin + static_cast<int>(threadIdx.x);
    const int n = first < end ? (end - first + kThreads - 1) / kThreads : 0;
    const auto stream = [&](int j) {  // an empty group past the thread's residuals
      if (j < n) terms.stage_streamed(first + j * kThreads, j % kRing, staged);
      __pipeline_commit();
    };
    const auto gather = [&](int j) {
      if (j < n) terms.stage_gathered(j % kRing, staged);
      __pipeline_commit();
    };
    __syncthreads();  // the previous chunk's threads are done with shared_camera
    // The residuals' streams and the camera's constants do not change during a solve: the first
    // chunk's are on their way before the kernel waits for the point pass (programmatic dependent
    // launch), the camera's record after.
    terms.stage_camera_constants(cam, shared_camera);  // in S0's group
    stream(0);
    stream(1);
    if (!waited) {
      linalg_cuda::detail::begin_dependent_kernel();
      waited = true;
      if (cg_has_stopped(stopped)) {
        __pipeline_wait_prior(0);  // no copy may land in shared memory after the block has gone
        return;
      }
    }
    terms.stage_camera(cam, shared_camera);
    __pipeline_commit();
    __pipeline_wait_prior(2);  // residual 0's stream
    gather(0);
#pragma unroll
    for (int k = 2; k <= kRing - 2; ++k) {
      stream(k);
      __pipeline_wait_prior(2);  // residual k - 1's stream
      gather(k - 1);
    }
    __syncthreads();  // the camera's copies have landed (the last wait left only G0 and S2 in flight)
    const typename Terms::Camera camera = terms.camera(cam, shared_camera);
    double acc[N];
#pragma unroll
    for (int k = 0; k < N; ++k) acc[k] = 0.0;
    for (int j = 0; j < n; ++j) {
      stream(j + kRing - 1);
      __pipeline_wait_prior(2);  // residual j + kRing - 2's stream
      gather(j + kRing - 2);
      __pipeline_wait_prior(2 * (kRing - 2));  // residual j's gathers
      typename Terms::Fetched fetched;
      terms.load_staged(j % kRing, staged, fetched);
      terms.add(camera, first + j * kThreads, fetched, acc);
    }
    __pipeline_wait_prior(0);  // (only empty groups are left)
    // Each warp's share of the chunk, finished (it is linear in the sums) by the warp's lane 0, is the
    // chunk's part `warp`; camera_chunk_sum_kernel adds the parts up in order. A sum over the block
    // here had seven warps wait at two barriers while the eighth added the warps' sums and finished
    // (18% of the pass's warp stall samples on the H200 at Venice scale; 0.200 against 0.202 ms a PCG
    // iteration on the H100).
    const int warp = static_cast<int>(threadIdx.x) / 32;
#pragma unroll
    for (int k = 0; k < N; ++k) acc[k] = warp_sum(acc[k]);  // on lane 0
    if (threadIdx.x % 32 == 0)
      terms.finish(shared_camera, acc, partial + (static_cast<std::size_t>(chunk) * kWarpsPerBlock + warp) * stride);
  }
}

// camera_chunk_kernel's hooks for terms that stream their blocks: no per-camera state and nothing to
// load ahead (Terms derive from it and list it first when initialised: {{}, ...}).
struct StreamedCameraTerms {
  static constexpr int kBatch = 1;
  struct Camera {};
  struct SharedCamera {};
  struct Fetched {};

  __device__ __forceinline__ Camera camera(int, SharedCamera&) const { return {}; }

  __device__ __forceinline__ void fetch(const Camera&, int, Fetched&) const {}
};

// Where camera_chunk_sum_kernel adds x'y up (the PCG's p'Ap, linalg_cuda::CgProductStep): the sum,
// and a partial per block then the blocks' ticket (linalg_cuda/internal/deterministic_reduce.cuh), which must
// be 0 before the first launch. Null `sum`: no dot product.
struct ChunkSumDot {
  double* sum = nullptr;
  double* partials = nullptr;
  unsigned int* ticket = nullptr;
};

// y_c = sum of the camera's chunks' values first .. first + c - 1 (`parts` parts per chunk, `stride`
// values per part), in chunk and part order, + d2_c .* x_c when d2 is given; and x'y when dot.sum is
// given (in a fixed order: by block, then over the blocks), where the CG's own kernel for p'Ap cost
// 3.6 us and a launch a PCG iteration at Venice scale.
__global__ void __launch_bounds__(kThreads) camera_chunk_sum_kernel(Shape s, const int* __restrict__ camera_chunk_start,
                                                                     const double* __restrict__ partial, int parts,
                                                                     int stride, int first, const double* __restrict__ d2,
                                                                     const double* __restrict__ x,
                                                                     double* __restrict__ y, ChunkSumDot dot,
                                                                     const int* stopped) {
  linalg_cuda::detail::begin_dependent_kernel();
  if (cg_has_stopped(stopped)) return;
  const std::size_t n = static_cast<std::size_t>(s.C) * s.c;
  double xy = 0.0;
  for (std::size_t j = blockIdx.x * std::size_t(kThreads) + threadIdx.x; j < n; j += std::size_t(gridDim.x) * kThreads) {
    const int cam = static_cast<int>(j % s.C), k = static_cast<int>(j / s.C);  // j = cam_at(cam, k)
    double total = 0.0;
    for (int part = camera_chunk_start[cam] * parts; part < camera_chunk_start[cam + 1] * parts; ++part)
      total += partial[static_cast<std::size_t>(part) * stride + first + k];
    const double yj = d2 ? total + d2[j] * x[j] : total;
    y[j] = yj;
    if (dot.sum) xy += x[j] * yj;
  }
  if (!dot.sum) return;  // the same on every thread
  const double sums[1] = {linalg_cuda::detail::block_sum<kThreads>(xy)};
  if (linalg_cuda::detail::store_partials_and_arrive(sums, dot.partials, dot.ticket)) {
    const double total = linalg_cuda::detail::sum_partials<kThreads>(dot.partials, 0, dot.ticket);
    if (threadIdx.x == 0) *dot.sum = total;
  }
}

}  // namespace
}  // namespace ceres_cuda::detail
