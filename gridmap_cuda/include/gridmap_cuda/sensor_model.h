#pragma once
// The evidence-grid sensor model of CARMEN's vasco (egrid.c), with its defaults.
//
// For a beam of range r, every cell of its Bresenham line from the laser cell to the cell at
// r + wall_thickness is updated once. With d the distance between the centres of the cell and the
// laser cell: p_f = p_emp if d < r (free) else p_occ (occupied); p = p_f for d < range_sure, else
// p = p_f + (d - range_sure) / range_max * (p_prior - p_f) (CARMEN's fading, which divides by range_max);
// the ray stops at the first cell inside the grid with d >= range_max. The cell's odds are multiplied
// by odds(p) / odds(p_prior), i.e. its log-odds grow by logit(p) - logit(p_prior).
namespace gridmap_cuda {

struct SensorModel {
  double p_prior = 0.5;
  double p_occ = 0.55;
  double p_emp = 0.45;
  double range_sure = 5.0;       // m
  double range_max = 10.0;       // m
  double wall_thickness = 0.2;   // m
  double usable_range = 50.0;    // beams with range >= this are skipped (CARMEN's LASER_RANGE_LIMIT)

  // Throws linalg_cuda::InvalidArgument when a probability is outside (0, 1), a range is negative or
  // not finite, or range_sure > range_max.
  void validate() const;
};

}  // namespace gridmap_cuda
