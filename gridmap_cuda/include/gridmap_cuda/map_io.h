#pragma once
// Writing maps for people and for ROS tools.
#include <string>

#include "gridmap_cuda/occupancy_grid.h"

namespace gridmap_cuda {

class GridMapper;

struct RosMapOptions {
  double occupied_thresh = 0.65;  // p > this: occupied (0)
  double free_thresh = 0.196;     // p < this: free (254); known cells in between and unknown: 205
};

// ROS map_server format: PREFIX.pgm (P5, 8 bit, rows top-down: the first row is the largest y;
// occupied 0, free 254, unknown 205) and PREFIX.yaml (image, resolution, origin [x, y, 0.0], negate 0,
// occupied_thresh, free_thresh, mode trinary). Throws linalg_cuda::Error if a file cannot be written.
void save_ros_map(const OccupancyGrid& grid, const std::string& prefix, const RosMapOptions& options = {});
// The same files from a mapper's map, its image computed where the map is (GridMapper::ros_image):
// one byte a cell leaves the GPU.
void save_ros_map(const GridMapper& mapper, const std::string& prefix, const RosMapOptions& options = {});

// A PNG for looking at: grey level 255 * (1 - p) for known cells (white free, black occupied), unknown
// cells in light blue-grey, top row = largest y. Throws linalg_cuda::Error if it cannot be written.
void save_png(const OccupancyGrid& grid, const std::string& path);
// The picture of a mapper's map from its nav_msgs values (GridMapper::occupancy_values: one byte a
// cell leaves the GPU), as a palette PNG: grey 255 * (1 - v / 100) for value v, the same light
// blue-grey for unknown cells.
void save_png(const GridMapper& mapper, const std::string& path);

}  // namespace gridmap_cuda
