// bench_ceres_general: bundle adjustment in the shape SfM systems give Ceres (ceres_cuda::SplitBALProblem:
// quaternion on QuaternionManifold, translation, intrinsics and point, four blocks per residual),
// optionally with one intrinsics block shared by all images, with the library's cost function
// (QuaternionSnavelyReprojectionError, which ceres_cuda evaluates on the GPU) or an AutoDiff functor of
// the same model (a user's cost function: ceres_cuda evaluates it on the CPU threads, as Ceres does).
// ceres::Solve on all CPU cores against ceres_cuda::Solve with the same problem and options,
// ITERATIVE_SCHUR + SCHUR_JACOBI and SPARSE_SCHUR, on the shared BAL files and on synthetic problems
// of 1000 images and of Venice scale (and, with --final, of the counts of BAL's Final-13682). Per run:
// LM and PCG iterations, total time, time per LM iteration, the time in the linear solver and in the
// Jacobian evaluations, final cost; then the ratio of ceres::Solve's time to ceres_cuda's.
//
//   bench_ceres_general [--data DIR] [--iterations N] [--threads T] [--only TEXT] [--skip-large] [--final]
//                       [--cost library|autodiff|both] [--linear_solver iterative_schur|sparse_schur|both]
//                       [--shared no|yes|both] [--skip-ceres] [--repeat N] [--json FILE]
#include <ceres/ceres.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "ceres_cuda/ceres_cuda.h"
#include "linalg_cuda/errors.h"

namespace {

struct Row {
  std::string problem, cost, solver, linear_solver, path;
  int images, points, observations, iterations, linear_iterations;
  double seconds, per_lm_ms, linear_seconds, jacobian_seconds, initial_cost, final_cost;
  std::string termination;
};

Row run(const std::string& name, const ceres_cuda::BALProblem& bal, bool shared, ceres_cuda::SplitBALProblem::Cost cost,
        const std::string& solver, ceres::LinearSolverType linear_solver, int iterations, int threads) {
  ceres_cuda::SplitBALProblem split(bal, shared);
  ceres::Problem problem;
  split.add_to(&problem, nullptr, cost);
  ceres::Solver::Options options;
  options.linear_solver_type = linear_solver;
  options.preconditioner_type = ceres::SCHUR_JACOBI;
  options.max_num_iterations = iterations;
  options.num_threads = threads;
  options.logging_type = ceres::SILENT;
  ceres::Solver::Summary summary;
  ceres_cuda::SolveDetails details;
  const auto start = std::chrono::steady_clock::now();
  if (solver == "ceres") {
    ceres::Solve(options, &problem, &summary);
  } else {
    ceres_cuda::SolveOptions solve_options;
    solve_options.backend = ceres_cuda::Backend::Cuda;
    ceres_cuda::Solve(options, &problem, &summary, solve_options, &details);
  }
  Row r;
  r.seconds = bench::seconds_since(start);
  r.problem = name + (shared ? ", shared intrinsics" : "");
  r.cost = cost == ceres_cuda::SplitBALProblem::Cost::Library ? "library" : "autodiff";
  r.solver = solver == "ceres" ? "ceres::Solve, " + std::to_string(threads) + " threads" : "ceres_cuda::Solve";
  r.linear_solver = ceres::LinearSolverTypeToString(linear_solver);
  r.path = solver == "ceres" ? "" : ceres_cuda::to_string(details.path);
  r.images = bal.num_cameras();
  r.points = bal.num_points();
  r.observations = bal.num_observations();
  r.iterations = static_cast<int>(summary.iterations.size()) - 1;
  r.linear_iterations = 0;
  for (const auto& it : summary.iterations) r.linear_iterations += it.linear_solver_iterations;
  r.per_lm_ms = r.iterations > 0 ? 1e3 * summary.minimizer_time_in_seconds / r.iterations : 0;
  r.linear_seconds = summary.linear_solver_time_in_seconds;
  r.jacobian_seconds = summary.jacobian_evaluation_time_in_seconds;
  r.initial_cost = summary.initial_cost;
  r.final_cost = summary.final_cost;
  r.termination = ceres::TerminationTypeToString(summary.termination_type);
  std::printf("%-44s %-8s %-14s %-26s %4d LM %6d lin %9.3f s %9.2f ms/LM (linear %8.3f s, jacobians %8.3f s) cost %.6e -> %.6e %s%s%s\n",
              r.problem.c_str(), r.cost.c_str(), r.linear_solver.c_str(), r.solver.c_str(), r.iterations, r.linear_iterations, r.seconds,
              r.per_lm_ms, r.linear_seconds, r.jacobian_seconds, r.initial_cost, r.final_cost, r.termination.c_str(),
              r.path.empty() ? "" : ", ", r.path.c_str());
  if (solver != "ceres" && details.path == ceres_cuda::SolveDetails::Path::CeresFallback)
    std::printf("  (handed to ceres::Solve: %s)\n", details.fallback_reason.c_str());
  std::fflush(stdout);
  return r;
}

const char* kUsage = R"(usage: bench_ceres_general [options]
  --data DIR       folder with bal/ (default ../shared/data or $CUDA_SOLVERS_DATA)
  --iterations N   LM iteration cap for every run (default 20)
  --threads T      CPU threads for both solvers' cost functions and ceres::Solve's linear algebra
                   (default: all)
  --only TEXT      run only the problems whose name contains TEXT
  --skip-large     leave out the synthetic problems of 1000 images and of Venice scale
  --final          add a synthetic problem of Final-13682's counts (13682 images, 4456117 points,
                   28987644 observations; the problem and ceres_cuda's set-up take 17.5 GB of host memory)
  --cost C         library | autodiff | both: the cost function (default library)
  --linear_solver L  iterative_schur | sparse_schur | both (default both)
  --shared S       no | yes | both: one intrinsics block for all images (default both)
  --skip-ceres     run only ceres_cuda::Solve
  --repeat N       solve each problem N times with ceres_cuda::Solve and report the median run (default
                   1): a program that solves problems of one size again and again (incremental SfM, a
                   SLAM back-end) pays each size's first-solve costs (kernel variants the CUDA libraries
                   load on first use) once, and a run of some tens of milliseconds can meet a pause of
                   the host's as long as itself
  --json FILE      also write the rows as JSON
)";

}  // namespace

int main(int argc, char** argv) {
  std::string data = std::getenv("CUDA_SOLVERS_DATA") ? std::getenv("CUDA_SOLVERS_DATA") : "../shared/data";
  std::string json, only, cost = "library", linear_solvers = "both", shared_intrinsics = "both";
  int repeat = 1;
  int iterations = 20, threads = static_cast<int>(std::thread::hardware_concurrency());
  bool skip_large = false, skip_ceres = false, final_scale = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "bench_ceres_general: missing value after " << flag << "\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--help") { std::cout << kUsage; return 0; }
    else if (flag == "--data") data = value();
    else if (flag == "--iterations") iterations = std::stoi(value());
    else if (flag == "--repeat") repeat = std::max(1, std::stoi(value()));
    else if (flag == "--threads") threads = std::stoi(value());
    else if (flag == "--only") only = value();
    else if (flag == "--skip-large") skip_large = true;
    else if (flag == "--final") final_scale = true;
    else if (flag == "--skip-ceres") skip_ceres = true;
    else if (flag == "--cost") cost = value();
    else if (flag == "--linear_solver") linear_solvers = value();
    else if (flag == "--shared") shared_intrinsics = value();
    else if (flag == "--json") json = value();
    else { std::cerr << "bench_ceres_general: unknown option " << flag << "\n" << kUsage; return 2; }
  }
  auto check = [&](const std::string& flag, const std::string& v, std::initializer_list<const char*> allowed) {
    for (const char* a : allowed)
      if (v == a) return;
    std::cerr << "bench_ceres_general: " << flag << " does not take " << v << "\n" << kUsage;
    std::exit(2);
  };
  check("--cost", cost, {"library", "autodiff", "both"});
  check("--linear_solver", linear_solvers, {"iterative_schur", "sparse_schur", "both"});
  check("--shared", shared_intrinsics, {"no", "yes", "both"});
  std::vector<ceres_cuda::SplitBALProblem::Cost> costs;
  if (cost != "autodiff") costs.push_back(ceres_cuda::SplitBALProblem::Cost::Library);
  if (cost != "library") costs.push_back(ceres_cuda::SplitBALProblem::Cost::AutoDiff);
  std::vector<ceres::LinearSolverType> linears;
  if (linear_solvers != "sparse_schur") linears.push_back(ceres::ITERATIVE_SCHUR);
  if (linear_solvers != "iterative_schur") linears.push_back(ceres::SPARSE_SCHUR);
  std::vector<bool> shareds;
  if (shared_intrinsics != "yes") shareds.push_back(false);
  if (shared_intrinsics != "no") shareds.push_back(true);
  if (!linalg_cuda::cuda_device_available()) {
    std::cerr << "bench_ceres_general: no CUDA device; this benchmark compares GPU against CPU and needs one\n";
    return 1;
  }
  cudaDeviceProp props{};
  cudaGetDeviceProperties(&props, 0);
  std::printf("device %s, %d CPU threads for both solvers\n", props.name, threads);

  struct Problem { std::string name; ceres_cuda::BALProblem bal; };
  std::vector<Problem> problems;
  for (const char* file : {"problem-49-7776-pre.txt", "problem-16-22106-pre.txt.bz2"}) {
    const std::string path = data + "/bal/" + file;
    if (std::string(file).find(only) == std::string::npos) continue;
    if (!std::filesystem::exists(path)) { std::cerr << "skipping " << path << " (not found)\n"; continue; }
    problems.push_back({file, ceres_cuda::BALProblem::read(path)});
  }
  auto add_synthetic = [&](const std::string& name, int cameras, int points, long observations) {
    if (name.find(only) == std::string::npos) return;
    ceres_cuda::SyntheticBalOptions o;
    o.num_cameras = cameras;
    o.num_points = points;
    o.num_observations = observations;
    o.outlier_fraction = 0.0;
    problems.push_back({name, ceres_cuda::make_synthetic_bal(o)});
  };
  // 1000 images: the size up to which COLMAP solves with SPARSE_SCHUR.
  if (!skip_large) add_synthetic("synthetic 1000 images", 1000, 300000, 1500000);
  if (!skip_large) add_synthetic("synthetic Venice scale", 1778, 1000000, 5000000);
  if (final_scale) add_synthetic("synthetic Final scale", 13682, 4456117, 28987644);

  // Rewritten after every row, so that a run cut short still leaves its rows.
  auto write_json = [&](const std::vector<Row>& rows) {
    if (json.empty()) return;
    std::ofstream out(json);
    out << "{\"device\": \"" << props.name << "\", \"threads\": " << threads << ", \"rows\": [\n";
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& r = rows[k];
      out << "  {\"problem\": \"" << r.problem << "\", \"cost\": \"" << r.cost << "\", \"solver\": \"" << r.solver << "\", \"linear_solver\": \""
          << r.linear_solver << "\", \"path\": \"" << r.path << "\", \"images\": " << r.images << ", \"points\": " << r.points
          << ", \"observations\": " << r.observations << ", \"lm_iterations\": " << r.iterations
          << ", \"linear_iterations\": " << r.linear_iterations << ", \"seconds\": " << r.seconds
          << ", \"ms_per_lm\": " << r.per_lm_ms << ", \"linear_seconds\": " << r.linear_seconds
          << ", \"jacobian_seconds\": " << r.jacobian_seconds << ", \"initial_cost\": " << r.initial_cost
          << ", \"final_cost\": " << r.final_cost << ", \"termination\": \"" << r.termination << "\"}"
          << (k + 1 < rows.size() ? "," : "") << "\n";
    }
    out << "]}\n";
  };
  std::vector<Row> rows;
  try {
    // The process's first CUDA work (the context, the library handles, each kernel's module loaded on
    // its first launch) before the timed runs: a program pays it once, not per solve.
    {
      ceres_cuda::SyntheticBalOptions o;
      o.num_cameras = 8;
      o.num_points = 200;
      const ceres_cuda::BALProblem warm_up = ceres_cuda::make_synthetic_bal(o);
      for (const bool shared : shareds)
        for (const auto c : costs)
          for (const ceres::LinearSolverType linear : linears) {
            ceres_cuda::SplitBALProblem split(warm_up, shared);
            ceres::Problem problem;
            split.add_to(&problem, nullptr, c);
            ceres::Solver::Options options;
            options.linear_solver_type = linear;
            options.max_num_iterations = 2;
            ceres::Solver::Summary summary;
            ceres_cuda::SolveOptions solve_options;
            solve_options.backend = ceres_cuda::Backend::Cuda;
            ceres_cuda::Solve(options, &problem, &summary, solve_options, nullptr);
          }
    }
    for (const Problem& p : problems)
      for (const bool shared : shareds)
        for (const auto c : costs)
          for (const ceres::LinearSolverType linear : linears) {
            std::vector<Row> runs;
            for (int k = 0; k < repeat; ++k) runs.push_back(run(p.name, p.bal, shared, c, "gpu", linear, iterations, threads));
            std::sort(runs.begin(), runs.end(), [](const Row& a, const Row& b) { return a.seconds < b.seconds; });
            rows.push_back(runs[(runs.size() - 1) / 2]);
            write_json(rows);
            if (skip_ceres) continue;
            rows.push_back(run(p.name, p.bal, shared, c, "ceres", linear, iterations, threads));
            write_json(rows);
            const Row &gpu = rows[rows.size() - 2], &cpu = rows.back();
            std::printf("  ratio: ceres::Solve / ceres_cuda::Solve = %.1fx total, %.1fx in the linear solver; final cost "
                        "%.6e against %.6e\n",
                        cpu.seconds / gpu.seconds, cpu.linear_seconds / std::max(gpu.linear_seconds, 1e-9), cpu.final_cost,
                        gpu.final_cost);
          }
  } catch (const std::exception& e) {
    std::cerr << "bench_ceres_general: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
