// The robot checks on the GPU against their CPU reference: the same decision for every random state
// and motion of the Panda in each MotionBenchMaker scene (1e6 states and 1e5 motions per scene by
// default), for states bisected to within 1e-12 rad of an obstacle's surface, among primitives and a
// cloud together, after scene edits; and the limits the GPU states at once. Without a CUDA device
// every test skips and says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/point_cloud.h"
#include "ompl_cuda/robot_checkers.h"
#include "panda_test_support.h"
#include "robot_check_engine.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using linalg_cuda::Backend;
using ompl_cuda::RobotChecks;

std::size_t from_environment(const char* name, std::size_t fallback) {
  const char* value = std::getenv(name);
  return value ? static_cast<std::size_t>(std::strtoull(value, nullptr, 10)) : fallback;
}

const ompl_cuda::RobotCollisionModel& panda() { return panda_test::panda_spheres(0.03); }

// The same checks on both backends.
struct Pair {
  std::unique_ptr<RobotChecks> cpu, gpu;
};

Pair checks_for(const fs::path& problem_file) {
  const ompl_cuda::MotionBenchMakerProblem problem = ompl_cuda::read_motion_bench_maker_problem(problem_file.string());
  const ompl_cuda::Scene scene = ompl_cuda::Scene::load(problem.scene_file);
  Pair p;
  p.cpu = std::make_unique<RobotChecks>(panda(), scene, problem.group, problem.base, std::vector<double>{}, true, Backend::Cpu);
  p.gpu = std::make_unique<RobotChecks>(panda(), scene, problem.group, problem.base, std::vector<double>{}, true, Backend::Cuda);
  return p;
}

// count states uniform in the bounds widened by 5% each side (some out of bounds), and a few not finite.
std::vector<double> random_states(const RobotChecks& checks, std::size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  const int d = checks.dimension();
  std::vector<double> values(count * d);
  for (std::size_t i = 0; i < count; ++i)
    for (int k = 0; k < d; ++k) {
      const double span = checks.high()[k] - checks.low()[k];
      values[i * d + k] = std::uniform_real_distribution<double>(checks.low()[k] - 0.05 * span, checks.high()[k] + 0.05 * span)(rng);
    }
  for (std::size_t i = 0; i < std::min<std::size_t>(count, 8); ++i)
    values[(i * 7919 % count) * d + i % d] = i % 2 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  return values;
}

TEST(RobotGpuChecks, StatesAndMotionsDecideAsTheCpuInEveryScene) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_PANDA();
  const std::size_t num_states = from_environment("OMPL_CUDA_ROBOT_STATES", 1000000);
  const std::size_t num_motions = from_environment("OMPL_CUDA_ROBOT_MOTIONS", 100000);
  ASSERT_FALSE(panda_test::problem_files().empty());
  unsigned seed = 1;
  for (const fs::path& problem : panda_test::problem_files()) {
    SCOPED_TRACE(problem.filename().string());
    const Pair p = checks_for(problem);
    ASSERT_EQ(p.gpu->backend(), Backend::Cuda);
    const int d = p.cpu->dimension();
    const std::vector<double> states = random_states(*p.cpu, num_states, seed++);
    std::vector<char> on_cpu(num_states), on_gpu(num_states);
    p.cpu->check_states(states.data(), num_states, on_cpu.data());
    p.gpu->check_states(states.data(), num_states, on_gpu.data());
    std::size_t differ = 0, valid = 0;
    for (std::size_t i = 0; i < num_states; ++i) {
      differ += on_cpu[i] != on_gpu[i];
      valid += on_cpu[i];
    }
    EXPECT_EQ(differ, 0u);
    EXPECT_GT(valid, num_states / 100);  // each scene leaves some of the space free ...
    EXPECT_LT(valid, num_states - num_states / 100);  // ... and blocks some of it

    // Motions from random states by up to 3 rad a joint; 0 and 1 segments among them.
    std::mt19937_64 rng(seed++);
    std::vector<double> from(states.begin(), states.begin() + num_motions * d), to(num_motions * d);
    std::vector<int> segments(num_motions);
    for (std::size_t i = 0; i < num_motions; ++i) {
      const double reach = std::uniform_real_distribution<double>(0.01, 3.0)(rng);
      double length = 0;
      for (int k = 0; k < d; ++k) {
        to[i * d + k] = std::clamp(from[i * d + k] + reach * std::uniform_real_distribution<double>(-1, 1)(rng),
                                   p.cpu->low()[k], p.cpu->high()[k]);
        length += (to[i * d + k] - from[i * d + k]) * (to[i * d + k] - from[i * d + k]);
      }
      segments[i] = i % 97 == 0 ? static_cast<int>(i % 2) : static_cast<int>(std::ceil(std::sqrt(length) / 0.05));
    }
    std::vector<int> first_cpu(num_motions), first_gpu(num_motions);
    p.cpu->check_motions(from.data(), to.data(), segments.data(), num_motions, first_cpu.data());
    p.gpu->check_motions(from.data(), to.data(), segments.data(), num_motions, first_gpu.data());
    std::size_t motions_differ = 0, motions_valid = 0;
    for (std::size_t i = 0; i < num_motions; ++i) {
      motions_differ += first_cpu[i] != first_gpu[i];
      motions_valid += first_cpu[i] == 0;
    }
    EXPECT_EQ(motions_differ, 0u);
    EXPECT_GT(motions_valid, 0u);
    EXPECT_LT(motions_valid, num_motions);

    // States on the boundary: between the last valid and the first invalid state of a motion (both in
    // bounds), bisected until they are 1e-12 apart; the two backends decide each the same way.
    std::vector<double> boundary;
    for (std::size_t i = 0; i < num_motions && boundary.size() < 2000 * static_cast<std::size_t>(d); ++i) {
      const int j = first_cpu[i], n = segments[i];
      if (j < 2 || j >= n) continue;
      std::vector<double> lo(d), hi(d), mid(d);
      double t_lo = static_cast<double>(j - 1) / n, t_hi = static_cast<double>(j) / n;
      auto at = [&](double t, std::vector<double>& q) {
        for (int k = 0; k < d; ++k) q[k] = from[i * d + k] + (to[i * d + k] - from[i * d + k]) * t;
      };
      for (int step = 0; step < 60 && t_hi - t_lo > 1e-12; ++step) {
        const double t = 0.5 * (t_lo + t_hi);
        at(t, mid);
        (p.cpu->valid(mid.data()) ? t_lo : t_hi) = t;
      }
      at(t_lo, lo);
      at(t_hi, hi);
      boundary.insert(boundary.end(), lo.begin(), lo.end());
      boundary.insert(boundary.end(), hi.begin(), hi.end());
    }
    const std::size_t num_boundary = boundary.size() / d;
    ASSERT_GT(num_boundary, 100u);
    std::vector<char> b_cpu(num_boundary), b_gpu(num_boundary);
    p.cpu->check_states(boundary.data(), num_boundary, b_cpu.data());
    p.gpu->check_states(boundary.data(), num_boundary, b_gpu.data());
    std::size_t boundary_differ = 0, boundary_valid = 0;
    for (std::size_t i = 0; i < num_boundary; ++i) {
      boundary_differ += b_cpu[i] != b_gpu[i];
      boundary_valid += b_cpu[i];
    }
    EXPECT_EQ(boundary_differ, 0u);
    EXPECT_EQ(boundary_valid, num_boundary / 2);  // one of each pair
    std::printf("%-36s states %zu (%.1f%% valid), motions %zu (%.1f%% valid), boundary states %zu: decisions equal\n",
                problem.filename().string().c_str(), num_states, 100.0 * valid / num_states, num_motions,
                100.0 * motions_valid / num_motions, num_boundary);
  }
}

TEST(RobotGpuChecks, SceneEditsReachTheGpu) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_PANDA();
  const Pair p = checks_for(test_support::data_dir() / "scenes" / "box_panda.problem.yaml");
  const ompl_cuda::RobotModel& model = panda().model();
  const std::vector<double> ready = model.named_state("panda_arm", "ready", model.default_state());
  std::vector<double> values(p.gpu->dimension());
  for (int k = 0; k < p.gpu->dimension(); ++k) values[k] = ready[p.gpu->group().variables[k]];
  char valid = 0;
  p.gpu->check_states(values.data(), 1, &valid);
  ASSERT_EQ(valid, 1);
  // A crate where the hand is: the GPU sees it, and no longer once it is moved away or removed.
  std::vector<ompl_cuda::Transform> poses;
  model.link_poses(ready.data(), &poses);
  const ompl_cuda::MotionBenchMakerProblem problem =
      ompl_cuda::read_motion_bench_maker_problem((test_support::data_dir() / "scenes" / "box_panda.problem.yaml").string());
  ompl_cuda::Primitive crate;
  crate.size[0] = crate.size[1] = crate.size[2] = 0.05;
  crate.pose = ompl_cuda::compose(problem.base, poses[model.link_index("panda_hand")]);
  p.gpu->scene().add({"crate", {crate}});
  p.gpu->check_states(values.data(), 1, &valid);
  EXPECT_EQ(valid, 0);
  ompl_cuda::Transform up;
  up.translation[2] = 2.0;
  p.gpu->scene().move("crate", up);
  p.gpu->check_states(values.data(), 1, &valid);
  EXPECT_EQ(valid, 1);
  p.gpu->scene().move("crate", ompl_cuda::Transform{{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, -2.0}});
  const int no_segments = 0;
  int first = -1;
  p.gpu->check_motions(values.data(), values.data(), &no_segments, 1, &first);
  EXPECT_EQ(first, 1);  // the motion's one state is `to`, the crate around the hand again
  p.gpu->scene() = ompl_cuda::Scene();
  p.gpu->check_states(values.data(), 1, &valid);
  EXPECT_EQ(valid, 1);
}

// A warp pools the scene tests of its lanes' links: primitives and a cloud in one scene, a batch whose
// last warp is not full, and motions of every length give the CPU's answers.
TEST(RobotGpuChecks, PrimitivesAndACloudTogetherDecideAsTheCpu) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_PANDA();
  const fs::path scenes = test_support::data_dir() / "scenes";
  const ompl_cuda::MotionBenchMakerProblem problem =
      ompl_cuda::read_motion_bench_maker_problem((scenes / "box_panda.problem.yaml").string());
  ompl_cuda::Scene scene = ompl_cuda::Scene::load(problem.scene_file);
  const ompl_cuda::MotionBenchMakerProblem other =
      ompl_cuda::read_motion_bench_maker_problem((scenes / "cage_panda.problem.yaml").string());
  scene.set_point_cloud(ompl_cuda::sample_scene_surfaces(ompl_cuda::Scene::load(other.scene_file), 20000, 3), 0.01);
  const RobotChecks cpu(panda(), scene, problem.group, problem.base, {}, true, Backend::Cpu);
  const RobotChecks gpu(panda(), scene, problem.group, problem.base, {}, true, Backend::Cuda);
  const int d = cpu.dimension();
  const std::size_t n = from_environment("OMPL_CUDA_ROBOT_STATES", 1000000) / 10 + 3;
  const std::vector<double> states = random_states(cpu, n, 31);
  std::vector<char> on_cpu(n), on_gpu(n);
  cpu.check_states(states.data(), n, on_cpu.data());
  gpu.check_states(states.data(), n, on_gpu.data());
  std::size_t differ = 0, valid = 0;
  for (std::size_t i = 0; i < n; ++i) {
    differ += on_cpu[i] != on_gpu[i];
    valid += on_cpu[i];
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_GT(valid, n / 100);
  EXPECT_LT(valid, n - n / 100);
  const std::size_t m = n / 10;
  std::vector<double> to(states.begin() + m * d, states.begin() + 2 * m * d);
  std::vector<int> segments(m), first_cpu(m), first_gpu(m);
  for (std::size_t i = 0; i < m; ++i) segments[i] = static_cast<int>(i % 70);
  cpu.check_motions(states.data(), to.data(), segments.data(), m, first_cpu.data());
  gpu.check_motions(states.data(), to.data(), segments.data(), m, first_gpu.data());
  std::size_t motions_differ = 0;
  for (std::size_t i = 0; i < m; ++i) motions_differ += first_cpu[i] != first_gpu[i];
  EXPECT_EQ(motions_differ, 0u);
}

// The self pairs that the states' threads leave open go to warps; where their room is full, the
// threads decide the rest themselves. Both ways give the CPU's answers (the Panda at 1.5 cm, whose
// near links leave most pairs open).
TEST(RobotGpuChecks, OpenSelfPairsDecideAsTheCpuInWarpsAndThreads) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_PANDA();
  const fs::path problem_file = test_support::data_dir() / "scenes" / "box_panda.problem.yaml";
  const ompl_cuda::MotionBenchMakerProblem problem = ompl_cuda::read_motion_bench_maker_problem(problem_file.string());
  const ompl_cuda::Scene scene = ompl_cuda::Scene::load(problem.scene_file);
  const ompl_cuda::RobotCollisionModel& robot = panda_test::panda_spheres(0.015);
  const RobotChecks cpu(robot, scene, problem.group, problem.base, {}, true, Backend::Cpu);
  const std::size_t n = from_environment("OMPL_CUDA_ROBOT_STATES", 1000000) / 4;
  const std::vector<double> values = random_states(cpu, n, 21);
  std::vector<char> expected(n);
  cpu.check_states(values.data(), n, expected.data());
  for (const unsigned limit : {0u, 1000u, 1u}) {
    ompl_cuda::detail::RobotCheckEngine engine(
        ompl_cuda::detail::RobotCheckData(robot, problem.base, cpu.group().variables, robot.model().default_state(),
                                          cpu.low(), cpu.high(), true),
        scene, Backend::Cuda);
    engine.limit_pending_pairs(limit);
    std::vector<char> valid(n);
    engine.check_states(values.data(), n, valid.data());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += valid[i] != expected[i];
    EXPECT_EQ(differ, 0u) << "room for " << limit << " open pairs";
  }
}

TEST(RobotGpuChecks, RefusesRobotsBeyondItsScratch) {
  REQUIRE_CUDA_DEVICE();
  // A chain of 130 links, one sphere each.
  const fs::path dir = fs::temp_directory_path() / "ompl_cuda_robot_gpu_test";
  fs::create_directories(dir);
  std::ofstream urdf(dir / "long.urdf");
  urdf << "<robot name=\"long\">\n<link name=\"l0\"/>\n";
  for (int k = 1; k < 130; ++k)
    urdf << "<link name=\"l" << k << "\"/><joint name=\"j" << k << "\" type=\"revolute\"><parent link=\"l" << k - 1
         << "\"/><child link=\"l" << k << "\"/><origin xyz=\"0.1 0 0\"/><axis xyz=\"0 0 1\"/>"
         << "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>\n";
  urdf << "</robot>\n";
  urdf.close();
  std::ofstream(dir / "long.srdf") << "<robot name=\"long\"><group name=\"all\"><chain base_link=\"l0\" tip_link=\"l129\"/></group></robot>\n";
  const ompl_cuda::RobotModel model = ompl_cuda::RobotModel::load((dir / "long.urdf").string(), (dir / "long.srdf").string());
  std::vector<std::vector<ompl_cuda::Sphere>> spheres(model.links().size(), std::vector<ompl_cuda::Sphere>(1));
  for (auto& s : spheres) s[0].radius = 0.01;
  const ompl_cuda::RobotCollisionModel robot(model, spheres);
  EXPECT_THROW(RobotChecks(robot, ompl_cuda::Scene(), "all", {}, {}, true, Backend::Cuda), linalg_cuda::InvalidArgument);
  EXPECT_NO_THROW(RobotChecks(robot, ompl_cuda::Scene(), "all", {}, {}, true, Backend::Cpu));
}

}  // namespace
