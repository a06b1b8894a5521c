#pragma once
// A robot as ROS and MoveIt users describe it: the kinematic tree of a URDF (read with urdfdom) and
// the semantics of an optional SRDF (planning groups, named states, link pairs whose collisions are
// not checked). Joints revolute, continuous, prismatic and fixed, with mimic joints; any tree (two
// arms, an arm on a base). Mesh files named `package://NAME/...` or relative to the URDF are resolved
// through a package path, as ROS does.
//
//   ompl_cuda::RobotModel panda = ompl_cuda::RobotModel::load("panda.urdf", "panda.srdf", {"/ws/src"});
//   const ompl_cuda::PlanningGroup arm = panda.group("panda_arm");
//   std::vector<ompl_cuda::Transform> poses;
//   panda.link_poses(panda.default_state().data(), &poses);
//
// Errors (a file that does not parse, a joint type not taken, joints that are not a tree, a group
// naming what the URDF lacks, a mesh not found, an angle beyond 1e5 rad or a length beyond 1e6 m, where
// the kinematics would lose their accuracy or overflow) throw linalg_cuda::ParseError naming the file
// and, where the XML tells, the line.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ompl_cuda {
namespace detail {
struct KinematicJoint;
}

// A rigid transform: p' = rotation p + translation (rotation row-major).
struct Transform {
  double rotation[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double translation[3] = {0, 0, 0};
};

// The transform of a position and a quaternion (x y z w, normalised here).
Transform transform_from(const double position[3], const double quaternion_xyzw[4]);
Transform compose(const Transform& a, const Transform& b);  // a b
Transform inverse(const Transform& t);
bool is_finite(const Transform& t);  // every value finite

enum class JointType { Revolute, Continuous, Prismatic, Fixed };

// A collision shape of a link, in the link's frame (after `origin`).
struct CollisionShape {
  enum class Kind { Box, Cylinder, Sphere, Mesh };
  Kind kind = Kind::Box;
  Transform origin;
  double size[3] = {0, 0, 0};  // box: x y z; cylinder: radius, length; sphere: radius
  std::string mesh_file;        // mesh: the resolved path
  double mesh_scale[3] = {1, 1, 1};
};

struct RobotLink {
  std::string name;
  int parent_joint = -1;  // -1 for the root
  std::vector<CollisionShape> collision;
};

struct RobotJoint {
  std::string name;
  JointType type = JointType::Fixed;
  int parent_link = -1, child_link = -1;
  Transform origin;  // the child frame at zero motion, in the parent link's frame
  double axis[3] = {1, 0, 0};  // unit, in the joint frame
  // Its value: variables[variable] where it has one; mimic * the other joint's value + offset for a
  // mimic joint; none for a fixed one.
  int variable = -1;
  int mimic_of = -1;  // a joint index
  double mimic_multiplier = 1, mimic_offset = 0;
};

// A planning group (SRDF): the variables it moves, in the model's variable order; the others are held.
struct PlanningGroup {
  std::string name;
  std::vector<int> variables;
  std::vector<std::string> joint_names;  // the joints of those variables
};

class RobotModel {
 public:
  // The URDF and, when srdf_file is not empty, the SRDF; package_path: the folders that hold ROS
  // packages (a package NAME is the folder NAME in one of them, searched in order); the environment's
  // ROS_PACKAGE_PATH comes after them.
  static RobotModel load(const std::string& urdf_file, const std::string& srdf_file = "",
                         const std::vector<std::string>& package_path = {});

  const std::string& name() const { return name_; }
  // Links in tree order (a parent before its children), joints likewise: joints()[k] moves a link whose
  // parent comes earlier.
  const std::vector<RobotLink>& links() const { return links_; }
  const std::vector<RobotJoint>& joints() const { return joints_; }
  int link_index(const std::string& name) const;   // -1 where there is none
  int joint_index(const std::string& name) const;  // -1 where there is none

  // One variable per revolute, continuous or prismatic joint that is not a mimic, in tree order.
  int num_variables() const { return static_cast<int>(variable_joint_.size()); }
  const std::string& variable_name(int v) const { return joints_[variable_joint_[v]].name; }
  // The URDF's limits; a continuous joint's are -pi, pi (OMPL's bounds for an angle).
  double lower_bound(int v) const { return lower_[v]; }
  double upper_bound(int v) const { return upper_[v]; }
  // Every variable at 0, moved inside its limits.
  std::vector<double> default_state() const;

  // SRDF content (empty without an SRDF).
  std::vector<std::string> group_names() const;
  PlanningGroup group(const std::string& name) const;  // throws InvalidArgument for an unknown group
  // A group_state: the full state with the group's joints set (others from base).
  std::vector<double> named_state(const std::string& group, const std::string& state,
                                  const std::vector<double>& base) const;
  // Pairs of link indices (first < second) whose collisions are not checked.
  const std::vector<std::pair<int, int>>& disabled_collisions() const { return disabled_; }

  // Every link's pose in the root frame for the full state `variables` (num_variables() values).
  void link_poses(const double* variables, std::vector<Transform>* poses) const;
  // The joints as the kinematics read them (robot_kinematics.h), for the batched checks.
  const std::vector<detail::KinematicJoint>& kinematic_joints() const;

 private:
  friend class RobotModelReader;
  std::string name_;
  std::vector<RobotLink> links_;
  std::vector<RobotJoint> joints_;
  std::vector<int> variable_joint_;
  std::vector<double> lower_, upper_;
  std::map<std::string, int> link_by_name_, joint_by_name_;
  std::map<std::string, PlanningGroup> groups_;
  std::map<std::pair<std::string, std::string>, std::map<std::string, double>> group_states_;
  std::vector<std::pair<int, int>> disabled_;
  std::shared_ptr<const std::vector<detail::KinematicJoint>> kinematics_;  // joints_ as the kinematics read them
};

}  // namespace ompl_cuda
