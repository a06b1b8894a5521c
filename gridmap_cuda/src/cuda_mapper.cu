// The CUDA evidence-grid update: one warp per beam, one lane per cell of the beam's line (the seed
// paper's "block per beam, thread per cell", with warps so that short beams waste nothing). All scans
// of an insert go up in one transfer and one launch. Updates are 64-bit integer additions of the
// fixed-point increments (atomicAdd without a result compiles to a fire-and-forget reduction), so the
// map is exact and independent of the order in which warps run; the CPU reference gives the same bits.
#include <algorithm>
#include <cstdint>
#include <string>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/errors.h"
#include "mapper_backend.h"

namespace gridmap_cuda::detail {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) insert_beams_kernel(int num_scans, const ScanGeometry* __restrict__ scans,
                                                                 const float* __restrict__ ranges,
                                                                 const double* __restrict__ beam_cos,
                                                                 const double* __restrict__ beam_sin, int total_beams,
                                                                 EvidenceParams params,
                                                                 unsigned long long* __restrict__ evidence,
                                                                 std::uint8_t* __restrict__ known,
                                                                 unsigned long long* __restrict__ updates) {
  const int lane = threadIdx.x & 31;
  const int warps = (gridDim.x * kThreads) >> 5;
  unsigned long long count = 0;
  for (int beam = (blockIdx.x * kThreads + threadIdx.x) >> 5; beam < total_beams; beam += warps) {
    // The scan holding this beam: the last one whose first beam is <= beam (empty scans share a
    // first beam with their successor, and the search passes over them).
    int lo = 0, hi = num_scans - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (scans[mid].first_beam <= beam) lo = mid;
      else hi = mid - 1;
    }
    const ScanGeometry& scan = scans[lo];
    const float range = ranges[beam];
    if (!beam_is_used(range, params)) continue;
    const int i = beam - scan.first_beam;
    const BresenhamLine line =
        beam_line(scan, beam_cos[scan.direction_table + i], beam_sin[scan.direction_table + i], range, params);
    const int steps = steps_to_visit(line, params);
    for (int j = lane; j < steps; j += 32) {
      int64_t cell = 0;
      int32_t increment = 0;
      const CellOutcome outcome = cell_update(line, j, scan, range, params, &cell, &increment);
      if (outcome == CellOutcome::RayEnded) break;  // and so are this lane's later cells
      if (outcome == CellOutcome::OutsideGrid) continue;
      atomicAdd(evidence + cell, static_cast<unsigned long long>(static_cast<long long>(increment)));
      known[cell] = 1;
      ++count;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) count += __shfl_down_sync(0xffffffffu, count, offset);
  if (lane == 0 && count) atomicAdd(updates, count);
}

class CudaMapper final : public MapperBackend {
 public:
  CudaMapper(const GridSpec& spec, const SensorModel& model) : spec_(spec), model_(model) {
    const std::vector<EvidenceEntry> table = build_evidence_table(model, spec.resolution, &table_size_);
    const std::size_t map_bytes = spec.cells() * (sizeof(std::int64_t) + sizeof(std::uint8_t));
    std::size_t free_bytes = 0, total_bytes = 0;
    LINALG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (map_bytes + table.size() * sizeof(EvidenceEntry) > free_bytes)
      throw linalg_cuda::InvalidArgument("grid of " + std::to_string(spec.width) + " x " + std::to_string(spec.height) +
                                         " cells needs " + std::to_string(map_bytes >> 20) + " MiB; the GPU has " +
                                         std::to_string(free_bytes >> 20) + " MiB free");
    evidence_.reserve(spec.cells() * sizeof(std::int64_t));
    known_.reserve(spec.cells());
    table_.reserve(std::max<std::size_t>(1, table.size()) * sizeof(EvidenceEntry));
    updates_.reserve(sizeof(unsigned long long));
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

  std::uint64_t insert(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses) override {
    const BeamBatch batch = prepare_beams(scans, poses, spec_, model_);
    if (batch.total_beams == 0) return 0;
    const cudaStream_t stream = linalg_cuda::thread_context().stream();
    // Everything the launch reads, packed into one pinned staging area and sent in one copy.
    const std::size_t scan_bytes = batch.scans.size() * sizeof(ScanGeometry);
    const std::size_t direction_bytes = batch.beam_cos.size() * sizeof(double);
    const std::size_t range_offset = scan_bytes + 2 * direction_bytes;
    const std::size_t bytes = range_offset + static_cast<std::size_t>(batch.total_beams) * sizeof(float);
    // The previous insert's copy must be done before its staging area is rewritten.
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    staging_.reserve(bytes);
    inputs_.reserve(bytes);
    auto* host = staging_.as<unsigned char>();
    std::copy_n(reinterpret_cast<const unsigned char*>(batch.scans.data()), scan_bytes, host);
    std::copy_n(reinterpret_cast<const unsigned char*>(batch.beam_cos.data()), direction_bytes, host + scan_bytes);
    std::copy_n(reinterpret_cast<const unsigned char*>(batch.beam_sin.data()), direction_bytes,
                host + scan_bytes + direction_bytes);
    flatten_ranges(scans, reinterpret_cast<float*>(host + range_offset));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(inputs_.data(), host, bytes, cudaMemcpyHostToDevice, stream));
    LINALG_CUDA_CHECK(cudaMemsetAsync(updates_.data(), 0, sizeof(unsigned long long), stream));

    auto* device = inputs_.as<unsigned char>();
    const EvidenceParams params = make_params(spec_, model_, table_size_, table_.as<EvidenceEntry>());
    const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
    const int max_blocks = props.multiProcessorCount * (props.maxThreadsPerMultiProcessor / kThreads);
    const int blocks = std::max(1, std::min(max_blocks, (batch.total_beams + kThreads / 32 - 1) / (kThreads / 32)));
    insert_beams_kernel<<<blocks, kThreads, 0, stream>>>(
        static_cast<int>(batch.scans.size()), reinterpret_cast<const ScanGeometry*>(device),
        reinterpret_cast<const float*>(device + range_offset), reinterpret_cast<const double*>(device + scan_bytes),
        reinterpret_cast<const double*>(device + scan_bytes + direction_bytes), batch.total_beams, params,
        evidence_.as<unsigned long long>(), known_.as<std::uint8_t>(), updates_.as<unsigned long long>());
    LINALG_CUDA_CHECK_LAUNCH();
    unsigned long long updates = 0;
    LINALG_CUDA_CHECK(cudaMemcpyAsync(&updates, updates_.data(), sizeof(updates), cudaMemcpyDeviceToHost, stream));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    return updates;
  }

  void read(OccupancyGrid* grid) const override {
    const cudaStream_t stream = linalg_cuda::thread_context().stream();
    grid->evidence.resize(spec_.cells());
    grid->known.resize(spec_.cells());
    LINALG_CUDA_CHECK(cudaMemcpyAsync(grid->evidence.data(), evidence_.data(), spec_.cells() * sizeof(std::int64_t),
                                      cudaMemcpyDeviceToHost, stream));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(grid->known.data(), known_.data(), spec_.cells(), cudaMemcpyDeviceToHost, stream));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  GridSpec spec_;
  SensorModel model_;
  int table_size_ = 0;
  linalg_cuda::DeviceBuffer evidence_, known_, table_, updates_, inputs_;
  linalg_cuda::PinnedBuffer staging_;
};

}  // namespace

std::unique_ptr<MapperBackend> make_cuda_mapper(const GridSpec& spec, const SensorModel& model) {
  return std::make_unique<CudaMapper>(spec, model);
}

}  // namespace gridmap_cuda::detail
