#pragma once
// Validity of a chain configuration, written once for the CPU reference and the GPU kernels. With the
// module compiled without fused multiply-add and the deterministic sin/cos, both give the same
// decision for every state, including those that graze an obstacle.
#include <math.h>

#include "deterministic_trig.h"
#include "linalg_cuda/internal/host_device.h"
#include "ompl_cuda/planar_chain.h"
#include "rectangle_grid.h"

namespace ompl_cuda::detail {

// The kernels keep a state's joint values and link ends in fixed arrays of this size.
constexpr int kMaxLinks = PlanarChain::kMaxLinks;

// How a joint's value is bounded and interpolated, as the OMPL space does it.
enum JointKind : int {
  kRealVector = 0,  // RealVectorStateSpace: satisfiesBounds with a DBL_EPSILON margin, linear interpolation
  kSO2 = 1,         // SO2StateSpace: value in [-pi, pi), interpolation the short way round
  kWrappedReal = 2, // a RealVectorStateSpace subclass whose interpolate wraps like SO2 (the demo's space)
};

struct ChainView {
  int links;
  const double* lengths;
  double base_x, base_y;
  bool self_collision;
};

struct ObstacleView {
  int rectangles;
  const double* rects;     // x_min, y_min, x_max, y_max per rectangle
  int segments;
  const double* segs;      // x0, y0, x1, y1 per segment
  RectangleGridView grid;  // over the rectangles when there are many (nx = 0: none)
};

struct BoundsView {
  JointKind kind;
  const double* low;       // per joint (kRealVector, kWrappedReal)
  const double* high;
};

constexpr double kPi = 3.14159265358979323846;
constexpr double kDoubleEpsilon = 2.220446049250313080847e-16;
constexpr double kFloatEpsilon = 1.1920928955078125e-07;

// OMPL's satisfiesBounds of the joint (and NaN is never valid).
LINALG_HD bool joint_in_bounds(double v, int joint, const BoundsView& b) {
  if (!(v == v)) return false;  // NaN: OMPL's comparisons would let it through; no valid state holds one
  if (b.kind == kSO2) return v < kPi && v >= -kPi;
  return !(v - kDoubleEpsilon > b.high[joint] || v + kDoubleEpsilon < b.low[joint]);
}

// OMPL's interpolate of one joint (SO2StateSpace::interpolate, or RealVectorStateSpace::interpolate).
LINALG_HD double interpolate_joint(double from, double to, double t, JointKind kind) {
  if (kind == kRealVector) return from + (to - from) * t;
  double diff = to - from;
  if (fabs(diff) <= kPi) return from + diff * t;
  diff = diff > 0.0 ? 2.0 * kPi - diff : -2.0 * kPi - diff;
  double v = from - diff * t;
  if (v > kPi) v -= 2.0 * kPi;
  else if (v < -kPi) v += 2.0 * kPi;
  return v;
}

// Joint positions x[0..links], y[0..links] (x[0], y[0] = base).
LINALG_HD void forward_kinematics(const double* q, const ChainView& chain, double* x, double* y) {
  x[0] = chain.base_x;
  y[0] = chain.base_y;
  double angle = 0.0;
  for (int i = 0; i < chain.links; ++i) {
    angle += q[i];
    double s, c;
    deterministic_sincos(angle, &s, &c);
    x[i + 1] = x[i] + c * chain.lengths[i];
    y[i + 1] = y[i] + s * chain.lengths[i];
  }
}

// The seed paper's exact segment / axis-aligned rectangle test (separating axes: the rectangle's two
// and the segment's normal). Touching counts as a collision.
LINALG_HD bool segment_hits_rectangle(double x0, double y0, double x1, double y1, const double* r) {
  const double x_min = r[0], y_min = r[1], x_max = r[2], y_max = r[3];
  if ((x0 < x_min && x1 < x_min) || (x0 > x_max && x1 > x_max) || (y0 < y_min && y1 < y_min) ||
      (y0 > y_max && y1 > y_max))
    return false;
  const double dx = x1 - x0, dy = y1 - y0;
  const double s00 = dx * (y_min - y0) - dy * (x_min - x0);
  const double s10 = dx * (y_min - y0) - dy * (x_max - x0);
  const double s01 = dx * (y_max - y0) - dy * (x_min - x0);
  const double s11 = dx * (y_max - y0) - dy * (x_max - x0);
  const bool all_positive = s00 > 0.0 && s10 > 0.0 && s01 > 0.0 && s11 > 0.0;
  const bool all_negative = s00 < 0.0 && s10 < 0.0 && s01 < 0.0 && s11 < 0.0;
  return !(all_positive || all_negative);
}

// OMPL KinematicChain demo's intersectionTest, operation for operation.
LINALG_HD bool segments_intersect(double ax0, double ay0, double ax1, double ay1, double bx0, double by0, double bx1,
                                  double by1) {
  const double s10_x = ax1 - ax0, s10_y = ay1 - ay0;
  const double s32_x = bx1 - bx0, s32_y = by1 - by0;
  const double denom = s10_x * s32_y - s32_x * s10_y;
  if (fabs(denom) < kDoubleEpsilon) return false;  // collinear
  const bool denom_positive = denom > 0;
  const double s02_x = ax0 - bx0, s02_y = ay0 - by0;
  const double s_numer = s10_x * s02_y - s10_y * s02_x;
  if ((s_numer < kFloatEpsilon) == denom_positive) return false;
  const double t_numer = s32_x * s02_y - s32_y * s02_x;
  if ((t_numer < kFloatEpsilon) == denom_positive) return false;
  if (((s_numer - denom > -kFloatEpsilon) == denom_positive) || ((t_numer - denom > kFloatEpsilon) == denom_positive))
    return false;
  return true;
}

// Does link (x0, y0)-(x1, y1) meet an obstacle?
// Segments are always tested one by one: the demo's test accepts crossings slightly beyond the end of
// a wall (its tolerances are scaled by the determinant), so it is not local enough for a grid.
LINALG_HD bool link_collides(double x0, double y0, double x1, double y1, const ObstacleView& obstacles) {
  const RectangleGridView& g = obstacles.grid;
  if (g.nx > 0) {
    const int i0 = grid_cell(fmin(x0, x1), g.x0, g.inv_w, g.nx), i1 = grid_cell(fmax(x0, x1), g.x0, g.inv_w, g.nx);
    const int j0 = grid_cell(fmin(y0, y1), g.y0, g.inv_h, g.ny), j1 = grid_cell(fmax(y0, y1), g.y0, g.inv_h, g.ny);
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i) {
        const int cell = j * g.nx + i;
        for (int k = g.cell_start[cell]; k < g.cell_start[cell + 1]; ++k)
          if (segment_hits_rectangle(x0, y0, x1, y1, obstacles.rects + 4 * g.cell_rects[k])) return true;
      }
  } else {
    for (int r = 0; r < obstacles.rectangles; ++r)
      if (segment_hits_rectangle(x0, y0, x1, y1, obstacles.rects + 4 * r)) return true;
  }
  for (int s = 0; s < obstacles.segments; ++s) {
    const double* g = obstacles.segs + 4 * s;
    if (segments_intersect(x0, y0, x1, y1, g[0], g[1], g[2], g[3])) return true;
  }
  return false;
}

// Collision of a configuration with the obstacles (and itself, if asked). Joint positions given.
LINALG_HD bool chain_collides(const double* x, const double* y, const ChainView& chain, const ObstacleView& obstacles) {
  for (int i = 0; i < chain.links; ++i)
    if (link_collides(x[i], y[i], x[i + 1], y[i + 1], obstacles)) return true;
  if (chain.self_collision)
    for (int i = 0; i < chain.links; ++i)
      for (int j = i + 2; j < chain.links; ++j)
        if (segments_intersect(x[i], y[i], x[i + 1], y[i + 1], x[j], y[j], x[j + 1], y[j + 1])) return true;
  return false;
}

// The whole validity decision for the joint values joint(0) .. joint(links - 1): within bounds and
// free of collision. Without self-collision the chain is walked link by link, each tested as soon as
// it is known, so no per-configuration arrays are needed (on the GPU they would live in slow local
// memory); with self-collision the joint positions are kept for the pairwise test. The arithmetic is
// the same either way, so is the answer.
template <typename Joint>
LINALG_HD bool configuration_is_valid_by(const Joint& joint, const ChainView& chain, const ObstacleView& obstacles,
                                         const BoundsView& bounds) {
  for (int i = 0; i < chain.links; ++i)
    if (!joint_in_bounds(joint(i), i, bounds)) return false;
  if (!chain.self_collision) {
    double x = chain.base_x, y = chain.base_y, angle = 0.0;
    for (int i = 0; i < chain.links; ++i) {
      angle += joint(i);
      double s, c;
      deterministic_sincos(angle, &s, &c);
      const double xn = x + c * chain.lengths[i], yn = y + s * chain.lengths[i];
      if (link_collides(x, y, xn, yn, obstacles)) return false;
      x = xn;
      y = yn;
    }
    return true;
  }
  double q[kMaxLinks], x[kMaxLinks + 1], y[kMaxLinks + 1];
  for (int i = 0; i < chain.links; ++i) q[i] = joint(i);
  forward_kinematics(q, chain, x, y);
  return !chain_collides(x, y, chain, obstacles);
}

LINALG_HD bool configuration_is_valid(const double* q, const ChainView& chain, const ObstacleView& obstacles,
                                      const BoundsView& bounds) {
  return configuration_is_valid_by([q](int i) { return q[i]; }, chain, obstacles, bounds);
}

}  // namespace ompl_cuda::detail
