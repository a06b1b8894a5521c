#pragma once
// gridmap_build's and gridmap_replay's --model: CARMEN's evidence grid or the hit/miss model.
#include <string>
#include <vector>

#include "gridmap_cuda/gridmap_cuda.h"
#include "linalg_cuda/errors.h"

namespace examples {

// --model's value: false for "carmen", true for "hit-miss".
inline bool parse_map_model(const std::string& value) {
  if (value == "carmen") return false;
  if (value == "hit-miss") return true;
  throw linalg_cuda::InvalidArgument("--model: '" + value + "' is neither carmen nor hit-miss");
}

inline gridmap_cuda::GridSpec fit_grid_for(bool hit_miss, const std::vector<gridmap_cuda::LaserScan>& scans,
                                           double resolution, double border) {
  return hit_miss ? gridmap_cuda::fit_grid(scans, resolution, gridmap_cuda::HitMissModel{}, border)
                  : gridmap_cuda::fit_grid(scans, resolution, gridmap_cuda::SensorModel{}, border);
}

inline gridmap_cuda::GridMapper make_mapper(bool hit_miss, const gridmap_cuda::GridSpec& spec,
                                            gridmap_cuda::Backend backend) {
  return hit_miss ? gridmap_cuda::GridMapper(spec, gridmap_cuda::HitMissModel{}, backend)
                  : gridmap_cuda::GridMapper(spec, gridmap_cuda::SensorModel{}, backend);
}

}  // namespace examples
