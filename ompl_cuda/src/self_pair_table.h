#pragma once
// Self-collision pairs decided ahead of time. Where the pose of one link of a self pair in the other's
// frame moves with at most three of the planning group's values (an arm's last links, a hand against
// the forearm), the pair's answer is a function of those values alone: a grid over them holds, per cell,
// whether the pair's spheres are apart for every value in the cell, touching for every value in it,
// or either. The checks read the cell first and test the spheres only where it says "either", so
// every answer stays the one the sphere tests give (robot_collision_math.h), reached in one lookup
// for most states.
#include <vector>

#include "linalg_cuda/internal/host_device.h"

namespace ompl_cuda::detail {

// What a cell says of its pair (two bits per cell).
enum SelfPairCell : unsigned { kSelfPairEither = 0, kSelfPairApart = 1, kSelfPairTouching = 2 };

constexpr int kMaxSelfPairAxes = 3;

// A pair's grid: `axes` full-state variables (-1: the pair has no grid), cell i along axis k holding
// the values [low[k] + i / scale[k], low[k] + (i + 1) / scale[k]); its cells start at `first` in the
// shared array of two-bit cells, axis 0 the fastest.
struct SelfPairTable {
  int axes = -1;
  int variable[kMaxSelfPairAxes] = {-1, -1, -1};
  int cells[kMaxSelfPairAxes] = {1, 1, 1};
  double low[kMaxSelfPairAxes] = {0, 0, 0}, scale[kMaxSelfPairAxes] = {0, 0, 0};
  long long first = 0;
};

// The cell of the full state (num_variables values) in the pair's grid, or kSelfPairEither where the
// pair has none or a value lies outside it.
LINALG_HD unsigned self_pair_cell(const SelfPairTable& t, const unsigned* bits, const double* full) {
  if (t.axes < 0) return kSelfPairEither;
  long long cell = t.first, stride = 1;
  for (int k = 0; k < t.axes; ++k) {
    const double u = (full[t.variable[k]] - t.low[k]) * t.scale[k];
    if (!(u >= 0) || !(u < static_cast<double>(t.cells[k]))) return kSelfPairEither;
    cell += stride * static_cast<long long>(u);
    stride *= t.cells[k];
  }
  return (bits[cell >> 4] >> (2 * (cell & 15))) & 3u;
}

class RobotCheckData;

// The grids of data's self pairs (one per pair, axes -1 where the pair's relative pose moves with more
// than kMaxSelfPairAxes group values or an unbounded one), classified with data's spheres, group bounds and link
// bounds; `slack` (metres) covers the single-precision tests' rounding on top of the motion within a
// cell. Cells are built on all cores, and the grids of the last few robots are kept for the process.
struct SelfPairTables {
  std::vector<SelfPairTable> tables;
  std::vector<unsigned> bits;
};
SelfPairTables build_self_pair_tables(const RobotCheckData& data, double slack);

}  // namespace ompl_cuda::detail
