// The robot checks held to FCL, MoveIt's collision library (bench/fcl_robot_checker.h), on the shared
// Panda in every MotionBenchMaker scene: the FCL checker itself on states whose answer is known; on
// random states of the arm, whenever FCL finds the robot's meshes touching the scene or each other
// (the pairs the SRDF leaves checked), in_collision with the sphere cover says so too, and the cover's
// cost (invalid for us, free for FCL) is printed; paths planned with our checks are free for FCL at a
// fine resolution. OMPL_CUDA_FCL_STATES sets the random states per scene (default: 1e5 in
// an optimised build).
#include <gtest/gtest.h>
#include <ompl/base/ScopedState.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/geometric/SimpleSetup.h>
#include <ompl/geometric/planners/rrt/RRTConnect.h>
#include <ompl/util/Console.h>
#include <ompl/util/RandomNumbers.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>

#include "fcl_robot_checker.h"
#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_checkers.h"
#include "panda_test_support.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
namespace ob = ompl::base;
namespace og = ompl::geometric;
using ompl_cuda::Primitive;
using ompl_cuda::RobotCollisionModel;
using ompl_cuda::RobotModel;
using ompl_cuda::Scene;
using ompl_cuda::Transform;
using ompl_cuda::bench::FclRobotChecker;

using panda_test::panda;

// The spheres at 3 cm (as robot_checkers_test's): the coarser cover, whose conservativeness is the
// harder to keep.
constexpr double kTolerance = 0.03;
const RobotCollisionModel& panda_spheres() { return panda_test::panda_spheres(kTolerance); }

std::vector<double> ready_state() { return panda().named_state("panda_arm", "ready", panda().default_state()); }

// A MotionBenchMaker problem with the scene it names.
struct SceneProblem {
  std::string name;  // the problem file's, less "_panda.problem.yaml"
  Scene scene;
  ompl_cuda::MotionBenchMakerProblem problem;
};

// Every <name>_panda.problem.yaml of the shared scenes, by name, with the scene it names.
std::vector<SceneProblem> panda_problems() {
  const std::string suffix = "_panda.problem.yaml";
  std::vector<SceneProblem> out;
  for (const fs::path& file : panda_test::problem_files()) {
    const ompl_cuda::MotionBenchMakerProblem problem = ompl_cuda::read_motion_bench_maker_problem(file.string());
    EXPECT_FALSE(problem.scene_file.empty()) << file << " names no scene";
    if (problem.scene_file.empty()) continue;
    const std::string name = file.filename().string();
    out.push_back({name.substr(0, name.size() - suffix.size()), Scene::load(problem.scene_file), problem});
  }
  return out;
}

// States per scene: $OMPL_CUDA_FCL_STATES, else 1e5 in an optimised build (7 s to 15 s on
// two cores) and 1e4 in a debug or sanitized one, several times slower.
int states_per_scene() {
  if (const char* env = std::getenv("OMPL_CUDA_FCL_STATES")) return std::max(1, std::atoi(env));
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 10000;
#else
  return 100000;
#endif
}

// OMPL takes a seed only before its first random number: a run of these tests alone is reproducible.
void seed_ompl_once() {
  static const bool seeded = (ompl::RNG::setSeed(5), true);
  (void)seeded;
}

Transform translation(double x, double y, double z) {
  Transform t;
  t.translation[0] = x, t.translation[1] = y, t.translation[2] = z;
  return t;
}

Primitive primitive(Primitive::Kind kind, const Transform& pose, double a, double b = 0, double c = 0) {
  Primitive p;
  p.kind = kind;
  p.pose = pose;
  p.size[0] = a, p.size[1] = b, p.size[2] = c;
  return p;
}

bool fcl_touches(const Primitive& p, const std::vector<double>& state) {
  Scene scene;
  scene.add({"probe", {p}});
  return FclRobotChecker(panda_spheres(), scene, Transform()).in_collision(state.data());
}

TEST(FclRobotChecker, FindsTheContactsItShouldAndNoOthers) {
  REQUIRE_PANDA();
  const std::vector<double> ready = ready_state();
  const FclRobotChecker empty(panda_spheres(), Scene(), Transform());
  EXPECT_FALSE(empty.in_collision(ready.data()));
  const double nan_state[9] = {NAN, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_TRUE(empty.in_collision(nan_state));

  // A crate around the hand touches it; 1 m up, it touches nothing.
  std::vector<Transform> poses;
  panda().link_poses(ready.data(), &poses);
  const Transform hand = poses[panda().link_index("panda_hand")];
  const Primitive crate = primitive(Primitive::Kind::Box, hand, 0.05, 0.05, 0.05);
  EXPECT_TRUE(fcl_touches(crate, ready));
  EXPECT_FALSE(fcl_touches(primitive(Primitive::Kind::Box, ompl_cuda::compose(translation(0, 0, 1), hand), 0.05, 0.05, 0.05), ready));
  // The robot's base moves the robot: 1 m to the side of the crate, it touches nothing.
  Scene crate_scene;
  crate_scene.add({"crate", {crate}});
  EXPECT_TRUE(FclRobotChecker(panda_spheres(), crate_scene, Transform()).touches_scene(ready.data()));
  EXPECT_FALSE(FclRobotChecker(panda_spheres(), crate_scene, translation(0, 1, 0)).touches_scene(ready.data()));

  // Sizes as ours: radius then length along z. A rod of radius 1 cm and length 0.6 m, upright, 0.25 m
  // above the hand's origin reaches it; 0.2 m beside it (x), it does not, which a rod of radius 0.6 m
  // (the sizes swapped) or lying along x would. Likewise a capsule, whose hemispheres add 1 cm.
  const double* h = hand.translation;
  const Transform above = translation(h[0], h[1], h[2] + 0.25), beside = translation(h[0] + 0.2, h[1], h[2]);
  for (const Primitive::Kind kind : {Primitive::Kind::Cylinder, Primitive::Kind::Capsule}) {
    SCOPED_TRACE(kind == Primitive::Kind::Cylinder ? "cylinder" : "capsule");
    EXPECT_TRUE(fcl_touches(primitive(kind, above, 0.01, 0.6), ready));
    EXPECT_FALSE(fcl_touches(primitive(kind, beside, 0.01, 0.6), ready));
  }
  EXPECT_TRUE(fcl_touches(primitive(Primitive::Kind::Sphere, beside, 0.2), ready));
  EXPECT_FALSE(fcl_touches(primitive(Primitive::Kind::Sphere, beside, 0.05), ready));

  // Folded onto itself (joint 4 at its lower limit, 2 and 6 bent back), and every joint at 0 (joint 6
  // at 0 turns the wrist back onto link 5): contacts of pairs the SRDF leaves checked. Without those
  // pairs, or without self-collision, both are free.
  std::vector<double> folded = ready;
  folded[1] = 1.7, folded[3] = -3.0, folded[5] = 0.0;
  const std::vector<double> zero = panda().default_state();
  const FclRobotChecker unchecked(panda(), {}, Scene(), Transform());
  for (const std::vector<double>& state : {folded, zero}) {
    EXPECT_TRUE(empty.touches_itself(state.data()));
    EXPECT_FALSE(empty.touches_scene(state.data()));
    EXPECT_FALSE(empty.in_collision(state.data(), false));
    EXPECT_FALSE(unchecked.in_collision(state.data()));
  }
  EXPECT_THROW(FclRobotChecker(panda(), {{0, 99}}, Scene(), Transform()), linalg_cuda::InvalidArgument);
}

// n full states, the group's variables uniform within their limits (seeded), the others at their default.
std::vector<double> random_states(const ompl_cuda::PlanningGroup& group, int n, std::uint64_t seed) {
  const int vars = panda().num_variables();
  const std::vector<double> held = panda().default_state();
  std::mt19937_64 rng(seed);
  std::vector<double> states(static_cast<std::size_t>(n) * vars);
  for (int k = 0; k < n; ++k) {
    double* s = &states[static_cast<std::size_t>(k) * vars];
    std::copy(held.begin(), held.end(), s);
    for (const int v : group.variables)
      s[v] = std::uniform_real_distribution<double>(panda().lower_bound(v), panda().upper_bound(v))(rng);
  }
  return states;
}

// Each state's contacts by FCL and by our checks, the scene's and the robot's own apart.
struct Contacts {
  std::vector<char> fcl_scene, fcl_self, ours_scene, ours_self;
};

Contacts contacts(const SceneProblem& p, const std::vector<double>& states) {
  const RobotCollisionModel& robot = panda_spheres();
  const FclRobotChecker fcl(robot, p.scene, p.problem.base);
  const int vars = panda().num_variables(), n = static_cast<int>(states.size() / vars);
  Contacts c{std::vector<char>(n), std::vector<char>(n), std::vector<char>(n), std::vector<char>(n)};
  const Scene nothing;
#pragma omp parallel for schedule(dynamic, 64)
  for (int k = 0; k < n; ++k) {
    const double* s = &states[static_cast<std::size_t>(k) * vars];
    c.fcl_scene[k] = fcl.touches_scene(s);
    c.fcl_self[k] = fcl.touches_itself(s);
    c.ours_scene[k] = ompl_cuda::in_collision(robot, p.scene, p.problem.base, s, false);
    c.ours_self[k] = ompl_cuda::in_collision(robot, nothing, p.problem.base, s, true);
  }
  return c;
}

TEST(FclRobotChecker, OurChecksAreConservativeOnEveryScene) {
  REQUIRE_PANDA();
  const std::vector<SceneProblem> problems = panda_problems();
  ASSERT_GE(problems.size(), 6u);
  const int n = states_per_scene(), vars = panda().num_variables();
  const auto start_time = std::chrono::steady_clock::now();
  int scene_contacts_in_all = 0;
  std::printf("%d states per scene, %zu spheres (tolerance %g m)\n%-18s %9s %8s %12s %15s %10s %9s\n", n,
              panda_spheres().num_spheres(), kTolerance, "scene", "FCL scene", "FCL self", "ours invalid", "false positive", "by scene", "by self");
  for (const SceneProblem& p : problems) {
    SCOPED_TRACE(p.name);
    const std::vector<double> states = random_states(panda().group(p.problem.group), n, 20240601);
    const Contacts c = contacts(p, states);
    // Misses fail the test; the first is printed. False positives: invalid for us, free for FCL, and of
    // those, ours touching the scene where FCL's does not, or ourselves where FCL's robot does not.
    int scene_contacts = 0, self_contacts = 0, invalid = 0, fcl_free = 0, false_positives = 0, by_scene = 0, by_self = 0;
    for (int k = 0; k < n; ++k) {
      if ((c.fcl_scene[k] && !c.ours_scene[k]) || (c.fcl_self[k] && !c.ours_self[k])) {
        const std::vector<double> state(states.begin() + k * vars, states.begin() + (k + 1) * vars);
        FAIL() << "FCL finds " << (c.fcl_scene[k] ? "the scene" : "the robot itself") << " touched, our check does not, at state "
               << k << ": " << testing::PrintToString(state);
      }
      scene_contacts += c.fcl_scene[k], self_contacts += c.fcl_self[k];
      invalid += c.ours_scene[k] || c.ours_self[k];
      if (c.fcl_scene[k] || c.fcl_self[k]) continue;
      ++fcl_free;
      false_positives += c.ours_scene[k] || c.ours_self[k];
      by_scene += c.ours_scene[k], by_self += c.ours_self[k];
    }
    const double rate = fcl_free ? static_cast<double>(false_positives) / fcl_free : 0.0;
    std::printf("%-18s %9d %8d %12d %8d %5.1f%% %10d %9d\n", p.name.c_str(), scene_contacts, self_contacts, invalid,
                false_positives, 100 * rate, by_scene, by_self);
    RecordProperty(p.name + "_false_positive_rate", std::to_string(rate));
    EXPECT_GT(self_contacts, 0);  // else these states prove little
    scene_contacts_in_all += scene_contacts;
  }
  // At a problem's base pose the arm need not reach the scene's objects; over all scenes it must.
  EXPECT_GT(scene_contacts_in_all, 0);
  std::printf("(false positive: the share of the states FCL finds free)\nchecked in %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count());
}

// The path's segments cut into steps of at most `step` rad a joint, each state's full state checked by FCL.
int fcl_collisions_along(const og::PathGeometric& path, const ompl_cuda::RobotChecks& checks, const FclRobotChecker& fcl,
                         double step, int* checked) {
  int hits = 0;
  std::vector<double> values(checks.dimension()), full(panda().num_variables());
  for (std::size_t i = 0; i + 1 < path.getStateCount(); ++i) {
    const double* a = path.getState(i)->as<ob::RealVectorStateSpace::StateType>()->values;
    const double* b = path.getState(i + 1)->as<ob::RealVectorStateSpace::StateType>()->values;
    double longest = 0;
    for (int d = 0; d < checks.dimension(); ++d) longest = std::max(longest, std::abs(b[d] - a[d]));
    const int steps = std::max(1, static_cast<int>(std::ceil(longest / step)));
    for (int j = 0; j <= steps; ++j) {
      for (int d = 0; d < checks.dimension(); ++d) values[d] = a[d] + (b[d] - a[d]) * j / steps;
      checks.full_state(values.data(), full.data());
      hits += fcl.in_collision(full.data());
      ++*checked;
    }
  }
  return hits;
}

TEST(FclRobotChecker, PathsPlannedWithOurChecksAreFreeForFcl) {
  REQUIRE_PANDA();
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  seed_ompl_once();
  const std::vector<SceneProblem> problems = panda_problems();
  int planned = 0;
  for (const SceneProblem& p : problems) {
    if (p.name != "bookshelf_tall" && p.name != "cage" && p.name != "table_pick") continue;
    SCOPED_TRACE(p.name);
    ++planned;
    auto checks = std::make_shared<ompl_cuda::RobotChecks>(panda_spheres(), p.scene, p.problem.group, p.problem.base);
    og::SimpleSetup ss(checks->make_space());
    const ob::SpaceInformationPtr& si = ss.getSpaceInformation();
    ss.setStateValidityChecker(std::make_shared<ompl_cuda::RobotValidityChecker>(si, checks));
    si->setMotionValidator(std::make_shared<ompl_cuda::RobotMotionValidator>(si, checks));
    ss.setPlanner(std::make_shared<og::RRTConnect>(si));
    ss.setup();
    // From the ready state where it is free, else from a random free state, to a free state within 1.5
    // rad a joint that the straight motion does not reach, so that the path turns around something; a
    // few goals, as the free space of the spheres has parts that a short plan does not join.
    ob::ScopedState<> start(si->getStateSpace()), goal(si->getStateSpace());
    const std::vector<double> ready = ready_state();
    for (int k = 0; k < checks->dimension(); ++k) start[k] = ready[checks->group().variables[k]];
    ob::StateSamplerPtr sampler = si->allocStateSampler();
    while (!si->isValid(start.get())) sampler->sampleUniform(start.get());
    bool solved = false;
    for (int attempt = 0; attempt < 5 && !solved; ++attempt) {
      do sampler->sampleUniformNear(goal.get(), start.get(), 1.5);
      while (!si->isValid(goal.get()) || si->checkMotion(start.get(), goal.get()));
      ss.clear();
      ss.setStartAndGoalStates(start, goal);
      solved = ss.solve(5.0) == ob::PlannerStatus::EXACT_SOLUTION;
    }
    ASSERT_TRUE(solved);

    // FCL at 0.005 rad a joint along the path as planned, and through FclValidityChecker, as MoveIt
    // would check it, at its states.
    const og::PathGeometric& path = ss.getSolutionPath();
    const auto fcl = std::make_shared<const FclRobotChecker>(checks->robot(), p.scene, p.problem.base);
    int checked = 0;
    EXPECT_EQ(fcl_collisions_along(path, *checks, *fcl, 0.005, &checked), 0) << "of " << checked << " states";
    const ompl_cuda::bench::FclValidityChecker moveit_way(si, fcl, checks->group());
    for (std::size_t i = 0; i < path.getStateCount(); ++i) EXPECT_TRUE(moveit_way.isValid(path.getState(i))) << i;
    std::cout << p.name << ": " << path.getStateCount() << " states, " << checked << " checked by FCL\n";
  }
  EXPECT_EQ(planned, 3);
}

TEST(FclRobotChecker, RrtConnectPlansWithTheFclChecker) {
  REQUIRE_PANDA();
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  seed_ompl_once();
  const std::vector<SceneProblem> problems = panda_problems();
  const auto found = std::find_if(problems.begin(), problems.end(), [](const SceneProblem& p) { return p.name == "cage"; });
  ASSERT_NE(found, problems.end());
  const SceneProblem& cage = *found;
  auto checks = std::make_shared<ompl_cuda::RobotChecks>(panda_spheres(), cage.scene, cage.problem.group, cage.problem.base);
  og::SimpleSetup ss(checks->make_space());
  const ob::SpaceInformationPtr& si = ss.getSpaceInformation();
  auto fcl = std::make_shared<const FclRobotChecker>(checks->robot(), cage.scene, cage.problem.base);
  ss.setStateValidityChecker(std::make_shared<ompl_cuda::bench::FclValidityChecker>(si, fcl, checks->group()));
  ss.setPlanner(std::make_shared<og::RRTConnect>(si));
  ob::ScopedState<> start(si->getStateSpace()), goal(si->getStateSpace());
  const std::vector<double> ready = ready_state();
  for (int k = 0; k < checks->dimension(); ++k) start[k] = ready[checks->group().variables[k]];
  ss.setup();
  ASSERT_TRUE(si->isValid(start.get()));
  ob::StateSamplerPtr sampler = si->allocStateSampler();
  do sampler->sampleUniformNear(goal.get(), start.get(), 1.5);
  while (!si->isValid(goal.get()));
  ss.setStartAndGoalStates(start, goal);
  EXPECT_EQ(ss.solve(20.0), ob::PlannerStatus::EXACT_SOLUTION);

  auto wrong = std::make_shared<ob::SpaceInformation>(std::make_shared<ob::RealVectorStateSpace>(6));
  EXPECT_THROW(ompl_cuda::bench::FclValidityChecker(wrong, fcl, checks->group()), linalg_cuda::InvalidArgument);
  EXPECT_THROW(ompl_cuda::bench::FclValidityChecker(si, fcl, checks->group(), {0.0}), linalg_cuda::InvalidArgument);
}

}  // namespace
