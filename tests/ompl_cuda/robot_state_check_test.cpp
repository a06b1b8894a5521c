// A state's check as robot_state_check.h walks the tree: on a robot with two arms whose URDF lists the
// joints breadth first (so that the walk keeps poses at its branches) and with every kind of joint,
// the walk places each link's bound where the plain forward kinematics does, bit for bit; each self
// pair's relative pose agrees with the links' poses; and the GPU decides every state and motion as
// the CPU does (that test skips without a CUDA device and says so).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "robot_check_data.h"
#include "robot_check_engine.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using namespace ompl_cuda::detail;

// Joints breadth first: the shoulders before the elbows, so that the walk returns to the torso.
const char* kTwinArms = R"(<robot name="twin">
  <link name="base"/><link name="torso"/><link name="camera"/>
  <link name="l1"/><link name="l2"/><link name="l3"/><link name="r1"/><link name="r2"/><link name="r3"/>
  <joint name="waist" type="continuous"><parent link="base"/><child link="torso"/><origin xyz="0 0 0.3"/><axis xyz="0 0 1"/></joint>
  <joint name="mount" type="fixed"><parent link="base"/><child link="camera"/><origin xyz="0.2 0 0.5" rpy="0.1 0.2 0.3"/></joint>
  <joint name="l_shoulder" type="revolute"><parent link="torso"/><child link="l1"/><origin xyz="0 0.2 0.2" rpy="0.3 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="r_shoulder" type="revolute"><parent link="torso"/><child link="r1"/><origin xyz="0 -0.2 0.2" rpy="-0.3 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="l_elbow" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0" rpy="0 0.4 0.2"/>
    <axis xyz="0.6 0 0.8"/><limit lower="-2.5" upper="2.5" effort="1" velocity="1"/></joint>
  <joint name="r_elbow" type="revolute"><parent link="r1"/><child link="r2"/><origin xyz="0.3 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-2.5" upper="2.5" effort="1" velocity="1"/>
    <mimic joint="l_elbow" multiplier="-1" offset="0.1"/></joint>
  <joint name="l_slide" type="prismatic"><parent link="l2"/><child link="l3"/><origin xyz="0.25 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.2" effort="1" velocity="1"/></joint>
  <joint name="r_slide" type="prismatic"><parent link="r2"/><child link="r3"/><origin xyz="0.25 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.2" effort="1" velocity="1"/></joint>
</robot>
)";

const ompl_cuda::RobotCollisionModel& twin_arms() {
  static const ompl_cuda::RobotCollisionModel robot = [] {
    const fs::path file = fs::temp_directory_path() / "ompl_cuda_robot_state_check_twin.urdf";
    std::ofstream(file) << kTwinArms;
    const ompl_cuda::RobotModel model = ompl_cuda::RobotModel::load(file.string());
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> offset(-0.1, 0.1), radius(0.02, 0.04);
    std::vector<std::vector<ompl_cuda::Sphere>> spheres(model.links().size());
    for (std::size_t l = 1; l < spheres.size(); ++l)  // the base has none
      for (int k = 0; k < 12; ++k) spheres[l].push_back({{0.1 + offset(rng), offset(rng), offset(rng)}, radius(rng)});
    return ompl_cuda::RobotCollisionModel(model, spheres);
  }();
  return robot;
}

ompl_cuda::Transform base_pose() {
  const double position[3] = {0.1, -0.2, 0.05}, rotation[4] = {0, 0, 0.38268343236, 0.92387953251};
  return ompl_cuda::transform_from(position, rotation);
}

std::vector<double> random_state(const RobotCheckData& data, std::mt19937_64& rng) {
  std::vector<double> values(data.group.size());
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = std::uniform_real_distribution<double>(-2, 2)(rng);
  return values;
}

TEST(RobotStateCheck, TheWalkPlacesEachLinkAsTheForwardKinematics) {
  const RobotCheckData data = whole_robot_check_data(twin_arms(), base_pose(), true);
  ASSERT_GT(data.num_kept, 0) << "the walk never returns to a branch";
  ASSERT_GT(data.num_centres, 0);
  const RobotCheckView v = data.view();  // no scene: nothing stops the walk
  HostCheckScratch host;
  const CheckScratch s = host.fit(data);
  std::vector<double> poses(12 * v.num_links);
  std::mt19937_64 rng(6);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<double> values = random_state(data, rng);
    ASSERT_TRUE(fill_state(v, [&](int k) { return values[k]; }, s.full));
    ASSERT_TRUE(robot_free_of_scene(v, s));
    link_poses(v.joints, v.num_joints, s.full, poses.data(), v.root);
    for (int l = 0; l < v.num_links; ++l) {
      if (v.centre_slot[l] < 0) continue;
      float expected[3];
      place(single_precision_pose(poses.data() + 12 * l), v.link_bounds[l], expected);
      for (int i = 0; i < 3; ++i)
        ASSERT_EQ(std::memcmp(&expected[i], &s.centres[3 * v.centre_slot[l] + i], sizeof(float)), 0)
            << "link " << l << " coordinate " << i;
    }
  }
}

TEST(RobotStateCheck, PairPosesAgreeWithTheLinksPoses) {
  const RobotCheckData data = whole_robot_check_data(twin_arms(), base_pose(), true);
  const RobotCheckView v = data.view();
  ASSERT_GT(v.num_self_pairs, 10);
  std::vector<double> full(v.num_variables), poses(12 * v.num_links);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    const std::vector<double> values = random_state(data, rng);
    ASSERT_TRUE(fill_state(v, [&](int k) { return values[k]; }, full.data()));
    link_poses(v.joints, v.num_joints, full.data(), poses.data(), v.root);
    for (int q = 0; q < v.num_self_pairs; ++q) {
      const double* a = poses.data() + 12 * v.self_pairs[2 * q];
      const double* b = poses.data() + 12 * v.self_pairs[2 * q + 1];
      const LinkPose r = pair_relative_pose(v, q, full.data());
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
          EXPECT_NEAR(r.r[3 * i + j], a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j], 1e-6);
        EXPECT_NEAR(r.t[i], a[i] * (b[9] - a[9]) + a[3 + i] * (b[10] - a[10]) + a[6 + i] * (b[11] - a[11]), 1e-6);
      }
    }
  }
}

TEST(RobotStateCheck, GpuDecidesAsTheCpuOnABranchingRobot) {
  REQUIRE_CUDA_DEVICE();
  ompl_cuda::Scene scene;
  ompl_cuda::SceneObject object{"blocks", {}, {}};
  for (int k = 0; k < 6; ++k) {
    ompl_cuda::Primitive p;
    p.kind = static_cast<ompl_cuda::Primitive::Kind>(k % 4);
    p.size[0] = 0.08, p.size[1] = 0.3, p.size[2] = 0.1;
    const double position[3] = {0.5 * std::cos(k), 0.5 * std::sin(k), 0.2 + 0.1 * k}, rotation[4] = {0.1 * k, 0, 0, 1};
    p.pose = ompl_cuda::transform_from(position, rotation);
    object.primitives.push_back(p);
  }
  scene.add(object);
  const RobotCheckData data = whole_robot_check_data(twin_arms(), base_pose(), true);
  RobotCheckEngine cpu(data, scene, linalg_cuda::Backend::Cpu), gpu(data, scene, linalg_cuda::Backend::Cuda);
  // An engine of the same kernels that keeps no bound centres, made later, leaves the first one whole.
  const RobotCheckEngine without_self(whole_robot_check_data(twin_arms(), base_pose(), false), scene,
                                      linalg_cuda::Backend::Cuda);
  const int d = cpu.dimension();
  const std::size_t n = 200000, motions = 20000;
  std::mt19937_64 rng(8);
  std::vector<double> states(n * d), to(motions * d);
  for (double& x : states) x = std::uniform_real_distribution<double>(-2, 2)(rng);
  for (std::size_t i = 0; i < to.size(); ++i) to[i] = states[i] + std::uniform_real_distribution<double>(-0.3, 0.3)(rng);
  std::vector<char> on_cpu(n), on_gpu(n);
  cpu.check_states(states.data(), n, on_cpu.data());
  for (unsigned limit : {0u, 1000u}) {  // open pairs in tiles, and also in the states' threads
    gpu.limit_pending_pairs(limit);
    gpu.check_states(states.data(), n, on_gpu.data());
    EXPECT_EQ(on_cpu, on_gpu) << "pending pair limit " << limit;
  }
  const std::size_t valid = std::count(on_cpu.begin(), on_cpu.end(), 1);
  EXPECT_GT(valid, n / 20);
  EXPECT_LT(valid, n - n / 20);
  std::vector<int> segments(motions, 20), first_cpu(motions), first_gpu(motions);
  cpu.check_motions(states.data(), to.data(), segments.data(), motions, first_cpu.data());
  gpu.check_motions(states.data(), to.data(), segments.data(), motions, first_gpu.data());
  EXPECT_EQ(first_cpu, first_gpu);
}

}  // namespace
