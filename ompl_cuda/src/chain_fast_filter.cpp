#include "chain_fast_filter.h"

#include <algorithm>
#include <cmath>

#include "rectangle_grid.h"

namespace ompl_cuda::detail {
namespace {

// The float nearest to v on the side that keeps a bound conservative.
float float_below(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) > v) f = std::nextafter(f, -INFINITY);
  return f;
}

float float_above(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) < v) f = std::nextafter(f, INFINITY);
  return f;
}

}  // namespace

FilterView FastFilter::view() const {
  FilterView v;
  v.enabled = enabled;
  v.rectangles = enabled ? static_cast<int>(rects.size()) : 0;
  v.base_x = base_x;
  v.base_y = base_y;
  v.lengths = lengths.data();
  v.rects = rects.data();
  return v;
}

FastFilter build_fast_filter(const ChainView& chain, const std::vector<double>& rects, bool usable) {
  FastFilter f;
  if (!usable || rects.size() >= 4 * static_cast<std::size_t>(kRectangleGridThreshold)) return f;
  const double u = std::ldexp(1.0, -24);  // float's unit roundoff is u / 2; u everywhere is generous
  const double base = std::max(std::fabs(chain.base_x), std::fabs(chain.base_y));
  double total = 0.0, longest = 0.0;
  for (int i = 0; i < chain.links; ++i) {
    total += chain.lengths[i];
    longest = std::max(longest, chain.lengths[i]);
  }
  const double reach = base + total;  // bounds every joint coordinate
  double extent = 0.0;                // bounds every rectangle coordinate
  for (const double v : rects) extent = std::isfinite(v) ? std::max(extent, std::fabs(v)) : INFINITY;
  if (!(reach + extent < kFilterMaxCoordinate)) return f;  // also a non-finite base or length

  // E: the float joint positions against the double ones, link by link (see the header).
  double e = u * base + 1e-12 * (1.0 + reach);
  for (int i = 0; i < chain.links; ++i) e += chain.lengths[i] * (kFilterTrigError + 3.0 * u) + u * (reach + 1.0);
  e *= 2.0;
  const double margin = 2.0 * e;
  const double d = longest * (1.0 + 4.0 * u) + 2.0 * e;  // bounds |dx|, |dy| of a link, float or double
  const double rho = u * extent;                         // rounding of a corner to float

  f.position_error = e;
  f.base_x = static_cast<float>(chain.base_x);
  f.base_y = static_cast<float>(chain.base_y);
  for (int i = 0; i < chain.links; ++i) f.lengths.push_back(static_cast<float>(chain.lengths[i]));
  for (std::size_t r = 0; r + 3 < rects.size(); r += 4) {
    const double x_min = rects[r], y_min = rects[r + 1], x_max = rects[r + 2], y_max = rects[r + 3];
    FilterRectangle box{};
    box.outer = {float_below(x_min - margin), float_below(y_min - margin), float_above(x_max + margin),
                 float_above(y_max + margin)};
    box.inner = {float_above(x_min + margin), float_above(y_min + margin), float_below(x_max - margin),
                 float_below(y_max - margin)};
    box.corners = {static_cast<float>(x_min), static_cast<float>(y_min), static_cast<float>(x_max),
                   static_cast<float>(y_max)};
    // Once the grown boxes overlap, every corner is within w of either end point of the link.
    const double w = std::max(x_max - x_min, y_max - y_min) + d + 2.0 * margin + e;
    const double moved = 2.0 * (2.0 * e * w + d * (e + rho) + 2.0 * e * (e + rho));  // both products, end points moved
    const double rounding = 8.0 * u * d * w;                                          // float evaluation
    box.cross = float_above(2.0 * (moved + rounding) + 1e-12 * (1.0 + d * w));
    f.rects.push_back(box);
  }
  f.enabled = true;
  return f;
}

}  // namespace ompl_cuda::detail
