#pragma once
// The per-beam and per-cell rules of CARMEN's evidence grid (vasco egrid.c), written once for the CPU
// reference and the GPU kernel. Everything that could round differently on the two processors is
// taken out of their hands, so that both give bit-identical maps:
//  - trigonometry: the host computes cos/sin of each scan's heading and of each beam angle once; a
//    beam's direction is then the angle-addition product, evaluated with plain IEEE multiplies and
//    adds (no fused multiply-add: the module is compiled with -fmad=false / -ffp-contract=off);
//  - the sensor model: the host tabulates, per squared cell distance k = dx^2 + dy^2, the distance
//    d = sqrt(k) * resolution and the fixed-point log-odds increments of a free and an occupied cell;
//  - the map update: an integer (fixed-point) addition, exact and independent of order.
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "bresenham_line.h"
#include "cell_layout.h"
#include "linalg_cuda/internal/host_device.h"

namespace gridmap_cuda::detail {

// Per squared distance k: the distance in metres and the two increments (kStop: the ray ends here).
struct EvidenceEntry {
  double distance;
  int32_t free_increment;
  int32_t occupied_increment;
};
constexpr int32_t kStop = INT32_MIN;

// One scan, as the beams need it.
struct ScanGeometry {
  double laser_x, laser_y;  // laser position in cell units (continuous): (x - origin_x) / resolution
  double cos_theta, sin_theta;
  int laser_cell_x, laser_cell_y;  // floor of the above
  int first_beam;                  // index of the scan's first reading in the flat range array
  int beams;
  int direction_table;             // offset of the scan's beam-angle cos/sin table
};

struct EvidenceParams {
  double resolution;
  double wall_thickness;
  double usable_range;      // beams at or beyond it are skipped
  int table_size;           // (int)(range_max / resolution): the ray ends when |dx| or |dy| reaches it
  CellBounds bounds;        // the cells the map holds (its grid, or all a tiled map can reach)
  const EvidenceEntry* entries;  // indexed by dx^2 + dy^2, for |dx|, |dy| < table_size
};

LINALG_HD bool beam_is_used(float range, const EvidenceParams& p) { return static_cast<double>(range) < p.usable_range; }

// The Bresenham line of beam `beam` of a scan: from the laser cell to the cell at range + wall
// thickness, truncated toward zero like CARMEN's (int) cast.
LINALG_HD BresenhamLine beam_line(const ScanGeometry& scan, double beam_cos, double beam_sin, float range,
                                  const EvidenceParams& p) {
  const double c = scan.cos_theta * beam_cos - scan.sin_theta * beam_sin;  // cos(theta + angle)
  const double s = scan.sin_theta * beam_cos + scan.cos_theta * beam_sin;  // sin(theta + angle)
  const double reach = static_cast<double>(range) + p.wall_thickness;
  const int x2 = static_cast<int>(scan.laser_x + reach * c / p.resolution);
  const int y2 = static_cast<int>(scan.laser_y + reach * s / p.resolution);
  return BresenhamLine(scan.laser_cell_x, scan.laser_cell_y, x2, y2);
}

// Steps of the line worth visiting: the ray has ended once the major axis is table_size cells away.
LINALG_HD int steps_to_visit(const BresenhamLine& line, const EvidenceParams& p) {
  return line.steps() < p.table_size ? line.steps() : p.table_size;
}

enum class CellOutcome { Update, OutsideGrid, RayEnded };

struct CellUpdate {
  int x, y;            // the cell (its place in memory is the layout's business: cell_layout.h)
  int32_t increment;   // fixed-point log-odds to add
};

// Cell j of a beam's line (*x, *y) and its table entry, or null once the ray has ended there: the
// cell is range_max or more away. The distance grows strictly along the line, so once ended, ended.
LINALG_HD const EvidenceEntry* ray_entry(const BresenhamLine& line, int j, const ScanGeometry& scan,
                                         const EvidenceParams& p, int* x, int* y) {
  line.cell(j, x, y);
  const int dx = *x > scan.laser_cell_x ? *x - scan.laser_cell_x : scan.laser_cell_x - *x;
  const int dy = *y > scan.laser_cell_y ? *y - scan.laser_cell_y : scan.laser_cell_y - *y;
  if (dx >= p.table_size || dy >= p.table_size) return nullptr;
  const EvidenceEntry* e = p.entries + (dx * dx + dy * dy);
  return e->free_increment == kStop ? nullptr : e;
}

// What cell j of a beam's line does. CARMEN skips cells outside the grid and stops the ray at the
// first cell inside it that is range_max or more away; since the distance grows strictly along the
// line, "update iff inside the grid and not yet range_max away" is the same rule, for every j at once.
LINALG_HD CellOutcome cell_update(const BresenhamLine& line, int j, const ScanGeometry& scan, float range,
                                  const EvidenceParams& p, CellUpdate* update) {
  int x, y;
  const EvidenceEntry* entry = ray_entry(line, j, scan, p, &x, &y);
  if (!entry) return CellOutcome::RayEnded;
  const EvidenceEntry& e = *entry;
  if (!p.bounds.contains(x, y)) return CellOutcome::OutsideGrid;
  update->x = x;
  update->y = y;
  update->increment = e.distance < static_cast<double>(range) ? e.free_increment : e.occupied_increment;
  return CellOutcome::Update;
}

// Every update of beam i of a scan, in CARMEN's order along the line: cells first, first + stride,
// ... (the CPU walks them all, a GPU lane every 32nd); apply(update) for each; returns how many.
template <typename Apply>
LINALG_HD int for_each_beam_update(const ScanGeometry& scan, int i, float range, const double* beam_cos,
                                   const double* beam_sin, const EvidenceParams& p, int first, int stride,
                                   const Apply& apply) {
  if (!beam_is_used(range, p)) return 0;
  const BresenhamLine line =
      beam_line(scan, beam_cos[scan.direction_table + i], beam_sin[scan.direction_table + i], range, p);
  const int steps = steps_to_visit(line, p);
  int updates = 0;
  for (int j = first; j < steps; j += stride) {
    CellUpdate update;
    const CellOutcome outcome = cell_update(line, j, scan, range, p, &update);
    if (outcome == CellOutcome::RayEnded) break;  // and so are all later cells (the distance grows)
    if (outcome == CellOutcome::OutsideGrid) continue;
    apply(update);
    ++updates;
  }
  return updates;
}

// The cells beam i updates on a map whose bounds it cannot leave (a tiled one): cells 0 .. count - 1
// of *line; returns count (the first cell where the ray has ended, by bisection).
LINALG_HD int beam_update_prefix(const ScanGeometry& scan, int i, float range, const double* beam_cos,
                                 const double* beam_sin, const EvidenceParams& p, BresenhamLine* line) {
  if (!beam_is_used(range, p)) return 0;
  *line = beam_line(scan, beam_cos[scan.direction_table + i], beam_sin[scan.direction_table + i], range, p);
  int lo = 0, hi = steps_to_visit(*line, p);
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    int x, y;
    if (ray_entry(*line, mid, scan, p, &x, &y)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The largest |increment| of the table: bounds what one scan can add to one cell.
inline int64_t max_abs_increment(const EvidenceEntry* entries, std::size_t count) {
  int64_t m = 0;
  for (std::size_t k = 0; k < count; ++k) {
    if (entries[k].free_increment == kStop) continue;
    m = std::max<int64_t>({m, std::llabs(entries[k].free_increment), std::llabs(entries[k].occupied_increment)});
  }
  return m;
}

}  // namespace gridmap_cuda::detail
