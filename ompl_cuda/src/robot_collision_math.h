#pragma once
// The robot checks' tests, written once for the host and the device (LINALG_HD): a sphere against a
// scene primitive (sphere, box, cylinder, capsule, each in its own frame), a sphere against a sphere,
// a link's spheres against either, and what they read (RobotCheckView); a whole state's check is in
// robot_state_check.h. Closed sets: touching is a collision, as in the chain's checks. The module
// compiles without fused multiply-adds, so both sides compute the same bits and decide identically.
#include <math.h>
#include <string.h>

#include "linalg_cuda/internal/host_device.h"
#include "cloud_distance_field.h"
#include "robot_kinematics.h"
#include "self_pair_table.h"

namespace ompl_cuda::detail {

// A scene primitive as the checks read it: the inverse of its pose (world to primitive frame) and sizes;
// aligned so that a thread loads one in four 16-byte reads.
template <typename T>
struct alignas(16) CheckPrimitive {
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

// One joint of the kinematics' walk through the tree (depth first, so that a joint's parent is most
// often the link just placed): where its parent's pose comes from, and whether its child's pose is
// kept for a later joint (a link with several children, or a child placed later).
struct KinematicStep {
  int joint;
  int parent;  // kFromLast: the link placed by the previous step; kFromRoot; or a kept pose's index
  int keep;    // the index the child's pose is kept at, or -1
};
constexpr int kFromLast = -2, kFromRoot = -1;

// A self pair's links a and b both hang from a common link c: joints[first .. first + to_a) lead from c
// down to a, and the next to_b from c down to b (indices into RobotCheckView::path_joints).
struct PairPath {
  int first, to_a, to_b;
};

// A self pair's links' bounds as the pair's first test reads them: where a check keeps each centre
// (slot_a -1: a link without spheres, which touches nothing) and their radii.
struct SelfPairBounds {
  int slot_a, slot_b;
  float radius_a, radius_b;
};

// Everything one state's check reads, as pointers into host or device memory (RobotCheckData). Each
// link's spheres come in groups of neighbours, and each group and each link has a sphere around all
// of its spheres: a test reaches a sphere only when its link's and its group's bounds pass it.
struct RobotCheckView {
  const KinematicJoint* joints;
  int num_joints, num_links, num_variables;
  double root[12];                     // the robot's root link in the scene frame
  const KinematicStep* steps;          // the joints in the order the checks place their links
  int num_kept;                        // link poses the walk keeps (KinematicStep::keep)
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
  const int* gridded_pairs;            // the self pairs with a grid (SelfPairTable::axes >= 0)
  int num_gridded_pairs;
  const SelfPairBounds* pair_bounds;   // per self pair, its links' bounds
  const PairPath* pair_paths;          // per self pair, the joints between its links ...
  const int* path_joints;              // ... as joint indices
  const int* centre_slot;              // per link, where a check keeps its bound's centre, or -1
  int num_centres;                     // (links with spheres in a self pair)
  const CheckPrimitive<float>* primitives;
  const CheckSphere* primitive_bounds; // per primitive, a sphere around it in the scene frame
  int num_primitives;
  CloudView cloud;                     // the scene's point cloud (cloud.distance2 null without one)
};

// A link's pose in the scene frame (or in another link's frame), in single precision.
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

// Whether a sphere of link a touches a sphere of link b (b_in_a: b's pose in a's frame), in a's
// frame: a's spheres as stored, b's groups placed once and tested against a's link bound, then
// against each of a's groups; in a pair of touching groups, each of a's spheres against b's group
// bound, and only those that touch it against b's spheres, placed once per group.
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
        if (!spheres_touch(ci, si.r, cb, rb)) continue;
        for (int j = 0; j < count; ++j)
          if (spheres_touch(ci, si.r, placed[j], placed[j][3])) return true;
      }
    }
  }
  return false;
}

}  // namespace ompl_cuda::detail
