// The GPU's single-precision pre-check (chain_fast_filter.h), run on the CPU: its position error stays
// within the bound its margins are built on, and every sure answer it gives equals the exact check's,
// on random states and on states that pass obstacles at distances from 1e-7 to 1e-1 on either side,
// for single configurations and along motions (the motion form, which walks angles as lines in t),
// with linear and wrapping (SO2) joints and motions that leave the bounds.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "chain_fast_filter.h"
#include "ompl_cuda/workspace2d.h"

namespace {

using namespace ompl_cuda::detail;

struct Scene {
  std::vector<double> lengths, rects, low, high;
  double base_x = 0, base_y = 0;
  ChainView chain() const { return {static_cast<int>(lengths.size()), lengths.data(), base_x, base_y, false}; }
  ObstacleView obstacles() const { return {static_cast<int>(rects.size() / 4), rects.data(), 0, nullptr, {}}; }
  JointKind kind = kRealVector;
  BoundsView bounds() const { return {kind, low.data(), high.data()}; }
};

Scene paper_scene() {
  Scene s;
  s.lengths.assign(9, 1.0);
  s.rects = {2.0, 1.0, 3.5, 4.0, -5.0, 2.5, -3.0, 3.5, -2.0, -6.0, 1.0, -4.5, 4.5, -3.0, 6.0, 0.5};
  s.low.assign(9, -M_PI);
  s.high.assign(9, M_PI);
  return s;
}

// Unequal links, an offset base, many small and thin rectangles.
Scene uneven_scene() {
  Scene s;
  s.lengths = {1.7, 0.3, 1.1, 0.05, 2.4, 0.9, 1.3};
  s.base_x = 3.25;
  s.base_y = -1.5;
  const ompl_cuda::Workspace2D boxes = ompl_cuda::random_boxes(60, -5, -9, 11, 6, 0.001, 1.5, 0.2, 4);
  for (const auto& r : boxes.rectangles) s.rects.insert(s.rects.end(), {r.x_min + 3.25, r.y_min - 1.5, r.x_max + 3.25, r.y_max - 1.5});
  s.low.assign(7, -M_PI);
  s.high.assign(7, M_PI);
  return s;
}

std::vector<double> random_configuration(std::mt19937& rng, int links) {
  std::uniform_real_distribution<double> u(-M_PI, M_PI);
  std::vector<double> q(links);
  for (double& v : q) v = u(rng);
  return q;
}

// Joint positions in double, as the exact check computes them.
void exact_positions(const Scene& s, const std::vector<double>& q, std::vector<double>& x, std::vector<double>& y) {
  x.resize(q.size() + 1);
  y.resize(q.size() + 1);
  forward_kinematics(q.data(), s.chain(), x.data(), y.data());
}

TEST(FastFilter, PositionErrorWithinItsBound) {
  for (const Scene& s : {paper_scene(), uneven_scene()}) {
    const FastFilter f = build_fast_filter(s.chain(), s.rects, true);
    ASSERT_TRUE(f.enabled);
    std::mt19937 rng(1);
    std::vector<double> x, y;
    double worst = 0;
    for (int n = 0; n < 200000; ++n) {
      const std::vector<double> q = random_configuration(rng, s.chain().links);
      exact_positions(s, q, x, y);
      double angle = 0;
      float fx = f.base_x, fy = f.base_y;
      for (int i = 0; i < s.chain().links; ++i) {
        angle += q[i];
        filter_next_joint(angle, f.lengths[i], &fx, &fy);
        worst = std::max({worst, std::fabs(fx - x[i + 1]), std::fabs(fy - y[i + 1])});
      }
    }
    // The bound carries a factor 2 of safety; the measured error must fit without it.
    EXPECT_LT(worst, f.position_error / 2) << "worst " << worst << ", bound " << f.position_error;
    EXPECT_GT(worst, 0.0);
  }
}

// Counts of the pre-check's answers; mismatches are sure answers that differ from the exact check.
struct Tally {
  long sure = 0, unsure = 0, mismatches = 0;
  void add(const Scene& s, const FastFilter& f, const std::vector<double>& q) {
    const FilterView view = f.view();
    const FilterDecision d = filter_configuration([&q](int k) { return q[k]; }, s.chain(), s.bounds(), view);
    const bool exact = configuration_is_valid(q.data(), s.chain(), s.obstacles(), s.bounds());
    if (d == kUnsure) {
      ++unsure;
      return;
    }
    ++sure;
    mismatches += (d == kSureValid) != exact;
  }
};

TEST(FastFilter, SureAnswersAreExactOnRandomStates) {
  for (const Scene& s : {paper_scene(), uneven_scene()}) {
    const FastFilter f = build_fast_filter(s.chain(), s.rects, true);
    std::mt19937 rng(2);
    Tally t;
    for (int n = 0; n < 300000; ++n) t.add(s, f, random_configuration(rng, s.chain().links));
    EXPECT_EQ(t.mismatches, 0);
    // A pre-check that is seldom sure would be useless (not wrong): it decides nearly all states.
    EXPECT_LT(t.unsure, t.sure / 20) << t.unsure << " unsure of " << t.sure + t.unsure;
  }
}

// Rectangles placed at a distance from the end point of a random state's link, just outside or just
// inside, at every scale around the filter's margins: sure answers must still be exact.
TEST(FastFilter, SureAnswersAreExactNearObstacles) {
  const Scene base = paper_scene();
  std::mt19937 rng(3);
  std::vector<double> x, y;
  Tally t;
  for (int n = 0; n < 20000; ++n) {
    const std::vector<double> q = random_configuration(rng, 9);
    exact_positions(base, q, x, y);
    const int joint = 1 + static_cast<int>(rng() % 9);
    for (double gap : {1e-7, 1e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 1e-1}) {
      for (double side : {-1.0, 1.0}) {  // rectangle starts beyond the joint (clear) or before it (hit)
        Scene s = base;
        const double edge = x[joint] + side * gap;
        s.rects = {edge, y[joint] - 0.3, edge + 0.4, y[joint] + 0.3};                  // to the right
        if (n % 2) s.rects = {x[joint] - 0.3, y[joint] + side * gap, x[joint] + 0.3, y[joint] + side * gap + 0.4};  // above
        if (n % 3 == 0) s.rects = {edge, y[joint] + gap, edge + 0.4, y[joint] + gap + 0.4};  // diagonal, near the corner
        const FastFilter f = build_fast_filter(s.chain(), s.rects, true);
        t.add(s, f, q);
      }
    }
  }
  EXPECT_EQ(t.mismatches, 0);
  EXPECT_GT(t.sure, 0);
  EXPECT_GT(t.unsure, 0);  // the closest placements are within the margins
}

// Every state of the motion from -> to with n segments through the motion form, against the exact
// check of the state DiscreteMotionValidator would check.
void add_motion(Tally& t, const Scene& s, const FastFilter& f, const std::vector<double>& from,
                const std::vector<double>& to, int n) {
  const int links = s.chain().links, last = n > 0 ? n : 1;
  std::vector<double> start(links), sweep(links), q(links);
  const bool in_bounds = motion_angles(from.data(), to.data(), s.chain(), s.bounds(), start.data(), sweep.data());
  for (int j = 1; j <= last; ++j) {
    const double t_j = static_cast<double>(j) / n;
    for (int k = 0; k < links; ++k) q[k] = j == last ? to[k] : interpolate_joint(from[k], to[k], t_j, s.kind);
    const FilterDecision d = filter_motion_state(from.data(), to.data(), start.data(), sweep.data(), in_bounds, j, n,
                                                 last, s.chain(), s.bounds(), f.view());
    const bool exact = configuration_is_valid(q.data(), s.chain(), s.obstacles(), s.bounds());
    if (d == kUnsure) {
      ++t.unsure;
      continue;
    }
    ++t.sure;
    t.mismatches += (d == kSureValid) != exact;
  }
}

// A motion of joint-space length `length` from a random state; SO2 ends wrapped into [-pi, pi).
std::pair<std::vector<double>, std::vector<double>> random_motion(std::mt19937& rng, const Scene& s, double length) {
  std::vector<double> from = random_configuration(rng, s.chain().links), to(from.size());
  std::normal_distribution<double> g;
  std::vector<double> dir(from.size());
  double norm = 0;
  for (double& v : dir) {
    v = g(rng);
    norm += v * v;
  }
  for (std::size_t k = 0; k < from.size(); ++k) {
    to[k] = from[k] + dir[k] / std::sqrt(norm) * length;
    if (s.kind == kSO2) to[k] = std::remainder(to[k], 2 * M_PI) == M_PI ? -M_PI : std::remainder(to[k], 2 * M_PI);
  }
  return {from, to};
}

TEST(FastFilter, MotionFormSureAnswersAreExact) {
  for (const JointKind kind : {kRealVector, kSO2}) {
    for (Scene s : {paper_scene(), uneven_scene()}) {
      s.kind = kind;
      const FastFilter f = build_fast_filter(s.chain(), s.rects, true);
      std::mt19937 rng(5);
      Tally t;
      long out_of_bounds = 0;
      for (int m = 0; m < 4000; ++m) {
        const auto [from, to] = random_motion(rng, s, m % 2 ? 1.0 : 4.0);  // long ones wrap and leave the bounds
        std::vector<double> start(from.size()), sweep(from.size());
        out_of_bounds += !motion_angles(from.data(), to.data(), s.chain(), s.bounds(), start.data(), sweep.data());
        add_motion(t, s, f, from, to, 20 + m % 81);
      }
      EXPECT_EQ(t.mismatches, 0) << "kind " << kind;
      EXPECT_LT(t.unsure, t.sure / 20) << t.unsure << " unsure of " << t.sure + t.unsure;
      EXPECT_GT(out_of_bounds, 100);  // both bounds paths were taken
    }
  }
}

// Motions whose middle state has a joint at a distance from 1e-7 to 1e-1 of a rectangle's edge.
TEST(FastFilter, MotionFormSureAnswersAreExactNearObstacles) {
  const Scene base = paper_scene();
  std::mt19937 rng(6);
  std::vector<double> x, y, mid(9);
  Tally t;
  for (int m = 0; m < 3000; ++m) {
    const auto [from, to] = random_motion(rng, base, 0.5);
    const int n = 40;
    for (int k = 0; k < 9; ++k) mid[k] = interpolate_joint(from[k], to[k], 0.5, kRealVector);
    exact_positions(base, mid, x, y);
    const int joint = 1 + static_cast<int>(rng() % 9);
    for (double gap : {1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1}) {
      for (double side : {-1.0, 1.0}) {
        Scene s = base;
        const double edge = x[joint] + side * gap;
        s.rects = {edge, y[joint] - 0.3, edge + 0.4, y[joint] + 0.3};
        if (m % 2) s.rects = {x[joint] - 0.3, y[joint] + side * gap, x[joint] + 0.3, y[joint] + side * gap + 0.4};
        add_motion(t, s, build_fast_filter(s.chain(), s.rects, true), from, to, n);
      }
    }
  }
  EXPECT_EQ(t.mismatches, 0);
  EXPECT_GT(t.unsure, 0);
}

TEST(FastFilter, MotionAnglesAreTheExactSums) {
  // Link i's angle on the line start + t * sweep equals the sum of interpolated joints up to whole
  // turns (wrapping joints) and rounding far below kFilterTrigError.
  for (const JointKind kind : {kRealVector, kSO2}) {
    Scene s = paper_scene();
    s.kind = kind;
    std::mt19937 rng(7);
    double worst = 0;
    for (int m = 0; m < 20000; ++m) {
      const auto [from, to] = random_motion(rng, s, 3.0);
      std::vector<double> start(9), sweep(9);
      motion_angles(from.data(), to.data(), s.chain(), s.bounds(), start.data(), sweep.data());
      const double t_m = (m % 97) / 96.0;
      double sum = 0;
      for (int i = 0; i < 9; ++i) {
        sum += interpolate_joint(from[i], to[i], t_m, kind);
        const double diff = std::remainder(start[i] + t_m * sweep[i] - sum, 2 * M_PI);
        worst = std::max(worst, std::fabs(diff));
      }
    }
    EXPECT_LT(worst, 1e-12) << "kind " << kind;
  }
}

// Wide RealVector bounds: joint values up to kFilterMaxJoint still give exact sure answers, larger
// ones leave every state to the exact check.
TEST(FastFilter, LargeJointValues) {
  Scene s = paper_scene();
  s.low.assign(9, -1e4);
  s.high.assign(9, 1e4);
  const FastFilter f = build_fast_filter(s.chain(), s.rects, true);
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> wide(-kFilterMaxJoint, kFilterMaxJoint), step(-0.3, 0.3);
  Tally t;
  for (int m = 0; m < 3000; ++m) {
    std::vector<double> from(9), to(9);
    for (int k = 0; k < 9; ++k) {
      from[k] = wide(rng);
      to[k] = std::clamp(from[k] + step(rng), -kFilterMaxJoint, kFilterMaxJoint);
    }
    t.add(s, f, from);
    add_motion(t, s, f, from, to, 30);
  }
  EXPECT_EQ(t.mismatches, 0);
  EXPECT_LT(t.unsure, t.sure / 20);

  std::vector<double> q(9, 0.0), start(9), sweep(9);
  q[3] = 2 * kFilterMaxJoint;
  EXPECT_EQ(filter_configuration([&q](int k) { return q[k]; }, s.chain(), s.bounds(), f.view()), kUnsure);
  std::vector<double> to = q;
  to[0] = 0.5;
  const bool in_bounds = motion_angles(q.data(), to.data(), s.chain(), s.bounds(), start.data(), sweep.data());
  EXPECT_TRUE(in_bounds);
  for (int j = 1; j <= 10; ++j)
    EXPECT_EQ(filter_motion_state(q.data(), to.data(), start.data(), sweep.data(), in_bounds, j, 10, 10, s.chain(),
                                  s.bounds(), f.view()),
              kUnsure);
}

TEST(FastFilter, OutOfBoundsIsSurelyInvalid) {
  const Scene s = paper_scene();
  const FastFilter f = build_fast_filter(s.chain(), s.rects, true);
  std::vector<double> q(9, 0.0);
  q[4] = 4.0;
  EXPECT_EQ(filter_configuration([&q](int k) { return q[k]; }, s.chain(), s.bounds(), f.view()), kSureInvalid);
  q[4] = NAN;
  EXPECT_EQ(filter_configuration([&q](int k) { return q[k]; }, s.chain(), s.bounds(), f.view()), kSureInvalid);
}

TEST(FastFilter, OffWhereItCannotHelp) {
  Scene s = paper_scene();
  EXPECT_FALSE(build_fast_filter(s.chain(), s.rects, false).enabled);
  s.base_x = 2e4;  // single precision too coarse at this distance from the origin
  EXPECT_FALSE(build_fast_filter(s.chain(), s.rects, true).enabled);
  s = paper_scene();
  s.rects[2] = NAN;
  EXPECT_FALSE(build_fast_filter(s.chain(), s.rects, true).enabled);
}

}  // namespace
