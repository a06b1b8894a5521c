// The CUDA update of the hit/miss model (hit_miss_rules.h): per scan, in the batch's order, a kernel
// that marks the scan's cells (a warp per beam, a lane per cell, the marks raised by atomicMax so that
// hits win) and lists each cell once, then a kernel that updates the listed cells. The clamp makes a
// cell's value depend on the order of the scans, so scans go one after the other; within a scan every
// cell is updated once from its final mark, so the order of the warps changes nothing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cuda_grid_backend.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/internal/launch_geometry.h"

namespace gridmap_cuda::detail {
namespace {

constexpr int kThreads = 256;

struct HitMissInputs {
  UploadedScans scans;
  HitMissParams params;
  long long* log_odds;
  std::uint8_t* known;
  unsigned* marks;
  long long* listed;     // the cells the scan raised, each once
  unsigned* counts;      // per scan of the batch, how many were listed
};

__global__ void __launch_bounds__(kThreads) mark_scan_kernel(HitMissInputs in, int s, unsigned stamp) {
  const int lane = threadIdx.x & 31;
  const int warps = (gridDim.x * kThreads) >> 5;
  const ScanGeometry scan = in.scans.scans[s];
  const unsigned first_mark = 2 * stamp;
  WarpTally tally;
  for (int i = (blockIdx.x * kThreads + threadIdx.x) >> 5; i < scan.beams; i += warps)
    for_each_hit_miss_cell(scan, i, in.scans.ranges[scan.first_beam + i], in.scans.beam_cos, in.scans.beam_sin,
                           in.params, lane, 32, [&](int x, int y, int64_t index, bool hit) {
                             const unsigned before = atomicMax(in.marks + index, first_mark + (hit ? 1u : 0u));
                             if (before < first_mark) in.listed[atomicAdd(in.counts + s, 1u)] = index;
                             tally.add(x, y);
                           });
  tally.flush(in.scans.result);
}

__global__ void __launch_bounds__(kThreads) apply_scan_kernel(HitMissInputs in, int s) {
  const unsigned n = in.counts[s];
  for (unsigned k = blockIdx.x * kThreads + threadIdx.x; k < n; k += gridDim.x * kThreads) {
    const long long index = in.listed[k];
    in.log_odds[index] = hit_miss_update(in.log_odds[index], in.marks[index], in.params);
    in.known[index] = 1;
  }
}

class CudaHitMissMapper final : public CudaGridBackend {
 public:
  CudaHitMissMapper(const GridSpec& spec, const HitMissModel& model, const HitMissParams& params)
      : CudaGridBackend(spec, model.max_range, spec.cells() * sizeof(unsigned)), params_(params) {
    allocate_or_throw(&marks_, spec.cells() * sizeof(unsigned));
    LINALG_CUDA_CHECK(cudaMemsetAsync(marks_.data(), 0, spec.cells() * sizeof(unsigned),
                                      linalg_cuda::thread_context().stream()));
    // A beam marks at most the cells of its line: its reach in cells along the major axis, plus ends.
    cells_per_beam_ = static_cast<std::size_t>(
        std::ceil(std::max(params.max_range, params.missing_ray) / params.resolution)) + 3;
  }

 private:
  void launch(const UploadedScans& scans, const BeamBatch& batch, cudaStream_t stream) override {
    int max_beams = 0;
    for (const ScanGeometry& scan : batch.scans) max_beams = std::max(max_beams, scan.beams);
    const std::size_t capacity = std::min(spec_.cells(), static_cast<std::size_t>(max_beams) * cells_per_beam_);
    allocate_or_throw(&listed_, capacity * sizeof(long long));
    allocate_or_throw(&counts_, batch.scans.size() * sizeof(unsigned));
    LINALG_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, batch.scans.size() * sizeof(unsigned), stream));
    if (batch.scans.size() > kMaxHitMissStamp - stamp_) {  // the stamps would pass the marks' range
      LINALG_CUDA_CHECK(cudaMemsetAsync(marks_.data(), 0, spec_.cells() * sizeof(unsigned), stream));
      stamp_ = 0;
    }
    HitMissInputs in{scans, params_, evidence(), known(), marks_.as<unsigned>(), listed_.as<long long>(),
                     counts_.as<unsigned>()};
    const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
    const unsigned resident = linalg_cuda::detail::resident_blocks(props, kThreads);
    const unsigned apply_blocks = std::min<unsigned>(resident, linalg_cuda::detail::blocks_for(capacity, kThreads));
    for (int s = 0; s < scans.num_scans; ++s) {
      const int beams = batch.scans[static_cast<std::size_t>(s)].beams;
      ++stamp_;
      if (beams == 0) continue;
      const unsigned mark_blocks =
          std::min<unsigned>(resident, linalg_cuda::detail::blocks_for(32 * std::size_t(beams), kThreads));
      mark_scan_kernel<<<mark_blocks, kThreads, 0, stream>>>(in, s, stamp_);
      apply_scan_kernel<<<apply_blocks, kThreads, 0, stream>>>(in, s);
    }
    LINALG_CUDA_CHECK_LAUNCH();
  }

  HitMissParams params_;
  std::size_t cells_per_beam_ = 0;
  unsigned stamp_ = 0;
  linalg_cuda::DeviceBuffer marks_, listed_, counts_;
};

}  // namespace

std::unique_ptr<MapperBackend> make_cuda_mapper(const GridSpec& spec, const HitMissModel& model) {
  return std::make_unique<CudaHitMissMapper>(spec, model, make_hit_miss_params(spec, model));
}

}  // namespace gridmap_cuda::detail
