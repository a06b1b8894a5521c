// BatchedRRTConnect: solves the paper's 9-link problem, the horn, random box worlds and the Panda in
// MotionBenchMaker's box scene with paths that OMPL's DiscreteMotionValidator accepts, and every edge
// of its trees is a valid motion; with plain OMPL checkers it finds the very path it finds with the
// batch ones; the same seed gives the same path; bad input gets RRTConnect's status; it stops at the
// termination condition; parameters, PlannerData and Benchmark work.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/base/PlannerData.h>
#include <ompl/base/ScopedState.h>
#include <ompl/base/goals/GoalRegion.h>
#include <ompl/base/goals/GoalStates.h>
#include <ompl/geometric/SimpleSetup.h>
#include <ompl/geometric/planners/rrt/RRTConnect.h>
#include <ompl/util/Console.h>
#include <ompl/util/Exception.h>
#include <ompl/util/RandomNumbers.h>

#include "ompl_cuda/batched_rrt_connect.h"
#include "ompl_cuda/chain_problem.h"
#include "ompl_cuda/robot_checkers.h"
#include "chain_test_support.h"
#include "planner_test_support.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
namespace ob = ompl::base;
namespace og = ompl::geometric;
using ompl_cuda::Backend;
using ompl_cuda::BatchedRRTConnect;
using planner_test::expect_path_valid;
using planner_test::test_backend;

// A checker of OMPL's plain interface, so that planners cannot batch its calls.
class PlainChecker : public ob::StateValidityChecker {
 public:
  PlainChecker(const ob::SpaceInformationPtr& si, ob::StateValidityCheckerPtr inner)
      : ob::StateValidityChecker(si), inner_(std::move(inner)) {}
  bool isValid(const ob::State* state) const override { return inner_->isValid(state); }

 private:
  ob::StateValidityCheckerPtr inner_;
};

// Every motion invalid: no tree ever grows.
class NoMotion : public ob::MotionValidator {
 public:
  using ob::MotionValidator::MotionValidator;
  bool checkMotion(const ob::State*, const ob::State*) const override { return false; }
  bool checkMotion(const ob::State*, const ob::State*, std::pair<ob::State*, double>& last) const override {
    last.second = 0.0;
    return false;
  }
};

// A goal OMPL's RRTConnect cannot use: not sampleable.
class UnsampleableGoal : public ob::GoalRegion {
 public:
  using ob::GoalRegion::GoalRegion;
  double distanceGoal(const ob::State*) const override { return 1.0; }
};

std::vector<std::vector<double>> path_values(og::SimpleSetup& setup) {
  std::vector<std::vector<double>> values;
  const og::PathGeometric& path = setup.getSolutionPath();
  const auto& space = *setup.getStateSpace();
  for (std::size_t i = 0; i < path.getStateCount(); ++i) {
    values.emplace_back();
    space.copyToReals(values.back(), path.getState(i));
  }
  return values;
}

// The paper problem solved from a fresh seed, with the batch checkers or with plain ones that make the
// same decisions (the chain's checker behind OMPL's interface, DiscreteMotionValidator).
std::vector<std::vector<double>> solve_paper(bool batch_checks, unsigned int batch_size) {
  ompl::RNG::setSeed(42);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend(), batch_checks);
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  if (!batch_checks) setup->setStateValidityChecker(std::make_shared<PlainChecker>(si, si->getStateValidityChecker()));
  auto planner = std::make_shared<BatchedRRTConnect>(si);
  planner->setBatchSize(batch_size);
  setup->setPlanner(planner);
  EXPECT_EQ(setup->solve(10.0), ob::PlannerStatus::EXACT_SOLUTION);
  expect_path_valid(problem, *setup);
  return setup->haveExactSolutionPath() ? path_values(*setup) : std::vector<std::vector<double>>{};
}

TEST(BatchedRRTConnect, SolvesTheHorn) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::horn_problem(8);  // self-collision too
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  setup->setPlanner(std::make_shared<BatchedRRTConnect>(setup->getSpaceInformation()));
  EXPECT_EQ(setup->solve(10.0), ob::PlannerStatus::EXACT_SOLUTION);
  expect_path_valid(problem, *setup);
}

TEST(BatchedRRTConnect, SolvesThePaperProblem) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  auto planner = std::make_shared<BatchedRRTConnect>(setup->getSpaceInformation());
  setup->setPlanner(planner);
  ASSERT_EQ(setup->solve(10.0), ob::PlannerStatus::EXACT_SOLUTION);
  expect_path_valid(problem, *setup);
  // The path runs from the start to a goal state.
  const og::PathGeometric& path = setup->getSolutionPath();
  EXPECT_TRUE(setup->getProblemDefinition()->getStartState(0) &&
              setup->getSpaceInformation()->equalStates(path.getState(0), setup->getProblemDefinition()->getStartState(0)));
  EXPECT_TRUE(setup->getGoal()->isSatisfied(path.getState(path.getStateCount() - 1)));
  ob::PlannerData data(setup->getSpaceInformation());
  planner->getPlannerData(data);
  EXPECT_EQ(data.numStartVertices(), 1u);
  EXPECT_EQ(data.numGoalVertices(), 1u);
  EXPECT_EQ(data.numVertices(), planner->startTreeSize() + planner->goalTreeSize());
  EXPECT_EQ(data.numEdges(), data.numVertices() - 1);  // two trees and the edge that joins them
  EXPECT_EQ(std::string(planner->nearestNeighborsUsed()), linalg_cuda::cuda_device_available() ? "gpu" : "cpu");
  setup->clear();
  EXPECT_EQ(planner->startTreeSize() + planner->goalTreeSize(), 0u);
  EXPECT_EQ(setup->solve(10.0), ob::PlannerStatus::EXACT_SOLUTION);
  expect_path_valid(problem, *setup);
}

TEST(BatchedRRTConnect, SameSeedSamePathAndPlainCheckersGiveTheSamePath) {
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);  // setSeed's note that it reseeds a started generator
  const auto first = solve_paper(true, 64);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(solve_paper(true, 64), first);
  // The fallback checks one state or motion at a time, with the same decisions: the same path.
  EXPECT_EQ(solve_paper(false, 64), first);
  EXPECT_FALSE(solve_paper(true, 16).empty());
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
}

TEST(BatchedRRTConnect, SolvesInOtherSpacesWithOmplsNeighbourSearch) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto derived = std::make_shared<planner_test::DerivedRealVectorSpace>(problem.chain.links());
  derived->setBounds(-M_PI, M_PI);
  auto setup = planner_test::paper_setup_in(derived);
  auto planner = std::make_shared<BatchedRRTConnect>(setup->getSpaceInformation());
  setup->setPlanner(planner);
  EXPECT_EQ(setup->solve(10.0), ob::PlannerStatus::EXACT_SOLUTION);
  EXPECT_EQ(std::string(planner->nearestNeighborsUsed()), "ompl");
  expect_path_valid(problem, *setup);
}

// The outcome of planner.solve: its status, or "throws" where it throws ompl::Exception (as planners
// do for a missing problem definition or start state).
std::string outcome(ob::Planner& planner, const ob::ProblemDefinitionPtr& pdef, double seconds) {
  try {
    if (pdef) planner.setProblemDefinition(pdef);
    return planner.solve(seconds).asString();
  } catch (const ompl::Exception&) {
    return "throws";
  }
}

TEST(BatchedRRTConnect, BadInputGetsRRTConnectsStatus) {
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);  // the planners' error messages are expected
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  setup->setup();
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  ob::ScopedState<> start(si), goal(si), outside(si);
  for (int i = 0; i < problem.chain.links(); ++i) {
    start[i] = problem.start[i];
    goal[i] = problem.goal[i];
    outside[i] = 0.0;
  }
  outside[0] = 4.0;  // beyond the bounds [-pi, pi]: invalid
  auto with = [&](const ob::ScopedState<>* s, ob::GoalPtr g) {
    auto pdef = std::make_shared<ob::ProblemDefinition>(si);
    if (s) pdef->addStartState(*s);
    pdef->setGoal(std::move(g));
    return pdef;
  };
  auto goal_state = [&](const ob::ScopedState<>& s) {
    auto g = std::make_shared<ob::GoalStates>(si);
    g->addState(s);
    return g;
  };
  struct Case {
    const char* what;
    ob::ProblemDefinitionPtr pdef;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"no problem definition", nullptr, "throws"},
      {"no start state", with(nullptr, goal_state(goal)), "throws"},
      {"start state invalid", with(&outside, goal_state(goal)), ob::PlannerStatus(ob::PlannerStatus::INVALID_START).asString()},
      {"goal not sampleable", with(&start, std::make_shared<UnsampleableGoal>(si)),
       ob::PlannerStatus(ob::PlannerStatus::UNRECOGNIZED_GOAL_TYPE).asString()},
      {"no goal states", with(&start, std::make_shared<ob::GoalStates>(si)),
       ob::PlannerStatus(ob::PlannerStatus::INVALID_GOAL).asString()},
      {"goal state invalid", with(&start, goal_state(outside)), ob::PlannerStatus(ob::PlannerStatus::TIMEOUT).asString()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    og::RRTConnect rrt_connect(si);
    BatchedRRTConnect batched(si);
    const std::string expected = outcome(rrt_connect, c.pdef, 0.1);  // an invalid goal waits for the time
    EXPECT_EQ(expected, c.expected);
    EXPECT_EQ(outcome(batched, c.pdef, 0.1), expected);
    ob::PlannerData data(si);
    batched.getPlannerData(data);  // whatever the planner holds after bad input is well formed
  }
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
}

TEST(BatchedRRTConnect, StopsAtTheTerminationCondition) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  auto setup = ompl_cuda::make_simple_setup(ompl_cuda::paper_problem(), test_backend());
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  si->setMotionValidator(std::make_shared<NoMotion>(si));
  auto planner = std::make_shared<BatchedRRTConnect>(si);
  setup->setPlanner(planner);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(setup->solve(0.2), ob::PlannerStatus::TIMEOUT);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  EXPECT_EQ(planner->startTreeSize() + planner->goalTreeSize(), 2u);  // the start and the goal state
  // A condition that holds from its fourth evaluation on: a few batches (one evaluation each, and a
  // few while the first goal state is taken), not more.
  std::atomic<int> checks{0};
  setup->clear();
  EXPECT_EQ(setup->solve(ob::PlannerTerminationCondition([&] { return ++checks > 3; })), ob::PlannerStatus::TIMEOUT);
  EXPECT_LE(checks.load(), 10);
  // Stopped before the trees meet, it offers the start-tree path nearest the goal, as RRTConnect does.
  const auto horn = ompl_cuda::horn_problem(18);
  for (const bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "BatchedRRTConnect" : "RRTConnect");
    auto hard = ompl_cuda::make_simple_setup(horn, test_backend());
    if (batched) hard->setPlanner(std::make_shared<BatchedRRTConnect>(hard->getSpaceInformation()));
    else hard->setPlanner(std::make_shared<og::RRTConnect>(hard->getSpaceInformation()));
    ompl::msg::setLogLevel(ompl::msg::LOG_NONE);  // setSeed's note that it reseeds a started generator
    ompl::RNG::setSeed(3);
    ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
    // Iterations (of one sample, or of a batch) far too few for the horn's 18 links.
    const int iterations = batched ? 20 : 500;
    int evaluations = 0;
    EXPECT_EQ(hard->solve(ob::PlannerTerminationCondition([&] { return ++evaluations > iterations; })),
              ob::PlannerStatus::APPROXIMATE_SOLUTION);
    ASSERT_TRUE(hard->haveSolutionPath());
    EXPECT_TRUE(hard->getSolutionPath().check());
    EXPECT_TRUE(hard->getSpaceInformation()->equalStates(hard->getSolutionPath().getState(0),
                                                          hard->getProblemDefinition()->getStartState(0)));
  }
}

TEST(BatchedRRTConnect, ParametersAndBenchmark) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  auto setup = ompl_cuda::make_simple_setup(ompl_cuda::paper_problem(), test_backend());
  auto planner = std::make_shared<BatchedRRTConnect>(setup->getSpaceInformation());
  EXPECT_TRUE(planner->params().setParam("batch_size", "200"));
  EXPECT_TRUE(planner->params().setParam("range", "0.5"));
  EXPECT_EQ(planner->getBatchSize(), 200u);
  EXPECT_EQ(planner->getRange(), 0.5);
  planner->setBatchSize(0);
  EXPECT_EQ(planner->getBatchSize(), 1u);
  planner_test::expect_solves_in_benchmark<BatchedRRTConnect>(2.0);
}

// Every node of both trees is valid and every tree edge (PlannerData's edges run from start to goal)
// is a valid motion by DiscreteMotionValidator and a fresh CPU checker; the plain checkers give the
// same path: on random box worlds, batches of one and of 64, the default range and a short one (long
// connections), and in OMPL's KinematicChain demo space (its own distance and interpolation).
TEST(BatchedRRTConnect, EveryTreeEdgeIsAValidMotion) {
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);  // setSeed's note that it reseeds a started generator
  for (unsigned seed = 1; seed <= 6; ++seed) {
    for (const unsigned batch : {1u, 64u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", batch " + std::to_string(batch));
      const auto problem = ompl_cuda::boxes_problem(9, 30 + 5 * seed, seed);
      std::vector<std::vector<double>> paths[2];
      for (const bool plain : {false, true}) {
        ompl::RNG::setSeed(seed * 7 + batch);
        auto setup = seed == 5 ? planner_test::paper_setup_in(std::make_shared<chain_test::KinematicChainSpace>(9, 1.0))
                               : ompl_cuda::make_simple_setup(problem, test_backend(), !plain);
        const auto& checked = seed == 5 ? ompl_cuda::paper_problem() : problem;
        const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
        if (plain) setup->setStateValidityChecker(std::make_shared<PlainChecker>(si, si->getStateValidityChecker()));
        auto planner = std::make_shared<BatchedRRTConnect>(si);
        planner->setBatchSize(batch);
        if (seed % 2 == 0) planner->setRange(0.3);
        setup->setPlanner(planner);
        ASSERT_EQ(setup->solve(10.0), ob::PlannerStatus::EXACT_SOLUTION);
        expect_path_valid(checked, *setup);
        paths[plain] = path_values(*setup);
        auto reference = std::make_shared<ob::SpaceInformation>(si->getStateSpace());
        reference->setStateValidityChecker(
            std::make_shared<ompl_cuda::ChainValidityChecker>(reference, checked.chain, checked.workspace, Backend::Cpu));
        reference->setMotionValidator(std::make_shared<ob::DiscreteMotionValidator>(reference));
        reference->setup();
        ob::PlannerData data(si);
        planner->getPlannerData(data);
        std::vector<unsigned int> edges;
        for (unsigned int v = 0; v < data.numVertices(); ++v) {
          EXPECT_TRUE(reference->isValid(data.getVertex(v).getState())) << v;
          data.getEdges(v, edges);
          for (const unsigned int w : edges)
            EXPECT_TRUE(reference->checkMotion(data.getVertex(v).getState(), data.getVertex(w).getState())) << v << " " << w;
        }
      }
      EXPECT_EQ(paths[0], paths[1]);
    }
  }
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
}

// The Panda (spheres at 3 cm) in MotionBenchMaker's box scene, with the robot checks (on the CPU here).
fs::path panda_dir() { return test_support::data_dir() / "robots" / "robowflex_resources" / "panda"; }
fs::path box_scene() { return test_support::data_dir() / "scenes" / "box" / "scene_box.yaml"; }

TEST(BatchedRRTConnect, PlansThePandaInTheBoxScene) {
  if (!fs::exists(panda_dir()) || !fs::exists(box_scene()))
    GTEST_SKIP() << panda_dir() << " or " << box_scene() << " not found (set CUDA_SOLVERS_DATA)";
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);
  ompl::RNG::setSeed(5);
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto model = ompl_cuda::RobotModel::load((panda_dir() / "urdf" / "panda.urdf").string(),
                                                 (panda_dir() / "config" / "panda.srdf").string(),
                                                 {(test_support::data_dir() / "robots").string()});
  const double offset[3] = {0.15, 0, 1.02}, identity[4] = {0, 0, 0, 1};  // the robot in the scene frame
  auto checks = std::make_shared<ompl_cuda::RobotChecks>(
      ompl_cuda::RobotCollisionModel(model, ompl_cuda::cover_with_spheres(model, {0.03})),
      ompl_cuda::Scene::load(box_scene().string()), "panda_arm", ompl_cuda::transform_from(offset, identity),
      std::vector<double>{}, true, test_backend());
  og::SimpleSetup ss(checks->make_space());
  const ob::SpaceInformationPtr& si = ss.getSpaceInformation();
  ss.setStateValidityChecker(std::make_shared<ompl_cuda::RobotValidityChecker>(si, checks));
  si->setMotionValidator(std::make_shared<ompl_cuda::RobotMotionValidator>(si, checks));
  si->setup();  // the motions' resolution, used below before SimpleSetup sets it up
  ob::ScopedState<> start(si), goal(si);
  const std::vector<double> ready = model.named_state("panda_arm", "ready", model.default_state());
  for (int k = 0; k < 7; ++k) start[k] = ready[checks->group().variables[k]];
  ASSERT_TRUE(si->isValid(start.get()));
  ob::StateSamplerPtr sampler = si->allocStateSampler();
  // Anywhere in the arm's space, but not in a straight line from the start.
  int tries = 0;
  do sampler->sampleUniform(goal.get());
  while ((!si->isValid(goal.get()) || si->checkMotion(start.get(), goal.get())) && ++tries < 100000);
  ASSERT_LT(tries, 100000) << "no valid goal that a straight line from the start misses";
  ss.setStartAndGoalStates(start, goal);
  auto planner = std::make_shared<BatchedRRTConnect>(si);
  ss.setPlanner(planner);
  ASSERT_EQ(ss.solve(20.0), ob::PlannerStatus::EXACT_SOLUTION);
  const og::PathGeometric& path = ss.getSolutionPath();
  ob::DiscreteMotionValidator discrete(si);
  for (std::size_t i = 0; i < path.getStateCount(); ++i) EXPECT_TRUE(si->isValid(path.getState(i))) << i;
  for (std::size_t i = 0; i + 1 < path.getStateCount(); ++i)
    EXPECT_TRUE(discrete.checkMotion(path.getState(i), path.getState(i + 1))) << i;
  EXPECT_TRUE(si->equalStates(path.getState(0), start.get()));
  EXPECT_TRUE(si->equalStates(path.getState(path.getStateCount() - 1), goal.get()));
}

}  // namespace
