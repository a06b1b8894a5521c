#include "chain_check_engine.h"

#include <algorithm>
#include <string>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_stream.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"

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
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr int kNone = 0x7fffffff;  // "no invalid state" in the warp-wide minimum
constexpr int kQueue = 64;         // a warp's queue of unsure states

struct DeviceViews {
  ChainView chain;
  ObstacleView obstacles;
  BoundsView bounds;
  JointKind kind;
  FilterView filter;
};

// Dynamic shared memory of the kernels: the pre-check's rectangles and link lengths (every lane of a
// warp reads the same rectangle at the same time, a broadcast), then per warp the motion's end points,
// its motion_angles and the queue of unsure states.
struct SharedLayout {
  int links, rectangles;
  LINALG_HD std::size_t lengths_offset() const { return rectangles * sizeof(FilterRectangle); }
  LINALG_HD std::size_t warps_offset() const { return lengths_offset() + ((links * sizeof(float) + 15) / 16) * 16; }
  LINALG_HD std::size_t per_warp() const { return 4 * links * sizeof(double) + kQueue * sizeof(int); }
  LINALG_HD std::size_t bytes(bool motions) const { return motions ? warps_offset() + kWarpsPerBlock * per_warp() : warps_offset(); }
};

// The pre-check's constants copied to shared memory by the whole block; the view of that copy.
__device__ FilterView filter_in_shared(const FilterView& global, const SharedLayout& layout, unsigned char* shared) {
  auto* rects = reinterpret_cast<FilterRectangle*>(shared);
  auto* lengths = reinterpret_cast<float*>(shared + layout.lengths_offset());
  if (global.enabled) {
    for (int i = threadIdx.x; i < global.rectangles; i += kThreads) rects[i] = global.rects[i];
    for (int i = threadIdx.x; i < layout.links; i += kThreads) lengths[i] = global.lengths[i];
  }
  __syncthreads();
  FilterView view = global;
  view.rects = rects;
  view.lengths = lengths;
  return view;
}

// State j of the motion a -> b with n segments (j = last is b itself, as given), by the exact check.
__device__ bool exact_state_valid(const DeviceViews& v, const double* a, const double* b, int j, int n, int last) {
  if (j == last) return configuration_is_valid(b, v.chain, v.obstacles, v.bounds);
  const double t = static_cast<double>(j) / static_cast<double>(n);
  const JointKind kind = v.kind;
  // Joint values interpolated where they are needed: no per-state array in local memory.
  return configuration_is_valid_by([a, b, t, kind](int k) { return interpolate_joint(a[k], b[k], t, kind); },
                                   v.chain, v.obstacles, v.bounds);
}

__global__ void __launch_bounds__(kThreads) check_states_kernel(DeviceViews v, const double* __restrict__ q,
                                                                  std::size_t count, char* __restrict__ valid) {
  extern __shared__ __align__(16) unsigned char shared[];
  const FilterView filter = filter_in_shared(v.filter, {v.chain.links, v.filter.rectangles}, shared);
  for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * kThreads) {
    const double* s = q + i * v.chain.links;
    FilterDecision d = kUnsure;
    if (filter.enabled) d = filter_configuration([s](int k) { return s[k]; }, v.chain, v.bounds, filter);
    if (d == kUnsure) d = configuration_is_valid(s, v.chain, v.obstacles, v.bounds) ? kSureValid : kSureInvalid;
    valid[i] = d == kSureValid ? 1 : 0;
  }
}

// One warp per motion, its end points and motion_angles in shared memory (computed once). Warps take
// the next motion from a counter as they finish the last (motions differ widely in cost: an invalid
// one often ends in its first round), so no warp idles while others of its block work. Lanes take
// the motion's states 32 at a time through the pre-check; the states it is unsure of are queued and
// checked exactly 32 at a time (so lanes do not idle while one of them runs the exact check), in index
// order, whenever the queue holds 32, a round found a sure invalid state, or the motion ends. The
// answer is the smallest invalid index, sure or exact, which the exact check alone would give: the
// pre-check's sure answers are the exact answers, and every unsure state below it is checked exactly.
__global__ void __launch_bounds__(kThreads) check_motions_kernel(DeviceViews v, const double* __restrict__ from,
                                                                   const double* __restrict__ to,
                                                                   const int* __restrict__ segments,
                                                                   int count, int* __restrict__ next_motion,
                                                                   int* __restrict__ first_invalid) {
  extern __shared__ __align__(16) unsigned char shared[];
  const int links = v.chain.links;
  const SharedLayout layout{links, v.filter.rectangles};
  const FilterView filter = filter_in_shared(v.filter, layout, shared);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned char* mine = shared + layout.warps_offset() + warp * layout.per_warp();
  double* a = reinterpret_cast<double*>(mine);
  double* b = a + links;
  double* start = b + links;
  double* sweep = start + links;
  int* unsure = reinterpret_cast<int*>(sweep + links);
  const unsigned lanes_below = (1u << lane) - 1u;
  for (;;) {
    const int m = __shfl_sync(0xffffffffu, lane == 0 ? atomicAdd(next_motion, 1) : 0, 0);
    if (m >= count) break;
    for (int k = lane; k < links; k += 32) {
      a[k] = from[std::size_t(m) * links + k];
      b[k] = to[std::size_t(m) * links + k];
    }
    __syncwarp();
    bool in_bounds = false;
    if (filter.enabled && lane == 0) in_bounds = motion_angles(a, b, v.chain, v.bounds, start, sweep);
    in_bounds = __shfl_sync(0xffffffffu, in_bounds, 0);
    __syncwarp();
    const int n = segments[m];
    const int last = n > 0 ? n : 1;  // j = last is `to` itself
    int found = 0, queued = 0;
    for (int base = 1; base <= last && found == 0; base += 32) {
      const int j = base + lane;
      FilterDecision d = kSureValid;
      if (j <= last) {
        if (filter.enabled)
          d = filter_motion_state(a, b, start, sweep, in_bounds, j, n, last, v.chain, v.bounds, filter);
        else
          d = exact_state_valid(v, a, b, j, n, last) ? kSureValid : kSureInvalid;
      }
      const int hit = __reduce_min_sync(0xffffffffu, d == kSureInvalid ? j : kNone);
      const bool defer = d == kUnsure && j < hit;
      const unsigned deferred = __ballot_sync(0xffffffffu, defer);
      if (defer) unsure[queued + __popc(deferred & lanes_below)] = j;
      queued += __popc(deferred);
      __syncwarp();
      if (hit != kNone || queued >= 32 || base + 32 > last) {
        int exact = kNone;
        for (int p = 0; p < queued && exact == kNone; p += 32) {
          const int i = p + lane;
          const int invalid = i < queued && !exact_state_valid(v, a, b, unsure[i], n, last) ? unsure[i] : kNone;
          exact = __reduce_min_sync(0xffffffffu, invalid);
        }
        queued = 0;
        const int smallest = min(exact, hit);
        if (smallest != kNone) found = smallest;
      }
      __syncwarp();
    }
    if (lane == 0) first_invalid[m] = found;
    __syncwarp();  // a, b and the angles are rewritten for the next motion
  }
}

}  // namespace

// Device copies of the constant data and the growing scratch.
struct ChainCheckEngine::Device {
  linalg_cuda::DeviceBuffer constants;  // lengths, rects, segs, low, high
  linalg_cuda::DeviceBuffer grid;       // rectangle grid: cell_start, then cell_rects
  linalg_cuda::DeviceBuffer filter;     // pre-check: rectangles, then link lengths
  linalg_cuda::DeviceBuffer inputs, outputs;
  linalg_cuda::DeviceBuffer next_motion;  // per chunk of a batch: the motion counter of its kernel
  linalg_cuda::PinnedBuffer staging;
  linalg_cuda::CudaStream work;         // the engine's kernels and downloads (its own: calls come from any thread)
  linalg_cuda::CudaStream copies;       // uploads of motion chunks, beside the kernels
  linalg_cuda::CudaEvent chunk_copied;
  DeviceViews views{};
  std::size_t shared_states = 0, shared_motions = 0;  // dynamic shared memory of the kernels
  unsigned motion_blocks = 0;                         // blocks of the motion kernel that fit at once
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
  // The pre-check covers rectangles tested one by one; segment walls and self-collision use the demo's
  // test, whose tolerances it does not model.
  filter_ = build_fast_filter(chain_view(), rects_, segs_.empty() && !chain_.self_collision && grid_.layout.nx == 0);

  device_ = std::make_unique<Device>();
  const int d = chain_.links();
  std::vector<double> constants;
  constants.insert(constants.end(), chain_.link_lengths.begin(), chain_.link_lengths.end());
  constants.insert(constants.end(), rects_.begin(), rects_.end());
  constants.insert(constants.end(), segs_.begin(), segs_.end());
  constants.insert(constants.end(), low_.begin(), low_.end());
  constants.insert(constants.end(), high_.begin(), high_.end());
  device_->constants.reserve(constants.size() * sizeof(double));
  const cudaStream_t stream = device_->work.get();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->constants.data(), constants.data(), constants.size() * sizeof(double),
                                    cudaMemcpyHostToDevice, stream));
  std::vector<int> grid_lists(grid_.cell_start);
  grid_lists.insert(grid_lists.end(), grid_.cell_rects.begin(), grid_.cell_rects.end());
  if (!grid_lists.empty()) {
    device_->grid.reserve(grid_lists.size() * sizeof(int));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->grid.data(), grid_lists.data(), grid_lists.size() * sizeof(int),
                                      cudaMemcpyHostToDevice, stream));
  }
  const std::size_t rect_bytes = filter_.rects.size() * sizeof(FilterRectangle);
  if (filter_.enabled) {
    device_->filter.reserve(rect_bytes + filter_.lengths.size() * sizeof(float));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->filter.data(), filter_.rects.data(), rect_bytes,
                                      cudaMemcpyHostToDevice, stream));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->filter.as<unsigned char>() + rect_bytes, filter_.lengths.data(),
                                      filter_.lengths.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
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
  v.filter = filter_.view();
  if (filter_.enabled) {  // the same arrays, in device memory
    v.filter.rects = device_->filter.as<FilterRectangle>();
    v.filter.lengths = reinterpret_cast<const float*>(device_->filter.as<unsigned char>() + rect_bytes);
  }
  const SharedLayout layout{d, v.filter.rectangles};
  device_->shared_states = layout.bytes(false);
  device_->shared_motions = layout.bytes(true);
  if (device_->shared_motions > 48 * 1024)
    LINALG_CUDA_CHECK(cudaFuncSetAttribute(check_motions_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(device_->shared_motions)));
  int per_sm = 0;
  LINALG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, check_motions_kernel, kThreads,
                                                                  device_->shared_motions));
  int device = 0, multiprocessors = 0;
  LINALG_CUDA_CHECK(cudaGetDevice(&device));
  LINALG_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  device_->motion_blocks = static_cast<unsigned>(std::max(1, per_sm)) * static_cast<unsigned>(multiprocessors);
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
    check_states_cpu(q, count, valid);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const cudaStream_t stream = device_->work.get();
  const std::size_t bytes = count * d * sizeof(double);
  device_->inputs.reserve(bytes);
  device_->outputs.reserve(count);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->inputs.data(), q, bytes, cudaMemcpyHostToDevice, stream));
  const unsigned blocks = linalg_cuda::detail::blocks_for(count, kThreads);
  check_states_kernel<<<blocks, kThreads, device_->shared_states, stream>>>(device_->views, device_->inputs.as<double>(), count,
                                                       device_->outputs.as<char>());
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(valid, device_->outputs.data(), count, cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void ChainCheckEngine::check_motions(const double* from, const double* to, const int* segments, std::size_t count,
                                     int* first_invalid) {
  const std::size_t d = chain_.links();
  check_motions_filled(
      count,
      [&](std::size_t first, std::size_t n, double* f, double* t, int* s) {
        std::copy_n(from + first * d, n * d, f);
        std::copy_n(to + first * d, n * d, t);
        std::copy_n(segments + first, n, s);
      },
      [&](const int* answers, const int*) { std::copy_n(answers, count, first_invalid); });
}

ChainCheckEngine::MotionStaging ChainCheckEngine::stage_motions(std::size_t count) {
  const std::size_t values = count * chain_.links();
  if (backend_ != linalg_cuda::Backend::Cuda) {
    cpu_staging_.resize(2 * values);
    cpu_counts_.resize(2 * count);
    return {cpu_staging_.data(), cpu_staging_.data() + values, cpu_counts_.data(), cpu_counts_.data() + count};
  }
  // Pinned: from, to, segments (the inputs, mirrored in device memory), then the answers.
  const std::size_t input_bytes = 2 * values * sizeof(double) + count * sizeof(int);
  device_->staging.reserve(input_bytes + count * sizeof(int));
  device_->inputs.reserve(input_bytes);
  device_->outputs.reserve(count * sizeof(int));
  const std::size_t chunks = (count + motion_chunk(count) - 1) / motion_chunk(count);
  device_->next_motion.reserve(chunks * sizeof(int));
  LINALG_CUDA_CHECK(cudaMemsetAsync(device_->next_motion.data(), 0, chunks * sizeof(int),
                                    device_->work.get()));
  double* base = device_->staging.as<double>();
  int* segments = reinterpret_cast<int*>(base + 2 * values);
  return {base, base + values, segments, segments + count};
}

void ChainCheckEngine::check_staged_motions(std::size_t first, std::size_t n, std::size_t chunk,
                                            const MotionStaging& staging) {
  const std::size_t d = chain_.links();
  if (backend_ != linalg_cuda::Backend::Cuda) {
    check_motions_cpu(first, n, staging);
    return;
  }
  // One DMA copy of each part of the chunk (reading pinned memory in place from the kernel was
  // measured 3x slower: small reads over PCIe are latency-bound), on the copy stream, so that it runs
  // while the previous chunk's kernel does; the host fills the next chunk meanwhile. The answers
  // come back chunk by chunk behind each kernel.
  const cudaStream_t stream = device_->work.get();
  const cudaStream_t copies = device_->copies.get();
  unsigned char* device_base = device_->inputs.as<unsigned char>();
  const unsigned char* host_base = device_->staging.as<unsigned char>();
  auto upload = [&](const void* host, std::size_t bytes) {
    unsigned char* target = device_base + (static_cast<const unsigned char*>(host) - host_base);
    LINALG_CUDA_CHECK(cudaMemcpyAsync(target, host, bytes, cudaMemcpyHostToDevice, copies));
    return target;
  };
  const auto* from = reinterpret_cast<const double*>(upload(staging.from + first * d, n * d * sizeof(double)));
  const auto* to = reinterpret_cast<const double*>(upload(staging.to + first * d, n * d * sizeof(double)));
  const auto* segments = reinterpret_cast<const int*>(upload(staging.segments + first, n * sizeof(int)));
  LINALG_CUDA_CHECK(cudaEventRecord(device_->chunk_copied.get(), copies));
  LINALG_CUDA_CHECK(cudaStreamWaitEvent(stream, device_->chunk_copied.get(), 0));
  const unsigned blocks = std::min<unsigned>(linalg_cuda::detail::blocks_for(32 * n, kThreads), device_->motion_blocks);
  int* answers = device_->outputs.as<int>() + first;
  int* counter = device_->next_motion.as<int>() + chunk;
  check_motions_kernel<<<blocks, kThreads, device_->shared_motions, stream>>>(
      device_->views, from, to, segments, static_cast<int>(n), counter, answers);
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(staging.first_invalid + first, answers, n * sizeof(int), cudaMemcpyDeviceToHost,
                                    stream));
}

void ChainCheckEngine::finish_staged_motions() {
  if (backend_ == linalg_cuda::Backend::Cuda)
    LINALG_CUDA_CHECK(cudaStreamSynchronize(device_->work.get()));
}

void ChainCheckEngine::abandon_staged_motions() noexcept {
  if (backend_ != linalg_cuda::Backend::Cuda) return;
  cudaStreamSynchronize(device_->copies.get());
  cudaStreamSynchronize(device_->work.get());
}

}  // namespace ompl_cuda::detail
