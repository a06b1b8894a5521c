// plan_chain: plan a planar chain's motion among obstacles with OMPL, checking states and motions on
// the GPU (or the CPU reference), and draw the result.
//
//   plan_chain --env paper --planner batched-rrtstar --time 5 --svg paper.svg
//   plan_chain --env horn --links 8 --planner rrtconnect --checker cpu
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/geometric/planners/prm/PRM.h>
#include <ompl/geometric/planners/rrt/RRT.h>
#include <ompl/geometric/planners/rrt/RRTConnect.h>
#include <ompl/geometric/planners/rrt/RRTstar.h>
#include <ompl/util/Console.h>

#include "command_line.h"
#include "linalg_cuda/errors.h"
#include "ompl_cuda/batched_prm.h"
#include "ompl_cuda/batched_rrt_star.h"
#include "ompl_cuda/chain_motion_validator.h"
#include "ompl_cuda/chain_problem.h"
#include "ompl_cuda/chain_validity_checker.h"

namespace {

const char* kUsage = R"(usage: plan_chain [options]

Plans a motion for a planar chain among obstacles with OMPL; states and motions are checked by
ompl_cuda's ChainValidityChecker / ChainMotionValidator (GPU batches where the planner batches).

  --env E          paper (9 links, 4 rectangles) | horn (OMPL's KinematicChain demo) | boxes  (default paper)
  --links N        links for horn and boxes                                  (default 8 / 9)
  --boxes N        boxes for --env boxes                                     (default 200)
  --seed S         seed of the boxes                                         (default 1)
  --planner P      rrt | rrtstar | rrtconnect | prm | batched-rrtstar | batched-prm
                                                                            (default batched-rrtstar)
  --checker C      gpu | cpu | auto                                          (default auto)
  --time T         planning time, seconds                                    (default 5)
  --svg FILE       draw the environment, start, goal and path
  --help           this text
Exit status: 0 solved, 1 no exact solution, 2 bad usage.
)";

}  // namespace

int main(int argc, char** argv) {
  const examples::CommandLine cli("plan_chain", kUsage,
                                  {"--env", "--links", "--boxes", "--seed", "--planner", "--checker", "--time", "--svg"});
  std::string env = "paper", planner_name = "batched-rrtstar", svg;
  int links = 0, boxes = 200;
  unsigned seed = 1;
  double time = 5.0;
  linalg_cuda::Backend backend = linalg_cuda::Backend::Auto;
  try {
    for (const auto& [flag, value] : cli.parse(argc, argv)) {
      if (flag == "--env") env = value;
      else if (flag == "--links") links = cli.integer(flag, value, 2, ompl_cuda::PlanarChain::kMaxLinks);
      else if (flag == "--boxes") boxes = cli.integer(flag, value, 0, 1000000);
      else if (flag == "--seed") seed = static_cast<unsigned>(cli.integer(flag, value, 0, 1 << 30));
      else if (flag == "--planner") planner_name = value;
      else if (flag == "--checker") backend = linalg_cuda::parse_backend(value);
      else if (flag == "--time") time = cli.number(flag, value, 1e-3, 1e6);
      else svg = value;
    }
  } catch (const linalg_cuda::InvalidArgument& e) {
    cli.fail(e.what());
  }

  try {
    ompl_cuda::ChainProblem problem;
    if (env == "paper") problem = ompl_cuda::paper_problem();
    else if (env == "horn") problem = ompl_cuda::horn_problem(links > 0 ? links : 8);
    else if (env == "boxes") problem = ompl_cuda::boxes_problem(links > 0 ? links : 9, boxes, seed);
    else cli.fail("unknown environment '" + env + "'");

    ompl::geometric::SimpleSetupPtr setup = ompl_cuda::make_simple_setup(problem, backend);
    const ompl::base::SpaceInformationPtr& si = setup->getSpaceInformation();
    ompl::base::PlannerPtr planner;
    if (planner_name == "rrt") planner = std::make_shared<ompl::geometric::RRT>(si);
    else if (planner_name == "rrtstar") planner = std::make_shared<ompl::geometric::RRTstar>(si);
    else if (planner_name == "rrtconnect") planner = std::make_shared<ompl::geometric::RRTConnect>(si);
    else if (planner_name == "prm") planner = std::make_shared<ompl::geometric::PRM>(si);
    else if (planner_name == "batched-rrtstar") planner = std::make_shared<ompl_cuda::BatchedRRTstar>(si);
    else if (planner_name == "batched-prm") planner = std::make_shared<ompl_cuda::BatchedPRM>(si);
    else cli.fail("unknown planner '" + planner_name + "'");
    setup->setPlanner(planner);
    ompl::msg::setLogLevel(ompl::msg::LOG_WARN);

    const auto* checker = dynamic_cast<const ompl_cuda::ChainValidityChecker*>(si->getStateValidityChecker().get());
    std::printf("%-12s %s, %d links, %zu rectangles, %zu segments\n", "problem", problem.name.c_str(),
                problem.chain.links(), problem.workspace.rectangles.size(), problem.workspace.segments.size());
    std::printf("%-12s %s, checker on %s\n", "planner", planner->getName().c_str(), linalg_cuda::to_string(checker->backend()));
    const ompl::base::PlannerStatus status = setup->solve(time);
    const bool exact = status == ompl::base::PlannerStatus::EXACT_SOLUTION;
    std::printf("%-12s %s in %.2f s\n", "result", status.asString().c_str(), setup->getLastPlanComputationTime());
    const auto* motions = si->getMotionValidator().get();
    std::printf("%-12s %u checked (%u valid)\n", "motions", motions->getCheckedMotionCount(), motions->getValidMotionCount());
    if (!setup->haveSolutionPath()) return 1;
    ompl::geometric::PathGeometric& path = setup->getSolutionPath();
    std::printf("%-12s %zu states, length %.4f, valid %s\n", "path", path.getStateCount(), path.length(),
                path.check() ? "yes" : "NO");
    if (!svg.empty()) {
      path.interpolate();
      std::vector<std::vector<double>> states;
      for (std::size_t i = 0; i < path.getStateCount(); ++i) {
        std::vector<double> q;
        si->getStateSpace()->copyToReals(q, path.getState(i));
        states.push_back(q);
      }
      ompl_cuda::write_svg(problem, states, svg, std::max<int>(1, static_cast<int>(states.size() / 40)));
      std::printf("%-12s %s\n", "wrote", svg.c_str());
    }
    return exact ? 0 : 1;
  } catch (const linalg_cuda::Error& e) {
    std::cerr << "plan_chain: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {  // anything the library's contract misses: one line, never an abort
    std::cerr << "plan_chain: " << e.what() << "\n";
    return 2;
  }
}
