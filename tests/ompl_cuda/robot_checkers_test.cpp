// The robot's OMPL checks on the shared Panda in MotionBenchMaker's box scene: the checker against
// in_collision, its batch against its single calls, the motion validator against OMPL's
// DiscreteMotionValidator with the same checker (decisions, lastValid times and states), plans by
// RRTConnect and BatchedRRTstar re-checked by DiscreteMotionValidator, scene edits, bad input.
#include <gtest/gtest.h>
#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/base/ScopedState.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/geometric/SimpleSetup.h>
#include <ompl/geometric/planners/rrt/RRTConnect.h>
#include <ompl/util/Console.h>
#include <ompl/util/RandomNumbers.h>

#include <filesystem>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/batched_rrt_star.h"
#include "ompl_cuda/robot_checkers.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
namespace ob = ompl::base;
namespace og = ompl::geometric;
using ompl_cuda::RobotChecks;

fs::path panda_dir() { return test_support::data_dir() / "robots" / "robowflex_resources" / "panda"; }
fs::path box_scene() { return test_support::data_dir() / "scenes" / "box" / "scene_box.yaml"; }

#define REQUIRE_PANDA_AND_SCENE()                                                      \
  if (!fs::exists(panda_dir()) || !fs::exists(box_scene()))                           \
  GTEST_SKIP() << panda_dir() << " or " << box_scene() << " not found (set CUDA_SOLVERS_DATA)"

// The Panda (spheres at 3 cm) in the box scene at MotionBenchMaker's base offset, arm group.
std::shared_ptr<RobotChecks> panda_in_box() {
  static const ompl_cuda::RobotModel model =
      ompl_cuda::RobotModel::load((panda_dir() / "urdf" / "panda.urdf").string(), (panda_dir() / "config" / "panda.srdf").string(),
                                  {(test_support::data_dir() / "robots").string()});
  static const std::vector<std::vector<ompl_cuda::Sphere>> spheres = ompl_cuda::cover_with_spheres(model, {0.03});
  const double offset[3] = {0.15, 0, 1.02}, identity[4] = {0, 0, 0, 1};
  return std::make_shared<RobotChecks>(ompl_cuda::RobotCollisionModel(model, spheres), ompl_cuda::Scene::load(box_scene().string()),
                                       "panda_arm", ompl_cuda::transform_from(offset, identity));
}

struct PandaChecks {
  std::shared_ptr<RobotChecks> checks;
  ob::SpaceInformationPtr si;
  std::shared_ptr<ompl_cuda::RobotValidityChecker> checker;
  std::shared_ptr<ompl_cuda::RobotMotionValidator> validator;
};

PandaChecks make_setup() {
  PandaChecks s;
  s.checks = panda_in_box();
  s.si = std::make_shared<ob::SpaceInformation>(s.checks->make_space());
  s.checker = std::make_shared<ompl_cuda::RobotValidityChecker>(s.si, s.checks);
  s.validator = std::make_shared<ompl_cuda::RobotMotionValidator>(s.si, s.checks);
  s.si->setStateValidityChecker(s.checker);
  s.si->setMotionValidator(s.validator);
  s.si->setup();
  return s;
}

TEST(RobotCheckers, CheckerAgreesWithInCollisionAndItsBatch) {
  REQUIRE_PANDA_AND_SCENE();
  ompl::RNG::setSeed(7);
  const PandaChecks s = make_setup();
  ASSERT_EQ(s.checks->dimension(), 7);
  ob::StateSamplerPtr sampler = s.si->allocStateSampler();
  std::vector<ob::State*> states;
  for (int k = 0; k < 6000; ++k) {  // more than the batch reads on one thread
    states.push_back(s.si->allocState());
    sampler->sampleUniform(states.back());
  }
  std::vector<char> batch;
  s.checker->isValid(std::vector<const ob::State*>(states.begin(), states.end()), batch);
  int valid = 0;
  std::vector<double> full(s.checks->robot().model().num_variables());
  for (std::size_t k = 0; k < states.size(); ++k) {
    const bool single = s.checker->isValid(states[k]);
    EXPECT_EQ(batch[k] != 0, single) << k;
    if (k >= 2000) continue;  // in_collision builds its checks each call
    s.checks->full_state(states[k]->as<ob::RealVectorStateSpace::StateType>()->values, full.data());
    const double offset[3] = {0.15, 0, 1.02}, identity[4] = {0, 0, 0, 1};
    EXPECT_EQ(single, !ompl_cuda::in_collision(s.checks->robot(), s.checks->scene(), ompl_cuda::transform_from(offset, identity), full.data()));
    valid += single;
  }
  // The box scene blocks part of the space, not all of it.
  EXPECT_GT(valid, 200);
  EXPECT_LT(valid, 1900);
  for (ob::State* state : states) s.si->freeState(state);
}

TEST(RobotCheckers, MotionValidatorDecidesAsDiscreteMotionValidator) {
  REQUIRE_PANDA_AND_SCENE();
  ompl::RNG::setSeed(11);
  const PandaChecks s = make_setup();
  ob::DiscreteMotionValidator discrete(s.si);
  ob::StateSamplerPtr sampler = s.si->allocStateSampler();
  ob::State *a = s.si->allocState(), *b = s.si->allocState(), *last_ours = s.si->allocState(), *last_omp = s.si->allocState();
  std::vector<std::pair<const ob::State*, const ob::State*>> batch;
  std::vector<ob::State*> owned;
  std::vector<char> expected;
  std::vector<double> expected_times;
  int invalid = 0;
  for (int k = 0; k < 300; ++k) {
    do sampler->sampleUniform(a);
    while (!s.checker->isValid(a));
    sampler->sampleUniformNear(b, a, 0.2 + 1.5 * (k % 4));
    std::pair<ob::State*, double> ours(last_ours, -1), omp(last_omp, -1);
    const bool o = s.validator->checkMotion(a, b, ours), d = discrete.checkMotion(a, b, omp);
    ASSERT_EQ(o, d) << k;
    EXPECT_EQ(s.validator->checkMotion(a, b), d) << k;
    if (!d) {
      EXPECT_EQ(ours.second, omp.second) << k;
      EXPECT_TRUE(s.si->equalStates(last_ours, last_omp)) << k;
      ++invalid;
    }
    owned.push_back(s.si->cloneState(a));
    owned.push_back(s.si->cloneState(b));
    batch.emplace_back(owned[owned.size() - 2], owned.back());
    expected.push_back(d);
    expected_times.push_back(d ? 0.0 : omp.second);
  }
  EXPECT_GT(invalid, 30);
  EXPECT_LT(invalid, 270);
  std::vector<char> valid;
  std::vector<double> times(batch.size(), 0.0);
  s.validator->checkMotions(batch, valid, &times);
  for (std::size_t k = 0; k < batch.size(); ++k) {
    EXPECT_EQ(valid[k] != 0, expected[k] != 0) << k;
    if (!expected[k]) EXPECT_EQ(times[k], expected_times[k]) << k;
  }
  EXPECT_EQ(s.validator->getCheckedMotionCount(), 900u);
  // The same motions 16 times over, more than the batch reads on one thread.
  std::vector<std::pair<const ob::State*, const ob::State*>> repeated;
  for (int r = 0; r < 16; ++r) repeated.insert(repeated.end(), batch.begin(), batch.end());
  s.validator->checkMotions(repeated, valid, &times);
  for (std::size_t k = 0; k < repeated.size(); ++k) {
    EXPECT_EQ(valid[k] != 0, expected[k % batch.size()] != 0) << k;
    if (!expected[k % batch.size()]) EXPECT_EQ(times[k], expected_times[k % batch.size()]) << k;
  }
  for (ob::State* state : owned) s.si->freeState(state);
  for (ob::State* state : {a, b, last_ours, last_omp}) s.si->freeState(state);
}

TEST(RobotCheckers, PlannersFindPathsThatDiscreteMotionValidatorAccepts) {
  REQUIRE_PANDA_AND_SCENE();
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  for (const bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "BatchedRRTstar" : "RRTConnect");
    ompl::RNG::setSeed(21);
    const PandaChecks s = make_setup();
    og::SimpleSetup ss(s.si);
    ob::ScopedState<> start(s.si->getStateSpace()), goal(s.si->getStateSpace());
    const std::vector<double> ready = s.checks->robot().model().named_state("panda_arm", "ready", s.checks->robot().model().default_state());
    for (int k = 0; k < 7; ++k) start[k] = ready[k];
    ASSERT_TRUE(s.checker->isValid(start.get()));
    ob::StateSamplerPtr sampler = s.si->allocStateSampler();
    do sampler->sampleUniformNear(goal.get(), start.get(), 1.0);  // within 1 rad a joint of the ready state
    while (!s.checker->isValid(goal.get()));
    ss.setStartAndGoalStates(start, goal);
    // Any path will do: BatchedRRTstar, like RRTstar, stops early only at one that meets the threshold.
    auto objective = std::make_shared<ob::PathLengthOptimizationObjective>(s.si);
    objective->setCostThreshold(ob::Cost(1e9));
    ss.setOptimizationObjective(objective);
    if (batched) {
      auto planner = std::make_shared<ompl_cuda::BatchedRRTstar>(s.si);
      planner->setBatchSize(256);
      ss.setPlanner(planner);
    } else {
      ss.setPlanner(std::make_shared<og::RRTConnect>(s.si));
    }
    const ob::PlannerStatus status = ss.solve(30.0);
    ASSERT_EQ(status, ob::PlannerStatus::EXACT_SOLUTION);
    og::PathGeometric path = ss.getSolutionPath();
    ob::DiscreteMotionValidator discrete(s.si);
    for (std::size_t i = 0; i + 1 < path.getStateCount(); ++i)
      EXPECT_TRUE(discrete.checkMotion(path.getState(i), path.getState(i + 1))) << i;
  }
}

TEST(RobotCheckers, SceneEditsTakeEffectAndBadInputIsRefused) {
  REQUIRE_PANDA_AND_SCENE();
  const PandaChecks s = make_setup();
  ob::ScopedState<> ready(s.si->getStateSpace());
  const std::vector<double> full = s.checks->robot().model().named_state("panda_arm", "ready", s.checks->robot().model().default_state());
  for (int k = 0; k < 7; ++k) ready[k] = full[k];
  ASSERT_TRUE(s.checker->isValid(ready.get()));
  // A crate where the hand is.
  std::vector<ompl_cuda::Transform> poses;
  s.checks->robot().model().link_poses(full.data(), &poses);
  const double offset[3] = {0.15, 0, 1.02}, identity[4] = {0, 0, 0, 1};
  ompl_cuda::Primitive crate;
  crate.size[0] = crate.size[1] = crate.size[2] = 0.05;
  crate.pose = ompl_cuda::compose(ompl_cuda::transform_from(offset, identity), poses[s.checks->robot().model().link_index("panda_hand")]);
  s.checks->scene().add({"crate", {crate}});
  EXPECT_FALSE(s.checker->isValid(ready.get()));
  s.checks->scene().remove("crate");
  EXPECT_TRUE(s.checker->isValid(ready.get()));
  // Out of bounds is invalid.
  ob::ScopedState<> outside = ready;
  outside[3] = 1.0;  // joint 4's upper limit is 0.0873
  EXPECT_FALSE(s.checker->isValid(outside.get()));

  auto wrong = std::make_shared<ob::SpaceInformation>(std::make_shared<ob::RealVectorStateSpace>(6));
  EXPECT_THROW(ompl_cuda::RobotValidityChecker(wrong, s.checks), linalg_cuda::InvalidArgument);
  EXPECT_THROW(ompl_cuda::RobotMotionValidator(wrong, s.checks), linalg_cuda::InvalidArgument);
  EXPECT_THROW(RobotChecks(s.checks->robot(), ompl_cuda::Scene(), "left_arm"), linalg_cuda::InvalidArgument);
}

}  // namespace
