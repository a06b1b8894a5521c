// The CUDA update of the hit/miss model (hit_miss_rules.h), a whole batch in one cooperative launch.
// Scans go one after the other, since the clamp makes a cell's value depend on their order. Step s
// of the kernel marks scan s's cells (a warp per beam, a lane per cell, the marks raised by atomicMax
// so that hits win; the first raise lists the cell) while it updates the cells scan s - 1 listed,
// then the whole grid synchronises. Even and odd scans mark and list into separate arrays, so the
// two halves of a step touch different memory; within a scan every cell is updated once from its
// final mark, so the order of the warps changes nothing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <cooperative_groups.h>

#include "cuda_grid_backend.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"

namespace gridmap_cuda::detail {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;

template <typename Cells>
struct HitMissInputs {
  UploadedScans scans;
  HitMissParams params;
  Cells cells;            // where each cell lives (cell_layout.h)
  long long* log_odds;
  std::uint8_t* known;
  unsigned* marks[2];     // even scans' marks, odd scans'
  long long* listed[2];   // the cells each scan raised, each once
  unsigned* counts;       // per scan of the batch, how many were listed
  unsigned first_stamp;   // scan s's stamp is first_stamp + s
};

template <typename Cells>
__global__ void __launch_bounds__(kThreads) hit_miss_scans_kernel(HitMissInputs<Cells> in) {
  const cg::grid_group grid = cg::this_grid();
  Cells cells = in.cells;
  const int lane = threadIdx.x & 31;
  const unsigned thread = blockIdx.x * kThreads + threadIdx.x, threads = gridDim.x * kThreads;
  const int warp = static_cast<int>(thread >> 5), warps = static_cast<int>(threads >> 5);
  WarpTally tally;
  for (int s = 0; s <= in.scans.num_scans; ++s) {
    if (s > 0) {  // the cells scan s - 1 listed
      const int p = (s - 1) & 1;
      const unsigned n = in.counts[s - 1];
      for (unsigned k = thread; k < n; k += threads) {
        const long long index = in.listed[p][k];
        in.log_odds[index] = hit_miss_update(in.log_odds[index], in.marks[p][index], in.params);
        in.known[index] = 1;
      }
    }
    if (s < in.scans.num_scans) {  // scan s's marks
      const ScanGeometry scan = in.scans.scans[s];
      const int p = s & 1;
      const unsigned first_mark = 2 * (in.first_stamp + static_cast<unsigned>(s));
      for (int i = warp; i < scan.beams; i += warps)
        for_each_hit_miss_cell(scan, i, in.scans.ranges[scan.first_beam + i], in.scans.beam_cos, in.scans.beam_sin,
                               in.params, lane, 32, [&](int x, int y, bool hit) {
                                 const int64_t index = cells.index(x, y);
                                 const unsigned before = atomicMax(in.marks[p] + index, first_mark + (hit ? 1u : 0u));
                                 if (before < first_mark) {  // one counter for the scan: one atomic per group
                                   const cg::coalesced_group group = cg::coalesced_threads();
                                   unsigned slot = 0;
                                   if (group.thread_rank() == 0) slot = atomicAdd(in.counts + s, group.size());
                                   in.listed[p][group.shfl(slot, 0) + group.thread_rank()] = index;
                                 }
                                 tally.add(x, y);
                               });
    }
    grid.sync();
  }
  tally.flush(in.scans.result);
}

// The cells each beam marks, for the request pass.
struct HitMissBeamLine {
  HitMissParams params;
  __device__ int operator()(const ScanGeometry& scan, int beam, float range, const double* beam_cos,
                            const double* beam_sin, BresenhamLine* line) const {
    return hit_miss_prefix(scan, beam, range, beam_cos, beam_sin, params, line);
  }
};

class CudaHitMissMapper final : public CudaGridBackend {
 public:
  CudaHitMissMapper(const GridSpec& spec, const HitMissModel& model, const HitMissParams& params)
      : CudaGridBackend(spec, model.max_range, 0, 2 * sizeof(unsigned)), params_(params) {
    int device = 0, cooperative = 0;
    LINALG_CUDA_CHECK(cudaGetDevice(&device));
    LINALG_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    if (!cooperative)
      throw linalg_cuda::InvalidArgument("the hit/miss model's GPU backend needs cooperative launches, which this "
                                         "device lacks (use Backend::Cpu)");
    for (linalg_cuda::DeviceBuffer& marks : marks_) {
      allocate_or_throw(&marks, spec.cells() * sizeof(unsigned));
      LINALG_CUDA_CHECK(cudaMemsetAsync(marks.data(), 0, spec.cells() * sizeof(unsigned),
                                        linalg_cuda::thread_context().stream()));
    }
    // The blocks resident at once: a cooperative launch's limit (the tiled kernel's, which uses more
    // registers, serves both).
    int per_sm = 0;
    LINALG_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hit_miss_scans_kernel<TiledCells>, kThreads, 0));
    int dense_per_sm = 0;
    LINALG_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&dense_per_sm, hit_miss_scans_kernel<DenseCells>, kThreads, 0));
    per_sm = std::min(per_sm, dense_per_sm);
    multiprocessors_ = static_cast<unsigned>(linalg_cuda::thread_context().device_properties().multiProcessorCount);
    resident_blocks_ = static_cast<unsigned>(std::max(1, per_sm)) * multiprocessors_;
    // A beam marks at most the cells of its line: its reach in cells along the major axis, plus ends.
    cells_per_beam_ = static_cast<std::size_t>(
        std::ceil(std::max(params.max_range, params.missing_ray) / params.resolution)) + 3;
  }

 private:
  // The lists hold a scan's cells: at most its beams' lines, at most the grid.
  static int max_beams(const BeamBatch& batch) {
    int beams = 0;
    for (const ScanGeometry& scan : batch.scans) beams = std::max(beams, scan.beams);
    return beams;
  }

  std::size_t list_capacity(const BeamBatch& batch) const {
    const std::size_t lines = static_cast<std::size_t>(max_beams(batch)) * cells_per_beam_;
    return tiled() ? lines : std::min(spec_.cells(), lines);
  }

  // The marks follow the pool; they only compare within a scan, so fresh zeros serve as well.
  // (Both are allocated before either is replaced, so a throw leaves the old ones.)
  void cells_grown(std::size_t cells, cudaStream_t stream) override {
    linalg_cuda::DeviceBuffer grown[2];
    for (linalg_cuda::DeviceBuffer& marks : grown) {
      allocate_or_throw(&marks, cells * sizeof(unsigned));
      LINALG_CUDA_CHECK(cudaMemsetAsync(marks.data(), 0, cells * sizeof(unsigned), stream));
    }
    for (int k = 0; k < 2; ++k) marks_[k] = std::move(grown[k]);
  }


  void request_tiles(const UploadedScans& scans, const BeamBatch& batch, const TileRequest& request,
                     cudaStream_t stream) override {
    launch_request(scans, batch, request, HitMissBeamLine{params_}, stream);
  }

  void reserve_for(const BeamBatch& batch) override {
    const std::size_t capacity = list_capacity(batch);
    for (linalg_cuda::DeviceBuffer& listed : listed_) allocate_or_throw(&listed, capacity * sizeof(long long));
    allocate_or_throw(&counts_, batch.scans.size() * sizeof(unsigned));
  }

  void launch(const UploadedScans& scans, const BeamBatch& batch, cudaStream_t stream) override {
    with_cells([&](auto cells) { launch_with(scans, batch, cells, stream); });
  }

  template <typename Cells>
  void launch_with(const UploadedScans& scans, const BeamBatch& batch, const Cells& cells, cudaStream_t stream) {
    LINALG_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, batch.scans.size() * sizeof(unsigned), stream));
    if (batch.scans.size() > kMaxHitMissStamp - stamp_) {  // the stamps would pass the marks' range
      for (linalg_cuda::DeviceBuffer& marks : marks_)
        LINALG_CUDA_CHECK(cudaMemsetAsync(marks.data(), 0, cell_capacity() * sizeof(unsigned), stream));
      stamp_ = 0;
    }
    HitMissInputs<Cells> in{scans,
                     params_,
                     cells,
                     evidence(),
                     known(),
                     {marks_[0].as<unsigned>(), marks_[1].as<unsigned>()},
                     {listed_[0].as<long long>(), listed_[1].as<long long>()},
                     counts_.as<unsigned>(),
                     stamp_ + 1};
    stamp_ += static_cast<unsigned>(batch.scans.size());
    // A warp per beam of the largest scan, at least a block per multiprocessor for the listed cells,
    // at most the blocks resident at once: fewer blocks synchronise faster, and the loops stride over
    // what is left.
    const unsigned beam_blocks = linalg_cuda::detail::blocks_for(32 * std::size_t(max_beams(batch)), kThreads);
    const unsigned blocks = std::min(resident_blocks_, std::max(beam_blocks, multiprocessors_));
    void* arguments[] = {&in};
    LINALG_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(hit_miss_scans_kernel<Cells>), blocks,
                                                  kThreads, arguments, 0, stream));
  }

  HitMissParams params_;
  std::size_t cells_per_beam_ = 0;
  unsigned multiprocessors_ = 1, resident_blocks_ = 1;
  unsigned stamp_ = 0;
  linalg_cuda::DeviceBuffer marks_[2], listed_[2], counts_;
};

}  // namespace

std::unique_ptr<MapperBackend> make_cuda_mapper(const GridSpec& spec, const HitMissModel& model) {
  return std::make_unique<CudaHitMissMapper>(spec, model, make_hit_miss_params(spec, model));
}

}  // namespace gridmap_cuda::detail
