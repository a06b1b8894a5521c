#include "value_codec.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "gridmap_cuda/occupancy_grid.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"

namespace gridmap_cuda::detail {
namespace {

// The smallest evidence at which `holds` (false below, true above: the conversions only grow with the
// evidence) becomes true; INT64_MAX when it never does within the evidence any map can reach.
template <typename Holds>
std::int64_t first_evidence_where(const Holds& holds) {
  std::int64_t lo = -(std::int64_t{1} << 62), hi = std::int64_t{1} << 62;
  if (holds(lo)) return std::numeric_limits<std::int64_t>::min();
  if (!holds(hi)) return std::numeric_limits<std::int64_t>::max();
  for (;;) {  // holds(hi) and not holds(lo); their distance, up to 2^63, taken unsigned
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    if (span <= 1) break;
    const std::int64_t mid = lo + static_cast<std::int64_t>(span / 2);
    if (holds(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

}  // namespace

void validate_ros_options(const RosMapOptions& options, const char* function) {
  if (!std::isfinite(options.occupied_thresh) || !std::isfinite(options.free_thresh) || options.free_thresh < 0.0 ||
      options.occupied_thresh > 1.0 || options.free_thresh > options.occupied_thresh)
    throw linalg_cuda::InvalidArgument(std::string(function) + ": thresholds must satisfy 0 <= free_thresh (" +
                                       linalg_cuda::detail::readable(options.free_thresh) + ") <= occupied_thresh (" +
                                       linalg_cuda::detail::readable(options.occupied_thresh) + ") <= 1");
}

ValueCodec make_value_codec(double prior_log_odds, const RosMapOptions& options) {
  validate_ros_options(options, "make_value_codec");
  auto p = [prior_log_odds](std::int64_t e) { return evidence_probability(prior_log_odds, e); };
  ValueCodec codec;
  codec.percent_from[0] = std::numeric_limits<std::int64_t>::min();
  for (int k = 1; k <= 100; ++k)
    codec.percent_from[k] = first_evidence_where([&](std::int64_t e) { return std::lround(100.0 * p(e)) >= k; });
  codec.occupied_from = first_evidence_where([&](std::int64_t e) { return p(e) > options.occupied_thresh; });
  codec.free_below = first_evidence_where([&](std::int64_t e) { return !(p(e) < options.free_thresh); });
  return codec;
}

}  // namespace gridmap_cuda::detail
