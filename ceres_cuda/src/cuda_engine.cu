// The GPU engine. Everything lives in the continuous-element layout (entry k of every block
// contiguous): the Jacobian blocks F and E, the inverted point blocks, the preconditioner blocks, and
// the vectors over the variables (gradient, scaling, LM diagonal, the PCG's vectors, the step); only
// the parameter blocks themselves keep the user's layout. Per-camera sums are gathers over the
// camera's residuals (a warp per camera, or for BAL-sized blocks chunks of a block each: the Schur
// product, the gradient, the right-hand side, the preconditioner blocks), per-point sums a thread per
// point (in the Schur product a segmented warp scan in point order); warp and block sums use fixed
// trees and grid sums the last-block reduction of linalg_cuda, so there is no floating-point atomic
// anywhere and a solve gives the same bits run after run. Residuals are camera-major, so a camera's
// residuals are one contiguous run.
//
// It takes the fast path's problems (every residual a SnavelyReprojectionError, one built-in loss or
// none): residuals, Jacobians, the loss and the whole step stay on the device; only scalars come back.
// Every other problem, BAL-shaped or not, runs on the general engine (general_cuda_engine.cu).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ba_engine.h"
#include "ba_index.h"
#include "block_copies.h"
#include "camera_gather_kernels.cuh"
#include "device_reductions.cuh"
#include "engine_kernel_support.cuh"
#include "fast_path_kernels.cuh"
#include "linalg_cuda/backend.h"
#include "linalg_cuda/conjugate_gradient.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/fused_cg_operator.h"
#include "linalg_cuda/internal/deterministic_reduce.cuh"
#include "linalg_cuda/internal/seconds_since.h"
#include "phase_log.h"
#include "robust_loss.h"
#include "schur_math.h"
#include "schur_block_kernels.cuh"
#include "schur_product_kernels.cuh"
#include "snavely_projection.h"
#include "snavely_schur_kernels.cuh"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::DeviceVector;
using linalg_cuda::detail::seconds_since;
// An index array on the device, one element long at least (a kernel argument must point somewhere);
// uploaded from v itself, without a host copy.
DeviceVector<int> upload_index(const std::vector<int>& v) {
  return v.empty() ? DeviceVector<int>(std::vector<int>{0}) : DeviceVector<int>(v);
}

// Bytes on the device packed four to an int (DeviceVector holds no bytes), with a word to spare at
// the end, so that a kernel may copy whole words over any range of them.
DeviceVector<int> upload_packed_bytes(const std::vector<unsigned char>& bytes) {
  std::vector<int> words(bytes.size() / 4 + 1, 0);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return DeviceVector<int>(words);
}

class CudaEngine;

// How often the PCG's device loop tests for convergence (linalg_cuda::CgOptions::check_every).
constexpr int kPcgCheckEvery = 8;

// Inside the PCG (apply_cg_step): the direction x = p is updated first, p = z + beta p. z null: x is
// only read.
struct DirectionUpdate {
  const double* z = nullptr;
  const double* beta = nullptr;
};

// S x = (U + D^2 - W V^-1 W') x, matrix-free (Ceres' ImplicitSchurComplement::RightMultiply). Inside
// the PCG its products return at once after the stop, and they take the CG's direction update and
// p'Ap too (FusedCgOperator).
class SchurOperator final : public linalg_cuda::LinearOperator, public linalg_cuda::FusedCgOperator {
 public:
  explicit SchurOperator(const CudaEngine& engine) : engine_(engine) {}
  std::size_t rows() const override;
  std::size_t cols() const override { return rows(); }
  void apply(const DeviceVector<double>& x, DeviceVector<double>& y) const override { apply_unless_stopped(x, y, nullptr); }
  void apply_unless_stopped(const DeviceVector<double>& x, DeviceVector<double>& y, const int* stopped) const override;
  // The PCG's direction update in the cameras' records kernel and its p'Ap in the cameras' sums (the
  // product's first and last kernels): two launches fewer a PCG iteration.
  bool apply_cg_step(const linalg_cuda::CgProductStep& step) const override;

 private:
  void product(const DeviceVector<double>& x, DeviceVector<double>& y, const DirectionUpdate& update, ChunkSumDot dot,
               const int* stopped) const;
  const CudaEngine& engine_;
};

class CudaEngine final : public BaEngine, public EngineInspection {
 public:
  CudaEngine(const BaLayout& layout, const EngineOptions& options)
      : layout_(layout), options_(options), index_(make_index(layout)), stream_(linalg_cuda::thread_context().stream()) {
    if (index_.residuals > (1 << 30)) throw linalg_cuda::InvalidArgument("ceres_cuda: more than 2^30 residual blocks");
    PhaseLog phase("GPU engine");
    counters_.cameras_ceres_eliminates = index_.cameras_ceres_eliminates;
    const int c = index_.camera_size, m = index_.residual_size, R = index_.residuals;
    camera_values_ = static_cast<std::size_t>(index_.cameras) * c;
    n_ = camera_values_ + 3 * static_cast<std::size_t>(index_.points);
    d_camera_of_ = DeviceVector<int>(index_.camera_of);
    d_point_of_ = DeviceVector<int>(index_.point_of);
    d_camera_param_ = DeviceVector<int>(index_.camera_param);
    d_point_param_ = DeviceVector<int>(index_.point_param);
    d_camera_start_ = DeviceVector<int>(index_.camera_start);
    d_camera_residuals_ = upload_index(index_.camera_residuals);
    d_point_start_ = DeviceVector<int>(index_.point_start);
    d_point_residuals_ = upload_index(index_.point_residuals);
    RepeatedPairs pairs;
    if (!index_.pair_next.empty()) {
      d_pair_next_ = DeviceVector<int>(index_.pair_next);
      d_pair_repeat_ = linalg_cuda::DeviceBuffer(index_.pair_repeat.size());
      LINALG_CUDA_CHECK(cudaMemcpyAsync(d_pair_repeat_.data(), index_.pair_repeat.data(), index_.pair_repeat.size(),
                                        cudaMemcpyHostToDevice, stream_));
      LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
      pairs = {d_pair_next_.data(), static_cast<const unsigned char*>(d_pair_repeat_.data())};
    }
    phase("index upload");
    shape_ = {R, index_.cameras, index_.points, c, m, d_camera_of_.data(), d_point_of_.data(), d_camera_param_.data(),
              d_point_param_.data(), d_camera_start_.data(), d_camera_residuals_.data(), d_point_start_.data(),
              d_point_residuals_.data(), pairs};

    host_cameras_.resize(layout.cameras.size() * c);
    host_points_.resize(layout.points.size() * 3);
    gather_blocks(layout.cameras, c, host_cameras_.data());
    gather_blocks(layout.points, 3, host_points_.data());
    {
      cameras_ = DeviceVector<double>(host_cameras_);
      points_ = DeviceVector<double>(host_points_);
      candidate_cameras_ = cameras_.copy();
      candidate_points_ = points_.copy();
      // x of every residual, then y: uploaded as the layout holds them and split on the device.
      const DeviceVector<double> interleaved(layout.observations);
      observations_ = DeviceVector<double>(2 * static_cast<std::size_t>(R));
      deinterleave_kernel<<<blocks_for(R), kThreads, 0, stream_>>>(R, interleaved.data(), observations_.data());
      LINALG_CUDA_CHECK_LAUNCH();
      LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before interleaved is freed
    }
    phase("parameters and observations");
    f_ = DeviceVector<double>(static_cast<std::size_t>(R) * m, 0.0);
    candidate_f_ = DeviceVector<double>(static_cast<std::size_t>(R) * m, 0.0);
    F_ = DeviceVector<double>(static_cast<std::size_t>(R) * m * c, 0.0);
    E_ = DeviceVector<double>(static_cast<std::size_t>(R) * m * 3, 0.0);
    cost_ = DeviceVector<double>(std::max(1, R), 0.0);
    gradient_ = DeviceVector<double>(n_, 0.0);
    scaling_ = DeviceVector<double>(n_, 1.0);
    norms_ = DeviceVector<double>(n_, 0.0);
    diagonal_ = DeviceVector<double>(n_, 0.0);
    d2_ = DeviceVector<double>(n_, 0.0);
    step_ = DeviceVector<double>(n_, 0.0);
    delta_ = DeviceVector<double>(n_, 0.0);
    Vinv_ = DeviceVector<double>(std::max<std::size_t>(1, 9 * static_cast<std::size_t>(index_.points)), 0.0);
    point_tmp_ = DeviceVector<double>(std::max<std::size_t>(1, 3 * static_cast<std::size_t>(index_.points)), 0.0);
    point_w_ = point_tmp_.copy();
    w_by_point_ = point_tmp_.copy();
    {  // The Schur product's passes: the point pass's grouped tiles, the frames and the compact views by
       // position and in residual order (snavely_schur_kernels.cuh).
      phase("Jacobian and vector storage");
      slots_ = index_.point_start.back();
      const std::size_t slots = std::max(1, slots_), residuals = std::max(1, R);
      {
        grouped_point_tiles();
        // The camera pass's ring (53 KB a block at 4 residuals in flight) is over the default 48 KB.
        LINALG_CUDA_CHECK(cudaFuncSetAttribute(staged_camera_chunk_kernel<SnavelyCameraTerms, SnavelyCameraTerms::kRing>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(staged_camera_shared_bytes<SnavelyCameraTerms, SnavelyCameraTerms::kRing>())));
        frames_ = DeviceVector<double>(std::max<std::size_t>(1, layout.cameras.size()) * kFrameSize, 0.0);
        scaled_Vinv_ =
            DeviceVector<double>(std::max<std::size_t>(1, kSymmetricBlock * static_cast<std::size_t>(index_.points)), 0.0);
        records_ = DeviceVector<double>(std::max<std::size_t>(1, layout.cameras.size()) * kCameraRecordSize, 0.0);
        views_by_position_ = DeviceVector<double>(slots * kCompactViewSize, 0.0);
        views_by_residual_ = DeviceVector<double>(residuals * kCompactViewSize, 0.0);
        if (layout_.loss.kind != LossKind::None) {
          corrections_by_position_ = DeviceVector<double>(slots * 4, 0.0);
          corrections_by_residual_ = DeviceVector<double>(residuals * 4, 0.0);
        }
      }
    }
    phase("point order");
    // Chunks of at most kChunk residuals of one camera, for the camera pass of the Schur product: a
    // camera's residuals in the fewest chunks, of equal sizes to within one (its threads equally busy).
    std::vector<int> chunk_begin, chunk_camera, camera_chunk_start{0};
    for (int cam = 0; cam < index_.cameras; ++cam) {
      const int begin = index_.camera_start[cam], n = index_.camera_start[cam + 1] - begin;
      const int pieces = (n + kChunk - 1) / kChunk;
      for (int k = 0; k < pieces; ++k) {
        chunk_begin.push_back(begin + static_cast<int>(static_cast<long long>(n) * k / pieces));
        chunk_camera.push_back(cam);
      }
      camera_chunk_start.push_back(static_cast<int>(chunk_begin.size()));
    }
    chunks_ = static_cast<int>(chunk_begin.size());
    chunk_begin.push_back(index_.cameras > 0 ? index_.camera_start[index_.cameras] : 0);
    chunk_begin_ = DeviceVector<int>(chunk_begin);
    chunk_camera_ = upload_index(chunk_camera);
    camera_chunk_start_ = DeviceVector<int>(camera_chunk_start);
    // The camera pass's c sums per chunk and warp of the chunk's block, or camera_sums' 2 c.
    partial_ = DeviceVector<double>(
        std::max<std::size_t>(1, static_cast<std::size_t>(chunks_) * std::max(2, camera_pass_parts()) * c), 0.0);
    if (chunked_camera_blocks())
      block_partial_ = DeviceVector<double>(std::max<std::size_t>(1, static_cast<std::size_t>(chunks_) * kBalBlockSums), 0.0);
    rhs_ = DeviceVector<double>(camera_values_, 0.0);
    y_ = DeviceVector<double>(camera_values_, 0.0);
    blocks_ = DeviceVector<double>(std::max<std::size_t>(1, static_cast<std::size_t>(index_.cameras) * c * c), 0.0);
    per_residual_ = DeviceVector<double>(std::max(1, R), 0.0);
    partials_ = DeviceVector<double>(kMaxReduceBlocks, 0.0);
    // The PCG's p'Ap in the Schur product's last kernel: a partial per block of it, then the ticket
    // (0 bits, as the reduction needs).
    pap_partials_ = DeviceVector<double>(blocks_for(camera_values_) + 1, 0.0);
    scalars_ = linalg_cuda::DeviceBuffer(64);
    LINALG_CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0, 64, stream_));
    phase("camera chunks and the rest");
  }

  bool evaluate_at_x(double* cost) override {
    const auto start = std::chrono::steady_clock::now();
    const bool ok = evaluate_fast(cameras_.data(), points_.data(), true, cost);
    jacobian_changed_ = true;
    counters_.jacobian_seconds += seconds_since(start);
    ++counters_.jacobian_evaluations;
    if (ok) {  // the gradient J'f, and the Jacobian's squared column norms for the scaling and the LM diagonal
      camera_sums(nullptr, gradient_.data(), norms_.data());
      point_gradient_kernel<<<blocks_for(shape_.P), kThreads, 0, stream_>>>(
          shape_, E_.data(), f_.data(), gradient_.data() + camera_values_, norms_.data() + camera_values_);
      LINALG_CUDA_CHECK_LAUNCH();
      if (jacobian_scaled_) {
        unscale_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(n_, scaling_.data(), gradient_.data(), norms_.data());
        LINALG_CUDA_CHECK_LAUNCH();
      }
    }
    return ok;
  }

  bool gradient_norms(double* norm, double* max_norm) override {
    *norm = std::sqrt(device_sum(gradient_.data(), n_, true));
    *max_norm = device_max_abs(gradient_.data(), n_);
    return true;
  }

  // Ceres computes the scaling once, from the first Jacobian; the evaluations after it store the scaled
  // Jacobian straight away (scaled_evaluation_), and there is nothing left to scale.
  void compute_jacobi_scaling() override {
    scaling_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(n_, norms_.data(), scaling_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    scaled_evaluation_ = true;
  }

  void apply_jacobi_scaling() override {
    if (jacobian_scaled_) return;
    scale_columns_kernel<<<blocks_for(shape_.R), kThreads, 0, stream_>>>(shape_, scaling_.data(), F_.data(), E_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    jacobian_scaled_ = true;
  }

  // After every Jacobian (and its scaling), what the Schur product reads: the cameras' frames and the
  // compact views in both orders.
  void refresh_schur_inputs() {
    {
      const int cameras = static_cast<int>(layout_.cameras.size());
      camera_frames_kernel<<<blocks_for(cameras), kThreads, 0, stream_>>>(cameras, cameras_.data(), frames_.data());
      LINALG_CUDA_CHECK_LAUNCH();
      const auto views = [&](int n, const int* order, DeviceVector<double>& out, DeviceVector<double>& corrections) {
        if (n == 0) return;
        compact_views_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(shape_, n, order, frames_.data(), points_.data(),
                                                                       layout_.loss, observations_.data(), out.data(),
                                                                       corrections.size() ? corrections.data() : nullptr);
        LINALG_CUDA_CHECK_LAUNCH();
      };
      views(slots_, position_residual_.data(), views_by_position_, corrections_by_position_);
      views(shape_.R, nullptr, views_by_residual_, corrections_by_residual_);
    }
  }

  StepResult solve_step(double radius, bool reuse_diagonal) override {
    const auto start = std::chrono::steady_clock::now();
    if (jacobian_changed_) {
      refresh_schur_inputs();
      jacobian_changed_ = false;
    }
    lm_diagonal_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(n_, !reuse_diagonal, options_.min_lm_diagonal,
                                                                 options_.max_lm_diagonal, radius, norms_.data(),
                                                                 scaling_.data(),
                                                                 diagonal_.data(), d2_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    int* counts = scalars_.as<int>() + 8;  // [0] singular points, [1] singular cameras, [2] non-finite
    LINALG_CUDA_CHECK(cudaMemsetAsync(counts, 0, 3 * sizeof(int), stream_));
    point_blocks_kernel<<<blocks_for(shape_.P), kThreads, 0, stream_>>>(shape_, E_.data(), d2_.data() + camera_values_,
                                                                       Vinv_.data(), counts);
    LINALG_CUDA_CHECK_LAUNCH();
    {
      scaled_point_inverse_blocks_kernel<<<blocks_for(shape_.P), kThreads, 0, stream_>>>(
          shape_, Vinv_.data(), scaling_.data() + camera_values_, scaled_Vinv_.data());
      LINALG_CUDA_CHECK_LAUNCH();
    }
    // rhs = F'(f - E e), e = V^-1 E'f (from the gradient's E'f).
    scaled_point_inverse_kernel<<<blocks_for(shape_.P), kThreads, 0, stream_>>>(
        shape_, Vinv_.data(), scaling_.data() + camera_values_, gradient_.data() + camera_values_, point_tmp_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    camera_sums(point_tmp_.data(), rhs_.data(), nullptr);

    StepResult result;
    y_.fill(0.0);
    iterative_schur_solve(&result, counts);

    const bool usable = result.termination != LinearTermination::Failure &&
                        result.termination != LinearTermination::FatalError;
    if (usable) {
      // y_p = V^-1 E'(f - F y_c) = e - w, w = V^-1 E'F y_c from the Schur product's point pass;
      // step = -y; delta = step .* scaling.
      back_substitution_pass(y_.data(), point_w_.data());
      finish_step_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(camera_values_, n_, y_.data(), point_tmp_.data(),
                                                                   point_w_.data(), scaling_.data(), step_.data(),
                                                                   delta_.data(), counts + 2);
      LINALG_CUDA_CHECK_LAUNCH();
      model_cost_kernel<<<blocks_for(shape_.R), kThreads, 0, stream_>>>(shape_, F_.data(), E_.data(), f_.data(),
                                                                        step_.data(), per_residual_.data());
      LINALG_CUDA_CHECK_LAUNCH();
      result.model_cost_change = device_sum(per_residual_.data(), shape_.R, false);
    }
    int host_counts[3];
    LINALG_CUDA_CHECK(cudaMemcpyAsync(host_counts, counts, sizeof host_counts, cudaMemcpyDeviceToHost, stream_));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    counters_.singular_point_blocks += host_counts[0];
    counters_.singular_camera_blocks += host_counts[1];
    result.finite = host_counts[2] == 0;
    counters_.linear_seconds += seconds_since(start);
    return result;
  }

  bool evaluate_candidate(double* cost) override {
    const auto start = std::chrono::steady_clock::now();
    apply_delta_kernel<<<blocks_for(n_), kThreads, 0, stream_>>>(shape_, cameras_.data(), points_.data(), delta_.data(),
                                                                 candidate_cameras_.data(), candidate_points_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    const bool ok = evaluate_fast(candidate_cameras_.data(), candidate_points_.data(), false, cost);
    counters_.residual_seconds += seconds_since(start);
    ++counters_.residual_evaluations;
    return ok;
  }

  double x_norm() override {
    return std::sqrt(device_sum(cameras_.data(), camera_values_, true) +
                     device_sum(points_.data(), n_ - camera_values_, true));
  }

  double delta_norm() override { return std::sqrt(device_sum(delta_.data(), n_, true)); }

  void accept_candidate() override {
    std::swap(cameras_, candidate_cameras_);
    std::swap(points_, candidate_points_);
  }

  void write_parameters() override {
    const int c = index_.camera_size;
    cameras_.download(host_cameras_.data(), host_cameras_.size());
    points_.download(host_points_.data(), host_points_.size());
    scatter_blocks(host_cameras_.data(), c, index_.cameras, layout_.cameras);
    scatter_blocks(host_points_.data(), 3, index_.points, layout_.points);
  }

  const EngineCounters& counters() const override { return counters_; }

  std::vector<double> jacobian() override {
    const std::size_t R = shape_.R, fw = static_cast<std::size_t>(shape_.m) * shape_.c, ew = 3 * static_cast<std::size_t>(shape_.m);
    const std::vector<double> F = F_.to_std(), E = E_.to_std();
    std::vector<double> all(R * (fw + ew));
    for (std::size_t i = 0; i < R; ++i) {
      for (std::size_t k = 0; k < fw; ++k) all[i * fw + k] = F[k * R + i];
      for (std::size_t k = 0; k < ew; ++k) all[R * fw + i * ew + k] = E[k * R + i];
    }
    return all;
  }
  std::vector<double> schur_product(const std::vector<double>& x) override {
    std::vector<double> padded(x);  // a camera vector, padded to the full variable vector for the reordering
    padded.resize(n_, 0.0);
    std::vector<double> device_order = to_device_order(padded);
    device_order.resize(x.size());
    const DeviceVector<double> dx(device_order);
    DeviceVector<double> dy(x.size(), 0.0);
    SchurOperator(*this).apply(dx, dy);
    std::vector<double> y = dy.to_std();
    y.resize(n_, 0.0);
    y = to_natural(y);
    y.resize(x.size());
    return y;
  }
  std::vector<double> preconditioner_blocks() override {
    const std::size_t C = shape_.C, cc = static_cast<std::size_t>(shape_.c) * shape_.c;
    const std::vector<double> soa = blocks_.to_std();
    std::vector<double> natural(C * cc);
    for (std::size_t cam = 0; cam < C; ++cam)
      for (std::size_t k = 0; k < cc; ++k) natural[cam * cc + k] = soa[k * C + cam];
    return natural;
  }
  std::vector<double> delta() override { return to_natural(delta_.to_std()); }

  // Variable vectors between the natural layout (camera after camera, then point after point) and the
  // device's continuous-element layout.
  std::vector<double> to_natural(const std::vector<double>& v) const {
    std::vector<double> out(v.size());
    for (int cam = 0; cam < shape_.C; ++cam)
      for (int k = 0; k < shape_.c; ++k) out[static_cast<std::size_t>(cam) * shape_.c + k] = v[cam_at(shape_, cam, k)];
    for (int p = 0; p < shape_.P; ++p)
      for (int q = 0; q < 3; ++q) out[camera_values_ + 3 * static_cast<std::size_t>(p) + q] = v[camera_values_ + pt_at(shape_, p, q)];
    return out;
  }
  std::vector<double> to_device_order(const std::vector<double>& v) const {
    std::vector<double> out(v.size());
    for (int cam = 0; cam < shape_.C; ++cam)
      for (int k = 0; k < shape_.c; ++k) out[cam_at(shape_, cam, k)] = v[static_cast<std::size_t>(cam) * shape_.c + k];
    for (int p = 0; p < shape_.P; ++p)
      for (int q = 0; q < 3; ++q) out[camera_values_ + pt_at(shape_, p, q)] = v[camera_values_ + 3 * static_cast<std::size_t>(p) + q];
    return out;
  }
  std::string description() const override {
    return "cuda, fast path (SnavelyReprojectionError and the loss evaluated on the GPU)";
  }

  // For the operator.
  const Shape& shape() const { return shape_; }
  std::size_t camera_values() const { return camera_values_; }
  cudaStream_t stream() const { return stream_; }
  const double* d2() const { return d2_.data(); }
  // The Schur product's passes (schur_product_kernels.cuh), launched on the stream. The point pass at
  // x leaves w~ = s_p .* V^-1 E'F x per point, from which the camera pass forms v. `stopped`: the CG's
  // status inside its loop (the kernels return at once when it is nonzero), else null.
  // `update`: inside the PCG, x is its direction, updated first (camera_records_kernel).
  void product_point_pass(const double* x, const int* stopped, const DirectionUpdate& update = {}) const {
    point_pass<PointPassResult::kPerPointScaled>(x, const_cast<double*>(w_by_point_.data()), stopped, update);
  }

  // The back-substitution's part that depends on the camera step: w = V^-1 E'F y_c per point
  // (continuous-element) into out.
  void back_substitution_pass(const double* y, double* out) const {
    point_pass<PointPassResult::kPerPoint>(y, out, nullptr);
  }

  template <PointPassResult kResult>
  void point_pass(const double* x, double* point_result, const int* stopped, const DirectionUpdate& update = {}) const {
    // The records first, even without points to pass over: the camera pass reads them too, and inside
    // the PCG they update its direction.
    const SnavelyPointTerms terms = snavely_point_terms(x, point_result, stopped, update);
    if (grouped_.tiles == 0) return;
    LINALG_CUDA_CHECK(linalg_cuda::detail::launch_after_previous(
        grouped_point_pass_kernel<SnavelyPointTerms, kResult>, grouped_point_blocks_, kThreads,
        grouped_point_pass_shared_bytes<SnavelyPointTerms>(), stream_, terms, grouped_, Vinv_.data(), stopped));
    if (many_item_tiles_ > 0)
      LINALG_CUDA_CHECK(linalg_cuda::detail::launch_after_previous(
          many_items_point_pass_kernel<SnavelyPointTerms, kResult>,
          blocks_for(32 * static_cast<std::size_t>(many_item_tiles_)), kThreads, 0, stream_, terms, grouped_,
          many_item_tile_list_.data(), many_item_tiles_, Vinv_.data(), stopped));
  }

  // The camera pass: per chunk, the sums of F' v over its residuals into partial().
  void camera_pass(const int* stopped) const {
    const unsigned blocks = static_cast<unsigned>(std::max(1, std::min(chunks_, 65535 * 8)));
    LINALG_CUDA_CHECK(linalg_cuda::detail::launch_after_previous(
        staged_camera_chunk_kernel<SnavelyCameraTerms, SnavelyCameraTerms::kRing>, blocks, kThreads,
        staged_camera_shared_bytes<SnavelyCameraTerms, SnavelyCameraTerms::kRing>(), stream_, snavely_camera_terms(),
        chunk_begin_.data(), chunk_camera_.data(), chunks_, const_cast<double*>(partial_.data()), shape_.c, stopped));
  }

  const int* camera_chunk_start() const { return camera_chunk_start_.data(); }
  // The camera pass's parts per chunk in partial() (staged_camera_chunk_kernel's, a part per warp).
  int camera_pass_parts() const { return kWarpsPerBlock; }
  // Where the product's last kernel sums p'Ap into `sum`.
  ChunkSumDot pap_reduction(double* sum) const {
    double* partials = const_cast<double*>(pap_partials_.data());
    return {sum, partials, reinterpret_cast<unsigned int*>(partials + pap_partials_.size() - 1)};
  }
  double* partial() const { return const_cast<double*>(partial_.data()); }

 private:
  // The point pass's tiles and items (grouped_point_tiles.h), built on the host from the
  // index on the set-up's threads, and its launch shape: as many blocks as fit at once, whose warps
  // walk the tiles.
  void grouped_point_tiles() {
    const GroupedPointLayout built = make_grouped_point_layout(index_, static_cast<int>(layout_.cameras.size()));
    const GroupedPointTiles& tiles = built.tiles;
    grouped_tile_start_ = DeviceVector<int>(tiles.tile_start);
    grouped_tile_item_start_ = DeviceVector<int>(tiles.tile_item_start);
    grouped_tile_point_start_ = DeviceVector<int>(tiles.tile_point_start);
    item_start_ = DeviceVector<int>(tiles.item_start);
    item_camera_ = upload_index(tiles.item_camera);
    position_offset_ = upload_packed_bytes(built.position_offset);
    point_offset_ = upload_packed_bytes(built.point_offset);
    position_residual_ = upload_index(built.position_residual);
    many_item_tiles_ = static_cast<int>(built.many_item_tiles.size());
    many_item_tile_list_ = upload_index(built.many_item_tiles);
    grouped_ = {static_cast<int>(tiles.tile_start.size()) - 1, grouped_tile_start_.data(), grouped_tile_item_start_.data(),
                grouped_tile_point_start_.data(), item_start_.data(), item_camera_.data(), position_offset_.data(),
                point_offset_.data()};
    constexpr std::size_t shared = grouped_point_pass_shared_bytes<SnavelyPointTerms>();
    // Two blocks a multiprocessor (and the driver's 1 KB each) in a 164 KB carveout, so that 92 KB
    // stay for the L1 (GroupedStagedTile says what that was worth).
    static_assert(2 * (shared + 1024) <= 164 * 1024, "the point pass's blocks leave the L1 92 KB");
    const auto allow_shared = [&](auto kernel) {
      LINALG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
    };
    allow_shared(grouped_point_pass_kernel<SnavelyPointTerms, PointPassResult::kPerPointScaled>);
    allow_shared(grouped_point_pass_kernel<SnavelyPointTerms, PointPassResult::kPerPoint>);
    int device = 0, multiprocessors = 0, per_multiprocessor = 0;
    LINALG_CUDA_CHECK(cudaGetDevice(&device));
    LINALG_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    LINALG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_multiprocessor, grouped_point_pass_kernel<SnavelyPointTerms, PointPassResult::kPerPointScaled>, kThreads, shared));
    grouped_point_blocks_ = static_cast<unsigned>(std::max(
        1, std::min(multiprocessors * std::max(1, per_multiprocessor), (grouped_.tiles + kWarpsPerBlock - 1) / kWarpsPerBlock)));
  }

  // Launches the cameras' records at x (on the stream, before the passes that read them); x is written
  // only with an update (the PCG's direction).
  SnavelyPointTerms snavely_point_terms(const double* x, double* point_result, const int* stopped,
                                        const DirectionUpdate& update) const {
    double* records = const_cast<double*>(records_.data());
    const int cameras = static_cast<int>(layout_.cameras.size());
    const unsigned record_blocks = static_cast<unsigned>(std::max(1, (cameras + kRecordThreads - 1) / kRecordThreads));
    LINALG_CUDA_CHECK(linalg_cuda::detail::launch_after_previous(camera_records_kernel, record_blocks, kRecordThreads, 0, stream_,
                                                         shape_, cameras, frames_.data(), scaling_.data(),
                                                         const_cast<double*>(x), update.z, update.beta, records, stopped));
    return {shape_,
            slots_,
            views_by_position_.data(),
            corrections_by_position_.size() ? corrections_by_position_.data() : nullptr,
            records,
            scaling_.data() + camera_values_,
            scaled_Vinv_.data(),
            point_result};
  }
  SnavelyCameraTerms snavely_camera_terms() const {
    return {shape_,
            views_by_residual_.data(),
            corrections_by_residual_.size() ? corrections_by_residual_.data() : nullptr,
            frames_.data(),
            records_.data(),
            scaling_.data(),
            w_by_point_.data()};
  }

  bool evaluate_fast(const double* cameras, const double* points, bool jacobians, double* cost) {
    int* failed = scalars_.as<int>() + 12;
    LINALG_CUDA_CHECK(cudaMemsetAsync(failed, 0, sizeof(int), stream_));
    // A candidate's residuals go to scratch: a rejected step must leave x's residuals intact.
    const double* scaling = jacobians && scaled_evaluation_ ? scaling_.data() : nullptr;
    snavely_kernel<<<blocks_for(shape_.R), kThreads, 0, stream_>>>(shape_, cameras, points, observations_.data(),
                                                                   layout_.loss, jacobians, scaling,
                                                                   jacobians ? f_.data() : candidate_f_.data(), F_.data(),
                                                                   E_.data(), cost_.data(), failed);
    if (jacobians) jacobian_scaled_ = scaling != nullptr;
    LINALG_CUDA_CHECK_LAUNCH();
    *cost = device_sum(cost_.data(), shape_.R, false);
    int host_failed = 0;
    LINALG_CUDA_CHECK(cudaMemcpyAsync(&host_failed, failed, sizeof(int), cudaMemcpyDeviceToHost, stream_));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return host_failed == 0 && std::isfinite(*cost);
  }

  // Per camera, out = F'(f - E w) (w per point, null: F'f) and, with norms, the squared column norms of
  // F, over the chunks (camera_gather_kernels.cuh).
  void camera_sums(const double* w, double* out, double* norms) {
    const unsigned blocks = static_cast<unsigned>(std::max(1, std::min(chunks_, 65535 * 8)));
    const int stride = norms ? 18 : 9;
    if (norms)
      camera_chunk_kernel<<<blocks, kThreads, 0, stream_>>>(CameraGatherTerms<2, 9, true>{{}, shape_, F_.data(), E_.data(), f_.data(), w},
                                                            chunk_begin_.data(), chunks_, partial_.data(), stride, nullptr);
    else
      camera_chunk_kernel<<<blocks, kThreads, 0, stream_>>>(CameraGatherTerms<2, 9, false>{{}, shape_, F_.data(), E_.data(), f_.data(), w},
                                                            chunk_begin_.data(), chunks_, partial_.data(), stride, nullptr);
    LINALG_CUDA_CHECK_LAUNCH();
    const unsigned sum_blocks = blocks_for(camera_values_);
    camera_chunk_sum_kernel<<<sum_blocks, kThreads, 0, stream_>>>(shape_, camera_chunk_start_.data(), partial_.data(), 1, stride,
                                                                  0, nullptr, nullptr, out, ChunkSumDot{}, nullptr);
    LINALG_CUDA_CHECK_LAUNCH();
    if (norms) {
      camera_chunk_sum_kernel<<<sum_blocks, kThreads, 0, stream_>>>(shape_, camera_chunk_start_.data(), partial_.data(),
                                                                    1, stride, 9, nullptr, nullptr, norms, ChunkSumDot{}, nullptr);
      LINALG_CUDA_CHECK_LAUNCH();
    }
  }

  double device_sum(const double* v, std::size_t n, bool squares) {
    double* out = scalars_.as<double>();
    const unsigned blocks = std::min<unsigned>(kMaxReduceBlocks, blocks_for(n));
    sum_kernel<<<blocks, kThreads, 0, stream_>>>(v, n, squares, partials_.data(),
                                                 reinterpret_cast<unsigned*>(scalars_.as<int>() + 14), out);
    LINALG_CUDA_CHECK_LAUNCH();
    double result;
    LINALG_CUDA_CHECK(cudaMemcpyAsync(&result, out, sizeof(double), cudaMemcpyDeviceToHost, stream_));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return result;
  }

  double device_max_abs(const double* v, std::size_t n) {
    auto* out = reinterpret_cast<unsigned long long*>(scalars_.as<double>() + 1);
    LINALG_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(unsigned long long), stream_));
    max_abs_kernel<<<std::min<unsigned>(kMaxReduceBlocks, blocks_for(n)), kThreads, 0, stream_>>>(v, n, out);
    LINALG_CUDA_CHECK_LAUNCH();
    unsigned long long bits;
    LINALG_CUDA_CHECK(cudaMemcpyAsync(&bits, out, sizeof bits, cudaMemcpyDeviceToHost, stream_));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    double result;
    std::memcpy(&result, &bits, sizeof result);
    return result;
  }

  // Without repeated camera-point pairs, the preconditioner's blocks over chunks (schur_block_kernels.cuh).
  bool chunked_camera_blocks() const { return index_.pair_next.empty(); }
  static constexpr int kBalBlockSums = CameraBlockTerms<2, 9>::kSums;

  void iterative_schur_solve(StepResult* result, int* counts) {
    const bool schur = options_.preconditioner == ceres::SCHUR_JACOBI;
    if (chunked_camera_blocks()) {
      const CameraBlockTerms<2, 9> terms{{}, shape_, F_.data(), E_.data(), Vinv_.data(), schur};
      camera_chunk_kernel<<<static_cast<unsigned>(std::max(1, std::min(chunks_, 65535 * 8))), kThreads, 0, stream_>>>(
          terms, chunk_begin_.data(), chunks_, block_partial_.data(), kBalBlockSums, nullptr);
      LINALG_CUDA_CHECK_LAUNCH();
      camera_block_sum_kernel<9><<<blocks_for(shape_.C), kThreads, 0, stream_>>>(
          shape_, camera_chunk_start_.data(), block_partial_.data(), d2_.data(), blocks_.data(), counts + 1);
    } else {
      camera_blocks_kernel<<<blocks_for(32 * std::size_t(shape_.C)), kThreads, 0, stream_>>>(
          shape_, F_.data(), E_.data(), Vinv_.data(), d2_.data(), schur, blocks_.data(), counts + 1);
    }
    LINALG_CUDA_CHECK_LAUNCH();
    linalg_cuda::CgOptions cg = step_cg_options(options_);
    // The device loop tests every kPcgCheckEvery iterations. The interval changes little: the
    // products a batch runs after the stop return at once (SchurOperator::apply_unless_stopped).
    cg.execution.check_every = kPcgCheckEvery;
    // Nsight Compute profiles no kernel of a graph that can hold conditional nodes: with the
    // environment variable CERES_CUDA_PCG_HOST_LOOP set, the loop is batches of plain graph launches
    // that the host tests between (docs/ceres_cuda.md, "Profiling"), whose kernels it profiles one by one.
    if (std::getenv("CERES_CUDA_PCG_HOST_LOOP")) cg.execution.use_device_loop = false;
    cg_.set_options(cg);
    const SchurOperator op(*this);
    // The inverted camera blocks, continuous-element like the vectors: linalg_cuda's CG applies them in
    // the kernel that updates x and r (cg_update_block_jacobi), one kernel a PCG iteration where a
    // preconditioner of our own took three. Made on the first step and refilled in place on the next
    // ones: a new one each step cost an allocation and a cudaFree, which waits for the device.
    if (shape_.C > 0 && !preconditioner_)
      preconditioner_ = linalg_cuda::BlockJacobiPreconditioner::from_inverse_blocks(
          shape_.C, shape_.c, blocks_, linalg_cuda::BlockVectorLayout::kContinuousElement);
    else if (preconditioner_)
      preconditioner_->update_inverse_blocks(blocks_);
    // The step's kernels queued so far (the LM diagonal, V^-1, the right-hand side, the preconditioner's
    // blocks) finish before the PCG's clock starts: its time is the solve's alone (its first
    // product, its iterations, its read-backs). Without this the solve's first read-back waited for
    // them, 8% of the PCG's time at Final-13682 scale.
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto pcg_start = std::chrono::steady_clock::now();
    const linalg_cuda::SolverSummary s = cg_.solve(op, rhs_, y_, preconditioner_ ? &*preconditioner_ : nullptr);
    counters_.pcg_seconds += seconds_since(pcg_start);
    set_ceres_cg_outcome(s, options_, result);
    counters_.linear_iterations += result->linear_iterations;
  }

  const BaLayout& layout_;
  EngineOptions options_;
  BaIndex index_;
  cudaStream_t stream_;
  Shape shape_{};
  bool jacobian_changed_ = true;  // the Schur product's inputs must be refreshed before the next step
  bool scaled_evaluation_ = false;  // the evaluation stores J diag(s) (the scaling is known)
  bool jacobian_scaled_ = false;    // F and E hold the scaled Jacobian
  std::size_t camera_values_ = 0, n_ = 0;
  DeviceVector<int> d_camera_of_, d_point_of_, d_camera_param_, d_point_param_, d_camera_start_, d_camera_residuals_,
      d_point_start_, d_point_residuals_, d_pair_next_;
  linalg_cuda::DeviceBuffer d_pair_repeat_;  // bytes (BaIndex::pair_repeat), empty when no pair repeats
  DeviceVector<double> cameras_, points_, candidate_cameras_, candidate_points_, observations_;
  DeviceVector<double> f_, candidate_f_, F_, E_, cost_, gradient_, scaling_, norms_, diagonal_, d2_, step_, delta_;
  int chunks_ = 0;
  DeviceVector<int> chunk_begin_, chunk_camera_, camera_chunk_start_;  // chunk_camera_: per chunk, its camera
  DeviceVector<double> partial_, block_partial_;  // per chunk: the camera pass's sums, the camera blocks' sums
  DeviceVector<double> pap_partials_;             // the PCG's p'Ap (pap_reduction)
  int slots_ = 0;
  // The point pass (grouped_point_pass_kernel): its tiles and items, and per position
  // its residual (the order of the point pass's views and corrections).
  GroupedTilesView grouped_{};
  unsigned grouped_point_blocks_ = 1;
  DeviceVector<int> grouped_tile_start_, grouped_tile_item_start_, grouped_tile_point_start_, item_start_, item_camera_,
      position_offset_, point_offset_, position_residual_;
  int many_item_tiles_ = 0;  // tiles of one point with more than kTileItems items, and their list
  DeviceVector<int> many_item_tile_list_;
  // The passes' inputs (snavely_schur_kernels.cuh): per camera its frame and, per product, its record (the
  // tangent of x, R) and the point pass's w~ per point (w_by_point_); the compact views and loss
  // corrections by position (the point pass's order: grouped_point_tiles.h) and in residual order.
  DeviceVector<double> frames_, records_, views_by_position_, corrections_by_position_, views_by_residual_,
      corrections_by_residual_;
  DeviceVector<double> scaled_Vinv_;  // per point, scaled_point_inverse_blocks_kernel's
  DeviceVector<double> Vinv_, point_tmp_, point_w_, w_by_point_, rhs_, y_, blocks_, per_residual_, partials_;
  linalg_cuda::DeviceBuffer scalars_;  // [0] sum result, [1] max bits, ints from 8: counts, info, failed, ticket
  linalg_cuda::ConjugateGradient cg_;
  std::optional<linalg_cuda::BlockJacobiPreconditioner> preconditioner_;  // the PCG's, refilled each step
  std::vector<double> host_cameras_, host_points_;  // x as uploaded, and written back by write_parameters
  EngineCounters counters_;
};

std::size_t SchurOperator::rows() const { return engine_.camera_values(); }

void SchurOperator::apply_unless_stopped(const DeviceVector<double>& x, DeviceVector<double>& y,
                                         const int* stopped) const {
  product(x, y, DirectionUpdate{}, ChunkSumDot{}, stopped);
}

bool SchurOperator::apply_cg_step(const linalg_cuda::CgProductStep& step) const {
  product(step.p, step.q, DirectionUpdate{step.z.data(), step.beta}, engine_.pap_reduction(step.pap), step.stopped);
  return true;
}

void SchurOperator::product(const DeviceVector<double>& x, DeviceVector<double>& y, const DirectionUpdate& update,
                            ChunkSumDot dot, const int* stopped) const {
  const Shape& s = engine_.shape();
  cudaStream_t stream = engine_.stream();
  engine_.product_point_pass(x.data(), stopped, update);
  engine_.camera_pass(stopped);
  LINALG_CUDA_CHECK(linalg_cuda::detail::launch_after_previous(camera_chunk_sum_kernel,
                                                       blocks_for(static_cast<std::size_t>(s.C) * s.c), kThreads, 0,
                                                       stream, s, engine_.camera_chunk_start(), engine_.partial(),
                                                       engine_.camera_pass_parts(), s.c,
                                                       0, engine_.d2(), x.data(), y.data(), dot, stopped));
}

}  // namespace

std::unique_ptr<BaEngine> make_cuda_engine(const BaLayout& layout, const EngineOptions& options) {
  if (!layout.snavely)
    throw linalg_cuda::InvalidArgument("ceres_cuda: the BAL GPU engine takes SnavelyReprojectionError residuals only");
  if (!linalg_cuda::cuda_device_available()) throw linalg_cuda::CudaError("ceres_cuda: no CUDA device");
  return std::make_unique<CudaEngine>(layout, options);
}

}  // namespace ceres_cuda::detail
