// Point clouds: the PLY and PCD readers (formats, bad files), the distance field against brute force
// (exact squared distances between voxel centres; no sphere that holds a point is ever missed, and
// none reported farther than 2 sqrt(3) voxels from the points), the GPU's field bit for bit against
// the CPU's, and the Panda's checks with a cloud on both backends.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "cloud_field_build.h"
#include "linalg_cuda/errors.h"
#include "ompl_cuda/point_cloud.h"
#include "ompl_cuda/robot_checkers.h"
#include "panda_test_support.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using ompl_cuda::read_point_cloud;

fs::path temp(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "ompl_cuda_point_cloud_test";
  fs::create_directories(dir);
  return dir / name;
}

std::string write_text(const std::string& name, const std::string& text) {
  std::ofstream(temp(name), std::ios::binary) << text;
  return temp(name).string();
}

TEST(PointCloudFiles, ReadsPlyAndPcdInTheirFormats) {
  const std::vector<float> points = {0.5f, -1.25f, 2.0f, 3.0f, 4.0f, -5.5f};
  ompl_cuda::write_ply(temp("binary.ply").string(), points);
  EXPECT_EQ(read_point_cloud(temp("binary.ply").string()), points);
  // ASCII, colours between the coordinates, a face element after the vertices.
  const std::string ascii = write_text("ascii.PLY",
                                       "ply\nformat ascii 1.0\ncomment made by hand\nelement vertex 2\nproperty double x\n"
                                       "property uchar red\nproperty float y\nproperty float z\nelement face 1\n"
                                       "property list uchar int vertex_indices\nend_header\n0.5 7 -1.25 2\n3 8 4 -5.5\n3 0 1 1\n");
  EXPECT_EQ(read_point_cloud(ascii), points);
  // Big-endian doubles.
  std::string big = "ply\nformat binary_big_endian 1.0\nelement vertex 2\nproperty double x\nproperty double y\nproperty double z\nend_header\n";
  for (float f : points) {
    const double d = f;
    unsigned char b[8];
    std::memcpy(b, &d, 8);
    for (int i = 7; i >= 0; --i) big.push_back(static_cast<char>(b[i]));
  }
  EXPECT_EQ(read_point_cloud(write_text("big.ply", big)), points);
  // PCD, ascii and binary, with an rgb field.
  const std::string header = "# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS x y z rgb\nSIZE 4 4 4 4\n"
                             "TYPE F F F U\nCOUNT 1 1 1 1\nWIDTH 2\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS 2\n";
  EXPECT_EQ(read_point_cloud(write_text("ascii.pcd", header + "DATA ascii\n0.5 -1.25 2 0\n3 4 -5.5 0\n")), points);
  std::string binary = header + "DATA binary\n";
  for (int i = 0; i < 2; ++i) {
    binary.append(reinterpret_cast<const char*>(&points[3 * i]), 12);
    binary.append(4, '\0');
  }
  EXPECT_EQ(read_point_cloud(write_text("binary.pcd", binary)), points);
}

TEST(PointCloudFiles, SaysWhatItCannotTake) {
  auto fails = [](const std::string& file, const std::string& what) {
    try {
      read_point_cloud(file);
      ADD_FAILURE() << file << " was accepted";
    } catch (const linalg_cuda::ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what() << " (expected: " << what << ")";
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  };
  fails(temp("missing.ply").string(), "cannot open");
  fails(write_text("cloud.xyz", "1 2 3\n"), "unknown point cloud format");
  // A tiny file that declares a billion points is refused before any memory is taken.
  fails(write_text("huge.ply", "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000\nproperty float x\n"
                               "property float y\nproperty float z\nend_header\n0123456789ab"),
        "cannot hold them");
  fails(write_text("huge.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nPOINTS 1500000000\nDATA ascii\n1 2 3\n"), "cannot hold them");
  fails(write_text("no_body.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nPOINTS 2000000000\nDATA binary"), "cannot hold them");
  fails(write_text("truncated.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nPOINTS 2\nDATA ascii\n1 2 3\n45 67\n"), "expected 3 numbers");
  // A header cut short names its last line (found by the fuzzer: it named one past the end).
  try {
    read_point_cloud(write_text("short.pcd", "VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F"));
    ADD_FAILURE() << "a header without DATA was accepted";
  } catch (const linalg_cuda::ParseError& e) {
    EXPECT_EQ(e.line(), 4) << e.what();
  }
  // Fields of no values (found by the fuzzer: y and z read past the record).
  fails(write_text("count0.pcd", "FIELDS x y z rgb\nSIZE 4 4 4 1\nTYPE F F F U\nCOUNT 1 0 0 0\nPOINTS 1\nDATA ascii\n1 2 3 4\n"),
        "COUNT must be");
  fails(write_text("count_huge.pcd", "FIELDS x y z rgb\nSIZE 4 4 4 4\nTYPE F F F U\nCOUNT 1 1 1 199999999999999999999999\n"
                                     "POINTS 1\nDATA ascii\n1 2 3 4\n"),
        "COUNT must be");
  fails(write_text("compressed.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nPOINTS 1\nDATA binary_compressed\n"), "pcl_convert_pcd_ascii_binary");
  fails(write_text("noz.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nend_header\n1 2\n"), "lacks an x, y or z");
  const std::string nan_file = write_text("nan.ply", "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                                                     "property float z\nend_header\n1 2 3\nnan 0 0\n");
  fails(nan_file, "not finite");
  ompl_cuda::PointCloudReadOptions drop;
  drop.drop_non_finite = true;
  EXPECT_EQ(read_point_cloud(nan_file, drop), (std::vector<float>{1, 2, 3}));

  ompl_cuda::Scene scene;
  EXPECT_THROW(scene.set_point_cloud({1, 2, NAN}), linalg_cuda::InvalidArgument);
  EXPECT_THROW(scene.set_point_cloud({1, 2}), linalg_cuda::InvalidArgument);
  EXPECT_THROW(scene.set_point_cloud({1, 2, 3}, 0.0), linalg_cuda::InvalidArgument);
}

// A random cloud in a 0.6 m box with clusters and gaps.
std::vector<float> random_cloud(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> spread(0, 0.05f);
  std::uniform_real_distribution<float> where(-0.3f, 0.3f);
  std::vector<float> xyz;
  for (std::size_t i = 0; i < count; ++i) {
    const float c[3] = {where(rng), where(rng), where(rng)};
    for (int k = 0; k < 3; ++k) xyz.push_back(std::clamp(c[k] + spread(rng), -0.3f, 0.3f));
  }
  return xyz;
}

TEST(CloudDistanceField, IsExactOnVoxelCentresAndNeverMissesAPoint) {
  const std::vector<float> cloud = random_cloud(300, 3);
  const double low[3] = {-1, -1, -1}, high[3] = {1, 1, 1};
  const double voxel = 0.04;
  const ompl_cuda::detail::CloudGrid grid = ompl_cuda::detail::plan_cloud_grid(cloud, voxel, low, high);
  ASSERT_GT(grid.voxels(), 0);
  const std::vector<float> field = ompl_cuda::detail::build_distance_field_cpu(cloud, grid);
  std::vector<char> occupied(grid.voxels(), 0);
  for (std::size_t i = 0; i < cloud.size(); i += 3) occupied[ompl_cuda::detail::voxel_of_point(grid, &cloud[i])] = 1;
  // Every voxel's value: the squared distance to the nearest occupied voxel, by brute force.
  for (long long v = 0; v < grid.voxels(); v += 7) {
    const long long x = v % grid.n[0], y = (v / grid.n[0]) % grid.n[1], z = v / (grid.n[0] * static_cast<long long>(grid.n[1]));
    double best = HUGE_VAL;
    for (long long u = 0; u < grid.voxels(); ++u) {
      if (!occupied[u]) continue;
      const long long ux = u % grid.n[0], uy = (u / grid.n[0]) % grid.n[1], uz = u / (grid.n[0] * static_cast<long long>(grid.n[1]));
      best = std::min<double>(best, (x - ux) * (x - ux) + (y - uy) * (y - uy) + (z - uz) * (z - uz));
    }
    ASSERT_EQ(field[v], best) << v;
  }
  // Spheres anywhere, outside the grid too: one that holds a point always touches; one that touches
  // lies within 2 sqrt(3) voxels of a point.
  const ompl_cuda::detail::CloudView view{grid, field.data()};
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> where(-0.6f, 0.6f), radius(0.0f, 0.15f);
  int touching = 0;
  for (int trial = 0; trial < 15000; ++trial) {
    const float c[3] = {where(rng), where(rng), where(rng)}, r = radius(rng);
    double nearest = HUGE_VAL;
    for (std::size_t i = 0; i < cloud.size(); i += 3)
      nearest = std::min(nearest, std::sqrt(std::pow(cloud[i] - c[0], 2.0) + std::pow(cloud[i + 1] - c[1], 2.0) +
                                            std::pow(cloud[i + 2] - c[2], 2.0)));
    const bool touches = ompl_cuda::detail::sphere_touches_cloud(c, r, view);
    if (nearest <= r) ASSERT_TRUE(touches) << trial;
    // Outside the grid's box the test moves the centre onto it and shrinks the radius, which may
    // reach up to (sqrt(2) - 1) r farther.
    bool inside = true;
    for (int k = 0; k < 3; ++k) inside = inside && c[k] >= grid.origin[k] && c[k] <= grid.origin[k] + grid.voxel * grid.n[k];
    const double slack = 2 * std::sqrt(3.0) * voxel + (inside ? 0.0 : (std::sqrt(2.0) - 1) * r) + 1e-6;
    if (touches) EXPECT_LE(nearest, r + slack) << trial;
    touching += touches;
  }
  EXPECT_GT(touching, 1000);
  EXPECT_LT(touching, 19000);
}

TEST(CloudDistanceField, RefusesAGridBeyondItsLimitAndNamesAResolutionThatFits) {
  const std::vector<float> cloud = {-1, -1, -1, 1, 1, 1};
  const double low[3] = {-2, -2, -2}, high[3] = {2, 2, 2};
  try {
    ompl_cuda::detail::plan_cloud_grid(cloud, 1e-4, low, high);
    ADD_FAILURE() << "a grid of 8e12 voxels was planned";
  } catch (const linalg_cuda::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fits"), std::string::npos) << e.what();
  }
  // Points out of reach make no grid.
  const double far_low[3] = {5, 5, 5}, far_high[3] = {6, 6, 6};
  EXPECT_EQ(ompl_cuda::detail::plan_cloud_grid(cloud, 0.01, far_low, far_high).voxels(), 0);
}

TEST(CloudDistanceField, GpuBuildsTheCpusFieldBitForBit) {
  REQUIRE_CUDA_DEVICE();
  const std::vector<float> cloud = random_cloud(1000000, 5);
  const double low[3] = {-1, -1, -1}, high[3] = {1, 1, 1};
  for (const double voxel : {0.005, 0.013}) {
    const ompl_cuda::detail::CloudGrid grid = ompl_cuda::detail::plan_cloud_grid(cloud, voxel, low, high);
    const std::vector<float> cpu = ompl_cuda::detail::build_distance_field_cpu(cloud, grid);
    linalg_cuda::DeviceBuffer field;
    cudaStream_t stream = nullptr;
    const std::vector<float> gpu = ompl_cuda::detail::build_distance_field_gpu(cloud, grid, &field, stream);
    ASSERT_EQ(cpu.size(), gpu.size());
    EXPECT_EQ(std::memcmp(cpu.data(), gpu.data(), cpu.size() * sizeof(float)), 0) << voxel;
  }
}

TEST(RobotChecksWithACloud, RefuseEveryStateWhoseSpheresHoldAPointOnBothBackends) {
  REQUIRE_PANDA();
  const ompl_cuda::RobotModel& model = panda_test::panda();
  const ompl_cuda::RobotCollisionModel& robot = panda_test::panda_spheres(0.03);
  const ompl_cuda::MotionBenchMakerProblem problem =
      ompl_cuda::read_motion_bench_maker_problem((test_support::data_dir() / "scenes" / "box_panda.problem.yaml").string());
  ompl_cuda::Scene scene;
  const std::vector<float> cloud = ompl_cuda::sample_scene_surfaces(ompl_cuda::Scene::load(problem.scene_file), 5000, 7);
  scene.set_point_cloud(cloud, 0.01);
  const ompl_cuda::RobotChecks cpu(robot, scene, problem.group, problem.base, {}, false, linalg_cuda::Backend::Cpu);
  const int d = cpu.dimension();
  std::mt19937_64 rng(8);
  std::vector<double> states(1500 * d), full(model.num_variables());
  for (std::size_t i = 0; i < states.size(); ++i)
    states[i] = std::uniform_real_distribution<double>(cpu.low()[i % d], cpu.high()[i % d])(rng);
  std::vector<char> valid(1500);
  cpu.check_states(states.data(), 1500, valid.data());
  int holding = 0, refused = 0;
  std::vector<ompl_cuda::Sphere> world;
  for (int i = 0; i < 1500; ++i) {
    cpu.full_state(&states[i * d], full.data());
    robot.world_spheres(full.data(), problem.base, &world);
    bool holds = false;
    for (const ompl_cuda::Sphere& s : world)
      for (std::size_t p = 0; p < cloud.size() && !holds; p += 3)
        holds = std::pow(cloud[p] - s.center[0], 2) + std::pow(cloud[p + 1] - s.center[1], 2) +
                    std::pow(cloud[p + 2] - s.center[2], 2) <= s.radius * s.radius;
    if (holds) ASSERT_EQ(valid[i], 0) << i;
    holding += holds;
    refused += !valid[i];
  }
  EXPECT_GT(holding, 20);
  EXPECT_LT(refused, 1500);
  if (!linalg_cuda::cuda_device_available()) return;
  const ompl_cuda::RobotChecks gpu(robot, scene, problem.group, problem.base, {}, false, linalg_cuda::Backend::Cuda);
  std::vector<char> on_gpu(1500);
  gpu.check_states(states.data(), 1500, on_gpu.data());
  EXPECT_EQ(on_gpu, valid);
}

}  // namespace
