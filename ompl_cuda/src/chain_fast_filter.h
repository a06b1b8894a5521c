#pragma once
// A single-precision pre-check of a configuration against the rectangles, with margins that make its
// sure answers the exact check's answers. The exact check (chain_geometry.h) spends most of its time
// on double-precision sin/cos without fused multiply-add; this one reduces each link angle in double
// (the same angle the exact check forms), takes sin/cos in single precision (the GPU's special
// function unit), walks the chain in floats and tests each link against each rectangle with margins:
//
//  - E bounds |float joint position - double joint position| (trig error, rounding of lengths,
//    products and sums, link by link), with a factor 2 of safety.
//  - A link is surely clear of a rectangle if its float bounding box misses the rectangle grown by
//    2E (the exact bounding-box rejection then fires), or if all four corners lie on one side of its
//    line by more than the rectangle's cross margin B (the exact cross products then share a sign).
//    B bounds the change of a cross product when both end points move by E, plus float rounding; it
//    is per rectangle because only corners near the link matter once the boxes overlap.
//  - A link surely hits a rectangle if its box overlaps the rectangle shrunk by 2E and two corners lie
//    on opposite sides of its line by more than B.
//  - Anything else is unsure, and the caller runs the exact check. Bounds are checked exactly.
//
// So a sure answer is the exact answer; only states within about B of touching an obstacle pay for
// the exact check. Used when the workspace is rectangles only (no segment walls, no self-collision,
// no grid) and its coordinates are moderate (below kFilterMaxCoordinate).
#include <math.h>

#include <vector>

#include "chain_geometry.h"
#include "linalg_cuda/host_device.h"

namespace ompl_cuda::detail {

enum FilterDecision : int { kSureValid = 0, kSureInvalid = 1, kUnsure = 2 };

constexpr double kFilterMaxCoordinate = 1e4;
// Bound on |single-precision sin/cos of the float-rounded reduced angle - sin/cos of the double angle|:
// rounding the reduced angle (|r| <= pi) to float moves it by at most 1.2e-7; CUDA's __sincosf is
// within 2^-21.41 = 3.7e-7 on [-pi, pi], the host's sinf/cosf within 1 ulp. 2e-6 leaves room.
constexpr double kFilterTrigError = 2e-6;

struct FilterView {
  int rectangles = 0;       // 0 with enabled false: not usable, run the exact check
  bool enabled = false;
  float base_x = 0, base_y = 0;
  const float* lengths = nullptr;  // per link
  const float* outer = nullptr;    // per rectangle x_lo, y_lo, x_hi, y_hi: grown by the margin, rounded outward
  const float* inner = nullptr;    // shrunk by the margin, rounded inward
  const float* corners = nullptr;  // the rectangle rounded to nearest
  const float* cross = nullptr;    // per rectangle: the cross-product margin B
};

// Host storage of the filter's constants; view() points into it.
struct FastFilter {
  bool enabled = false;
  double position_error = 0;  // E
  float base_x = 0, base_y = 0;
  std::vector<float> lengths, outer, inner, corners, cross;
  FilterView view() const;
};

// The filter for `chain` among `rects` (x_min, y_min, x_max, y_max each); disabled (enabled false)
// when `usable` is false or the coordinates are too large for single precision to help.
FastFilter build_fast_filter(const ChainView& chain, const std::vector<double>& rects, bool usable);

// sin and cos of a double angle, in single precision after an exact-enough reduction to [-pi, pi].
LINALG_HD void filter_sincos(double angle, float* s, float* c) {
  constexpr double kTwoPi = 6.28318530717958647692;
  constexpr double kInvTwoPi = 0.15915494309189533577;
  const double r = angle - kTwoPi * nearbyint(angle * kInvTwoPi);
  const float rf = static_cast<float>(r);
#if defined(__CUDA_ARCH__)
  __sincosf(rf, s, c);
#else
  *s = sinf(rf);
  *c = cosf(rf);
#endif
}

// The next joint position in floats: (x, y) moved by `length` along the double `angle`.
LINALG_HD void filter_next_joint(double angle, float length, float* x, float* y) {
  float s, c;
  filter_sincos(angle, &s, &c);
  *x = *x + c * length;
  *y = *y + s * length;
}

// The link (x0, y0)-(x1, y1) against rectangle r.
LINALG_HD FilterDecision filter_link(float x0, float y0, float x1, float y1, const FilterView& f, int r) {
  const float lo_x = fminf(x0, x1), hi_x = fmaxf(x0, x1), lo_y = fminf(y0, y1), hi_y = fmaxf(y0, y1);
  const float* o = f.outer + 4 * r;
  if (hi_x < o[0] || hi_y < o[1] || lo_x > o[2] || lo_y > o[3]) return kSureValid;
  const float* c = f.corners + 4 * r;
  const float dx = x1 - x0, dy = y1 - y0;
  const float s00 = dx * (c[1] - y0) - dy * (c[0] - x0);
  const float s10 = dx * (c[1] - y0) - dy * (c[2] - x0);
  const float s01 = dx * (c[3] - y0) - dy * (c[0] - x0);
  const float s11 = dx * (c[3] - y0) - dy * (c[2] - x0);
  const float b = f.cross[r];
  const bool all_above = s00 > b && s10 > b && s01 > b && s11 > b;
  const bool all_below = s00 < -b && s10 < -b && s01 < -b && s11 < -b;
  if (all_above || all_below) return kSureValid;
  const float* in = f.inner + 4 * r;
  const bool boxes_overlap = hi_x >= in[0] && hi_y >= in[1] && lo_x <= in[2] && lo_y <= in[3];
  const bool some_above = s00 > b || s10 > b || s01 > b || s11 > b;
  const bool some_below = s00 < -b || s10 < -b || s01 < -b || s11 < -b;
  return boxes_overlap && some_above && some_below ? kSureInvalid : kUnsure;
}

// The configuration joint(0) .. joint(links - 1): sure valid, sure invalid, or unsure.
template <typename Joint>
LINALG_HD FilterDecision filter_configuration(const Joint& joint, const ChainView& chain, const BoundsView& bounds,
                                              const FilterView& f) {
  for (int i = 0; i < chain.links; ++i)
    if (!joint_in_bounds(joint(i), i, bounds)) return kSureInvalid;
  double angle = 0.0;
  float x = f.base_x, y = f.base_y;
  bool unsure = false;
  for (int i = 0; i < chain.links; ++i) {
    angle += joint(i);  // as the exact check forms it
    float xn = x, yn = y;
    filter_next_joint(angle, f.lengths[i], &xn, &yn);
    for (int r = 0; r < f.rectangles; ++r) {
      const FilterDecision d = filter_link(x, y, xn, yn, f, r);
      if (d == kSureInvalid) return kSureInvalid;
      unsure = unsure || d == kUnsure;
    }
    x = xn;
    y = yn;
  }
  return unsure ? kUnsure : kSureValid;
}

}  // namespace ompl_cuda::detail
