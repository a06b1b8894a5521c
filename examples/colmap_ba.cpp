// colmap_ba: COLMAP's global bundle adjustment (`colmap bundle_adjuster`) of a sparse model, on the GPU.
//
//   colmap_ba --input_path sparse/0 --output_path sparse/refined
//   colmap_ba --input_path sparse/0 --output_path refined --solver ceres --BundleAdjustment.refine_principal_point 1
#include <ceres/solver.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "ceres_cuda/colmap_bundle_adjustment.h"
#include "ceres_cuda/colmap_model.h"
#include "ceres_cuda/solve.h"
#include "colmap_output.h"
#include "command_line.h"
#include "convergence_plot.h"
#include "linalg_cuda/errors.h"

namespace {

const char* kUsage = R"(usage: colmap_ba --input_path DIR --output_path DIR [options]

Refines a COLMAP sparse model (cameras, images, points3D; .bin or .txt) as `colmap bundle_adjuster`
does: the same problem (COLMAP's camera models, the first image's pose and the second's x translation
fixed, the intrinsics chosen below refined), the same Levenberg-Marquardt options and linear solver
choice, solved on the GPU. Prints Ceres' progress line per iteration, COLMAP's bundle adjustment report
and `colmap model_analyzer`'s statistics of the refined model, whose points' errors it updates.
Cameras: SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV.

  --input_path DIR       the model to refine
  --output_path DIR      where the refined model goes (made if missing)
  --output_type T        BIN or TXT                                                  (default BIN)
  --solver S             gpu | cpu | ceres: ceres_cuda::Solve on the GPU or with its CPU reference
                         engine, or ceres::Solve as COLMAP runs it                   (default gpu)
  --BundleAdjustment.max_num_iterations N                                            (default 100)
  --BundleAdjustment.max_linear_solver_iterations N                                  (default 200)
  --BundleAdjustment.function_tolerance X                                            (default 0)
  --BundleAdjustment.gradient_tolerance X                                            (default 0)
  --BundleAdjustment.parameter_tolerance X                                           (default 0)
  --BundleAdjustment.refine_focal_length 0|1                                         (default 1)
  --BundleAdjustment.refine_principal_point 0|1                                      (default 0)
  --BundleAdjustment.refine_extra_params 0|1                                         (default 1)
  --BundleAdjustment.refine_extrinsics 0|1                                           (default 1)
  --BundleAdjustment.loss_function_type TRIVIAL|SOFT_L1|CAUCHY                       (default TRIVIAL)
  --BundleAdjustment.loss_function_scale X                                           (default 1)
  --plot FILE            an SVG of the cost per iteration
  --quiet                no per-iteration progress lines
  --help                 this text
A flag's value follows it or an '=' ("--BundleAdjustment.max_num_iterations=50"), as in COLMAP.
Exit status: 0 refined and written, 1 the solve failed (nothing written), 2 bad usage or input.
)";

const char* kTolerances[] = {"--BundleAdjustment.function_tolerance", "--BundleAdjustment.gradient_tolerance",
                             "--BundleAdjustment.parameter_tolerance"};
const char* kRefine[] = {"--BundleAdjustment.refine_focal_length", "--BundleAdjustment.refine_principal_point",
                         "--BundleAdjustment.refine_extra_params", "--BundleAdjustment.refine_extrinsics"};

bool parse_bool(const examples::CommandLine& cli, const std::string& flag, const std::string& text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  cli.fail(flag + " expects 0 or 1, got '" + text + "'");
}

ceres_cuda::ColmapBundleAdjustmentOptions parse_options(const examples::CommandLine& cli,
                                                        std::map<std::string, std::string>& args) {
  ceres_cuda::ColmapBundleAdjustmentOptions o;
  ceres::Solver::Options& s = o.solver_options;
  if (args.count("--BundleAdjustment.max_num_iterations"))
    s.max_num_iterations =
        cli.integer("--BundleAdjustment.max_num_iterations", args["--BundleAdjustment.max_num_iterations"], 0, 1 << 30);
  if (args.count("--BundleAdjustment.max_linear_solver_iterations"))
    s.max_linear_solver_iterations = cli.integer("--BundleAdjustment.max_linear_solver_iterations",
                                                 args["--BundleAdjustment.max_linear_solver_iterations"], 1, 1 << 30);
  double* tolerances[] = {&s.function_tolerance, &s.gradient_tolerance, &s.parameter_tolerance};
  for (int k = 0; k < 3; ++k)
    if (args.count(kTolerances[k])) *tolerances[k] = cli.number(kTolerances[k], args[kTolerances[k]], 0, 1e300);
  bool* refine[] = {&o.refine_focal_length, &o.refine_principal_point, &o.refine_extra_params, &o.refine_extrinsics};
  for (int k = 0; k < 4; ++k)
    if (args.count(kRefine[k])) *refine[k] = parse_bool(cli, kRefine[k], args[kRefine[k]]);
  if (args.count("--BundleAdjustment.loss_function_type")) {
    const std::string& type = args["--BundleAdjustment.loss_function_type"];
    using Loss = ceres_cuda::ColmapBundleAdjustmentOptions::LossFunctionType;
    if (type == "TRIVIAL")
      o.loss_function_type = Loss::Trivial;
    else if (type == "SOFT_L1")
      o.loss_function_type = Loss::SoftL1;
    else if (type == "CAUCHY")
      o.loss_function_type = Loss::Cauchy;
    else
      cli.fail("--BundleAdjustment.loss_function_type expects TRIVIAL, SOFT_L1 or CAUCHY, got '" + type + "'");
  }
  if (args.count("--BundleAdjustment.loss_function_scale"))
    o.loss_function_scale =
        cli.number("--BundleAdjustment.loss_function_scale", args["--BundleAdjustment.loss_function_scale"], 0, 1e300);
  s.minimizer_progress_to_stdout = !args.count("--quiet");
  return o;
}

// COLMAP's PrintSolverSummary (src/optim/bundle_adjustment.cc), to the letter.
void print_colmap_report(const ceres::Solver::Summary& summary) {
  const char* termination = summary.termination_type == ceres::CONVERGENCE      ? "Convergence"
                            : summary.termination_type == ceres::NO_CONVERGENCE ? "No convergence"
                            : summary.termination_type == ceres::FAILURE        ? "Failure"
                            : summary.termination_type == ceres::USER_SUCCESS   ? "User success"
                            : summary.termination_type == ceres::USER_FAILURE   ? "User failure"
                                                                                : "Unknown";
  const double n = summary.num_residuals_reduced;
  std::printf("\nBundle adjustment report\n------------------------\n");
  std::printf("    Residuals : %d\n", summary.num_residuals_reduced);
  std::printf("   Parameters : %d\n", summary.num_effective_parameters_reduced);
  std::printf("   Iterations : %d\n", summary.num_successful_steps + summary.num_unsuccessful_steps);
  std::printf("         Time : %g [s]\n", summary.total_time_in_seconds);
  std::printf(" Initial cost : %g [px]\n", std::sqrt(summary.initial_cost / n));
  std::printf("   Final cost : %g [px]\n", std::sqrt(summary.final_cost / n));
  std::printf("  Termination : %s\n\n", termination);
}

// `colmap model_analyzer`'s lines.
void print_statistics(const ceres_cuda::ColmapModel& model) {
  const ceres_cuda::ColmapModelStatistics s = ceres_cuda::colmap_model_statistics(model);
  std::printf("Cameras: %zu\nImages: %zu\nRegistered images: %zu\nPoints: %zu\nObservations: %zu\n", s.cameras,
              s.images, s.registered_images, s.points, s.observations);
  std::printf("Mean track length: %f\nMean observations per image: %f\nMean reprojection error: %fpx\n",
              s.mean_track_length, s.mean_observations_per_image, s.mean_reprojection_error);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> flags = {"--input_path",
                                    "--output_path",
                                    "--output_type",
                                    "--solver",
                                    "--BundleAdjustment.max_num_iterations",
                                    "--BundleAdjustment.max_linear_solver_iterations",
                                    "--BundleAdjustment.loss_function_type",
                                    "--BundleAdjustment.loss_function_scale",
                                    "--plot"};
  flags.insert(flags.end(), std::begin(kTolerances), std::end(kTolerances));
  flags.insert(flags.end(), std::begin(kRefine), std::end(kRefine));
  const examples::CommandLine cli("colmap_ba", kUsage, flags, {"--quiet"});
  auto args = cli.parse(argc, argv);
  if (!args.count("--input_path") || !args.count("--output_path")) cli.fail("give --input_path and --output_path");
  const std::string type = args.count("--output_type") ? args["--output_type"] : "BIN";
  if (type != "BIN" && type != "TXT") cli.fail("--output_type expects BIN or TXT, got '" + type + "'");
  const std::string solver = args.count("--solver") ? args["--solver"] : "gpu";
  if (solver != "gpu" && solver != "cpu" && solver != "ceres") cli.fail("--solver expects gpu, cpu or ceres");
  const ceres_cuda::ColmapBundleAdjustmentOptions options = parse_options(cli, args);
  try {
    const auto start = std::chrono::steady_clock::now();
    ceres_cuda::ColmapModel model = ceres_cuda::ColmapModel::read(args["--input_path"]);
    const double read_seconds = seconds_since(start);
    const std::size_t filtered = ceres_cuda::colmap_filter_observations_with_negative_depth(&model);
    std::printf(
        "read %s in %.3f s: %zu cameras, %zu images, %zu points, %zu observations (%zu behind their camera "
        "removed)\n",
        args["--input_path"].c_str(), read_seconds, model.cameras.size(), model.images.size(), model.points3D.size(),
        model.num_observations(), filtered);
    const auto build_start = std::chrono::steady_clock::now();
    ceres_cuda::ColmapBundleAdjuster adjuster(&model, options);
    const ceres::Solver::Options solver_options = adjuster.solver_options();
    std::printf("problem set up in %.3f s: %zu images, %zu residual blocks, linear solver %s\n",
                seconds_since(build_start), adjuster.num_images(), adjuster.num_residual_blocks(),
                ceres::LinearSolverTypeToString(solver_options.linear_solver_type));
    std::fflush(stdout);

    ceres::Solver::Summary summary;
    if (solver == "ceres") {
      const auto problem_start = std::chrono::steady_clock::now();
      ceres::Problem& problem = adjuster.problem();
      std::printf("ceres::Problem built in %.3f s\n", seconds_since(problem_start));
      ceres::Solve(solver_options, &problem, &summary);
      std::printf("\nsolver: ceres::Solve\n");
    } else {
      ceres_cuda::SolveDetails details;
      ceres_cuda::SolveOptions solve_options;
      solve_options.backend = solver == "gpu" ? ceres_cuda::Backend::Cuda : ceres_cuda::Backend::Cpu;
      adjuster.Solve(solver_options, &summary, solve_options, &details);  // no ceres::Problem needed
      std::printf(
          "\nsolver: ceres_cuda %s - %s; set-up %.3f s (reading the problem %.3f s, building the engine %.3f s)\n",
          ceres_cuda::to_string(details.path), details.engine.c_str(), details.analysis_seconds + details.setup_seconds,
          details.analysis_seconds, details.setup_seconds);
      if (!details.fallback_reason.empty()) std::printf("fallback reason: %s\n", details.fallback_reason.c_str());
    }
    print_colmap_report(summary);
    if (args.count("--plot")) {
      if (!examples::write_convergence_svg(summary, args["--plot"],
                                           args["--input_path"] + " (colmap_ba, " + solver + ")"))
        throw linalg_cuda::Error(args["--plot"] + ": cannot write the plot");
      std::printf("wrote %s\n", args["--plot"].c_str());
    }
    if (!summary.IsSolutionUsable()) {
      std::fprintf(stderr, "colmap_ba: the solve failed (%s); nothing written\n", summary.message.c_str());
      return 1;
    }
    const auto write_start = std::chrono::steady_clock::now();
    if (const std::size_t behind = ceres_cuda::colmap_update_point_errors(&model))
      std::printf(
          "%zu observations now lie behind their camera; COLMAP counts each as %g px in its point's error "
          "(`colmap point_filtering` removes them)\n",
          behind, std::sqrt(DBL_MAX));
    const std::string& out = args["--output_path"];
    examples::write_colmap_model(model, out, type);
    std::printf("point errors updated and %s written in %.3f s\n", out.c_str(), seconds_since(write_start));
    print_statistics(model);
    std::printf("Elapsed time: %.3f [s]\n", seconds_since(start));
    // Freeing a large problem (millions of residual blocks in Ceres' maps) takes seconds, and the
    // process ends here: the files are written and closed, so leave without the destructors.
    std::fflush(nullptr);
    std::_Exit(0);
  } catch (const std::exception& e) {  // the library's typed errors, and anything its contract misses
    std::cerr << "colmap_ba: " << e.what() << "\n";
    return 2;
  }
}
