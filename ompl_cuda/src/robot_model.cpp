#include "ompl_cuda/robot_model.h"

#include <algorithm>
#include <cmath>

#include "linalg_cuda/errors.h"
#include "robot_kinematics.h"

namespace ompl_cuda {

static_assert(sizeof(Transform) == 12 * sizeof(double), "link_poses writes 12 values per Transform");

Transform transform_from(const double position[3], const double quaternion[4]) {
  double q[4] = {quaternion[0], quaternion[1], quaternion[2], quaternion[3]};
  double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(n > 1e-150 && n < 1e150)) {
    // Squares that overflow or underflow would lose the direction: scale by the largest component first.
    const double largest = std::max({std::fabs(q[0]), std::fabs(q[1]), std::fabs(q[2]), std::fabs(q[3])});
    for (double& v : q) v /= largest;
    n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  }
  const double x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
  Transform t;
  const double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
                       2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                       2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
  std::copy(r, r + 9, t.rotation);
  std::copy(position, position + 3, t.translation);
  return t;
}

Transform compose(const Transform& a, const Transform& b) {
  Transform t;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j)
      t.rotation[3 * i + j] = a.rotation[3 * i] * b.rotation[j] + a.rotation[3 * i + 1] * b.rotation[3 + j] +
                              a.rotation[3 * i + 2] * b.rotation[6 + j];
    t.translation[i] = a.rotation[3 * i] * b.translation[0] + a.rotation[3 * i + 1] * b.translation[1] +
                       a.rotation[3 * i + 2] * b.translation[2] + a.translation[i];
  }
  return t;
}

Transform inverse(const Transform& t) {
  Transform out;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out.rotation[3 * i + j] = t.rotation[3 * j + i];
  for (int i = 0; i < 3; ++i)
    out.translation[i] = -(out.rotation[3 * i] * t.translation[0] + out.rotation[3 * i + 1] * t.translation[1] +
                           out.rotation[3 * i + 2] * t.translation[2]);
  return out;
}

bool is_finite(const Transform& t) {
  for (const double v : t.rotation)
    if (!std::isfinite(v)) return false;
  for (const double v : t.translation)
    if (!std::isfinite(v)) return false;
  return true;
}

int RobotModel::link_index(const std::string& name) const {
  const auto it = link_by_name_.find(name);
  return it == link_by_name_.end() ? -1 : it->second;
}

int RobotModel::joint_index(const std::string& name) const {
  const auto it = joint_by_name_.find(name);
  return it == joint_by_name_.end() ? -1 : it->second;
}

std::vector<double> RobotModel::default_state() const {
  std::vector<double> state(num_variables());
  for (int v = 0; v < num_variables(); ++v) state[v] = std::min(std::max(0.0, lower_[v]), upper_[v]);
  return state;
}

std::vector<std::string> RobotModel::group_names() const {
  std::vector<std::string> names;
  for (const auto& [name, group] : groups_) names.push_back(name);
  return names;
}

PlanningGroup RobotModel::group(const std::string& name) const {
  const auto it = groups_.find(name);
  if (it == groups_.end()) {
    std::string known;
    for (const auto& [n, g] : groups_) known += (known.empty() ? "" : ", ") + n;
    throw linalg_cuda::InvalidArgument("RobotModel '" + name_ + "' has no planning group '" + name + "' (" +
                                       (known.empty() ? "no SRDF was read" : "groups: " + known) + ")");
  }
  return it->second;
}

std::vector<double> RobotModel::named_state(const std::string& group_name, const std::string& state,
                                            const std::vector<double>& base) const {
  if (static_cast<int>(base.size()) != num_variables())
    throw linalg_cuda::InvalidArgument("RobotModel::named_state: the base state has " + std::to_string(base.size()) +
                                       " values, the model " + std::to_string(num_variables()) + " variables");
  const auto it = group_states_.find({group_name, state});
  if (it == group_states_.end())
    throw linalg_cuda::InvalidArgument("RobotModel '" + name_ + "' has no state '" + state + "' of group '" + group_name + "'");
  std::vector<double> out = base;
  for (const auto& [joint, value] : it->second) {
    const int v = joints_[joint_index(joint)].variable;
    if (v >= 0) out[v] = value;
  }
  return out;
}

void RobotModel::link_poses(const double* variables, std::vector<Transform>* poses) const {
  poses->resize(links_.size());
  if (links_.empty()) return;
  detail::link_poses(kinematics_->data(), static_cast<int>(kinematics_->size()), variables,
                     reinterpret_cast<double*>(poses->data()));
}

const std::vector<detail::KinematicJoint>& RobotModel::kinematic_joints() const {
  static const std::vector<detail::KinematicJoint> none;
  return kinematics_ ? *kinematics_ : none;
}

}  // namespace ompl_cuda
