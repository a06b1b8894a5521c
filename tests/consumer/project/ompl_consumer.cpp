// An OMPL user's program: the KinematicChain-style planning code they already have, with the two lines
// that swap in ompl_cuda's checkers, then the batched planners. Exit 0 when every planner returns a
// path that OMPL's own DiscreteMotionValidator accepts.
#include <cmath>
#include <iostream>
#include <memory>

#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/geometric/SimpleSetup.h>
#include <ompl/geometric/planners/rrt/RRTConnect.h>
#include <ompl/util/Console.h>

#include <ompl_cuda/batched_prm.h>
#include <ompl_cuda/batched_rrt_star.h>
#include <ompl_cuda/chain_motion_validator.h>
#include <ompl_cuda/chain_validity_checker.h>

namespace ob = ompl::base;
namespace og = ompl::geometric;

int main() {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const int links = 6;
  auto space = std::make_shared<ob::RealVectorStateSpace>(links);
  space->setBounds(-M_PI, M_PI);
  og::SimpleSetup ss(space);
  const ob::SpaceInformationPtr& si = ss.getSpaceInformation();

  ompl_cuda::PlanarChain chain = ompl_cuda::PlanarChain::uniform(links, 1.0);
  ompl_cuda::Workspace2D world;
  world.rectangles = {{1.5, 1.0, 2.5, 3.0}, {-3.0, 2.0, -2.0, 3.0}, {-4.0, -3.0, -3.0, -1.5}};  // the direct sweep is blocked
  ss.setStateValidityChecker(std::make_shared<ompl_cuda::ChainValidityChecker>(si, chain, world));
  si->setMotionValidator(std::make_shared<ompl_cuda::ChainMotionValidator>(si, chain, world));

  ob::ScopedState<> start(space), goal(space);
  for (int i = 0; i < links; ++i) start[i] = goal[i] = 0.0;
  start[0] = M_PI / 2;
  goal[0] = M_PI - 0.2;
  ss.setStartAndGoalStates(start, goal, 1e-3);

  auto reference = std::make_shared<ob::SpaceInformation>(space);
  reference->setStateValidityChecker(
      std::make_shared<ompl_cuda::ChainValidityChecker>(reference, chain, world, ompl_cuda::Backend::Cpu));
  reference->setMotionValidator(std::make_shared<ob::DiscreteMotionValidator>(reference));
  reference->setup();

  int failures = 0;
  for (const ob::PlannerPtr& planner :
       {ob::PlannerPtr(std::make_shared<og::RRTConnect>(si)), ob::PlannerPtr(std::make_shared<ompl_cuda::BatchedRRTstar>(si)),
        ob::PlannerPtr(std::make_shared<ompl_cuda::BatchedPRM>(si))}) {
    ss.clear();
    ss.setPlanner(planner);
    const ob::PlannerStatus status = ss.solve(2.0);
    bool valid = ss.haveExactSolutionPath();
    if (valid) {
      const og::PathGeometric& path = ss.getSolutionPath();
      for (std::size_t i = 0; i + 1 < path.getStateCount(); ++i)
        valid = valid && reference->isValid(path.getState(i)) && reference->checkMotion(path.getState(i), path.getState(i + 1));
    }
    std::cout << planner->getName() << ": " << status.asString() << ", path "
              << (valid ? "valid" : "MISSING OR INVALID") << "\n";
    failures += valid ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
