#pragma once
// What the robot's state checks read (robot_collision_math.h's RobotCheckView), in host arrays: the
// kinematics, the planning group and its bounds, the spheres in single precision in groups of
// neighbours with their groups' and links' bounding spheres, the self pairs, the scene's primitives
// and the distance field of its point cloud and meshes. The CPU checks view these arrays; the
// GPU engine uploads them.
#include <vector>

#include "ompl_cuda/robot_collision_model.h"
#include "robot_state_check.h"
#include "self_pair_table.h"

namespace ompl_cuda::detail {

class RobotCheckData {
 public:
  // group: the full state's index of each planning-group value, with low and high its bounds; every
  // other variable keeps its value in held (num_variables values).
  RobotCheckData(const RobotCollisionModel& robot, const Transform& base, std::vector<int> group,
                 std::vector<double> held, std::vector<double> low, std::vector<double> high, bool self_collision);

  // The primitives of `scene`, and the grid and points of the distance field of its point cloud and
  // meshes within the robot's reach, replacing those of an earlier one; the field built here on the
  // CPU, or, with build_cloud false, left for the caller to build from field_points (cloud_distance2,
  // cloud_grid.voxels() values).
  void set_scene(const Scene& scene, bool build_cloud = true);

  // A view of these arrays (valid while this object lives and is not changed).
  RobotCheckView view() const;

  std::vector<KinematicJoint> joints;
  std::vector<KinematicStep> steps;    // the walk through the tree (robot_state_check.h)
  int num_kept = 0;
  std::vector<int> group, first_group, first_sphere, self_pairs, centre_slot, path_joints;
  std::vector<PairPath> pair_paths;
  std::vector<SelfPairBounds> pair_bounds;
  int num_centres = 0;
  std::vector<double> held, low, high;
  std::vector<CheckSphere> link_bounds, group_bounds, spheres;
  SelfPairTables self_tables;          // one grid per self pair (self_pair_table.h) ...
  std::vector<int> gridded_pairs;      // ... and the pairs whose grid has axes
  std::vector<CheckPrimitive<float>> primitives;
  std::vector<CheckSphere> primitive_bounds;
  CloudGrid cloud_grid;                // no voxels without a cloud or mesh within reach
  std::vector<float> field_points;     // x y z each: the cloud's points, then one per voxel a mesh touches
  std::vector<float> cloud_distance2;
  double root[12];

 private:
  float padding_ = 0;  // how far the spheres' radii reach beyond the cover, for single-precision rounding
  double reach_low_[3], reach_high_[3];  // the box every sphere stays in, whatever the state
};

// A check's scratch in host memory (robot_state_check.h): fit(data) sizes it for data's checks and
// views it, growing it only when data needs more.
struct HostCheckScratch {
  std::vector<double> full, kept;
  std::vector<float> centres;
  CheckScratch fit(const RobotCheckData& data) {
    full.resize(data.held.size());
    kept.resize(12 * data.num_kept);
    centres.resize(3 * data.num_centres);
    return {full.data(), kept.data(), centres.data(), 1};
  }
};

// The full state of a robot as a group of all its variables, unbounded: what in_collision checks.
RobotCheckData whole_robot_check_data(const RobotCollisionModel& robot, const Transform& base, bool self_collision);

}  // namespace ompl_cuda::detail
