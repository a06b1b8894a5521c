// The CUDA evidence-grid update. One warp per beam, one lane per cell of the beam's line (the seed
// paper's "block per beam, thread per cell", with warps so that short beams waste nothing); all scans
// of an insert go up in one transfer and one launch. Updates are integer additions of the fixed-point
// increments, so the map is exact and independent of the order in which warps run, and the CPU
// reference gives the same bits.
//
// Near the laser every beam of a scan crosses the same few cells (at 0.025 m and 0.5 deg, beams are
// less than a cell apart for the first 2.9 m), so a naive update hammers those cells' global
// counters. For batches of scans one block takes one scan and first adds the updates that fall in a
// window of kWindow x kWindow cells around the laser in shared memory (32-bit, exact: the window of
// one scan cannot overflow, see window_is_safe), then flushes each touched window cell with a single
// global addition: about half the global atomics, and none of the contention.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <string>

#include "linalg_cuda/backend.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"
#include "mapper_backend.h"

namespace gridmap_cuda::detail {
namespace {

constexpr int kThreads = 256;        // beam-parallel kernel
constexpr int kScanThreads = 512;    // windowed kernel: one block per scan
constexpr int kWindow = 128;         // window side, cells
constexpr int kWindowCells = kWindow * kWindow;
constexpr std::size_t kWindowBytes = kWindowCells * (sizeof(int) + sizeof(std::uint8_t));

struct KernelInputs {
  int num_scans;
  const ScanGeometry* scans;
  const float* ranges;
  const double* beam_cos;
  const double* beam_sin;
  EvidenceParams params;
  unsigned long long* evidence;
  std::uint8_t* known;
  unsigned long long* updates;
  int* updated;  // the updated cells' box: min x, min y, max x, max y
};

// A thread's share of the updated cells' box, merged over the warp and then into KernelInputs::updated.
struct BoxTracker {
  int x0 = INT_MAX, y0 = INT_MAX, x1 = -1, y1 = -1;

  __device__ void add(int x, int y) {
    x0 = min(x0, x);
    y0 = min(y0, y);
    x1 = max(x1, x);
    y1 = max(y1, y);
  }

  __device__ void flush(int* box) const {
    constexpr unsigned kAll = 0xffffffffu;
    const int wx0 = __reduce_min_sync(kAll, x0), wy0 = __reduce_min_sync(kAll, y0);
    const int wx1 = __reduce_max_sync(kAll, x1), wy1 = __reduce_max_sync(kAll, y1);
    if ((threadIdx.x & 31) == 0 && wx1 >= 0) {
      atomicMin(box, wx0);
      atomicMin(box + 1, wy0);
      atomicMax(box + 2, wx1);
      atomicMax(box + 3, wy1);
    }
  }
};

__device__ __forceinline__ void add_to_map(const KernelInputs& in, int64_t index, int64_t increment) {
  // No result used: compiles to a fire-and-forget reduction (RED) in L2.
  atomicAdd(in.evidence + index, static_cast<unsigned long long>(increment));
  in.known[index] = 1;
}

__device__ __forceinline__ void count_updates(const KernelInputs& in, unsigned long long count) {
  for (int offset = 16; offset > 0; offset >>= 1) count += __shfl_down_sync(0xffffffffu, count, offset);
  if ((threadIdx.x & 31) == 0 && count) atomicAdd(in.updates, count);
}

// Any number of scans, every update straight to the global map: the right choice for a few scans
// (streaming), which could not fill the GPU one block per scan.
__global__ void __launch_bounds__(kThreads) insert_beams_kernel(KernelInputs in, int total_beams) {
  const int lane = threadIdx.x & 31;
  const int warps = (gridDim.x * kThreads) >> 5;
  unsigned long long count = 0;
  BoxTracker box;
  for (int beam = (blockIdx.x * kThreads + threadIdx.x) >> 5; beam < total_beams; beam += warps) {
    // The scan holding this beam: the last one whose first beam is <= beam (empty scans share a
    // first beam with their successor, and the search passes over them).
    int lo = 0, hi = in.num_scans - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (in.scans[mid].first_beam <= beam) lo = mid;
      else hi = mid - 1;
    }
    const ScanGeometry& scan = in.scans[lo];
    count += for_each_beam_update(scan, beam - scan.first_beam, in.ranges[beam], in.beam_cos, in.beam_sin, in.params,
                                  lane, 32, [&](const CellUpdate& u) {
                                    add_to_map(in, u.index, u.increment);
                                    box.add(u.x, u.y);
                                  });
  }
  count_updates(in, count);
  box.flush(in.updated);
}

// One block per scan, with the shared-memory window around the laser (see the top of the file).
__global__ void __launch_bounds__(kScanThreads) insert_scans_windowed_kernel(KernelInputs in) {
  extern __shared__ int4 window_storage[];
  int* sums = reinterpret_cast<int*>(window_storage);
  std::uint8_t* touched = reinterpret_cast<std::uint8_t*>(sums + kWindowCells);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  constexpr int kWarps = kScanThreads / 32;
  unsigned long long count = 0;
  BoxTracker box;
  for (int s = blockIdx.x; s < in.num_scans; s += gridDim.x) {
    for (int k = threadIdx.x; k < static_cast<int>(kWindowBytes / sizeof(int4)); k += kScanThreads)
      window_storage[k] = make_int4(0, 0, 0, 0);
    __syncthreads();
    const ScanGeometry scan = in.scans[s];
    const int window_x = scan.laser_cell_x - kWindow / 2, window_y = scan.laser_cell_y - kWindow / 2;
    for (int i = warp; i < scan.beams; i += kWarps)
      count += for_each_beam_update(scan, i, in.ranges[scan.first_beam + i], in.beam_cos, in.beam_sin, in.params, lane,
                                    32, [&](const CellUpdate& u) {
                                      box.add(u.x, u.y);
                                      const unsigned wx = static_cast<unsigned>(u.x - window_x);
                                      const unsigned wy = static_cast<unsigned>(u.y - window_y);
                                      if (wx < kWindow && wy < kWindow) {
                                        atomicAdd(sums + wy * kWindow + wx, u.increment);
                                        touched[wy * kWindow + wx] = 1;
                                      } else {
                                        add_to_map(in, u.index, u.increment);
                                      }
                                    });
    __syncthreads();
    for (int k = threadIdx.x; k < kWindowCells; k += kScanThreads) {
      if (!touched[k]) continue;  // only cells inside the grid were ever touched
      const int64_t index = static_cast<int64_t>(window_y + k / kWindow) * in.params.width + window_x + k % kWindow;
      if (sums[k] != 0) atomicAdd(in.evidence + index, static_cast<unsigned long long>(static_cast<int64_t>(sums[k])));
      in.known[index] = 1;
    }
    __syncthreads();  // the window is cleared for the next scan
  }
  count_updates(in, count);
  box.flush(in.updated);
}

// The 8-bit values of a box of cells (value_codec.h), a thread per output byte.
__global__ void __launch_bounds__(kThreads) values_kernel(const long long* __restrict__ evidence,
                                                          const std::uint8_t* __restrict__ known, ValueCodec codec,
                                                          ValueKind kind, CellBox box, bool top_down, int grid_width,
                                                          std::uint8_t* __restrict__ out, std::int64_t n) {
  const int w = box.x1 - box.x0 + 1, h = box.y1 - box.y0 + 1;
  for (std::int64_t k = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; k < n; k += std::int64_t(gridDim.x) * kThreads) {
    const std::int64_t cell = box_cell_index(box.x0, box.y0, w, h, top_down, grid_width, k);
    out[k] = cell_value(kind, evidence[cell], known[cell] != 0, codec);
  }
}

// Copies n values in chunks on all cores (small copies on this one: not worth waking threads).
template <typename T>
void copy_on_all_cores(const T* from, std::size_t n, T* to) {
  constexpr long kChunk = 1 << 16;
  const long chunks = static_cast<long>((n + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static) if (chunks > 8)
  for (long c = 0; c < chunks; ++c) {
    const std::size_t begin = static_cast<std::size_t>(c) * kChunk;
    std::copy_n(from + begin, std::min<std::size_t>(kChunk, n - begin), to + begin);
  }
}

// The 32-bit window sums are exact when no scan can push a cell past 2^31 - 1 units.
std::size_t round_up(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

bool window_is_safe(const BeamBatch& batch, int64_t max_increment) {
  int max_beams = 0;
  for (const ScanGeometry& scan : batch.scans) max_beams = std::max(max_beams, scan.beams);
  return static_cast<int64_t>(max_beams) * max_increment < (int64_t{1} << 31);
}

class CudaMapper final : public MapperBackend {
 public:
  CudaMapper(const GridSpec& spec, const SensorModel& model) : spec_(spec), model_(model) {
    const std::vector<EvidenceEntry> table = build_evidence_table(model, spec.resolution, &table_size_);
    max_increment_ = max_abs_increment(table.data(), table.size());
    const std::size_t map_bytes = spec.cells() * (sizeof(std::int64_t) + sizeof(std::uint8_t));
    const std::size_t needed = map_bytes + table.size() * sizeof(EvidenceEntry);
    const std::string grid = "grid of " + std::to_string(spec.width) + " x " + std::to_string(spec.height) + " cells";
    if (needed > linalg_cuda::free_device_memory()) linalg_cuda::detail::throw_device_memory_error(grid, needed);
    try {  // the check above can race with other users of the device
      evidence_.reserve(spec.cells() * sizeof(std::int64_t));
      known_.reserve(spec.cells());
      table_.reserve(std::max<std::size_t>(1, table.size()) * sizeof(EvidenceEntry));
    } catch (const linalg_cuda::DeviceMemoryError&) {
      linalg_cuda::detail::throw_device_memory_error(grid, needed);
    }
    updates_.reserve(sizeof(DeviceResult));
    // The window kernel's shared memory is above the default 48 KB; the opt-in is per device.
    LINALG_CUDA_CHECK(cudaFuncSetAttribute(insert_scans_windowed_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           kWindowBytes));
    const cudaStream_t stream = linalg_cuda::thread_context().stream();
    if (!table.empty())
      LINALG_CUDA_CHECK(cudaMemcpyAsync(table_.data(), table.data(), table.size() * sizeof(EvidenceEntry),
                                        cudaMemcpyHostToDevice, stream));
    reset();
  }

  void reset() override {
    const cudaStream_t stream = linalg_cuda::thread_context().stream();
    LINALG_CUDA_CHECK(cudaMemsetAsync(evidence_.data(), 0, spec_.cells() * sizeof(std::int64_t), stream));
    LINALG_CUDA_CHECK(cudaMemsetAsync(known_.data(), 0, spec_.cells(), stream));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  InsertResult insert(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                      bool reset_first) override {
    const cudaStream_t stream = linalg_cuda::thread_context().stream();
    // Everything the launch reads goes into one pinned staging area and up in one copy: the ranges
    // first (copied there while they are validated), then the scan geometry and direction tables.
    const std::size_t beams = count_beams(scans);
    if (beams > kMaxBeamsPerInsert)
      throw linalg_cuda::InvalidArgument("more than " + std::to_string(kMaxBeamsPerInsert) +
                                         " beams in one insert; insert the scans in parts");
    const std::size_t range_bytes = round_up(beams * sizeof(float));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));  // the previous insert's copy has left staging_
    staging_.reserve(range_bytes);
    const BeamBatch batch = prepare_beams(scans, poses, spec_, model_, staging_.as<float>());
    if (reset_first) reset();
    if (batch.total_beams == 0) return {0, 0};
    const std::size_t scan_bytes = round_up(batch.scans.size() * sizeof(ScanGeometry));
    const std::size_t direction_bytes = round_up(batch.beam_cos.size() * sizeof(double));
    const std::size_t bytes = range_bytes + scan_bytes + 2 * direction_bytes;
    if (bytes > staging_.capacity()) {  // grow, keeping the ranges already copied
      linalg_cuda::PinnedBuffer bigger(bytes);
      std::copy_n(staging_.as<unsigned char>(), range_bytes, bigger.as<unsigned char>());
      staging_ = std::move(bigger);
    }
    unsigned char* host = staging_.as<unsigned char>();
    std::copy_n(reinterpret_cast<const unsigned char*>(batch.scans.data()), batch.scans.size() * sizeof(ScanGeometry),
                host + range_bytes);
    std::copy_n(batch.beam_cos.data(), batch.beam_cos.size(), reinterpret_cast<double*>(host + range_bytes + scan_bytes));
    std::copy_n(batch.beam_sin.data(), batch.beam_sin.size(),
                reinterpret_cast<double*>(host + range_bytes + scan_bytes + direction_bytes));
    inputs_.reserve(bytes);
    LINALG_CUDA_CHECK(cudaMemcpyAsync(inputs_.data(), host, bytes, cudaMemcpyHostToDevice, stream));
    *result_host_.as<DeviceResult>() = DeviceResult{0, {INT_MAX, INT_MAX, -1, -1}};
    LINALG_CUDA_CHECK(cudaMemcpyAsync(updates_.data(), result_host_.data(), sizeof(DeviceResult), cudaMemcpyHostToDevice,
                                      stream));

    const unsigned char* device = inputs_.as<unsigned char>();
    KernelInputs in;
    in.num_scans = static_cast<int>(batch.scans.size());
    in.ranges = reinterpret_cast<const float*>(device);
    in.scans = reinterpret_cast<const ScanGeometry*>(device + range_bytes);
    in.beam_cos = reinterpret_cast<const double*>(device + range_bytes + scan_bytes);
    in.beam_sin = reinterpret_cast<const double*>(device + range_bytes + scan_bytes + direction_bytes);
    in.params = make_params(spec_, model_, table_size_, table_.as<EvidenceEntry>());
    in.evidence = evidence_.as<unsigned long long>();
    in.known = known_.as<std::uint8_t>();
    in.updates = &updates_.as<DeviceResult>()->updates;
    in.updated = updates_.as<DeviceResult>()->box;

    const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
    if (in.num_scans >= props.multiProcessorCount && window_is_safe(batch, max_increment_)) {
      int per_sm = 0;
      LINALG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, insert_scans_windowed_kernel,
                                                                      kScanThreads, kWindowBytes));
      const int blocks = std::min(in.num_scans, std::max(1, per_sm) * props.multiProcessorCount);
      insert_scans_windowed_kernel<<<blocks, kScanThreads, kWindowBytes, stream>>>(in);
    } else {
      // A warp per beam, at most a full device of resident blocks (the kernel loops over beams).
      const unsigned blocks = std::min<unsigned>(linalg_cuda::detail::resident_blocks(props, kThreads),
                                                 linalg_cuda::detail::blocks_for(32 * std::size_t(batch.total_beams), kThreads));
      insert_beams_kernel<<<blocks, kThreads, 0, stream>>>(in, batch.total_beams);
    }
    LINALG_CUDA_CHECK_LAUNCH();
    LINALG_CUDA_CHECK(cudaMemcpyAsync(result_host_.as<unsigned char>(), updates_.data(), sizeof(DeviceResult),
                                      cudaMemcpyDeviceToHost, stream));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    const DeviceResult& r = *result_host_.as<DeviceResult>();
    InsertResult result;
    result.cell_updates = r.updates;
    result.used_beams = batch.used_beams;
    result.updated = {r.box[0], r.box[1], r.box[2], r.box[3]};
    return result;
  }

  void values(const ValueCodec& codec, ValueKind kind, const CellBox& box, bool top_down,
              std::uint8_t* out) const override {
    std::lock_guard<std::mutex> lock(download_mutex_);
    const std::size_t n = box.cells();
    if (n == 0) return;
    const cudaStream_t stream = linalg_cuda::thread_context().stream();
    values_.reserve(n);
    const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
    const unsigned blocks = std::min<unsigned>(linalg_cuda::detail::resident_blocks(props, kThreads),
                                               linalg_cuda::detail::blocks_for(n, kThreads));
    values_kernel<<<blocks, kThreads, 0, stream>>>(evidence_.as<long long>(), known_.as<std::uint8_t>(), codec, kind,
                                                   box, top_down, spec_.width, values_.as<std::uint8_t>(),
                                                   static_cast<std::int64_t>(n));
    LINALG_CUDA_CHECK_LAUNCH();
    download_.reserve(n);
    LINALG_CUDA_CHECK(cudaMemcpyAsync(download_.data(), values_.data(), n, cudaMemcpyDeviceToHost, stream));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    copy_on_all_cores(download_.as<std::uint8_t>(), n, out);
  }

  void read(OccupancyGrid* grid) const override {
    std::lock_guard<std::mutex> lock(download_mutex_);
    // Through pinned memory (several times faster than a pageable download), then into the grid's
    // vectors on all cores.
    const cudaStream_t stream = linalg_cuda::thread_context().stream();
    const std::size_t cells = spec_.cells(), evidence_bytes = cells * sizeof(std::int64_t);
    download_.reserve(evidence_bytes + cells);
    LINALG_CUDA_CHECK(cudaMemcpyAsync(download_.data(), evidence_.data(), evidence_bytes, cudaMemcpyDeviceToHost, stream));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(download_.as<unsigned char>() + evidence_bytes, known_.data(), cells,
                                      cudaMemcpyDeviceToHost, stream));
    grid->evidence.resize(cells);
    grid->known.resize(cells);
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    copy_on_all_cores(download_.as<std::int64_t>(), cells, grid->evidence.data());
    copy_on_all_cores(download_.as<std::uint8_t>() + evidence_bytes, cells, grid->known.data());
  }

 private:
  GridSpec spec_;
  SensorModel model_;
  int table_size_ = 0;
  int64_t max_increment_ = 0;
  // What an insert's kernels count: cell updates and the updated cells' box.
  struct DeviceResult {
    unsigned long long updates;
    int box[4];
  };
  linalg_cuda::DeviceBuffer evidence_, known_, table_, updates_, inputs_;
  mutable linalg_cuda::DeviceBuffer values_;
  linalg_cuda::PinnedBuffer staging_;
  linalg_cuda::PinnedBuffer result_host_{sizeof(DeviceResult)};
  mutable linalg_cuda::PinnedBuffer download_;
  mutable std::mutex download_mutex_;  // map() may be called from several threads
};

}  // namespace

std::unique_ptr<MapperBackend> make_cuda_mapper(const GridSpec& spec, const SensorModel& model) {
  return std::make_unique<CudaMapper>(spec, model);
}

}  // namespace gridmap_cuda::detail
