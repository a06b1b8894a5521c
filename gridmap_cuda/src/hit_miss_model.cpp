#include "gridmap_cuda/hit_miss_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gridmap_cuda/occupancy_grid.h"
#include "beam_batch.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"
#include "model_checks.h"

namespace gridmap_cuda {
namespace {

std::int64_t fixed_log_odds(double p) { return std::llround(std::log(p / (1.0 - p)) * kEvidenceScale); }

}  // namespace

void HitMissModel::validate() const {
  detail::require_probability("HitMissModel", p_hit, "p_hit");
  detail::require_probability("HitMissModel", p_miss, "p_miss");
  detail::require_probability("HitMissModel", p_min, "p_min");
  detail::require_probability("HitMissModel", p_max, "p_max");
  detail::require_distance("HitMissModel", max_range, "max_range");
  detail::require_distance("HitMissModel", missing_data_ray_length, "missing_data_ray_length");
  if (p_min > p_max)
    throw linalg_cuda::InvalidArgument("HitMissModel: p_min " + linalg_cuda::detail::readable(p_min) +
                                       " exceeds p_max " + linalg_cuda::detail::readable(p_max));
  for (const double p : {p_hit, p_miss})
    if (p < p_min || p > p_max)
      throw linalg_cuda::InvalidArgument("HitMissModel: p_hit and p_miss (" + linalg_cuda::detail::readable(p_hit) +
                                         ", " + linalg_cuda::detail::readable(p_miss) +
                                         ") must lie within [p_min, p_max]");
}

namespace detail {

HitMissParams make_hit_miss_params(const GridSpec& spec, const HitMissModel& model) {
  model.validate();
  // A beam's reach in cells stays far inside int, as CARMEN's model's does (beam_batch.h).
  if (!(std::max(model.max_range, model.missing_data_ray_length) / spec.resolution < kMaxCellsFromLaser))
    throw linalg_cuda::InvalidArgument("HitMissModel: max_range or missing_data_ray_length spans more than 2^29 cells");
  HitMissParams p;
  p.resolution = spec.resolution;
  p.max_range = model.max_range;
  p.missing_ray = model.missing_data_ray_length;
  p.bounds = map_bounds(spec);
  p.hit = fixed_log_odds(model.p_hit);
  p.miss = fixed_log_odds(model.p_miss);
  p.low = fixed_log_odds(model.p_min);
  p.high = fixed_log_odds(model.p_max);
  return p;
}

}  // namespace detail
}  // namespace gridmap_cuda
