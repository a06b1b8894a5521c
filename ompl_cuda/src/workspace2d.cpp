#include "ompl_cuda/workspace2d.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "linalg_cuda/errors.h"

namespace ompl_cuda {
namespace {

bool finite(double a, double b, double c, double d) {
  return std::isfinite(a) && std::isfinite(b) && std::isfinite(c) && std::isfinite(d);
}

}  // namespace

void Workspace2D::validate() const {
  for (std::size_t i = 0; i < rectangles.size(); ++i) {
    const Rectangle& r = rectangles[i];
    if (!finite(r.x_min, r.y_min, r.x_max, r.y_max))
      throw linalg_cuda::InvalidArgument("Workspace2D: rectangle " + std::to_string(i) + " has a non-finite corner");
    if (!(r.x_min < r.x_max) || !(r.y_min < r.y_max))
      throw linalg_cuda::InvalidArgument("Workspace2D: rectangle " + std::to_string(i) + " [" + std::to_string(r.x_min) +
                                         ", " + std::to_string(r.x_max) + "] x [" + std::to_string(r.y_min) + ", " +
                                         std::to_string(r.y_max) + "] is empty or degenerate (need min < max)");
  }
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Segment2D& s = segments[i];
    if (!finite(s.x0, s.y0, s.x1, s.y1))
      throw linalg_cuda::InvalidArgument("Workspace2D: segment " + std::to_string(i) + " has a non-finite end point");
  }
}

Workspace2D horn_environment(int links) {
  if (links < 2) throw linalg_cuda::InvalidArgument("horn_environment: needs at least 2 links");
  // OMPL demos/KinematicChain.h, createHornEnvironment(d, log(d) / d).
  const double pi = 3.14159265358979323846;
  const double d = links, eps = std::log(d) / d, w = 1.0 / d;
  Workspace2D env;
  for (const double side : {-1.0, 1.0}) {
    double x = w, y = side * eps, theta = 0.0;
    const double scale = w * (1.0 - side * pi * eps);
    for (int i = 0; i < links - 1; ++i) {
      theta += pi / d;
      const double xn = x + std::cos(theta) * scale, yn = y + std::sin(theta) * scale;
      env.segments.push_back({x, y, xn, yn});
      x = xn;
      y = yn;
    }
  }
  return env;
}

Workspace2D random_boxes(int count, double x_min, double y_min, double x_max, double y_max, double min_side,
                         double max_side, double clearance, std::uint32_t seed) {
  if (count < 0 || !(x_min < x_max) || !(y_min < y_max) || !(min_side > 0) || !(min_side <= max_side))
    throw linalg_cuda::InvalidArgument("random_boxes: invalid area, count or side range");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> ux(x_min, x_max), uy(y_min, y_max), side(min_side, max_side);
  Workspace2D env;
  int attempts = 0;
  while (static_cast<int>(env.rectangles.size()) < count && attempts++ < 100 * (count + 1)) {
    const double cx = ux(rng), cy = uy(rng), w = side(rng), h = side(rng);
    const Rectangle r{cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
    // Keep the base (the origin) free: the closest point of the box to it must be `clearance` away.
    const double nearest_x = std::min(std::max(0.0, r.x_min), r.x_max), nearest_y = std::min(std::max(0.0, r.y_min), r.y_max);
    if (nearest_x * nearest_x + nearest_y * nearest_y < clearance * clearance) continue;
    env.rectangles.push_back(r);
  }
  return env;
}

}  // namespace ompl_cuda
