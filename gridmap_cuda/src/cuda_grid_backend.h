#pragma once
// What the CUDA backends of both sensor models share: the map on the device (64-bit fixed-point
// log-odds and the known mask, dense or in a pool of tiles), the upload of an insert's scans in one
// copy, the allocation of its tiles, its counters, the download of the map and of its 8-bit values.
// A model's backend adds its kernels (launch, request_tiles).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "device_tiles.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/internal/launch_geometry.h"
#include "mapper_backend.h"

namespace gridmap_cuda::detail {

// What an insert's kernels count, in device memory: cell updates and the updated cells' box (min x,
// min y, max x, max y).
struct DeviceInsertResult {
  unsigned long long updates;
  int box[4];
};

// One insert's scans on the device, and where its kernels count.
struct UploadedScans {
  int num_scans = 0;
  const ScanGeometry* scans = nullptr;
  const float* ranges = nullptr;
  const double* beam_cos = nullptr;
  const double* beam_sin = nullptr;
  DeviceInsertResult* result = nullptr;
};

class CudaGridBackend : public MapperBackend {
 public:
  void reset() override;
  InsertResult insert(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses, bool reset_first) final;
  CellBox extent() const override;
  std::size_t stored_cells() const override;
  void read(OccupancyGrid* grid) const override;
  void values(const ValueCodec& codec, ValueKind kind, const CellBox& box, bool top_down,
              std::uint8_t* out) const override;

 protected:
  // Allocates a dense map after checking that it, `model_bytes` and `model_bytes_per_cell` a cell
  // (the model's own, allocated by the derived class with allocate_or_throw) fit in the device's free
  // memory; a tiled map starts empty. usable_range: readings at or beyond it are not used (the
  // statistics' used beams).
  CudaGridBackend(const GridSpec& spec, double usable_range, std::size_t model_bytes, std::size_t model_bytes_per_cell);

  // Reserves what the insert of `batch` needs beyond the map, before anything is changed (a throw
  // leaves the map as it was).
  virtual void reserve_for(const BeamBatch& batch) { (void)batch; }
  // Launches the insert's kernels on `stream`; `batch` is the host's copy of the scans' geometry.
  virtual void launch(const UploadedScans& in, const BeamBatch& batch, cudaStream_t stream) = 0;
  // A tiled map's request pass: launch_request with the model's lines (request.add for every tile
  // the insert updates a cell of).
  virtual void request_tiles(const UploadedScans& in, const BeamBatch& batch, const TileRequest& request,
                             cudaStream_t stream) = 0;
  // The pool has grown to `cells` cells (its new tiles' contents are set later): the model's arrays
  // kept per cell follow.
  virtual void cells_grown(std::size_t cells, cudaStream_t stream) { (void)cells, (void)stream; }

  // buffer.reserve(bytes), with the map's out-of-memory message if the device has no room.
  void allocate_or_throw(linalg_cuda::DeviceBuffer* buffer, std::size_t bytes) const;

  // Calls launch_with(cells) with the map's layout (cell_layout.h): DenseCells or TiledCells.
  template <typename LaunchWith>
  void with_cells(const LaunchWith& launch_with) const {
    if (tiles_) launch_with(TiledCells{tiles_->view()});
    else launch_with(DenseCells{spec_.width});
  }
  bool tiled() const { return tiles_ != nullptr; }
  // The cells the map's memory holds: the grid's, or the tile pool's capacity.
  std::size_t cell_capacity() const { return tiles_ ? pool_tiles_ * kTileCells : spec_.cells(); }

  long long* evidence() { return evidence_.as<long long>(); }
  std::uint8_t* known() { return known_.as<std::uint8_t>(); }

  const GridSpec spec_;

 private:
  // Runs the request pass and adds the tiles it lists, growing the pool first (a throw for want of
  // memory leaves the map as it was).
  void allocate_tiles(const UploadedScans& in, const BeamBatch& batch, cudaStream_t stream);
  void grow_pool(std::size_t tiles, cudaStream_t stream);
  std::string map_name() const;

  double usable_range_;
  std::size_t model_bytes_per_cell_;
  std::size_t needed_bytes_;  // the map's and the model's, for the out-of-memory message
  std::unique_ptr<DeviceTiles> tiles_;  // null for a dense map
  std::size_t pool_tiles_ = 0;          // the tile pool's capacity
  linalg_cuda::DeviceBuffer evidence_, known_, result_, inputs_;
  mutable linalg_cuda::DeviceBuffer values_, slots_;
  linalg_cuda::PinnedBuffer staging_, result_host_;
  mutable linalg_cuda::PinnedBuffer download_;
  mutable std::mutex download_mutex_;  // map() may be called from several threads
};

// The warp's share of an insert's count and box, merged into DeviceInsertResult by lane 0 (every lane
// of the warp calls it).
struct WarpTally {
  unsigned long long count = 0;
  int x0 = INT_MAX, y0 = INT_MAX, x1 = INT_MIN, y1 = INT_MIN;

#ifdef __CUDACC__
  __device__ void add(int x, int y) {
    ++count;
    x0 = min(x0, x);
    y0 = min(y0, y);
    x1 = max(x1, x);
    y1 = max(y1, y);
  }

  __device__ void flush(DeviceInsertResult* result) const {
    constexpr unsigned kAll = 0xffffffffu;
    unsigned long long total = count;
    for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_down_sync(kAll, total, offset);
    const int wx0 = __reduce_min_sync(kAll, x0), wy0 = __reduce_min_sync(kAll, y0);
    const int wx1 = __reduce_max_sync(kAll, x1), wy1 = __reduce_max_sync(kAll, y1);
    if ((threadIdx.x & 31) != 0) return;
    if (total) atomicAdd(&result->updates, total);
    if (wx1 >= wx0) {
      atomicMin(result->box, wx0);
      atomicMin(result->box + 1, wy0);
      atomicMax(result->box + 2, wx1);
      atomicMax(result->box + 3, wy1);
    }
  }
#endif
};

#ifdef __CUDACC__
// The scan of an insert that holds flat beam `beam`: the last one whose first beam is <= beam (empty
// scans share a first beam with their successor, and the search passes over them).
__device__ inline int scan_of_beam(const UploadedScans& in, int beam) {
  int lo = 0, hi = in.num_scans - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (in.scans[mid].first_beam <= beam) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// A tiled map's request pass, a thread per beam: line_of(scan, beam, range, beam_cos, beam_sin, &line)
// returns how many leading cells of the beam's line the model updates.
template <typename LineOf>
__global__ void __launch_bounds__(256) request_tiles_kernel(UploadedScans in, int total_beams, TileRequest request,
                                                            LineOf line_of) {
  unsigned long long last = kEmptyTileKey;
  const int threads = gridDim.x * blockDim.x;
  for (int beam = blockIdx.x * blockDim.x + threadIdx.x; beam < total_beams; beam += threads) {
    const ScanGeometry& scan = in.scans[scan_of_beam(in, beam)];
    BresenhamLine line(0, 0, 0, 0);
    const int count = line_of(scan, beam - scan.first_beam, in.ranges[beam], in.beam_cos, in.beam_sin, &line);
    for_each_tile_of_line(line, count, [&](int tx, int ty) { request.add(tx, ty, &last); });
  }
}

// Launches request_tiles_kernel over the batch's beams.
template <typename LineOf>
void launch_request(const UploadedScans& in, const BeamBatch& batch, const TileRequest& request,
                    const LineOf& line_of, cudaStream_t stream) {
  const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
  const unsigned blocks = std::min<unsigned>(linalg_cuda::detail::resident_blocks(props, 256),
                                             linalg_cuda::detail::blocks_for(std::size_t(batch.total_beams), 256));
  request_tiles_kernel<<<blocks, 256, 0, stream>>>(in, batch.total_beams, request, line_of);
  LINALG_CUDA_CHECK_LAUNCH();
}
#endif

}  // namespace gridmap_cuda::detail
