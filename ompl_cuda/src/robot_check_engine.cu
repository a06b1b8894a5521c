// RobotCheckEngine's set-up and its GPU checks (the CPU's are in robot_check_engine_cpu.cpp).
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include <cooperative_groups.h>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_stream.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"
#include "cloud_field_build.h"
#include "robot_check_engine.h"
#include "robot_warp_scene.cuh"

namespace ompl_cuda::detail {

namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 128;
constexpr int kNone = 0x7fffffff;  // "no invalid state" in the warp-wide minimum

// A self pair whose grid and link bounds leave it open, handed from a state's thread to a tile of lanes.
struct PendingPair {
  int state, pair;
};

// A kernel's per-thread scratch for robots of at most Scratch variables and Scratch / 4 kept poses
// (with_scratch_for picks the size), the bound centres in the block's shared memory.
template <int Scratch>
struct ThreadScratch {
  double full[Scratch], kept[12 * (Scratch / 4)];
  __device__ CheckScratch view(float* centres) { return {full, kept, centres + threadIdx.x, kThreads}; }
};

// Shared memory for a block's bound centres.
std::size_t centre_bytes(const RobotCheckView& v) { return 3 * sizeof(float) * kThreads * v.num_centres; }

// One thread per state: the bounds, the self pairs' grids, the kinematics and the scene (the warp's
// lanes together, warp_robot_free_of_scene), and the self pairs' link bounds. The pairs still open go
// to `pending` (robot_self_pairs_kernel decides them), a warp's at once through one atomic, or are
// decided here when `capacity` is full. Five blocks share a multiprocessor (at most 102 registers a
// thread): six leave the pooled scene tests too few registers, and their spills cost more than the
// warps gained.
template <int Scratch>
__global__ void __launch_bounds__(kThreads, 5) robot_states_kernel(RobotCheckView v, const double* __restrict__ values,
                                                                  int count, char* __restrict__ valid,
                                                                  PendingPair* __restrict__ pending,
                                                                  unsigned capacity,
                                                                  unsigned long long* __restrict__ num_pending) {
  extern __shared__ float centres[];
  ThreadScratch<Scratch> scratch;
  const CheckScratch s = scratch.view(centres);
  const std::size_t d = static_cast<std::size_t>(v.dimension);
  const int lane = static_cast<int>(threadIdx.x & 31);
  for (int base = blockIdx.x * kThreads + threadIdx.x - lane; base < count; base += gridDim.x * kThreads) {
    const int i = base + lane;
    const double* x = values + min(i, count - 1) * d;  // a lane past the end fills the last state's values
    SelfCells cells;
    bool ok = fill_state(v, [x](int k) { return x[k]; }, s.full) && i < count && self_grids_allow(v, s.full, &cells);
    ok = warp_robot_free_of_scene(v, s, ok);
    if (ok)
      ok = robot_free_of_itself(v, s, cells, [&](int q) {
        const cg::coalesced_group group = cg::coalesced_threads();
        unsigned long long first = 0;  // 64 bits: the count goes on past the capacity
        if (group.thread_rank() == 0) first = atomicAdd(num_pending, static_cast<unsigned long long>(group.size()));
        const unsigned long long slot = group.shfl(first, 0) + group.thread_rank();
        if (slot >= capacity) return self_pair_touches(v, q, s.full);
        pending[slot] = {i, q};
        return false;
      });
    if (i < count) valid[i] = ok ? 1 : 0;
  }
}

// Lanes per pending pair in robot_self_pairs_kernel: a warp, whose lanes share out each level of the
// test (tile_links_touch), so that the level's width, not a group's size, sets how many work.
constexpr int kPairLanes = 32;
using PairTile = cg::thread_block_tile<kPairLanes>;

// Whether a sphere of link a touches one of link b, as links_touch decides it (the same tests, each
// one's answer the same), by a tile of kPairLanes lanes that share out each level's tests: lanes place
// b's groups' bounds and test them against a's link bound; each (near b group, a group) is a lane's
// test; each pair of groups that passes gets kMaxGroupSpheres lanes, one per sphere of the a group,
// tested against the b group's bound; and each a sphere that passes gets kMaxGroupSpheres lanes, one
// per sphere of the b group. The last two levels take kPairLanes / kMaxGroupSpheres items a round.
__device__ bool tile_links_touch(const RobotCheckView& v, int a, int b, const LinkPose& b_in_a, const PairTile& tile) {
  constexpr int kSlots = kPairLanes / kMaxGroupSpheres;
  const int lane = static_cast<int>(tile.thread_rank());
  const int slot = lane / kMaxGroupSpheres, j = lane % kMaxGroupSpheres;
  const CheckSphere bound_a = v.link_bounds[a];
  const float ca[3] = {bound_a.x, bound_a.y, bound_a.z};
  const int ga0 = v.first_group[a], na = v.first_group[a + 1] - ga0;
  const int gb0 = v.first_group[b], nb = v.first_group[b + 1] - gb0;
  for (int base_b = 0; base_b < nb; base_b += kPairLanes) {
    float cb[3] = {0, 0, 0}, rb = 0;  // lane i holds b's group base_b + i, placed
    bool near = false;
    if (base_b + lane < nb) {
      const CheckSphere group_b = v.group_bounds[gb0 + base_b + lane];
      place(b_in_a, group_b, cb);
      rb = group_b.r;
      near = spheres_touch(ca, bound_a.r, cb, rb);
    }
    const unsigned groups_b = tile.ballot(near);
    const int items = __popc(groups_b) * na;
    for (int base = 0; base < items; base += kPairLanes) {
      const int k = base + lane;  // the (k / na)-th near b group against a's group k % na
      const int from_b = k < items ? static_cast<int>(__fns(groups_b, 0, k / na + 1)) : 0;
      const float c[3] = {tile.shfl(cb[0], from_b), tile.shfl(cb[1], from_b), tile.shfl(cb[2], from_b)};
      const float r = tile.shfl(rb, from_b);
      const int ga = ga0 + k % na;
      bool open = false;
      if (k < items) {
        const CheckSphere group_a = v.group_bounds[ga];
        const float cga[3] = {group_a.x, group_a.y, group_a.z};
        open = spheres_touch(cga, group_a.r, c, r);
      }
      for (unsigned pairs = tile.ballot(open); pairs != 0;) {
        const unsigned from = __fns(pairs, 0, slot + 1);  // this slot's open pair, or none (~0u)
        for (int t = 0; t < kSlots; ++t) pairs &= pairs - 1;
        const int src = from < kPairLanes ? static_cast<int>(from) : lane;
        const int pair_ga = tile.shfl(ga, src), pair_b = tile.shfl(from_b, src);
        const float pc[3] = {tile.shfl(c[0], src), tile.shfl(c[1], src), tile.shfl(c[2], src)};
        const float pr = tile.shfl(r, src);
        const int ia = v.first_sphere[pair_ga] + j;
        bool kept = false;
        if (from < kPairLanes && ia < v.first_sphere[pair_ga + 1]) {
          const CheckSphere si = v.spheres[ia];
          const float ci[3] = {si.x, si.y, si.z};
          kept = spheres_touch(ci, si.r, pc, pr);
        }
        for (unsigned spheres = tile.ballot(kept); spheres != 0;) {
          const unsigned from2 = __fns(spheres, 0, slot + 1);
          for (int t = 0; t < kSlots; ++t) spheres &= spheres - 1;
          const int src2 = from2 < kPairLanes ? static_cast<int>(from2) : lane;
          const int sphere_a = tile.shfl(ia, src2), gb = gb0 + base_b + tile.shfl(pair_b, src2);
          const int jb = v.first_sphere[gb] + j;
          bool touch = false;
          if (from2 < kPairLanes && jb < v.first_sphere[gb + 1]) {
            const CheckSphere si = v.spheres[sphere_a], sj = v.spheres[jb];
            const float ci[3] = {si.x, si.y, si.z};
            float cj[3];
            place(b_in_a, sj, cj);
            touch = spheres_touch(ci, si.r, cj, sj.r);
          }
          if (tile.any(touch)) return true;
        }
      }
    }
  }
  return false;
}

// The pending pairs, kPairLanes at a time per tile of as many lanes: each lane places its pair's link b
// in link a's frame from the state's values, then the tile decides the pairs one by one. A touching
// pair makes its state invalid (every writer writes 0, so the order of the tiles changes nothing); a
// state already found invalid is skipped. Eight blocks share a multiprocessor (at most 64 registers a
// thread): a pair's levels wait on their reads and shuffles, and more warps fill the waits.
template <int Scratch>
__global__ void __launch_bounds__(kThreads, 8) robot_self_pairs_kernel(RobotCheckView v, const double* __restrict__ values,
                                                                      const PendingPair* __restrict__ pending,
                                                                      unsigned capacity,
                                                                      const unsigned long long* __restrict__ num_pending,
                                                                      char* valid) {
  double full[Scratch];
  const PairTile tile = cg::tiled_partition<kPairLanes>(cg::this_thread_block());
  const int lane = static_cast<int>(tile.thread_rank());
  const unsigned n = static_cast<unsigned>(min(*num_pending, static_cast<unsigned long long>(capacity)));
  const std::size_t d = static_cast<std::size_t>(v.dimension);
  for (unsigned base = blockIdx.x * kThreads + threadIdx.x - lane; base < n; base += gridDim.x * kThreads) {
    PendingPair p{0, 0};
    LinkPose b_in_a{};
    bool open = false;
    if (base + lane < n) {
      p = pending[base + lane];
      open = valid[p.state] != 0;
      if (open) {
        const double* x = values + p.state * d;
        fill_state(v, [x](int k) { return x[k]; }, full);
        b_in_a = pair_relative_pose(v, p.pair, full);
      }
    }
    for (unsigned todo = tile.ballot(open); todo != 0; todo &= todo - 1) {
      const int from = __ffs(todo) - 1;
      const int state = tile.shfl(p.state, from), pair = tile.shfl(p.pair, from);
      if (tile.shfl(lane == 0 ? valid[state] : 0, 0) == 0) continue;
      LinkPose pose;
      for (int k = 0; k < 9; ++k) pose.r[k] = tile.shfl(b_in_a.r[k], from);
      for (int k = 0; k < 3; ++k) pose.t[k] = tile.shfl(b_in_a.t[k], from);
      if (tile_links_touch(v, v.self_pairs[2 * pair], v.self_pairs[2 * pair + 1], pose, tile) && lane == 0)
        valid[state] = 0;
    }
  }
}

// One warp per motion, taken from a counter as warps finish their last (an invalid motion often ends
// in its first round): lanes check the motion's states 32 at a time, in index order, and the warp
// stops at the first round with an invalid state, whose smallest index is the answer.
template <int Scratch>
__global__ void __launch_bounds__(kThreads) robot_motions_kernel(RobotCheckView v, const double* __restrict__ from,
                                                                   const double* __restrict__ to,
                                                                   const int* __restrict__ segments, int count,
                                                                   int* __restrict__ next_motion,
                                                                   int* __restrict__ first_invalid) {
  extern __shared__ float centres[];
  ThreadScratch<Scratch> scratch;
  const CheckScratch s = scratch.view(centres);
  const int lane = threadIdx.x & 31;
  const std::size_t d = static_cast<std::size_t>(v.dimension);
  for (;;) {
    const int m = __shfl_sync(kAllLanes, lane == 0 ? atomicAdd(next_motion, 1) : 0, 0);
    if (m >= count) break;
    const double* a = from + m * d;
    const double* b = to + m * d;
    const int n = segments[m];
    const int last = n > 0 ? n : 1;  // j = last is `to` itself
    int found = 0;
    for (int base = 1; base <= last && found == 0; base += 32) {
      const int j = min(base + lane, last);  // a lane past the motion's end fills `to`
      const bool checked = base + lane <= last;
      const double t = static_cast<double>(j) / static_cast<double>(n > 0 ? n : 1);
      SelfCells cells;
      bool live = fill_state(v, [a, b, t, j, last](int k) { return j == last ? b[k] : a[k] + (b[k] - a[k]) * t; },
                             s.full) &&
                  checked && self_grids_allow(v, s.full, &cells);
      live = warp_robot_free_of_scene(v, s, live);
      if (live) live = robot_free_of_itself(v, s, cells, [&](int q) { return self_pair_touches(v, q, s.full); });
      const bool ok = !checked || live;
      const int hit = __reduce_min_sync(kAllLanes, ok ? kNone : j);
      if (hit != kNone) found = hit;
    }
    if (lane == 0) first_invalid[m] = found;
  }
}

// Calls launch(std::integral_constant<int, S>()) with the kernels' scratch size S for the view's
// variables and kept poses (ThreadScratch).
template <typename Launch>
void with_scratch_for(const RobotCheckView& v, const Launch& launch) {
  const int needed = std::max(v.num_variables, 4 * v.num_kept);
  if (needed <= 16) {
    launch(std::integral_constant<int, 16>());
  } else if (needed <= 32) {
    launch(std::integral_constant<int, 32>());
  } else if (needed <= 64) {
    launch(std::integral_constant<int, 64>());
  } else {
    launch(std::integral_constant<int, RobotCheckEngine::kMaxGpuLinks>());
  }
}

// The most shared memory a block may have on the current device.
int shared_memory_limit() {
  int device = 0, limit = 0;
  LINALG_CUDA_CHECK(cudaGetDevice(&device));
  LINALG_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return limit;
}

// Lets the kernel have up to the device's limit of shared memory: the setting holds for the kernel in
// the whole process, and so for every engine launching it, whatever its own need.
template <typename Kernel>
void allow_shared_memory(Kernel kernel) {
  LINALG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_memory_limit()));
}

// The blocks of kThreads threads with `shared` bytes of shared memory resident at once.
template <typename Kernel>
unsigned resident_blocks(Kernel kernel, std::size_t shared) {
  int per_sm = 0, device = 0, multiprocessors = 0;
  LINALG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, shared));
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
  linalg_cuda::DeviceBuffer constants, primitives, cloud, inputs, outputs, next_motion, pending, num_pending;
  linalg_cuda::PinnedBuffer staging, answers;
  linalg_cuda::CudaStream work;  // the engine's own: calls come from any thread
  linalg_cuda::CudaEvent caller_ready, work_done;  // joining a caller's stream to `work` and back
  RobotCheckView view{};         // data_ in device memory
  unsigned motion_blocks = 1;    // blocks of the motion kernel resident at once
  unsigned pair_blocks = 1;      // blocks of the self pair kernel resident at once
};

RobotCheckEngine::RobotCheckEngine(RobotCheckData data, const Scene& scene, linalg_cuda::Backend backend)
    : data_(std::move(data)), backend_(linalg_cuda::resolve_backend(backend)), scene_version_(scene.version()) {
  view_ = data_.view();
  if (backend_ != linalg_cuda::Backend::Cuda) {
    take_scene(scene);
    return;
  }
  if (view_.num_links > kMaxGpuLinks || view_.num_kept > kMaxGpuLinks / 4)
    throw linalg_cuda::InvalidArgument("RobotCheckEngine: the GPU checks take robots of at most " +
                                       std::to_string(kMaxGpuLinks) + " links with at most " +
                                       std::to_string(kMaxGpuLinks / 4) + " branching links, this one has " +
                                       std::to_string(view_.num_links) + " and " + std::to_string(view_.num_kept) +
                                       " (use Backend::Cpu)");
  if (centre_bytes(view_) > static_cast<std::size_t>(shared_memory_limit()))
    throw linalg_cuda::InvalidArgument("RobotCheckEngine: the GPU checks keep " + std::to_string(view_.num_centres) +
                                       " links' bound centres per thread in shared memory, " +
                                       std::to_string(centre_bytes(view_)) + " bytes a block, and this device has " +
                                       std::to_string(shared_memory_limit()) + " (use Backend::Cpu)");
  device_ = std::make_unique<Device>();
  upload_constants();
  take_scene(scene);
}

RobotCheckEngine::~RobotCheckEngine() = default;

void RobotCheckEngine::upload_constants() {
  std::vector<unsigned char> bytes;
  const std::size_t joints = pack(&bytes, data_.joints), steps = pack(&bytes, data_.steps),
                    group = pack(&bytes, data_.group),
                    held = pack(&bytes, data_.held), low = pack(&bytes, data_.low), high = pack(&bytes, data_.high),
                    bounds = pack(&bytes, data_.link_bounds), first_group = pack(&bytes, data_.first_group),
                    group_bounds = pack(&bytes, data_.group_bounds), first = pack(&bytes, data_.first_sphere),
                    spheres = pack(&bytes, data_.spheres), pairs = pack(&bytes, data_.self_pairs),
                    tables = pack(&bytes, data_.self_tables.tables), table_bits = pack(&bytes, data_.self_tables.bits),
                    pair_bounds = pack(&bytes, data_.pair_bounds), paths = pack(&bytes, data_.pair_paths),
                    path_joints = pack(&bytes, data_.path_joints),
                    centre_slot = pack(&bytes, data_.centre_slot), gridded = pack(&bytes, data_.gridded_pairs);
  Device& dev = *device_;
  dev.constants.reserve(bytes.size());
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.constants.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, dev.work.get()));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(dev.work.get()));  // `bytes` is pageable and goes out of scope
  const unsigned char* base = dev.constants.as<unsigned char>();
  dev.view = view_;
  dev.view.joints = reinterpret_cast<const KinematicJoint*>(base + joints);
  dev.view.steps = reinterpret_cast<const KinematicStep*>(base + steps);
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
  dev.view.pair_bounds = reinterpret_cast<const SelfPairBounds*>(base + pair_bounds);
  dev.view.pair_paths = reinterpret_cast<const PairPath*>(base + paths);
  dev.view.path_joints = reinterpret_cast<const int*>(base + path_joints);
  dev.view.centre_slot = reinterpret_cast<const int*>(base + centre_slot);
  dev.view.gridded_pairs = reinterpret_cast<const int*>(base + gridded);
  const std::size_t shared = centre_bytes(view_);
  with_scratch_for(view_, [&](auto size) {
    allow_shared_memory(robot_states_kernel<size.value>);
    allow_shared_memory(robot_motions_kernel<size.value>);
    dev.motion_blocks = resident_blocks(robot_motions_kernel<size.value>, shared);
    dev.pair_blocks = resident_blocks(robot_self_pairs_kernel<size.value>, 0);
  });
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
  std::vector<unsigned char> bytes;
  const std::size_t primitives = pack(&bytes, data_.primitives), bounds = pack(&bytes, data_.primitive_bounds);
  dev.primitives.reserve(std::max<std::size_t>(bytes.size(), 16));
  if (!bytes.empty()) {
    LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.primitives.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice,
                                      dev.work.get()));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(dev.work.get()));  // `bytes` is pageable and goes out of scope
  }
  const unsigned char* base = dev.primitives.as<unsigned char>();
  dev.view.primitives = reinterpret_cast<const CheckPrimitive<float>*>(base + primitives);
  dev.view.primitive_bounds = reinterpret_cast<const CheckSphere*>(base + bounds);
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
  std::lock_guard<std::mutex> lock(mutex_);
  // The kernels run on the engine's stream, which owns the scratch, after the caller's stream's work
  // and before its next.
  Device& dev = *device_;
  LINALG_CUDA_CHECK(cudaEventRecord(dev.caller_ready.get(), stream));
  LINALG_CUDA_CHECK(cudaStreamWaitEvent(dev.work.get(), dev.caller_ready.get(), 0));
  launch_states(values, count, valid);
  LINALG_CUDA_CHECK(cudaEventRecord(dev.work_done.get(), dev.work.get()));
  LINALG_CUDA_CHECK(cudaStreamWaitEvent(stream, dev.work_done.get(), 0));
}

void RobotCheckEngine::launch_states(const double* values, std::size_t count, char* valid) {
  // Chunks of at most 2^20 states, each with room for two open pairs per state (more are decided by
  // the states' threads): 16 MB of scratch at most.
  constexpr std::size_t kChunk = std::size_t(1) << 20;
  Device& dev = *device_;
  const cudaStream_t stream = dev.work.get();
  const unsigned capacity = pending_limit_ > 0 ? pending_limit_ : static_cast<unsigned>(2 * std::min(count, kChunk));
  dev.pending.reserve(capacity * sizeof(PendingPair));
  dev.num_pending.reserve(sizeof(unsigned long long));
  auto* pending = dev.pending.as<PendingPair>();
  auto* num_pending = dev.num_pending.as<unsigned long long>();
  const RobotCheckView& view = dev.view;
  for (std::size_t first = 0; first < count; first += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, count - first));
    LINALG_CUDA_CHECK(cudaMemsetAsync(num_pending, 0, sizeof(unsigned long long), stream));
    const double* chunk = values + first * dimension();
    const unsigned blocks = linalg_cuda::detail::blocks_for(n, kThreads);
    // A lane per pending pair: as many blocks as there are states' threads, at most those resident.
    const unsigned pair_blocks = std::min(blocks, dev.pair_blocks);
    with_scratch_for(view_, [&](auto size) {
      robot_states_kernel<size.value><<<blocks, kThreads, centre_bytes(view_), stream>>>(
          view, chunk, n, valid + first, pending, capacity, num_pending);
      LINALG_CUDA_CHECK_LAUNCH();
      if (view_.num_self_pairs == 0) return;
      robot_self_pairs_kernel<size.value><<<pair_blocks, kThreads, 0, stream>>>(view, chunk, pending, capacity,
                                                                                num_pending, valid + first);
      LINALG_CUDA_CHECK_LAUNCH();
    });
  }
}

void RobotCheckEngine::check_states_gpu(const double* values, std::size_t count, char* valid) {
  Device& dev = *device_;
  const cudaStream_t stream = dev.work.get();
  const std::size_t bytes = count * dimension() * sizeof(double);
  dev.inputs.reserve(bytes);
  dev.outputs.reserve(count);
  dev.answers.reserve(count);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.inputs.data(), values, bytes, cudaMemcpyHostToDevice, stream));
  launch_states(dev.inputs.as<double>(), count, dev.outputs.as<char>());
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
  with_scratch_for(view_, [&](auto size) {
    robot_motions_kernel<size.value><<<blocks, kThreads, centre_bytes(view_), stream>>>(dev.view, f, t, s, n, next, out);
  });
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.answers.data(), out, count * sizeof(int), cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::copy_n(dev.answers.as<int>(), count, first_invalid);
}

}  // namespace ompl_cuda::detail
