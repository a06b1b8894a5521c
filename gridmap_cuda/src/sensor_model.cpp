#include "gridmap_cuda/sensor_model.h"

#include <cmath>
#include <string>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"

namespace gridmap_cuda {
namespace {

void require_probability(double p, const char* name) {
  if (!(p > 0.0 && p < 1.0))
    throw linalg_cuda::InvalidArgument(std::string("SensorModel: ") + name + " = " + linalg_cuda::detail::readable(p) +
                                       " must lie strictly between 0 and 1");
}

void require_distance(double d, const char* name) {
  if (!std::isfinite(d) || d < 0.0)
    throw linalg_cuda::InvalidArgument(std::string("SensorModel: ") + name + " = " + linalg_cuda::detail::readable(d) +
                                       " must be a finite distance >= 0");
}

}  // namespace

void SensorModel::validate() const {
  require_probability(p_prior, "p_prior");
  require_probability(p_occ, "p_occ");
  require_probability(p_emp, "p_emp");
  require_distance(range_sure, "range_sure");
  require_distance(range_max, "range_max");
  require_distance(wall_thickness, "wall_thickness");
  require_distance(usable_range, "usable_range");
  if (range_sure > range_max)
    throw linalg_cuda::InvalidArgument("SensorModel: range_sure " + linalg_cuda::detail::readable(range_sure) +
                                       " exceeds range_max " + linalg_cuda::detail::readable(range_max));
}

}  // namespace gridmap_cuda
