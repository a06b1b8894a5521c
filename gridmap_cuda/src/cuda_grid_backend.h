#pragma once
// What the CUDA backends of both sensor models share: the dense map on the device (64-bit fixed-point
// log-odds and the known mask), the upload of an insert's scans in one copy, its counters, the
// download of the map and of its 8-bit values. A model's backend adds its kernels (launch).
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "linalg_cuda/device_buffer.h"
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
  void read(OccupancyGrid* grid) const override;
  void values(const ValueCodec& codec, ValueKind kind, const CellBox& box, bool top_down,
              std::uint8_t* out) const override;

 protected:
  // Allocates the map after checking that it and `extra_bytes` (the model's own, allocated by the
  // derived class with allocate_or_throw) fit in the device's free memory. usable_range: readings at
  // or beyond it are not used (the statistics' used beams).
  CudaGridBackend(const GridSpec& spec, double usable_range, std::size_t extra_bytes);

  // Reserves what the insert of `batch` needs beyond the map, before anything is changed (a throw
  // leaves the map as it was).
  virtual void reserve_for(const BeamBatch& batch) { (void)batch; }
  // Launches the insert's kernels on `stream`; `batch` is the host's copy of the scans' geometry.
  virtual void launch(const UploadedScans& in, const BeamBatch& batch, cudaStream_t stream) = 0;

  // buffer.reserve(bytes), with the grid's out-of-memory message if the device has no room.
  void allocate_or_throw(linalg_cuda::DeviceBuffer* buffer, std::size_t bytes) const;

  long long* evidence() { return evidence_.as<long long>(); }
  std::uint8_t* known() { return known_.as<std::uint8_t>(); }

  const GridSpec spec_;

 private:
  double usable_range_;
  std::size_t needed_bytes_;  // the map's and the model's, for the out-of-memory message
  linalg_cuda::DeviceBuffer evidence_, known_, result_, inputs_;
  mutable linalg_cuda::DeviceBuffer values_;
  linalg_cuda::PinnedBuffer staging_, result_host_;
  mutable linalg_cuda::PinnedBuffer download_;
  mutable std::mutex download_mutex_;  // map() may be called from several threads
};

// The warp's share of an insert's count and box, merged into DeviceInsertResult by lane 0 (every lane
// of the warp calls it).
struct WarpTally {
  unsigned long long count = 0;
  int x0 = 2147483647, y0 = 2147483647, x1 = -1, y1 = -1;

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
    if (wx1 >= 0) {
      atomicMin(result->box, wx0);
      atomicMin(result->box + 1, wy0);
      atomicMax(result->box + 2, wx1);
      atomicMax(result->box + 3, wy1);
    }
  }
#endif
};

}  // namespace gridmap_cuda::detail
