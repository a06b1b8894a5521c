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
// no grid, so fewer than kRectangleGridThreshold of them) and its coordinates are moderate (below
// kFilterMaxCoordinate).
//
// Along a motion the filter does not interpolate the joints: link i's cumulative angle is the line
// start[i] + t * sweep[i] (motion_angles below), one multiply and one add per link. It differs from
// the exact check's sum of interpolated joints by rounding and, where SO2 joints wrap, by whole turns,
// which sin and cos do not see. With joint values up to kFilterMaxJoint the rounding stays below 1e-8
// (64 links: partial sums below 6.4e4, a few operations each) and the reduction of the angle to
// [-pi, pi] below 1e-10; kFilterTrigError leaves room for both. States with larger joint values (a
// RealVectorStateSpace with wide bounds) are left to the exact check.
#include <math.h>

#include <vector>

#include "chain_geometry.h"
#include "linalg_cuda/internal/host_device.h"

namespace ompl_cuda::detail {

enum FilterDecision : int { kSureValid = 0, kSureInvalid = 1, kUnsure = 2 };

constexpr double kFilterMaxCoordinate = 1e4;
constexpr double kFilterMaxJoint = 1e3;  // radians; beyond, the pre-check answers unsure
// Bound on |single-precision sin/cos of the float-rounded reduced angle - sin/cos of the exact check's
// angle|: rounding the reduced angle (|r| <= pi) to float moves it by at most 1.2e-7; CUDA's __sincosf
// is within 2^-21.41 = 3.7e-7 on [-pi, pi], the host's sinf/cosf within 1 ulp; the motion form's angle
// is within 1e-8 of the exact one (joints up to kFilterMaxJoint). 2e-6 leaves room.
constexpr double kFilterTrigError = 2e-6;

// 16-byte aligned so that the GPU reads each box with one vector load.
struct alignas(16) FilterBox {
  float x_lo, y_lo, x_hi, y_hi;
};

// One rectangle's constants, 64 bytes.
struct alignas(16) FilterRectangle {
  FilterBox outer;    // grown by the margin, rounded outward
  FilterBox corners;  // the rectangle rounded to nearest
  FilterBox inner;    // shrunk by the margin, rounded inward
  float cross;        // the cross-product margin B
  float unused[3];
};

struct FilterView {
  bool enabled = false;  // false: not usable, run the exact check
  int rectangles = 0;
  float base_x = 0, base_y = 0;
  const float* lengths = nullptr;          // per link
  const FilterRectangle* rects = nullptr;  // per rectangle
};

// Host storage of the filter's constants; view() points into it.
struct FastFilter {
  bool enabled = false;
  double position_error = 0;  // E
  float base_x = 0, base_y = 0;
  std::vector<float> lengths;
  std::vector<FilterRectangle> rects;
  FilterView view() const;
};

// The filter for `chain` among `rects` (x_min, y_min, x_max, y_max each); disabled (enabled false)
// when `usable` is false, there are kRectangleGridThreshold rectangles or more, or the coordinates are
// too large for single precision to help.
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

// The link (x0, y0)-(x1, y1), of bounding box lo_x .. hi_x, lo_y .. hi_y, against one rectangle whose
// grown box it overlaps (filter_chain rejects the others first: nearly every pair).
LINALG_HD FilterDecision filter_link_near(float x0, float y0, float x1, float y1, float lo_x, float lo_y, float hi_x,
                                          float hi_y, const FilterRectangle& rect) {
  const FilterBox c = rect.corners;
  const float dx = x1 - x0, dy = y1 - y0;
  const float s00 = dx * (c.y_lo - y0) - dy * (c.x_lo - x0);
  const float s10 = dx * (c.y_lo - y0) - dy * (c.x_hi - x0);
  const float s01 = dx * (c.y_hi - y0) - dy * (c.x_lo - x0);
  const float s11 = dx * (c.y_hi - y0) - dy * (c.x_hi - x0);
  const float b = rect.cross;
  const bool all_above = s00 > b && s10 > b && s01 > b && s11 > b;
  const bool all_below = s00 < -b && s10 < -b && s01 < -b && s11 < -b;
  if (all_above || all_below) return kSureValid;
  const FilterBox in = rect.inner;
  const bool boxes_overlap = hi_x >= in.x_lo && hi_y >= in.y_lo && lo_x <= in.x_hi && lo_y <= in.y_hi;
  const bool some_above = s00 > b || s10 > b || s01 > b || s11 > b;
  const bool some_below = s00 < -b || s10 < -b || s01 < -b || s11 < -b;
  return boxes_overlap && some_above && some_below ? kSureInvalid : kUnsure;
}

// The chain whose link i points along the cumulative angle angle(i), called for i = 0, 1, ... in
// that order: sure valid, sure invalid, or unsure. Joint bounds are the caller's. The grown-box
// rejection is the hot path (a vector load, four comparisons); the rest runs only for a link whose
// box overlaps a rectangle's grown box.
template <typename Angle>
LINALG_HD FilterDecision filter_chain(const Angle& angle, int links, const FilterView& f) {
  float x = f.base_x, y = f.base_y;
  bool unsure = false;
  for (int i = 0; i < links; ++i) {
    float xn = x, yn = y;
    filter_next_joint(angle(i), f.lengths[i], &xn, &yn);
    const float lo_x = fminf(x, xn), hi_x = fmaxf(x, xn), lo_y = fminf(y, yn), hi_y = fmaxf(y, yn);
    for (int r = 0; r < f.rectangles; ++r) {
      const FilterBox o = f.rects[r].outer;
      if ((hi_x < o.x_lo) | (hi_y < o.y_lo) | (lo_x > o.x_hi) | (lo_y > o.y_hi)) continue;
      const FilterDecision d = filter_link_near(x, y, xn, yn, lo_x, lo_y, hi_x, hi_y, f.rects[r]);
      if (d == kSureInvalid) return kSureInvalid;
      if (d == kUnsure) unsure = true;
    }
    x = xn;
    y = yn;
  }
  return unsure ? kUnsure : kSureValid;
}

// The configuration joint(0) .. joint(links - 1), bounds included.
template <typename Joint>
LINALG_HD FilterDecision filter_configuration(const Joint& joint, const ChainView& chain, const BoundsView& bounds,
                                              const FilterView& f) {
  bool large = false;
  for (int i = 0; i < chain.links; ++i) {
    const double v = joint(i);
    if (!joint_in_bounds(v, i, bounds)) return kSureInvalid;
    large = large || !(fabs(v) <= kFilterMaxJoint);
  }
  if (large) return kUnsure;
  double angle = 0.0;
  return filter_chain([&](int i) { return angle += joint(i); }, chain.links, f);  // as the exact check sums
}

// The change of one joint along a motion as interpolate_joint makes it: to - from, or for joints that
// wrap, the short way round.
LINALG_HD double joint_sweep(double from, double to, JointKind kind) {
  const double diff = to - from;
  if (kind == kRealVector || fabs(diff) <= kPi) return diff;
  return diff > 0.0 ? diff - 2.0 * kPi : diff + 2.0 * kPi;
}

// Whether every state of the motion from -> to along one joint (to included) is within the joint's
// bounds, with a margin far above rounding; false means "check each state". Wrapping motions are
// never sure: they pass the seam, where a value can land on pi exactly.
LINALG_HD bool joint_surely_in_bounds(double from, double to, int joint, const BoundsView& b) {
  const double diff = to - from;
  if (b.kind != kRealVector && !(fabs(diff) <= kPi)) return false;
  const double lo = fmin(from, to), hi = fmax(from, to);
  const double margin = 1e-9 * (1.0 + fmax(fabs(lo), fabs(hi)));
  const double low = b.kind == kSO2 ? -kPi : b.low[joint];
  const double high = b.kind == kSO2 ? kPi : b.high[joint];
  return lo >= low + margin && hi <= high - margin;  // false for NaN
}

// The motion from -> to in the form the filter walks: link i's cumulative angle at t is
// start[i] + t * sweep[i]; start[0] is infinite when a joint value exceeds kFilterMaxJoint (the
// pre-check then answers unsure for every state). Returns whether every state of the motion is
// surely within bounds.
LINALG_HD bool motion_angles(const double* from, const double* to, const ChainView& chain, const BoundsView& bounds,
                             double* start, double* sweep) {
  double a = 0.0, s = 0.0;
  bool in_bounds = true, large = false;
  for (int i = 0; i < chain.links; ++i) {
    a += from[i];
    s += joint_sweep(from[i], to[i], bounds.kind);
    start[i] = a;
    sweep[i] = s;
    in_bounds = in_bounds && joint_surely_in_bounds(from[i], to[i], i, bounds);
    large = large || !(fabs(from[i]) <= kFilterMaxJoint && fabs(to[i]) <= kFilterMaxJoint);
  }
  if (large) start[0] = INFINITY;
  return in_bounds;
}

// State j of the motion from -> to with n segments (j = last is `to` itself), given its motion_angles.
// Bounds are checked per state only when the motion is not surely within them.
LINALG_HD FilterDecision filter_motion_state(const double* from, const double* to, const double* start,
                                             const double* sweep, bool surely_in_bounds, int j, int n, int last,
                                             const ChainView& chain, const BoundsView& bounds, const FilterView& f) {
  const double t = n > 0 ? static_cast<double>(j) / static_cast<double>(n) : 1.0;
  if (!surely_in_bounds)
    for (int k = 0; k < chain.links; ++k) {
      const double v = j == last ? to[k] : interpolate_joint(from[k], to[k], t, bounds.kind);
      if (!joint_in_bounds(v, k, bounds)) return kSureInvalid;
    }
  if (!(start[0] < INFINITY)) return kUnsure;  // joint values too large for the pre-check
  return filter_chain([start, sweep, t](int i) { return start[i] + t * sweep[i]; }, chain.links, f);
}

}  // namespace ompl_cuda::detail
