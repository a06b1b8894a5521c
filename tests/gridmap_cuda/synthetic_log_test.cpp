// The synthetic log: its shape, determinism, and that its ranges agree with its own floor plan.
#include "gridmap_cuda/synthetic_log.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "linalg_cuda/errors.h"

namespace gridmap_cuda {
namespace {

constexpr double kPi = 3.14159265358979323846;

double distance_to_segment(double px, double py, const Segment& s) {
  const double ex = s.x1 - s.x0;
  const double ey = s.y1 - s.y0;
  const double len2 = ex * ex + ey * ey;
  double t = len2 > 0.0 ? ((px - s.x0) * ex + (py - s.y0) * ey) / len2 : 0.0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(px - (s.x0 + t * ex), py - (s.y0 + t * ey));
}

double distance_to_walls(double px, double py, const std::vector<Segment>& walls) {
  double best = std::numeric_limits<double>::infinity();
  for (const Segment& s : walls) best = std::min(best, distance_to_segment(px, py, s));
  return best;
}

// Outer walls + two segments per inner wall (one door each) + four per box.
std::size_t structural_walls(const SyntheticLogOptions& o) {
  const std::size_t inner = static_cast<std::size_t>(o.rooms_x - 1) * o.rooms_y +
                            static_cast<std::size_t>(o.rooms_x) * (o.rooms_y - 1);
  return 4 + 2 * inner;
}

TEST(SyntheticLog, ShapeOfTheDefaultLog) {
  const SyntheticLogOptions options;
  const auto t0 = std::chrono::steady_clock::now();
  const SyntheticLog log = make_synthetic_log(options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("default synthetic log (%d scans x %d beams, %zu segments): %.3f s\n", options.scans,
              options.beams, log.walls.size(), seconds);
#ifdef NDEBUG
  EXPECT_LT(seconds, 2.0);  // ~0.2 s in an optimised build; the bound leaves room for a busy machine
#endif

  ASSERT_EQ(log.scans.size(), 1000u);
  const std::size_t rooms = static_cast<std::size_t>(options.rooms_x) * options.rooms_y;
  EXPECT_EQ(log.walls.size(), structural_walls(options) + 4 * options.obstacles_per_room * rooms);
  for (std::size_t k = 0; k < log.scans.size(); ++k) {
    const LaserScan& scan = log.scans[k];
    ASSERT_EQ(scan.ranges.size(), 361u);
    EXPECT_DOUBLE_EQ(scan.start_angle, -kPi / 2);
    EXPECT_DOUBLE_EQ(scan.angular_resolution, kPi / 360);
    EXPECT_DOUBLE_EQ(scan.max_range, 80.0);
    EXPECT_DOUBLE_EQ(scan.timestamp, 0.1 * static_cast<double>(k));
  }
}

TEST(SyntheticLog, WallsSpanTheFloorPlan) {
  SyntheticLogOptions options;
  options.rooms_x = 3;
  options.rooms_y = 2;
  options.room_size = 5.0;
  const SyntheticLog log = make_synthetic_log(options);
  double x_min = 1e9, x_max = -1e9, y_min = 1e9, y_max = -1e9;
  for (const Segment& s : log.walls) {
    x_min = std::min({x_min, s.x0, s.x1});
    x_max = std::max({x_max, s.x0, s.x1});
    y_min = std::min({y_min, s.y0, s.y1});
    y_max = std::max({y_max, s.y0, s.y1});
  }
  EXPECT_DOUBLE_EQ(x_min, 0.0);
  EXPECT_DOUBLE_EQ(y_min, 0.0);
  EXPECT_DOUBLE_EQ(x_max, 15.0);
  EXPECT_DOUBLE_EQ(y_max, 10.0);

  options.obstacles_per_room = 0;
  EXPECT_EQ(make_synthetic_log(options).walls.size(), structural_walls(options));
}

TEST(SyntheticLog, DeterministicForASeed) {
  SyntheticLogOptions options;
  options.scans = 200;
  const SyntheticLog a = make_synthetic_log(options);
  const SyntheticLog b = make_synthetic_log(options);
  ASSERT_EQ(a.walls.size(), b.walls.size());
  for (std::size_t i = 0; i < a.walls.size(); ++i) {
    EXPECT_EQ(a.walls[i].x0, b.walls[i].x0);
    EXPECT_EQ(a.walls[i].y0, b.walls[i].y0);
    EXPECT_EQ(a.walls[i].x1, b.walls[i].x1);
    EXPECT_EQ(a.walls[i].y1, b.walls[i].y1);
  }
  ASSERT_EQ(a.scans.size(), b.scans.size());
  for (std::size_t k = 0; k < a.scans.size(); ++k) {
    EXPECT_EQ(a.scans[k].laser_pose.x, b.scans[k].laser_pose.x);
    EXPECT_EQ(a.scans[k].laser_pose.y, b.scans[k].laser_pose.y);
    EXPECT_EQ(a.scans[k].laser_pose.theta, b.scans[k].laser_pose.theta);
    ASSERT_EQ(a.scans[k].ranges, b.scans[k].ranges) << "scan " << k;
  }

  options.seed = 2;
  const SyntheticLog c = make_synthetic_log(options);
  bool walls_differ = c.walls.size() != a.walls.size();
  for (std::size_t i = 0; !walls_differ && i < a.walls.size(); ++i) {
    walls_differ = a.walls[i].x0 != c.walls[i].x0 || a.walls[i].y0 != c.walls[i].y0 ||
                   a.walls[i].x1 != c.walls[i].x1 || a.walls[i].y1 != c.walls[i].y1;
  }
  EXPECT_TRUE(walls_differ);
  std::size_t differing_scans = 0;
  for (std::size_t k = 0; k < a.scans.size(); ++k) differing_scans += a.scans[k].ranges != c.scans[k].ranges;
  EXPECT_GT(differing_scans, a.scans.size() / 2);
}

TEST(SyntheticLog, RangesAreFiniteAndHitsLieOnWalls) {
  for (std::uint32_t seed : {1u, 7u}) {
    SyntheticLogOptions options;
    options.seed = seed;
    const SyntheticLog log = make_synthetic_log(options);
    std::size_t hits = 0;
    for (const LaserScan& scan : log.scans) {
      for (float r : scan.ranges) {
        ASSERT_TRUE(std::isfinite(r));
        ASSERT_GE(r, 0.0f);
        ASSERT_TRUE(r < 50.0f || r == 80.0f) << r;
        hits += r < 50.0f;
      }
    }
    // The floor plan (24 m x 18 m) is closed: every beam hits something.
    EXPECT_EQ(hits, log.scans.size() * 361);

    std::mt19937 pick(seed);
    const double tolerance = 5.0 * options.range_noise;
    int checked = 0;
    for (int n = 0; n < 2000; ++n) {
      const LaserScan& scan = log.scans[pick() % log.scans.size()];
      const std::size_t beam = pick() % scan.ranges.size();
      const double r = scan.ranges[beam];
      if (!(r < 50.0)) continue;
      const double angle = scan.laser_pose.theta + scan.start_angle + beam * scan.angular_resolution;
      const double hx = scan.laser_pose.x + r * std::cos(angle);
      const double hy = scan.laser_pose.y + r * std::sin(angle);
      ASSERT_LE(distance_to_walls(hx, hy, log.walls), tolerance) << "seed " << seed << ", beam " << beam;
      ++checked;
    }
    EXPECT_EQ(checked, 2000);
  }
}

TEST(SyntheticLog, NoiselessRangesAreExact) {
  SyntheticLogOptions options;
  options.range_noise = 0.0;
  options.scans = 100;
  const SyntheticLog log = make_synthetic_log(options);
  double worst = 0.0;
  for (const LaserScan& scan : log.scans) {
    for (std::size_t beam = 0; beam < scan.ranges.size(); ++beam) {
      const double r = scan.ranges[beam];
      const double angle = scan.laser_pose.theta + scan.start_angle + beam * scan.angular_resolution;
      worst = std::max(worst, distance_to_walls(scan.laser_pose.x + r * std::cos(angle),
                                                scan.laser_pose.y + r * std::sin(angle), log.walls));
    }
  }
  EXPECT_LT(worst, 1e-5);  // float rounding of ranges up to ~30 m
}

TEST(SyntheticLog, NoHitWithinFiftyMetresReadsMaxRange) {
  SyntheticLogOptions options;
  options.rooms_x = 1;
  options.rooms_y = 1;
  options.room_size = 120.0;  // the robot circles the centre: every wall is ~60 m away
  options.obstacles_per_room = 0;
  options.max_range = 100.0;
  options.scans = 20;
  const SyntheticLog log = make_synthetic_log(options);
  ASSERT_EQ(log.scans.size(), 20u);
  for (const LaserScan& scan : log.scans) {
    EXPECT_DOUBLE_EQ(scan.max_range, 100.0);
    for (float r : scan.ranges) ASSERT_EQ(r, 100.0f);
  }
}

TEST(SyntheticLog, PosesStayInsideAndClearOfWalls) {
  for (std::uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    SyntheticLogOptions options;
    options.seed = seed;
    options.beams = 2;  // the poses do not depend on the beams
    const SyntheticLog log = make_synthetic_log(options);
    double closest = 1e9;
    const double width = options.rooms_x * options.room_size;
    const double height = options.rooms_y * options.room_size;
    for (const LaserScan& scan : log.scans) {
      const Pose2D& p = scan.laser_pose;
      ASSERT_GT(p.x, 0.0);
      ASSERT_LT(p.x, width);
      ASSERT_GT(p.y, 0.0);
      ASSERT_LT(p.y, height);
      const double clearance = distance_to_walls(p.x, p.y, log.walls);
      ASSERT_GE(clearance, 0.3) << "seed " << seed << " at " << p.x << ", " << p.y;
      closest = std::min(closest, clearance);
    }
    std::printf("seed %u: closest approach to a wall %.3f m\n", seed, closest);
  }
}

TEST(SyntheticLog, TourVisitsEveryRoomEquallySpaced) {
  for (auto [rx, ry] : {std::pair{4, 3}, std::pair{3, 3}, std::pair{1, 4}, std::pair{2, 2}, std::pair{1, 1}}) {
    SyntheticLogOptions options;
    options.rooms_x = rx;
    options.rooms_y = ry;
    options.beams = 2;  // the poses do not depend on the beams
    const SyntheticLog log = make_synthetic_log(options);
    const auto& scans = log.scans;
    ASSERT_EQ(scans.size(), 1000u);

    // Consecutive poses (the tour is closed: the last one leads to the first) are one arc-length step
    // apart along the path: never farther, and exactly that on straight pieces, where the heading is
    // also the direction of travel.
    std::vector<double> steps;
    for (std::size_t k = 0; k < scans.size(); ++k) {
      const Pose2D& a = scans[k].laser_pose;
      const Pose2D& b = scans[(k + 1) % scans.size()].laser_pose;
      steps.push_back(std::hypot(b.x - a.x, b.y - a.y));
    }
    const double step = *std::max_element(steps.begin(), steps.end());
    ASSERT_GT(step, 0.0);
    std::size_t straight = 0;
    for (std::size_t k = 0; k < scans.size(); ++k) {
      if (std::abs(steps[k] - step) > 1e-9 * (1.0 + step)) continue;
      const Pose2D& a = scans[k].laser_pose;
      const Pose2D& b = scans[(k + 1) % scans.size()].laser_pose;
      if (std::abs(std::remainder(a.theta - b.theta, 2 * kPi)) > 1e-9) continue;  // a corner between them
      EXPECT_NEAR(std::remainder(std::atan2(b.y - a.y, b.x - a.x) - a.theta, 2 * kPi), 0.0, 1e-9);
      ++straight;
    }
    EXPECT_GT(straight, scans.size() * 9 / 10) << rx << " x " << ry;

    // Every room centre is passed within one step.
    for (int j = 0; j < ry; ++j) {
      for (int i = 0; i < rx; ++i) {
        const double cx = (i + 0.5) * options.room_size;
        const double cy = (j + 0.5) * options.room_size;
        double nearest = 1e9;
        for (const LaserScan& s : scans) nearest = std::min(nearest, std::hypot(s.laser_pose.x - cx, s.laser_pose.y - cy));
        const double reach = (rx * ry == 1) ? 1.0 : step;  // a single room: a small loop around its centre
        EXPECT_LE(nearest, reach) << "room " << i << ", " << j << " of " << rx << " x " << ry;
      }
    }
  }
}

TEST(SyntheticLog, InvalidOptionsThrow) {
  auto expect_invalid = [](auto change) {
    SyntheticLogOptions options;
    options.scans = 5;
    change(options);
    EXPECT_THROW(make_synthetic_log(options), linalg_cuda::InvalidArgument);
  };
  expect_invalid([](SyntheticLogOptions& o) { o.rooms_x = 0; });
  expect_invalid([](SyntheticLogOptions& o) { o.rooms_y = -2; });
  expect_invalid([](SyntheticLogOptions& o) { o.room_size = 0.0; });
  expect_invalid([](SyntheticLogOptions& o) { o.room_size = std::nan(""); });
  expect_invalid([](SyntheticLogOptions& o) { o.door_width = 0.0; });
  expect_invalid([](SyntheticLogOptions& o) { o.door_width = 5.0; });  // room_size 6: at most < 5
  expect_invalid([](SyntheticLogOptions& o) { o.door_width = std::numeric_limits<double>::infinity(); });
  expect_invalid([](SyntheticLogOptions& o) { o.obstacles_per_room = -1; });
  expect_invalid([](SyntheticLogOptions& o) { o.scans = 0; });
  expect_invalid([](SyntheticLogOptions& o) { o.beams = 1; });
  expect_invalid([](SyntheticLogOptions& o) { o.max_range = 0.0; });
  expect_invalid([](SyntheticLogOptions& o) { o.range_noise = -0.01; });
  expect_invalid([](SyntheticLogOptions& o) { o.range_noise = std::nan(""); });

  SyntheticLogOptions small;
  small.scans = 3;
  small.beams = 2;
  small.door_width = 4.9;  // just below room_size - 1
  const SyntheticLog log = make_synthetic_log(small);
  ASSERT_EQ(log.scans.size(), 3u);
  EXPECT_EQ(log.scans[0].ranges.size(), 2u);
  EXPECT_DOUBLE_EQ(log.scans[0].angular_resolution, kPi);
}

}  // namespace
}  // namespace gridmap_cuda
