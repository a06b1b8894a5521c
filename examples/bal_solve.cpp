// bal_solve: bundle adjustment of a BAL problem with ceres_cuda::Solve (GPU) or ceres::Solve, the
// same options either way, printing Ceres' FullReport.
//
//   bal_solve --input ../shared/data/bal/problem-49-7776-pre.txt
//   bal_solve --input problem-16-22106-pre.txt.bz2 --solver ceres --linear_solver dense_schur
//   bal_solve --synthetic 1778x100000 --iterations 20 --robustify --ply out.ply
//   bal_solve --input problem-16-22106-pre.txt.bz2 --shape split-shared --linear_solver sparse_schur
#include <ceres/ceres.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "ceres_cuda/ceres_cuda.h"
#include "command_line.h"
#include "convergence_plot.h"
#include "linalg_cuda/errors.h"

namespace {

const char* kUsage = R"(usage: bal_solve (--input FILE | --synthetic CAMERASxPOINTS[xOBSERVATIONS]) [options]

Bundle adjustment of a BAL problem (Agarwal et al., grail.cs.washington.edu/projects/bal): Ceres'
Levenberg-Marquardt with a Schur-complement linear solver, on the GPU (ceres_cuda::Solve) or with
ceres::Solve, and prints Ceres' FullReport.

  --input FILE          BAL problem, .txt or .txt.bz2
  --synthetic CxP[xO]   a generated BAL-like problem with C cameras and P points (4 views per point,
                        or O observations in all; 0.5 px noise, 1% outliers), e.g. 13682x4456117x28987644
  --solver S            gpu | cpu | ceres    (default gpu; cpu = ceres_cuda's CPU reference engine)
  --linear_solver L     iterative_schur | dense_schur | sparse_schur (default iterative_schur)
  --shape S             bal | split | split-shared              (default bal)
                        bal: one 9-value camera and a point per residual (SnavelyReprojectionError);
                        split: per image a quaternion (QuaternionManifold), translation and
                        intrinsics (ceres_cuda::SplitBALProblem);
                        split-shared: the same with one intrinsics block for all images
  --cost C              library | autodiff                     (default library)
                        library: SnavelyReprojectionError (bal) or QuaternionSnavelyReprojectionError
                        (split shapes), evaluated on the GPU; autodiff: an AutoDiffCostFunction of
                        the same model, evaluated on CPU threads like any user's cost function
  --preconditioner P    schur_jacobi | jacobi                  (default schur_jacobi)
  --iterations N        maximum LM iterations                  (default 50)
  --threads T           CPU threads for Ceres and for cost functions on the CPU (default 16)
  --robustify           Huber loss (scale 1 pixel) on every residual
  --ply FILE            write the solved cameras and points as a PLY point cloud
  --plot FILE           write the convergence (cost per LM iteration, log scale) as SVG
  --quiet               no per-iteration progress lines
  --huge-pages          back ceres_cuda's large set-up arrays with 2 MiB pages, faulted in on all threads
                        (SolveOptions::advise_huge_pages: a shorter set-up on problems of millions of residuals)
  --help                this text
Exit status: 0 when the solution is usable (CONVERGENCE or NO_CONVERGENCE), 1 otherwise, 2 bad usage
or input.
)";

}  // namespace

int main(int argc, char** argv) {
  const examples::CommandLine cli("bal_solve", kUsage,
                                  {"--input", "--synthetic", "--solver", "--linear_solver", "--preconditioner", "--shape", "--cost",
                                   "--iterations", "--threads", "--ply", "--plot"},
                                  {"--robustify", "--quiet", "--huge-pages"});
  auto args = cli.parse(argc, argv);
  if (args.count("--input") == args.count("--synthetic")) cli.fail("give exactly one of --input and --synthetic");
  const std::string solver = args.count("--solver") ? args["--solver"] : "gpu";
  if (solver != "gpu" && solver != "cpu" && solver != "ceres") cli.fail("--solver expects gpu, cpu or ceres");
  const std::string linear = args.count("--linear_solver") ? args["--linear_solver"] : "iterative_schur";
  if (linear != "iterative_schur" && linear != "dense_schur" && linear != "sparse_schur")
    cli.fail("--linear_solver expects iterative_schur, dense_schur or sparse_schur");
  const std::string shape = args.count("--shape") ? args["--shape"] : "bal";
  if (shape != "bal" && shape != "split" && shape != "split-shared") cli.fail("--shape expects bal, split or split-shared");
  const std::string cost = args.count("--cost") ? args["--cost"] : "library";
  if (cost != "library" && cost != "autodiff") cli.fail("--cost expects library or autodiff");
  const std::string precond = args.count("--preconditioner") ? args["--preconditioner"] : "schur_jacobi";
  if (precond != "schur_jacobi" && precond != "jacobi") cli.fail("--preconditioner expects schur_jacobi or jacobi");
  const int iterations = args.count("--iterations") ? cli.integer("--iterations", args["--iterations"], 0, 100000) : 50;
  const int threads = args.count("--threads") ? cli.integer("--threads", args["--threads"], 1, 1024) : 16;

  try {
    ceres_cuda::BALProblem bal;
    if (args.count("--input")) {
      std::cerr << "reading " << args["--input"] << "\n";
      bal = ceres_cuda::BALProblem::read(args["--input"]);
    } else {
      const std::string& spec = args["--synthetic"];
      const auto x = spec.find('x'), y = x == std::string::npos ? x : spec.find('x', x + 1);
      if (x == std::string::npos) cli.fail("--synthetic expects CAMERASxPOINTS[xOBSERVATIONS], e.g. 1778x100000");
      ceres_cuda::SyntheticBalOptions o;
      o.num_cameras = cli.integer("--synthetic", spec.substr(0, x), 4, 1 << 24);
      o.num_points = cli.integer("--synthetic", spec.substr(x + 1, y == std::string::npos ? y : y - x - 1), 1, 1 << 30);
      if (y != std::string::npos) o.num_observations = cli.integer("--synthetic", spec.substr(y + 1), 2, (1u << 31) - 1);
      o.outlier_fraction = 0.01;
      bal = ceres_cuda::make_synthetic_bal(o);
    }
    std::cerr << bal.num_cameras() << " cameras, " << bal.num_points() << " points, " << bal.num_observations()
              << " observations\n";
    ceres::Problem problem;
    ceres::LossFunction* loss = args.count("--robustify") ? new ceres::HuberLoss(1.0) : nullptr;
    ceres_cuda::SplitBALProblem split(bal, shape == "split-shared");
    if (shape == "bal")
      bal.add_to(&problem, loss,
                 cost == "library" ? ceres_cuda::BALProblem::Cost::Library : ceres_cuda::BALProblem::Cost::AutoDiff);
    else
      split.add_to(&problem, loss,
                   cost == "library" ? ceres_cuda::SplitBALProblem::Cost::Library : ceres_cuda::SplitBALProblem::Cost::AutoDiff);

    ceres::Solver::Options options;
    options.linear_solver_type = linear == "dense_schur"    ? ceres::DENSE_SCHUR
                                 : linear == "sparse_schur" ? ceres::SPARSE_SCHUR
                                                            : ceres::ITERATIVE_SCHUR;
    options.preconditioner_type = precond == "jacobi" ? ceres::JACOBI : ceres::SCHUR_JACOBI;
    options.max_num_iterations = iterations;
    options.num_threads = threads;
    options.minimizer_progress_to_stdout = !args.count("--quiet");
    ceres::Solver::Summary summary;
    if (solver == "ceres") {
      ceres::Solve(options, &problem, &summary);
    } else {
      ceres_cuda::SolveDetails details;
      ceres_cuda::SolveOptions solve_options;
      solve_options.backend = solver == "gpu" ? ceres_cuda::Backend::Cuda : ceres_cuda::Backend::Cpu;
      solve_options.advise_huge_pages = args.count("--huge-pages") > 0;
      ceres_cuda::Solve(options, &problem, &summary, solve_options, &details);
      std::cout << "ceres_cuda: " << ceres_cuda::to_string(details.path) << " - " << details.engine << "\n";
      if (!details.fallback_reason.empty()) std::cout << "fallback reason: " << details.fallback_reason << "\n";
      std::printf("set-up: %.3f s reading the problem, %.3f s building the engine\n", details.analysis_seconds,
                  details.setup_seconds);
      std::printf("linear solver: %d PCG iterations, %.3f s (%.3f s in the iterations themselves); regularised blocks: "
                  "%d point, %d camera\n",
                  details.linear_iterations, details.linear_seconds, details.pcg_seconds, details.singular_point_blocks,
                  details.singular_camera_blocks);
    }
    std::cout << summary.FullReport() << "\n";
    if (args.count("--plot")) {
      const std::string title = (args.count("--input") ? args["--input"] : "synthetic " + args["--synthetic"]) + " (" +
                                solver + ")";
      if (!examples::write_convergence_svg(summary, args["--plot"], title))
        throw linalg_cuda::Error(args["--plot"] + ": cannot write the plot");
      std::cerr << "wrote " << args["--plot"] << "\n";
    }
    if (args.count("--ply")) {
      if (shape != "bal") split.copy_to(&bal);
      bal.write_ply(args["--ply"]);
      std::cerr << "wrote " << args["--ply"] << "\n";
    }
    return summary.IsSolutionUsable() ? 0 : 1;
  } catch (const linalg_cuda::Error& e) {
    std::cerr << "bal_solve: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {  // anything the library's contract misses: one line, never an abort
    std::cerr << "bal_solve: " << e.what() << "\n";
    return 2;
  }
}
