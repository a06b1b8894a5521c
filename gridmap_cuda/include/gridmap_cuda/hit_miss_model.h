#pragma once
// The hit/miss sensor model ROS users know from Cartographer (ProbabilityGridRangeDataInserter2D):
//
// For each scan, the cell holding a reading's end point is a hit and the cells its beam crosses
// before it (the laser's cell included) are misses; a reading at or beyond max_range is "no return",
// and its beam marks misses along its first missing_data_ray_length metres only. A cell hit by one
// beam and crossed by another of the same scan is a hit, and each cell a scan touches is updated once:
// its odds are multiplied by odds(p_hit) or odds(p_miss) and its probability clamped to
// [p_min, p_max]. An unknown cell starts at probability 0.5, so its first hit sets it to p_hit.
//
// Cartographer stores probabilities as 15-bit values over [0.1, 0.9]; here they are log-odds in the
// same fixed point as CARMEN's model (OccupancyGrid::evidence, prior 0.5), so the CPU and GPU compute
// the same integers. The clamp makes the map depend on the order of the scans (as in Cartographer):
// a batch is applied scan after scan in its order.
#include "gridmap_cuda/laser_scan.h"

namespace gridmap_cuda {

struct HitMissModel {
  double p_hit = 0.55;
  double p_miss = 0.49;
  double p_min = 0.12;                    // cell probabilities are clamped to [p_min, p_max]
  double p_max = 0.97;
  double max_range = 30.0;                // m: readings at or beyond it are "no return"
  double missing_data_ray_length = 5.0;   // m of misses along a no-return beam (0: none)

  // Throws linalg_cuda::InvalidArgument when a probability is outside (0, 1), p_min > p_max, p_hit or
  // p_miss lies outside [p_min, p_max], or a length is negative or not finite.
  void validate() const;
};

}  // namespace gridmap_cuda
