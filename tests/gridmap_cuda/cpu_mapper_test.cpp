// The CPU reference mapper against a direct transcription of CARMEN's egrid.c, on hand-checked
// single beams (every octant, leaving the grid, range 0, max-range readings, the wall band) and on
// random scans; plus the properties the design promises (order independence, rebuild).
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "carmen_transcription.h"
#include "gridmap_cuda/grid_mapper.h"
#include "linalg_cuda/errors.h"

namespace {

using gridmap_cuda::Backend;
using gridmap_cuda::GridMapper;
using gridmap_cuda::GridSpec;
using gridmap_cuda::LaserScan;
using gridmap_cuda::OccupancyGrid;
using gridmap_cuda::SensorModel;

GridSpec small_grid(double resolution = 0.1, int size = 200) {
  GridSpec spec;
  spec.resolution = resolution;
  spec.origin_x = -size * resolution / 2;
  spec.origin_y = -size * resolution / 2;
  spec.width = size;
  spec.height = size;
  return spec;
}

LaserScan single_beam(double x, double y, double angle, float range) {
  LaserScan scan;
  scan.laser_pose = {x, y, angle};
  scan.start_angle = 0.0;
  scan.angular_resolution = 0.01;
  scan.ranges = {range};
  return scan;
}

// Known masks equal, and log-odds equal within the fixed-point rounding (2^-21 per update) and
// CARMEN's own rounding of its probability products.
void expect_matches_carmen(const OccupancyGrid& ours, const carmen::EvidenceGrid& theirs, const std::string& what) {
  ASSERT_EQ(ours.known.size(), theirs.prob.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < theirs.prob.size() && mismatches < 5; ++i) {
    const bool known = theirs.prob[i] != -1;
    if (known != static_cast<bool>(ours.known[i])) {
      ADD_FAILURE() << what << ": cell " << i << " (x " << i % ours.spec.width << ", y " << i / ours.spec.width
                    << ") known " << ours.known[i] << " vs CARMEN " << known;
      ++mismatches;
      continue;
    }
    if (!known) continue;
    const double carmen_log_odds = std::log(theirs.prob[i] / (1 - theirs.prob[i]));
    // CARMEN keeps probabilities in doubles, which lose precision near 0 and 1 (1 - 1/(1 + odds) has
    // an absolute error of ~1e-16) and saturate at |log-odds| ~ 36; the fixed-point log-odds do not,
    // so only cells where CARMEN's own value is still accurate to 1e-6 are compared.
    if (std::fabs(carmen_log_odds) > 20) continue;
    if (std::fabs(ours.log_odds(i) - carmen_log_odds) > 1e-4) {
      ADD_FAILURE() << what << ": cell " << i << " log-odds " << ours.log_odds(i) << " vs CARMEN " << carmen_log_odds;
      ++mismatches;
    }
  }
}

OccupancyGrid cpu_map(const GridSpec& spec, const std::vector<LaserScan>& scans, const SensorModel& model = {}) {
  GridMapper mapper(spec, model, Backend::Cpu);
  mapper.insert(scans);
  return mapper.map();
}

carmen::EvidenceGrid carmen_map(const GridSpec& spec, const std::vector<LaserScan>& scans, const SensorModel& model = {}) {
  carmen::EvidenceGrid grid(spec);
  for (const LaserScan& scan : scans) carmen::update_grid(&grid, scan, model);
  return grid;
}

TEST(CpuMapper, SingleBeamInEveryOctantMatchesCarmen) {
  const GridSpec spec = small_grid();
  for (int k = 0; k < 16; ++k) {
    const double angle = -M_PI + (k + 0.37) * M_PI / 8;  // off the axes: every octant, both halves
    const std::vector<LaserScan> scans{single_beam(0.013, -0.021, angle, 3.3f)};
    expect_matches_carmen(cpu_map(spec, scans), carmen_map(spec, scans), "octant " + std::to_string(k));
  }
}

TEST(CpuMapper, HandCheckedBeamAlongX) {
  // Laser at the centre of cell (100, 100); a 1 m beam along +x at 0.1 m: cells x = 100..112
  // (1.0 m + 0.2 m wall), free while d < 1.0 (x 100..109), occupied for x 110..112.
  const GridSpec spec = small_grid();
  const OccupancyGrid map = cpu_map(spec, {single_beam(0.05, 0.05, 0.0, 1.0f)});
  const double free_step = std::log(0.45 / 0.55), occupied_step = std::log(0.55 / 0.45);
  for (int x = 95; x < 120; ++x) {
    const std::size_t cell = map.index(x, 100);
    const bool expected_known = x >= 100 && x <= 112;
    EXPECT_EQ(map.known[cell], expected_known) << x;
    if (!expected_known) continue;
    EXPECT_NEAR(map.log_odds(cell), x < 110 ? free_step : occupied_step, 1e-6) << x;
  }
  EXPECT_EQ(map.known_cells(), 13u);
}

TEST(CpuMapper, FadingPastRangeSureAndStopAtRangeMax) {
  // A 20 m beam: sure up to 5 m, fading to 10 m, then the ray ends (nothing from 10 m on).
  const GridSpec spec = small_grid(0.1, 400);
  const OccupancyGrid map = cpu_map(spec, {single_beam(0.05, 0.05, 0.0, 20.0f)});
  const int laser = 200;
  const SensorModel m;
  for (int x = laser; x < laser + 120; ++x) {
    const double d = (x - laser) * 0.1;
    const std::size_t cell = map.index(x, 200);
    if (d >= m.range_max) {
      EXPECT_FALSE(map.known[cell]) << d;
      continue;
    }
    const double p = d < m.range_sure ? m.p_emp : m.p_emp + (d - m.range_sure) / m.range_max * (m.p_prior - m.p_emp);
    EXPECT_NEAR(map.log_odds(cell), std::log(p / (1 - p)), 1e-6) << d;
  }
}

TEST(CpuMapper, RangeZeroMarksTheWallBandOnly) {
  const GridSpec spec = small_grid();
  const std::vector<LaserScan> scans{single_beam(0.05, 0.05, 0.0, 0.0f)};
  const OccupancyGrid map = cpu_map(spec, scans);
  EXPECT_EQ(map.known_cells(), 3u);  // cells 0, 1, 2 cells away: all at d >= 0 = range, occupied
  EXPECT_GT(map.log_odds(map.index(100, 100)), 0.0);
  expect_matches_carmen(map, carmen_map(spec, scans), "range 0");
}

TEST(CpuMapper, NoReturnReadingsAreSkipped) {
  const GridSpec spec = small_grid();
  const OccupancyGrid map = cpu_map(spec, {single_beam(0, 0, 0.3, 80.0f), single_beam(0, 0, 1.3, 50.0f)});
  EXPECT_EQ(map.known_cells(), 0u);
  const OccupancyGrid just_below = cpu_map(spec, {single_beam(0, 0, 0.3, 49.9f)});
  EXPECT_GT(just_below.known_cells(), 0u);  // used, but everything past range_max is cut
}

TEST(CpuMapper, BeamsLeavingTheGridMatchCarmen) {
  // The laser near the edge and outside the grid: cells off the grid are skipped, the ray goes on.
  const GridSpec spec = small_grid(0.1, 60);  // 6 m x 6 m around the origin
  std::vector<LaserScan> scans;
  for (const double x : {-2.95, 2.9, -3.7, 4.2})
    for (int k = 0; k < 8; ++k) scans.push_back(single_beam(x, 0.4 * k - 1.5, k * M_PI / 4 + 0.1, 4.0f + 0.3f * k));
  expect_matches_carmen(cpu_map(spec, scans), carmen_map(spec, scans), "leaving the grid");
}

TEST(CpuMapper, RandomScansMatchCarmen) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> position(-4.0, 4.0), heading(-M_PI, M_PI);
  std::uniform_real_distribution<float> range(0.0f, 14.0f);
  const GridSpec spec = small_grid(0.05, 300);
  std::vector<LaserScan> scans;
  for (int s = 0; s < 30; ++s) {
    LaserScan scan;
    scan.laser_pose = {position(rng), position(rng), heading(rng)};
    scan.start_angle = -M_PI / 2;
    scan.angular_resolution = M_PI / 180;
    for (int i = 0; i < 181; ++i) scan.ranges.push_back(i % 17 == 0 ? 80.0f : range(rng));
    scans.push_back(scan);
  }
  SensorModel model;
  model.p_occ = 0.7;
  model.p_emp = 0.35;
  model.p_prior = 0.45;
  expect_matches_carmen(cpu_map(spec, scans, model), carmen_map(spec, scans, model), "random scans");
}

TEST(CpuMapper, OrderOfScansDoesNotMatter) {
  std::mt19937 rng(5);
  std::vector<LaserScan> scans;
  for (int s = 0; s < 20; ++s) scans.push_back(single_beam(0.1 * s, 0.05 * s, 0.3 * s, 2.0f + 0.1f * s));
  const OccupancyGrid forward = cpu_map(small_grid(), scans);
  std::shuffle(scans.begin(), scans.end(), rng);
  const OccupancyGrid shuffled = cpu_map(small_grid(), scans);
  EXPECT_EQ(forward.evidence, shuffled.evidence);
  EXPECT_EQ(forward.known, shuffled.known);
}

TEST(CpuMapper, RebuildEqualsAFreshMapWithTheNewPoses) {
  std::vector<LaserScan> scans;
  for (int s = 0; s < 10; ++s) scans.push_back(single_beam(0.2 * s, 0.0, 0.5, 3.0f));
  std::vector<gridmap_cuda::Pose2D> corrected;
  std::vector<LaserScan> moved = scans;
  for (std::size_t s = 0; s < scans.size(); ++s) {
    corrected.push_back({scans[s].laser_pose.x, 0.3, 0.4});
    moved[s].laser_pose = corrected.back();
  }
  GridMapper mapper(small_grid(), {}, Backend::Cpu);
  mapper.insert(scans);
  mapper.rebuild(scans, corrected);
  EXPECT_EQ(mapper.map().evidence, cpu_map(small_grid(), moved).evidence);
  EXPECT_EQ(mapper.stats().scans, scans.size());
  EXPECT_THROW(mapper.rebuild(scans, {}), linalg_cuda::InvalidArgument);
}

TEST(CpuMapper, FailedRebuildKeepsTheMap) {
  std::vector<LaserScan> scans;
  for (int s = 0; s < 5; ++s) scans.push_back(single_beam(0.2 * s, 0.0, 0.5, 3.0f));
  GridMapper mapper(small_grid(), {}, Backend::Cpu);
  mapper.insert(scans);
  const OccupancyGrid before = mapper.map();
  std::vector<gridmap_cuda::Pose2D> poses(scans.size(), {0.0, 0.0, 0.0});
  poses[3].x = std::nan("");
  EXPECT_THROW(mapper.rebuild(scans, poses), linalg_cuda::InvalidArgument);
  EXPECT_THROW(mapper.rebuild(scans, {}), linalg_cuda::InvalidArgument);
  EXPECT_EQ(mapper.map().evidence, before.evidence);
  EXPECT_EQ(mapper.stats().scans, scans.size());
}

TEST(CpuMapper, AbsurdGeometryIsRejected) {
  GridMapper mapper(small_grid(), {}, Backend::Cpu);
  LaserScan scan = single_beam(0, 0, 0, 1.0f);
  scan.ranges = {1.0f, 1.0f};
  scan.angular_resolution = 1e308;  // beam 1 at an infinite angle
  EXPECT_THROW(mapper.insert(scan), linalg_cuda::InvalidArgument);
  GridSpec fine = small_grid(0.001, 100);  // range_max spans 10,000 cells: a 3 GB table
  EXPECT_THROW(GridMapper(fine, {}, Backend::Cpu), linalg_cuda::InvalidArgument);
}

TEST(CpuMapper, BadInputIsRejected) {
  GridMapper mapper(small_grid(), {}, Backend::Cpu);
  EXPECT_THROW(mapper.insert(single_beam(0, 0, 0, std::nanf(""))), linalg_cuda::InvalidArgument);
  EXPECT_THROW(mapper.insert(single_beam(0, 0, 0, -1.0f)), linalg_cuda::InvalidArgument);
  EXPECT_THROW(mapper.insert(single_beam(std::nan(""), 0, 0, 1.0f)), linalg_cuda::InvalidArgument);
  EXPECT_EQ(mapper.map().known_cells(), 0u);  // nothing half-inserted
  GridSpec bad = small_grid();
  bad.resolution = 0;
  EXPECT_THROW(GridMapper(bad, {}, Backend::Cpu), linalg_cuda::InvalidArgument);
  bad = small_grid();
  bad.width = 1 << 20;
  bad.height = 1 << 20;  // 2^40 cells
  EXPECT_THROW(GridMapper(bad, {}, Backend::Cpu), linalg_cuda::InvalidArgument);
  SensorModel model;
  model.p_occ = 1.0;
  EXPECT_THROW(GridMapper(small_grid(), model, Backend::Cpu), linalg_cuda::InvalidArgument);
}

TEST(CpuMapper, EmptyInputGivesAnUnknownMap) {
  GridMapper mapper(small_grid(), {}, Backend::Cpu);
  mapper.insert(std::vector<LaserScan>{});
  mapper.insert(LaserScan{});  // a scan without beams
  EXPECT_EQ(mapper.map().known_cells(), 0u);
  EXPECT_EQ(mapper.stats().scans, 1u);
}

TEST(FitGrid, CoversPosesAndEndPoints) {
  std::vector<LaserScan> scans{single_beam(1.0, 2.0, 0.0, 3.0f), single_beam(-2.0, 0.5, M_PI / 2, 1.0f),
                               single_beam(0.0, 0.0, M_PI, 80.0f)};
  const GridSpec spec = gridmap_cuda::fit_grid(scans, 0.05, {}, 0.5);
  EXPECT_LE(spec.origin_x, -2.0 - 0.5 + 1e-9);
  EXPECT_LE(spec.origin_y, 0.0 - 0.5 + 1e-9);
  EXPECT_GE(spec.origin_x + spec.width * spec.resolution, 1.0 + 3.2 + 0.5 - 1e-9);
  EXPECT_GE(spec.origin_y + spec.height * spec.resolution, 0.5 + 1.2 + 0.5 - 1e-9);
  EXPECT_LT(spec.origin_x + spec.width * spec.resolution, 1.0 + 3.2 + 0.5 + 0.1);  // no-return beam ignored
  EXPECT_THROW(gridmap_cuda::fit_grid({}, 0.05), linalg_cuda::InvalidArgument);
}

// A pose far away (x = 1e300) is too large for a grid: a short message (not the 300 digits of
// std::to_string) that names the scans to look at.
TEST(FitGrid, TooLargeNamesTheScansInReadableNumbers) {
  std::vector<LaserScan> scans{single_beam(0.0, 0.0, 0.0, 1.0f), single_beam(1.0, 0.0, 0.0, 1.0f),
                               single_beam(1e300, 0.0, 0.0, 1.0f)};
  try {
    gridmap_cuda::fit_grid(scans, 0.05);
    ADD_FAILURE() << "no error";
  } catch (const linalg_cuda::InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_LT(message.size(), 250u) << message;
    EXPECT_NE(message.find("span 1e+300 x"), std::string::npos) << message;
    EXPECT_NE(message.find("the x extent runs from scan 0 to scan 2"), std::string::npos) << message;
  }
}

}  // namespace
