// colmap_model_from_bal: a BAL problem as a COLMAP model (colmap_model.h says how the conventions meet).
#include <ceres/rotation.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ceres_cuda/bal_problem.h"
#include "ceres_cuda/colmap_model.h"

namespace ceres_cuda {

ColmapModel colmap_model_from_bal(const BALProblem& bal) {
  bal.validate();
  const std::vector<double>& obs = bal.observations();
  // One image size for all: the smallest even size whose centre leaves every observation inside.
  double reach_x = 0, reach_y = 0;
  for (int k = 0; k < bal.num_observations(); ++k) {
    reach_x = std::max(reach_x, std::fabs(obs[2 * k]));
    reach_y = std::max(reach_y, std::fabs(obs[2 * k + 1]));
  }
  const std::uint64_t width = 2 * (static_cast<std::uint64_t>(std::ceil(reach_x)) + 1);
  const std::uint64_t height = 2 * (static_cast<std::uint64_t>(std::ceil(reach_y)) + 1);
  const double cx = static_cast<double>(width / 2), cy = static_cast<double>(height / 2);

  ColmapModel model;
  for (int i = 0; i < bal.num_cameras(); ++i) {
    const double* c = bal.cameras().data() + BALProblem::kCameraSize * static_cast<std::size_t>(i);
    const auto id = static_cast<std::uint32_t>(i + 1);
    model.cameras[id] = {ColmapCameraModel::Radial, width, height, {c[6], cx, cy, c[7], c[8]}};
    // Half a turn about x, (0, 1, 0, 0), times BAL's rotation (w, x, y, z) is (-x, w, -z, y).
    double q[4];
    ceres::AngleAxisToQuaternion(c, q);
    ColmapImage image;
    image.qvec = {-q[1], q[0], -q[3], q[2]};
    image.tvec = {c[3], -c[4], -c[5]};
    image.camera_id = id;
    char name[32];
    std::snprintf(name, sizeof name, "bal_camera_%06d.jpg", i);
    image.name = name;
    model.images[id] = std::move(image);
  }
  std::vector<double> error_sum(static_cast<std::size_t>(bal.num_points()), 0.0);
  for (int k = 0; k < bal.num_observations(); ++k) {
    const int i = bal.camera_index()[k], j = bal.point_index()[k];
    const auto image_id = static_cast<std::uint32_t>(i + 1);
    const auto point_id = static_cast<std::uint64_t>(j) + 1;
    ColmapImage& image = model.images[image_id];
    ColmapPoint3D& point = model.points3D[point_id];
    point.track.push_back({image_id, static_cast<std::uint32_t>(image.points2D.size())});
    image.points2D.push_back({cx + obs[2 * k], cy - obs[2 * k + 1], point_id});
    // BAL's reprojection error of the observation, for the point's mean.
    const double* c = bal.cameras().data() + BALProblem::kCameraSize * static_cast<std::size_t>(i);
    const double* x = bal.points().data() + BALProblem::kPointSize * static_cast<std::size_t>(j);
    double p[3];
    ceres::AngleAxisRotatePoint(c, x, p);
    const double px = -(p[0] + c[3]) / (p[2] + c[5]), py = -(p[1] + c[4]) / (p[2] + c[5]);
    const double r2 = px * px + py * py, scale = c[6] * (1.0 + c[7] * r2 + c[8] * r2 * r2);
    error_sum[static_cast<std::size_t>(j)] += std::hypot(scale * px - obs[2 * k], scale * py - obs[2 * k + 1]);
  }
  for (int j = 0; j < bal.num_points(); ++j) {
    const double* x = bal.points().data() + BALProblem::kPointSize * static_cast<std::size_t>(j);
    ColmapPoint3D& point = model.points3D[static_cast<std::uint64_t>(j) + 1];
    point.xyz = {x[0], x[1], x[2]};
    point.error = point.track.empty() ? -1.0 : error_sum[static_cast<std::size_t>(j)] / static_cast<double>(point.track.size());
  }
  return model;
}

}  // namespace ceres_cuda
