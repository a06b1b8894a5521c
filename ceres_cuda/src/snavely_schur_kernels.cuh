#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): the fast path's Schur product
// (schur_product_kernels.cuh) without reading the stored Jacobian blocks F and E: both passes form
// what they need from a compact view of each residual (3 values: p, 1/P_z; snavely_jacobian_products.h),
// stored once per Jacobian in both orders, and per-camera values read from cache.
//  - The point pass, over the residuals in point order, grouped within a tile by camera
//    (grouped_point_pass_kernel.cuh): u = F_s x from the view and the camera's tangent of x (formed
//    once per product), E_s' u from the view and the camera's R and f, k1, k2, and per point
//    w~ = s_p .* V^-1 sum E_s' u (with the block diag(s_p) V^-1 diag(s_p), 6 values). Per residual 28
//    bytes read and 8 per item of up to 4 residuals, per point 52 read and 24 written.
//  - The camera pass, over the residuals in camera order: v = u - E_s w formed again from the view,
//    the chunk's camera and w~ gathered by the residual's point, and F_s' v: per residual 28 bytes
//    read and 24 gathered (mostly from the L2: see below). Against the 200 bytes a residual of the
//    stored blocks, and 96 while v was written per residual by the point pass and gathered by the
//    camera pass (32-byte sectors for 16 bytes each).
// Both passes gather per-camera values per lane (the point pass, once per item) and w~ per residual
// (the camera pass): the points are numbered by first use in the camera-major order (ba_layout.cpp),
// so that a point-pass tile sees few cameras, several times each, and a camera's points lie in few
// runs of w~. With a loss each pass also reads the residual's correction (4 values, stored with the
// views).
// Tried on the H100 at Final-13682 scale and dropped: v written in residual order so that the camera
// pass streams it (0.85 against 1.43 ms a camera pass, but the scattered stores cost the point pass
// more than that). Forming E_s in the point pass was dropped too while the points were numbered in
// the problem's order (2.8 against 1.6 ms a point pass: each lane's R an L2 gather of its own).
//
// The blocks are the ones the evaluation stores: Snavely Jacobians corrected for the loss (Ceres'
// Corrector as an operator C, robust_loss.h) and Jacobi-scaled, F_s = C J_c diag(s_c). So
//   F_s x = C J_c (s_c .* x)  and  F_s' v = s_c .* J_c' (C v).
#include "robust_loss.h"
#include "grouped_point_pass_kernel.cuh"
#include "schur_product_kernels.cuh"
#include "snavely_jacobian_products.h"

namespace ceres_cuda::detail {
namespace {

// Once per Jacobian: the frame of every camera, variable or constant (from its parameter block,
// natural layout; variable cameras come first, so a variable camera's index is also its frame's).
__global__ void camera_frames_kernel(int cameras, const double* __restrict__ params, double* __restrict__ frames) {
  for (int cam = blockIdx.x * kThreads + threadIdx.x; cam < cameras; cam += gridDim.x * kThreads)
    snavely_frame(params + static_cast<std::size_t>(cam) * kSnavelyCameraSize, frames + static_cast<std::size_t>(cam) * kFrameSize);
}

// Once per Jacobian, after the frames: the compact views of n residuals, residual order[j] (j itself
// when order is null) at position j, entry k at k * n + j, and with a loss the correction's sqrt_rho1,
// alpha_sq_norm and the residual likewise.
__global__ void compact_views_kernel(Shape s, int n, const int* __restrict__ order, const double* __restrict__ frames,
                                     const double* __restrict__ points, BuiltinLoss loss,
                                     const double* __restrict__ observations, double* __restrict__ views,
                                     double* __restrict__ corrections) {
  for (int j = blockIdx.x * kThreads + threadIdx.x; j < n; j += gridDim.x * kThreads) {
    const int i = order ? order[j] : j;
    const double* frame = frames + static_cast<std::size_t>(s.camera_param[i]) * kFrameSize;
    const double* X = points + 3 * static_cast<std::size_t>(s.point_param[i]);
    double out[kCompactViewSize], correction[4] = {1.0, 0.0, 0.0, 0.0};
    SnavelyView view;
    snavely_view(frame, X, &view);  // off depth zero: the evaluation at these parameters succeeded
    compact_view(view, out);
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
    for (int k = 0; k < kCompactViewSize; ++k) views[static_cast<std::size_t>(k) * n + j] = out[k];
    if (corrections)
      for (int k = 0; k < 4; ++k) corrections[static_cast<std::size_t>(k) * n + j] = correction[k];
  }
}

// The upper triangle of a symmetric 3 x 3 block, by rows: (0,0) (0,1) (0,2) (1,1) (1,2) (2,2).
constexpr int kSymmetricBlock = 6;
__device__ __forceinline__ int symmetric_entry(int r, int c) {
  const int lo = r < c ? r : c, hi = r < c ? c : r;
  return lo == 0 ? hi : lo + hi + 1;
}

// Once per LM step, after V^-1: diag(s_p) V_p^-1 diag(s_p) per point, its upper triangle (continuous-
// element, entry k of point p at k * P + p), which the PCG loop's point pass applies in one product.
__global__ void scaled_point_inverse_blocks_kernel(Shape s, const double* __restrict__ Vinv,
                                                   const double* __restrict__ point_scaling, double* __restrict__ out) {
  for (int p = blockIdx.x * kThreads + threadIdx.x; p < s.P; p += gridDim.x * kThreads)
    for (int r = 0; r < 3; ++r)
      for (int c = r; c < 3; ++c)
        out[static_cast<std::size_t>(symmetric_entry(r, c)) * s.P + p] = point_scaling[pt_at(s, p, r)] *
                                                                         Vinv[static_cast<std::size_t>(3 * r + c) * s.P + p] *
                                                                         point_scaling[pt_at(s, p, c)];
}

// What the passes read of a camera per Schur product, one record of kCameraRecordSize values (176
// bytes: 16-byte loads, and one record a few cache lines): its tangent of x (camera_tangent), the
// rotation R and whether its frame is in the first-order branch (1 or 0). Per camera, variable or
// constant: a constant camera's tangent is that of x = 0 (its f, k1, k2 are what the point pass reads).
constexpr int kRecordRotation = kCameraTangentSize, kRecordFirstOrder = kRecordRotation + 9;
constexpr int kCameraRecordSize = kRecordFirstOrder + 1;
static_assert(kRecordRotation % 2 == 0 && kCameraRecordSize % 2 == 0, "16-byte aligned parts");

// Once per Schur product: every camera's record at the Jacobi-scaled x (only the first s.C cameras,
// the variable ones, have values in x). Launched in blocks of one warp (kRecordThreads): a thread's
// frame and record are its own cache lines, so a warp's loads and stores are 32 lines each, and
// spread over many multiprocessors' L1s rather than a few (10.0 us at Venice scale in blocks of 256).
// Inside the PCG (z given) x is its direction p, updated here first, p = z + beta p
// (linalg_cuda::CgProductStep): this kernel reads every camera value anyway, and the CG's own kernel
// for the update cost 1.6 us and a launch an iteration at Venice scale. x is written only then.
constexpr int kRecordThreads = 32;
__global__ void __launch_bounds__(kRecordThreads)
    camera_records_kernel(Shape s, int cameras, const double* __restrict__ frames, const double* __restrict__ scaling,
                          double* __restrict__ x, const double* __restrict__ z, const double* __restrict__ beta,
                          double* __restrict__ records, const int* stopped) {
  linalg_cuda::detail::begin_dependent_kernel();
  if (cg_has_stopped(stopped)) return;
  const double b = z ? *beta : 0.0;
  for (int cam = blockIdx.x * kRecordThreads + threadIdx.x; cam < cameras; cam += gridDim.x * kRecordThreads) {
    const double* frame = frames + static_cast<std::size_t>(cam) * kFrameSize;
    double* record = records + static_cast<std::size_t>(cam) * kCameraRecordSize;
    double xs[kSnavelyCameraSize] = {};
    if (cam < s.C)
      for (int k = 0; k < kSnavelyCameraSize; ++k) {
        const std::size_t j = cam_at(s, cam, k);
        double xj = x[j];
        if (z) {
          xj = z[j] + b * xj;
          x[j] = xj;
        }
        xs[k] = scaling[j] * xj;
      }
    camera_tangent(frame, xs, record);
    for (int k = 0; k < 9; ++k) record[kRecordRotation + k] = frame[k];
    record[kRecordFirstOrder] = first_order_frame(frame) ? 1.0 : 0.0;
  }
}

// C u for the residual at position j of views stored n to an entry (compact_views_kernel's);
// corrections null: no loss.
__device__ __forceinline__ void correct(const double* corrections, std::size_t n, int j, double* u) {
  if (!corrections) return;
  LossCorrection c;
  c.sqrt_rho1 = corrections[j];
  c.alpha_sq_norm = corrections[n + j];
  const double r[2] = {corrections[2 * n + j], corrections[3 * n + j]};
  apply_correction(c, r, 2, u);
}

// n doubles from a 16-byte aligned address in 16-byte loads (for per-lane camera values: half the
// load instructions, and so half the L1 requests).
template <int n>
__device__ __forceinline__ void load_pairs(const double* from, double* to) {
  static_assert(n % 2 == 0, "whole pairs");
  const double2* pairs = reinterpret_cast<const double2*>(from);
#pragma unroll
  for (int k = 0; k < n / 2; ++k) {
    const double2 pair = pairs[k];
    to[2 * k] = pair.x;
    to[2 * k + 1] = pair.y;
  }
}

// The point pass's terms on the fast path (see the top of the file), for grouped_point_pass_kernel: an
// item's lane reads its camera's record once (mostly L1 hits, in 16-byte loads) and keeps it in
// registers for the item's residuals. E_s = C A R diag(s_p) is never read: E_s' u = s_p .* R' A' C u,
// with A from the view and the camera's f, k1, k2, and s_p applied per point (scaled_inverse in the
// PCG loop).
struct SnavelyPointTerms {
  static constexpr int kMinBlocks = 2;  // 120 registers; 82 KB of shared memory a block (GroupedStagedTile)
  static constexpr int kViewSize = kCompactViewSize;
  Shape s;
  int positions;
  const double* views;        // compact_views_kernel's, by position (grouped_point_tiles.h)
  const double* corrections;  // likewise; null without a loss
  const double* records;      // camera_records_kernel's, per camera
  const double* point_scaling;  // Jacobi scaling of the points, continuous-element
  const double* scaled_inverse_blocks;  // scaled_point_inverse_blocks_kernel's
  double* point_result;       // w or w~ per point (continuous-element)
  struct Camera {
    double tangent[kCameraTangentSize];
    double R[10];  // R and the first-order flag
    bool variable;
  };

  // cam: an item's camera, variable (>= 0) or ~ a constant camera's index (its term is 0: u = 0).
  __device__ __forceinline__ Camera camera(int cam) const {
    Camera c;
    c.variable = cam >= 0;
    if (!c.variable) return c;
    const double* record = records + static_cast<std::size_t>(cam) * kCameraRecordSize;
    load_pairs<kCameraTangentSize>(record, c.tangent);
    load_pairs<10>(record + kRecordRotation, c.R);
    return c;
  }

  // g = R' A' C u with u = C F_s x (E_s' u but for s_p).
  __device__ __forceinline__ void term(const Camera& c, int q, const double* view, double (&g)[3]) const {
    if (!c.variable) {
      g[0] = g[1] = g[2] = 0.0;
      return;
    }
    const CompactImage im = compact_image(view, c.tangent + kTangentIntrinsics);
    double direction[3], u[2], m[2];
    rotation_direction(c.R, c.R[9] != 0.0, view, direction);
    compact_jacobian_times(im, c.tangent, direction, u);
    correct(corrections, positions, q, u);  // u
    correct(corrections, positions, q, u);  // C u
    compact_image_m_times(im, u, m);  // A' = D' M, D' m = -1/P_z (m_x, m_y, p.m)
    const double b[3] = {-im.iz * m[0], -im.iz * m[1], -im.iz * (im.p0 * m[0] + im.p1 * m[1])};
    for (int j = 0; j < 3; ++j) g[j] = c.R[j] * b[0] + c.R[3 + j] * b[1] + c.R[6 + j] * b[2];
  }

  __device__ __forceinline__ void scale_point(int p, double (&g)[3]) const {
    for (int j = 0; j < 3; ++j) g[j] *= point_scaling[pt_at(s, p, j)];
  }

  __device__ __forceinline__ void store_point(int p, const double (&w)[3]) const { store_point_result(s, point_result, p, w); }

  // The scaled inverse blocks' rows over p0 .. p1 - 1, a row a lane, a prefetch a 128-byte line. (The
  // back-substitution's pass, once per LM step, reads V^-1 instead: its prefetches go unused.)
  __device__ __forceinline__ void prefetch_points(int p0, int p1, int lane) const {
    if (lane >= kSymmetricBlock || p1 <= p0) return;
    const double* row = scaled_inverse_blocks + static_cast<std::size_t>(lane) * s.P;
    for (int p = p0; p < p1; p += 16) prefetch_l2(row + p);
    prefetch_l2(row + p1 - 1);  // the last line, where p0 is not at a line's start
  }

  __device__ __forceinline__ void scaled_inverse(int p, const double (&g)[3], double (&w)[3]) const {
    double block[kSymmetricBlock];
    for (int k = 0; k < kSymmetricBlock; ++k) block[k] = scaled_inverse_blocks[static_cast<std::size_t>(k) * s.P + p];
    for (int r = 0; r < 3; ++r) {
      w[r] = 0.0;
      for (int c = 0; c < 3; ++c) w[r] += block[symmetric_entry(r, c)] * g[c];
    }
  }
};

// The camera pass's terms on the fast path (see the top of the file): per residual
// v = C (J_c x - A R w~) = C (A (P_z (J_l x_r) x q~ + x_t - (J_l x_r) x t~ - R w~) + p radial), from the
// view, the chunk's camera's tangent of x and R, and w~ = s_p .* w gathered from the point pass's
// per-point result (a constant point: no R w~).
// The camera's record is in shared memory, read through a volatile pointer where used: held in
// registers over the chunk (as the compiler would keep them) its 21 values took the pass to 112
// registers and 2 blocks a multiprocessor, too few warps to hide the gathers.
struct SnavelyCameraTerms {
  static constexpr int kSums = 9;
  static constexpr int kMinBlocks = 3;  // 80 registers
  // staged_camera_chunk_kernel's residuals in flight per thread: at Venice scale on the H100, 0.228 ms
  // a PCG iteration in the loop against 0.229 with 3 and 0.242 with 5 (whose ring leaves the L1 little).
  static constexpr int kRing = 4;
  Shape s;
  const double* views;        // compact_views_kernel's, residual order
  const double* corrections;  // likewise; null without a loss
  const double* frames;       // per camera
  const double* records;      // camera_records_kernel's, per camera
  const double* scaling;      // Jacobi scaling, continuous-element like the variables
  const double* point_w;      // the point pass's w~ per point, continuous-element
  struct SharedCamera {
    double record[kCameraRecordSize];  // camera_records_kernel's
    // What finish() reads, fixed during a solve: copied with the chunk's first streams (before the
    // kernel waits for the point pass), so that the chunk's last step, one thread's while the block
    // holds its shared memory, does not wait for memory.
    double frame[kFrameSize];
    double scaling[kSnavelyCameraSize];
  };
  struct Camera {
    int cam;
    bool first_order;  // the rotation's branch (rotation_direction)
    const volatile double* tangent;
    const volatile double* R;
  };
  struct Fetched {
    double view[kCompactViewSize];
    double w[3];  // w~ of the residual's point (a variable point)
    bool variable_point;
  };
  // Per thread (the last index), kRing residuals: the view and the point index streamed, w~ gathered.
  template <int kSlots>
  struct Staged {
    double view[kSlots][kCompactViewSize][kThreads];
    double w[kSlots][3][kThreads];
    int point[kSlots][kThreads];
  };

  __device__ __forceinline__ const double* frame(int cam) const { return frames + static_cast<std::size_t>(cam) * kFrameSize; }

  // The record in 16-byte copies, one a thread (the block's first kCameraRecordSize / 2).
  __device__ __forceinline__ void stage_camera(int cam, SharedCamera& shared) const {
    const int t = static_cast<int>(threadIdx.x);
    if (2 * t < kCameraRecordSize)
      __pipeline_memcpy_async(shared.record + 2 * t, records + static_cast<std::size_t>(cam) * kCameraRecordSize + 2 * t,
                              2 * sizeof(double));
  }

  // The frame in 16-byte copies and the scaling in 8-byte ones, a copy a thread (after the record's).
  __device__ __forceinline__ void stage_camera_constants(int cam, SharedCamera& shared) const {
    static_assert(kFrameSize % 2 == 0 && kCameraRecordSize % 2 == 0, "whole 16-byte copies");
    constexpr int kFrameCopies = kFrameSize / 2, first = kCameraRecordSize / 2;
    const int t = static_cast<int>(threadIdx.x) - first;
    if (t >= 0 && t < kFrameCopies)
      __pipeline_memcpy_async(shared.frame + 2 * t, frame(cam) + 2 * t, 2 * sizeof(double));
    else if (t >= kFrameCopies && t < kFrameCopies + kSnavelyCameraSize)
      __pipeline_memcpy_async(shared.scaling + (t - kFrameCopies), scaling + cam_at(s, cam, t - kFrameCopies),
                              sizeof(double));
  }

  __device__ __forceinline__ Camera camera(int cam, const SharedCamera& shared) const {
    const volatile double* record = shared.record;
    return {cam, record[kRecordFirstOrder] != 0.0, record, record + kRecordRotation};
  }

  template <class Ring>
  __device__ __forceinline__ void stage_streamed(int i, int slot, Ring& staged) const {
    for (int k = 0; k < kCompactViewSize; ++k)
      __pipeline_memcpy_async(&staged.view[slot][k][threadIdx.x], views + static_cast<std::size_t>(k) * s.R + i, sizeof(double));
    __pipeline_memcpy_async(&staged.point[slot][threadIdx.x], s.point_of + i, sizeof(int));
  }

  template <class Ring>
  __device__ __forceinline__ void stage_gathered(int slot, Ring& staged) const {
    const int p = staged.point[slot][threadIdx.x];
    if (p < 0) return;  // a constant point: nothing to gather
    for (int j = 0; j < 3; ++j)
      __pipeline_memcpy_async(&staged.w[slot][j][threadIdx.x], point_w + pt_at(s, p, j), sizeof(double));
  }

  template <class Ring>
  __device__ __forceinline__ void load_staged(int slot, const Ring& staged, Fetched& f) const {
    for (int k = 0; k < kCompactViewSize; ++k) f.view[k] = staged.view[slot][k][threadIdx.x];
    f.variable_point = staged.point[slot][threadIdx.x] >= 0;
    // Read whatever the slot holds: for a constant point nothing was staged and add() does not use w
    // (reading it only where staged costs this kernel spills at 80 registers).
    for (int j = 0; j < 3; ++j) f.w[j] = staged.w[slot][j][threadIdx.x];
  }

  __device__ __forceinline__ void add(const Camera& camera, int i, const Fetched& f, double (&acc)[kSums]) const {
    const volatile double* t = camera.tangent;
    const double fk[3] = {t[kTangentIntrinsics], t[kTangentIntrinsics + 1], t[kTangentIntrinsics + 2]};
    const CompactImage im = compact_image(f.view, fk);
    double q[3];
    rotation_direction(frame(camera.cam), camera.first_order, f.view, q);
    // g = x_t - (J_l x_r) x t~ - R w~ (the tangent's second triple, less R w~), c = (J_l x_r) x q~.
    double g[3] = {t[3], t[4], t[5]};
    if (f.variable_point) {
      const volatile double* R = camera.R;
      for (int r = 0; r < 3; ++r) g[r] -= R[3 * r] * f.w[0] + R[3 * r + 1] * f.w[1] + R[3 * r + 2] * f.w[2];
    }
    const double w[3] = {t[0], t[1], t[2]};
    const double c0 = w[1] * q[2] - w[2] * q[1], c1 = w[2] * q[0] - w[0] * q[2], c2 = w[0] * q[1] - w[1] * q[0];
    const double delta[2] = {-(c0 + im.p0 * c2) - im.iz * (g[0] + im.p0 * g[2]),
                             -(c1 + im.p1 * c2) - im.iz * (g[1] + im.p1 * g[2])};  // D (P_z c + g)
    double u[2];
    compact_image_m_times(im, delta, u);
    const double radial = im.d * t[6] + im.f * im.rr * (t[7] + im.rr * t[8]);
    u[0] += im.p0 * radial;
    u[1] += im.p1 * radial;
    correct(corrections, s.R, i, u);  // v
    correct(corrections, s.R, i, u);  // C v, for F_s' v = s_c .* J_c' (C v)
    compact_camera_jacobian_transpose_accumulate(im, q, u, acc);
  }

  __device__ __forceinline__ void finish(const SharedCamera& shared, const double (&sums)[kSums], double* out) const {
    double y[kSnavelyCameraSize];
    camera_jacobian_transpose_finish(shared.frame, sums, y);
    for (int k = 0; k < kSnavelyCameraSize; ++k) out[k] = shared.scaling[k] * y[k];
  }
};

}  // namespace
}  // namespace ceres_cuda::detail
