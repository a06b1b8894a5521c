#include "gridmap_cuda/occupancy_grid.h"

#include <algorithm>
#include <cmath>

namespace gridmap_cuda {

double evidence_probability(double prior_log_odds, std::int64_t evidence) {
  return 1.0 / (1.0 + std::exp(-(prior_log_odds + static_cast<double>(evidence) / kEvidenceScale)));
}

double OccupancyGrid::probability(std::size_t cell) const {
  if (!known[cell]) return -1.0;
  return evidence_probability(prior_log_odds, evidence[cell]);
}

std::int8_t OccupancyGrid::occupancy_value(std::size_t cell) const {
  if (!known[cell]) return kUnknownOccupancy;
  return static_cast<std::int8_t>(std::lround(100.0 * probability(cell)));
}

OccupancyValues OccupancyGrid::occupancy_values() const {
  OccupancyValues values{spec, std::vector<std::int8_t>(evidence.size())};
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < values.data.size(); ++i) values.data[i] = occupancy_value(i);
  return values;
}

std::vector<float> OccupancyGrid::probabilities() const {
  std::vector<float> p(evidence.size());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<float>(probability(i));
  return p;
}

std::size_t OccupancyGrid::known_cells() const {
  return static_cast<std::size_t>(std::count(known.begin(), known.end(), std::uint8_t{1}));
}

}  // namespace gridmap_cuda
