#include "gridmap_cuda/grid_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"

namespace gridmap_cuda {

void GridSpec::validate() const {
  if (!std::isfinite(resolution) || !(resolution > 0.0))
    throw linalg_cuda::InvalidArgument("GridSpec: resolution " + linalg_cuda::detail::readable(resolution) +
                                       " must be positive");
  if (!std::isfinite(origin_x) || !std::isfinite(origin_y))
    throw linalg_cuda::InvalidArgument("GridSpec: the origin must be finite");
  if (!bounded()) return;
  if (width <= 0 || height <= 0)
    throw linalg_cuda::InvalidArgument("GridSpec: " + std::to_string(width) + " x " + std::to_string(height) +
                                       " cells; both sizes must be positive (or both 0: GridSpec::unbounded)");
  if (cells() > (std::size_t(1) << 40))
    throw linalg_cuda::InvalidArgument("GridSpec: " + std::to_string(width) + " x " + std::to_string(height) +
                                       " cells exceed the 2^40-cell limit; use a coarser resolution or a smaller area");
}

namespace {

// The grid around the laser poses and the points reach(r) along each beam of reading r (skipped
// where reach returns a negative number).
template <typename Reach>
GridSpec fit_grid_reaching(const std::vector<LaserScan>& scans, double resolution, double border,
                           const Reach& reach_of) {
  if (scans.empty()) throw linalg_cuda::InvalidArgument("fit_grid: no scans to fit a grid around");
  if (!std::isfinite(border) || border < 0.0)
    throw linalg_cuda::InvalidArgument("fit_grid: border " + linalg_cuda::detail::readable(border) + " must be >= 0");
  double min_x = std::numeric_limits<double>::infinity(), min_y = min_x;
  double max_x = -min_x, max_y = -min_x;
  std::size_t scan_index = 0, extreme[4] = {0, 0, 0, 0};  // the scans that set min_x, max_x, min_y, max_y
  auto include = [&](double x, double y) {
    if (x < min_x) min_x = x, extreme[0] = scan_index;
    if (x > max_x) max_x = x, extreme[1] = scan_index;
    if (y < min_y) min_y = y, extreme[2] = scan_index;
    if (y > max_y) max_y = y, extreme[3] = scan_index;
  };
  // Beam directions by angle addition from per-geometry tables: one sin/cos per scan, not per beam.
  std::map<std::tuple<double, double, std::size_t>, std::vector<double>> tables;
  for (; scan_index < scans.size(); ++scan_index) {
    const LaserScan& scan = scans[scan_index];
    const Pose2D& pose = scan.laser_pose;
    if (!std::isfinite(pose.x) || !std::isfinite(pose.y) || !std::isfinite(pose.theta))
      throw linalg_cuda::InvalidArgument("fit_grid: scan " + std::to_string(scan_index) +
                                         "'s laser pose is not finite");
    include(pose.x, pose.y);
    auto& table = tables[std::make_tuple(scan.start_angle, scan.angular_resolution, scan.ranges.size())];
    if (table.empty())
      for (std::size_t i = 0; i < scan.ranges.size(); ++i) {
        const double angle = scan.start_angle + static_cast<double>(i) * scan.angular_resolution;
        table.push_back(std::cos(angle));
        table.push_back(std::sin(angle));
      }
    const double c = std::cos(pose.theta), s = std::sin(pose.theta);
    for (std::size_t i = 0; i < scan.ranges.size(); ++i) {
      const double r = scan.ranges[i];
      if (!(r >= 0.0)) continue;  // bad readings add nothing (the mapper rejects them)
      const double reach = reach_of(r);
      if (reach < 0.0) continue;
      const double bc = table[2 * i], bs = table[2 * i + 1];
      include(pose.x + reach * (c * bc - s * bs), pose.y + reach * (s * bc + c * bs));
    }
  }
  GridSpec spec;
  spec.resolution = resolution;
  spec.origin_x = std::floor((min_x - border) / resolution) * resolution;
  spec.origin_y = std::floor((min_y - border) / resolution) * resolution;
  const double width = std::ceil((max_x + border - spec.origin_x) / resolution);
  const double height = std::ceil((max_y + border - spec.origin_y) / resolution);
  if (!(width < 1e9 && height < 1e9)) {
    // Numbers as %g (std::to_string prints a pose at x = 1e300 in 300 digits), and the scans that
    // stretch the grid, so that the user can find them in the log.
    const bool wide = !(width < 1e9);
    char message[320];
    std::snprintf(message, sizeof message,
                  "fit_grid: the scans span %g x %g m, %g x %g cells of %g m, too large for a grid; the %s extent runs "
                  "from scan %zu to scan %zu (check their poses)",
                  max_x - min_x, max_y - min_y, width, height, resolution, wide ? "x" : "y", extreme[wide ? 0 : 2],
                  extreme[wide ? 1 : 3]);
    throw linalg_cuda::InvalidArgument(message);
  }
  spec.width = std::max(1, static_cast<int>(width));
  spec.height = std::max(1, static_cast<int>(height));
  spec.validate();
  return spec;
}

}  // namespace

GridSpec fit_grid(const std::vector<LaserScan>& scans, double resolution, const SensorModel& model, double border) {
  model.validate();
  return fit_grid_reaching(scans, resolution, border, [&](double r) {
    return r < model.usable_range ? std::min(r + model.wall_thickness, model.range_max) : -1.0;
  });
}

GridSpec fit_grid_hit_miss(const std::vector<LaserScan>& scans, double resolution, const HitMissModel& model,
                           double border) {
  model.validate();
  return fit_grid_reaching(scans, resolution, border, [&](double r) {
    return r < model.max_range ? r : (model.missing_data_ray_length > 0.0 ? model.missing_data_ray_length : -1.0);
  });
}

}  // namespace gridmap_cuda
