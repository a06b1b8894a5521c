// The CUDA evidence-grid update of CARMEN's model. One warp per beam, one lane per cell of the beam's
// line (the seed paper's "block per beam, thread per cell", with warps so that short beams waste
// nothing); all scans of an insert go up in one transfer (cuda_grid_backend.h) and one launch.
// Updates are integer additions of the fixed-point increments, so the map is exact and independent of
// the order in which warps run, and the CPU reference gives the same bits.
//
// Near the laser every beam of a scan crosses the same few cells (at 0.025 m and 0.5 deg, beams are
// less than a cell apart for the first 2.9 m), so a naive update hammers those cells' global
// counters. For batches of scans one block takes one scan and first adds the updates that fall in a
// window of kWindow x kWindow cells around the laser in shared memory (32-bit, exact: the window of
// one scan cannot overflow, see window_is_safe), then flushes each touched window cell with a single
// global addition: about half the global atomics, and none of the contention.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_grid_backend.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/internal/launch_geometry.h"

namespace gridmap_cuda::detail {
namespace {

constexpr int kThreads = 256;        // beam-parallel kernel
constexpr int kScanThreads = 512;    // windowed kernel: one block per scan
constexpr int kWindow = 128;         // window side, cells
constexpr int kWindowCells = kWindow * kWindow;
constexpr std::size_t kWindowBytes = kWindowCells * (sizeof(int) + sizeof(std::uint8_t));

template <typename Cells>
struct KernelInputs {
  UploadedScans scans;
  EvidenceParams params;
  Cells cells;  // where each cell lives (cell_layout.h)
  unsigned long long* evidence;
  std::uint8_t* known;
};

template <typename Cells>
__device__ __forceinline__ void add_to_map(const KernelInputs<Cells>& in, int64_t index, int64_t increment) {
  // No result used: compiles to a fire-and-forget reduction (RED) in L2.
  atomicAdd(in.evidence + index, static_cast<unsigned long long>(increment));
  in.known[index] = 1;
}

// Any number of scans, every update straight to the global map: the right choice for a few scans
// (streaming), which could not fill the GPU one block per scan.
template <typename Cells>
__global__ void __launch_bounds__(kThreads) insert_beams_kernel(KernelInputs<Cells> in, int total_beams) {
  const int lane = threadIdx.x & 31;
  const int warps = (gridDim.x * kThreads) >> 5;
  const UploadedScans& batch = in.scans;
  Cells cells = in.cells;
  WarpTally tally;
  for (int beam = (blockIdx.x * kThreads + threadIdx.x) >> 5; beam < total_beams; beam += warps) {
    const ScanGeometry& scan = batch.scans[scan_of_beam(batch, beam)];
    for_each_beam_update(scan, beam - scan.first_beam, batch.ranges[beam], batch.beam_cos, batch.beam_sin, in.params,
                         lane, 32, [&](const CellUpdate& u) {
                           add_to_map(in, cells.index(u.x, u.y), u.increment);
                           tally.add(u.x, u.y);
                         });
  }
  tally.flush(batch.result);
}

// One block per scan, with the shared-memory window around the laser (see the top of the file).
template <typename Cells>
__global__ void __launch_bounds__(kScanThreads) insert_scans_windowed_kernel(KernelInputs<Cells> in) {
  extern __shared__ int4 window_storage[];
  int* sums = reinterpret_cast<int*>(window_storage);
  std::uint8_t* touched = reinterpret_cast<std::uint8_t*>(sums + kWindowCells);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  constexpr int kWarps = kScanThreads / 32;
  const UploadedScans& batch = in.scans;
  Cells cells = in.cells;
  WarpTally tally;
  for (int s = blockIdx.x; s < batch.num_scans; s += gridDim.x) {
    for (int k = threadIdx.x; k < static_cast<int>(kWindowBytes / sizeof(int4)); k += kScanThreads)
      window_storage[k] = make_int4(0, 0, 0, 0);
    __syncthreads();
    const ScanGeometry scan = batch.scans[s];
    const int window_x = scan.laser_cell_x - kWindow / 2, window_y = scan.laser_cell_y - kWindow / 2;
    for (int i = warp; i < scan.beams; i += kWarps)
      for_each_beam_update(scan, i, batch.ranges[scan.first_beam + i], batch.beam_cos, batch.beam_sin, in.params, lane,
                           32, [&](const CellUpdate& u) {
                             tally.add(u.x, u.y);
                             const unsigned wx = static_cast<unsigned>(u.x - window_x);
                             const unsigned wy = static_cast<unsigned>(u.y - window_y);
                             if (wx < kWindow && wy < kWindow) {
                               atomicAdd(sums + wy * kWindow + wx, u.increment);
                               touched[wy * kWindow + wx] = 1;
                             } else {
                               add_to_map(in, cells.index(u.x, u.y), u.increment);
                             }
                           });
    __syncthreads();
    for (int k = threadIdx.x; k < kWindowCells; k += kScanThreads) {
      if (!touched[k]) continue;  // only cells inside the grid were ever touched
      const int64_t index = cells.index(window_x + k % kWindow, window_y + k / kWindow);
      if (sums[k] != 0) atomicAdd(in.evidence + index, static_cast<unsigned long long>(static_cast<int64_t>(sums[k])));
      in.known[index] = 1;
    }
    __syncthreads();  // the window is cleared for the next scan
  }
  tally.flush(batch.result);
}

// The cells of each beam's update, for the request pass.
struct EvidenceBeamLine {
  EvidenceParams params;
  __device__ int operator()(const ScanGeometry& scan, int beam, float range, const double* beam_cos,
                            const double* beam_sin, BresenhamLine* line) const {
    return beam_update_prefix(scan, beam, range, beam_cos, beam_sin, params, line);
  }
};

// The 32-bit window sums are exact when no scan can push a cell past 2^31 - 1 units.
bool window_is_safe(const BeamBatch& batch, int64_t max_increment) {
  int max_beams = 0;
  for (const ScanGeometry& scan : batch.scans) max_beams = std::max(max_beams, scan.beams);
  return static_cast<int64_t>(max_beams) * max_increment < (int64_t{1} << 31);
}

class CudaEvidenceMapper final : public CudaGridBackend {
 public:
  CudaEvidenceMapper(const GridSpec& spec, const SensorModel& model, const std::vector<EvidenceEntry>& table,
                     int table_size)
      : CudaGridBackend(spec, model.usable_range, table.size() * sizeof(EvidenceEntry), 0),
        model_(model),
        table_size_(table_size),
        max_increment_(max_abs_increment(table.data(), table.size())) {
    allocate_or_throw(&table_, table.size() * sizeof(EvidenceEntry));
    // The window kernel's shared memory is above the default 48 KB; the opt-in is per device.
    LINALG_CUDA_CHECK(cudaFuncSetAttribute(insert_scans_windowed_kernel<DenseCells>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, kWindowBytes));
    LINALG_CUDA_CHECK(cudaFuncSetAttribute(insert_scans_windowed_kernel<TiledCells>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, kWindowBytes));
    if (!table.empty())
      LINALG_CUDA_CHECK(cudaMemcpyAsync(table_.data(), table.data(), table.size() * sizeof(EvidenceEntry),
                                        cudaMemcpyHostToDevice, linalg_cuda::thread_context().stream()));
  }

 private:

  void request_tiles(const UploadedScans& scans, const BeamBatch& batch, const TileRequest& request,
                     cudaStream_t stream) override {
    const EvidenceParams params = make_params(spec_, model_, table_size_, table_.as<EvidenceEntry>());
    launch_request(scans, batch, request, EvidenceBeamLine{params}, stream);
  }

  void launch(const UploadedScans& scans, const BeamBatch& batch, cudaStream_t stream) override {
    with_cells([&](auto cells) { launch_with(scans, batch, cells, stream); });
  }

  template <typename Cells>
  void launch_with(const UploadedScans& scans, const BeamBatch& batch, const Cells& cells, cudaStream_t stream) {
    KernelInputs<Cells> in;
    in.scans = scans;
    in.params = make_params(spec_, model_, table_size_, table_.as<EvidenceEntry>());
    in.cells = cells;
    in.evidence = reinterpret_cast<unsigned long long*>(evidence());
    in.known = known();
    const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
    if (scans.num_scans >= props.multiProcessorCount && window_is_safe(batch, max_increment_)) {
      int per_sm = 0;
      LINALG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, insert_scans_windowed_kernel<Cells>,
                                                                      kScanThreads, kWindowBytes));
      const int blocks = std::min(scans.num_scans, std::max(1, per_sm) * props.multiProcessorCount);
      insert_scans_windowed_kernel<Cells><<<blocks, kScanThreads, kWindowBytes, stream>>>(in);
    } else {
      // A warp per beam, at most a full device of resident blocks (the kernel loops over beams).
      const unsigned beam_blocks = linalg_cuda::detail::blocks_for(32 * std::size_t(batch.total_beams), kThreads);
      const unsigned blocks = std::min<unsigned>(linalg_cuda::detail::resident_blocks(props, kThreads), beam_blocks);
      insert_beams_kernel<Cells><<<blocks, kThreads, 0, stream>>>(in, batch.total_beams);
    }
    LINALG_CUDA_CHECK_LAUNCH();
  }

  SensorModel model_;
  int table_size_;
  int64_t max_increment_;
  linalg_cuda::DeviceBuffer table_;
};

}  // namespace

std::unique_ptr<MapperBackend> make_cuda_mapper(const GridSpec& spec, const SensorModel& model) {
  int table_size = 0;
  const std::vector<EvidenceEntry> table = build_evidence_table(model, spec.resolution, &table_size);
  return std::make_unique<CudaEvidenceMapper>(spec, model, table, table_size);
}

}  // namespace gridmap_cuda::detail
