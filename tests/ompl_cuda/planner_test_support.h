#pragma once
// What the planner tests share: the backend to test on, the paper problem in a given space, and the
// check of a returned path against a fresh CPU checker and OMPL's DiscreteMotionValidator.
#include <memory>

#include <gtest/gtest.h>
#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/base/ScopedState.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/geometric/SimpleSetup.h>
#include <ompl/tools/benchmark/Benchmark.h>

#include "linalg_cuda/backend.h"
#include "ompl_cuda/chain_motion_validator.h"
#include "ompl_cuda/chain_problem.h"
#include "ompl_cuda/chain_validity_checker.h"

namespace planner_test {

namespace ob = ompl::base;
using ompl_cuda::Backend;

inline Backend test_backend() { return linalg_cuda::cuda_device_available() ? Backend::Cuda : Backend::Cpu; }

// Every state valid by a fresh CPU checker, every segment valid by OMPL's DiscreteMotionValidator.
inline void expect_path_valid(const ompl_cuda::ChainProblem& problem, ompl::geometric::SimpleSetup& setup) {
  ASSERT_TRUE(setup.haveExactSolutionPath());
  const ob::SpaceInformationPtr& si = setup.getSpaceInformation();
  auto reference_si = std::make_shared<ob::SpaceInformation>(si->getStateSpace());
  reference_si->setStateValidityChecker(
      std::make_shared<ompl_cuda::ChainValidityChecker>(reference_si, problem.chain, problem.workspace, Backend::Cpu));
  reference_si->setMotionValidator(std::make_shared<ob::DiscreteMotionValidator>(reference_si));
  reference_si->setup();
  const auto& path = setup.getSolutionPath();
  ASSERT_GE(path.getStateCount(), 2u);
  for (std::size_t i = 0; i < path.getStateCount(); ++i) EXPECT_TRUE(reference_si->isValid(path.getState(i))) << i;
  for (std::size_t i = 0; i + 1 < path.getStateCount(); ++i)
    EXPECT_TRUE(reference_si->checkMotion(path.getState(i), path.getState(i + 1))) << i;
}

// The paper problem in `space` (RealVector-like or a compound of SO2) with our checkers.
inline ompl::geometric::SimpleSetupPtr paper_setup_in(const ob::StateSpacePtr& space) {
  const auto problem = ompl_cuda::paper_problem();
  auto setup = std::make_shared<ompl::geometric::SimpleSetup>(space);
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  setup->setStateValidityChecker(
      std::make_shared<ompl_cuda::ChainValidityChecker>(si, problem.chain, problem.workspace, test_backend()));
  si->setMotionValidator(
      std::make_shared<ompl_cuda::ChainMotionValidator>(si, problem.chain, problem.workspace, test_backend()));
  ob::ScopedState<> start(space), goal(space);
  start = problem.start;
  goal = problem.goal;
  setup->setStartAndGoalStates(start, goal, 1e-3);
  return setup;
}

// Two runs of `Planner` on the paper problem through ompl::tools::Benchmark, `seconds` each: both are
// recorded and the first solves.
template <typename Planner>
void expect_solves_in_benchmark(double seconds) {
  auto setup = ompl_cuda::make_simple_setup(ompl_cuda::paper_problem(), test_backend());
  ompl::tools::Benchmark benchmark(*setup, "paper");
  benchmark.addPlanner(std::make_shared<Planner>(setup->getSpaceInformation()));
  ompl::tools::Benchmark::Request request(seconds, 1000.0, 2);
  request.displayProgress = false;
  request.saveConsoleOutput = false;  // else OMPL writes ompl_<host>_<date>.console into the working folder
  benchmark.benchmark(request);
  const auto& results = benchmark.getRecordedExperimentData();
  ASSERT_EQ(results.planners.size(), 1u);
  ASSERT_EQ(results.planners[0].runs.size(), 2u);
  EXPECT_EQ(results.planners[0].runs[0].at("solved BOOLEAN"), "1");
}

// A RealVectorStateSpace subclass, as user spaces often are: its distance may differ from the
// Euclidean one, so the planners must leave the neighbour search to OMPL's structure.
class DerivedRealVectorSpace : public ob::RealVectorStateSpace {
 public:
  using ob::RealVectorStateSpace::RealVectorStateSpace;
};

}  // namespace planner_test
