// libFuzzer harness of ompl_cuda's URDF reader (RobotModel::load through urdfdom and tinyxml2). The
// input is the whole URDF, written as robot.urdf into a scratch folder that also holds mesh files for
// the names the seeds use (fuzz/mesh.stl, found as package://fuzz/mesh.stl through the package path
// that is the folder itself, and mesh.stl beside the URDF); ROS_PACKAGE_PATH is unset, so that a
// package is looked for in the scratch folder only. The reader only resolves a mesh's path, it does
// not read the mesh. A model that is read must be a tree in order (a link's parent joint and that
// joint's parent link come before it), name each link and joint once, have unit axes, rotations and
// finite origins, finite limits with lower <= upper (a continuous joint's -pi, pi), mimics of moving
// joints with finite factors, collision shapes of finite non-negative size whose meshes are files, and
// finite link poses at its default state and at its lower and upper bounds. Bad input must end in
// linalg_cuda's typed errors (fuzz_support.h says which still count as findings).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "ompl_cuda_fuzz_robot.h"
#include "ompl_cuda/robot_model.h"

namespace {

using ompl_cuda::JointType;
using ompl_cuda::RobotModel;
using ompl_cuda::Transform;

const fuzz::ScratchDir& scratch() {
  static const fuzz::ScratchDir dir("urdf");
  return dir;
}

void check_poses(const RobotModel& model, const std::vector<double>& state, const char* which) {
  std::vector<Transform> poses;
  model.link_poses(state.data(), &poses);
  if (poses.size() != model.links().size()) fuzz::finding("link_poses gives a pose per link");
  for (std::size_t l = 0; l < poses.size(); ++l)
    if (!ompl_cuda::is_finite(poses[l])) fuzz::finding("link " + std::to_string(l) + "'s pose at the " + which + " is not finite");
}

void check_model(const RobotModel& model) {
  const auto& links = model.links();
  const auto& joints = model.joints();
  const int num_links = static_cast<int>(links.size()), num_joints = static_cast<int>(joints.size());
  if (num_links == 0) fuzz::finding("a model without links");
  if (num_joints != num_links - 1) fuzz::finding("a tree of " + std::to_string(num_links) + " links and " + std::to_string(num_joints) + " joints");
  for (int l = 0; l < num_links; ++l) {
    const ompl_cuda::RobotLink& link = links[l];
    if (model.link_index(link.name) != l) fuzz::finding("link '" + link.name + "' is not found by its name");
    const int j = link.parent_joint;
    if ((l == 0) != (j < 0)) fuzz::finding("the root is not the first link, or a link has no parent joint");
    if (j >= 0 && (j >= num_joints || joints[j].child_link != l || !(joints[j].parent_link < l)))
      fuzz::finding("link " + std::to_string(l) + " comes before its parent or its joint does not move it");
    for (const ompl_cuda::CollisionShape& s : link.collision) {
      fuzz::check_pose(s.origin, "a collision origin");
      for (const double v : s.size)
        if (!std::isfinite(v) || v < 0) fuzz::finding("a collision shape of negative or non-finite size");
      if (s.kind == ompl_cuda::CollisionShape::Kind::Mesh) {
        std::error_code error;
        if (s.mesh_file.empty() || !std::filesystem::is_regular_file(s.mesh_file, error))
          fuzz::finding("a mesh that is not a file: '" + s.mesh_file + "'");
        for (const double v : s.mesh_scale)
          if (!std::isfinite(v)) fuzz::finding("a mesh scale that is not finite");
      }
    }
  }
  std::vector<int> joint_of_variable(model.num_variables(), -1);
  for (int k = 0; k < num_joints; ++k) {
    const ompl_cuda::RobotJoint& j = joints[k];
    if (model.joint_index(j.name) != k) fuzz::finding("joint '" + j.name + "' is not found by its name");
    if (j.parent_link < 0 || j.child_link <= j.parent_link || j.child_link >= num_links || links[j.child_link].parent_joint != k)
      fuzz::finding("joint '" + j.name + "' does not join a parent to a later child");
    fuzz::check_pose(j.origin, "joint '" + j.name + "' origin");
    if (j.type == JointType::Fixed) {
      if (j.variable >= 0 || j.mimic_of >= 0) fuzz::finding("a fixed joint with a value");
      continue;
    }
    const double n = std::sqrt(j.axis[0] * j.axis[0] + j.axis[1] * j.axis[1] + j.axis[2] * j.axis[2]);
    if (!(std::fabs(n - 1) < 1e-12)) fuzz::finding("joint '" + j.name + "' has an axis that is not unit");
    if (j.mimic_of >= 0) {
      if (j.variable >= 0) fuzz::finding("a mimic joint with a variable of its own");
      if (j.mimic_of >= num_joints || joints[j.mimic_of].variable < 0) fuzz::finding("a mimic of a joint that has no variable");
      if (!std::isfinite(j.mimic_multiplier) || !std::isfinite(j.mimic_offset)) fuzz::finding("a mimic whose factors are not finite");
    } else {
      if (j.variable < 0 || j.variable >= model.num_variables() || joint_of_variable[j.variable] >= 0)
        fuzz::finding("joint '" + j.name + "' has no variable of its own");
      joint_of_variable[j.variable] = k;
    }
  }
  std::vector<double> lower(model.num_variables()), upper(model.num_variables());
  const std::vector<double> state = model.default_state();
  if (static_cast<int>(state.size()) != model.num_variables()) fuzz::finding("a default state of another size");
  for (int v = 0; v < model.num_variables(); ++v) {
    if (joint_of_variable[v] < 0 || model.variable_name(v) != joints[joint_of_variable[v]].name)
      fuzz::finding("variable " + std::to_string(v) + " is no joint's");
    lower[v] = model.lower_bound(v), upper[v] = model.upper_bound(v);
    if (!std::isfinite(lower[v]) || !std::isfinite(upper[v]) || !(lower[v] <= upper[v]))
      fuzz::finding("variable " + std::to_string(v) + " has limits that are not a finite interval");
    if (joints[joint_of_variable[v]].type == JointType::Continuous && (lower[v] != -M_PI || upper[v] != M_PI))
      fuzz::finding("a continuous joint whose limits are not -pi, pi");
    if (!(lower[v] <= state[v] && state[v] <= upper[v])) fuzz::finding("a default state outside the limits");
  }
  check_poses(model, state, "default state");
  check_poses(model, lower, "lower bounds");
  check_poses(model, upper, "upper bounds");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  unsetenv("ROS_PACKAGE_PATH");
  scratch().write("fuzz/mesh.stl", std::string("solid mesh\nendsolid mesh\n"));
  scratch().write("mesh.stl", std::string("solid mesh\nendsolid mesh\n"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = scratch().write("robot.urdf", data, size);
  RobotModel model;
  try {
    model = RobotModel::load(path, "", {scratch().path()});
  } catch (const linalg_cuda::Error& error) {
    fuzz::checked_message(error, path, fuzz::line_count(data, size), data, size);
    return 0;
  }
  check_model(model);
  return 0;
}
