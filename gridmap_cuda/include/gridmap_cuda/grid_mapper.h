#pragma once
// GridMapper: occupancy grid mapping with known poses (CARMEN's evidence grid) on the GPU or the CPU.
//
//   gridmap_cuda::GridSpec spec = gridmap_cuda::fit_grid(scans, 0.025);
//   gridmap_cuda::GridMapper mapper(spec);            // SensorModel defaults, Backend::Auto
//   mapper.insert(scans);                             // the whole log: one upload, one launch
//   gridmap_cuda::save_ros_map(mapper, "map");        // map.pgm + map.yaml for map_server
//
// A ROS node streams instead: each insert_with_update(scan) returns the region the scan changed with
// its nav_msgs values (an OccupancyGridUpdate), and occupancy_values() the whole OccupancyGrid's.
//
// On GridSpec::unbounded(resolution) no extent is needed: the map is kept in 64 x 64-cell tiles,
// allocated (on the GPU for the CUDA backend) when a beam first reaches them, and extent() grows with
// them. Unknown tiles are neither stored nor copied; the cells equal a dense map's bit for bit.
//
// After a loop closure, rebuild(scans, corrected_poses) makes the map anew from the same scans.
// With CARMEN's model the map is a sum of per-beam log-odds terms in fixed point, so it does not depend
// on the order of the scans or beams; with the hit/miss model (hit_miss_model.h) the scans apply in
// their order. Either way the CUDA and CPU backends give bit-identical maps.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "gridmap_cuda/grid_spec.h"
#include "gridmap_cuda/hit_miss_model.h"
#include "gridmap_cuda/laser_scan.h"
#include "gridmap_cuda/map_io.h"
#include "gridmap_cuda/occupancy_grid.h"
#include "gridmap_cuda/occupancy_values.h"
#include "gridmap_cuda/sensor_model.h"
#include "linalg_cuda/backend.h"

namespace gridmap_cuda {

using linalg_cuda::Backend;

struct MapperStats {
  std::uint64_t scans = 0;
  std::uint64_t beams = 0;         // all readings inserted
  std::uint64_t used_beams = 0;    // readings below the usable range (the others are "no return")
  std::uint64_t cell_updates = 0;  // (beam, cell) updates made
};

namespace detail {
class MapperBackend;
struct ValueCodec;
}

class GridMapper {
 public:
  // Throws linalg_cuda::InvalidArgument for an invalid spec or model, or a grid that does not fit in
  // the chosen device's memory (nothing stays allocated); Backend::Cuda without a device throws.
  explicit GridMapper(const GridSpec& spec, const SensorModel& model = {}, Backend backend = Backend::Auto);
  // A mapper with the hit/miss model (hit_miss_model.h) instead of CARMEN's. Its scans are applied in
  // their order, so rebuild() and a batch insert equal inserting the scans one by one in that order.
  // (A template only so that GridMapper(spec, {}) keeps meaning CARMEN's model: a braced list deduces
  // no type.)
  template <typename Model, typename = std::enable_if_t<std::is_same_v<Model, HitMissModel>>>
  GridMapper(const GridSpec& spec, const Model& model, Backend backend = Backend::Auto)
      : GridMapper(spec, model, backend, HitMissChoice{}) {}
  ~GridMapper();
  GridMapper(GridMapper&&) noexcept;
  GridMapper& operator=(GridMapper&&) noexcept;

  // Streaming: one scan as it arrives.
  void insert(const LaserScan& scan);
  // The same, returning the bounding box of the cells the scan updated and the box's nav_msgs values
  // after it (computed where the map is; the box's bytes are all that is copied from the GPU).
  MapUpdate insert_with_update(const LaserScan& scan);
  // A whole log (or any batch) in one transfer and one launch.
  void insert(const std::vector<LaserScan>& scans);
  // Loop closure: clears the map and inserts `scans` with their laser poses replaced by `new_poses`
  // (a throw for invalid input leaves the previous map and statistics as they were).
  void rebuild(const std::vector<LaserScan>& scans, const std::vector<Pose2D>& new_poses);
  // Unknown again everywhere; the statistics restart.
  void reset();

  // The whole map (its extent()) as log-odds evidence and known flags, copied to the host: 9 bytes a
  // stored cell. Throws linalg_cuda::InvalidArgument when the extent would not fit in host memory.
  OccupancyGrid map() const;
  // nav_msgs/OccupancyGrid's values of every cell, computed where the map is (on the GPU for the CUDA
  // backend) and copied at one byte a cell; equal to map().occupancy_values().
  OccupancyValues occupancy_values() const;
  // The same into `values`, reusing its memory (a node that publishes the map again and again).
  void occupancy_values(OccupancyValues* values) const;
  // map_server's trinary image (0 occupied, 254 free, 205 unknown; the first row is the largest y),
  // computed where the map is and copied at one byte a cell; save_ros_map(mapper, ...) writes it.
  std::vector<std::uint8_t> ros_image(const RosMapOptions& options = {}) const;
  const GridSpec& spec() const { return spec_; }
  // The cells the map covers: spec() for a bounded spec; for an unbounded one the span of its tiles
  // (0 x 0 before the first), in the same cells as spec() (cell (i, j) of the extent is cell
  // (i + x0, j + y0) of spec(), x0 and y0 multiples of 64).
  GridSpec extent() const;
  // Cells the map stores: the grid's, or 4096 per tile in use. (The GPU's pool of tiles grows by
  // doubling and keeps its memory after reset(), so it may hold up to twice as many.)
  std::size_t stored_cells() const;
  // CARMEN's model (a hit/miss mapper holds the default one and does not use it).
  const SensorModel& model() const { return model_; }
  // The hit/miss model, or null for a CARMEN mapper.
  const HitMissModel* hit_miss_model() const { return hit_miss_ ? &*hit_miss_ : nullptr; }
  Backend backend() const { return backend_; }
  const MapperStats& stats() const { return stats_; }

 private:
  struct HitMissChoice {};
  GridMapper(const GridSpec& spec, const HitMissModel& model, Backend backend, HitMissChoice);
  // Returns the box of the cells the batch updated (cell coordinates, inclusive; x1 < x0 for none).
  std::array<int, 4> insert_batch(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                                  bool reset_first);
  double prior_log_odds() const;
  GridSpec spec_;
  SensorModel model_;
  std::optional<HitMissModel> hit_miss_;
  Backend backend_;
  MapperStats stats_;
  std::unique_ptr<detail::MapperBackend> impl_;
  // The nav_msgs values' thresholds, found once (bisections of the host's conversion) for the updates.
  std::unique_ptr<const detail::ValueCodec> percent_codec_;
};

}  // namespace gridmap_cuda
