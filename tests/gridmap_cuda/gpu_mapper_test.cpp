// The CUDA mapper against the CPU reference: bit-identical maps on synthetic logs and on every log in
// ../shared/data/carmen, whether scans arrive one by one or as one batch, in any order.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gridmap_cuda/carmen_log.h"
#include "gridmap_cuda/grid_mapper.h"
#include "gridmap_cuda/synthetic_log.h"
#include "linalg_cuda/errors.h"
#include "test_support.h"

namespace {

using gridmap_cuda::Backend;
using gridmap_cuda::GridMapper;
using gridmap_cuda::GridSpec;
using gridmap_cuda::LaserScan;
using gridmap_cuda::OccupancyGrid;

struct Built {
  OccupancyGrid map;
  gridmap_cuda::MapperStats stats;
};

Built build(const GridSpec& spec, const std::vector<LaserScan>& scans, Backend backend) {
  GridMapper mapper(spec, {}, backend);
  mapper.insert(scans);
  return {mapper.map(), mapper.stats()};
}

void expect_identical(const Built& gpu, const Built& cpu, const std::string& what) {
  EXPECT_EQ(gpu.stats.cell_updates, cpu.stats.cell_updates) << what;
  EXPECT_EQ(gpu.stats.used_beams, cpu.stats.used_beams) << what;
  EXPECT_TRUE(gpu.map.known == cpu.map.known) << what << ": known masks differ";
  std::size_t differing = 0, first = 0;
  for (std::size_t i = 0; i < cpu.map.evidence.size(); ++i)
    if (gpu.map.evidence[i] != cpu.map.evidence[i] && differing++ == 0) first = i;
  EXPECT_EQ(differing, 0u) << what << ": " << differing << " cells differ, first " << first;
}

std::vector<LaserScan> synthetic(int scans, unsigned seed) {
  gridmap_cuda::SyntheticLogOptions options;
  options.scans = scans;
  options.seed = seed;
  return gridmap_cuda::make_synthetic_log(options).scans;
}

TEST(GpuMapper, BitIdenticalToCpuOnSyntheticLogs) {
  REQUIRE_CUDA_DEVICE();
  for (const double resolution : {0.1, 0.05, 0.025}) {
    const std::vector<LaserScan> scans = synthetic(300, 1);
    const GridSpec spec = gridmap_cuda::fit_grid(scans, resolution);
    const Built gpu = build(spec, scans, Backend::Cuda);
    expect_identical(gpu, build(spec, scans, Backend::Cpu), "synthetic at " + std::to_string(resolution));
    EXPECT_GT(gpu.stats.cell_updates, 100000u);
  }
}

TEST(GpuMapper, BitIdenticalToCpuOnEveryCarmenLog) {
  REQUIRE_CUDA_DEVICE();
  const std::filesystem::path dir = test_support::data_dir() / "carmen";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no CARMEN logs in " << dir << " (set CUDA_SOLVERS_DATA)";
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".log") == std::string::npos) continue;
    const std::vector<LaserScan> scans = gridmap_cuda::read_carmen_log(entry.path().string());
    const GridSpec spec = gridmap_cuda::fit_grid(scans, 0.05);
    expect_identical(build(spec, scans, Backend::Cuda), build(spec, scans, Backend::Cpu), name);
    ++logs;
  }
  EXPECT_GT(logs, 0);
}

TEST(GpuMapper, ExtremeSensorModelMatchesCpu) {
  // Increments so large that one scan could overflow the 32-bit shared-memory window: the mapper
  // must take the all-global path, and the map must still be exact.
  REQUIRE_CUDA_DEVICE();
  const std::vector<LaserScan> scans = synthetic(300, 5);
  gridmap_cuda::SensorModel model;
  model.p_occ = 0.999999;
  model.p_emp = 0.000001;
  const GridSpec spec = gridmap_cuda::fit_grid(scans, 0.05, model);
  GridMapper gpu(spec, model, Backend::Cuda), cpu(spec, model, Backend::Cpu);
  gpu.insert(scans);
  cpu.insert(scans);
  expect_identical({gpu.map(), gpu.stats()}, {cpu.map(), cpu.stats()}, "extreme model");
}

TEST(GpuMapper, OneByOneEqualsBatchEqualsShuffled) {
  REQUIRE_CUDA_DEVICE();
  std::vector<LaserScan> scans = synthetic(120, 2);
  const GridSpec spec = gridmap_cuda::fit_grid(scans, 0.05);
  const Built batch = build(spec, scans, Backend::Cuda);
  GridMapper streaming(spec, {}, Backend::Cuda);
  for (const LaserScan& scan : scans) streaming.insert(scan);
  expect_identical({streaming.map(), streaming.stats()}, batch, "one by one");
  std::shuffle(scans.begin(), scans.end(), std::mt19937(4));
  expect_identical(build(spec, scans, Backend::Cuda), batch, "shuffled");
}

TEST(GpuMapper, RebuildAndResetMatchCpu) {
  REQUIRE_CUDA_DEVICE();
  const std::vector<LaserScan> scans = synthetic(80, 3);
  std::vector<gridmap_cuda::Pose2D> corrected;
  for (const LaserScan& scan : scans)
    corrected.push_back({scan.laser_pose.x + 0.03, scan.laser_pose.y - 0.02, scan.laser_pose.theta + 0.01});
  const GridSpec spec = gridmap_cuda::fit_grid(scans, 0.05);
  GridMapper gpu(spec, {}, Backend::Cuda), cpu(spec, {}, Backend::Cpu);
  gpu.insert(scans);
  gpu.rebuild(scans, corrected);
  cpu.rebuild(scans, corrected);
  expect_identical({gpu.map(), gpu.stats()}, {cpu.map(), cpu.stats()}, "rebuild");
  gpu.reset();
  EXPECT_EQ(gpu.map().known_cells(), 0u);
  EXPECT_EQ(gpu.stats().cell_updates, 0u);
}

TEST(GpuMapper, BadInputIsRejectedAndNothingIsLeftBehind) {
  REQUIRE_CUDA_DEVICE();
  GridSpec spec;
  spec.resolution = 0.05;
  spec.width = spec.height = 100;
  GridMapper mapper(spec, {}, Backend::Cuda);
  LaserScan scan;
  scan.ranges = {1.0f, -2.0f};
  EXPECT_THROW(mapper.insert(scan), linalg_cuda::InvalidArgument);
  EXPECT_EQ(mapper.map().known_cells(), 0u);

  // 2^40 cells (9 TB): a DeviceMemoryError that says what the grid needs and what there is, before
  // anything is allocated; the mapper that exists goes on working, and so does a new one.
  std::size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  GridSpec huge;
  huge.resolution = 0.01;  // fine enough for a 2^40-cell grid, coarse enough for the sensor table
  huge.width = huge.height = 1 << 20;
  try {
    GridMapper too_big(huge, {}, Backend::Cuda);
    ADD_FAILURE() << "a 2^40-cell grid was accepted";
  } catch (const linalg_cuda::DeviceMemoryError& e) {
    EXPECT_GE(e.needed_bytes(), huge.cells() * 9);
    EXPECT_LE(e.free_bytes(), e.total_bytes());
    EXPECT_NE(std::string(e.what()).find("grid of 1048576 x 1048576 cells: out of device memory"), std::string::npos)
        << e.what();
  }
  std::size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_GE(free_after + (64u << 20), free_before);
  const std::vector<LaserScan> scans = synthetic(40, 3);
  const GridSpec fits = gridmap_cuda::fit_grid(scans, 0.05);
  expect_identical(build(fits, scans, Backend::Cuda), build(fits, scans, Backend::Cpu), "after the failed grid");
  scan.ranges = {1.0f, 2.0f};
  mapper.insert(scan);
  GridMapper cpu(spec, {}, Backend::Cpu);
  cpu.insert(scan);
  expect_identical({mapper.map(), mapper.stats()}, {cpu.map(), cpu.stats()}, "the first mapper after the failed grid");
}

}  // namespace
