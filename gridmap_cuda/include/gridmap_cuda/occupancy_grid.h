#pragma once
// The map a GridMapper produces: per cell the accumulated log-odds evidence (fixed point, so that the
// sum does not depend on the order of the updates) and whether any beam touched it.
#include <cstdint>
#include <vector>

#include "gridmap_cuda/grid_spec.h"
#include "gridmap_cuda/occupancy_values.h"

namespace gridmap_cuda {

// Fixed-point scale of the evidence: 2^20 units per unit of log-odds (nat). Each update is rounded to
// the nearest unit, so a cell's log-odds are within n * 2^-21 ~ n * 4.8e-7 of the exact sum after n
// updates (1e-2 after 20,000 updates, far below what changes a probability that is drawn or
// thresholded). Sums are 64-bit: no overflow for any realistic number of updates.
constexpr double kEvidenceScale = 1048576.0;

// The occupancy probability of a cell of this evidence on a map of this prior (logit(p_prior)).
double evidence_probability(double prior_log_odds, std::int64_t evidence);

struct OccupancyGrid {
  GridSpec spec;
  double prior_log_odds = 0.0;          // logit(p_prior)
  std::vector<std::int64_t> evidence;   // sum of (logit(p) - logit(p_prior)) * kEvidenceScale, rounded per update
  std::vector<std::uint8_t> known;      // 1 if at least one beam updated the cell

  std::size_t index(int x, int y) const { return static_cast<std::size_t>(y) * spec.width + x; }
  double log_odds(std::size_t cell) const { return prior_log_odds + static_cast<double>(evidence[cell]) / kEvidenceScale; }
  // Occupancy probability of a known cell; -1 for unknown cells (CARMEN's convention).
  double probability(std::size_t cell) const;
  // All cells, row by row (row 0 = smallest y), -1 where unknown.
  std::vector<float> probabilities() const;
  // nav_msgs/OccupancyGrid's value of a cell: -1 unknown, else std::lround(100 * probability(cell)).
  std::int8_t occupancy_value(std::size_t cell) const;
  // Every cell's, converted here on the host (GridMapper::occupancy_values converts where the map is).
  OccupancyValues occupancy_values() const;
  std::size_t known_cells() const;
};

}  // namespace gridmap_cuda
