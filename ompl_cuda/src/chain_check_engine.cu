#include "chain_check_engine.h"

#include <algorithm>
#include <string>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/errors.h"

namespace ompl_cuda::detail {

int first_invalid_on_motion(const double* from, const double* to, int segments, const ChainView& chain,
                            const ObstacleView& obstacles, const BoundsView& bounds, JointKind kind) {
  double q[kMaxLinks];
  for (int j = 1; j < segments; ++j) {
    const double t = static_cast<double>(j) / static_cast<double>(segments);
    for (int k = 0; k < chain.links; ++k) q[k] = interpolate_joint(from[k], to[k], t, kind);
    if (!configuration_is_valid(q, chain, obstacles, bounds)) return j;
  }
  if (!configuration_is_valid(to, chain, obstacles, bounds)) return segments > 0 ? segments : 1;
  return 0;
}

namespace {

constexpr int kThreads = 256;

struct DeviceViews {
  ChainView chain;
  ObstacleView obstacles;
  BoundsView bounds;
  JointKind kind;
};

__global__ void __launch_bounds__(kThreads) check_states_kernel(DeviceViews v, const double* __restrict__ q,
                                                                  std::size_t count, char* __restrict__ valid) {
  for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * kThreads)
    valid[i] = configuration_is_valid(q + i * v.chain.links, v.chain, v.obstacles, v.bounds) ? 1 : 0;
}

// One warp per motion; lanes take the motion's configurations 32 at a time, and the warp stops after
// the first round that found an invalid one (the smallest invalid index is the same whichever lanes
// run: a warp-wide integer minimum).
__global__ void __launch_bounds__(kThreads) check_motions_kernel(DeviceViews v, const double* __restrict__ from,
                                                                   const double* __restrict__ to,
                                                                   const int* __restrict__ segments,
                                                                   std::size_t count, int* __restrict__ first_invalid) {
  const int lane = threadIdx.x & 31;
  const int links = v.chain.links;
  for (std::size_t m = (blockIdx.x * std::size_t(kThreads) + threadIdx.x) / 32; m < count;
       m += std::size_t(gridDim.x) * kThreads / 32) {
    const double* a = from + m * links;
    const double* b = to + m * links;
    const int n = segments[m];
    const int last = n > 0 ? n : 1;  // j = last is `to` itself
    int found = 0;
    for (int base = 1; base <= last && found == 0; base += 32) {
      const int j = base + lane;
      int mine = 0x7fffffff;
      if (j <= last) {
        bool ok;
        if (j == last) {
          ok = configuration_is_valid(b, v.chain, v.obstacles, v.bounds);
        } else {
          // Joint values interpolated where they are needed: no per-state array in local memory.
          const double t = static_cast<double>(j) / static_cast<double>(n);
          const JointKind kind = v.kind;
          ok = configuration_is_valid_by([a, b, t, kind](int k) { return interpolate_joint(a[k], b[k], t, kind); },
                                         v.chain, v.obstacles, v.bounds);
        }
        if (!ok) mine = j;
      }
      const int smallest = __reduce_min_sync(0xffffffffu, mine);
      if (smallest != 0x7fffffff) found = smallest;
    }
    if (lane == 0) first_invalid[m] = found;
  }
}

}  // namespace

// Device copies of the constant data and the growing scratch.
struct ChainCheckEngine::Device {
  linalg_cuda::DeviceBuffer constants;  // lengths, rects, segs, low, high
  linalg_cuda::DeviceBuffer grid;       // rectangle grid: cell_start, then cell_rects
  linalg_cuda::DeviceBuffer inputs, outputs;
  linalg_cuda::PinnedBuffer staging;
  DeviceViews views{};
};

ChainCheckEngine::ChainCheckEngine(const PlanarChain& chain, const Workspace2D& workspace, JointKind kind,
                                   std::vector<double> low, std::vector<double> high, linalg_cuda::Backend backend)
    : chain_(chain), low_(std::move(low)), high_(std::move(high)), kind_(kind),
      backend_(linalg_cuda::resolve_backend(backend)) {
  chain_.validate();
  workspace.validate();
  for (const Rectangle& r : workspace.rectangles) rects_.insert(rects_.end(), {r.x_min, r.y_min, r.x_max, r.y_max});
  for (const Segment2D& s : workspace.segments) segs_.insert(segs_.end(), {s.x0, s.y0, s.x1, s.y1});
  grid_ = build_rectangle_grid(rects_);
  if (backend_ != linalg_cuda::Backend::Cuda) return;

  device_ = std::make_unique<Device>();
  const int d = chain_.links();
  std::vector<double> constants;
  constants.insert(constants.end(), chain_.link_lengths.begin(), chain_.link_lengths.end());
  constants.insert(constants.end(), rects_.begin(), rects_.end());
  constants.insert(constants.end(), segs_.begin(), segs_.end());
  constants.insert(constants.end(), low_.begin(), low_.end());
  constants.insert(constants.end(), high_.begin(), high_.end());
  device_->constants.reserve(constants.size() * sizeof(double));
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->constants.data(), constants.data(), constants.size() * sizeof(double),
                                    cudaMemcpyHostToDevice, stream));
  std::vector<int> grid_lists(grid_.cell_start);
  grid_lists.insert(grid_lists.end(), grid_.cell_rects.begin(), grid_.cell_rects.end());
  if (!grid_lists.empty()) {
    device_->grid.reserve(grid_lists.size() * sizeof(int));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->grid.data(), grid_lists.data(), grid_lists.size() * sizeof(int),
                                      cudaMemcpyHostToDevice, stream));
  }
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  const double* base = device_->constants.as<double>();
  DeviceViews& v = device_->views;
  v.chain = {d, base, chain_.base_x, chain_.base_y, chain_.self_collision};
  v.obstacles = {static_cast<int>(workspace.rectangles.size()), base + d, static_cast<int>(workspace.segments.size()),
                 base + d + rects_.size(), grid_.layout};
  if (!grid_lists.empty()) {
    v.obstacles.grid.cell_start = device_->grid.as<int>();
    v.obstacles.grid.cell_rects = device_->grid.as<int>() + grid_.cell_start.size();
  }
  v.bounds = {kind_, base + d + rects_.size() + segs_.size(), base + 2 * d + rects_.size() + segs_.size()};
  v.kind = kind_;
}

ChainCheckEngine::~ChainCheckEngine() = default;

ChainView ChainCheckEngine::chain_view() const {
  return {chain_.links(), chain_.link_lengths.data(), chain_.base_x, chain_.base_y, chain_.self_collision};
}

ObstacleView ChainCheckEngine::obstacle_view() const {
  return {static_cast<int>(rects_.size() / 4), rects_.data(), static_cast<int>(segs_.size() / 4), segs_.data(),
          grid_.view()};
}

BoundsView ChainCheckEngine::bounds_view() const { return {kind_, low_.data(), high_.data()}; }

bool ChainCheckEngine::valid(const double* q) const {
  return configuration_is_valid(q, chain_view(), obstacle_view(), bounds_view());
}

int ChainCheckEngine::first_invalid(const double* from, const double* to, int segments) const {
  return first_invalid_on_motion(from, to, segments, chain_view(), obstacle_view(), bounds_view(), kind_);
}

void ChainCheckEngine::check_states(const double* q, std::size_t count, char* valid) {
  if (count == 0) return;
  const int d = chain_.links();
  if (backend_ != linalg_cuda::Backend::Cuda) {
    for (std::size_t i = 0; i < count; ++i) valid[i] = this->valid(q + i * d) ? 1 : 0;
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  const std::size_t bytes = count * d * sizeof(double);
  device_->inputs.reserve(bytes);
  device_->outputs.reserve(count);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->inputs.data(), q, bytes, cudaMemcpyHostToDevice, stream));
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 65535u * 8));
  check_states_kernel<<<blocks, kThreads, 0, stream>>>(device_->views, device_->inputs.as<double>(), count,
                                                       device_->outputs.as<char>());
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(valid, device_->outputs.data(), count, cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void ChainCheckEngine::check_motions(const double* from, const double* to, const int* segments, std::size_t count,
                                     int* first_invalid) {
  const std::size_t values = count * chain_.links();
  check_motions_filled(
      count,
      [&](double* f, double* t, int* s) {
        std::copy_n(from, values, f);
        std::copy_n(to, values, t);
        std::copy_n(segments, count, s);
      },
      first_invalid);
}

ChainCheckEngine::MotionStaging ChainCheckEngine::stage_motions(std::size_t count) {
  const std::size_t values = count * chain_.links();
  if (backend_ != linalg_cuda::Backend::Cuda) {
    cpu_staging_.resize(2 * values);
    cpu_segments_.resize(count);
    return {cpu_staging_.data(), cpu_staging_.data() + values, cpu_segments_.data()};
  }
  device_->staging.reserve(2 * values * sizeof(double) + count * sizeof(int));
  double* base = device_->staging.as<double>();
  return {base, base + values, reinterpret_cast<int*>(base + 2 * values)};
}

void ChainCheckEngine::run_staged_motions(std::size_t count, const MotionStaging& staging, int* first_invalid) {
  const int d = chain_.links();
  if (backend_ != linalg_cuda::Backend::Cuda) {
    for (std::size_t i = 0; i < count; ++i)
      first_invalid[i] = this->first_invalid(staging.from + i * d, staging.to + i * d, staging.segments[i]);
    return;
  }
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  const std::size_t state_bytes = count * d * sizeof(double);
  const std::size_t bytes = 2 * state_bytes + count * sizeof(int);
  device_->inputs.reserve(bytes);
  device_->outputs.reserve(count * sizeof(int));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->inputs.data(), staging.from, bytes, cudaMemcpyHostToDevice, stream));
  const unsigned char* in = device_->inputs.as<unsigned char>();
  const unsigned blocks =
      static_cast<unsigned>(std::min<std::size_t>((count * 32 + kThreads - 1) / kThreads, 65535u * 8));
  check_motions_kernel<<<blocks, kThreads, 0, stream>>>(
      device_->views, reinterpret_cast<const double*>(in), reinterpret_cast<const double*>(in + state_bytes),
      reinterpret_cast<const int*>(in + 2 * state_bytes), count, device_->outputs.as<int>());
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(first_invalid, device_->outputs.data(), count * sizeof(int),
                                    cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace ompl_cuda::detail
