#include "gridmap_cuda/sensor_model.h"

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"
#include "model_checks.h"

namespace gridmap_cuda {

using detail::require_distance;
using detail::require_probability;

void SensorModel::validate() const {
  require_probability("SensorModel", p_prior, "p_prior");
  require_probability("SensorModel", p_occ, "p_occ");
  require_probability("SensorModel", p_emp, "p_emp");
  require_distance("SensorModel", range_sure, "range_sure");
  require_distance("SensorModel", range_max, "range_max");
  require_distance("SensorModel", wall_thickness, "wall_thickness");
  require_distance("SensorModel", usable_range, "usable_range");
  if (range_sure > range_max)
    throw linalg_cuda::InvalidArgument("SensorModel: range_sure " + linalg_cuda::detail::readable(range_sure) +
                                       " exceeds range_max " + linalg_cuda::detail::readable(range_max));
}

}  // namespace gridmap_cuda
