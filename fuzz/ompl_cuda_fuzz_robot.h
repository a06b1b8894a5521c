#pragma once
// The robot that the SRDF and sphere file harnesses read their inputs against: the Panda's kinematic
// tree as the shared data's panda.urdf has it (the same link and joint names, origins and limits, the
// mimic finger), with boxes and cylinders for its meshes, and one continuous joint more, so that the
// panda.srdf seeds name what it has and every joint type is there. Also the pose check the robot
// readers' harnesses share.
#include <cmath>
#include <string>

#include "fuzz_support.h"
#include "ompl_cuda/robot_model.h"

namespace fuzz {

// Whether r (row-major) is a rotation: orthonormal rows to 1e-9, determinant positive.
inline bool is_rotation(const double* r) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double dot = r[3 * i] * r[3 * j] + r[3 * i + 1] * r[3 * j + 1] + r[3 * i + 2] * r[3 * j + 2];
      if (!(std::fabs(dot - (i == j ? 1.0 : 0.0)) < 1e-9)) return false;
    }
  const double det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6]) + r[2] * (r[3] * r[7] - r[4] * r[6]);
  return det > 0;
}

// A finding unless the pose is finite and its rotation one.
inline void check_pose(const ompl_cuda::Transform& t, const std::string& what) {
  if (!ompl_cuda::is_finite(t)) finding(what + " is not finite");
  if (!is_rotation(t.rotation)) finding(what + " has no rotation matrix");
}

inline const char* panda_like_urdf() {
  return R"(<?xml version="1.0"?>
<robot name="panda">
  <link name="panda_link0"><collision><geometry><cylinder radius="0.1" length="0.2"/></geometry></collision></link>
  <link name="panda_link1"><collision><origin xyz="0 0 -0.1"/><geometry><cylinder radius="0.07" length="0.2"/></geometry></collision></link>
  <joint name="panda_joint1" type="revolute"><origin rpy="0 0 0" xyz="0 0 0.333"/><parent link="panda_link0"/><child link="panda_link1"/><axis xyz="0 0 1"/><limit effort="87" lower="-2.9671" upper="2.9671" velocity="2.3925"/></joint>
  <link name="panda_link2"><collision><geometry><sphere radius="0.08"/></geometry></collision></link>
  <joint name="panda_joint2" type="revolute"><origin rpy="-1.57079632679 0 0" xyz="0 0 0"/><parent link="panda_link1"/><child link="panda_link2"/><axis xyz="0 0 1"/><limit effort="87" lower="-1.8326" upper="1.8326" velocity="2.3925"/></joint>
  <link name="panda_link3"><collision><geometry><box size="0.1 0.1 0.2"/></geometry></collision></link>
  <joint name="panda_joint3" type="revolute"><origin rpy="1.57079632679 0 0" xyz="0 -0.316 0"/><parent link="panda_link2"/><child link="panda_link3"/><axis xyz="0 0 1"/><limit effort="87" lower="-2.9671" upper="2.9671" velocity="2.3925"/></joint>
  <link name="panda_link4"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="panda_joint4" type="revolute"><origin rpy="1.57079632679 0 0" xyz="0.0825 0 0"/><parent link="panda_link3"/><child link="panda_link4"/><axis xyz="0 0 1"/><limit effort="87" lower="-3.1416" upper="0.0873" velocity="2.3925"/></joint>
  <link name="panda_link5"><collision><geometry><cylinder radius="0.06" length="0.3"/></geometry></collision></link>
  <joint name="panda_joint5" type="revolute"><origin rpy="-1.57079632679 0 0" xyz="-0.0825 0.384 0"/><parent link="panda_link4"/><child link="panda_link5"/><axis xyz="0 0 1"/><limit effort="12" lower="-2.9671" upper="2.9671" velocity="2.8710"/></joint>
  <link name="panda_link6"><collision><geometry><box size="0.1 0.08 0.08"/></geometry></collision></link>
  <joint name="panda_joint6" type="revolute"><origin rpy="1.57079632679 0 0" xyz="0 0 0"/><parent link="panda_link5"/><child link="panda_link6"/><axis xyz="0 0 1"/><limit effort="12" lower="-0.0873" upper="3.8223" velocity="2.8710"/></joint>
  <link name="panda_link7"><collision><geometry><cylinder radius="0.05" length="0.1"/></geometry></collision></link>
  <joint name="panda_joint7" type="revolute"><origin rpy="1.57079632679 0 0" xyz="0.088 0 0"/><parent link="panda_link6"/><child link="panda_link7"/><axis xyz="0 0 1"/><limit effort="12" lower="-2.9671" upper="2.9671" velocity="2.8710"/></joint>
  <link name="panda_link8"/>
  <joint name="panda_joint8" type="fixed"><origin rpy="0 0 0" xyz="0 0 0.107"/><parent link="panda_link7"/><child link="panda_link8"/></joint>
  <joint name="panda_hand_joint" type="fixed"><parent link="panda_link8"/><child link="panda_hand"/><origin rpy="0 0 -0.785398163397" xyz="0 0 0"/></joint>
  <link name="panda_hand"><collision><geometry><box size="0.05 0.2 0.06"/></geometry></collision></link>
  <link name="panda_leftfinger"><collision><geometry><box size="0.02 0.02 0.05"/></geometry></collision></link>
  <link name="panda_rightfinger"><collision><origin rpy="0 0 3.14159265359" xyz="0 0 0"/><geometry><box size="0.02 0.02 0.05"/></geometry></collision></link>
  <joint name="panda_finger_joint1" type="prismatic"><parent link="panda_hand"/><child link="panda_leftfinger"/><origin rpy="0 0 0" xyz="0 0 0.0584"/><axis xyz="0 1 0"/><limit effort="20" lower="0.0" upper="0.04" velocity="0.2"/></joint>
  <joint name="panda_finger_joint2" type="prismatic"><parent link="panda_hand"/><child link="panda_rightfinger"/><origin rpy="0 0 0" xyz="0 0 0.0584"/><axis xyz="0 -1 0"/><limit effort="20" lower="0.0" upper="0.04" velocity="0.2"/><mimic joint="panda_finger_joint1"/></joint>
  <link name="camera_link"><collision><geometry><box size="0.03 0.1 0.03"/></geometry></collision></link>
  <joint name="camera_joint" type="continuous"><parent link="panda_link0"/><child link="camera_link"/><origin xyz="0.2 0 0.1"/><axis xyz="0 0 1"/></joint>
</robot>
)";
}

// Writes the robot's URDF into `dir`; returns its path.
inline std::string write_panda_like(const ScratchDir& dir) { return dir.write("panda_like.urdf", panda_like_urdf()); }

// The robot, read from a file in `dir`; a harness that cannot read it has nothing to test.
inline ompl_cuda::RobotModel load_panda_like(const ScratchDir& dir) {
  const std::string urdf = write_panda_like(dir);
  try {
    return ompl_cuda::RobotModel::load(urdf);
  } catch (const linalg_cuda::Error& error) {
    finding(std::string("the harness' own robot does not read: ") + error.what());
  }
}

}  // namespace fuzz
