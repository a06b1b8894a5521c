#pragma once
// The scene part of the GPU's state checks, decided by a warp for its lanes' states together. The
// lanes walk the tree in step, one link at a time; the groups and spheres that the links near a
// primitive (or the cloud) must test are pooled across the lanes and dealt out 32 at a time, so that
// one lane's near link does not keep the other 31 idle while it tests its groups one by one. Every
// test is one that robot_free_of_scene makes (robot_state_check.h), on the same values, and a lane's
// state touches the scene when one of its tests touches: the decisions are the CPU's.
#include "robot_state_check.h"

namespace ompl_cuda::detail {

constexpr unsigned kAllLanes = 0xffffffffu;

// Lane `from`'s pose, to the lane that asks for it (every lane takes part).
__device__ inline LinkPose shfl_pose(const LinkPose& pose, int from) {
  LinkPose p;
  for (int k = 0; k < 9; ++k) p.r[k] = __shfl_sync(kAllLanes, pose.r[k], from);
  for (int k = 0; k < 3; ++k) p.t[k] = __shfl_sync(kAllLanes, pose.t[k], from);
  return p;
}

// The lanes, among `near`, whose link l at their pose has a sphere that touches(centre, radius) finds
// touching, as link_touches decides it; touches is the same test for every lane. One round gives each
// lane a (near lane, group) to test; then each group that passes gets kMaxGroupSpheres lanes, one per
// sphere, four groups a round.
template <typename Touches>
__device__ unsigned warp_links_touch(const RobotCheckView& v, int l, const LinkPose& pose, unsigned near,
                                     const Touches& touches) {
  constexpr int kSlots = 32 / kMaxGroupSpheres;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int first = v.first_group[l], groups = v.first_group[l + 1] - first;
  const int items = __popc(near) * groups;  // a link with a bound has groups
  unsigned hit = 0;
  for (int base = 0; base < items; base += 32) {
    const int k = base + lane;
    const int owner = k < items ? static_cast<int>(__fns(near, 0, k / groups + 1)) : lane;
    const int g = first + k % groups;
    bool open = false;
    {
      const LinkPose at = shfl_pose(pose, owner);
      if (k < items && !(hit >> owner & 1u)) {
        const CheckSphere bound = v.group_bounds[g];
        float c[3];
        place(at, bound, c);
        open = touches(c, bound.r);
      }
    }
    const int slot = lane / kMaxGroupSpheres, j = lane % kMaxGroupSpheres;
    for (unsigned open_groups = __ballot_sync(kAllLanes, open); open_groups != 0;) {
      const unsigned from = __fns(open_groups, 0, slot + 1);  // 0xffffffff: no group for this slot
      for (int t = 0; t < kSlots; ++t) open_groups &= open_groups - 1;
      const int src = from < 32 ? static_cast<int>(from) : lane;
      const int group = __shfl_sync(kAllLanes, g, src), group_owner = __shfl_sync(kAllLanes, owner, src);
      const LinkPose sphere_pose = shfl_pose(pose, group_owner);
      bool touched = false;
      const int sphere = v.first_sphere[group] + j;
      if (from < 32 && sphere < v.first_sphere[group + 1]) {
        const CheckSphere si = v.spheres[sphere];
        float c[3];
        place(sphere_pose, si, c);
        touched = touches(c, si.r);
      }
      hit |= __reduce_or_sync(kAllLanes, touched ? 1u << group_owner : 0u);
    }
  }
  return hit;
}

// Whether the lane's link l, at pose, touches neither a primitive nor the cloud, for the lanes with
// `live` set (the others answer false): link_free_of_scene's tests, the link bound's by each lane, its
// groups' and spheres' pooled (warp_links_touch).
__device__ inline bool warp_link_free_of_scene(const RobotCheckView& v, int l, const LinkPose& pose,
                                               const CheckScratch& s, bool live) {
  const CheckSphere bound = v.link_bounds[l];
  if (bound.r < 0) return live;
  const unsigned lane = threadIdx.x & 31;
  float bc[3];
  place_link_bound(v, l, pose, s, bc);
  unsigned hit = 0;
  for (int p = 0; p < v.num_primitives; ++p) {
    bool near = live && !(hit >> lane & 1u) && near_primitive(v, p, bc, bound.r);
    if (__ballot_sync(kAllLanes, near) == 0) continue;
    const CheckPrimitive<float> primitive = v.primitives[p];
    near = near && sphere_touches(bc, bound.r, primitive);
    const unsigned lanes = __ballot_sync(kAllLanes, near);
    if (lanes != 0)
      hit |= warp_links_touch(v, l, pose, lanes,
                              [&](const float* c, float r) { return sphere_touches(c, r, primitive); });
  }
  if (v.cloud.distance2) {
    const bool near = live && !(hit >> lane & 1u) && sphere_touches_cloud(bc, bound.r, v.cloud);
    const unsigned lanes = __ballot_sync(kAllLanes, near);
    if (lanes != 0)
      hit |= warp_links_touch(v, l, pose, lanes,
                              [&](const float* c, float r) { return sphere_touches_cloud(c, r, v.cloud); });
  }
  return live && !(hit >> lane & 1u);
}

// robot_free_of_scene for the lanes with `live` set, the warp's lanes walking the tree in step; the
// others answer false. Every lane's scratch holds a full state (fill_state's), and every lane places
// its links, live or not: the walk's steps then take no branch of their own.
__device__ inline bool warp_robot_free_of_scene(const RobotCheckView& v, const CheckScratch& s, bool live) {
  double pose[12];
  for (int k = 0; k < 12; ++k) pose[k] = v.root[k];
  live = warp_link_free_of_scene(v, 0, single_precision_pose(pose), s, live);
  for (int k = 0; k < v.num_joints; ++k) {
    const int link = place_step_child(v, k, s, pose);
    live = warp_link_free_of_scene(v, link, single_precision_pose(pose), s, live);
  }
  return live;
}

}  // namespace ompl_cuda::detail
