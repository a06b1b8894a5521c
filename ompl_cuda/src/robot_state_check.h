#pragma once
// A whole state's check, written once for the host and the device (LINALG_HD), in the order that
// settles most states soonest: the bounds; the self pairs' grids (a touching cell settles the state
// before any kinematics); the links placed one at a time down the tree, each tested against the scene
// as soon as it is placed; then the self pairs the grids leave open, their links' bounds first.
// Only the walk's current pose lives in registers; what a check keeps (the full state, the few poses
// a branch of the tree returns to, the self-pair links' bound centres) is small (CheckScratch).
#include "robot_collision_math.h"

namespace ompl_cuda::detail {

// A check's scratch: the full state (num_variables values), the kept link poses (12 values each,
// RobotCheckView::num_kept), and the bound centres of the self pairs' links: centre s's coordinate i
// at centres[(3 * s + i) * stride], so that a GPU block keeps its threads' centres side by side in
// shared memory.
struct CheckScratch {
  double* full;
  double* kept;
  float* centres;
  int stride;
};

// OMPL's RealVectorStateSpace::satisfiesBounds slack (std::numeric_limits<double>::epsilon()).
constexpr double kBoundsSlack = 2.220446049250313e-16;

// Whether every group value (value(k), k < dimension) is finite and within the bounds as OMPL's
// satisfiesBounds tests them; full receives the full state.
template <typename Value>
LINALG_HD bool fill_state(const RobotCheckView& v, const Value& value, double* full) {
  for (int k = 0; k < v.num_variables; ++k) full[k] = v.held[k];
  for (int k = 0; k < v.dimension; ++k) {
    const double x = value(k);
    if (!isfinite(x) || x - kBoundsSlack > v.high[k] || x + kBoundsSlack < v.low[k]) return false;
    full[v.group[k]] = x;
  }
  return true;
}

// The cells of the first 64 self pairs' grids, read once per state (two bits each); later pairs'
// cells are read again where needed.
struct SelfCells {
  unsigned long long bits[2];
  LINALG_HD unsigned get(const RobotCheckView& v, const double* full, int q) const {
    if (q < 64) return static_cast<unsigned>(bits[q >> 5] >> (2 * (q & 31))) & 3u;
    return self_pair_cell(v.self_tables[q], v.self_table_bits, full);
  }
};

// Whether no self pair's grid says touching; cells receives the cells (kSelfPairEither for the pairs
// without a grid).
LINALG_HD bool self_grids_allow(const RobotCheckView& v, const double* full, SelfCells* cells) {
  cells->bits[0] = cells->bits[1] = 0;
  for (int k = 0; k < v.num_gridded_pairs; ++k) {
    const int q = v.gridded_pairs[k];
    const unsigned cell = self_pair_cell(v.self_tables[q], v.self_table_bits, full);
    if (cell == kSelfPairTouching) return false;
    if (q < 64) cells->bits[q >> 5] |= static_cast<unsigned long long>(cell) << (2 * (q & 31));
  }
  return true;
}

// Link l's bound's centre at pose, c; kept in the scratch when a self pair needs it.
LINALG_HD void place_link_bound(const RobotCheckView& v, int l, const LinkPose& pose, const CheckScratch& s, float* c) {
  place(pose, v.link_bounds[l], c);
  const int slot = v.centre_slot[l];
  if (slot >= 0)
    for (int i = 0; i < 3; ++i) s.centres[(3 * slot + i) * s.stride] = c[i];
}

// Whether the sphere (centre c, radius r) reaches primitive p's bound: the first, cheapest test.
LINALG_HD bool near_primitive(const RobotCheckView& v, int p, const float* c, float r) {
  const CheckSphere near = v.primitive_bounds[p];
  const float nc[3] = {near.x, near.y, near.z};
  return spheres_touch(c, r, nc, near.r);
}

// Whether link l, at pose (single precision), touches neither a primitive nor the cloud: its bound
// first, then its groups and spheres (link_touches).
LINALG_HD bool link_free_of_scene(const RobotCheckView& v, int l, const LinkPose& pose, const CheckScratch& s) {
  const CheckSphere bound = v.link_bounds[l];
  if (bound.r < 0) return true;
  float bc[3];
  place_link_bound(v, l, pose, s, bc);
  for (int p = 0; p < v.num_primitives; ++p) {
    if (!near_primitive(v, p, bc, bound.r)) continue;
    const CheckPrimitive<float> primitive = v.primitives[p];
    if (sphere_touches(bc, bound.r, primitive) &&
        link_touches(v, l, pose, [&](const float* c, float r) { return sphere_touches(c, r, primitive); }))
      return false;
  }
  return !(v.cloud.distance2 && sphere_touches_cloud(bc, bound.r, v.cloud) &&
           link_touches(v, l, pose, [&](const float* c, float r) { return sphere_touches_cloud(c, r, v.cloud); }));
}

// Places the child link of the walk's step k: pose holds the link placed last on entry (the root's
// before the first step) and the child's pose on return, read from the root or a kept pose at a
// branch of the tree; the child's pose is kept where a later step returns to it. Returns the child.
LINALG_HD int place_step_child(const RobotCheckView& v, int k, const CheckScratch& s, double* pose) {
  const KinematicStep step = v.steps[k];
  if (step.parent == kFromRoot)
    for (int i = 0; i < 12; ++i) pose[i] = v.root[i];
  else if (step.parent >= 0)
    for (int i = 0; i < 12; ++i) pose[i] = s.kept[12 * step.parent + i];
  const KinematicJoint& j = v.joints[step.joint];
  double child[12];
  child_pose(pose, pose + 9, j, joint_value(v.joints, step.joint, s.full), child, child + 9);
  for (int i = 0; i < 12; ++i) pose[i] = child[i];
  if (step.keep >= 0)
    for (int i = 0; i < 12; ++i) s.kept[12 * step.keep + i] = pose[i];
  return j.child_link;
}

// Whether no link touches the scene, from fill_state's full state: the root link, then each joint's
// child as the walk places it (the previous link's pose carried in registers).
LINALG_HD bool robot_free_of_scene(const RobotCheckView& v, const CheckScratch& s) {
  double pose[12];
  for (int k = 0; k < 12; ++k) pose[k] = v.root[k];
  if (!link_free_of_scene(v, 0, single_precision_pose(pose), s)) return false;
  for (int k = 0; k < v.num_joints; ++k) {
    const int link = place_step_child(v, k, s, pose);
    if (!link_free_of_scene(v, link, single_precision_pose(pose), s)) return false;
  }
  return true;
}

// Self pair q's link b in link a's frame, composed in double precision down from their common link,
// then rounded: every check of the pair, on either processor, places b's spheres with these bits.
LINALG_HD LinkPose pair_relative_pose(const RobotCheckView& v, int q, const double* full) {
  const PairPath path = v.pair_paths[q];
  double a[12], b[12];
  for (int side = 0; side < 2; ++side) {
    double* pose = side == 0 ? a : b;
    for (int k = 0; k < 12; ++k) pose[k] = (k < 9 && k % 4 == 0) ? 1.0 : 0.0;
    const int first = path.first + (side == 0 ? 0 : path.to_a), count = side == 0 ? path.to_a : path.to_b;
    for (int k = first; k < first + count; ++k) {
      const int joint = v.path_joints[k];
      double child[12];
      child_pose(pose, pose + 9, v.joints[joint], joint_value(v.joints, joint, full), child, child + 9);
      for (int i = 0; i < 12; ++i) pose[i] = child[i];
    }
  }
  // a^-1 b = (a_r^T b_r, a_r^T (b_t - a_t)).
  double r[12];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
    r[9 + i] = a[i] * (b[9] - a[9]) + a[3 + i] * (b[10] - a[10]) + a[6 + i] * (b[11] - a[11]);
  }
  return single_precision_pose(r);
}

// Whether no self pair touches, from the full state, the cells and robot_free_of_scene's bound
// centres: the pairs the grids leave open whose links' bounds touch go to touch(q), which decides them
// (links_touch) or hands them to a tile of GPU lanes.
template <typename Touch>
LINALG_HD bool robot_free_of_itself(const RobotCheckView& v, const CheckScratch& s, const SelfCells& cells,
                                    const Touch& touch) {
  for (int q = 0; q < v.num_self_pairs; ++q) {
    const SelfPairBounds p = v.pair_bounds[q];
    if (p.slot_a < 0 || cells.get(v, s.full, q) == kSelfPairApart) continue;
    float ca[3], cb[3];
    for (int i = 0; i < 3; ++i) {
      ca[i] = s.centres[(3 * p.slot_a + i) * s.stride];
      cb[i] = s.centres[(3 * p.slot_b + i) * s.stride];
    }
    if (spheres_touch(ca, p.radius_a, cb, p.radius_b) && touch(q)) return false;
  }
  return true;
}

// Whether self pair q's spheres touch, decided by the calling thread.
LINALG_HD bool self_pair_touches(const RobotCheckView& v, int q, const double* full) {
  return links_touch(v, v.self_pairs[2 * q], v.self_pairs[2 * q + 1], pair_relative_pose(v, q, full));
}

// Whether the group's state is valid: within the bounds, and the robot's spheres touch neither a
// primitive, nor the point cloud, nor each other on a self pair.
template <typename Value>
LINALG_HD bool robot_state_valid(const RobotCheckView& v, const Value& value, const CheckScratch& s) {
  SelfCells cells;
  return fill_state(v, value, s.full) && self_grids_allow(v, s.full, &cells) && robot_free_of_scene(v, s) &&
         robot_free_of_itself(v, s, cells, [&](int q) { return self_pair_touches(v, q, s.full); });
}

}  // namespace ompl_cuda::detail
