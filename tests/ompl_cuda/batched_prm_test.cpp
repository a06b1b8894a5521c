// BatchedPRM: solves the paper's 9-link problem and the horn, its paths re-check valid with the CPU
// reference and OMPL's DiscreteMotionValidator, its roadmap is what it says (edges valid both ways,
// components right), and it behaves as an OMPL planner should (termination condition, cost threshold,
// PlannerData, Benchmark, spaces whose distance it does not know).
#include <chrono>
#include <map>
#include <memory>

#include <gtest/gtest.h>
#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/base/PlannerData.h>
#include <ompl/base/ProblemDefinition.h>
#include <ompl/base/ScopedState.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/base/spaces/SO2StateSpace.h>
#include <ompl/util/Console.h>

#include "linalg_cuda/internal/seconds_since.h"
#include "ompl_cuda/batched_prm.h"
#include "ompl_cuda/chain_problem.h"
#include "planner_test_support.h"

namespace {

namespace ob = ompl::base;
using planner_test::DerivedRealVectorSpace;
using planner_test::expect_path_valid;
using planner_test::paper_setup_in;
using planner_test::test_backend;

using linalg_cuda::detail::seconds_since;

TEST(BatchedPRM, SolvesThePaperProblem) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  auto planner = std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation());
  setup->setPlanner(planner);
  EXPECT_EQ(setup->solve(5.0), ob::PlannerStatus::EXACT_SOLUTION);
  expect_path_valid(problem, *setup);
  EXPECT_NEAR(planner->bestCost(), setup->getSolutionPath().length(), 1e-9 * planner->bestCost());
  EXPECT_GT(planner->milestoneCount(), 100u);
  // A second call grows the same roadmap: a path again, no longer than the first.
  const double first = planner->bestCost();
  const std::size_t milestones = planner->milestoneCount();
  EXPECT_EQ(setup->solve(1.0), ob::PlannerStatus::EXACT_SOLUTION);
  EXPECT_GT(planner->milestoneCount(), milestones);
  EXPECT_LE(planner->bestCost(), first);
  expect_path_valid(problem, *setup);
}

TEST(BatchedPRM, SolvesTheHorn) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::horn_problem(8);
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  setup->setPlanner(std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation()));
  EXPECT_EQ(setup->solve(10.0), ob::PlannerStatus::EXACT_SOLUTION);
  expect_path_valid(problem, *setup);
}

// Every roadmap edge is a valid motion both ways and appears in both directions; the vertices tagged
// start and goal are the problem's.
TEST(BatchedPRM, RoadmapEdgesAreValidMotions) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  auto planner = std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation());
  planner->setBatchSize(200);
  setup->setPlanner(planner);
  setup->solve(0.5);
  ob::PlannerData data(setup->getSpaceInformation());
  planner->getPlannerData(data);
  EXPECT_EQ(data.numVertices(), planner->milestoneCount());
  EXPECT_EQ(data.numEdges(), 2 * planner->edgeCount());
  EXPECT_EQ(data.numStartVertices(), 1u);
  EXPECT_EQ(data.numGoalVertices(), 1u);
  ASSERT_GT(planner->edgeCount(), 50u);
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  auto reference_si = std::make_shared<ob::SpaceInformation>(si->getStateSpace());
  reference_si->setStateValidityChecker(std::make_shared<ompl_cuda::ChainValidityChecker>(
      reference_si, problem.chain, problem.workspace, ompl_cuda::Backend::Cpu));
  reference_si->setMotionValidator(std::make_shared<ob::DiscreteMotionValidator>(reference_si));
  reference_si->setup();
  std::vector<unsigned> out;
  std::size_t checked = 0;
  for (unsigned v = 0; v < data.numVertices() && checked < 400; ++v) {
    EXPECT_TRUE(reference_si->isValid(data.getVertex(v).getState())) << v;
    data.getEdges(v, out);
    for (const unsigned w : out) {
      EXPECT_TRUE(data.edgeExists(w, v)) << v << " - " << w;
      EXPECT_TRUE(reference_si->checkMotion(data.getVertex(v).getState(), data.getVertex(w).getState())) << v << " - " << w;
      ++checked;
    }
  }
}

TEST(BatchedPRM, HonoursTerminationConditionAndCostThreshold) {
  ompl::msg::setLogLevel(ompl::msg::LOG_ERROR);
  const auto problem = ompl_cuda::paper_problem();
  {
    // Without an objective it stops at the first path, as OMPL's PRM, and leaves the problem
    // definition without one.
    auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
    setup->setPlanner(std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation()));
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(setup->solve(30.0), ob::PlannerStatus::EXACT_SOLUTION);
    EXPECT_LT(seconds_since(t0), 20.0);
    EXPECT_FALSE(setup->getProblemDefinition()->hasOptimizationObjective());
    expect_path_valid(problem, *setup);
  }
  {
    // With a path-length objective whose threshold no path meets, it uses the whole time.
    auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
    setup->setOptimizationObjective(std::make_shared<ob::PathLengthOptimizationObjective>(setup->getSpaceInformation()));
    setup->setPlanner(std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation()));
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(setup->solve(0.4), ob::PlannerStatus::EXACT_SOLUTION);
    const double seconds = seconds_since(t0);
    EXPECT_GT(seconds, 0.39);
    EXPECT_LT(seconds, 2.0);
  }
  {
    // A goal inside an obstacle: no valid goal state, said at once, as OMPL's PRM says it.
    auto blocked = problem;
    blocked.workspace.rectangles.push_back({-9.2, 1.0, -8.6, 1.5});  // around the goal's tip (-8.91, 1.26)
    auto setup = ompl_cuda::make_simple_setup(blocked, test_backend());
    setup->setPlanner(std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation()));
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(setup->solve(0.3), ob::PlannerStatus::INVALID_GOAL);
    EXPECT_LT(seconds_since(t0), 2.0);
    EXPECT_FALSE(setup->haveExactSolutionPath());
  }
}

// A second query on the same roadmap: the answer goes from the new start to the new goal.
TEST(BatchedPRM, AnswersANewQueryOnTheSameRoadmap) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  auto planner = std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation());
  setup->setPlanner(planner);
  ASSERT_EQ(setup->solve(5.0), ob::PlannerStatus::EXACT_SOLUTION);
  const std::size_t roadmap = planner->milestoneCount();

  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  auto reverse = std::make_shared<ob::ProblemDefinition>(si);
  ob::ScopedState<> start(si->getStateSpace()), goal(si->getStateSpace());
  start = problem.goal;
  goal = problem.start;
  reverse->setStartAndGoalStates(start, goal, 1e-3);
  planner->setProblemDefinition(reverse);
  ASSERT_EQ(planner->solve(ob::timedPlannerTerminationCondition(5.0)), ob::PlannerStatus::EXACT_SOLUTION);
  EXPECT_GE(planner->milestoneCount(), roadmap);  // the roadmap was kept
  const auto path = reverse->getSolutionPath();
  ASSERT_TRUE(path);
  const auto& geometric = static_cast<const ompl::geometric::PathGeometric&>(*path);
  EXPECT_LT(si->distance(geometric.getState(0), start.get()), 1e-9);
  EXPECT_TRUE(reverse->getGoal()->isSatisfied(geometric.getState(geometric.getStateCount() - 1)));
  ob::PlannerData data(si);
  planner->getPlannerData(data);
  EXPECT_EQ(data.numStartVertices(), 1u);
  EXPECT_EQ(data.numGoalVertices(), 1u);
}

TEST(BatchedPRM, RunsInOmplBenchmark) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  planner_test::expect_solves_in_benchmark<ompl_cuda::BatchedPRM>(1.0);
}

TEST(BatchedPRM, SearchesNeighboursItselfWhereItKnowsTheDistance) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const std::string batched = linalg_cuda::cuda_device_available() ? "gpu" : "cpu";
  const auto problem = ompl_cuda::paper_problem();
  auto so2 = std::make_shared<ob::CompoundStateSpace>();
  for (int i = 0; i < problem.chain.links(); ++i) so2->addSubspace(std::make_shared<ob::SO2StateSpace>(), 1.0);
  auto derived = std::make_shared<DerivedRealVectorSpace>(problem.chain.links());
  derived->setBounds(-M_PI, M_PI);
  const std::map<std::string, ob::StateSpacePtr> spaces{{batched, so2}, {"ompl", derived}};
  for (const auto& [expected, space] : spaces) {
    auto setup = paper_setup_in(space);
    auto planner = std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation());
    setup->setPlanner(planner);
    EXPECT_EQ(setup->solve(4.0), ob::PlannerStatus::EXACT_SOLUTION) << expected;
    EXPECT_EQ(std::string(planner->nearestNeighborsUsed()), expected);
    expect_path_valid(problem, *setup);
  }
}

}  // namespace
