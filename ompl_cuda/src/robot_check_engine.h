#pragma once
// The batched state and motion checks behind RobotValidityChecker and RobotMotionValidator, on the CPU
// (all cores) or the GPU, both deciding with robot_state_check.h's tests on the same arrays
// (RobotCheckData), the GPU's shared out across a warp's lanes, so that they agree on every state. Device memory, its stream and the
// scratch belong to the engine: made once, grown when a batch is larger than any before. Batch calls
// are serialised by a mutex, so OMPL's multi-threaded planners may share it; the single checks run on
// the calling thread.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>

#include "linalg_cuda/backend.h"
#include "robot_check_data.h"

namespace ompl_cuda::detail {

class RobotCheckEngine {
 public:
  // Throws InvalidArgument on the GPU for a robot of more than kMaxGpuLinks links, more than
  // kMaxGpuLinks / 4 links that the kinematics' walk comes back to, or more self-collision links' bound
  // centres than the device's shared memory holds for a block (about 150 on an H100 or H200).
  RobotCheckEngine(RobotCheckData data, const Scene& scene, linalg_cuda::Backend backend);
  ~RobotCheckEngine();

  static constexpr int kMaxGpuLinks = 128;

  linalg_cuda::Backend backend() const { return backend_; }
  int dimension() const { return static_cast<int>(data_.group.size()); }

  // Takes the scene's primitives (and uploads them) when its version differs from the last taken;
  // not while checks run.
  void sync_scene(const Scene& scene);

  // One state of the group (dimension() values), on the CPU.
  bool valid(const double* values) const;
  // One motion, on the CPU: the smallest j in 1 .. segments whose state is invalid (j = segments, or 1
  // when segments is 0, meaning `to` itself, checked as given), or 0 when all are valid. The state at j
  // < segments is from + (to - from) * j / segments, as RealVectorStateSpace::interpolate makes it.
  int first_invalid(const double* from, const double* to, int segments) const;

  // count states, values[i * dimension() + k]: valid[i] = 1 or 0.
  void check_states(const double* values, std::size_t count, char* valid);
  // count motions from[i] -> to[i], first_invalid as above.
  void check_motions(const double* from, const double* to, const int* segments, std::size_t count,
                     int* first_invalid);

  // The same with the inputs written by fill straight into the engine's staging memory (pinned for the
  // GPU, so that they cross the bus in one copy at its full speed), e.g. from OMPL states:
  // fill(values) writes count * dimension() values; fill(from, to, segments) count motions.
  template <typename Fill>
  void check_states_filled(std::size_t count, const Fill& fill, char* valid) {
    if (count == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    double* values = stage(count * dimension(), 0);
    fill(values);
    run_states(values, count, valid);
  }
  template <typename Fill>
  void check_motions_filled(std::size_t count, const Fill& fill, int* first_invalid) {
    if (count == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t values = count * dimension();
    double* from = stage(2 * values, count);
    int* segments = reinterpret_cast<int*>(from + 2 * values);
    fill(from, from + values, segments);
    run_motions(from, from + values, segments, count, first_invalid);
  }

  // count states already in device memory (count * dimension() doubles), answers into device memory,
  // ordered on `stream` (after its earlier work, before its later) and not waited for. InvalidArgument
  // on the CPU backend.
  void check_states_on_device(const double* values, std::size_t count, char* valid, cudaStream_t stream);

  // At most `pairs` open self pairs per 2^20 states go to the GPU's warps, the rest decided by the
  // states' threads (0: two per state, the default); tests reach both paths with it.
  void limit_pending_pairs(unsigned pairs) { pending_limit_ = pairs; }

 private:
  struct Device;
  void upload_constants();
  // The scene's primitives and cloud into data_ and view_, and onto the GPU.
  void take_scene(const Scene& scene);
  void upload_primitives();
  // Host staging of `doubles` values and `ints` counts (pinned for the GPU), grown as needed.
  double* stage(std::size_t doubles, std::size_t ints);
  // The batches on the backend, the caller holding mutex_.
  void run_states(const double* values, std::size_t count, char* valid);
  void run_motions(const double* from, const double* to, const int* segments, std::size_t count, int* first_invalid);
  void check_states_gpu(const double* values, std::size_t count, char* valid);
  // count states in device memory checked on the engine's stream, the caller holding mutex_.
  void launch_states(const double* values, std::size_t count, char* valid);
  void check_motions_gpu(const double* from, const double* to, const int* segments, std::size_t count,
                         int* first_invalid);

  RobotCheckData data_;
  RobotCheckView view_;  // of data_, in host memory
  linalg_cuda::Backend backend_;
  std::atomic<std::uint64_t> scene_version_;
  std::unique_ptr<Device> device_;
  std::vector<double> cpu_staging_;  // the CPU backend's staging
  unsigned pending_limit_ = 0;
  std::mutex mutex_;
};

}  // namespace ompl_cuda::detail
