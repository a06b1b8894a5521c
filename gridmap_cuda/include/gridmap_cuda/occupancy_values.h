#pragma once
// The 8-bit maps ROS tools load, as a GridMapper computes them where its map lives (on the GPU for the
// CUDA backend, downloaded at one byte per cell): nav_msgs/OccupancyGrid's values, and the changed
// region of one scan as nav_msgs/OccupancyGridUpdate carries it.
#include <cstdint>
#include <vector>

#include "gridmap_cuda/grid_spec.h"

namespace gridmap_cuda {

// A cell's value in nav_msgs/OccupancyGrid: -1 unknown, else the occupancy probability in percent,
// std::lround(100 p) (OccupancyGrid::occupancy_value is the host-side reference).
constexpr std::int8_t kUnknownOccupancy = -1;

// nav_msgs/OccupancyGrid's data: row by row, row 0 = the smallest y (the grid's own order).
struct OccupancyValues {
  GridSpec spec;
  std::vector<std::int8_t> data;
};

// What one insert changed, as nav_msgs/OccupancyGridUpdate carries it: the bounding box of every cell
// the scan updated (x, y: its lower-left cell, counted from the lower-left cell of the mapper's
// extent(); width = height = 0 when the scan updated none) and the box's values after the insert, row
// by row from its smallest y. An unbounded map's extent grows with new tiles: then extent_grew is set,
// and a ROS node publishes the whole OccupancyGrid (occupancy_values()) instead of the update.
struct MapUpdate {
  int x = 0, y = 0, width = 0, height = 0;
  bool extent_grew = false;
  std::vector<std::int8_t> data;

  bool empty() const { return width == 0 || height == 0; }
  bool contains(int cx, int cy) const { return cx >= x && cx < x + width && cy >= y && cy < y + height; }
};

}  // namespace gridmap_cuda
