#pragma once
// The implementations behind GridMapper: the CPU reference and the CUDA one, for each sensor model.
// All consume the same BeamBatch and keep the map as fixed-point log-odds + known mask, dense over a
// bounded spec or in tiles over an unbounded one (cell_layout.h).
#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include "beam_batch.h"
#include "value_codec.h"
#include "gridmap_cuda/grid_spec.h"
#include "gridmap_cuda/laser_scan.h"
#include "gridmap_cuda/occupancy_grid.h"

namespace gridmap_cuda::detail {

// Cells x0..x1 by y0..y1 (inclusive); empty while x1 < x0.
struct CellBox {
  int x0 = INT_MAX, y0 = INT_MAX, x1 = INT_MIN, y1 = INT_MIN;
  bool empty() const { return x1 < x0 || y1 < y0; }
  std::size_t cells() const { return empty() ? 0 : std::size_t(x1 - x0 + 1) * std::size_t(y1 - y0 + 1); }
};

struct InsertResult {
  std::uint64_t cell_updates = 0;
  std::uint64_t used_beams = 0;
  CellBox updated;  // the bounding box of the cells the insert updated
};

class MapperBackend {
 public:
  virtual ~MapperBackend() = default;
  virtual void reset() = 0;
  // Adds the evidence of every beam of `scans` (laser poses replaced by `poses` when not null), after
  // clearing the map when reset_first is set. Validates everything before the map is touched, so a
  // throw leaves the map as it was.
  virtual InsertResult insert(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                              bool reset_first) = 0;
  // The cells the map stores: the grid, or the tiles' span for a tiled map (empty without tiles).
  virtual CellBox extent() const = 0;
  // Cells held in memory: the grid's, or the tiles'.
  virtual std::size_t stored_cells() const = 0;
  // Copies the cells of extent() into grid->evidence and grid->known.
  virtual void read(OccupancyGrid* grid) const = 0;
  // The 8-bit values (value_codec.h) of the cells of `box` (inside extent()), computed where the map
  // is, into out (box.cells() bytes): rows from the box's smallest y, or from its largest if top_down.
  virtual void values(const ValueCodec& codec, ValueKind kind, const CellBox& box, bool top_down,
                      std::uint8_t* out) const = 0;
};

std::unique_ptr<MapperBackend> make_cpu_mapper(const GridSpec& spec, const SensorModel& model);
std::unique_ptr<MapperBackend> make_cuda_mapper(const GridSpec& spec, const SensorModel& model);
std::unique_ptr<MapperBackend> make_cpu_mapper(const GridSpec& spec, const HitMissModel& model);
std::unique_ptr<MapperBackend> make_cuda_mapper(const GridSpec& spec, const HitMissModel& model);

}  // namespace gridmap_cuda::detail
