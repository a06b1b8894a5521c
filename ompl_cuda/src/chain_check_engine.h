#pragma once
// The batched validity and motion checks behind ChainValidityChecker and ChainMotionValidator, on the
// CPU reference or the GPU. Device memory (chain, obstacles, bounds, scratch), pinned staging and the
// two streams (kernels, uploads) belong to the engine: made once, scratch grown when a batch is larger
// than any before, whatever thread calls (OMPL's Benchmark runs each plan on a new thread). Calls are
// serialised by a mutex, so OMPL's multi-threaded planners may share a checker.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "chain_fast_filter.h"
#include "chain_geometry.h"
#include "linalg_cuda/backend.h"
#include "ompl_cuda/planar_chain.h"
#include "ompl_cuda/workspace2d.h"

namespace ompl_cuda::detail {

class ChainCheckEngine {
 public:
  ChainCheckEngine(const PlanarChain& chain, const Workspace2D& workspace, JointKind kind, std::vector<double> low,
                   std::vector<double> high, linalg_cuda::Backend backend);
  ~ChainCheckEngine();

  linalg_cuda::Backend backend() const { return backend_; }
  int links() const { return chain_.links(); }

  // One configuration, on the CPU (a launch would cost more than the check).
  bool valid(const double* q) const;
  // One motion, on the CPU: the first invalid index as check_motions defines it.
  int first_invalid(const double* from, const double* to, int segments) const;
  // count configurations, q[i * links + j]; valid[i] = 1 or 0.
  void check_states(const double* q, std::size_t count, char* valid);
  // count motions from[i] -> to[i] with segments[i] = validSegmentCount: first_invalid[i] is the
  // smallest j in 1..segments (j = segments meaning `to` itself, checked as given, not interpolated)
  // whose configuration is invalid, or 0 when all are valid. Interpolation at t = j / segments as the
  // OMPL space does it: DiscreteMotionValidator's states, in any order.
  void check_motions(const double* from, const double* to, const int* segments, std::size_t count,
                     int* first_invalid);
  // The same, with the inputs written by fill(first, n, from, to, segments) straight into the
  // engine's staging memory (pinned for the GPU), e.g. from OMPL states on all cores: motions
  // first .. first + n - 1 go to from[i * links], to[i * links], segments[i], i < n. On the GPU the
  // batch is filled in chunks, each copied (on a stream of its own) and checked while the host fills
  // the next. Then consume(first_invalid, segments) reads the answers and the segment counts of all
  // count motions from the engine's memory, before the engine takes another call.
  template <typename Fill, typename Consume>
  void check_motions_filled(std::size_t count, const Fill& fill, const Consume& consume) {
    if (count == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const MotionStaging staging = stage_motions(count);
    const std::size_t d = static_cast<std::size_t>(chain_.links());
    const std::size_t chunk = motion_chunk(count);
    try {
      for (std::size_t first = 0; first < count; first += chunk) {
        const std::size_t n = std::min(chunk, count - first);
        fill(first, n, staging.from + first * d, staging.to + first * d, staging.segments + first);
        check_staged_motions(first, n, first / chunk, staging);
      }
      finish_staged_motions();
    } catch (...) {
      abandon_staged_motions();  // copies may still read the staging memory
      throw;
    }
    consume(static_cast<const int*>(staging.first_invalid), static_cast<const int*>(staging.segments));
  }

  // Whether the single-precision pre-check (chain_fast_filter.h) serves this workspace on the GPU.
  bool fast_filter_enabled() const { return filter_.enabled; }

 private:
  // Inputs and answers of one batch, in host memory (pinned for the GPU).
  struct MotionStaging {
    double* from;
    double* to;
    int* segments;
    int* first_invalid;
  };
  // Motions per chunk of a batch of `count` (all of them on the CPU). On the GPU about an eighth of
  // the batch, so that the host's filling of the first chunk, which nothing overlaps, stays short,
  // between 16384 (a few waves of warps: smaller kernels leave the GPU idle) and 65536.
  std::size_t motion_chunk(std::size_t count) const {
    if (backend_ != linalg_cuda::Backend::Cuda) return count;
    return std::clamp<std::size_t>((count / 8 + 4095) / 4096 * 4096, 16384, 65536);
  }
  MotionStaging stage_motions(std::size_t count);
  // Motions first .. first + n - 1 of the staging, chunk number `chunk`: checked now (CPU) or copied
  // and launched (GPU).
  void check_staged_motions(std::size_t first, std::size_t n, std::size_t chunk, const MotionStaging& staging);
  void finish_staged_motions();  // waits for the GPU's answers
  // The CPU backend's batch loops, on all cores (chain_check_engine_cpu.cpp).
  void check_states_cpu(const double* q, std::size_t count, char* valid) const;
  void check_motions_cpu(std::size_t first, std::size_t n, const MotionStaging& staging) const;
  void abandon_staged_motions() noexcept;
  ChainView chain_view() const;
  ObstacleView obstacle_view() const;
  BoundsView bounds_view() const;
  struct Device;

  PlanarChain chain_;
  std::vector<double> rects_, segs_, low_, high_;
  RectangleGrid grid_;  // over rects_, when there are many
  FastFilter filter_;   // the GPU's pre-check, when the workspace suits it
  JointKind kind_;
  linalg_cuda::Backend backend_;
  std::unique_ptr<Device> device_;
  std::vector<double> cpu_staging_;  // the CPU backend's staging for check_motions_filled
  std::vector<int> cpu_counts_;      // its segment counts and answers
  std::mutex mutex_;
};

// The CPU reference of one motion (same rule as check_motions).
int first_invalid_on_motion(const double* from, const double* to, int segments, const ChainView& chain,
                            const ObstacleView& obstacles, const BoundsView& bounds, JointKind kind);

}  // namespace ompl_cuda::detail
