#include "gridmap_cuda/occupancy_grid.h"

#include <algorithm>
#include <cmath>

namespace gridmap_cuda {

double OccupancyGrid::probability(std::size_t cell) const {
  if (!known[cell]) return -1.0;
  return 1.0 / (1.0 + std::exp(-log_odds(cell)));
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
