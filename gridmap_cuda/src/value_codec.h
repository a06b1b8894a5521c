#pragma once
// The 8-bit values of a cell, written once for the host and the device (LINALG_HD): its fixed-point
// evidence against integer thresholds. The thresholds are found on the host with the host's own
// conversion (evidence_probability, then std::lround(100 p) or map_server's tests), so the GPU's
// values equal the host-side conversion of the log-odds bit for bit, with no exp on the device.
#include <cstdint>

#include "gridmap_cuda/map_io.h"
#include "linalg_cuda/internal/host_device.h"

namespace gridmap_cuda::detail {

// Which values a download holds.
enum class ValueKind : int {
  OccupancyPercent,  // nav_msgs/OccupancyGrid: -1 unknown, 0..100
  RosTrinary,        // map_server's trinary PGM: 0 occupied, 254 free, 205 unknown or in between
};

constexpr std::uint8_t kRosOccupied = 0;
constexpr std::uint8_t kRosFree = 254;
constexpr std::uint8_t kRosUnknown = 205;

struct ValueCodec {
  std::int64_t percent_from[101];  // [k]: the smallest evidence of percent >= k ([0] is INT64_MIN)
  std::int64_t occupied_from;      // occupied (p > occupied_thresh) from this evidence on ...
  std::int64_t free_below;         // ... free (p < free_thresh) below this one
};

LINALG_HD std::int8_t occupancy_percent(std::int64_t evidence, bool known, const ValueCodec& codec) {
  if (!known) return -1;
  int lo = 0, hi = 100;  // the largest k with evidence >= percent_from[k]
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (evidence >= codec.percent_from[mid]) lo = mid;
    else hi = mid - 1;
  }
  return static_cast<std::int8_t>(lo);
}

LINALG_HD std::uint8_t ros_trinary(std::int64_t evidence, bool known, const ValueCodec& codec) {
  if (!known) return kRosUnknown;
  if (evidence >= codec.occupied_from) return kRosOccupied;
  return evidence < codec.free_below ? kRosFree : kRosUnknown;
}

LINALG_HD std::uint8_t cell_value(ValueKind kind, std::int64_t evidence, bool known, const ValueCodec& codec) {
  return kind == ValueKind::OccupancyPercent ? static_cast<std::uint8_t>(occupancy_percent(evidence, known, codec))
                                             : ros_trinary(evidence, known, codec);
}

// The grid index of output byte k of a box of values (x0, y0: its lower-left cell; rows from its
// smallest y, or from its largest when top_down).
LINALG_HD std::int64_t box_cell_index(int x0, int y0, int box_width, int box_height, bool top_down, int grid_width,
                                      std::int64_t k) {
  const int row = static_cast<int>(k / box_width), column = static_cast<int>(k % box_width);
  const int y = y0 + (top_down ? box_height - 1 - row : row);
  return static_cast<std::int64_t>(y) * grid_width + x0 + column;
}

// The thresholds for a map of this prior (logit(p_prior)) and map_server's thresholds (validated).
ValueCodec make_value_codec(double prior_log_odds, const RosMapOptions& options = {});

// Throws linalg_cuda::InvalidArgument unless 0 <= free_thresh <= occupied_thresh <= 1, all finite.
void validate_ros_options(const RosMapOptions& options, const char* function);

}  // namespace gridmap_cuda::detail
