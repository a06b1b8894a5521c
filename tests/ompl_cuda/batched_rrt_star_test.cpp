// BatchedRRTstar: solves the paper's 9-link problem and the horn, its paths re-check valid with the
// CPU reference and OMPL's DiscreteMotionValidator, and it behaves as an OMPL planner should
// (termination condition, PlannerData, Benchmark, sample limit).
#include <chrono>
#include <memory>

#include <gtest/gtest.h>
#include <ompl/base/PlannerData.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/util/Console.h>

#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/base/spaces/SO2StateSpace.h>

#include "linalg_cuda/backend.h"
#include "ompl_cuda/chain_motion_validator.h"
#include "ompl_cuda/batched_rrt_star.h"
#include "ompl_cuda/chain_problem.h"
#include "ompl_cuda/chain_validity_checker.h"
#include "planner_test_support.h"
#include "test_support.h"

namespace {

namespace ob = ompl::base;
using ompl_cuda::Backend;
using planner_test::DerivedRealVectorSpace;
using planner_test::expect_path_valid;
using planner_test::paper_setup_in;
using planner_test::test_backend;

TEST(BatchedRRTstar, SolvesThePaperProblem) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  auto planner = std::make_shared<ompl_cuda::BatchedRRTstar>(setup->getSpaceInformation());
  setup->setPlanner(planner);
  EXPECT_EQ(setup->solve(3.0), ob::PlannerStatus::EXACT_SOLUTION);
  expect_path_valid(problem, *setup);
  EXPECT_LT(planner->bestCost(), 1e9);
}

TEST(BatchedRRTstar, SolvesTheHorn) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::horn_problem(8);
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  setup->setPlanner(std::make_shared<ompl_cuda::BatchedRRTstar>(setup->getSpaceInformation()));
  EXPECT_EQ(setup->solve(8.0), ob::PlannerStatus::EXACT_SOLUTION);
  expect_path_valid(problem, *setup);
}

TEST(BatchedRRTstar, HonoursTerminationConditionAndSampleLimit) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  auto setup = ompl_cuda::make_simple_setup(ompl_cuda::paper_problem(), test_backend());
  auto planner = std::make_shared<ompl_cuda::BatchedRRTstar>(setup->getSpaceInformation());
  setup->setPlanner(planner);
  const auto t0 = std::chrono::steady_clock::now();
  setup->solve(0.3);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.5);
  setup->clear();
  planner->setMaxSamples(640);
  planner->setBatchSize(64);
  setup->solve(60.0);
  EXPECT_EQ(planner->samplesDrawn(), 640u);
  ob::PlannerData data(setup->getSpaceInformation());
  planner->getPlannerData(data);
  EXPECT_GT(data.numVertices(), 10u);
  EXPECT_GT(data.numEdges(), 9u);
  EXPECT_EQ(data.numStartVertices(), 1u);
}

TEST(BatchedRRTstar, StopsAtAPathThatMeetsTheCostThreshold) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  auto objective = std::make_shared<ob::PathLengthOptimizationObjective>(setup->getSpaceInformation());
  objective->setCostThreshold(ob::Cost(1e9));
  setup->setOptimizationObjective(objective);
  setup->setPlanner(std::make_shared<ompl_cuda::BatchedRRTstar>(setup->getSpaceInformation()));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(setup->solve(30.0), ob::PlannerStatus::EXACT_SOLUTION);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
  expect_path_valid(problem, *setup);
}

TEST(BatchedRRTstar, RunsInOmplBenchmark) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  planner_test::expect_solves_in_benchmark<ompl_cuda::BatchedRRTstar>(0.5);
}

TEST(BatchedRRTstar, SearchesNeighboursItselfWhereItKnowsTheDistance) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const std::string batched = linalg_cuda::cuda_device_available() ? "gpu" : "cpu";
  const auto problem = ompl_cuda::paper_problem();
  {
    auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
    auto planner = std::make_shared<ompl_cuda::BatchedRRTstar>(setup->getSpaceInformation());
    setup->setPlanner(planner);
    setup->setup();
    EXPECT_EQ(planner->nearestNeighborsUsed(), batched);
  }
  {
    auto so2 = std::make_shared<ob::CompoundStateSpace>();
    for (int i = 0; i < problem.chain.links(); ++i) so2->addSubspace(std::make_shared<ob::SO2StateSpace>(), 1.0);
    auto setup = paper_setup_in(so2);
    auto planner = std::make_shared<ompl_cuda::BatchedRRTstar>(setup->getSpaceInformation());
    setup->setPlanner(planner);
    EXPECT_EQ(setup->solve(5.0), ob::PlannerStatus::EXACT_SOLUTION);
    EXPECT_EQ(planner->nearestNeighborsUsed(), batched);
    expect_path_valid(problem, *setup);
  }
  {
    auto derived = std::make_shared<DerivedRealVectorSpace>(problem.chain.links());
    derived->setBounds(-M_PI, M_PI);
    auto setup = paper_setup_in(derived);
    auto planner = std::make_shared<ompl_cuda::BatchedRRTstar>(setup->getSpaceInformation());
    setup->setPlanner(planner);
    EXPECT_EQ(setup->solve(5.0), ob::PlannerStatus::EXACT_SOLUTION);
    EXPECT_EQ(std::string(planner->nearestNeighborsUsed()), "ompl");
    expect_path_valid(problem, *setup);
  }
}

}  // namespace
