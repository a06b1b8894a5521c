// ceres_cuda::Solve against ceres::Solve with the same options: the shared BAL files and synthetic
// problems, generic and fast evaluation, losses, constant blocks, both linear solvers and both
// preconditioners; the fallback to ceres::Solve; the Summary. The CPU engine runs everywhere; the
// GPU engine (GpuSolve tests) where a device exists, also against the CPU engine step by step.
#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "ba_test_support.h"
#include "ceres_cuda/snavely_reprojection_error.h"
#include "ceres_cuda/solve.h"

namespace {

using ceres_cuda::Backend;
using ceres_cuda::SolveDetails;

struct Outcome {
  ceres::Solver::Summary summary;
  SolveDetails details;
};

// Solves a fresh copy of bal with ceres::Solve and with ceres_cuda::Solve (same options).
std::pair<ceres::Solver::Summary, Outcome> solve_both(const ceres_cuda::BALProblem& bal, const ceres::Solver::Options& options,
                                                      Backend backend, bool autodiff = false,
                                                      ceres::LossFunction* (*loss)() = nullptr, int constant_cameras = 0) {
  ceres_cuda::BALProblem a = bal, b = bal;
  auto pa = ba_test::make_problem(a, autodiff, loss ? loss() : nullptr);
  auto pb = ba_test::make_problem(b, autodiff, loss ? loss() : nullptr);
  for (int c = 0; c < constant_cameras; ++c) {
    pa->SetParameterBlockConstant(a.mutable_camera(c));
    pb->SetParameterBlockConstant(b.mutable_camera(c));
  }
  ceres::Solver::Summary reference;
  ceres::Solve(options, pa.get(), &reference);
  Outcome ours;
  ceres_cuda::Solve(options, pb.get(), &ours.summary, backend, &ours.details);
  return {reference, ours};
}

void expect_same_result(const ceres::Solver::Summary& reference, const Outcome& ours, double tolerance = 1e-3) {
  EXPECT_NE(ours.details.path, SolveDetails::Path::CeresFallback) << ours.details.fallback_reason;
  EXPECT_EQ(ours.summary.termination_type, reference.termination_type)
      << "ours: " << ours.summary.message << "\nceres: " << reference.message;
  EXPECT_NEAR(ours.summary.initial_cost, reference.initial_cost, 1e-12 * reference.initial_cost);
  EXPECT_LT(std::fabs(ours.summary.final_cost - reference.final_cost), tolerance * reference.final_cost)
      << "ours " << ours.summary.final_cost << " ceres " << reference.final_cost;
  EXPECT_LT(ours.summary.final_cost, ours.summary.initial_cost);
  EXPECT_EQ(ours.summary.fixed_cost, reference.fixed_cost);
  EXPECT_EQ(ours.summary.num_parameter_blocks, reference.num_parameter_blocks);
  EXPECT_EQ(ours.summary.num_parameters_reduced, reference.num_parameters_reduced);
  EXPECT_EQ(ours.summary.num_residual_blocks_reduced, reference.num_residual_blocks_reduced);
  EXPECT_EQ(ours.summary.num_residuals, reference.num_residuals);
  EXPECT_EQ(ours.summary.linear_solver_ordering_used, reference.linear_solver_ordering_used);
  EXPECT_EQ(ours.summary.schur_structure_used, reference.schur_structure_used);
  EXPECT_TRUE(ours.summary.IsSolutionUsable());
  // The first iteration is the same evaluation in both.
  ASSERT_FALSE(ours.summary.iterations.empty());
  EXPECT_NEAR(ours.summary.iterations[0].gradient_max_norm, reference.iterations[0].gradient_max_norm,
              1e-9 * reference.iterations[0].gradient_max_norm);
  EXPECT_EQ(static_cast<int>(ours.summary.iterations.size()), ours.summary.num_successful_steps + ours.summary.num_unsuccessful_steps);
  // SolveDetails counts the linear iterations of every step solved, also those of a last step that ends
  // the solve on the function tolerance, which (as in Ceres) is not an IterationSummary.
  int listed = 0;
  for (const ceres::IterationSummary& it : ours.summary.iterations) listed += it.linear_solver_iterations;
  if (ours.summary.message.rfind("Function tolerance", 0) == 0) EXPECT_GT(ours.details.linear_iterations, listed);
  else EXPECT_EQ(ours.details.linear_iterations, listed);
}

ceres_cuda::BALProblem synthetic(int cameras, int points, std::uint32_t seed, double outliers = 0.0) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = cameras;
  o.num_points = points;
  o.observations_per_point = 4;
  o.outlier_fraction = outliers;
  o.seed = seed;
  return ceres_cuda::make_synthetic_bal(o);
}

TEST(CpuSolve, MatchesCeresOnSharedBalFiles) {
  for (const char* name : {"problem-3-7-pre.txt", "problem-49-7776-pre.txt", "problem-16-22106-pre.txt.bz2"}) {
    const std::string path = ba_test::bal_path(name);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found (set CUDA_SOLVERS_DATA)";
    SCOPED_TRACE(name);
    const ceres_cuda::BALProblem bal = ceres_cuda::BALProblem::read(path);
    const auto [reference, ours] = solve_both(bal, ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10),
                                              Backend::Cpu);
    EXPECT_EQ(ours.details.path, SolveDetails::Path::Cpu);
    expect_same_result(reference, ours);
  }
}

TEST(CpuSolve, MatchesCeresOnSyntheticProblemsWithEveryLinearSolver) {
  const ceres_cuda::BALProblem bal = synthetic(12, 600, 5);
  for (const auto& [type, preconditioner] :
       {std::pair{ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI}, std::pair{ceres::ITERATIVE_SCHUR, ceres::JACOBI},
        std::pair{ceres::DENSE_SCHUR, ceres::JACOBI}}) {
    SCOPED_TRACE(ceres::LinearSolverTypeToString(type) + std::string(" ") + ceres::PreconditionerTypeToString(preconditioner));
    const auto [reference, ours] = solve_both(bal, ba_test::ba_options(type, preconditioner, 30), Backend::Cpu);
    expect_same_result(reference, ours);
  }
}

TEST(CpuSolve, GenericPathWithAutodiffHuberAndConstantCameras) {
  const ceres_cuda::BALProblem bal = synthetic(10, 400, 7, 0.05);
  const auto options = ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 25);
  {
    SCOPED_TRACE("autodiff functor");
    const auto [reference, ours] = solve_both(bal, options, Backend::Cpu, true);
    expect_same_result(reference, ours);
  }
  {
    SCOPED_TRACE("Huber loss");
    const auto [reference, ours] = solve_both(bal, options, Backend::Cpu, false, [] {
      return static_cast<ceres::LossFunction*>(new ceres::HuberLoss(2.0));
    });
    expect_same_result(reference, ours);
  }
  {
    SCOPED_TRACE("Cauchy loss, autodiff");
    const auto [reference, ours] = solve_both(bal, options, Backend::Cpu, true, [] {
      return static_cast<ceres::LossFunction*>(new ceres::CauchyLoss(1.0));
    });
    expect_same_result(reference, ours);
  }
  {
    SCOPED_TRACE("two constant cameras");
    const auto [reference, ours] = solve_both(bal, options, Backend::Cpu, false, nullptr, 2);
    expect_same_result(reference, ours);
  }
}

TEST(CpuSolve, ProgressCallbacksAndReport) {
  ceres_cuda::BALProblem bal = synthetic(6, 200, 9);
  auto problem = ba_test::make_problem(bal, false);
  struct Counter : ceres::IterationCallback {
    int calls = 0;
    ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
      ++calls;
      return s.iteration >= 3 ? ceres::SOLVER_TERMINATE_SUCCESSFULLY : ceres::SOLVER_CONTINUE;
    }
  } counter;
  auto options = ba_test::ba_options();
  options.callbacks.push_back(&counter);
  options.minimizer_progress_to_stdout = true;
  ceres::Solver::Summary summary;
  testing::internal::CaptureStdout();
  ceres_cuda::Solve(options, problem.get(), &summary);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(counter.calls, 4);
  EXPECT_EQ(summary.termination_type, ceres::USER_SUCCESS);
  EXPECT_NE(printed.find("iter      cost      cost_change  |gradient|"), std::string::npos) << printed;
  const std::string report = summary.FullReport();
  EXPECT_NE(report.find("ITERATIVE_SCHUR"), std::string::npos) << report;
  EXPECT_NE(report.find("SCHUR_JACOBI"), std::string::npos) << report;
  EXPECT_NE(report.find("User callback returned SOLVER_TERMINATE_SUCCESSFULLY."), std::string::npos) << report;
}

// A residual on one 2-vector: not bundle adjustment.
struct Quadratic {
  template <typename T>
  bool operator()(const T* x, T* r) const {
    r[0] = x[0] - T(3.0);
    r[1] = x[1] + T(1.0);
    return true;
  }
};

TEST(CpuSolve, FallsBackToCeresAndSaysWhy) {
  // Nothing left after elimination: a residual on one 2-vector.
  double x[2] = {0, 0};
  ceres::Problem problem;
  problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Quadratic, 2, 2>(new Quadratic), nullptr, x);
  ceres::Solver::Summary summary;
  SolveDetails details;
  ceres_cuda::Solve(ba_test::ba_options(), &problem, &summary, Backend::Cpu, &details);
  EXPECT_EQ(details.path, SolveDetails::Path::CeresFallback);
  EXPECT_NE(details.fallback_reason.find("every variable parameter block is eliminated"), std::string::npos)
      << details.fallback_reason;
  EXPECT_EQ(summary.termination_type, ceres::CONVERGENCE);
  EXPECT_NEAR(x[0], 3.0, 1e-8);

  // A BA problem with options we do not run (a solver that is not of Schur type) is handed over too,
  // and solved.
  ceres_cuda::BALProblem bal = synthetic(5, 100, 3);
  auto ba = ba_test::make_problem(bal, false);
  ceres_cuda::Solve(ba_test::ba_options(ceres::SPARSE_NORMAL_CHOLESKY), ba.get(), &summary, Backend::Cpu, &details);
  EXPECT_EQ(details.path, SolveDetails::Path::CeresFallback);
  EXPECT_NE(details.fallback_reason.find("SPARSE_NORMAL_CHOLESKY"), std::string::npos) << details.fallback_reason;
  EXPECT_LT(summary.final_cost, summary.initial_cost);
}

TEST(CpuSolve, NanObservationFailsLikeCeres) {
  // BALProblem refuses NaN, but a user can put one in a cost function: both solvers report the failed
  // evaluation (no NaN parameters come back).
  ceres_cuda::BALProblem bal = synthetic(5, 60, 23);
  ceres_cuda::BALProblem a = bal, b = bal;
  ceres::Problem pa, pb;
  for (ceres_cuda::BALProblem* p : {&a, &b}) {
    ceres::Problem& problem = p == &a ? pa : pb;
    for (int i = 0; i < p->num_observations(); ++i)
      problem.AddResidualBlock(ceres_cuda::SnavelyReprojectionError::Create(i == 7 ? NAN : p->observations()[2 * i],
                                                                             p->observations()[2 * i + 1]),
                               nullptr, p->mutable_camera(p->camera_index()[i]), p->mutable_point(p->point_index()[i]));
  }
  ceres::Solver::Summary reference, ours;
  ceres::Solve(ba_test::ba_options(), &pa, &reference);
  ceres_cuda::Solve(ba_test::ba_options(), &pb, &ours, Backend::Cpu, nullptr);
  EXPECT_EQ(reference.termination_type, ceres::FAILURE);
  EXPECT_EQ(ours.termination_type, ceres::FAILURE) << ours.message;
  EXPECT_EQ(ours.message, reference.message);
  EXPECT_EQ(b.cameras(), bal.cameras());  // untouched
}

// LM iteration by LM iteration, the same PCG iteration count and cost as ceres::Solve.
void expect_same_steps(const ceres::Solver::Summary& reference, const Outcome& ours, int* longest_pcg) {
  ASSERT_EQ(ours.summary.iterations.size(), reference.iterations.size());
  for (std::size_t k = 1; k < reference.iterations.size(); ++k) {
    *longest_pcg = std::max(*longest_pcg, reference.iterations[k].linear_solver_iterations);
    EXPECT_EQ(ours.summary.iterations[k].linear_solver_iterations, reference.iterations[k].linear_solver_iterations)
        << "LM iteration " << k;
    EXPECT_NEAR(ours.summary.iterations[k].cost, reference.iterations[k].cost, 1e-9 * reference.iterations[k].cost)
        << "LM iteration " << k;
  }
}

TEST(CpuSolve, RepeatedObservationsTakeCeresPcgSteps) {
  const ceres_cuda::BALProblem bal = ba_test::with_repeated_observations(synthetic(12, 600, 5));
  const auto [reference, ours] = solve_both(bal, ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10),
                                            Backend::Cpu);
  expect_same_result(reference, ours);
  int longest = 0;
  expect_same_steps(reference, ours, &longest);  // the same preconditioner: the same PCG iterations
}

TEST(CpuSolve, LongPcgRunsTakeCeresSteps) {
  // PCG runs past 20 iterations, where Ceres' CG recomputes its residual as b - A x every 10th
  // iteration and ours keeps updating it: the counts still agree (the difference is rounding).
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 40;
  o.num_points = 3000;
  o.observations_per_point = 5;
  o.camera_perturbation = 0.05;
  o.seed = 9;
  int longest = 0;
  {
    const auto [reference, ours] = solve_both(ceres_cuda::make_synthetic_bal(o),
                                              ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 8), Backend::Cpu);
    expect_same_result(reference, ours);
    expect_same_steps(reference, ours, &longest);
  }
  EXPECT_GT(longest, 20) << "the problem should make the PCG run past two residual resets";
  const std::string path = ba_test::bal_path("problem-49-7776-pre.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found (set CUDA_SOLVERS_DATA)";
  const auto [reference, ours] = solve_both(ceres_cuda::BALProblem::read(path),
                                            ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 50), Backend::Cpu);
  expect_same_result(reference, ours);
  expect_same_steps(reference, ours, &longest);  // Ladybug to convergence: 32 LM iterations, up to 34 PCG
}

TEST(CpuSolve, CameraWithoutObservationsAndPointSeenOnce) {
  // One camera sees nothing (it is not part of any residual: Ceres ignores it), one point is seen by a
  // single camera (its block V_p is rank 2 without damping: the LM diagonal keeps it invertible).
  ceres_cuda::BALProblem bal = synthetic(6, 150, 11);
  std::vector<int> cams = bal.camera_index(), pts = bal.point_index();
  std::vector<double> obs = bal.observations();
  // Drop all but the first observation of point 0.
  std::vector<int> keep_c, keep_p;
  std::vector<double> keep_o;
  bool first_of_point0 = true;
  for (std::size_t i = 0; i < cams.size(); ++i) {
    if (pts[i] == 0 && !first_of_point0) continue;
    if (pts[i] == 0) first_of_point0 = false;
    keep_c.push_back(cams[i]);
    keep_p.push_back(pts[i]);
    keep_o.push_back(obs[2 * i]);
    keep_o.push_back(obs[2 * i + 1]);
  }
  std::vector<double> cameras = bal.cameras();
  cameras.insert(cameras.end(), cameras.begin(), cameras.begin() + 9);  // a 7th camera, never observed
  const ceres_cuda::BALProblem edited(7, bal.num_points(), keep_c, keep_p, keep_o, cameras, bal.points());
  const auto [reference, ours] = solve_both(edited, ba_test::ba_options(), Backend::Cpu);
  expect_same_result(reference, ours);
}

// A problem where Ceres' independent set, without an ordering, takes a camera: a 7th camera sees one
// point, which 4 others see too (the camera's degree 1, the point's 5).
ceres_cuda::BALProblem with_camera_seeing_one_point(const ceres_cuda::BALProblem& bal) {
  std::vector<int> cams = bal.camera_index(), pts = bal.point_index();
  std::vector<double> obs = bal.observations();
  cams.push_back(bal.num_cameras());
  pts.push_back(pts.front());
  obs.push_back(obs[0] + 1.0);
  obs.push_back(obs[1] - 1.0);
  std::vector<double> cameras = bal.cameras();
  cameras.insert(cameras.end(), cameras.begin(), cameras.begin() + ceres_cuda::BALProblem::kCameraSize);
  return ceres_cuda::BALProblem(bal.num_cameras() + 1, bal.num_points(), cams, pts, obs, cameras, bal.points());
}

TEST(CpuSolve, CamerasCeresWouldEliminateStayCamerasWithTheirSize) {
  // The general engine eliminates blocks of at most 4 values, so the BAL engine keeps the points as
  // e-blocks (and logs it): the same minimum, another reduced system. Given the points as group 0,
  // Ceres takes them too, and both solve the same system.
  const ceres_cuda::BALProblem bal = with_camera_seeing_one_point(synthetic(6, 150, 13));
  const ceres::Solver::Options options = ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10);
  const auto [reference, ours] = solve_both(bal, options, Backend::Cpu);
  EXPECT_EQ(ours.details.path, SolveDetails::Path::Cpu) << ours.details.fallback_reason;
  EXPECT_EQ(ours.details.engine.find("general structure"), std::string::npos) << ours.details.engine;
  EXPECT_EQ(ours.summary.termination_type, reference.termination_type);
  EXPECT_NEAR(ours.summary.final_cost, reference.final_cost, 1e-3 * reference.final_cost);

  ceres_cuda::BALProblem a = bal, b = bal;
  auto pa = ba_test::make_problem(a, false, nullptr);
  auto pb = ba_test::make_problem(b, false, nullptr);
  auto points_first = [&](ceres_cuda::BALProblem& problem) {
    ceres::Solver::Options o = options;
    o.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (int p = 0; p < problem.num_points(); ++p) o.linear_solver_ordering->AddElementToGroup(problem.mutable_point(p), 0);
    for (int c = 0; c < problem.num_cameras(); ++c) o.linear_solver_ordering->AddElementToGroup(problem.mutable_camera(c), 1);
    return o;
  };
  ceres::Solver::Summary ordered_reference;
  ceres::Solve(points_first(a), pa.get(), &ordered_reference);
  Outcome ordered;
  ceres_cuda::Solve(points_first(b), pb.get(), &ordered.summary, Backend::Cpu, &ordered.details);
  expect_same_result(ordered_reference, ordered);
  int longest = 0;
  expect_same_steps(ordered_reference, ordered, &longest);
}

// ITERATIVE_SCHUR on the fast path; DENSE_SCHUR on the general engine, with the library's cost function
// evaluated on the GPU there too.
TEST(GpuSolve, MatchesCeresOnSharedBalFiles) {
  REQUIRE_CUDA_DEVICE();
  for (const char* name : {"problem-3-7-pre.txt", "problem-49-7776-pre.txt", "problem-16-22106-pre.txt.bz2"}) {
    const std::string path = ba_test::bal_path(name);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found (set CUDA_SOLVERS_DATA)";
    SCOPED_TRACE(name);
    const ceres_cuda::BALProblem bal = ceres_cuda::BALProblem::read(path);
    for (const auto type : {ceres::ITERATIVE_SCHUR, ceres::DENSE_SCHUR}) {
      const auto [reference, ours] = solve_both(bal, ba_test::ba_options(type, ceres::SCHUR_JACOBI, 10), Backend::Cuda);
      EXPECT_EQ(ours.details.path,
                type == ceres::ITERATIVE_SCHUR ? SolveDetails::Path::FastGpu : SolveDetails::Path::GenericGpu);
      expect_same_result(reference, ours);
    }
  }
}

TEST(GpuSolve, EveryPathMatchesCeres) {
  REQUIRE_CUDA_DEVICE();
  const ceres_cuda::BALProblem bal = synthetic(12, 800, 13, 0.05);
  const auto options = ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 25);
  auto huber = [] { return static_cast<ceres::LossFunction*>(new ceres::HuberLoss(2.0)); };
  auto soft = [] { return static_cast<ceres::LossFunction*>(new ceres::SoftLOneLoss(3.0)); };
  auto arctan = [] { return static_cast<ceres::LossFunction*>(new ceres::ArctanLoss(3.0)); };
  struct Case {
    const char* name;
    bool autodiff;
    ceres::LossFunction* (*loss)();
    int constant_cameras;
    SolveDetails::Path path;
    ceres::PreconditionerType preconditioner;
  };
  const Case cases[] = {
      {"fast, Huber", false, +huber, 0, SolveDetails::Path::FastGpu, ceres::SCHUR_JACOBI},
      {"fast, SoftL1, JACOBI", false, +soft, 0, SolveDetails::Path::FastGpu, ceres::JACOBI},
      {"fast, constant cameras", false, nullptr, 2, SolveDetails::Path::FastGpu, ceres::SCHUR_JACOBI},
      {"generic, autodiff", true, nullptr, 0, SolveDetails::Path::GenericGpu, ceres::SCHUR_JACOBI},
      {"generic, Arctan loss", false, +arctan, 0, SolveDetails::Path::GenericGpu, ceres::SCHUR_JACOBI},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto o = options;
    o.preconditioner_type = c.preconditioner;
    const auto [reference, ours] = solve_both(bal, o, Backend::Cuda, c.autodiff, c.loss, c.constant_cameras);
    EXPECT_EQ(ours.details.path, c.path);
    expect_same_result(reference, ours);
  }
}

// The GPU engine against the CPU engine iteration by iteration: the same evaluation (cost,
// gradient), the same Schur products and preconditioner (the PCG stops at the same iteration and
// the model decrease agrees), on a real problem and on a random synthetic one; the fast path with
// ITERATIVE_SCHUR, the general engines with DENSE_SCHUR.
TEST(GpuSolve, StepByStepLikeTheCpuEngine) {
  REQUIRE_CUDA_DEVICE();
  std::vector<ceres_cuda::BALProblem> problems{synthetic(20, 2000, 17, 0.02)};
  const std::string path = ba_test::bal_path("problem-49-7776-pre.txt");
  if (std::filesystem::exists(path)) problems.push_back(ceres_cuda::BALProblem::read(path));
  for (const auto& bal : problems) {
    for (const auto type : {ceres::ITERATIVE_SCHUR, ceres::DENSE_SCHUR}) {
      ceres_cuda::BALProblem a = bal, b = bal;
      auto pa = ba_test::make_problem(a, false), pb = ba_test::make_problem(b, false);
      const auto options = ba_test::ba_options(type, ceres::SCHUR_JACOBI, 5);
      ceres::Solver::Summary cpu, gpu;
      SolveDetails dc, dg;
      ceres_cuda::Solve(options, pa.get(), &cpu, Backend::Cpu, &dc);
      ceres_cuda::Solve(options, pb.get(), &gpu, Backend::Cuda, &dg);
      ASSERT_EQ(dg.path, type == ceres::ITERATIVE_SCHUR ? SolveDetails::Path::FastGpu : SolveDetails::Path::GenericGpu);
      ASSERT_EQ(cpu.iterations.size(), gpu.iterations.size());
      for (std::size_t k = 0; k < cpu.iterations.size(); ++k) {
        const auto &c = cpu.iterations[k], &g = gpu.iterations[k];
        SCOPED_TRACE(testing::Message() << "iteration " << k);
        EXPECT_NEAR(g.cost, c.cost, 1e-9 * c.cost);
        EXPECT_NEAR(g.gradient_max_norm, c.gradient_max_norm, 1e-7 * c.gradient_max_norm);
        EXPECT_NEAR(g.relative_decrease, c.relative_decrease, 1e-6 * (1 + std::fabs(c.relative_decrease)));
        EXPECT_NEAR(g.linear_solver_iterations, c.linear_solver_iterations, 1);
        EXPECT_EQ(g.step_is_successful, c.step_is_successful);
      }
    }
  }
}

TEST(GpuSolve, BitIdenticalRunToRun) {
  REQUIRE_CUDA_DEVICE();
  const ceres_cuda::BALProblem bal = synthetic(30, 5000, 19, 0.02);
  std::vector<double> first;
  std::vector<double> first_costs;
  for (int run = 0; run < 3; ++run) {
    ceres_cuda::BALProblem copy = bal;
    auto problem = ba_test::make_problem(copy, false, new ceres::HuberLoss(1.0));
    ceres::Solver::Summary summary;
    ceres_cuda::Solve(ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10), problem.get(), &summary,
                      Backend::Cuda, nullptr);
    std::vector<double> values = copy.cameras();
    values.insert(values.end(), copy.points().begin(), copy.points().end());
    std::vector<double> costs;
    for (const auto& it : summary.iterations) costs.push_back(it.cost);
    if (run == 0) {
      first = values;
      first_costs = costs;
    } else {
      EXPECT_EQ(values, first);
      EXPECT_EQ(costs, first_costs);
    }
  }
}

}  // namespace
