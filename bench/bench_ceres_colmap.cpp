// bench_ceres_colmap: COLMAP's global bundle adjustment by `colmap bundle_adjuster` (the anchor, all CPU
// threads) against the same adjustment with ceres_cuda on the GPU (what colmap_ba runs), and with
// ceres_cuda's CPU reference engine on the small models, on COLMAP models made from the shared BAL
// files and from synthetic problems of Venice's and Final-13682's counts. Each solver runs the same
// number of Levenberg-Marquardt iterations from the same model; the table gives the time of the whole
// program (read, adjust, write) and of the solve alone, and the final mean reprojection error of each
// (COLMAP's recomputed by its own point_filtering, which keeps every point at these thresholds).
//
//   bench_ceres_colmap [--data DIR] [--colmap EXE] [--only NAME] [--iterations N] [--iterations-large N]
//                   [--final] [--colmap-timeout S] [--work DIR] [--json FILE]
#include <cuda_runtime.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ceres_cuda/bal_problem.h"
#include "ceres_cuda/colmap_bundle_adjustment.h"
#include "ceres_cuda/colmap_model.h"
#include "ceres_cuda/solve.h"
#include "linalg_cuda/backend.h"

namespace {

namespace fs = std::filesystem;

const char* kUsage = R"(usage: bench_ceres_colmap [options]
  --data DIR             the shared data folder (default $CUDA_SOLVERS_DATA or ../shared/data)
  --colmap EXE           COLMAP's program (default colmap)
  --only NAME            only the models whose name holds NAME
  --iterations N         LM iterations on the models of the BAL files (default 100, COLMAP's)
  --iterations-large N   LM iterations on the synthetic models (default 10)
  --final                add the Final-13682-scale model (13682 images, 2.9e7 observations)
  --colmap-timeout S     stop COLMAP after S seconds and report its time as more than S (default 480)
  --work DIR             where the models go (default /tmp/bench_ceres_colmap)
  --json FILE            also write the rows as JSON
)";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Run {
  std::string solver;
  bool finished = true;  // false: stopped at the timeout
  double total_seconds = 0, solve_seconds = 0, setup_seconds = 0;
  double mean_error = 0, final_cost_px = 0;
  int iterations = 0;
  std::string path;
};

struct Row {
  std::string model;
  std::size_t images = 0, points = 0, observations = 0;
  int iterations = 0;
  std::vector<Run> runs;
};

// `colmap bundle_adjuster`, timed as a whole; its solve time and final cost from its report.
Run run_colmap(const std::string& colmap, const fs::path& dir, int iterations, int timeout) {
  Run r;
  r.solver = "colmap bundle_adjuster";
  fs::create_directories(dir / "colmap");
  fs::create_directories(dir / "colmap_errors");
  const std::string log = (dir / "colmap.log").string();
  const std::string command = "timeout " + std::to_string(timeout) + " " + colmap + " bundle_adjuster --input_path " +
                              (dir / "input").string() + " --output_path " + (dir / "colmap").string() +
                              " --BundleAdjustment.max_num_iterations " + std::to_string(iterations) + " > " + log +
                              " 2>&1";
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  r.total_seconds = seconds_since(start);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 124) {
    r.finished = false;
    return r;
  }
  if (status != 0) throw std::runtime_error("`" + command + "` failed; see " + log);
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string a, b;
    words >> a;
    if (a == "Time") words >> b >> r.solve_seconds;
    if (a == "Iterations") words >> b >> r.iterations;
    if (a == "Final") words >> b >> b >> r.final_cost_px;
  }
  const std::string filter = colmap + " point_filtering --input_path " + (dir / "colmap").string() + " --output_path " +
                             (dir / "colmap_errors").string() +
                             " --min_track_len 2 --max_reproj_error 1e300 --min_tri_angle 0 > " +
                             (dir / "filtering.log").string() + " 2>&1";
  if (std::system(filter.c_str()) != 0) throw std::runtime_error("`" + filter + "` failed");
  r.mean_error = ceres_cuda::colmap_model_statistics(ceres_cuda::ColmapModel::read((dir / "colmap_errors").string()))
                     .mean_reprojection_error;
  return r;
}

// What colmap_ba does, timed in parts: read, filter, set up the adjuster, solve, update the errors,
// write. colmap_ba ends with _Exit after its output is flushed, so the model and the adjuster are freed
// here after the clock stops.
Run run_ours(const fs::path& dir, const std::string& solver, int iterations) {
  Run r;
  r.solver = solver;
  const auto start = std::chrono::steady_clock::now();
  auto model = std::make_unique<ceres_cuda::ColmapModel>(ceres_cuda::ColmapModel::read((dir / "input").string()));
  ceres_cuda::colmap_filter_observations_with_negative_depth(model.get());
  const double read_seconds = seconds_since(start);
  ceres_cuda::ColmapBundleAdjustmentOptions options;
  options.solver_options.max_num_iterations = iterations;
  auto adjuster = std::make_unique<ceres_cuda::ColmapBundleAdjuster>(model.get(), options);
  const double adjuster_seconds = seconds_since(start) - read_seconds;
  {
    ceres::Solver::Summary summary;
    ceres_cuda::SolveDetails details;
    ceres_cuda::SolveOptions solve_options;
    solve_options.backend = solver == "ceres_cuda gpu" ? ceres_cuda::Backend::Cuda : ceres_cuda::Backend::Cpu;
    adjuster->Solve(adjuster->solver_options(), &summary, solve_options, &details);  // as colmap_ba
    r.solve_seconds = summary.total_time_in_seconds;
    r.setup_seconds = details.analysis_seconds + details.setup_seconds;
    r.iterations = summary.num_successful_steps + summary.num_unsuccessful_steps;
    r.final_cost_px = std::sqrt(summary.final_cost / summary.num_residuals_reduced);
    r.path = ceres_cuda::to_string(details.path);
    const auto after_solve = std::chrono::steady_clock::now();
    ceres_cuda::colmap_update_point_errors(model.get());
    const fs::path out = dir / (solver == "ceres_cuda gpu" ? "gpu" : "cpu");
    fs::create_directories(out);
    model->write_binary(out.string());
    r.mean_error = ceres_cuda::colmap_model_statistics(*model).mean_reprojection_error;
    r.total_seconds = seconds_since(start);
    std::printf("  (%s: read %.3f s, adjuster set up %.3f s, solve %.3f s, errors and write %.3f s)\n",
                solver.c_str(), read_seconds, adjuster_seconds, r.solve_seconds, seconds_since(after_solve));
  }
  adjuster.reset();
  model.reset();
  return r;
}

void print_row(const Row& row) {
  std::printf("\n%s: %zu images, %zu points, %zu observations, %d LM iterations\n", row.model.c_str(), row.images,
              row.points, row.observations, row.iterations);
  std::printf("  %-24s %10s %10s %10s %12s %12s %14s\n", "solver", "total s", "solve s", "set-up s", "x total",
              "x solve", "mean error px");
  const Run& anchor = row.runs.front();
  for (const Run& r : row.runs) {
    char total[32], ratio_total[32], ratio_solve[32];
    std::snprintf(total, sizeof total, r.finished ? "%.3f" : ">%.0f", r.total_seconds);
    if (!anchor.finished) {
      std::snprintf(ratio_total, sizeof ratio_total, ">%.1f", anchor.total_seconds / r.total_seconds);
      std::snprintf(ratio_solve, sizeof ratio_solve, "-");
    } else {
      std::snprintf(ratio_total, sizeof ratio_total, "%.1f", anchor.total_seconds / r.total_seconds);
      std::snprintf(ratio_solve, sizeof ratio_solve, "%.1f", anchor.solve_seconds / r.solve_seconds);
    }
    char setup[32];
    std::snprintf(setup, sizeof setup, r.path.empty() ? "-" : "%.3f", r.setup_seconds);  // COLMAP's is in its solve
    std::printf("  %-24s %10s %10.3f %10s %12s %12s %14.9f %s\n", r.solver.c_str(), total, r.solve_seconds, setup,
                ratio_total, ratio_solve, r.mean_error, r.path.c_str());
  }
  std::fflush(stdout);
}

void write_json(const std::string& file, const std::string& device, const std::vector<Row>& rows) {
  if (file.empty()) return;
  std::ofstream out(file);
  out.precision(12);
  out << "{\"device\": \"" << device << "\", \"cpu_threads\": " << std::thread::hardware_concurrency()
      << ", \"rows\": [\n";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Row& row = rows[k];
    out << "  {\"model\": \"" << row.model << "\", \"images\": " << row.images << ", \"points\": " << row.points
        << ", \"observations\": " << row.observations << ", \"lm_iterations\": " << row.iterations << ", \"runs\": [";
    for (std::size_t j = 0; j < row.runs.size(); ++j) {
      const Run& r = row.runs[j];
      out << (j ? ", " : "") << "{\"solver\": \"" << r.solver << "\", \"finished\": " << (r.finished ? "true" : "false")
          << ", \"total_seconds\": " << r.total_seconds << ", \"solve_seconds\": " << r.solve_seconds
          << ", \"setup_seconds\": " << r.setup_seconds << ", \"iterations\": " << r.iterations
          << ", \"final_cost_px\": " << r.final_cost_px << ", \"mean_reprojection_error\": " << r.mean_error
          << ", \"path\": \"" << r.path << "\"}";
    }
    out << "]}" << (k + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "]}\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = std::getenv("CUDA_SOLVERS_DATA") ? std::getenv("CUDA_SOLVERS_DATA") : "../shared/data";
  std::string colmap = "colmap", only, json, work = "/tmp/bench_ceres_colmap";
  int iterations = 100, iterations_large = 10, timeout = 480;
  bool final_scale = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "bench_ceres_colmap: missing value after " << flag << "\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (flag == "--data") {
      data = value();
    } else if (flag == "--colmap") {
      colmap = value();
    } else if (flag == "--only") {
      only = value();
    } else if (flag == "--iterations") {
      iterations = std::stoi(value());
    } else if (flag == "--iterations-large") {
      iterations_large = std::stoi(value());
    } else if (flag == "--final") {
      final_scale = true;
    } else if (flag == "--colmap-timeout") {
      timeout = std::stoi(value());
    } else if (flag == "--work") {
      work = value();
    } else if (flag == "--json") {
      json = value();
    } else {
      std::cerr << "bench_ceres_colmap: unknown option " << flag << "\n" << kUsage;
      return 2;
    }
  }
  if (!linalg_cuda::cuda_device_available()) {
    std::cerr << "bench_ceres_colmap: no CUDA device; this benchmark compares GPU against CPU and needs one\n";
    return 1;
  }
  if (std::system((colmap + " help > /dev/null 2>&1").c_str()) != 0) {
    std::cerr << "bench_ceres_colmap: cannot run '" << colmap << "' (--colmap names COLMAP's program)\n";
    return 1;
  }
  cudaDeviceProp props{};
  cudaGetDeviceProperties(&props, 0);
  std::printf("device %s, %u CPU threads; COLMAP: %s\n", props.name, std::thread::hardware_concurrency(),
              colmap.c_str());

  struct Source {
    std::string name;
    std::string bal_file;  // empty: synthetic
    int cameras = 0, points = 0;
    long long observations = 0;
  };
  std::vector<Source> sources = {{"Ladybug-49 (problem-49-7776)", "problem-49-7776-pre.txt"},
                                 {"Dubrovnik-16 (problem-16-22106)", "problem-16-22106-pre.txt.bz2"},
                                 {"synthetic Venice scale", "", 1778, 993923, 5001946}};
  if (final_scale) sources.push_back({"synthetic Final scale", "", 13682, 4456117, 28987644});
  std::vector<Row> rows;
  try {
    {  // The process's first CUDA work (context, library handles, modules) before the timed runs.
      ceres_cuda::SyntheticBalOptions o;
      o.num_cameras = 8;
      o.num_points = 200;
      const fs::path dir = fs::path(work) / "warm_up";
      fs::create_directories(dir / "input");
      ceres_cuda::colmap_model_from_bal(ceres_cuda::make_synthetic_bal(o)).write_binary((dir / "input").string());
      run_ours(dir, "ceres_cuda gpu", 3);
    }
    for (const Source& s : sources) {
      if (s.name.find(only) == std::string::npos) continue;
      ceres_cuda::BALProblem bal;
      if (!s.bal_file.empty()) {
        const std::string path = data + "/bal/" + s.bal_file;
        if (!fs::exists(path)) {
          std::cerr << "skipping " << path << " (not found)\n";
          continue;
        }
        bal = ceres_cuda::BALProblem::read(path);
      } else {
        ceres_cuda::SyntheticBalOptions o;
        o.num_cameras = s.cameras;
        o.num_points = s.points;
        o.num_observations = s.observations;
        bal = ceres_cuda::make_synthetic_bal(o);
      }
      const fs::path dir =
          fs::path(work) / (s.bal_file.empty() ? "synthetic_" + std::to_string(s.cameras) : s.bal_file);
      fs::remove_all(dir);
      fs::create_directories(dir / "input");
      const ceres_cuda::ColmapModel model = ceres_cuda::colmap_model_from_bal(bal);
      model.write_binary((dir / "input").string());
      Row row;
      row.model = s.name;
      row.images = model.images.size();
      row.points = model.points3D.size();
      row.observations = model.num_observations();
      row.iterations = s.bal_file.empty() ? iterations_large : iterations;
      row.runs.push_back(run_colmap(colmap, dir, row.iterations, timeout));
      row.runs.push_back(run_ours(dir, "ceres_cuda gpu", row.iterations));
      if (!s.bal_file.empty()) row.runs.push_back(run_ours(dir, "ceres_cuda cpu", row.iterations));
      rows.push_back(row);
      print_row(row);
      write_json(json, props.name, rows);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_ceres_colmap: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
