#pragma once
// The robot checks' decision, written once for the host and the device (LINALG_HD): a sphere against
// a scene primitive (sphere, box, cylinder, capsule, each in its own frame), a sphere against a
// sphere, and a whole state (robot_state_valid). Closed sets: touching is a collision, as in the
// chain's checks. The module compiles without fused multiply-adds, so both sides compute the same
// bits and decide identically.
#include <math.h>
#include <string.h>

#include "linalg_cuda/internal/host_device.h"
#include "cloud_distance_field.h"
#include "robot_kinematics.h"
#include "self_pair_table.h"

namespace ompl_cuda::detail {

// A scene primitive as the checks read it: the inverse of its pose (world to primitive frame) and sizes.
template <typename T>
struct CheckPrimitive {
  T rotation[9];     // transposed pose rotation, row-major
  T translation[3];  // -rotation * pose translation
  T size[3];         // Primitive::size
  int kind;          // Primitive::Kind's value: 0 sphere, 1 box, 2 cylinder, 3 capsule
};

template <typename T>
LINALG_HD T clamp_value(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// Whether the sphere (centre c in the world, radius r) touches the primitive.
template <typename T>
LINALG_HD bool sphere_touches(const T* c, T r, const CheckPrimitive<T>& p) {
  T q[3];
  for (int i = 0; i < 3; ++i)
    q[i] = p.rotation[3 * i] * c[0] + p.rotation[3 * i + 1] * c[1] + p.rotation[3 * i + 2] * c[2] + p.translation[i];
  if (p.kind == 0) {
    const T reach = r + p.size[0];
    return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] <= reach * reach;
  }
  if (p.kind == 1) {
    T d2 = 0;
    for (int i = 0; i < 3; ++i) {
      const T e = fabs(q[i]) - p.size[i] / 2;
      if (e > 0) d2 += e * e;
    }
    return d2 <= r * r;
  }
  if (p.kind == 2) {
    const T radial = sqrt(q[0] * q[0] + q[1] * q[1]) - p.size[0], axial = fabs(q[2]) - p.size[1] / 2;
    const T a = radial > 0 ? radial : T(0), b = axial > 0 ? axial : T(0);
    return a * a + b * b <= r * r;
  }
  const T z = q[2] - clamp_value(q[2], -p.size[1] / 2, p.size[1] / 2);
  const T reach = r + p.size[0];
  return q[0] * q[0] + q[1] * q[1] + z * z <= reach * reach;
}

template <typename T>
LINALG_HD bool spheres_touch(const T* a, T ra, const T* b, T rb) {
  const T dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2], reach = ra + rb;
  return dx * dx + dy * dy + dz * dz <= reach * reach;
}

// A sphere as the state checks store it (centre, radius), in single precision: the spheres' radii
// are padded to cover its rounding (RobotCheckData), so a sphere that touches in exact arithmetic
// also touches in single precision.
struct CheckSphere {
  float x, y, z, r;
};

// Everything one state's check reads, as pointers into host or device memory (RobotCheckData). Each
// link's spheres come in groups of neighbours, and each group and each link has a sphere around all
// of its spheres: a test reaches a sphere only when its link's and its group's bounds pass it.
struct RobotCheckView {
  const KinematicJoint* joints;
  int num_joints, num_links, num_variables;
  double root[12];                     // the robot's root link in the scene frame
  int dimension;                       // the planning group's values ...
  const int* group;                    // ... and where each goes in the full state
  const double* held;                  // the full state's other values
  const double* low;                   // the space's bounds, per group value
  const double* high;
  const CheckSphere* link_bounds;      // per link, around all of its spheres (r < 0: it has none)
  const int* first_group;              // num_links + 1: link l's groups are first_group[l] .. [l + 1] - 1
  const CheckSphere* group_bounds;     // per group, around its spheres
  const int* first_sphere;             // groups + 1: group g's spheres are first_sphere[g] .. [g + 1] - 1
  const CheckSphere* spheres;          // in their link's frame
  const int* self_pairs;               // link pairs tested against each other, two indices each
  int num_self_pairs;
  const SelfPairTable* self_tables;    // per self pair, its grid of answers (self_pair_table.h) ...
  const unsigned* self_table_bits;     // ... and their cells
  const CheckPrimitive<float>* primitives;
  int num_primitives;
  CloudView cloud;                     // the scene's point cloud (cloud.distance2 null without one)
};

// A link's pose in the scene frame, in single precision.
struct LinkPose {
  float r[9], t[3];
};

LINALG_HD LinkPose single_precision_pose(const double* pose) {
  LinkPose p;
  for (int k = 0; k < 9; ++k) p.r[k] = static_cast<float>(pose[k]);
  for (int k = 0; k < 3; ++k) p.t[k] = static_cast<float>(pose[9 + k]);
  return p;
}

// The sphere's centre in the scene frame.
LINALG_HD void place(const LinkPose& p, const CheckSphere& s, float* c) {
  for (int i = 0; i < 3; ++i) c[i] = p.r[3 * i] * s.x + p.r[3 * i + 1] * s.y + p.r[3 * i + 2] * s.z + p.t[i];
}

// Whether one of link l's spheres touches what touches(centre, radius) tests, each group's bound
// tested first.
template <typename Touches>
LINALG_HD bool link_touches(const RobotCheckView& v, int l, const LinkPose& pose, const Touches& touches) {
  for (int g = v.first_group[l]; g < v.first_group[l + 1]; ++g) {
    float c[3];
    place(pose, v.group_bounds[g], c);
    if (!touches(c, v.group_bounds[g].r)) continue;
    for (int s = v.first_sphere[g]; s < v.first_sphere[g + 1]; ++s) {
      place(pose, v.spheres[s], c);
      if (touches(c, v.spheres[s].r)) return true;
    }
  }
  return false;
}

// A group holds at most this many spheres (RobotCheckData makes them so).
constexpr int kMaxGroupSpheres = 8;

// Link b's pose in link a's frame (a^-1 b), from their poses in the scene frame.
LINALG_HD LinkPose relative_pose(const LinkPose& a, const LinkPose& b) {
  LinkPose r;
  float d[3];
  for (int i = 0; i < 3; ++i) d[i] = b.t[i] - a.t[i];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r.r[3 * i + j] = a.r[i] * b.r[j] + a.r[3 + i] * b.r[3 + j] + a.r[6 + i] * b.r[6 + j];
    r.t[i] = a.r[i] * d[0] + a.r[3 + i] * d[1] + a.r[6 + i] * d[2];
  }
  return r;
}

// Whether a sphere of link a touches a sphere of link b (b_in_a: b's pose in a's frame), in a's
// frame: a's spheres as stored, b's groups placed once and tested against a's link bound, then
// against each of a's groups, and only the spheres of touching groups against each other, b's
// placed once per group.
LINALG_HD bool links_touch(const RobotCheckView& v, int a, int b, const LinkPose& b_in_a) {
  const CheckSphere& bound_a = v.link_bounds[a];
  const float ca[3] = {bound_a.x, bound_a.y, bound_a.z};
  for (int gb = v.first_group[b]; gb < v.first_group[b + 1]; ++gb) {
    float cb[3];
    place(b_in_a, v.group_bounds[gb], cb);
    const float rb = v.group_bounds[gb].r;
    if (!spheres_touch(ca, bound_a.r, cb, rb)) continue;
    float placed[kMaxGroupSpheres][4];
    int count = 0;
    for (int ga = v.first_group[a]; ga < v.first_group[a + 1]; ++ga) {
      const CheckSphere& group_a = v.group_bounds[ga];
      const float cga[3] = {group_a.x, group_a.y, group_a.z};
      if (!spheres_touch(cga, group_a.r, cb, rb)) continue;
      if (count == 0)
        for (int j = v.first_sphere[gb]; j < v.first_sphere[gb + 1]; ++j, ++count) {
          place(b_in_a, v.spheres[j], placed[count]);
          placed[count][3] = v.spheres[j].r;
        }
      for (int i = v.first_sphere[ga]; i < v.first_sphere[ga + 1]; ++i) {
        const CheckSphere& si = v.spheres[i];
        const float ci[3] = {si.x, si.y, si.z};
        for (int j = 0; j < count; ++j)
          if (spheres_touch(ci, si.r, placed[j], placed[j][3])) return true;
      }
    }
  }
  return false;
}

// OMPL's RealVectorStateSpace::satisfiesBounds slack (std::numeric_limits<double>::epsilon()).
constexpr double kBoundsSlack = 2.220446049250313e-16;

// Whether the group's state lies within the bounds and its spheres touch neither a primitive nor the
// point cloud: every value (value(k), k < dimension) finite and within the bounds as OMPL's
// satisfiesBounds tests them, then each link against the scene. full (num_variables values) and poses
// (12 per link) are scratch, left holding the full state and, for the self pairs, each link's pose in
// single precision at the start of its 12 values (stored_pose), which halves what they read.
template <typename Value>
LINALG_HD bool robot_state_free_of_scene(const RobotCheckView& v, const Value& value, double* full, double* poses) {
  for (int k = 0; k < v.num_variables; ++k) full[k] = v.held[k];
  for (int k = 0; k < v.dimension; ++k) {
    const double x = value(k);
    if (!isfinite(x) || x - kBoundsSlack > v.high[k] || x + kBoundsSlack < v.low[k]) return false;
    full[v.group[k]] = x;
  }
  link_poses(v.joints, v.num_joints, full, poses, v.root);
  for (int l = 0; l < v.num_links; ++l) {
    const LinkPose pose = single_precision_pose(poses + 12 * l);
    memcpy(poses + 12 * l, &pose, sizeof pose);
    const CheckSphere bound = v.link_bounds[l];
    if (bound.r < 0) continue;
    float bc[3];
    place(pose, bound, bc);
    for (int p = 0; p < v.num_primitives; ++p) {
      const CheckPrimitive<float>& primitive = v.primitives[p];
      if (sphere_touches(bc, bound.r, primitive) &&
          link_touches(v, l, pose, [&](const float* c, float r) { return sphere_touches(c, r, primitive); }))
        return false;
    }
    if (v.cloud.distance2 && sphere_touches_cloud(bc, bound.r, v.cloud) &&
        link_touches(v, l, pose, [&](const float* c, float r) { return sphere_touches_cloud(c, r, v.cloud); }))
      return false;
  }
  return true;
}

// Link l's pose in single precision, as robot_state_free_of_scene leaves it in the poses scratch.
LINALG_HD LinkPose stored_pose(const double* poses, int l) {
  LinkPose p;
  memcpy(&p, poses + 12 * l, sizeof p);
  return p;
}

// Whether no self pair touches, from robot_state_free_of_scene's full state and poses: each pair's grid
// first, then the links' bounds, and touch(q, a, b, b_in_a) for the pairs that both leave open (pair q
// of links a and b, b's pose in a's frame), which links_touch decides or the GPU hands to a warp.
template <typename Touch>
LINALG_HD bool robot_state_free_of_itself(const RobotCheckView& v, const double* full, const double* poses,
                                          const Touch& touch) {
  // The grids first: a lookup settles most pairs, and a touching one settles the state.
  for (int q = 0; q < v.num_self_pairs; ++q)
    if (self_pair_cell(v.self_tables[q], v.self_table_bits, full) == kSelfPairTouching) return false;
  for (int q = 0; q < v.num_self_pairs; ++q) {
    if (self_pair_cell(v.self_tables[q], v.self_table_bits, full) == kSelfPairApart) continue;
    const int a = v.self_pairs[2 * q], b = v.self_pairs[2 * q + 1];
    const LinkPose pa = stored_pose(poses, a), pb = stored_pose(poses, b);
    float ba[3], bb[3];
    place(pa, v.link_bounds[a], ba);
    place(pb, v.link_bounds[b], bb);
    if (spheres_touch(ba, v.link_bounds[a].r, bb, v.link_bounds[b].r) && touch(q, a, b, relative_pose(pa, pb)))
      return false;
  }
  return true;
}

// Whether the group's state is valid: within the bounds, and the robot's spheres touch neither a
// primitive, nor the point cloud, nor each other on a self pair. full and poses are scratch as above.
template <typename Value>
LINALG_HD bool robot_state_valid(const RobotCheckView& v, const Value& value, double* full, double* poses) {
  return robot_state_free_of_scene(v, value, full, poses) &&
         robot_state_free_of_itself(v, full, poses, [&v](int, int a, int b, const LinkPose& b_in_a) {
           return links_touch(v, a, b, b_in_a);
         });
}

}  // namespace ompl_cuda::detail
