#include "cloud_field_build.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

#include "linalg_cuda/errors.h"

namespace ompl_cuda::detail {

void add_points_within(const std::vector<float>& xyz, const double* low, const double* high, double* lo, double* hi) {
  for (std::size_t i = 0; i + 2 < xyz.size(); i += 3) {
    bool inside = true;
    for (int k = 0; k < 3; ++k) inside = inside && xyz[i + k] >= low[k] && xyz[i + k] <= high[k];
    if (!inside) continue;
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min<double>(lo[k], xyz[i + k]);
      hi[k] = std::max<double>(hi[k], xyz[i + k]);
    }
  }
}

CloudGrid plan_grid_over(const double* lo, const double* hi, double resolution) {
  CloudGrid grid;
  if (lo[0] > hi[0] || lo[1] > hi[1] || lo[2] > hi[2]) return grid;  // nothing within reach
  long long voxels = 1;
  for (int k = 0; k < 3; ++k) {
    grid.origin[k] = static_cast<float>(lo[k] - resolution);
    grid.n[k] = static_cast<int>(std::min(std::ceil((hi[k] - lo[k]) / resolution) + 3.0, 2e9));
    voxels *= grid.n[k];
    if (voxels > kMaxCloudVoxels) break;
  }
  grid.voxel = static_cast<float>(resolution);
  if (voxels > kMaxCloudVoxels) {
    // The voxels a resolution needs never grow with it: from the volume's estimate up by 1% until it fits
    // (a flat box, a wall of a mesh, needs more than its volume says).
    auto needed = [&](double r) {
      double count = 1;
      for (int k = 0; k < 3; ++k) count *= std::ceil((hi[k] - lo[k]) / r) + 3.0;
      return count;
    };
    double fits = std::max(resolution, std::cbrt((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]) / kMaxCloudVoxels));
    while (needed(fits) > static_cast<double>(kMaxCloudVoxels)) fits *= 1.01;
    const double digit = std::pow(10.0, std::floor(std::log10(fits)) - 2);  // three digits, rounded up
    std::ostringstream message;
    message << "scene field: a field of " << resolution << " m voxels over the point cloud and meshes within the robot's reach needs more than "
            << kMaxCloudVoxels << " voxels; a resolution of " << std::setprecision(3) << std::ceil(fits / digit) * digit
            << " m or more fits";
    throw linalg_cuda::InvalidArgument(message.str());
  }
  return grid;
}

CloudGrid plan_cloud_grid(const std::vector<float>& xyz, double resolution, const double* low, const double* high) {
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  add_points_within(xyz, low, high, lo, hi);
  return plan_grid_over(lo, hi, resolution);
}

std::vector<float> build_distance_field_cpu(const std::vector<float>& xyz, const CloudGrid& grid) {
  const long long voxels = grid.voxels();
  std::vector<float> a(voxels, HUGE_VALF), b(voxels);
  for (std::size_t i = 0; i + 2 < xyz.size(); i += 3) {
    const long long v = voxel_of_point(grid, &xyz[i]);
    if (v >= 0) a[v] = 0;
  }
  for (int axis = 0; axis < 3; ++axis) {
    const long long lines = voxels / grid.n[axis];
    const int n = grid.n[axis];
#pragma omp parallel
    {
      std::vector<int> v(n);
      std::vector<double> z(n + 1);
#pragma omp for schedule(static)
      for (long long line = 0; line < lines; ++line) {
        long long first = 0, stride = 0;
        line_of_pass(grid, axis, line, &first, &stride);
        distance_transform_line(a.data() + first, b.data() + first, n, stride, v.data(), z.data());
      }
    }
    a.swap(b);
  }
  return a;
}

}  // namespace ompl_cuda::detail
