#pragma once
// The two implementations behind GridMapper: the CPU reference and the CUDA one. Both consume the
// same BeamBatch and evidence table, and both keep the map as fixed-point evidence + known mask.
#include <cstdint>
#include <memory>
#include <vector>

#include "beam_batch.h"
#include "gridmap_cuda/grid_spec.h"
#include "gridmap_cuda/laser_scan.h"
#include "gridmap_cuda/occupancy_grid.h"

namespace gridmap_cuda::detail {

struct InsertResult {
  std::uint64_t cell_updates = 0;
  std::uint64_t used_beams = 0;
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
  // Copies the map into grid->evidence and grid->known (sized by the caller's spec).
  virtual void read(OccupancyGrid* grid) const = 0;
};

std::unique_ptr<MapperBackend> make_cpu_mapper(const GridSpec& spec, const SensorModel& model);
std::unique_ptr<MapperBackend> make_cuda_mapper(const GridSpec& spec, const SensorModel& model);

}  // namespace gridmap_cuda::detail
