// The hit/miss sensor model: its rules on hand-made beams, an independent transcription of them on
// random scans, the CPU reference against the GPU bit for bit (synthetic logs, every shared log, scan
// by scan, batches, rebuilds), and bad models.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gridmap_cuda/carmen_log.h"
#include "gridmap_cuda/grid_mapper.h"
#include "gridmap_cuda/synthetic_log.h"
#include "linalg_cuda/errors.h"
#include "../../gridmap_cuda/src/bresenham_line.h"
#include "test_support.h"

namespace gridmap_cuda {
namespace {

std::int64_t fixed(double p) { return std::llround(std::log(p / (1.0 - p)) * kEvidenceScale); }

GridSpec square(int cells, double resolution = 0.1) {
  GridSpec spec;
  spec.resolution = resolution;
  spec.width = spec.height = cells;
  return spec;
}

LaserScan single_beam(double x, double y, double angle, float range) {
  LaserScan scan;
  scan.laser_pose = {x, y, 0.0};
  scan.start_angle = angle;
  scan.angular_resolution = 0.01;
  scan.ranges = {range};
  return scan;
}

TEST(HitMissModel, OneBeamMissesItsRayAndHitsItsEnd) {
  const GridSpec spec = square(100);
  GridMapper mapper(spec, HitMissModel{}, Backend::Cpu);
  mapper.insert(single_beam(1.05, 5.05, 0.0, 2.0f));  // from cell (10, 50) to (30, 50)
  const OccupancyGrid map = mapper.map();
  for (int x = 0; x < 100; ++x) {
    const std::size_t cell = map.index(x, 50);
    if (x < 10 || x > 30) {
      EXPECT_EQ(map.known[cell], 0) << x;
    } else {
      EXPECT_EQ(map.known[cell], 1) << x;
      EXPECT_EQ(map.evidence[cell], x == 30 ? fixed(0.55) : fixed(0.49)) << x;
    }
  }
  EXPECT_EQ(map.known_cells(), 21u);
  EXPECT_EQ(mapper.stats().used_beams, 1u);
}

TEST(HitMissModel, RepeatedScansClampAtTheBounds) {
  GridMapper mapper(square(100), HitMissModel{}, Backend::Cpu);
  for (int k = 0; k < 200; ++k) mapper.insert(single_beam(1.05, 5.05, 0.0, 2.0f));
  const OccupancyGrid map = mapper.map();
  EXPECT_EQ(map.evidence[map.index(30, 50)], fixed(0.97));
  EXPECT_EQ(map.evidence[map.index(20, 50)], fixed(0.12));
  EXPECT_NEAR(map.probability(map.index(30, 50)), 0.97, 1e-6);
}

TEST(HitMissModel, AHitBeatsAMissOfTheSameScanAndEachCellMovesOnce) {
  // Two beams of one scan along +x: the short one ends in a cell the long one crosses, and both cross
  // the cells before it.
  GridMapper mapper(square(100), HitMissModel{}, Backend::Cpu);
  LaserScan scan = single_beam(1.05, 5.05, 0.0, 1.0f);
  scan.angular_resolution = 0.0;  // both beams point the same way
  scan.ranges = {1.0f, 3.0f};
  mapper.insert(scan);
  const OccupancyGrid map = mapper.map();
  EXPECT_EQ(map.evidence[map.index(20, 50)], fixed(0.55));  // the short beam's end: a hit, once
  EXPECT_EQ(map.evidence[map.index(15, 50)], fixed(0.49));  // crossed twice: one miss
  EXPECT_EQ(map.evidence[map.index(40, 50)], fixed(0.55));
  EXPECT_EQ(mapper.stats().cell_updates, 11u + 31u);  // marks, beam by beam
}

TEST(HitMissModel, NoReturnMarksMissesAlongTheMissingRay) {
  HitMissModel model;
  model.max_range = 3.0;
  model.missing_data_ray_length = 1.0;
  GridMapper mapper(square(100), model, Backend::Cpu);
  mapper.insert(single_beam(1.05, 5.05, 0.0, 3.0f));  // at max_range: no return
  OccupancyGrid map = mapper.map();
  EXPECT_EQ(map.known_cells(), 11u);  // cells 10..20, all misses
  EXPECT_EQ(map.evidence[map.index(20, 50)], fixed(0.49));
  EXPECT_EQ(mapper.stats().used_beams, 0u);
  model.missing_data_ray_length = 0.0;
  GridMapper silent(square(100), model, Backend::Cpu);
  silent.insert(single_beam(1.05, 5.05, 0.0, 50.0f));
  EXPECT_EQ(silent.map().known_cells(), 0u);
}

// The rules transcribed from the model's description, with sets: per scan the end cells of the
// returns are hits, the other cells of every beam's line misses, each cell updated once and clamped.
std::vector<std::int64_t> transcribed(const GridSpec& spec, const std::vector<LaserScan>& scans,
                                      const HitMissModel& model) {
  std::vector<std::int64_t> log_odds(spec.cells(), 0);
  const std::int64_t hit = fixed(model.p_hit), miss = fixed(model.p_miss), low = fixed(model.p_min),
                     high = fixed(model.p_max);
  for (const LaserScan& scan : scans) {
    std::map<std::int64_t, bool> touched;  // cell -> hit
    const double lx = (scan.laser_pose.x - spec.origin_x) / spec.resolution;
    const double ly = (scan.laser_pose.y - spec.origin_y) / spec.resolution;
    const int cx = static_cast<int>(std::floor(lx)), cy = static_cast<int>(std::floor(ly));
    for (std::size_t i = 0; i < scan.ranges.size(); ++i) {
      const double r = scan.ranges[i];
      const bool returned = r < model.max_range;
      const double reach = returned ? r : model.missing_data_ray_length;
      if (!returned && model.missing_data_ray_length <= 0.0) continue;
      const double a = scan.start_angle + static_cast<double>(i) * scan.angular_resolution;
      // The mapper's angle addition (cos(theta + a) from the two angles' cosines and sines).
      const double c = std::cos(scan.laser_pose.theta) * std::cos(a) - std::sin(scan.laser_pose.theta) * std::sin(a);
      const double s = std::sin(scan.laser_pose.theta) * std::cos(a) + std::cos(scan.laser_pose.theta) * std::sin(a);
      const detail::BresenhamLine line(cx, cy, static_cast<int>(std::floor(lx + reach * c / spec.resolution)),
                                       static_cast<int>(std::floor(ly + reach * s / spec.resolution)));
      for (int j = 0; j < line.steps(); ++j) {
        int x, y;
        line.cell(j, &x, &y);
        if (x < 0 || y < 0 || x >= spec.width || y >= spec.height) continue;
        bool& is_hit = touched[static_cast<std::int64_t>(y) * spec.width + x];
        is_hit = is_hit || (returned && j + 1 == line.steps());
      }
    }
    for (const auto& [cell, is_hit] : touched)
      log_odds[cell] = std::clamp(log_odds[cell] + (is_hit ? hit : miss), low, high);
  }
  return log_odds;
}

std::vector<LaserScan> random_scans(int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> position(0.5, 9.5), angle(-3.2, 3.2);
  std::uniform_real_distribution<float> range(0.0f, 8.0f);
  std::vector<LaserScan> scans;
  for (int k = 0; k < count; ++k) {
    LaserScan scan;
    scan.laser_pose = {position(rng), position(rng), angle(rng)};
    scan.start_angle = -1.5;
    scan.angular_resolution = 3.0 / 60;
    for (int i = 0; i < 61; ++i) scan.ranges.push_back(i % 13 == 0 ? 100.0f : range(rng));
    scans.push_back(scan);
  }
  return scans;
}

TEST(HitMissModel, CpuFollowsTheTranscribedRules) {
  HitMissModel model;
  model.max_range = 6.0;
  model.missing_data_ray_length = 2.0;
  const GridSpec spec = square(100);
  const std::vector<LaserScan> scans = random_scans(200, 5);
  GridMapper mapper(spec, model, Backend::Cpu);
  mapper.insert(scans);
  const OccupancyGrid map = mapper.map();
  const std::vector<std::int64_t> expected = transcribed(spec, scans, model);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) differing += map.evidence[i] != expected[i];
  EXPECT_EQ(differing, 0u);
  EXPECT_TRUE(mapper.occupancy_values().data == map.occupancy_values().data);
}

TEST(HitMissModel, BatchEqualsOneByOneAndRebuildEqualsFresh) {
  const std::vector<LaserScan> scans = random_scans(60, 7);
  const GridSpec spec = square(100);
  GridMapper batch(spec, HitMissModel{}, Backend::Cpu), streaming(spec, HitMissModel{}, Backend::Cpu);
  batch.insert(scans);
  for (const LaserScan& scan : scans) streaming.insert(scan);
  EXPECT_TRUE(batch.map().evidence == streaming.map().evidence);
  std::vector<Pose2D> moved;
  for (const LaserScan& scan : scans)
    moved.push_back({scan.laser_pose.x + 0.2, scan.laser_pose.y, scan.laser_pose.theta});
  batch.rebuild(scans, moved);
  std::vector<LaserScan> shifted = scans;
  for (std::size_t k = 0; k < scans.size(); ++k) shifted[k].laser_pose = moved[k];
  GridMapper fresh(spec, HitMissModel{}, Backend::Cpu);
  fresh.insert(shifted);
  EXPECT_TRUE(batch.map().evidence == fresh.map().evidence);
  EXPECT_TRUE(batch.map().known == fresh.map().known);
}

TEST(HitMissModel, BadModelsAreRejected) {
  auto rejects = [](auto change) {
    HitMissModel model;
    change(model);
    EXPECT_THROW(GridMapper(square(10), model, Backend::Cpu), linalg_cuda::InvalidArgument);
  };
  rejects([](HitMissModel& m) { m.p_hit = 1.0; });
  rejects([](HitMissModel& m) { m.p_miss = std::nan(""); });
  rejects([](HitMissModel& m) { m.p_min = 0.6, m.p_max = 0.5; });
  rejects([](HitMissModel& m) { m.p_hit = 0.99; });  // above p_max
  rejects([](HitMissModel& m) { m.max_range = -1.0; });
  rejects([](HitMissModel& m) { m.missing_data_ray_length = INFINITY; });
}

// The CPU reference against the GPU, bit for bit.
void expect_gpu_equals_cpu(const GridSpec& spec, const std::vector<LaserScan>& scans, const HitMissModel& model,
                           const std::string& what) {
  GridMapper gpu(spec, model, Backend::Cuda), cpu(spec, model, Backend::Cpu);
  gpu.insert(scans);
  cpu.insert(scans);
  const OccupancyGrid a = gpu.map(), b = cpu.map();
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.evidence.size(); ++i) differing += a.evidence[i] != b.evidence[i];
  EXPECT_EQ(differing, 0u) << what;
  EXPECT_TRUE(a.known == b.known) << what;
  EXPECT_EQ(gpu.stats().cell_updates, cpu.stats().cell_updates) << what;
  EXPECT_EQ(gpu.stats().used_beams, cpu.stats().used_beams) << what;
  EXPECT_TRUE(gpu.occupancy_values().data == cpu.occupancy_values().data) << what;
}

TEST(GpuHitMiss, BitIdenticalToCpuOnSyntheticAndRandomLogs) {
  REQUIRE_CUDA_DEVICE();
  SyntheticLogOptions options;
  options.scans = 300;
  const std::vector<LaserScan> scans = make_synthetic_log(options).scans;
  for (const double resolution : {0.1, 0.05, 0.025})
    expect_gpu_equals_cpu(fit_grid(scans, resolution, HitMissModel{}), scans, HitMissModel{},
                          "synthetic at " + std::to_string(resolution));
  HitMissModel saturating;
  saturating.p_hit = 0.9;
  saturating.p_miss = 0.2;
  expect_gpu_equals_cpu(square(100), random_scans(400, 9), saturating, "random, saturating");
}

TEST(GpuHitMiss, BitIdenticalToCpuOnEveryCarmenLog) {
  REQUIRE_CUDA_DEVICE();
  const std::filesystem::path dir = test_support::data_dir() / "carmen";
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().string().find(".log") == std::string::npos) continue;
    const std::vector<LaserScan> scans = read_carmen_log(entry.path().string());
    expect_gpu_equals_cpu(fit_grid(scans, 0.05, HitMissModel{}), scans, HitMissModel{},
                          entry.path().filename().string());
    ++logs;
  }
  EXPECT_GE(logs, 5);
}

TEST(GpuHitMiss, ScanByScanUpdatesAndRebuildsMatchCpu) {
  REQUIRE_CUDA_DEVICE();
  const std::vector<LaserScan> scans = random_scans(80, 3);
  const GridSpec spec = square(100);
  GridMapper gpu(spec, HitMissModel{}, Backend::Cuda), cpu(spec, HitMissModel{}, Backend::Cpu);
  for (const LaserScan& scan : scans) {
    const MapUpdate a = gpu.insert_with_update(scan), b = cpu.insert_with_update(scan);
    ASSERT_EQ(a.x, b.x);
    ASSERT_EQ(a.y, b.y);
    ASSERT_EQ(a.width, b.width);
    ASSERT_EQ(a.height, b.height);
    ASSERT_TRUE(a.data == b.data);
  }
  std::vector<Pose2D> moved;
  for (const LaserScan& scan : scans)
    moved.push_back({scan.laser_pose.x, scan.laser_pose.y - 0.3, scan.laser_pose.theta});
  gpu.rebuild(scans, moved);
  cpu.rebuild(scans, moved);
  EXPECT_TRUE(gpu.map().evidence == cpu.map().evidence);
}

// A grid the device cannot hold (with the model's marks): a DeviceMemoryError naming it, nothing left
// allocated, and a NaN pose refused before the map changes.
TEST(GpuHitMiss, BadInputIsRejectedAndNothingIsLeftBehind) {
  REQUIRE_CUDA_DEVICE();
  std::size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  GridSpec huge = square(1 << 20, 0.01);
  try {
    GridMapper too_big(huge, HitMissModel{}, Backend::Cuda);
    ADD_FAILURE() << "a 2^40-cell grid was accepted";
  } catch (const linalg_cuda::DeviceMemoryError& e) {
    EXPECT_GE(e.needed_bytes(), huge.cells() * 17);  // 9 bytes a cell of map and 8 of marks
    EXPECT_NE(std::string(e.what()).find("grid of 1048576 x 1048576 cells: out of device memory"), std::string::npos)
        << e.what();
  }
  std::size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_GE(free_after + (64u << 20), free_before);

  GridMapper mapper(square(100), HitMissModel{}, Backend::Cuda);
  mapper.insert(single_beam(1.05, 5.05, 0.0, 2.0f));
  const OccupancyGrid before = mapper.map();
  LaserScan bad = single_beam(1.05, 5.05, 0.0, 2.0f);
  bad.laser_pose.y = std::nan("");
  EXPECT_THROW(mapper.rebuild({bad}, {bad.laser_pose}), linalg_cuda::InvalidArgument);
  EXPECT_TRUE(mapper.map().evidence == before.evidence);
}

}  // namespace
}  // namespace gridmap_cuda
