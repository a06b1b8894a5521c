#include "ba_index.h"

#include "linalg_cuda/errors.h"
#include "phase_log.h"

namespace ceres_cuda::detail {
namespace {

// CSR of residuals grouped by owner (owner -1 left out), residuals in increasing order in each group.
void group(const std::vector<int>& owner, int owners, std::vector<int>* start, std::vector<int>* members) {
  start->assign(owners + 1, 0);
  for (const int o : owner)
    if (o >= 0) ++(*start)[o + 1];
  for (int k = 0; k < owners; ++k) (*start)[k + 1] += (*start)[k];
  members->resize(start->back());
  std::vector<int> fill(start->begin(), start->end() - 1);
  for (int i = 0; i < static_cast<int>(owner.size()); ++i)
    if (owner[i] >= 0) (*members)[fill[owner[i]]++] = i;
}

}  // namespace

BaIndex make_index(const BaLayout& layout) {
  PhaseLog phase("index");
  BaIndex x;
  x.residuals = static_cast<int>(layout.residuals.size());
  x.cameras = layout.variable_cameras;
  x.points = layout.variable_points;
  x.camera_size = layout.camera_size;
  x.residual_size = layout.residual_size;
  x.camera_of.resize(x.residuals);
  x.point_of.resize(x.residuals);
  x.camera_param.resize(x.residuals);
  x.point_param.resize(x.residuals);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < x.residuals; ++i) {
    const BaResidual& r = layout.residuals[i];
    x.camera_param[i] = r.camera;
    x.point_param[i] = r.point;
    x.camera_of[i] = layout.camera_is_variable(r.camera) ? r.camera : -1;
    x.point_of[i] = layout.point_is_variable(r.point) ? r.point : -1;
  }
  group(x.camera_of, x.cameras, &x.camera_start, &x.camera_residuals);
  // The GPU engine relies on the layout's camera-major order: camera c's residuals are exactly
  // [camera_start[c], camera_start[c + 1]).
  for (int t = 0; t < static_cast<int>(x.camera_residuals.size()); ++t)
    if (x.camera_residuals[t] != t) throw linalg_cuda::InvalidArgument("ceres_cuda: residuals are not in camera order");
  group(x.point_of, x.points, &x.point_start, &x.point_residuals);
  // Repeated pairs, camera by camera: last[p] is the camera's latest residual with point p, valid when
  // seen_by[p] is the camera.
  std::vector<int> last(x.points), seen_by(x.points, -1);
  for (int c = 0; c < x.cameras; ++c)
    for (int i = x.camera_start[c]; i < x.camera_start[c + 1]; ++i) {
      const int p = x.point_of[i];
      if (p < 0) continue;
      if (seen_by[p] == c) {
        if (x.pair_next.empty()) {
          x.pair_next.assign(x.residuals, -1);
          x.pair_repeat.assign(x.residuals, 0);
        }
        x.pair_next[last[p]] = i;
        x.pair_repeat[i] = 1;
      }
      seen_by[p] = c;
      last[p] = i;
    }
  phase("residuals by camera and by point, repeated pairs");
  return x;
}

}  // namespace ceres_cuda::detail
