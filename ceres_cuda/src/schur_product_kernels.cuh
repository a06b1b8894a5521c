#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): the kernels of the implicit Schur
// product, the PCG's cost, and the point-order index they read.
#include <cuda_pipeline.h>

#include <vector>

#include "ba_index.h"
#include "ba_layout.h"
#include "engine_kernel_support.cuh"
#include "linalg_cuda/internal/dependent_launch.cuh"
#include "linalg_cuda/internal/deterministic_reduce.cuh"

namespace ceres_cuda::detail {
namespace {

// ---- the Schur product S x = (U + D^2) x - W V^-1 W' x in two passes, each streaming its blocks in
// storage order:
//  1. the point pass, over the residuals in point order (a copy of F and E in that order, refreshed
//     after every Jacobian): u_q = F_q x_c, per point w_p = V_p^-1 sum E_q' u_q, and v_q = u_q - E_q w_p,
//     written in point order. A warp takes a tile: whole points of at most 32 residuals together (one
//     lane per residual, the per-point sums a segmented shuffle scan), or one larger point in rounds
//     of 32 residuals;
//  2. the camera pass, over the residuals in camera order: y_c = sum F_i' v_i + D_c^2 x_c, v_i read
//     from the residual's point-order slot (u_i itself for a residual whose point is constant).
// Every residual's camera and point blocks are read once per pass, coalesced (entry k of every block
// contiguous); the only scattered accesses are the m values of v per residual and the small x. (On
// the fast path neither pass reads F or E: both form what they need, the point pass, over tiles of
// its own (grouped_point_pass_kernel.cuh), leaves w~ per point instead of v, and the camera pass
// forms v from it: snavely_schur_kernels.cuh.)
constexpr int kTileResiduals = 32;

// The point pass's tiles of the point-order residual slots (see above), from the points' CSR starts:
// built once per engine on the host (one pass over the points).
std::vector<int> make_point_tiles(const std::vector<int>& start) {
  std::vector<int> tile_start{0};
  const int points = static_cast<int>(start.size()) - 1;
  int open = 0;  // slots in the tile being filled, which begins at tile_start.back()
  for (int p = 0; p < points; ++p) {
    const int n = start[p + 1] - start[p];
    if (n > kTileResiduals) {  // a tile of its own
      if (open > 0) tile_start.push_back(start[p]);
      tile_start.push_back(start[p + 1]);
      open = 0;
    } else if (open + n > kTileResiduals) {
      tile_start.push_back(start[p]);
      open = n;
    } else {
      open += n;
    }
  }
  if (open > 0) tile_start.push_back(start.back());
  return tile_start;
}

// Once per engine, the rest of the point-order index, on the device (from the uploaded CSR rather
// than three host arrays of a value per residual): per slot its point and its residual's variable
// camera, or for a constant camera ~ its parameter block's index (negative: the fast path's point pass
// still needs the camera's frame), per residual its slot (residual_slot holds -1 beforehand: a
// constant point has none).
__global__ void point_order_kernel(Shape s, int* __restrict__ slot_point, int* __restrict__ slot_camera,
                                   int* __restrict__ residual_slot) {
  for (int p = blockIdx.x * kThreads + threadIdx.x; p < s.P; p += gridDim.x * kThreads)
    for (int q = s.point_start[p]; q < s.point_start[p + 1]; ++q) {
      const int i = s.point_residuals[q];
      slot_point[q] = p;
      slot_camera[q] = s.camera_of[i] >= 0 ? s.camera_of[i] : ~s.camera_param[i];
      residual_slot[i] = q;
    }
}

// The point pass's walk over the tiles, whatever forms the residuals' terms. Terms has
//   kMinBlocks                                                  blocks per multiprocessor to fit
//   struct Slot;                                                what a slot keeps between the calls
//   void load(int q, Slot&) const;                              u_q = F_q x_c
//   void gradient(int q, const Slot&, double (&g)[3]) const;    g = E_q' u_q, but for scale_point
//   void scale_point(int p, double (&g)[3]) const;              the point's column scaling, where
//                                                               gradient and store leave it out
//   void store(int q, const Slot&, const double (&w)[3]) const; v_q = u_q - E_q w, in point order
//   void store_point(int p, const double (&w)[3]) const;       w_p itself, in the per-point forms
//   void scaled_inverse(int p, const double (&g)[3], double (&w)[3]) const;  w~ = s_p .* V^-1 (s_p .* g),
//                                                               in the scaled per-point form only
// What the pass leaves (PointPassResult, each form its own kernel instance): v per slot for a camera
// pass that gathers it; w per point, the back-substitution's V^-1 E'F y_c (the same pass with y_c for
// x); or w~ = s_p .* w per point, for a camera pass that forms v itself (the fast path's).
__device__ __forceinline__ void apply_point_inverse(const Shape& s, const double* Vinv, int p, const double (&g)[3],
                                                    double (&w)[3]) {
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    w[r] = 0.0;
#pragma unroll
    for (int j = 0; j < 3; ++j) w[r] += Vinv[static_cast<std::size_t>(3 * r + j) * s.P + p] * g[j];
  }
}

enum class PointPassResult { kPerSlot, kPerPoint, kPerPointScaled };

// w_p into a per-point result (continuous-element, like the points' part of the variables).
__device__ __forceinline__ void store_point_result(const Shape& s, double* result, int p, const double (&w)[3]) {
#pragma unroll
  for (int j = 0; j < 3; ++j) result[pt_at(s, p, j)] = w[j];
}

// On the lane that has the point's sum g: w = V^-1 (s_p .* g), then the per-point result, or w~ = s_p .* w
// for v = u - E_s w (the per-slot form broadcasts it to the point's lanes). The scaled per-point form
// (the fast path's, in the PCG loop) reads w~ = (diag(s_p) V^-1 diag(s_p)) g in one product from
// Terms' scaled_inverse: 6 values a point where the scaling and V^-1 are 12.
template <PointPassResult kResult, class Terms>
__device__ __forceinline__ void finish_point(const Terms& terms, const double* Vinv, int p, double (&g)[3],
                                             double (&w)[3]) {
  if constexpr (kResult == PointPassResult::kPerPointScaled) {
    terms.scaled_inverse(p, g, w);
    terms.store_point(p, w);
  } else {
    terms.scale_point(p, g);
    apply_point_inverse(terms.s, Vinv, p, g, w);
    if constexpr (kResult == PointPassResult::kPerPoint) terms.store_point(p, w);
    else terms.scale_point(p, w);
  }
}

// A tile of whole points, a lane per residual: slot q = q0 + lane when active (q < q1), p its point
// (-1 for the lanes past the tile). load(slot) forms the lane's terms. A segmented inclusive scan
// leaves each point's sum on its last lane (a fixed pattern for a given problem: the same bits every
// run).
template <PointPassResult kResult, class Terms, class Load>
__device__ __forceinline__ void whole_points_tile(int q, bool active, int p, const double* Vinv,
                                                  const Terms& terms, Load&& load) {
  const int lane = threadIdx.x % 32;
  typename Terms::Slot slot;
  double g[3] = {0.0, 0.0, 0.0}, w[3] = {0.0, 0.0, 0.0};
  // A point's lanes are a run: its first and last lane from the lanes holding the same point,
  // without reading point_start. (The last lane's inverse block is not prefetched: when the fast
  // path's pass walked these tiles it was bound by the L1's data pipe, where the prefetches cost more
  // than their latency did, 0.366 against 0.376 ms a PCG iteration at Venice scale on the H100.)
  const unsigned same = __match_any_sync(0xffffffffu, p);
  const int head = __ffs(same) - 1, tail = 31 - __clz(same);
  if (active) {
    load(slot);
    terms.gradient(q, slot, g);
  }
  // The scan's steps up to the tile's longest point only: the later ones would add nothing (lane - d
  // < head on every lane), so the sums keep their bits, and a tile of BAL points (a few residuals
  // each) saves two or three of its five rounds of shuffles, which share the L1's data pipe.
  const int longest = static_cast<int>(__reduce_max_sync(0xffffffffu, active ? tail - head + 1 : 1));
  for (int d = 1; d < longest; d <<= 1) {
    double from[3];
    for (int j = 0; j < 3; ++j) from[j] = __shfl_up_sync(0xffffffffu, g[j], d);
    if (lane - d >= head)
      for (int j = 0; j < 3; ++j) g[j] += from[j];
  }
  if (active && lane == tail) finish_point<kResult>(terms, Vinv, p, g, w);
  if constexpr (kResult == PointPassResult::kPerSlot) {
    for (int j = 0; j < 3; ++j) w[j] = __shfl_sync(0xffffffffu, w[j], tail);
    if (active) terms.store(q, slot, w);
  }
}

// One point with more residuals than lanes (slots q0..q1): sums over rounds of 32, then u again for v.
template <PointPassResult kResult, class Terms>
__device__ __forceinline__ void large_point_tile(int q0, int q1, int p, const double* Vinv,
                                                 const Terms& terms) {
  const int lane = threadIdx.x % 32;
  typename Terms::Slot slot;
  double total[3] = {0.0, 0.0, 0.0}, w[3] = {0.0, 0.0, 0.0};
  for (int base = q0; base < q1; base += 32) {
    const int q = base + lane;
    double g[3] = {0.0, 0.0, 0.0};
    if (q < q1) {
      terms.load(q, slot);
      terms.gradient(q, slot, g);
    }
    for (int j = 0; j < 3; ++j) total[j] += warp_sum(g[j]);  // meaningful on lane 0
  }
  if (lane == 0) finish_point<kResult>(terms, Vinv, p, total, w);
  if constexpr (kResult == PointPassResult::kPerSlot) {
    for (int j = 0; j < 3; ++j) w[j] = __shfl_sync(0xffffffffu, w[j], 0);
    for (int base = q0; base < q1; base += 32) {
      const int q = base + lane;
      if (q < q1) {
        terms.load(q, slot);
        terms.store(q, slot, w);
      }
    }
  }
}

template <PointPassResult kResult, class Terms>
__device__ __forceinline__ void point_pass_tiles(const int* __restrict__ tile_start,
                                                 const int* __restrict__ slot_point, int tiles,
                                                 const double* __restrict__ Vinv, const Terms& terms) {
  const int lane = threadIdx.x % 32;
  const int warps = gridDim.x * kWarpsPerBlock;
  for (int tile = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32; tile < tiles; tile += warps) {
    const int q0 = tile_start[tile], q1 = tile_start[tile + 1];
    if (q1 - q0 <= kTileResiduals) {
      const int q = q0 + lane;
      const bool active = q < q1;
      whole_points_tile<kResult>(q, active, active ? slot_point[q] : -1, Vinv, terms,
                                   [&](typename Terms::Slot& slot) { terms.load(q, slot); });
    } else {
      large_point_tile<kResult>(q0, q1, slot_point[q0], Vinv, terms);
    }
  }
}

// The terms from stored Jacobian blocks: point-order copies of F and E (refreshed after every
// Jacobian). M, C: bounds on the residual and camera sizes known when compiled (arrays in registers).
template <int M, int C>
struct StoredPointTerms {
  // BAL sizes: 64 registers, 7% faster than 70 at Venice scale on the H100; larger ones would spill.
  static constexpr int kMinBlocks = M * C <= 18 ? 4 : 1;
  Shape s;
  int slots;                  // residuals with a variable point, in point order
  const int* slot_camera;     // per slot: its residual's variable camera, or negative (point_order_kernel)
  const double* F;            // point order, entry k of slot q at k * slots + q
  const double* E;            // point order, likewise
  const double* x;
  double* v;
  double* point_result;       // the per-point forms: w or w~ per point (continuous-element), instead of v
  struct Slot {
    double u[M];
  };

  // u = F_q x_c (zero when the camera is constant), summed over k in order like camera_term, so u has
  // the same bits in both passes.
  __device__ __forceinline__ void load(int q, Slot& slot) const {
#pragma unroll
    for (int a = 0; a < M; ++a) slot.u[a] = 0.0;
    const int cam = slot_camera[q];
    if (cam < 0) return;
    double xc[C];
#pragma unroll
    for (int k = 0; k < C; ++k)
      if (k < s.c) xc[k] = x[cam_at(s, cam, k)];
#pragma unroll
    for (int a = 0; a < M; ++a) {
      if (a >= s.m) break;
#pragma unroll
      for (int k = 0; k < C; ++k)
        if (k < s.c) slot.u[a] += F[static_cast<std::size_t>(a * s.c + k) * slots + q] * xc[k];
    }
  }

  __device__ __forceinline__ void gradient(int q, const Slot& slot, double (&g)[3]) const {
    g[0] = g[1] = g[2] = 0.0;
#pragma unroll
    for (int a = 0; a < M; ++a) {
      if (a >= s.m) break;
#pragma unroll
      for (int j = 0; j < 3; ++j) g[j] += E[static_cast<std::size_t>(3 * a + j) * slots + q] * slot.u[a];
    }
  }

  __device__ __forceinline__ void store(int q, const Slot& slot, const double (&w)[3]) const {
#pragma unroll
    for (int a = 0; a < M; ++a) {
      if (a >= s.m) break;
      double t = 0.0;
#pragma unroll
      for (int j = 0; j < 3; ++j) t += E[static_cast<std::size_t>(3 * a + j) * slots + q] * w[j];
      v[static_cast<std::size_t>(q) * s.m + a] = slot.u[a] - t;
    }
  }

  __device__ __forceinline__ void store_point(int p, const double (&w)[3]) const { store_point_result(s, point_result, p, w); }

  __device__ __forceinline__ void scale_point(int, double (&)[3]) const {}  // E is stored scaled
};

template <class Terms, PointPassResult kResult>
__global__ void __launch_bounds__(kThreads, Terms::kMinBlocks)
    point_pass_kernel(Terms terms, const int* tile_start, const int* slot_point, int tiles, const double* __restrict__ Vinv,
                      const int* stopped) {
  if (cg_has_stopped(stopped)) return;
  point_pass_tiles<kResult>(tile_start, slot_point, tiles, Vinv, terms);
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

// The terms from the stored camera blocks (camera order) and v from the point pass. C: a bound on the
// camera size known when compiled (the sums stay in registers).
template <int C>
struct StoredCameraTerms : StreamedCameraTerms {
  static constexpr int kSums = C;
  static constexpr int kMinBlocks = 1;
  Shape s;
  const double* F;
  const int* residual_slot;
  const double* x;
  const double* v;
  __device__ __forceinline__ void add(const Camera&, int i, const Fetched&, double (&acc)[C]) const {
    const int q = residual_slot[i];
    for (int a = 0; a < s.m; ++a) {
      const double va = q >= 0 ? v[static_cast<std::size_t>(q) * s.m + a] : camera_term(s, F, i, a, x);
#pragma unroll
      for (int k = 0; k < C; ++k)
        if (k < s.c) acc[k] += F[static_cast<std::size_t>(a * s.c + k) * s.R + i] * va;
    }
  }

  __device__ __forceinline__ void finish(const Camera&, const double (&sums)[C], double* out) const {
#pragma unroll
    for (int k = 0; k < C; ++k)
      if (k < s.c) out[k] = sums[k];
  }
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

// A continuous-element array over the residuals (`entries` values per residual, entry k of residual i
// at k * R + i) -> the same over the point-order slots: entry k of slot q at k * slots + q.
__global__ void gather_by_point_kernel(Shape s, int entries, const double* __restrict__ in, double* __restrict__ out) {
  const std::size_t slots = static_cast<std::size_t>(s.point_start[s.P]);
  const std::size_t total = slots * entries;
  for (std::size_t t = blockIdx.x * std::size_t(kThreads) + threadIdx.x; t < total; t += std::size_t(gridDim.x) * kThreads) {
    const std::size_t k = t / slots, q = t % slots;
    out[t] = in[k * s.R + s.point_residuals[q]];
  }
}

}  // namespace
}  // namespace ceres_cuda::detail
