#pragma once
// The obstacles around the chain: axis-aligned rectangles (the seed paper's environment, closed sets:
// touching is a collision) and line segments (the KinematicChain demo's walls).
#include <cstdint>
#include <vector>

namespace ompl_cuda {

struct Rectangle {
  double x_min, y_min, x_max, y_max;
};

struct Segment2D {
  double x0, y0, x1, y1;
};

struct Workspace2D {
  std::vector<Rectangle> rectangles;
  std::vector<Segment2D> segments;

  // Throws linalg_cuda::InvalidArgument naming the obstacle: a rectangle with x_min >= x_max or
  // y_min >= y_max (empty or degenerate) or a non-finite coordinate; a non-finite segment.
  void validate() const;
};

// OMPL's KinematicChain demo "horn" for d links (link length 1/d): 2(d - 1) segments.
Workspace2D horn_environment(int links);
// `count` random boxes with sides in [min_side, max_side] inside [x_min, x_max] x [y_min, y_max],
// none covering the base point (0, 0) within `clearance`.
Workspace2D random_boxes(int count, double x_min, double y_min, double x_max, double y_max, double min_side,
                         double max_side, double clearance, std::uint32_t seed);

}  // namespace ompl_cuda
