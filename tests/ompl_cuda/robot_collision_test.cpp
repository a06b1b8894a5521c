// Scenes (MoveIt's YAML as MotionBenchMaker writes it; adding, moving, removing), the sphere-primitive
// tests against a brute-force reading of each primitive's points, and in_collision, the CPU reference
// of the robot checks, on a slider robot with known answers and on the Panda in the shared scenes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_collision_model.h"
#include "robot_collision_math.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using ompl_cuda::Primitive;
using ompl_cuda::RobotCollisionModel;
using ompl_cuda::RobotModel;
using ompl_cuda::Scene;
using ompl_cuda::Sphere;
using ompl_cuda::Transform;

fs::path scenes() { return test_support::data_dir() / "scenes"; }

std::string write(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "ompl_cuda_robot_collision_test";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

TEST(Scene, ReadsMotionBenchMakerScenes) {
  const fs::path box = scenes() / "box" / "scene_box.yaml";
  if (!fs::exists(box)) GTEST_SKIP() << box << " not found (set CUDA_SOLVERS_DATA)";
  const Scene scene = Scene::load(box.string());
  ASSERT_TRUE(scene.has("Can1"));
  const ompl_cuda::SceneObject& can = scene.objects()[0];
  EXPECT_EQ(can.id, "Can1");
  ASSERT_EQ(can.primitives.size(), 1u);
  EXPECT_EQ(can.primitives[0].kind, Primitive::Kind::Cylinder);
  EXPECT_DOUBLE_EQ(can.primitives[0].size[0], 0.03);  // MoveIt's [height, radius]
  EXPECT_DOUBLE_EQ(can.primitives[0].size[1], 0.14);
  EXPECT_DOUBLE_EQ(can.primitives[0].pose.translation[0], 0.8);
  EXPECT_TRUE(scene.has("base"));  // "id: base " with a trailing blank
  // Every shared scene reads, with boxes and cylinders only.
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(scenes()))
    if (entry.path().filename().string().rfind("scene_", 0) == 0) {
      const Scene s = Scene::load(entry.path().string());
      EXPECT_GT(s.num_primitives(), 0u) << entry.path();
      ++files;
    }
  EXPECT_GE(files, 6);
}

TEST(Scene, ReadsAMotionBenchMakerProblem) {
  if (!fs::exists(scenes() / "box_panda.problem.yaml")) GTEST_SKIP() << scenes() << " not found (set CUDA_SOLVERS_DATA)";
  const ompl_cuda::MotionBenchMakerProblem problem =
      ompl_cuda::read_motion_bench_maker_problem((scenes() / "box_panda.problem.yaml").string());
  EXPECT_EQ(problem.group, "panda_arm");
  // base_offset [-0.15, 0, -1.02] moves the scene to the robot: the robot stands at its inverse.
  EXPECT_DOUBLE_EQ(problem.base.translation[0], 0.15);
  EXPECT_DOUBLE_EQ(problem.base.translation[1], 0.0);
  EXPECT_DOUBLE_EQ(problem.base.translation[2], 1.02);
  EXPECT_EQ(fs::path(problem.scene_file), scenes() / "box" / "scene_box.yaml");
  EXPECT_TRUE(fs::exists(problem.scene_file));
}

TEST(Scene, SaysWhatItCannotTake) {
  auto error = [](const std::string& text) {
    try {
      Scene::load(write("bad.yaml", text));
    } catch (const linalg_cuda::ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string head = "world:\n  collision_objects:\n    - id: a\n";
  EXPECT_NE(error("world: [\n").find("bad.yaml:"), std::string::npos);
  EXPECT_NE(error("world: [\n").find("not YAML"), std::string::npos);
  EXPECT_NE(error("robot: 1\n").find("no 'world'"), std::string::npos);
  EXPECT_NE(error(head + "      primitives:\n        - type: cone\n          dimensions: [1, 1]\n      primitive_poses:\n        - position: [0, 0, 0]\n")
                .find("bad.yaml:5: object 'a' cone: type 'cone' is not taken"),
            std::string::npos)
      << error(head + "      primitives:\n        - type: cone\n          dimensions: [1, 1]\n      primitive_poses:\n        - position: [0, 0, 0]\n");
  EXPECT_NE(error(head + "      primitives:\n        - type: box\n          dimensions: [1, 1]\n      primitive_poses:\n        - position: [0, 0, 0]\n")
                .find("dimensions [x y z] needs 3 numbers"),
            std::string::npos);
  EXPECT_NE(error(head + "      primitives:\n        - type: box\n          dimensions: [1, 1, x]\n      primitive_poses:\n        - position: [0, 0, 0]\n")
                .find("'x' is not a number"),
            std::string::npos);
  EXPECT_NE(error(head + "      primitives:\n        - type: box\n          dimensions: [1, 1, 1]\n      primitive_poses: []\n")
                .find("one primitive_poses entry per primitive"),
            std::string::npos);
  EXPECT_NE(error(head + "      meshes:\n        - {}\n      mesh_poses:\n        - position: [0, 0, 0]\n")
                .find("bad.yaml:5: object 'a' mesh 0 has no vertices list"),
            std::string::npos)
      << error(head + "      meshes:\n        - {}\n      mesh_poses:\n        - position: [0, 0, 0]\n");
  EXPECT_NE(error(head + "      planes:\n        - coef: [0, 0, 1, 0]\n").find("has planes"), std::string::npos);
  EXPECT_NE(error(head + "      primitives:\n        - type: box\n          dimensions: [1, 1, 1]\n      primitive_poses:\n        - position: [0, 0, 0]\n          orientation: [0, 0, 0, 0]\n")
                .find("zero quaternion"),
            std::string::npos);
  EXPECT_THROW(Scene::load("/no/such/scene.yaml"), linalg_cuda::ParseError);
}

// Inputs that the scene fuzzer (fuzz/ompl_cuda_scene_fuzzer.cpp) found: nodes of another kind than
// expected and ids that Scene::add refuses are ParseErrors with the file's line, and what the file holds
// is quoted short.
TEST(Scene, SaysWhereANodeIsNotWhatItExpects) {
  auto error = [](const std::string& text, bool problem = false) {
    const std::string file = write("odd.yaml", text);
    try {
      if (problem) {
        ompl_cuda::read_motion_bench_maker_problem(file);
      } else {
        Scene::load(file);
      }
    } catch (const linalg_cuda::ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string head = "world:\n  collision_objects:\n";
  const std::string empty = "      primitives: []\n      primitive_poses: []\n";
  EXPECT_NE(error("world: 1\n").find("odd.yaml:1: 'world' is not a map"), std::string::npos) << error("world: 1\n");
  EXPECT_NE(error("- 1\n").find("odd.yaml:1: not a map"), std::string::npos) << error("- 1\n");
  EXPECT_NE(error(head + "    - id: a\n      primitives: [1]\n      primitive_poses: [{position: [0, 0, 0]}]\n")
                .find("odd.yaml:4: object 'a' primitive 0 is not a map"),
            std::string::npos);
  EXPECT_NE(error(head + "    - id: [a]\n" + empty).find("odd.yaml:3: a collision object's id is not a scalar"), std::string::npos)
      << error(head + "    - id: [a]\n" + empty);
  EXPECT_NE(error(head + "    - id: \" \"\n" + empty).find("odd.yaml:3: a collision object has an empty id"), std::string::npos);
  EXPECT_NE(error(head + "    - id: a\n" + empty + "    - id: a\n" + empty).find("odd.yaml:6: a second collision object of id 'a'"),
            std::string::npos)
      << error(head + "    - id: a\n" + empty + "    - id: a\n" + empty);
  const std::string long_id = error(head + "    - id: " + std::string(2000, 'a') + "\n      primitives: 1\n");
  EXPECT_NE(long_id.find("object '" + std::string(80, 'a') + "...' primitives is not a list"), std::string::npos) << long_id;
  EXPECT_LT(long_id.size(), 300u);
  EXPECT_NE(error("planning_group: {a: 1}\n", true).find("odd.yaml:1: planning_group is not a scalar"), std::string::npos);
  EXPECT_NE(error("planning_group: ''\n", true).find("odd.yaml:1: planning_group is empty"), std::string::npos);
  EXPECT_NE(error("planning_group: a\nscene: [1]\n", true).find("odd.yaml:2: scene is not a scalar"), std::string::npos);

  // A quaternion whose squares overflow keeps its direction: half a turn about x.
  const Scene scene = Scene::load(write("big_quaternion.yaml", head + "    - id: a\n      primitives: [{type: sphere, dimensions: [1]}]\n"
                                                                       "      primitive_poses: [{position: [0, 0, 0], orientation: [1e200, 0, 0, 0]}]\n"));
  EXPECT_EQ(scene.objects()[0].primitives[0].pose.rotation[4], -1.0);
}

TEST(Scene, AddsMovesAndRemovesObjects) {
  Scene scene;
  Primitive box;
  box.size[0] = box.size[1] = box.size[2] = 1;
  scene.add({"crate", {box}});
  EXPECT_THROW(scene.add({"crate", {box}}), linalg_cuda::InvalidArgument);
  Primitive bad = box;
  bad.size[1] = NAN;
  EXPECT_THROW(scene.add({"bad", {bad}}), linalg_cuda::InvalidArgument);
  const std::uint64_t before = scene.version();
  Transform shift;
  shift.translation[2] = 2;
  scene.move("crate", shift);
  EXPECT_GT(scene.version(), before);
  EXPECT_DOUBLE_EQ(scene.objects()[0].primitives[0].pose.translation[2], 2);
  EXPECT_THROW(scene.move("nothing", shift), linalg_cuda::InvalidArgument);
  scene.remove("crate");
  EXPECT_FALSE(scene.has("crate"));
  EXPECT_EQ(scene.num_primitives(), 0u);
}

// sphere_touches against the primitive's points: a fine lattice of its volume decides with margins.
TEST(RobotCollisionMath, SphereAgainstEachPrimitiveMatchesItsPoints) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1, 1), pos(0.05, 0.5);
  int touching = 0, apart = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Primitive p;
    p.kind = static_cast<Primitive::Kind>(trial % 4);
    for (double& s : p.size) s = pos(rng);
    const double q[4] = {u(rng), u(rng), u(rng), u(rng) + 1.5}, t[3] = {u(rng), u(rng), u(rng)};
    p.pose = ompl_cuda::transform_from(t, q);
    ompl_cuda::detail::CheckPrimitive<double> check;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) check.rotation[3 * i + j] = p.pose.rotation[3 * j + i];
      check.translation[i] = -(check.rotation[3 * i] * t[0] + check.rotation[3 * i + 1] * t[1] + check.rotation[3 * i + 2] * t[2]);
      check.size[i] = p.size[i];
    }
    check.kind = static_cast<int>(p.kind);
    // The primitive's points in its frame, on a lattice of 40 a side over its bounding box.
    auto contains = [&](const double* x) {
      switch (p.kind) {
        case Primitive::Kind::Sphere: return x[0] * x[0] + x[1] * x[1] + x[2] * x[2] <= p.size[0] * p.size[0];
        case Primitive::Kind::Box: return std::fabs(x[0]) <= p.size[0] / 2 && std::fabs(x[1]) <= p.size[1] / 2 && std::fabs(x[2]) <= p.size[2] / 2;
        case Primitive::Kind::Cylinder: return std::hypot(x[0], x[1]) <= p.size[0] && std::fabs(x[2]) <= p.size[1] / 2;
        case Primitive::Kind::Capsule: {
          const double z = std::fabs(x[2]) - p.size[1] / 2;
          return std::hypot(x[0], x[1], std::max(0.0, z)) <= p.size[0];
        }
      }
      return false;
    };
    double extent[3];
    for (int i = 0; i < 3; ++i)
      extent[i] = p.kind == Primitive::Kind::Box ? p.size[i] / 2 : (i < 2 ? p.size[0] : (p.kind == Primitive::Kind::Sphere ? p.size[0] : p.size[1] / 2 + (p.kind == Primitive::Kind::Capsule ? p.size[0] : 0)));
    const double c[3] = {t[0] + 0.7 * u(rng), t[1] + 0.7 * u(rng), t[2] + 0.7 * u(rng)};
    const double r = pos(rng);
    double nearest = INFINITY;
    constexpr int n = 40;
    for (int a = 0; a <= n; ++a)
      for (int b = 0; b <= n; ++b)
        for (int d = 0; d <= n; ++d) {
          const double x[3] = {extent[0] * (2.0 * a / n - 1), extent[1] * (2.0 * b / n - 1), extent[2] * (2.0 * d / n - 1)};
          if (!contains(x)) continue;
          double w[3];
          for (int i = 0; i < 3; ++i)
            w[i] = p.pose.rotation[3 * i] * x[0] + p.pose.rotation[3 * i + 1] * x[1] + p.pose.rotation[3 * i + 2] * x[2] + t[i];
          nearest = std::min(nearest, std::hypot(w[0] - c[0], w[1] - c[1], w[2] - c[2]));
        }
    const double spacing = 2 * std::max({extent[0], extent[1], extent[2]}) / n * std::sqrt(3.0);
    const bool touches = ompl_cuda::detail::sphere_touches(c, r, check);
    if (nearest <= r) EXPECT_TRUE(touches) << trial;          // a point of the primitive is inside the sphere
    if (nearest > r + spacing) EXPECT_FALSE(touches) << trial;  // every point is farther than a lattice step
    (touches ? touching : apart) += 1;
  }
  EXPECT_GT(touching, 50);
  EXPECT_GT(apart, 50);
}

// A robot whose one sphere (radius 0.1) slides along x, before a box whose face is at x = 1.
TEST(InCollision, SliderMeetsABoxExactlyAtItsFace) {
  const RobotModel slider = RobotModel::load(write("slider.urdf", R"(<robot name="slider">
  <link name="base"/>
  <link name="carriage"/>
  <joint name="x" type="prismatic"><parent link="base"/><child link="carriage"/>
    <axis xyz="1 0 0"/><limit lower="-5" upper="5" effort="1" velocity="1"/></joint>
</robot>
)"));
  std::vector<std::vector<Sphere>> spheres(2);
  Sphere s;
  s.radius = 0.125;
  spheres[1].push_back(s);
  const RobotCollisionModel robot(slider, spheres);
  Scene scene;
  Primitive box;
  box.size[0] = box.size[1] = box.size[2] = 1;
  box.pose.translation[0] = 1.5;  // faces at x = 1 and 2
  scene.add({"box", {box}});
  Transform base;
  for (const auto& [x, expected] : std::vector<std::pair<double, bool>>{{0.875, true}, {0.87, false}, {2.5, false}, {2.125, true}, {1.5, true}}) {
    EXPECT_EQ(ompl_cuda::in_collision(robot, scene, base, &x), expected) << x;
  }
  // The base's pose moves the robot: 1 m back, the face is out of reach.
  base.translation[0] = -1;
  const double x = 0.875;
  EXPECT_FALSE(ompl_cuda::in_collision(robot, scene, base, &x));
  const double nan = NAN;
  EXPECT_TRUE(ompl_cuda::in_collision(robot, scene, base, &nan));
}

TEST(InCollision, PandaIsFreeInItsReadyStateAndTouchesABallAtItsHand) {
  const fs::path panda = test_support::data_dir() / "robots" / "robowflex_resources" / "panda";
  if (!fs::exists(panda)) GTEST_SKIP() << panda << " not found (set CUDA_SOLVERS_DATA)";
  const RobotModel model = RobotModel::load((panda / "urdf" / "panda.urdf").string(), (panda / "config" / "panda.srdf").string(),
                                            {(test_support::data_dir() / "robots").string()});
  const RobotCollisionModel robot(model, ompl_cuda::cover_with_spheres(model, {0.02}));
  // Link pairs the SRDF leaves checked: some exist, none is a pair it disables or a parent and child.
  EXPECT_FALSE(robot.self_collision_pairs().empty());
  for (const auto& [a, b] : robot.self_collision_pairs())
    EXPECT_FALSE(std::binary_search(model.disabled_collisions().begin(), model.disabled_collisions().end(), std::make_pair(a, b)));
  const std::vector<double> ready = model.named_state("panda_arm", "ready", model.default_state());
  const Scene empty;
  EXPECT_FALSE(ompl_cuda::in_collision(robot, empty, Transform(), ready.data()));
  // Folded onto itself: joint 4 at its lower limit with joint 2 and 6 bent back.
  std::vector<double> folded = ready;
  folded[1] = 1.7, folded[3] = -3.0, folded[5] = 0.0;
  EXPECT_TRUE(ompl_cuda::in_collision(robot, empty, Transform(), folded.data()));
  EXPECT_FALSE(ompl_cuda::in_collision(robot, empty, Transform(), folded.data(), false));
  // A small ball where the hand is, at MotionBenchMaker's base offset in the scene: the robot touches
  // it; moved 1 m up, or removed, it does not.
  const double offset[3] = {0.15, 0, 1.02}, identity[4] = {0, 0, 0, 1};
  const Transform base = ompl_cuda::transform_from(offset, identity);
  std::vector<Transform> poses;
  model.link_poses(ready.data(), &poses);
  Primitive ball;
  ball.kind = Primitive::Kind::Sphere;
  ball.size[0] = 0.01;
  ball.pose = ompl_cuda::compose(base, poses[model.link_index("panda_hand")]);
  Scene scene;
  scene.add({"ball", {ball}});
  EXPECT_TRUE(ompl_cuda::in_collision(robot, scene, base, ready.data()));
  Transform up;
  up.translation[2] = 1.0;
  scene.move("ball", up);
  EXPECT_FALSE(ompl_cuda::in_collision(robot, scene, base, ready.data()));
  scene.remove("ball");
  EXPECT_FALSE(ompl_cuda::in_collision(robot, scene, base, ready.data()));
  std::vector<Sphere> world;
  robot.world_spheres(ready.data(), base, &world);
  EXPECT_EQ(world.size(), robot.num_spheres());
}

}  // namespace
