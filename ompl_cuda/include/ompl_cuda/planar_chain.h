#pragma once
// A planar serial chain of revolute joints: the robot of the seed paper (a d-link manipulator) and of
// OMPL's KinematicChain demo. Joint i rotates link i relative to link i-1 (link 0 relative to the x
// axis), so link i points along the sum of the first i+1 joint angles; links are segments from joint i
// to joint i+1, the first joint at the base.
#include <vector>

namespace ompl_cuda {

struct PlanarChain {
  static constexpr int kMaxLinks = 64;

  std::vector<double> link_lengths;  // metres, one per joint
  double base_x = 0.0;
  double base_y = 0.0;
  // Non-adjacent links must not intersect (the KinematicChain demo's self-collision test).
  bool self_collision = false;

  // d equal links of length `length` each.
  static PlanarChain uniform(int links, double length, bool self_collision = false);
  int links() const { return static_cast<int>(link_lengths.size()); }
  // Throws linalg_cuda::InvalidArgument: no links, more than kMaxLinks, a zero, negative or
  // non-finite length, a non-finite base.
  void validate() const;
};

}  // namespace ompl_cuda
