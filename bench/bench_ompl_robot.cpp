// bench_ompl_robot: the robot checks on the GPU against their CPU reference (all cores) and against
// FCL on the robot's meshes (all cores, the MoveIt way), for the Panda in each MotionBenchMaker scene:
// states/s and motions/s by batch size, the states' rate through the check's stages (kinematics, then
// the scene, then self-collision), then plans by OMPL's RRTConnect with our checks against RRTConnect
// with FCL on seeded valid start/goal pairs. Prints a table, writes JSON.
//
//   bench_ompl_robot [--data DIR] [--only NAME] [--max-batch N] [--reps R] [--fcl-states N]
//                    [--plans N] [--plan-time T] [--tolerance T] [--json FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/base/ScopedState.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/geometric/SimpleSetup.h>
#include <ompl/geometric/planners/rrt/RRTConnect.h>
#include <ompl/util/Console.h>
#include <ompl/util/RandomNumbers.h>

#include "bench_support.h"
#include "fcl_robot_checker.h"
#include "ompl_cuda/batched_rrt_connect.h"
#include "ompl_cuda/point_cloud.h"
#include "ompl_cuda/robot_checkers.h"

namespace {

namespace fs = std::filesystem;
namespace ob = ompl::base;
namespace og = ompl::geometric;
using linalg_cuda::Backend;

struct Row {
  std::string scene, kind, implementation;
  std::size_t batch;
  double seconds, per_second, valid_fraction;
};

struct Options {
  fs::path data = std::getenv("CUDA_SOLVERS_DATA") ? std::getenv("CUDA_SOLVERS_DATA") : "../shared/data";
  std::string only;
  std::size_t max_batch = 1000000, fcl_states = 20000, cloud_points = 1000000;
  int reps = 3, plans = 100;
  double plan_time = 1.0, tolerance = 0.015;
  std::string json;
};

// Median seconds of `reps` runs after one warm-up; the last run's result.
double timed(int reps, const std::function<double()>& run, double* result) {
  *result = run();
  std::vector<double> samples;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    *result = run();
    samples.push_back(bench::seconds_since(t0));
  }
  return bench::median(samples);
}

// Uniform states in the group's bounds.
std::vector<double> uniform_states(const ompl_cuda::RobotChecks& checks, std::size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  const int d = checks.dimension();
  std::vector<double> values(count * d);
  for (std::size_t i = 0; i < count; ++i)
    for (int k = 0; k < d; ++k)
      values[i * d + k] = std::uniform_real_distribution<double>(checks.low()[k], checks.high()[k])(rng);
  return values;
}

struct Scenario {
  std::string name;
  std::shared_ptr<ompl_cuda::RobotChecks> gpu, cpu;
  std::shared_ptr<const ompl_cuda::bench::FclRobotChecker> fcl;
};

// Rates of states in GPU memory through the check's stages, each left out in turn (the kinematics
// alone, then with the scene, then with self-collision as well): where a state's time goes.
void stage_rates(const std::string& name, const ompl_cuda::RobotCollisionModel& robot, const ompl_cuda::Scene& scene,
                 const ompl_cuda::MotionBenchMakerProblem& problem, const Options& o, std::vector<Row>* rows) {
  struct Stage {
    const char* name;
    bool scene, self;
  };
  for (const Stage stage : {Stage{"kinematics", false, false}, Stage{"kinematics + scene", true, false},
                            Stage{"kinematics + scene + self", true, true}}) {
    const ompl_cuda::RobotChecks checks(robot, stage.scene ? scene : ompl_cuda::Scene(), problem.group, problem.base,
                                        std::vector<double>{}, stage.self, Backend::Cuda);
    const std::vector<double> states = uniform_states(checks, o.max_batch, 1);
    linalg_cuda::DeviceBuffer device_states(states.size() * sizeof(double)), device_valid(o.max_batch);
    LINALG_CUDA_CHECK(cudaMemcpy(device_states.data(), states.data(), states.size() * sizeof(double), cudaMemcpyHostToDevice));
    double ignored = 0;
    const double t = timed(o.reps, [&] {
      checks.check_states_on_device(device_states.as<double>(), o.max_batch, device_valid.as<char>(), nullptr);
      LINALG_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      return 0.0;
    }, &ignored);
    std::vector<char> valid(o.max_batch);
    LINALG_CUDA_CHECK(cudaMemcpy(valid.data(), device_valid.data(), o.max_batch, cudaMemcpyDeviceToHost));
    const double f = std::count(valid.begin(), valid.end(), 1) / double(o.max_batch);
    rows->push_back({name, "stages", stage.name, o.max_batch, t, o.max_batch / t, f});
    std::printf("  %-8s %-26s %9zu %12.3f ms %14.4g /s  valid %.3f\n", "stages", stage.name, o.max_batch, t * 1e3,
                o.max_batch / t, f);
  }
}

void check_rates(const Scenario& s, const Options& o, std::vector<Row>* rows) {
  const int d = s.gpu->dimension();
  const std::vector<double> states = uniform_states(*s.gpu, o.max_batch, 1);
  const std::vector<double> held = s.gpu->robot().model().default_state();
  auto add = [&](const std::string& kind, const std::string& impl, std::size_t batch, double seconds, double valid) {
    rows->push_back({s.name, kind, impl, batch, seconds, batch / seconds, valid});
    std::printf("  %-8s %-22s %9zu %12.3f ms %14.4g /s  valid %.3f\n", kind.c_str(), impl.c_str(), batch, seconds * 1e3,
                batch / seconds, valid);
    std::fflush(stdout);
  };
  auto fraction = [](const std::vector<char>& v, std::size_t n) { return std::count(v.begin(), v.begin() + n, 1) / double(n); };
  // The states on the GPU once, for the kernel's own rate; and as OMPL states, for a planner's.
  linalg_cuda::DeviceBuffer device_states(states.size() * sizeof(double)), device_valid(o.max_batch);
  LINALG_CUDA_CHECK(cudaMemcpy(device_states.data(), states.data(), states.size() * sizeof(double), cudaMemcpyHostToDevice));
  auto si = std::make_shared<ob::SpaceInformation>(s.gpu->make_space());
  si->setup();
  const ompl_cuda::RobotValidityChecker checker(si, s.gpu);
  std::vector<ob::State*> ompl_states(o.max_batch);
  for (std::size_t i = 0; i < o.max_batch; ++i) {
    ompl_states[i] = si->allocState();
    std::copy_n(states.data() + i * d, d, ompl_states[i]->as<ob::RealVectorStateSpace::StateType>()->values);
  }
  for (std::size_t batch = 1000; batch <= o.max_batch; batch *= 10) {
    std::vector<char> valid(batch);
    double f = 0;
    // States and answers in GPU memory, as a planner on the GPU keeps them: the clock stops when the
    // answers are there; they are read back and counted after.
    double t = timed(o.reps, [&] {
      s.gpu->check_states_on_device(device_states.as<double>(), batch, device_valid.as<char>(), nullptr);
      LINALG_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      return 0.0;
    }, &f);
    LINALG_CUDA_CHECK(cudaMemcpy(valid.data(), device_valid.data(), batch, cudaMemcpyDeviceToHost));
    f = fraction(valid, batch);
    add("states", "gpu, states on gpu", batch, t, f);
    t = timed(o.reps, [&] { s.gpu->check_states(states.data(), batch, valid.data()); return fraction(valid, batch); }, &f);
    add("states", "gpu, host array", batch, t, f);
    const std::vector<const ob::State*> batch_states(ompl_states.begin(), ompl_states.begin() + batch);
    t = timed(o.reps, [&] { std::vector<char> v; checker.isValid(batch_states, v); return fraction(v, batch); }, &f);
    add("states", "gpu, ompl states", batch, t, f);
    const std::size_t cpu_batch = std::min<std::size_t>(batch, 100000);
    t = timed(o.reps, [&] { s.cpu->check_states(states.data(), cpu_batch, valid.data()); return fraction(valid, cpu_batch); }, &f);
    add("states", "cpu reference", cpu_batch, t, f);
    const std::size_t fcl_batch = std::min(batch, o.fcl_states);
    if (s.fcl && batch <= o.fcl_states * 10) {
      t = timed(1, [&] {
        const long n = static_cast<long>(fcl_batch);
#pragma omp parallel
        {
          std::vector<double> full(held);  // per thread: no allocation in the timed loop
#pragma omp for schedule(dynamic, 16)
          for (long i = 0; i < n; ++i) {
            s.gpu->full_state(states.data() + i * d, full.data());
            valid[i] = s.fcl->in_collision(full.data()) ? 0 : 1;
          }
        }
        return fraction(valid, fcl_batch);
      }, &f);
      add("states", "fcl", fcl_batch, t, f);
      if (batch == 1000 * 10) {  // the cover's cost: states FCL finds free that the spheres do not
        std::vector<char> ours(fcl_batch);
        s.cpu->check_states(states.data(), fcl_batch, ours.data());
        std::size_t free = 0, refused = 0;
        for (std::size_t i = 0; i < fcl_batch; ++i) {
          free += valid[i];
          refused += valid[i] && !ours[i];
          if (!valid[i] && ours[i]) throw std::runtime_error("a state FCL finds in collision passed the spheres");
        }
        rows->push_back({s.name, "cover", "invalid where fcl is free", fcl_batch, 0, 0, refused / double(std::max<std::size_t>(free, 1))});
        std::printf("  cover: of %zu states FCL finds free, the spheres refuse %.1f%%\n", free, 100.0 * refused / std::max<std::size_t>(free, 1));
      }
    }
  }
  for (ob::State* state : ompl_states) si->freeState(state);
  // Motions from each state towards a random state within 1 rad a joint, segments as OMPL counts them
  // for the group's space (validSegmentCount at the default resolution).
  const std::size_t max_motions = std::min<std::size_t>(o.max_batch, 100000);
  std::vector<double> to(max_motions * d);
  std::vector<int> segments(max_motions);
  std::mt19937_64 rng(2);
  ob::State *a = si->allocState(), *b = si->allocState();
  for (std::size_t i = 0; i < max_motions; ++i) {
    for (int k = 0; k < d; ++k) {
      to[i * d + k] = std::clamp(states[i * d + k] + std::uniform_real_distribution<double>(-1, 1)(rng), s.gpu->low()[k], s.gpu->high()[k]);
      a->as<ob::RealVectorStateSpace::StateType>()->values[k] = states[i * d + k];
      b->as<ob::RealVectorStateSpace::StateType>()->values[k] = to[i * d + k];
    }
    segments[i] = static_cast<int>(si->getStateSpace()->validSegmentCount(a, b));
  }
  si->freeState(a);
  si->freeState(b);
  for (std::size_t batch = 1000; batch <= max_motions; batch *= 10) {
    std::vector<int> first(batch);
    auto valid_fraction = [&](std::size_t n) { return std::count(first.begin(), first.begin() + n, 0) / double(n); };
    double f = 0;
    double t = timed(o.reps, [&] { s.gpu->check_motions(states.data(), to.data(), segments.data(), batch, first.data()); return valid_fraction(batch); }, &f);
    add("motions", "gpu", batch, t, f);
    const std::size_t cpu_batch = std::min<std::size_t>(batch, 10000);
    t = timed(o.reps, [&] { s.cpu->check_motions(states.data(), to.data(), segments.data(), cpu_batch, first.data()); return valid_fraction(cpu_batch); }, &f);
    add("motions", "cpu reference", cpu_batch, t, f);
    const std::size_t fcl_batch = std::min<std::size_t>(batch, o.fcl_states / 20);
    if (s.fcl && batch <= 10000) {
      t = timed(1, [&] {
        const long n = static_cast<long>(fcl_batch);
#pragma omp parallel
        {
          std::vector<double> full(held), q(d);  // per thread: no allocation in the timed loop
#pragma omp for schedule(dynamic, 4)
          for (long i = 0; i < n; ++i) {
            int j_invalid = 0;
            const int m = segments[i], last = std::max(m, 1);
            for (int j = 1; j <= last && j_invalid == 0; ++j) {
              for (int k = 0; k < d; ++k)
                q[k] = j == last ? to[i * d + k] : states[i * d + k] + (to[i * d + k] - states[i * d + k]) * (double(j) / m);
              s.gpu->full_state(q.data(), full.data());
              if (s.fcl->in_collision(full.data())) j_invalid = j;
            }
            first[i] = j_invalid;
          }
        }
        return valid_fraction(fcl_batch);
      }, &f);
      add("motions", "fcl", fcl_batch, t, f);
    }
  }
}

struct PlanStats {
  int solved = 0, attempted = 0;
  std::vector<double> seconds;
};

// Plans between `plans` seeded start/goal pairs, each state valid for our checks and the straight motion
// between them not (every problem needs a plan), one plan at a time:
// BatchedRRTConnect with the GPU's batches, OMPL's RRTConnect with our checks (single states on the
// CPU), and RRTConnect with FCL's checker and DiscreteMotionValidator (MoveIt's way).
void plan_rates(const Scenario& s, const Options& o, std::vector<Row>* rows, std::map<std::string, PlanStats>* stats) {
  if (o.plans <= 0) return;
  auto space = s.gpu->make_space();
  auto probe = std::make_shared<ob::SpaceInformation>(space);
  probe->setStateValidityChecker(std::make_shared<ompl_cuda::RobotValidityChecker>(probe, s.gpu));
  probe->setMotionValidator(std::make_shared<ompl_cuda::RobotMotionValidator>(probe, s.gpu));
  probe->setup();
  ompl::RNG::setSeed(5);
  ob::StateSamplerPtr sampler = probe->allocStateSampler();
  std::vector<std::pair<std::vector<double>, std::vector<double>>> pairs;
  const int d = s.gpu->dimension();
  ob::State* q[2] = {probe->allocState(), probe->allocState()};
  while (static_cast<int>(pairs.size()) < o.plans) {
    for (ob::State* e : q) {
      do sampler->sampleUniform(e);
      while (!probe->isValid(e));
    }
    if (probe->checkMotion(q[0], q[1])) continue;
    const double* a = q[0]->as<ob::RealVectorStateSpace::StateType>()->values;
    const double* b = q[1]->as<ob::RealVectorStateSpace::StateType>()->values;
    pairs.emplace_back(std::vector<double>(a, a + d), std::vector<double>(b, b + d));
  }
  for (ob::State* e : q) probe->freeState(e);
  for (const std::string impl : {"batched rrtconnect + gpu", "rrtconnect + spheres", "rrtconnect + fcl"}) {
    PlanStats& st = (*stats)[s.name + "/" + impl];
    for (const auto& [start_values, goal_values] : pairs) {
      auto si = std::make_shared<ob::SpaceInformation>(s.gpu->make_space());
      if (impl == "rrtconnect + fcl") {
        si->setStateValidityChecker(std::make_shared<ompl_cuda::bench::FclValidityChecker>(si, s.fcl, s.gpu->group()));
      } else {
        si->setStateValidityChecker(std::make_shared<ompl_cuda::RobotValidityChecker>(si, s.gpu));
        si->setMotionValidator(std::make_shared<ompl_cuda::RobotMotionValidator>(si, s.gpu));
      }
      og::SimpleSetup ss(si);
      ob::ScopedState<> start(si->getStateSpace()), goal(si->getStateSpace());
      for (int k = 0; k < d; ++k) start[k] = start_values[k], goal[k] = goal_values[k];
      ss.setStartAndGoalStates(start, goal);
      if (impl == "batched rrtconnect + gpu") ss.setPlanner(std::make_shared<ompl_cuda::BatchedRRTConnect>(si));
      else ss.setPlanner(std::make_shared<og::RRTConnect>(si));
      ss.setup();
      const auto t0 = std::chrono::steady_clock::now();
      // The clock read in the planner's loop: OMPL's solve(seconds) from one second up polls it from a
      // thread, whose start and join cost about a millisecond a plan, whatever the checker.
      const ob::PlannerStatus status = ss.solve(ob::timedPlannerTerminationCondition(o.plan_time));
      const double seconds = bench::seconds_since(t0);
      ++st.attempted;
      if (status == ob::PlannerStatus::EXACT_SOLUTION) {
        ++st.solved;
        st.seconds.push_back(seconds);
      }
    }
    const double median = st.seconds.empty() ? NAN : bench::median(st.seconds);
    rows->push_back({s.name, "plans", impl, static_cast<std::size_t>(st.attempted), median, 0,
                     st.solved / double(st.attempted)});
    std::printf("  %-8s %-26s %4d plans: %3d solved in %.1f s, median %.3f ms\n", "plans", impl.c_str(), st.attempted,
                st.solved, o.plan_time, median * 1e3);
    std::fflush(stdout);
  }
}

int usage(const char* error) {
  (error ? std::cerr : std::cout)
      << (error ? std::string("bench_ompl_robot: ") + error + "\n" : std::string())
      << "usage: bench_ompl_robot [--data DIR] [--only NAME] [--max-batch N] [--reps R] [--fcl-states N]\n"
         "                        [--plans N] [--plan-time T] [--tolerance T] [--cloud-points N] [--json FILE]\n"
         "  --data DIR        the shared data (robots/, scenes/)   (default $CUDA_SOLVERS_DATA or ../shared/data)\n"
         "  --only NAME       only problems whose file name contains NAME\n"
         "  --max-batch N     largest state batch (powers of ten from 1000)         (default 1000000)\n"
         "  --fcl-states N    states FCL checks per batch (its rate is per state)   (default 20000)\n"
         "  --plans N         start/goal pairs per scene, straight motion blocked   (default 100)\n"
         "  --plan-time T     seconds each plan may take                            (default 1)\n"
         "  --tolerance T     the sphere cover's tolerance in metres                (default 0.015)\n"
         "  --cloud-points N  points of the box scene's surfaces as a 1 cm cloud, 0: none (default 1000000)\n";
  return error ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return usage(nullptr);
    if (i + 1 >= argc) return usage(("missing value after " + flag).c_str());
    const std::string v = argv[++i];
    if (flag == "--data") o.data = v;
    else if (flag == "--only") o.only = v;
    else if (flag == "--max-batch") o.max_batch = std::max<std::size_t>(1000, std::strtoull(v.c_str(), nullptr, 10));
    else if (flag == "--reps") o.reps = std::max(1, std::atoi(v.c_str()));
    else if (flag == "--fcl-states") o.fcl_states = std::max<std::size_t>(100, std::strtoull(v.c_str(), nullptr, 10));
    else if (flag == "--plans") o.plans = std::max(0, std::atoi(v.c_str()));
    else if (flag == "--plan-time") o.plan_time = std::atof(v.c_str());
    else if (flag == "--tolerance") o.tolerance = std::atof(v.c_str());
    else if (flag == "--json") o.json = v;
    else if (flag == "--cloud-points") o.cloud_points = std::strtoull(v.c_str(), nullptr, 10);
    else return usage(("unknown option " + flag).c_str());
  }
  if (!linalg_cuda::cuda_device_available()) {
    std::cerr << "bench_ompl_robot: no CUDA device; this benchmark compares GPU against CPU and needs one\n";
    return 1;
  }
  try {
    ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
    const fs::path panda = o.data / "robots" / "robowflex_resources" / "panda";
    const ompl_cuda::RobotModel model = ompl_cuda::RobotModel::load(
        (panda / "urdf" / "panda.urdf").string(), (panda / "config" / "panda.srdf").string(), {(o.data / "robots").string()});
    const ompl_cuda::RobotCollisionModel robot(model, ompl_cuda::cover_with_spheres(model, {o.tolerance}));
    std::vector<fs::path> problems;
    for (const auto& entry : fs::directory_iterator(o.data / "scenes")) {
      const std::string name = entry.path().filename().string();
      if (name.find(".problem.yaml") != std::string::npos && name.find(o.only) != std::string::npos) problems.push_back(entry.path());
    }
    std::sort(problems.begin(), problems.end());
    const double h2d = bench::host_to_device_bandwidth_gbs();
    std::printf("Panda, %zu spheres (cover tolerance %.3f m), %d CPU threads; host-to-device %.1f GB/s: transfer floor %.3g states/s\n",
                robot.num_spheres(), o.tolerance, omp_get_max_threads(), h2d, h2d * 1e9 / (7 * sizeof(double) + 1));
    std::vector<Row> rows;
    std::map<std::string, PlanStats> stats;
    for (const fs::path& file : problems) {
      const ompl_cuda::MotionBenchMakerProblem problem = ompl_cuda::read_motion_bench_maker_problem(file.string());
      const ompl_cuda::Scene scene = ompl_cuda::Scene::load(problem.scene_file);
      Scenario s;
      s.name = file.filename().string().substr(0, file.filename().string().find(".problem"));
      s.gpu = std::make_shared<ompl_cuda::RobotChecks>(robot, scene, problem.group, problem.base, std::vector<double>{}, true, Backend::Cuda);
      s.cpu = std::make_shared<ompl_cuda::RobotChecks>(robot, scene, problem.group, problem.base, std::vector<double>{}, true, Backend::Cpu);
      s.fcl = std::make_shared<ompl_cuda::bench::FclRobotChecker>(robot, scene, problem.base);
      std::printf("\n%s: %zu primitives\n", s.name.c_str(), scene.num_primitives());
      check_rates(s, o, &rows);
      stage_rates(s.name, robot, scene, problem, o, &rows);
      plan_rates(s, o, &rows, &stats);
      if (o.cloud_points == 0 || s.name != "box_panda") continue;
      // The box scene as a sensor sees it: points on its surfaces, 1 cm voxels, no primitives. FCL
      // takes clouds only as octrees (octomap), which Debian's FCL leaves out: no anchor here.
      ompl_cuda::Scene cloud_scene;
      cloud_scene.set_point_cloud(ompl_cuda::sample_scene_surfaces(scene, o.cloud_points, 3), 0.01);
      Scenario c;
      c.name = "box_panda_cloud";
      double ignored = 0;
      const double gpu_build = timed(o.reps, [&] {
        c.gpu = std::make_shared<ompl_cuda::RobotChecks>(robot, cloud_scene, problem.group, problem.base, std::vector<double>{}, true, Backend::Cuda);
        return 0.0;
      }, &ignored);
      const double cpu_build = timed(1, [&] {
        c.cpu = std::make_shared<ompl_cuda::RobotChecks>(robot, cloud_scene, problem.group, problem.base, std::vector<double>{}, true, Backend::Cpu);
        return 0.0;
      }, &ignored);
      std::printf("\n%s: %zu points, field built in %.2f ms (gpu) / %.2f ms (cpu)\n", c.name.c_str(), o.cloud_points,
                  gpu_build * 1e3, cpu_build * 1e3);
      rows.push_back({c.name, "field", "gpu", o.cloud_points, gpu_build, o.cloud_points / gpu_build, 0});
      rows.push_back({c.name, "field", "cpu reference", o.cloud_points, cpu_build, o.cloud_points / cpu_build, 0});
      check_rates(c, o, &rows);
    }
    std::printf("\n%-22s %-8s %-26s %9s %12s %14s %8s\n", "scene", "kind", "implementation", "batch", "median ms", "per second", "valid");
    for (const Row& r : rows)
      std::printf("%-22s %-8s %-26s %9zu %12.4f %14.4g %8.3f\n", r.scene.c_str(), r.kind.c_str(), r.implementation.c_str(),
                  r.batch, r.seconds * 1e3, r.per_second, r.valid_fraction);
    if (!o.json.empty()) {
      std::ofstream out(o.json);
      out.precision(10);
      out << "{\n  \"host_to_device_gbs\": " << h2d << ",\n  \"cpu_threads\": " << omp_get_max_threads()
          << ",\n  \"spheres\": " << robot.num_spheres() << ",\n  \"tolerance\": " << o.tolerance << ",\n  \"rows\": [\n";
      for (std::size_t i = 0; i < rows.size(); ++i)
        out << "    {\"scene\": \"" << rows[i].scene << "\", \"kind\": \"" << rows[i].kind << "\", \"implementation\": \""
            << rows[i].implementation << "\", \"batch\": " << rows[i].batch << ", \"seconds\": " << rows[i].seconds
            << ", \"per_second\": " << rows[i].per_second << ", \"valid_fraction\": " << rows[i].valid_fraction << "}"
            << (i + 1 < rows.size() ? "," : "") << "\n";
      out << "  ]\n}\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_ompl_robot: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
