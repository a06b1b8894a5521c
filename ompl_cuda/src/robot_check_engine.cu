// RobotCheckEngine's set-up and its GPU checks (the CPU's are in robot_check_engine_cpu.cpp).
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_stream.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"
#include "cloud_field_build.h"
#include "robot_check_engine.h"

namespace ompl_cuda::detail {

namespace {

constexpr int kThreads = 128;
constexpr int kNone = 0x7fffffff;  // "no invalid state" in the warp-wide minimum

// One thread per state. The scratch (the full state and 12 doubles per link) is sized for at most
// Links links: the kernels come in a few sizes so that small robots keep small local memory.
template <int Links>
__global__ void __launch_bounds__(kThreads) robot_states_kernel(RobotCheckView v, const double* __restrict__ values,
                                                                  std::size_t count, char* __restrict__ valid) {
  double full[Links], poses[12 * Links];
  const std::size_t d = static_cast<std::size_t>(v.dimension);
  for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * kThreads) {
    const double* s = values + i * d;
    valid[i] = robot_state_valid(v, [s](int k) { return s[k]; }, full, poses) ? 1 : 0;
  }
}

// One warp per motion, taken from a counter as warps finish their last (an invalid motion often ends
// in its first round): lanes check the motion's states 32 at a time, in index order, and the warp
// stops at the first round with an invalid state, whose smallest index is the answer.
template <int Links>
__global__ void __launch_bounds__(kThreads) robot_motions_kernel(RobotCheckView v, const double* __restrict__ from,
                                                                   const double* __restrict__ to,
                                                                   const int* __restrict__ segments, int count,
                                                                   int* __restrict__ next_motion,
                                                                   int* __restrict__ first_invalid) {
  double full[Links], poses[12 * Links];
  const int lane = threadIdx.x & 31;
  const std::size_t d = static_cast<std::size_t>(v.dimension);
  for (;;) {
    const int m = __shfl_sync(0xffffffffu, lane == 0 ? atomicAdd(next_motion, 1) : 0, 0);
    if (m >= count) break;
    const double* a = from + m * d;
    const double* b = to + m * d;
    const int n = segments[m];
    const int last = n > 0 ? n : 1;  // j = last is `to` itself
    int found = 0;
    for (int base = 1; base <= last && found == 0; base += 32) {
      const int j = base + lane;
      bool ok = true;
      if (j == last) {
        ok = robot_state_valid(v, [b](int k) { return b[k]; }, full, poses);
      } else if (j < last) {
        const double t = static_cast<double>(j) / static_cast<double>(n);
        ok = robot_state_valid(v, [a, b, t](int k) { return a[k] + (b[k] - a[k]) * t; }, full, poses);
      }
      const int hit = __reduce_min_sync(0xffffffffu, ok ? kNone : j);
      if (hit != kNone) found = hit;
    }
    if (lane == 0) first_invalid[m] = found;
  }
}

// Calls launch(std::integral_constant<int, L>()) with the kernels' scratch size L for `links` links.
template <typename Launch>
void with_scratch_for(int links, const Launch& launch) {
  if (links <= 16) {
    launch(std::integral_constant<int, 16>());
  } else if (links <= 32) {
    launch(std::integral_constant<int, 32>());
  } else if (links <= 64) {
    launch(std::integral_constant<int, 64>());
  } else {
    launch(std::integral_constant<int, RobotCheckEngine::kMaxGpuLinks>());
  }
}

template <typename Kernel>
unsigned resident_blocks(Kernel kernel) {
  int per_sm = 0, device = 0, multiprocessors = 0;
  LINALG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  LINALG_CUDA_CHECK(cudaGetDevice(&device));
  LINALG_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  return static_cast<unsigned>(std::max(1, per_sm) * multiprocessors);
}

// Appends a host array to a packed upload, 16-byte aligned; returns its offset.
template <typename T>
std::size_t pack(std::vector<unsigned char>* bytes, const std::vector<T>& array) {
  const std::size_t offset = (bytes->size() + 15) / 16 * 16;
  bytes->resize(offset + array.size() * sizeof(T));
  if (!array.empty()) std::copy_n(reinterpret_cast<const unsigned char*>(array.data()), array.size() * sizeof(T), bytes->data() + offset);
  return offset;
}

}  // namespace

struct RobotCheckEngine::Device {
  linalg_cuda::DeviceBuffer constants, primitives, cloud, inputs, outputs, next_motion;
  linalg_cuda::PinnedBuffer staging, answers;
  linalg_cuda::CudaStream work;  // the engine's own: calls come from any thread
  RobotCheckView view{};         // data_ in device memory
  unsigned motion_blocks = 1;    // blocks of the motion kernel resident at once
};

RobotCheckEngine::RobotCheckEngine(RobotCheckData data, const Scene& scene, linalg_cuda::Backend backend)
    : data_(std::move(data)), backend_(linalg_cuda::resolve_backend(backend)), scene_version_(scene.version()) {
  view_ = data_.view();
  if (backend_ != linalg_cuda::Backend::Cuda) {
    take_scene(scene);
    return;
  }
  if (view_.num_links > kMaxGpuLinks)
    throw linalg_cuda::InvalidArgument("RobotCheckEngine: the GPU checks take robots of at most " +
                                       std::to_string(kMaxGpuLinks) + " links, this one has " +
                                       std::to_string(view_.num_links) + " (use Backend::Cpu)");
  device_ = std::make_unique<Device>();
  upload_constants();
  take_scene(scene);
}

RobotCheckEngine::~RobotCheckEngine() = default;

void RobotCheckEngine::upload_constants() {
  std::vector<unsigned char> bytes;
  const std::size_t joints = pack(&bytes, data_.joints), group = pack(&bytes, data_.group),
                    held = pack(&bytes, data_.held), low = pack(&bytes, data_.low), high = pack(&bytes, data_.high),
                    bounds = pack(&bytes, data_.link_bounds), first_group = pack(&bytes, data_.first_group),
                    group_bounds = pack(&bytes, data_.group_bounds), first = pack(&bytes, data_.first_sphere),
                    spheres = pack(&bytes, data_.spheres), pairs = pack(&bytes, data_.self_pairs),
                    tables = pack(&bytes, data_.self_tables.tables), table_bits = pack(&bytes, data_.self_tables.bits);
  Device& dev = *device_;
  dev.constants.reserve(bytes.size());
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.constants.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, dev.work.get()));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(dev.work.get()));  // `bytes` is pageable and goes out of scope
  const unsigned char* base = dev.constants.as<unsigned char>();
  dev.view = view_;
  dev.view.joints = reinterpret_cast<const KinematicJoint*>(base + joints);
  dev.view.group = reinterpret_cast<const int*>(base + group);
  dev.view.held = reinterpret_cast<const double*>(base + held);
  dev.view.low = reinterpret_cast<const double*>(base + low);
  dev.view.high = reinterpret_cast<const double*>(base + high);
  dev.view.link_bounds = reinterpret_cast<const CheckSphere*>(base + bounds);
  dev.view.first_group = reinterpret_cast<const int*>(base + first_group);
  dev.view.group_bounds = reinterpret_cast<const CheckSphere*>(base + group_bounds);
  dev.view.first_sphere = reinterpret_cast<const int*>(base + first);
  dev.view.spheres = reinterpret_cast<const CheckSphere*>(base + spheres);
  dev.view.self_pairs = reinterpret_cast<const int*>(base + pairs);
  dev.view.self_tables = reinterpret_cast<const SelfPairTable*>(base + tables);
  dev.view.self_table_bits = reinterpret_cast<const unsigned*>(base + table_bits);
  with_scratch_for(view_.num_links,
                   [&](auto links) { dev.motion_blocks = resident_blocks(robot_motions_kernel<links.value>); });
}

void RobotCheckEngine::take_scene(const Scene& scene) {
  if (!device_) {
    data_.set_scene(scene);
    view_ = data_.view();
    return;
  }
  // The cloud's field is built on the GPU and downloaded for the CPU's single checks.
  data_.set_scene(scene, false);
  Device& dev = *device_;
  if (data_.cloud_grid.voxels() > 0)
    data_.cloud_distance2 = build_distance_field_gpu(data_.field_points, data_.cloud_grid, &dev.cloud, dev.work.get());
  view_ = data_.view();
  dev.view.cloud = view_.cloud;
  if (view_.cloud.distance2) dev.view.cloud.distance2 = dev.cloud.as<float>();
  upload_primitives();
}

void RobotCheckEngine::upload_primitives() {
  Device& dev = *device_;
  const std::size_t bytes = data_.primitives.size() * sizeof(CheckPrimitive<float>);
  dev.primitives.reserve(std::max<std::size_t>(bytes, 16));
  if (bytes > 0) {
    LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.primitives.data(), data_.primitives.data(), bytes, cudaMemcpyHostToDevice,
                                      dev.work.get()));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(dev.work.get()));
  }
  dev.view.primitives = dev.primitives.as<CheckPrimitive<float>>();
  dev.view.num_primitives = view_.num_primitives;
}

void RobotCheckEngine::sync_scene(const Scene& scene) {
  if (scene.version() == scene_version_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (scene.version() == scene_version_.load(std::memory_order_relaxed)) return;
  take_scene(scene);
  scene_version_.store(scene.version(), std::memory_order_release);
}

double* RobotCheckEngine::stage(std::size_t doubles, std::size_t ints) {
  const std::size_t bytes = doubles * sizeof(double) + ints * sizeof(int);
  if (!device_) {
    cpu_staging_.resize((bytes + sizeof(double) - 1) / sizeof(double));
    return cpu_staging_.data();
  }
  device_->staging.reserve(bytes);
  return device_->staging.as<double>();
}

void RobotCheckEngine::check_states_on_device(const double* values, std::size_t count, char* valid,
                                              cudaStream_t stream) {
  if (!device_) throw linalg_cuda::InvalidArgument("RobotCheckEngine::check_states_on_device: the backend is the CPU");
  if (count == 0) return;
  const unsigned blocks = linalg_cuda::detail::blocks_for(count, kThreads);
  const RobotCheckView& view = device_->view;
  with_scratch_for(view_.num_links, [&](auto links) {
    robot_states_kernel<links.value><<<blocks, kThreads, 0, stream>>>(view, values, count, valid);
  });
  LINALG_CUDA_CHECK_LAUNCH();
}

void RobotCheckEngine::check_states_gpu(const double* values, std::size_t count, char* valid) {
  Device& dev = *device_;
  const cudaStream_t stream = dev.work.get();
  const std::size_t bytes = count * dimension() * sizeof(double);
  dev.inputs.reserve(bytes);
  dev.outputs.reserve(count);
  dev.answers.reserve(count);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.inputs.data(), values, bytes, cudaMemcpyHostToDevice, stream));
  check_states_on_device(dev.inputs.as<double>(), count, dev.outputs.as<char>(), stream);
  // The answers land in pinned memory (a copy at the bus's speed), then in the caller's.
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.answers.data(), dev.outputs.data(), count, cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::copy_n(dev.answers.as<char>(), count, valid);
}

void RobotCheckEngine::check_motions_gpu(const double* from, const double* to, const int* segments, std::size_t count,
                                         int* first_invalid) {
  if (count > static_cast<std::size_t>(kNone))
    throw linalg_cuda::InvalidArgument("RobotCheckEngine: at most 2^31 - 1 motions per batch");
  Device& dev = *device_;
  const cudaStream_t stream = dev.work.get();
  const std::size_t values = count * dimension() * sizeof(double);
  dev.inputs.reserve(2 * values + count * sizeof(int));
  dev.outputs.reserve(count * sizeof(int));
  dev.answers.reserve(count * sizeof(int));
  dev.next_motion.reserve(sizeof(int));
  unsigned char* in = dev.inputs.as<unsigned char>();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(in, from, values, cudaMemcpyHostToDevice, stream));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(in + values, to, values, cudaMemcpyHostToDevice, stream));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(in + 2 * values, segments, count * sizeof(int), cudaMemcpyHostToDevice, stream));
  LINALG_CUDA_CHECK(cudaMemsetAsync(dev.next_motion.data(), 0, sizeof(int), stream));
  const auto* f = reinterpret_cast<const double*>(in);
  const auto* t = reinterpret_cast<const double*>(in + values);
  const auto* s = reinterpret_cast<const int*>(in + 2 * values);
  const int n = static_cast<int>(count);
  int* next = dev.next_motion.as<int>();
  int* out = dev.outputs.as<int>();
  const unsigned blocks = std::min<unsigned>(linalg_cuda::detail::blocks_covering(32 * count, kThreads), dev.motion_blocks);
  with_scratch_for(view_.num_links, [&](auto links) {
    robot_motions_kernel<links.value><<<blocks, kThreads, 0, stream>>>(dev.view, f, t, s, n, next, out);
  });
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.answers.data(), out, count * sizeof(int), cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::copy_n(dev.answers.as<int>(), count, first_invalid);
}

}  // namespace ompl_cuda::detail
