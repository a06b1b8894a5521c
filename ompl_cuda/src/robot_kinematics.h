#pragma once
// Forward kinematics of a RobotModel's tree, written once for the host and the device (LINALG_HD) with
// deterministic_trig.h's sin and cos, so that both compute the same bits: a joint's frame is its
// parent link's pose times the joint's origin times its motion (a rotation about the axis by the
// joint's value, or a translation along it).
#include "deterministic_trig.h"
#include "linalg_cuda/internal/host_device.h"

namespace ompl_cuda::detail {

// A joint as the kinematics read it (RobotJoint without names; types as JointType's values).
struct KinematicJoint {
  double rotation[9];     // the origin's rotation (row-major) ...
  double translation[3];  // ... and translation, in the parent link's frame
  double axis[3];
  int type;               // 0 revolute, 1 continuous, 2 prismatic, 3 fixed
  int parent_link, child_link;
  int variable;           // or -1
  int mimic_of;           // a joint index, or -1
  double mimic_multiplier, mimic_offset;
};

// out = a b for rigid transforms (rotation row-major, then translation); out may not alias a or b.
LINALG_HD void compose(const double* ra, const double* ta, const double* rb, const double* tb, double* r, double* t) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r[3 * i + j] = ra[3 * i] * rb[j] + ra[3 * i + 1] * rb[3 + j] + ra[3 * i + 2] * rb[6 + j];
    t[i] = ra[3 * i] * tb[0] + ra[3 * i + 1] * tb[1] + ra[3 * i + 2] * tb[2] + ta[i];
  }
}

// The joint's motion at value q: the rotation about the unit axis by q (Rodrigues), or the translation q axis.
LINALG_HD void joint_motion(const KinematicJoint& j, double q, double* r, double* t) {
  for (int k = 0; k < 9; ++k) r[k] = (k % 4 == 0) ? 1.0 : 0.0;
  t[0] = t[1] = t[2] = 0.0;
  if (j.type == 2) {
    for (int k = 0; k < 3; ++k) t[k] = q * j.axis[k];
  } else if (j.type != 3) {
    double s, c;
    deterministic_sincos(q, &s, &c);
    const double x = j.axis[0], y = j.axis[1], z = j.axis[2], v = 1.0 - c;
    r[0] = c + x * x * v;     r[1] = x * y * v - z * s; r[2] = x * z * v + y * s;
    r[3] = y * x * v + z * s; r[4] = c + y * y * v;     r[5] = y * z * v - x * s;
    r[6] = z * x * v - y * s; r[7] = z * y * v + x * s; r[8] = c + z * z * v;
  }
}

// The joint's value in the full state.
LINALG_HD double joint_value(const KinematicJoint* joints, int k, const double* variables) {
  const KinematicJoint& j = joints[k];
  if (j.mimic_of >= 0) {
    const KinematicJoint& m = joints[j.mimic_of];
    return j.mimic_multiplier * (m.variable >= 0 ? variables[m.variable] : 0.0) + j.mimic_offset;
  }
  return j.variable >= 0 ? variables[j.variable] : 0.0;
}

// The child link's pose (r, t) from its parent's (pr, pt) through joint j at value q: the parent times
// the joint's origin times its motion. A fixed joint has no motion to compose, and a rotation about
// the z axis (URDF's usual) changes two columns only, which saves two thirds of the product and is
// exact where Rodrigues' formula rounds (c + (1 - c) for the axis' own entry). r and t may not alias
// pr or pt.
LINALG_HD void child_pose(const double* pr, const double* pt, const KinematicJoint& j, double q, double* r, double* t) {
  if (j.type == 3) {
    compose(pr, pt, j.rotation, j.translation, r, t);
    return;
  }
  double frame_r[9], frame_t[3];
  compose(pr, pt, j.rotation, j.translation, frame_r, frame_t);
  if (j.type != 2 && j.axis[0] == 0.0 && j.axis[1] == 0.0 && j.axis[2] == 1.0) {
    double s, c;
    deterministic_sincos(q, &s, &c);
    for (int i = 0; i < 3; ++i) {
      r[3 * i] = frame_r[3 * i] * c + frame_r[3 * i + 1] * s;
      r[3 * i + 1] = frame_r[3 * i] * -s + frame_r[3 * i + 1] * c;
      r[3 * i + 2] = frame_r[3 * i + 2];
      t[i] = frame_t[i];
    }
    return;
  }
  double motion_r[9], motion_t[3];
  joint_motion(j, q, motion_r, motion_t);
  compose(frame_r, frame_t, motion_r, motion_t, r, t);
}

// Every link's pose, 12 values per link (rotation row-major, then translation), for the joints in tree
// order; the root link (0) at `root` (12 values), or at the identity when root is null.
LINALG_HD void link_poses(const KinematicJoint* joints, int num_joints, const double* variables, double* poses,
                          const double* root = nullptr) {
  for (int k = 0; k < 12; ++k) poses[k] = root ? root[k] : ((k < 9 && k % 4 == 0) ? 1.0 : 0.0);
  for (int k = 0; k < num_joints; ++k) {
    const KinematicJoint& j = joints[k];
    const double* parent = poses + 12 * j.parent_link;
    double* child = poses + 12 * j.child_link;
    child_pose(parent, parent + 9, j, joint_value(joints, k, variables), child, child + 9);
  }
}

}  // namespace ompl_cuda::detail
