#pragma once
// A simulated robot in a generated floor plan: the demo's input when no log is given, and test data
// of any size with exactly known poses.
#include <cstdint>
#include <vector>

#include "gridmap_cuda/laser_scan.h"

namespace gridmap_cuda {

struct Segment {
  double x0, y0, x1, y1;
};

struct SyntheticLogOptions {
  int rooms_x = 4;                 // rooms along x and y of a rectangular floor plan
  int rooms_y = 3;
  double room_size = 6.0;          // m
  double door_width = 1.2;         // m, one door in every inner wall
  int obstacles_per_room = 2;      // free-standing boxes
  int scans = 1000;                // scans along the trajectory
  int beams = 361;                 // over 180 degrees, like a SICK LMS
  double max_range = 80.0;         // "no return" reading (beyond every wall, or through a door into nothing)
  double range_noise = 0.01;       // standard deviation, m
  std::uint32_t seed = 1;
};

struct SyntheticLog {
  std::vector<Segment> walls;      // the floor plan (ground truth)
  std::vector<LaserScan> scans;    // ROBOTLASER-like scans with exact laser poses
};

// Builds the floor plan, drives a robot through every room (a closed tour through the doors), and
// casts every beam against the walls. Deterministic for a given seed.
SyntheticLog make_synthetic_log(const SyntheticLogOptions& options = {});

}  // namespace gridmap_cuda
