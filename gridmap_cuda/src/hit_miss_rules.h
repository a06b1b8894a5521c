#pragma once
// The per-beam and per-cell rules of the hit/miss model (gridmap_cuda/hit_miss_model.h), written once
// for the CPU reference and the GPU kernels (LINALG_HD). As for CARMEN's model (evidence_model.h) the
// beam directions come from the host's tables, no fused multiply-add is used, and the cells' log-odds
// are integers, so both sides compute the same map.
//
// A scan is applied in two passes. The first marks each cell it touches with mark = 2 stamp + hit
// (stamp: the scan's number, growing over the mapper's life) through a maximum, so that a hit beats a
// miss of the same scan and any mark of an earlier scan; whoever raises a cell's mark from below
// 2 stamp lists the cell, once. The second updates each listed cell once, from its mark.
#include <cmath>
#include <cstdint>

#include "bresenham_line.h"
#include "cell_layout.h"
#include "evidence_model.h"
#include "linalg_cuda/internal/host_device.h"

namespace gridmap_cuda::detail {

struct HitMissParams {
  double resolution;
  double max_range;      // readings at or beyond it are "no return"
  double missing_ray;    // metres of misses along a no-return beam
  CellBounds bounds;     // the cells the map holds
  int64_t hit, miss;     // fixed-point log-odds increments
  int64_t low, high;     // fixed-point clamp bounds
};

// The line of beam i: from the laser cell to the cell holding its end point (a return), or the point
// missing_ray along it (no return). Returns false when the beam marks nothing.
LINALG_HD bool hit_miss_line(const ScanGeometry& scan, double beam_cos, double beam_sin, float range,
                             const HitMissParams& p, BresenhamLine* line, bool* returned) {
  *returned = static_cast<double>(range) < p.max_range;
  const double reach = *returned ? static_cast<double>(range) : p.missing_ray;
  if (!*returned && !(p.missing_ray > 0.0)) return false;
  const double c = scan.cos_theta * beam_cos - scan.sin_theta * beam_sin;
  const double s = scan.sin_theta * beam_cos + scan.cos_theta * beam_sin;
  const int x2 = static_cast<int>(floor(scan.laser_x + reach * c / p.resolution));
  const int y2 = static_cast<int>(floor(scan.laser_y + reach * s / p.resolution));
  *line = BresenhamLine(scan.laser_cell_x, scan.laser_cell_y, x2, y2);
  return true;
}

// Every cell of beam i inside the map's bounds, cells first, first + stride, ...: mark(x, y, hit).
// Returns how many.
template <typename Mark>
LINALG_HD int for_each_hit_miss_cell(const ScanGeometry& scan, int i, float range, const double* beam_cos,
                                     const double* beam_sin, const HitMissParams& p, int first, int stride,
                                     const Mark& mark) {
  BresenhamLine line(0, 0, 0, 0);
  bool returned = false;
  if (!hit_miss_line(scan, beam_cos[scan.direction_table + i], beam_sin[scan.direction_table + i], range, p, &line,
                     &returned))
    return 0;
  const int steps = line.steps();
  int marked = 0;
  for (int j = first; j < steps; j += stride) {
    int x, y;
    line.cell(j, &x, &y);
    if (!p.bounds.contains(x, y)) continue;
    mark(x, y, returned && j == steps - 1);
    ++marked;
  }
  return marked;
}

// The cells beam i marks on a map whose bounds it cannot leave (a tiled one): cells 0 .. count - 1
// of *line; returns count.
LINALG_HD int hit_miss_prefix(const ScanGeometry& scan, int i, float range, const double* beam_cos,
                              const double* beam_sin, const HitMissParams& p, BresenhamLine* line) {
  bool returned = false;
  if (!hit_miss_line(scan, beam_cos[scan.direction_table + i], beam_sin[scan.direction_table + i], range, p, line,
                     &returned))
    return 0;
  return line->steps();
}

// A cell's log-odds after this scan's mark (hit: the low bit), clamped.
LINALG_HD int64_t hit_miss_update(int64_t log_odds, unsigned mark, const HitMissParams& p) {
  const int64_t next = log_odds + ((mark & 1u) ? p.hit : p.miss);
  return next < p.low ? p.low : (next > p.high ? p.high : next);
}

// The stamps' limit: marks are 2 stamp + 1 in 32 bits; past it the marks are cleared and stamps restart.
constexpr unsigned kMaxHitMissStamp = (1u << 31) - 1;

}  // namespace gridmap_cuda::detail
