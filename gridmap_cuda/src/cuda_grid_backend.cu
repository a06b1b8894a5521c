// CudaGridBackend: the device map both sensor models' CUDA backends keep, its uploads and downloads.
#include "cuda_grid_backend.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>

#include "linalg_cuda/backend.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"
#include "linalg_cuda/memory_cache.h"

namespace gridmap_cuda::detail {
namespace {

constexpr int kThreads = 256;

std::size_t round_up(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

// The 8-bit values of a box of cells (value_codec.h), a thread per output byte.
__global__ void __launch_bounds__(kThreads) values_kernel(const long long* __restrict__ evidence,
                                                          const std::uint8_t* __restrict__ known, ValueCodec codec,
                                                          ValueKind kind, CellBox box, bool top_down, int grid_width,
                                                          std::uint8_t* __restrict__ out, std::int64_t n) {
  const int w = box.x1 - box.x0 + 1, h = box.y1 - box.y0 + 1;
  const std::int64_t stride = std::int64_t(gridDim.x) * kThreads;
  for (std::int64_t k = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; k < n; k += stride) {
    const std::int64_t cell = box_cell_index(box.x0, box.y0, w, h, top_down, grid_width, k);
    out[k] = cell_value(kind, evidence[cell], known[cell] != 0, codec);
  }
}

// The 8-bit values of whole tiles (slots[t]'s cells into out[t * kTileCells ...]), a thread per byte.
__global__ void __launch_bounds__(kThreads) tile_values_kernel(const long long* __restrict__ evidence,
                                                               const std::uint8_t* __restrict__ known,
                                                               const int* __restrict__ slots, ValueCodec codec,
                                                               ValueKind kind, std::uint8_t* __restrict__ out,
                                                               std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * kThreads;
  for (std::int64_t k = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; k < n; k += stride) {
    const std::int64_t cell = std::int64_t(slots[k / kTileCells]) * kTileCells + k % kTileCells;
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

}  // namespace

CudaGridBackend::CudaGridBackend(const GridSpec& spec, double usable_range, std::size_t model_bytes,
                                 std::size_t model_bytes_per_cell)
    : spec_(spec), usable_range_(usable_range), model_bytes_per_cell_(model_bytes_per_cell) {
  needed_bytes_ = spec.cells() * (sizeof(std::int64_t) + sizeof(std::uint8_t) + model_bytes_per_cell) + model_bytes;
  if (needed_bytes_ > linalg_cuda::free_device_memory())
    linalg_cuda::detail::throw_device_memory_error(map_name(), needed_bytes_);
  if (!spec.bounded()) tiles_ = std::make_unique<DeviceTiles>();  // the pool grows with the first insert
  allocate_or_throw(&evidence_, spec.cells() * sizeof(std::int64_t));
  allocate_or_throw(&known_, spec.cells());
  result_.reserve(sizeof(DeviceInsertResult));
  result_host_.reserve(sizeof(DeviceInsertResult));
  reset();
}

std::string CudaGridBackend::map_name() const {
  if (!spec_.bounded()) return "tiled map of " + std::to_string(tiles_ ? tiles_->index().tiles() : 0) + " tiles";
  return "grid of " + std::to_string(spec_.width) + " x " + std::to_string(spec_.height) + " cells";
}

void CudaGridBackend::allocate_or_throw(linalg_cuda::DeviceBuffer* buffer, std::size_t bytes) const {
  try {  // the free-memory check can race with other users of the device
    buffer->reserve(std::max<std::size_t>(bytes, 1));
  } catch (const linalg_cuda::DeviceMemoryError&) {
    linalg_cuda::detail::throw_device_memory_error(map_name(), needed_bytes_);
  }
}

void CudaGridBackend::reset() {
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  if (tiles_) {
    tiles_->clear(stream);  // new tiles' cells are cleared as they are added
  } else {
    LINALG_CUDA_CHECK(cudaMemsetAsync(evidence_.data(), 0, spec_.cells() * sizeof(std::int64_t), stream));
    LINALG_CUDA_CHECK(cudaMemsetAsync(known_.data(), 0, spec_.cells(), stream));
  }
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

CellBox CudaGridBackend::extent() const {
  return tiles_ ? tiles_->index().box() : CellBox{0, 0, spec_.width - 1, spec_.height - 1};
}

std::size_t CudaGridBackend::stored_cells() const {
  return tiles_ ? static_cast<std::size_t>(tiles_->index().tiles()) * kTileCells : spec_.cells();
}

void CudaGridBackend::grow_pool(std::size_t tiles, cudaStream_t stream) {
  if (tiles <= pool_tiles_) return;
  const std::size_t cell_bytes = sizeof(std::int64_t) + sizeof(std::uint8_t) + model_bytes_per_cell_;
  const std::size_t used_cells = static_cast<std::size_t>(tiles_->index().tiles()) * kTileCells;
  // Twice the pool when that fits next to the old one (which is copied, then freed), else just enough.
  std::size_t free_bytes = linalg_cuda::free_device_memory();
  if (tiles * kTileCells * cell_bytes > free_bytes) {  // blocks the memory cache keeps idle count too
    linalg_cuda::release_cached_memory();
    free_bytes = linalg_cuda::free_device_memory();
  }
  std::size_t capacity = std::max<std::size_t>({tiles, 2 * pool_tiles_, 16});
  if (capacity * kTileCells * cell_bytes > free_bytes) capacity = tiles;
  needed_bytes_ = capacity * kTileCells * cell_bytes;
  if (needed_bytes_ > free_bytes)
    linalg_cuda::detail::throw_device_memory_error(map_name() + " growing to " + std::to_string(tiles) + " tiles",
                                                   needed_bytes_);
  linalg_cuda::DeviceBuffer evidence, known;
  allocate_or_throw(&evidence, capacity * kTileCells * sizeof(std::int64_t));
  allocate_or_throw(&known, capacity * kTileCells);
  // The model's arrays first: if they throw, the pool is as it was (and theirs at least as large).
  cells_grown(capacity * kTileCells, stream);
  if (used_cells > 0) {
    LINALG_CUDA_CHECK(cudaMemcpyAsync(evidence.data(), evidence_.data(), used_cells * sizeof(std::int64_t),
                                      cudaMemcpyDeviceToDevice, stream));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(known.data(), known_.data(), used_cells, cudaMemcpyDeviceToDevice, stream));
  }
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  evidence_ = std::move(evidence);
  known_ = std::move(known);
  pool_tiles_ = capacity;
}

void CudaGridBackend::allocate_tiles(const UploadedScans& in, const BeamBatch& batch, cudaStream_t stream) {
  for (;;) {
    const TileRequest request = tiles_->begin_request(stream);
    request_tiles(in, batch, request, stream);
    if (tiles_->finish_request(stream)) break;
  }
  const std::vector<unsigned long long> keys = tiles_->requested(stream);
  if (keys.empty()) return;
  const std::size_t first = static_cast<std::size_t>(tiles_->index().tiles());
  grow_pool(first + keys.size(), stream);
  tiles_->add(keys, stream);
  const std::size_t begin = first * kTileCells, cells = keys.size() * kTileCells;
  LINALG_CUDA_CHECK(cudaMemsetAsync(evidence() + begin, 0, cells * sizeof(std::int64_t), stream));
  LINALG_CUDA_CHECK(cudaMemsetAsync(known() + begin, 0, cells, stream));
}

InsertResult CudaGridBackend::insert(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                                     bool reset_first) {
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
  const BeamBatch batch = prepare_beams(scans, poses, spec_, usable_range_, staging_.as<float>());
  reserve_for(batch);
  // A rebuild of a tiled map clears its table only (the pool's cells are cleared as tiles are added),
  // so the old tiles come back if the new ones find no room.
  std::optional<TileIndex> before_reset;
  if (reset_first && tiles_) before_reset = tiles_->index();
  if (reset_first) reset();
  InsertResult result;
  if (batch.total_beams == 0) return result;
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
  DeviceInsertResult* counted = result_host_.as<DeviceInsertResult>();
  *counted = DeviceInsertResult{0, {INT_MAX, INT_MAX, INT_MIN, INT_MIN}};
  LINALG_CUDA_CHECK(cudaMemcpyAsync(result_.data(), counted, sizeof *counted, cudaMemcpyHostToDevice, stream));

  const unsigned char* device = inputs_.as<unsigned char>();
  UploadedScans in;
  in.num_scans = static_cast<int>(batch.scans.size());
  in.ranges = reinterpret_cast<const float*>(device);
  in.scans = reinterpret_cast<const ScanGeometry*>(device + range_bytes);
  in.beam_cos = reinterpret_cast<const double*>(device + range_bytes + scan_bytes);
  in.beam_sin = reinterpret_cast<const double*>(device + range_bytes + scan_bytes + direction_bytes);
  in.result = result_.as<DeviceInsertResult>();
  if (tiles_) {
    try {
      allocate_tiles(in, batch, stream);
    } catch (const linalg_cuda::DeviceMemoryError&) {
      if (before_reset) tiles_->restore(std::move(*before_reset), stream);
      throw;
    }
  }
  launch(in, batch, stream);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(counted, result_.data(), sizeof *counted, cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  result.cell_updates = counted->updates;
  result.used_beams = batch.used_beams;
  result.updated = {counted->box[0], counted->box[1], counted->box[2], counted->box[3]};
  return result;
}

void CudaGridBackend::read(OccupancyGrid* grid) const {
  std::lock_guard<std::mutex> lock(download_mutex_);
  // Through pinned memory (several times faster than a pageable download), then into the grid's
  // vectors on all cores.
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  const std::size_t cells = stored_cells(), evidence_bytes = cells * sizeof(std::int64_t);
  download_.reserve(evidence_bytes + cells);
  LINALG_CUDA_CHECK(
      cudaMemcpyAsync(download_.data(), evidence_.data(), evidence_bytes, cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(download_.as<unsigned char>() + evidence_bytes, known_.data(), cells,
                                    cudaMemcpyDeviceToHost, stream));
  if (tiles_) {  // the tiles into the extent's rows
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    scatter_tile_cells(tiles_->index(), download_.as<std::int64_t>(), download_.as<std::uint8_t>() + evidence_bytes,
                       extent(), grid);
    return;
  }
  grid->evidence.resize(cells);
  grid->known.resize(cells);
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  copy_on_all_cores(download_.as<std::int64_t>(), cells, grid->evidence.data());
  copy_on_all_cores(download_.as<std::uint8_t>() + evidence_bytes, cells, grid->known.data());
}

void CudaGridBackend::values(const ValueCodec& codec, ValueKind kind, const CellBox& box, bool top_down,
                             std::uint8_t* out) const {
  std::lock_guard<std::mutex> lock(download_mutex_);
  if (box.empty()) return;
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
  if (tiles_) {  // the overlapping tiles' values, one byte per stored cell, then copied into the box
    const std::vector<int> slots = tiles_->index().overlapping(box);
    const std::size_t n = slots.size() * kTileCells;
    if (n > 0) {
      slots_.reserve(slots.size() * sizeof(int));
      LINALG_CUDA_CHECK(cudaMemcpyAsync(slots_.data(), slots.data(), slots.size() * sizeof(int), cudaMemcpyHostToDevice,
                                        stream));
      values_.reserve(n);
      const unsigned blocks = std::min<unsigned>(linalg_cuda::detail::resident_blocks(props, kThreads),
                                                 linalg_cuda::detail::blocks_for(n, kThreads));
      tile_values_kernel<<<blocks, kThreads, 0, stream>>>(evidence_.as<long long>(), known_.as<std::uint8_t>(),
                                                          slots_.as<int>(), codec, kind, values_.as<std::uint8_t>(),
                                                          static_cast<std::int64_t>(n));
      LINALG_CUDA_CHECK_LAUNCH();
      download_.reserve(n);
      LINALG_CUDA_CHECK(cudaMemcpyAsync(download_.data(), values_.data(), n, cudaMemcpyDeviceToHost, stream));
      LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    scatter_tile_bytes(tiles_->index(), slots, download_.as<std::uint8_t>(), box, top_down,
                       cell_value(kind, 0, false, codec), out);
    return;
  }
  const std::size_t n = box.cells();
  values_.reserve(n);
  const unsigned blocks = std::min<unsigned>(linalg_cuda::detail::resident_blocks(props, kThreads),
                                             linalg_cuda::detail::blocks_for(n, kThreads));
  values_kernel<<<blocks, kThreads, 0, stream>>>(evidence_.as<long long>(), known_.as<std::uint8_t>(), codec, kind, box,
                                                 top_down, spec_.width, values_.as<std::uint8_t>(),
                                                 static_cast<std::int64_t>(n));
  LINALG_CUDA_CHECK_LAUNCH();
  download_.reserve(n);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(download_.data(), values_.data(), n, cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  copy_on_all_cores(download_.as<std::uint8_t>(), n, out);
}

}  // namespace gridmap_cuda::detail
