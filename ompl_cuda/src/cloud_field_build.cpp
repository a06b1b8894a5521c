#include "cloud_field_build.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "linalg_cuda/errors.h"

namespace ompl_cuda::detail {

CloudGrid plan_cloud_grid(const std::vector<float>& xyz, double resolution, const double* low, const double* high) {
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (std::size_t i = 0; i + 2 < xyz.size(); i += 3) {
    bool inside = true;
    for (int k = 0; k < 3; ++k) inside = inside && xyz[i + k] >= low[k] && xyz[i + k] <= high[k];
    if (!inside) continue;
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min<double>(lo[k], xyz[i + k]);
      hi[k] = std::max<double>(hi[k], xyz[i + k]);
    }
  }
  CloudGrid grid;
  if (lo[0] > hi[0]) return grid;  // no point within reach
  long long voxels = 1;
  for (int k = 0; k < 3; ++k) {
    grid.origin[k] = static_cast<float>(lo[k] - resolution);
    grid.n[k] = static_cast<int>(std::min(std::ceil((hi[k] - lo[k]) / resolution) + 3.0, 2e9));
    voxels *= grid.n[k];
    if (voxels > kMaxCloudVoxels) break;
  }
  grid.voxel = static_cast<float>(resolution);
  if (voxels > kMaxCloudVoxels) {
    const double volume = (hi[0] - lo[0] + 3 * resolution) * (hi[1] - lo[1] + 3 * resolution) * (hi[2] - lo[2] + 3 * resolution);
    throw linalg_cuda::InvalidArgument("point cloud: a field of " + std::to_string(resolution) +
                                       " m voxels over the cloud within the robot's reach needs more than " +
                                       std::to_string(kMaxCloudVoxels) + " voxels; a resolution of " +
                                       std::to_string(std::cbrt(volume / kMaxCloudVoxels) * 1.01) + " m or more fits");
  }
  return grid;
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
