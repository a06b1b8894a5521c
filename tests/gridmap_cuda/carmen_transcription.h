#pragma once
// A direct transcription of CARMEN's code, for the tests only: the Bresenham walk of global.c
// (carmen_get_bresenham_parameters / carmen_get_current_point / carmen_get_next_point) and the
// per-beam loop of vasco's egrid.c (odds products on probabilities, distance table, breaks). The
// library's closed-form line and fixed-point log-odds must reproduce these.
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "gridmap_cuda/grid_spec.h"
#include "gridmap_cuda/laser_scan.h"
#include "gridmap_cuda/sensor_model.h"

namespace carmen {

struct BresenhamParams {
  int X1, Y1, X2, Y2, Increment, UsingYIndex, DeltaX, DeltaY, DTerm, IncrE, IncrNE, XIndex, YIndex, Flipped;
};

inline void get_bresenham_parameters(int p1x, int p1y, int p2x, int p2y, BresenhamParams* params) {
  params->UsingYIndex = 0;
  if (std::fabs(static_cast<double>(p2y - p1y) / static_cast<double>(p2x - p1x)) > 1) (params->UsingYIndex)++;
  if (params->UsingYIndex) {
    params->Y1 = p1x; params->X1 = p1y; params->Y2 = p2x; params->X2 = p2y;
  } else {
    params->X1 = p1x; params->Y1 = p1y; params->X2 = p2x; params->Y2 = p2y;
  }
  if ((p2x - p1x) * (p2y - p1y) < 0) {
    params->Flipped = 1;
    params->Y1 = -params->Y1;
    params->Y2 = -params->Y2;
  } else {
    params->Flipped = 0;
  }
  params->Increment = params->X2 > params->X1 ? 1 : -1;
  params->DeltaX = params->X2 - params->X1;
  params->DeltaY = params->Y2 - params->Y1;
  params->IncrE = 2 * params->DeltaY * params->Increment;
  params->IncrNE = 2 * (params->DeltaY - params->DeltaX) * params->Increment;
  params->DTerm = (2 * params->DeltaY - params->DeltaX) * params->Increment;
  params->XIndex = params->X1;
  params->YIndex = params->Y1;
}

inline void get_current_point(const BresenhamParams* params, int* x, int* y) {
  if (params->UsingYIndex) {
    *y = params->XIndex;
    *x = params->YIndex;
    if (params->Flipped) *x = -*x;
  } else {
    *x = params->XIndex;
    *y = params->YIndex;
    if (params->Flipped) *y = -*y;
  }
}

inline int get_next_point(BresenhamParams* params) {
  if (params->XIndex == params->X2) return 0;
  params->XIndex += params->Increment;
  if (params->DTerm < 0 || (params->Increment < 0 && params->DTerm <= 0)) {
    params->DTerm += params->IncrE;
  } else {
    params->DTerm += params->IncrNE;
    params->YIndex += params->Increment;
  }
  return 1;
}

inline std::vector<std::pair<int, int>> line_cells(int x1, int y1, int x2, int y2) {
  BresenhamParams b;
  get_bresenham_parameters(x1, y1, x2, y2, &b);
  std::vector<std::pair<int, int>> cells;
  do {
    int x, y;
    get_current_point(&b, &x, &y);
    cells.emplace_back(x, y);
  } while (get_next_point(&b));
  return cells;
}

// egrid.c's grid: prob = -1 (unknown) or an occupancy probability, indexed [x][y] -> here y * width + x.
struct EvidenceGrid {
  gridmap_cuda::GridSpec spec;
  std::vector<double> prob;
  explicit EvidenceGrid(const gridmap_cuda::GridSpec& s) : spec(s), prob(s.cells(), -1.0) {}
};

// carmen_mapper_update_evidence_grid for one scan, with the laser position in this project's cell
// convention ((x - origin) / resolution) and beam angle start + i * step.
inline void update_grid(EvidenceGrid* grid, const gridmap_cuda::LaserScan& scan, const gridmap_cuda::SensorModel& m) {
  const double resolution = grid->spec.resolution;
  const int distance_table_size = static_cast<int>(m.range_max / resolution);
  const double laser_x = (scan.laser_pose.x - grid->spec.origin_x) / resolution;
  const double laser_y = (scan.laser_pose.y - grid->spec.origin_y) / resolution;
  const int x1int = static_cast<int>(std::floor(laser_x));
  const int y1int = static_cast<int>(std::floor(laser_y));
  for (std::size_t i = 0; i < scan.ranges.size(); ++i) {
    const double theta = scan.laser_pose.theta + scan.start_angle + static_cast<double>(i) * scan.angular_resolution;
    const float range = scan.ranges[i];
    if (!(range < m.usable_range)) continue;  // LASER_RANGE_LIMIT
    const int x2int = static_cast<int>(laser_x + (range + m.wall_thickness) * std::cos(theta) / resolution);
    const int y2int = static_cast<int>(laser_y + (range + m.wall_thickness) * std::sin(theta) / resolution);
    BresenhamParams b;
    get_bresenham_parameters(x1int, y1int, x2int, y2int, &b);
    do {
      int current_x, current_y;
      get_current_point(&b, &current_x, &current_y);
      if (current_x >= 0 && current_x < grid->spec.width && current_y >= 0 && current_y < grid->spec.height) {
        const int x_diff = std::abs(current_x - x1int);
        const int y_diff = std::abs(current_y - y1int);
        double d;
        if (x_diff >= distance_table_size || y_diff >= distance_table_size) d = 1e6;
        else d = std::sqrt(static_cast<double>(x_diff * x_diff + y_diff * y_diff)) * resolution;
        double p_filled;
        if (d < range) {
          if (d < m.range_sure) p_filled = m.p_emp;
          else if (d < m.range_max) p_filled = m.p_emp + (d - m.range_sure) / m.range_max * (m.p_prior - m.p_emp);
          else break;
        } else {
          if (d < m.range_sure) p_filled = m.p_occ;
          else if (d < m.range_max) p_filled = m.p_occ + (d - m.range_sure) / m.range_max * (m.p_prior - m.p_occ);
          else break;
        }
        double& cell = grid->prob[static_cast<std::size_t>(current_y) * grid->spec.width + current_x];
        if (cell == -1) cell = m.p_prior;
        cell = 1 - 1 / (1 + (1 - m.p_prior) / m.p_prior * p_filled / (1 - p_filled) * cell / (1 - cell));
      }
    } while (get_next_point(&b));
  }
}

}  // namespace carmen
