// The Panda's checks among scene meshes: a box built of 12 triangles where a box primitive would be is
// refused whenever a robot sphere touches its surface (as the primitive is), and never farther than the
// field's bound from it; the GPU decides as the CPU with meshes in the scene, also after they move; and
// FCL (bench/fcl_robot_checker.h, the scene's meshes as OBBRSS models) finds no contact with a mesh
// that our checks let pass.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "fcl_robot_checker.h"
#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_checkers.h"
#include "panda_test_support.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using linalg_cuda::Backend;
using ompl_cuda::Primitive;
using ompl_cuda::RobotChecks;
using ompl_cuda::Scene;
using ompl_cuda::SceneMesh;
using ompl_cuda::Transform;

const ompl_cuda::RobotCollisionModel& panda() { return panda_test::panda_spheres(0.03); }

ompl_cuda::MotionBenchMakerProblem box_problem() {
  return ompl_cuda::read_motion_bench_maker_problem((test_support::data_dir() / "scenes" / "box_panda.problem.yaml").string());
}

// A box of sides x y z about the origin of `pose`, as 12 triangles (two per face).
SceneMesh box_mesh(const Transform& pose, double x, double y, double z) {
  SceneMesh m;
  m.pose = pose;
  for (int k = 0; k < 8; ++k) m.vertices.insert(m.vertices.end(), {k & 1 ? x / 2 : -x / 2, k & 2 ? y / 2 : -y / 2, k & 4 ? z / 2 : -z / 2});
  for (const auto& q : {std::array<int, 4>{0, 1, 3, 2}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 3, 7, 5}})
    m.triangles.insert(m.triangles.end(), {q[0], q[1], q[2], q[0], q[2], q[3]});
  return m;
}

// A pose in the robot's frame (x y z, turned by `yaw` about z) placed in the scene frame.
Transform near_robot(const Transform& base, double x, double y, double z, double yaw) {
  Transform local;
  local.rotation[0] = std::cos(yaw), local.rotation[1] = -std::sin(yaw);
  local.rotation[3] = std::sin(yaw), local.rotation[4] = std::cos(yaw);
  local.translation[0] = x, local.translation[1] = y, local.translation[2] = z;
  return ompl_cuda::compose(base, local);
}

// The distance from a point to the surface of the box (pose, half sides), inside or out.
double box_surface_distance(const double* c, const Transform& pose, const double* half) {
  double q[3], outside2 = 0, inside = HUGE_VAL;
  for (int i = 0; i < 3; ++i) {
    q[i] = 0;
    for (int j = 0; j < 3; ++j) q[i] += pose.rotation[3 * j + i] * (c[j] - pose.translation[j]);
    const double beyond = std::fabs(q[i]) - half[i];
    if (beyond > 0) outside2 += beyond * beyond;
    inside = std::min(inside, -beyond);
  }
  return outside2 > 0 ? std::sqrt(outside2) : inside;
}

std::vector<double> random_values(const RobotChecks& checks, std::size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  const int d = checks.dimension();
  std::vector<double> values(count * d);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = std::uniform_real_distribution<double>(checks.low()[i % d], checks.high()[i % d])(rng);
  return values;
}

TEST(RobotChecksWithAMesh, RefuseEveryStateWhoseSpheresTouchTheSurface) {
  REQUIRE_PANDA();
  const ompl_cuda::MotionBenchMakerProblem problem = box_problem();
  const Transform pose = near_robot(problem.base, 0.45, 0.05, 0.35, 0.4);
  const double size[3] = {0.2, 0.3, 0.25}, half[3] = {0.1, 0.15, 0.125};
  Scene meshes, primitives;
  meshes.add({"crate", {}, {box_mesh(pose, size[0], size[1], size[2])}});
  meshes.set_field_resolution(0.02);
  Primitive box;
  box.pose = pose;
  std::copy(size, size + 3, box.size);
  primitives.add({"crate", {box}});
  const RobotChecks with_mesh(panda(), meshes, problem.group, problem.base, {}, false, Backend::Cpu);
  const RobotChecks with_box(panda(), primitives, problem.group, problem.base, {}, false, Backend::Cpu);
  const std::size_t n = 4000;
  const int d = with_mesh.dimension();
  const std::vector<double> values = random_values(with_mesh, n, 41);
  std::vector<char> mesh_valid(n), box_valid(n);
  with_mesh.check_states(values.data(), n, mesh_valid.data());
  with_box.check_states(values.data(), n, box_valid.data());
  // The bound: 2 sqrt(3) voxels beyond the surface, and for a centre outside the field's grid up to
  // (sqrt(2) - 1) r more (cloud_distance_field.h), and the spheres' padding.
  const double voxel = meshes.field_resolution();
  std::vector<double> full(panda().model().num_variables());
  std::vector<ompl_cuda::Sphere> spheres;
  int touching = 0, inside = 0, far = 0;
  for (std::size_t i = 0; i < n; ++i) {
    with_mesh.full_state(&values[i * d], full.data());
    panda().world_spheres(full.data(), problem.base, &spheres);
    bool touches = false, all_far = true;
    for (const ompl_cuda::Sphere& s : spheres) {
      const double gap = box_surface_distance(s.center, pose, half);
      touches = touches || std::fabs(gap) <= s.radius;
      all_far = all_far && gap - s.radius > 2 * std::sqrt(3.0) * voxel + (std::sqrt(2.0) - 1) * s.radius + 1e-4;
    }
    if (touches) {
      ASSERT_EQ(box_valid[i], 0) << i;  // the primitive is solid: touching its surface collides too
      ASSERT_EQ(mesh_valid[i], 0) << i;
    }
    if (all_far) EXPECT_EQ(mesh_valid[i], 1) << i;
    touching += touches, far += all_far, inside += !touches && !box_valid[i];
  }
  EXPECT_GT(touching, 100);
  EXPECT_GT(far, 1000);
  std::printf("%d of %zu states touch the crate's surface, %d are farther than the bound\n", touching, n, far);
}

// The box scene with meshes of every source: a box of triangles, a Panda link read from its STL
// file, and one large slanted triangle.
Scene scene_with_meshes(const ompl_cuda::MotionBenchMakerProblem& problem) {
  Scene scene = Scene::load(problem.scene_file);
  scene.add({"crate", {}, {box_mesh(near_robot(problem.base, 0.4, -0.3, 0.5, 0.7), 0.15, 0.2, 0.3)}});
  SceneMesh link = ompl_cuda::read_scene_mesh(
      (panda_test::panda_dir() / "meshes" / "collision" / "link3.stl").string(), 1.5);
  link.pose = near_robot(problem.base, 0.3, 0.4, 0.3, 1.1);
  scene.add({"link", {}, {link}});
  SceneMesh sail;
  sail.vertices = {0, 0, 0, 0.6, 0.1, 0.3, 0.1, 0.5, 0.7};
  sail.triangles = {0, 1, 2};
  sail.pose = near_robot(problem.base, -0.5, -0.4, 0.1, 0.2);
  scene.add({"sail", {}, {sail}});
  return scene;
}

TEST(RobotChecksWithAMesh, GpuDecidesAsTheCpu) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_PANDA();
  const ompl_cuda::MotionBenchMakerProblem problem = box_problem();
  const Scene scene = scene_with_meshes(problem);
  RobotChecks cpu(panda(), scene, problem.group, problem.base, {}, true, Backend::Cpu);
  RobotChecks gpu(panda(), scene, problem.group, problem.base, {}, true, Backend::Cuda);
  ASSERT_EQ(gpu.backend(), Backend::Cuda);
  const int d = cpu.dimension();
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "as placed" : "moved, at 1.5 cm");
    const std::size_t n = 200000;
    const std::vector<double> values = random_values(cpu, n, 43 + round);
    std::vector<char> on_cpu(n), on_gpu(n);
    cpu.check_states(values.data(), n, on_cpu.data());
    gpu.check_states(values.data(), n, on_gpu.data());
    std::size_t differ = 0, valid = 0;
    for (std::size_t i = 0; i < n; ++i) differ += on_cpu[i] != on_gpu[i], valid += on_cpu[i];
    EXPECT_EQ(differ, 0u);
    EXPECT_GT(valid, n / 20);
    EXPECT_LT(valid, n);
    // Motions of every length.
    const std::size_t motions = 20000;
    std::vector<int> segments(motions), first_cpu(motions), first_gpu(motions);
    for (std::size_t i = 0; i < motions; ++i) segments[i] = static_cast<int>(i % 40);
    cpu.check_motions(values.data(), values.data() + motions * d, segments.data(), motions, first_cpu.data());
    gpu.check_motions(values.data(), values.data() + motions * d, segments.data(), motions, first_gpu.data());
    EXPECT_EQ(first_cpu, first_gpu);
    // The scene's meshes move and the field is finer: both backends take the change.
    Transform shift;
    shift.translation[0] = 0.1, shift.translation[2] = -0.05;
    for (RobotChecks* checks : {&cpu, &gpu}) {
      checks->scene().move("crate", shift);
      checks->scene().move("link", shift);
      checks->scene().set_field_resolution(0.015);
    }
  }
}

int states_to_check() {
  if (const char* env = std::getenv("OMPL_CUDA_FCL_STATES")) return std::max(1, std::atoi(env));
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 5000;
#else
  return 30000;
#endif
}

TEST(RobotChecksWithAMesh, AreConservativeAgainstFcl) {
  REQUIRE_PANDA();
  const ompl_cuda::MotionBenchMakerProblem problem = box_problem();
  const Scene scene = scene_with_meshes(problem);
  const RobotChecks ours(panda(), scene, problem.group, problem.base, {}, false, Backend::Cpu);
  const ompl_cuda::bench::FclRobotChecker fcl(panda(), scene, problem.base);
  // The meshes alone, to count the contacts FCL finds with them rather than with the primitives.
  Scene meshes_only;
  for (const ompl_cuda::SceneObject& object : scene.objects())
    if (!object.meshes.empty()) meshes_only.add({object.id, {}, object.meshes});
  const ompl_cuda::bench::FclRobotChecker fcl_meshes(panda(), meshes_only, problem.base);
  const int n = states_to_check(), d = ours.dimension(), vars = panda().model().num_variables();
  const std::vector<double> values = random_values(ours, n, 47);
  std::vector<char> valid(n), fcl_scene(n), fcl_mesh(n);
  ours.check_states(values.data(), n, valid.data());
#pragma omp parallel
  {
    std::vector<double> full(vars);
#pragma omp for schedule(dynamic, 64)
    for (int i = 0; i < n; ++i) {
      ours.full_state(&values[static_cast<std::size_t>(i) * d], full.data());
      fcl_scene[i] = fcl.touches_scene(full.data());
      fcl_mesh[i] = fcl_meshes.touches_scene(full.data());
    }
  }
  int contacts = 0, mesh_contacts = 0, free = 0, refused_free = 0;
  for (int i = 0; i < n; ++i) {
    if (fcl_scene[i] && valid[i]) {
      const std::vector<double> state(values.begin() + i * d, values.begin() + (i + 1) * d);
      FAIL() << "FCL finds the scene touched (" << (fcl_mesh[i] ? "a mesh" : "a primitive") << "), our check does not, at "
             << testing::PrintToString(state);
    }
    contacts += fcl_scene[i], mesh_contacts += fcl_mesh[i];
    if (!fcl_scene[i]) ++free, refused_free += !valid[i];
  }
  std::printf("%d states: FCL finds %d in contact with the scene (%d with a mesh); we refuse %.1f%% of the free ones\n", n,
              contacts, mesh_contacts, free ? 100.0 * refused_free / free : 0.0);
  EXPECT_GT(mesh_contacts, n / 100);
}

TEST(RobotChecksWithAMesh, AMeshTooFineForTheFieldIsRefusedWithAResolutionThatFits) {
  REQUIRE_PANDA();
  const ompl_cuda::MotionBenchMakerProblem problem = box_problem();
  Scene scene;
  scene.add({"wall", {}, {box_mesh(near_robot(problem.base, 0.5, 0, 0.4, 0), 0.01, 1.5, 1.5)}});
  scene.set_field_resolution(1e-4);
  const std::vector<double> ready = panda().model().named_state("panda_arm", "ready", panda().model().default_state());
  try {
    ompl_cuda::in_collision(panda(), scene, problem.base, ready.data());
    FAIL() << "a field of 1e-4 m over a 1.5 m wall was built";
  } catch (const linalg_cuda::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("or more fits"), std::string::npos) << e.what();
  }
  scene.set_field_resolution(0.01);
  EXPECT_NO_THROW(ompl_cuda::in_collision(panda(), scene, problem.base, ready.data()));
}

}  // namespace
