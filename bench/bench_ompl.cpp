// bench_ompl: motion checks per second for a 9-link planar chain among the four rectangles, 100
// configurations per motion: the CPU reference on one core and on all cores, against the GPU batch,
// for batches of 1e3 .. 1e6 motions (all through ChainMotionValidator::checkMotions).
//
//   bench_ompl [--reps R] [--json FILE] [--max-batch N]
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
#include <thread>
#include <vector>

#include <ompl/base/SpaceInformation.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/util/Console.h>

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
  double seconds = 0;
  double motions_per_second = 0;
  double valid_fraction = 0;
};

ompl_cuda::Workspace2D four_rectangles() {
  ompl_cuda::Workspace2D w;
  w.rectangles = {{2.0, 1.0, 3.5, 4.0}, {-5.0, 2.5, -3.0, 3.5}, {-2.0, -6.0, 1.0, -4.5}, {4.5, -3.0, 6.0, 0.5}};
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::size_t max_batch = 1000000;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << "usage: bench_ompl [--reps R] [--json FILE] [--max-batch N]\n";
      return 0;
    }
    if (i + 1 >= argc) {
      std::cerr << "bench_ompl: missing value after " << flag << "\n";
      return 2;
    }
    const char* v = argv[++i];
    if (flag == "--reps") reps = std::max(1, std::atoi(v));
    else if (flag == "--json") json = v;
    else if (flag == "--max-batch") max_batch = std::strtoull(v, nullptr, 10);
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
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::unique_ptr<ompl_cuda::ChainMotionValidator>> cpus;
  for (int t = 0; t < threads; ++t)
    cpus.push_back(std::make_unique<ompl_cuda::ChainMotionValidator>(si, chain, workspace, Backend::Cpu));

  std::vector<Row> rows;
  const double copy_bw = bench::copy_bandwidth_gbs();
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
      rows.push_back(row);
      std::printf("  %-28s %9zu motions %12.3f ms %14.4g motions/s\n", name.c_str(), batch, row.seconds * 1e3,
                  row.motions_per_second);
      std::fflush(stdout);
    };
    measure("gpu (checkMotions)", [&] {
      std::vector<char> valid;
      gpu.checkMotions(motions, valid);
      return std::count(valid.begin(), valid.end(), 1) / double(batch);
    }, reps);
    const std::size_t cpu_batch = std::min<std::size_t>(batch, 100000);  // the CPU runs are slow; rate is per motion
    std::vector<std::pair<const ob::State*, const ob::State*>> cpu_motions(motions.begin(), motions.begin() + cpu_batch);
    if (batch <= 100000) {
      measure("cpu reference, 1 core", [&] {
        std::vector<char> valid;
        cpus[0]->checkMotions(cpu_motions, valid);
        return std::count(valid.begin(), valid.end(), 1) / double(cpu_batch);
      }, batch >= 100000 ? 1 : reps);
      measure("cpu reference, " + std::to_string(threads) + " cores", [&] {
        std::vector<std::thread> pool;
        std::vector<std::size_t> good(threads);
        for (int t = 0; t < threads; ++t)
          pool.emplace_back([&, t] {
            const std::size_t begin = cpu_batch * t / threads, end = cpu_batch * (t + 1) / threads;
            std::vector<std::pair<const ob::State*, const ob::State*>> part(cpu_motions.begin() + begin,
                                                                           cpu_motions.begin() + end);
            std::vector<char> valid;
            cpus[t]->checkMotions(part, valid);
            good[t] = std::count(valid.begin(), valid.end(), 1);
          });
        for (auto& p : pool) p.join();
        std::size_t total = 0;
        for (auto g : good) total += g;
        return total / double(cpu_batch);
      }, reps);
    }
  }
  std::printf("\n%-28s %10s %12s %16s %12s %10s\n", "implementation", "batch", "ms", "motions/s", "ns/motion", "valid");
  for (const Row& r : rows)
    std::printf("%-28s %10zu %12.3f %16.4g %12.1f %10.3f\n", r.implementation.c_str(), r.batch, r.seconds * 1e3,
                r.motions_per_second, 1e9 / r.motions_per_second, r.valid_fraction);
  if (!json.empty()) {
    std::ofstream out(json);
    out.precision(12);
    out << "{\n  \"copy_bandwidth_gbs\": " << copy_bw << ",\n  \"links\": " << kLinks
        << ",\n  \"points_per_motion\": " << kPointsPerMotion << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i)
      out << "    {\"implementation\": \"" << rows[i].implementation << "\", \"batch\": " << rows[i].batch
          << ", \"seconds\": " << rows[i].seconds << ", \"motions_per_second\": " << rows[i].motions_per_second
          << ", \"valid_fraction\": " << rows[i].valid_fraction << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    out << "  ]\n}\n";
  }
  for (std::size_t i = 0; i < max_batch; ++i) {
    si->freeState(starts[i]);
    si->freeState(ends[i]);
  }
  return 0;
}
