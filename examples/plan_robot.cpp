// plan_robot: plan a URDF robot's motion among a MoveIt scene with OMPL, checked by ompl_cuda's robot
// checks, and write pictures of it.
//
//   plan_robot --urdf panda.urdf --srdf panda.srdf --package-path ../shared/data/robots \
//              --scene ../shared/data/scenes/box/scene_box.yaml \
//              --problem ../shared/data/scenes/box_panda.problem.yaml --html box.html --png box.png
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include <ompl/base/ScopedState.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/geometric/SimpleSetup.h>
#include <ompl/geometric/planners/prm/PRM.h>
#include <ompl/geometric/planners/rrt/RRTConnect.h>
#include <ompl/geometric/planners/rrt/RRTstar.h>
#include <ompl/util/Console.h>
#include <ompl/util/RandomNumbers.h>

#include "command_line.h"
#include "linalg_cuda/errors.h"
#include "ompl_cuda/batched_prm.h"
#include "ompl_cuda/batched_rrt_connect.h"
#include "ompl_cuda/batched_rrt_star.h"
#include "ompl_cuda/point_cloud.h"
#include "ompl_cuda/robot_checkers.h"
#include "ompl_cuda/robot_picture.h"
#include "ompl_cuda/robot_view.h"

namespace {

namespace ob = ompl::base;
namespace og = ompl::geometric;

const char* kUsage = R"(usage: plan_robot --urdf FILE --srdf FILE [options]

Plans a motion of one planning group of a URDF robot among the objects of a MoveIt scene with OMPL;
states and motions are checked by ompl_cuda's RobotValidityChecker / RobotMotionValidator (the robot's
links covered by spheres that hold their collision geometry).

  --urdf FILE          the robot
  --srdf FILE          its planning groups, named states and disabled collision pairs
  --package-path DIRS  folders that hold ROS packages, ':'-separated (ROS_PACKAGE_PATH after them)
  --group NAME         the planning group                     (default: the problem's, else the first)
  --scene FILE         a MoveIt PlanningScene YAML (MotionBenchMaker's scene_*.yaml)
                       (default: the problem's scene, else an empty scene)
  --problem FILE       a MotionBenchMaker problem YAML: its planning_group, base_offset and scene
  --cloud FILE         a point cloud (PLY or PCD, scene frame) joined to the scene; points with NaN
                       coordinates (an organised cloud's empty pixels) are dropped
  --cloud-resolution R its voxels, metres                                              (default 0.01)
  --spheres FILE       the robot's spheres (robot_spheres writes them)   (default: made at --tolerance)
  --tolerance T        metres the made spheres may reach beyond the geometry            (default 0.015)
  --start S            a named state of the group (SRDF group_state) or 'random'       (default ready)
  --goal S             likewise                                                         (default random)
  --planner P          rrtconnect | rrtstar | prm | batched-rrtconnect | batched-rrtstar |
                       batched-prm                                                     (default rrtconnect)
  --time T             planning time, seconds                                           (default 5)
  --seed S             the seed of random states and of the planner                    (default 1)
  --html FILE          a page that plays the path in 3-D (opens in any browser)
  --png FILE           a picture of the path: the scene, the robot at the start (green) and the goal
                       (blue), states between them as ghosts, the hand's way as an orange line
  --help               this text
Exit status: 0 solved, 1 no exact solution, 2 bad usage or input.
)";

}  // namespace

int main(int argc, char** argv) {
  const examples::CommandLine cli("plan_robot", kUsage,
                                  {"--urdf", "--srdf", "--package-path", "--group", "--scene", "--problem", "--cloud",
                                   "--cloud-resolution", "--spheres", "--tolerance", "--start", "--goal", "--planner", "--time", "--seed", "--html", "--png"});
  std::map<std::string, std::string> o;
  double time = 5.0, tolerance = 0.015, cloud_resolution = 0.01;
  unsigned seed = 1;
  try {
    o = cli.parse(argc, argv);
    if (o.count("--time")) time = cli.number("--time", o["--time"], 1e-3, 1e6);
    if (o.count("--cloud-resolution")) cloud_resolution = cli.number("--cloud-resolution", o["--cloud-resolution"], 1e-4, 10);
    if (o.count("--tolerance")) tolerance = cli.number("--tolerance", o["--tolerance"], 1e-4, 10);
    if (o.count("--seed")) seed = static_cast<unsigned>(cli.integer("--seed", o["--seed"], 0, 1 << 30));
  } catch (const linalg_cuda::InvalidArgument& e) {
    cli.fail(e.what());
  }
  if (!o.count("--urdf") || !o.count("--srdf")) cli.fail("--urdf and --srdf are required");
  const std::string planner_name = o.count("--planner") ? o["--planner"] : "rrtconnect";
  try {
    ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
    ompl::RNG::setSeed(seed);
    const ompl_cuda::RobotModel model = ompl_cuda::RobotModel::load(o["--urdf"], o["--srdf"], examples::split(o["--package-path"], ':'));
    std::string group = o.count("--group") ? o["--group"] : "";
    ompl_cuda::Transform base;
    std::string scene_file = o.count("--scene") ? o["--scene"] : "";
    if (o.count("--problem")) {
      const ompl_cuda::MotionBenchMakerProblem problem = ompl_cuda::read_motion_bench_maker_problem(o["--problem"]);
      base = problem.base;
      if (group.empty()) group = problem.group;
      if (scene_file.empty()) scene_file = problem.scene_file;
    }
    if (group.empty() && !model.group_names().empty()) group = model.group_names().front();
    ompl_cuda::Scene scene = scene_file.empty() ? ompl_cuda::Scene() : ompl_cuda::Scene::load(scene_file);
    if (o.count("--cloud")) {
      ompl_cuda::PointCloudReadOptions read;
      read.drop_non_finite = true;
      scene.set_point_cloud(ompl_cuda::read_point_cloud(o["--cloud"], read), cloud_resolution);
    }
    const auto cover_start = std::chrono::steady_clock::now();
    const std::vector<std::vector<ompl_cuda::Sphere>> spheres =
        o.count("--spheres") ? ompl_cuda::read_sphere_file(o["--spheres"], model)
                             : ompl_cuda::cover_with_spheres(model, {tolerance});
    const double cover_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - cover_start).count();
    auto checks = std::make_shared<ompl_cuda::RobotChecks>(ompl_cuda::RobotCollisionModel(model, spheres), scene, group, base);
    std::printf("%-10s %s, group %s (%d joints), %zu spheres (%s, %.2f s)\n", "robot", model.name().c_str(), group.c_str(),
                checks->dimension(), checks->robot().num_spheres(),
                o.count("--spheres") ? o["--spheres"].c_str() : "made here", cover_seconds);
    std::printf("%-10s %zu objects, %zu primitives, %zu cloud points\n", "scene", scene.objects().size(),
                scene.num_primitives(), scene.point_cloud().size() / 3);

    og::SimpleSetup ss(checks->make_space());
    const ob::SpaceInformationPtr& si = ss.getSpaceInformation();
    ss.setStateValidityChecker(std::make_shared<ompl_cuda::RobotValidityChecker>(si, checks));
    si->setMotionValidator(std::make_shared<ompl_cuda::RobotMotionValidator>(si, checks));
    si->setup();
    // A named state, or a random valid one (seeded: the same run gives the same pair).
    auto state_named = [&](const std::string& name, ob::ScopedState<>* state) {
      if (name == "random") {
        ob::StateSamplerPtr sampler = si->allocStateSampler();
        for (int attempt = 0; attempt < 100000; ++attempt) {
          sampler->sampleUniform(state->get());
          if (si->isValid(state->get())) return;
        }
        throw linalg_cuda::InvalidArgument("no valid random state of group '" + group + "' in 100000 samples");
      }
      const std::vector<double> full = model.named_state(group, name, model.default_state());
      for (int k = 0; k < checks->dimension(); ++k) (*state)[k] = full[checks->group().variables[k]];
      if (!si->isValid(state->get())) throw linalg_cuda::InvalidArgument("the state '" + name + "' is not valid in this scene");
    };
    ob::ScopedState<> start(si->getStateSpace()), goal(si->getStateSpace());
    state_named(o.count("--start") ? o["--start"] : "ready", &start);
    state_named(o.count("--goal") ? o["--goal"] : "random", &goal);
    ss.setStartAndGoalStates(start, goal);
    auto objective = std::make_shared<ob::PathLengthOptimizationObjective>(si);
    if (planner_name != "rrtstar") objective->setCostThreshold(ob::Cost(1e300));  // the first path ends the search
    ss.setOptimizationObjective(objective);

    ob::PlannerPtr planner;
    if (planner_name == "rrtconnect") planner = std::make_shared<og::RRTConnect>(si);
    else if (planner_name == "rrtstar") planner = std::make_shared<og::RRTstar>(si);
    else if (planner_name == "prm") planner = std::make_shared<og::PRM>(si);
    else if (planner_name == "batched-rrtconnect" || planner_name == "batched_rrtconnect")
      planner = std::make_shared<ompl_cuda::BatchedRRTConnect>(si);
    else if (planner_name == "batched-rrtstar") planner = std::make_shared<ompl_cuda::BatchedRRTstar>(si);
    else if (planner_name == "batched-prm") planner = std::make_shared<ompl_cuda::BatchedPRM>(si);
    else cli.fail("unknown planner '" + planner_name + "'");
    ss.setPlanner(planner);
    std::printf("%-10s %s, checks on %s\n", "planner", planner->getName().c_str(), linalg_cuda::to_string(checks->backend()));
    const ob::PlannerStatus status = ss.solve(time);
    const bool exact = status == ob::PlannerStatus::EXACT_SOLUTION;
    std::printf("%-10s %s in %.3f s\n", "result", status.asString().c_str(), ss.getLastPlanComputationTime());
    std::printf("%-10s %u checked (%u valid)\n", "motions", si->getMotionValidator()->getCheckedMotionCount(),
                si->getMotionValidator()->getValidMotionCount());
    if (!ss.haveSolutionPath()) return 1;
    og::PathGeometric path = ss.getSolutionPath();
    std::printf("%-10s %zu states, length %.3f rad, valid %s\n", "path", path.getStateCount(), path.length(),
                path.check() ? "yes" : "NO");
    if (o.count("--html") || o.count("--png")) {
      path.interpolate(std::max<unsigned>(2, static_cast<unsigned>(path.length() / 0.05)));
      std::vector<std::vector<double>> frames;
      for (std::size_t i = 0; i < path.getStateCount(); ++i) {
        std::vector<double> full(model.num_variables());
        checks->full_state(path.getState(i)->as<ob::RealVectorStateSpace::StateType>()->values, full.data());
        frames.push_back(full);
      }
      const std::string title = model.name() + " " + group + ", " + planner->getName();
      if (o.count("--html")) {
        ompl_cuda::write_robot_html(o["--html"], checks->robot(), scene, base, frames, title);
        std::printf("%-10s %s (%zu frames)\n", "wrote", o["--html"].c_str(), frames.size());
      }
      if (o.count("--png")) {
        ompl_cuda::RobotPictureOptions picture;
        picture.title = title;
        ompl_cuda::write_robot_png(o["--png"], checks->robot(), scene, base, frames, picture);
        std::printf("%-10s %s (%dx%d)\n", "wrote", o["--png"].c_str(), picture.width, picture.height);
      }
    }
    return exact ? 0 : 1;
  } catch (const std::exception& e) {  // the library's typed errors and anything else: one line
    std::cerr << "plan_robot: " << e.what() << "\n";
    return 2;
  }
}
