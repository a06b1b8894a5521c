// bench_ompl: motion checks per second for a 9-link planar chain among the four rectangles, 100
// configurations per motion: the CPU reference on one core and on all cores, against the GPU batch,
// for batches of 1e3 .. 1e6 motions (all through ChainMotionValidator::checkMotions), with the floors
// of any checker fed OMPL states: the host reading the states, and PCIe moving them.
//
// Then RRT* on the paper's 9-link problem: OMPL's RRTstar with DiscreteMotionValidator + our checker
// (CPU), OMPL's RRTstar with our ChainMotionValidator, and BatchedRRTstar (GPU checks and nearest
// neighbours), at an equal number of samples (wall time, final cost), and an ompl::tools::Benchmark
// run at equal time (OMPL's RRTstar, BatchedRRTstar, OMPL's PRM, BatchedPRM) whose log (Planner
// Arena format) is written next to the JSON.
//
//   bench_ompl [--reps R] [--json FILE] [--max-batch N] [--samples N] [--benchmark-time T] [--skip-planners]
//              [--only-batched]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include <ompl/base/SpaceInformation.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/geometric/planners/prm/PRM.h>
#include <ompl/geometric/planners/rrt/RRTstar.h>
#include <ompl/tools/benchmark/Benchmark.h>
#include <ompl/util/Console.h>

#include "ompl_cuda/batched_prm.h"
#include "ompl_cuda/batched_rrt_star.h"
#include "ompl_cuda/chain_problem.h"

#include "bench_support.h"
#include "ompl_cuda/chain_motion_validator.h"
#include "ompl_cuda/chain_validity_checker.h"

namespace {

namespace ob = ompl::base;
using ompl_cuda::Backend;

constexpr int kLinks = 9;
constexpr int kPointsPerMotion = 100;
constexpr double kMotionLength = 1.0;  // joint-space length of every motion

struct Row {
  std::string implementation;
  std::size_t batch = 0;
  double seconds = 0;  // median of the repetitions
  double motions_per_second = 0;
  double valid_fraction = 0;
  double fastest = 0, slowest = 0;  // seconds, over the repetitions
};

ompl_cuda::Workspace2D four_rectangles() {
  ompl_cuda::Workspace2D w;
  w.rectangles = {{2.0, 1.0, 3.5, 4.0}, {-5.0, 2.5, -3.0, 3.5}, {-2.0, -6.0, 1.0, -4.5}, {4.5, -3.0, 6.0, 0.5}};
  return w;
}

struct PlannerRow {
  std::string planner;
  double seconds = 0;
  double cost = 0;
  bool solved = false;
};

// RRT* variants on the paper problem at an equal number of samples, then an equal-time Benchmark.
void run_planners(unsigned samples, double benchmark_time, bool only_batched, const std::string& json) {
  const ompl_cuda::ChainProblem problem = ompl_cuda::paper_problem();
  std::vector<PlannerRow> rows;
  auto run = [&](const std::string& name, bool gpu_setup, bool our_validator, bool batched) {
    auto setup = ompl_cuda::make_simple_setup(problem, gpu_setup ? Backend::Cuda : Backend::Cpu, our_validator);
    const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
    ob::PlannerPtr planner;
    std::function<bool()> done;
    if (batched) {
      auto p = std::make_shared<ompl_cuda::BatchedRRTstar>(si);
      p->setMaxSamples(samples);
      planner = p;
      done = [] { return false; };
    } else {
      auto p = std::make_shared<ompl::geometric::RRTstar>(si);
      planner = p;
      done = [p, samples] { return p->numIterations() >= samples; };
    }
    setup->setPlanner(planner);
    setup->setup();
    const auto t0 = std::chrono::steady_clock::now();
    setup->solve(ob::PlannerTerminationCondition(done));
    PlannerRow row{name, bench::seconds_since(t0), 0, setup->haveExactSolutionPath()};
    row.cost = setup->haveSolutionPath() ? setup->getSolutionPath().length() : -1;
    rows.push_back(row);
    std::printf("  %-44s %9.2f s  cost %.4f %s\n", name.c_str(), row.seconds, row.cost, row.solved ? "" : "(no exact solution)");
    std::fflush(stdout);
  };
  std::printf("\nRRT* on the paper problem (9 links, 4 rectangles), %u samples each:\n", samples);
  if (!only_batched) {
    run("OMPL RRTstar, DiscreteMotionValidator + CPU checker", false, false, false);
    // OMPL's RRTstar asks for one motion at a time: our validator runs single motions on the CPU.
    run("OMPL RRTstar, our GPU ChainMotionValidator", true, true, false);
  }
  run("BatchedRRTstar, GPU checks and neighbours", true, true, true);
  std::printf("\n%-52s %10s %10s %8s\n", "planner", "seconds", "cost", "speedup");
  for (const PlannerRow& r : rows)
    std::printf("%-52s %10.2f %10.4f %8.2f\n", r.planner.c_str(), r.seconds, r.cost, rows[0].seconds / r.seconds);

  // Equal-time comparison through OMPL's own Benchmark (Planner Arena log).
  auto setup = ompl_cuda::make_simple_setup(problem, Backend::Cuda);
  ompl::tools::Benchmark benchmark(*setup, "chain9_paper");
  benchmark.addPlanner(std::make_shared<ompl::geometric::RRTstar>(setup->getSpaceInformation()));
  benchmark.addPlanner(std::make_shared<ompl_cuda::BatchedRRTstar>(setup->getSpaceInformation()));
  benchmark.addPlanner(std::make_shared<ompl::geometric::PRM>(setup->getSpaceInformation()));
  benchmark.addPlanner(std::make_shared<ompl_cuda::BatchedPRM>(setup->getSpaceInformation()));
  ompl::tools::Benchmark::Request request(benchmark_time, 4000.0, 3);
  request.displayProgress = false;
  request.saveConsoleOutput = false;  // else OMPL writes ompl_<host>_<date>.console into the working folder
  benchmark.benchmark(request);
  const std::string log = json.empty() ? std::string("bench_ompl_planners.log")
                                       : json.substr(0, json.find_last_of('.')) + "_planners.log";
  benchmark.saveResultsToFile(log.c_str());
  std::printf("OMPL Benchmark log (Planner Arena): %s\n", log.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::size_t max_batch = 1000000;
  unsigned samples = 40000;
  double benchmark_time = 5.0;
  bool planners = true, only_batched = false;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << "usage: bench_ompl [--reps R] [--json FILE] [--max-batch N] [--samples N] [--benchmark-time T] "
                   "[--skip-planners] [--only-batched]\n"
                   "  --only-batched  of the equal-sample planners, run only BatchedRRTstar (OMPL's RRTstar takes minutes)\n";
      return 0;
    }
    if (flag == "--skip-planners") {
      planners = false;
      continue;
    }
    if (flag == "--only-batched") {
      only_batched = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr << "bench_ompl: missing value after " << flag << "\n";
      return 2;
    }
    const char* v = argv[++i];
    if (flag == "--reps") reps = std::max(1, std::atoi(v));
    else if (flag == "--json") json = v;
    else if (flag == "--max-batch") max_batch = std::strtoull(v, nullptr, 10);
    else if (flag == "--samples") samples = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
    else if (flag == "--benchmark-time") benchmark_time = std::atof(v);
    else {
      std::cerr << "bench_ompl: unknown option " << flag << "\n";
      return 2;
    }
  }
  if (!linalg_cuda::cuda_device_available()) {
    std::cerr << "bench_ompl: no CUDA device; this benchmark compares GPU against CPU and needs one\n";
    return 1;
  }
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  auto space = std::make_shared<ob::RealVectorStateSpace>(kLinks);
  space->setBounds(-M_PI, M_PI);
  auto si = std::make_shared<ob::SpaceInformation>(space);
  const ompl_cuda::PlanarChain chain = ompl_cuda::PlanarChain::uniform(kLinks, 1.0);
  const ompl_cuda::Workspace2D workspace = four_rectangles();
  si->setStateValidityChecker(std::make_shared<ompl_cuda::ChainValidityChecker>(si, chain, workspace));
  // Resolution such that every motion of length kMotionLength has exactly kPointsPerMotion segments.
  si->setStateValidityCheckingResolution(kMotionLength / (kPointsPerMotion * space->getMaximumExtent()) * 1.0000001);
  si->setup();

  // Motions: random start, random direction, fixed length, kept inside the bounds.
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> angle(-2.5, 2.5);
  std::normal_distribution<double> direction;
  std::vector<ob::State*> starts(max_batch), ends(max_batch);
  for (std::size_t i = 0; i < max_batch; ++i) {
    starts[i] = si->allocState();
    ends[i] = si->allocState();
    double* a = starts[i]->as<ob::RealVectorStateSpace::StateType>()->values;
    double* b = ends[i]->as<ob::RealVectorStateSpace::StateType>()->values;
    double dir[kLinks], norm = 0;
    for (int j = 0; j < kLinks; ++j) {
      a[j] = angle(rng);
      dir[j] = direction(rng);
      norm += dir[j] * dir[j];
    }
    for (int j = 0; j < kLinks; ++j) b[j] = a[j] + dir[j] / std::sqrt(norm) * kMotionLength;
  }
  std::printf("segments per motion: %u (9 links, 4 rectangles)\n", space->validSegmentCount(starts[0], ends[0]));

  ompl_cuda::ChainMotionValidator gpu(si, chain, workspace, Backend::Cuda);
  // The CPU reference checks a batch on all cores (OpenMP); the one-core row limits it to one thread.
  ompl_cuda::ChainMotionValidator cpu(si, chain, workspace, Backend::Cpu);
  const int threads = omp_get_max_threads();

  std::vector<Row> rows;
  const double copy_bw = bench::copy_bandwidth_gbs();
  // The transfer floor: each motion's two states and segment count must cross PCIe once.
  const double h2d_bw = bench::host_to_device_bandwidth_gbs();
  const double bytes_per_motion = 2.0 * kLinks * sizeof(double) + sizeof(int);
  std::printf("host-to-device %.1f GB/s: transfer floor %.3g motions/s (%.0f bytes each)\n", h2d_bw,
              h2d_bw * 1e9 / bytes_per_motion, bytes_per_motion);
  for (std::size_t batch = 1000; batch <= max_batch; batch *= 10) {
    std::vector<std::pair<const ob::State*, const ob::State*>> motions;
    for (std::size_t i = 0; i < batch; ++i) motions.emplace_back(starts[i], ends[i]);
    auto measure = [&](const std::string& name, const std::function<double()>& run, int repeats) {
      run();
      std::vector<double> samples;
      double valid = 0;
      for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        valid = run();
        samples.push_back(bench::seconds_since(t0));
      }
      Row row{name, batch, bench::median(samples), 0, valid};
      row.motions_per_second = batch / row.seconds;
      row.fastest = *std::min_element(samples.begin(), samples.end());
      row.slowest = *std::max_element(samples.begin(), samples.end());
      rows.push_back(row);
      std::printf("  %-28s %9zu motions %12.3f ms (%.3f .. %.3f) %14.4g motions/s\n", name.c_str(), batch,
                  row.seconds * 1e3, row.fastest * 1e3, row.slowest * 1e3, row.motions_per_second);
      std::fflush(stdout);
    };
    measure("gpu (checkMotions)", [&] {
      std::vector<char> valid;
      gpu.checkMotions(motions, valid);
      return std::count(valid.begin(), valid.end(), 1) / double(batch);
    }, reps);
    // The host's share alone, the end-to-end floor of any checker fed OMPL states: reading both
    // states and validSegmentCount of every motion on all cores, as checkMotions does.
    std::vector<double> read_buffer(batch * (2 * kLinks + 1));
    measure("host: read states only", [&] {
      const long count = static_cast<long>(batch);
#pragma omp parallel for schedule(static)
      for (long i = 0; i < count; ++i) {
        double* out = read_buffer.data() + i * (2 * kLinks + 1);
        const double* a = motions[i].first->as<ob::RealVectorStateSpace::StateType>()->values;
        const double* b = motions[i].second->as<ob::RealVectorStateSpace::StateType>()->values;
        std::copy_n(a, kLinks, out);
        std::copy_n(b, kLinks, out + kLinks);
        out[2 * kLinks] = space->validSegmentCount(motions[i].first, motions[i].second);
      }
      return 1.0;
    }, reps);
    const std::size_t cpu_batch = std::min<std::size_t>(batch, 100000);  // the CPU runs are slow; rate is per motion
    std::vector<std::pair<const ob::State*, const ob::State*>> cpu_motions(motions.begin(), motions.begin() + cpu_batch);
    if (batch <= 100000) {
      auto check_on_cpu = [&] {
        std::vector<char> valid;
        cpu.checkMotions(cpu_motions, valid);
        return std::count(valid.begin(), valid.end(), 1) / double(cpu_batch);
      };
      omp_set_num_threads(1);
      measure("cpu reference, 1 core", check_on_cpu, batch >= 100000 ? 1 : reps);
      omp_set_num_threads(threads);
      measure("cpu reference, " + std::to_string(threads) + " cores", check_on_cpu, reps);
    }
  }
  std::printf("\n%-28s %10s %12s %20s %16s %12s %10s\n", "implementation", "batch", "median ms", "min .. max ms",
              "motions/s", "ns/motion", "valid");
  for (const Row& r : rows)
    std::printf("%-28s %10zu %12.3f %9.3f .. %8.3f %16.4g %12.1f %10.3f\n", r.implementation.c_str(), r.batch,
                r.seconds * 1e3, r.fastest * 1e3, r.slowest * 1e3, r.motions_per_second, 1e9 / r.motions_per_second,
                r.valid_fraction);
  if (!json.empty()) {
    std::ofstream out(json);
    out.precision(12);
    out << "{\n  \"copy_bandwidth_gbs\": " << copy_bw << ",\n  \"host_to_device_gbs\": " << h2d_bw
        << ",\n  \"transfer_floor_motions_per_second\": " << h2d_bw * 1e9 / bytes_per_motion << ",\n  \"links\": " << kLinks
        << ",\n  \"points_per_motion\": " << kPointsPerMotion << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i)
      out << "    {\"implementation\": \"" << rows[i].implementation << "\", \"batch\": " << rows[i].batch
          << ", \"seconds\": " << rows[i].seconds << ", \"fastest_seconds\": " << rows[i].fastest
          << ", \"slowest_seconds\": " << rows[i].slowest << ", \"motions_per_second\": " << rows[i].motions_per_second
          << ", \"valid_fraction\": " << rows[i].valid_fraction << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    out << "  ]\n}\n";
  }
  for (std::size_t i = 0; i < max_batch; ++i) {
    si->freeState(starts[i]);
    si->freeState(ends[i]);
  }
  if (planners) run_planners(samples, benchmark_time, only_batched, json);
  return 0;
}
