#include "ompl_cuda/robot_collision_model.h"

#include <algorithm>
#include <cmath>

#include "linalg_cuda/errors.h"
#include "robot_check_data.h"

namespace ompl_cuda {

RobotCollisionModel::RobotCollisionModel(RobotModel model, std::vector<std::vector<Sphere>> spheres)
    : model_(std::move(model)), spheres_(std::move(spheres)) {
  if (spheres_.size() != model_.links().size())
    throw linalg_cuda::InvalidArgument("RobotCollisionModel: spheres for " + std::to_string(spheres_.size()) +
                                       " links, the robot has " + std::to_string(model_.links().size()));
  const std::vector<std::pair<int, int>>& disabled = model_.disabled_collisions();
  const int links = static_cast<int>(model_.links().size());
  for (int a = 0; a < links; ++a)
    for (int b = a + 1; b < links; ++b) {
      if (spheres_[a].empty() || spheres_[b].empty()) continue;
      if (std::binary_search(disabled.begin(), disabled.end(), std::make_pair(a, b))) continue;
      const int joint_a = model_.links()[a].parent_joint, joint_b = model_.links()[b].parent_joint;
      const bool joined = (joint_b >= 0 && model_.joints()[joint_b].parent_link == a) ||
                          (joint_a >= 0 && model_.joints()[joint_a].parent_link == b);
      if (!joined) self_pairs_.emplace_back(a, b);
    }
  first_sphere_.assign(spheres_.size() + 1, 0);
  for (std::size_t l = 0; l < spheres_.size(); ++l) first_sphere_[l + 1] = first_sphere_[l] + spheres_[l].size();
}

std::size_t RobotCollisionModel::num_spheres() const {
  std::size_t n = 0;
  for (const std::vector<Sphere>& s : spheres_) n += s.size();
  return n;
}

void RobotCollisionModel::world_spheres(const double* state, const Transform& base, std::vector<Sphere>* out) const {
  thread_local std::vector<Transform> poses;  // scratch: no allocation per state once grown
  model_.link_poses(state, &poses);
  out->clear();
  for (std::size_t l = 0; l < spheres_.size(); ++l) {
    const Transform pose = compose(base, poses[l]);
    for (const Sphere& s : spheres_[l]) {
      Sphere w;
      for (int i = 0; i < 3; ++i)
        w.center[i] = pose.rotation[3 * i] * s.center[0] + pose.rotation[3 * i + 1] * s.center[1] +
                      pose.rotation[3 * i + 2] * s.center[2] + pose.translation[i];
      w.radius = s.radius;
      out->push_back(w);
    }
  }
}

bool in_collision(const RobotCollisionModel& robot, const Scene& scene, const Transform& base, const double* state,
                  bool self_collision) {
  detail::RobotCheckData data = detail::whole_robot_check_data(robot, base, self_collision);
  data.set_scene(scene);
  detail::HostCheckScratch scratch;
  return !detail::robot_state_valid(data.view(), [state](int k) { return state[k]; }, scratch.fit(data));
}

}  // namespace ompl_cuda
