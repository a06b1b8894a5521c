#pragma once
// Where the grid lies: cell (i, j) covers [origin_x + i res, origin_x + (i+1) res) x [origin_y + j res, ...).
// Cells are stored row by row, j = 0 (the smallest y) first.
//
// A spec of 0 x 0 cells (GridSpec::unbounded) has no extent: a GridMapper on it keeps 64 x 64-cell
// tiles, allocated as the beams first reach them, and its map grows as the robot moves (cells then
// have any sign, i and j within +-(2^30 - 128); laser poses within 2^29 cells of the origin).
#include <cstddef>
#include <type_traits>
#include <vector>

#include "gridmap_cuda/hit_miss_model.h"
#include "gridmap_cuda/laser_scan.h"
#include "gridmap_cuda/sensor_model.h"

namespace gridmap_cuda {

struct GridSpec {
  double resolution = 0.025;  // m per cell
  double origin_x = 0.0;      // world position of the lower-left corner of cell (0, 0)
  double origin_y = 0.0;
  int width = 0;              // cells along x
  int height = 0;             // cells along y

  // A map without an extent given in advance: cell (0, 0) still starts at the origin.
  static GridSpec unbounded(double resolution, double origin_x = 0.0, double origin_y = 0.0) {
    return GridSpec{resolution, origin_x, origin_y, 0, 0};
  }
  bool bounded() const { return width != 0 || height != 0; }
  std::size_t cells() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(height); }
  // Throws linalg_cuda::InvalidArgument for a non-positive or non-finite resolution, negative sizes or
  // one size zero (both zero is unbounded), or more than 2^40 cells. (Whether the grid fits in memory
  // is checked when a mapper allocates it.)
  void validate() const;
};

// The grid that holds everything the scans can update: the bounding box of the laser poses and of
// the beam end points (range + wall thickness, cut at the model's range_max, skipped beams left out),
// grown by `border` metres and snapped to whole cells.
GridSpec fit_grid(const std::vector<LaserScan>& scans, double resolution, const SensorModel& model = {},
                  double border = 1.0);
// The same for the hit/miss model: the end points of the returns and missing_data_ray_length along
// the no-return beams.
GridSpec fit_grid_hit_miss(const std::vector<LaserScan>& scans, double resolution, const HitMissModel& model,
                           double border = 1.0);
// fit_grid_hit_miss by the model's type (a template so that fit_grid(scans, r, {}, border) keeps
// meaning CARMEN's model).
template <typename Model, typename = std::enable_if_t<std::is_same_v<Model, HitMissModel>>>
GridSpec fit_grid(const std::vector<LaserScan>& scans, double resolution, const Model& model, double border = 1.0) {
  return fit_grid_hit_miss(scans, resolution, model, border);
}

}  // namespace gridmap_cuda
