// The shared per-configuration math against independent references: libm's sin/cos, Liang-Barsky
// clipping for segment / rectangle, and a brute-force checker built from those.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "chain_geometry.h"

namespace {

using namespace ompl_cuda::detail;

TEST(DeterministicTrig, WithinTwoUlpOfLibm) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-60.0, 60.0);
  for (int i = 0; i < 2000000; ++i) {
    const double x = u(rng);
    double s, c;
    deterministic_sincos(x, &s, &c);
    ASSERT_NEAR(s, std::sin(x), 4.5e-16) << x;
    ASSERT_NEAR(c, std::cos(x), 4.5e-16) << x;
  }
  double s, c;
  deterministic_sincos(0.0, &s, &c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, 1.0);
}

// Angles past 2^53 quarter turns, infinities and NaN give NaN (as libm's do for the last two) rather
// than an integer conversion out of range; an angle of 1e15 rad is still reduced.
TEST(DeterministicTrig, NoAngleLeftGivesNaN) {
  for (const double x : {1e300, -1e17, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    double s = 0, c = 0;
    deterministic_sincos(x, &s, &c);
    EXPECT_TRUE(std::isnan(s) && std::isnan(c)) << x;
  }
  double s, c;
  deterministic_sincos(1e15, &s, &c);
  EXPECT_TRUE(std::isfinite(s) && std::isfinite(c));
  EXPECT_NEAR(s * s + c * c, 1.0, 1e-15);
}

// Liang-Barsky: does the closed segment meet the closed rectangle?
bool clip_reference(double x0, double y0, double x1, double y1, const double* r) {
  double t0 = 0.0, t1 = 1.0;
  const double dx = x1 - x0, dy = y1 - y0;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x0 - r[0], r[2] - x0, y0 - r[1], r[3] - y0};
  for (int k = 0; k < 4; ++k) {
    if (p[k] == 0.0) {
      if (q[k] < 0.0) return false;
    } else {
      const double t = q[k] / p[k];
      if (p[k] < 0.0) t0 = std::max(t0, t);
      else t1 = std::min(t1, t);
    }
  }
  return t0 <= t1;
}

TEST(SegmentRectangle, MatchesClippingOnRandomSegments) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  const double rect[4] = {-0.7, -0.4, 0.9, 1.1};
  int hits = 0, disagreements = 0;
  for (int i = 0; i < 1000000; ++i) {
    const double x0 = u(rng), y0 = u(rng), x1 = u(rng), y1 = u(rng);
    const bool expected = clip_reference(x0, y0, x1, y1, rect);
    hits += expected;
    disagreements += segment_hits_rectangle(x0, y0, x1, y1, rect) != expected;
  }
  EXPECT_EQ(disagreements, 0);
  EXPECT_GT(hits, 100000);
}

TEST(SegmentRectangle, TouchingCountsAsCollision) {
  const double rect[4] = {0.0, 0.0, 1.0, 1.0};
  EXPECT_TRUE(segment_hits_rectangle(-1.0, 0.5, 0.0, 0.5, rect));   // ends on the left edge
  EXPECT_TRUE(segment_hits_rectangle(-1.0, 1.0, 2.0, 1.0, rect));   // runs along the top edge
  EXPECT_TRUE(segment_hits_rectangle(-1.0, 2.0, 2.0, -1.0, rect));  // diagonal through
  EXPECT_TRUE(segment_hits_rectangle(0.0, 2.0, 2.0, 0.0, rect));    // through the corner (1, 1)
  EXPECT_FALSE(segment_hits_rectangle(0.0, 2.1, 2.1, 0.0, rect));   // misses the corner
  EXPECT_FALSE(segment_hits_rectangle(-1.0, -0.1, 2.0, -0.1, rect));
  EXPECT_TRUE(segment_hits_rectangle(0.2, 0.2, 0.3, 0.3, rect));    // inside
}

TEST(SegmentSegment, OmplDemoSemantics) {
  EXPECT_TRUE(segments_intersect(0, 0, 1, 1, 0, 1, 1, 0));
  EXPECT_FALSE(segments_intersect(0, 0, 1, 0, 0, 1, 1, 1));      // parallel
  EXPECT_FALSE(segments_intersect(0, 0, 1, 0, 1, 0, 2, 1));      // touching at an end point: not counted
  EXPECT_FALSE(segments_intersect(0, 0, 1, 1, 2, 0, 1.5, 0.4));  // would meet beyond the end
}

TEST(ForwardKinematics, MatchesLibmChain) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-3.14, 3.14);
  std::vector<double> lengths{1.0, 0.5, 0.25, 2.0};
  const ChainView chain{4, lengths.data(), 0.3, -0.2, false};
  for (int k = 0; k < 1000; ++k) {
    double q[4], x[5], y[5];
    for (double& v : q) v = u(rng);
    forward_kinematics(q, chain, x, y);
    double angle = 0, px = 0.3, py = -0.2;
    for (int i = 0; i < 4; ++i) {
      angle += q[i];
      px += std::cos(angle) * lengths[i];
      py += std::sin(angle) * lengths[i];
      EXPECT_NEAR(x[i + 1], px, 1e-14);
      EXPECT_NEAR(y[i + 1], py, 1e-14);
    }
  }
}

// The rectangle grid skips only rectangles the exact test rejects: with and without it, every link
// gets the same decision, also links that end exactly on a rectangle's edge or corner (coordinates on
// a lattice shared with the rectangles, so touching happens often) and links outside the grid.
TEST(RectangleGrid, SameDecisionsAsTestingEveryRectangle) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> lattice(-400, 400), side(1, 12);
  std::vector<double> rects;
  for (int r = 0; r < 3000; ++r) {
    const double x = lattice(rng) / 16.0, y = lattice(rng) / 16.0;
    rects.insert(rects.end(), {x, y, x + side(rng) / 16.0, y + side(rng) / 16.0});
  }
  const RectangleGrid grid = build_rectangle_grid(rects);
  ASSERT_GT(grid.layout.nx, 1);
  ASSERT_GT(grid.layout.ny, 1);
  ObstacleView with_grid{3000, rects.data(), 0, nullptr, grid.view()};
  ObstacleView without{3000, rects.data(), 0, nullptr, RectangleGridView{}};
  std::uniform_int_distribution<int> wide(-480, 480), step(-24, 24);
  int hits = 0, disagreements = 0;
  for (int i = 0; i < 300000; ++i) {
    const double x0 = wide(rng) / 16.0, y0 = wide(rng) / 16.0;
    const double x1 = x0 + step(rng) / 16.0, y1 = y0 + step(rng) / 16.0;
    const bool expected = link_collides(x0, y0, x1, y1, without);
    hits += expected;
    disagreements += link_collides(x0, y0, x1, y1, with_grid) != expected;
  }
  EXPECT_EQ(disagreements, 0);
  EXPECT_GT(hits, 30000);
  EXPECT_LT(hits, 270000);
}

TEST(RectangleGrid, NoneForFewRectangles) {
  std::vector<double> rects;
  for (int r = 0; r < kRectangleGridThreshold - 1; ++r) rects.insert(rects.end(), {r * 1.0, 0.0, r + 0.5, 1.0});
  EXPECT_EQ(build_rectangle_grid(rects).layout.nx, 0);
  rects.insert(rects.end(), {100.0, 0.0, 100.5, 1.0});
  EXPECT_GT(build_rectangle_grid(rects).layout.nx, 0);
}

TEST(Interpolation, So2TakesTheShortWayAcrossTheSeam) {
  EXPECT_NEAR(std::fabs(interpolate_joint(3.0, -3.0, 0.5, kSO2)), 3.14159265358979323846, 1e-15);  // +-pi
  EXPECT_DOUBLE_EQ(interpolate_joint(3.0, -3.0, 0.5, kRealVector), 0.0);
  EXPECT_DOUBLE_EQ(interpolate_joint(-1.0, 1.0, 0.25, kSO2), -0.5);
}

}  // namespace
