// The GPU engine's pieces against the CPU reference engine, directly: residuals and cost, the
// (loss-corrected, Jacobi-scaled) Jacobian, gradient norms, the implicit Schur product on random
// vectors, the preconditioner blocks (SCHUR_JACOBI and JACOBI) and the LM step, on random synthetic
// problems (losses, constant blocks, points of every size, repeated pairs) and on a real BAL problem. The
// BAL GPU engine takes the fast path's problems only (SnavelyReprojectionError everywhere).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "ba_engine.h"
#include "linalg_cuda/errors.h"
#include "ba_layout.h"
#include "ba_test_support.h"

namespace {

using namespace ceres_cuda::detail;

EngineInspection* inspect(const std::unique_ptr<BaEngine>& engine) {
  return dynamic_cast<EngineInspection*>(engine.get());
}

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (const double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// max |a - b| relative to max |b|.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0.0;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) d = std::max(d, std::fabs(a[k] - b[k]));
  return d / std::max(max_abs(b), 1e-300);
}

void compare_engines(ceres::Problem* problem, ceres::PreconditionerType preconditioner, const char* what) {
  SCOPED_TRACE(what);
  ceres::Solver::Options options = ba_test::ba_options(ceres::ITERATIVE_SCHUR, preconditioner);
  BaLayout layout;
  ASSERT_EQ(analyze_problem(options, problem, &layout), "");
  EngineOptions eo;
  eo.preconditioner = preconditioner;
  eo.num_threads = 2;
  auto cpu = make_cpu_engine(layout, eo);
  auto gpu = make_cuda_engine(layout, eo);
  double cpu_cost = 0, gpu_cost = 0;
  ASSERT_TRUE(cpu->evaluate_at_x(&cpu_cost));
  ASSERT_TRUE(gpu->evaluate_at_x(&gpu_cost));
  EXPECT_NEAR(gpu_cost, cpu_cost, 1e-12 * cpu_cost);
  double cn, cm, gn, gm;
  cpu->gradient_norms(&cn, &cm);
  gpu->gradient_norms(&gn, &gm);
  EXPECT_NEAR(gn, cn, 1e-10 * cn);
  EXPECT_NEAR(gm, cm, 1e-10 * cm);
  for (BaEngine* e : {cpu.get(), gpu.get()}) {
    e->compute_jacobi_scaling();
    e->apply_jacobi_scaling();
  }
  EXPECT_LT(relative_difference(inspect(gpu)->jacobian(), inspect(cpu)->jacobian()), 1e-12);

  for (const double radius : {1e4, 1e-2}) {
    const StepResult c = cpu->solve_step(radius, false);
    const StepResult g = gpu->solve_step(radius, false);
    EXPECT_EQ(static_cast<int>(g.termination), static_cast<int>(c.termination));
    EXPECT_NEAR(g.linear_iterations, c.linear_iterations, 1);
    EXPECT_NEAR(g.model_cost_change, c.model_cost_change, 1e-6 * std::fabs(c.model_cost_change));
    EXPECT_LT(relative_difference(inspect(gpu)->preconditioner_blocks(), inspect(cpu)->preconditioner_blocks()), 1e-10);
    EXPECT_LT(relative_difference(inspect(gpu)->delta(), inspect(cpu)->delta()), 1e-6);
    std::mt19937 rng(7);
    std::normal_distribution<double> n(0.0, 1.0);
    std::vector<double> x(static_cast<std::size_t>(layout.variable_cameras) * layout.camera_size);
    for (double& v : x) v = n(rng);
    EXPECT_LT(relative_difference(inspect(gpu)->schur_product(x), inspect(cpu)->schur_product(x)), 1e-12);
  }

  // A second Jacobian at the same x, as after a rejected step's next evaluation: the GPU's fast path
  // stores it scaled as it evaluates it (the scaling is known by then) and divides the gradient and
  // the column norms back; the CPU engine scales it afterwards.
  ASSERT_TRUE(cpu->evaluate_at_x(&cpu_cost));
  ASSERT_TRUE(gpu->evaluate_at_x(&gpu_cost));
  cpu->gradient_norms(&cn, &cm);
  gpu->gradient_norms(&gn, &gm);
  EXPECT_NEAR(gn, cn, 1e-10 * cn);
  EXPECT_NEAR(gm, cm, 1e-10 * cm);
  for (BaEngine* e : {cpu.get(), gpu.get()}) e->apply_jacobi_scaling();
  EXPECT_LT(relative_difference(inspect(gpu)->jacobian(), inspect(cpu)->jacobian()), 1e-12);
  const StepResult c = cpu->solve_step(1e3, false);
  const StepResult g = gpu->solve_step(1e3, false);
  EXPECT_NEAR(g.model_cost_change, c.model_cost_change, 1e-6 * std::fabs(c.model_cost_change));
  EXPECT_LT(relative_difference(inspect(gpu)->delta(), inspect(cpu)->delta()), 1e-6);
}

ceres_cuda::BALProblem synthetic(std::uint32_t seed) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 15;
  o.num_points = 1500;
  o.observations_per_point = 5;
  o.outlier_fraction = 0.03;
  o.seed = seed;
  return ceres_cuda::make_synthetic_bal(o);
}

TEST(GpuEngine, PiecesMatchTheCpuEngineOnRandomProblems) {
  REQUIRE_CUDA_DEVICE();
  {
    ceres_cuda::BALProblem bal = synthetic(21);
    auto problem = ba_test::make_problem(bal, false, new ceres::CauchyLoss(2.0));
    compare_engines(problem.get(), ceres::SCHUR_JACOBI, "fast path, Cauchy");
    compare_engines(problem.get(), ceres::JACOBI, "fast path, Cauchy, JACOBI");
  }
  {
    ceres_cuda::BALProblem bal = synthetic(22);
    auto problem = ba_test::make_problem(bal, false, new ceres::HuberLoss(5.0));
    problem->SetParameterBlockConstant(bal.mutable_camera(3));
    problem->SetParameterBlockConstant(bal.mutable_point(10));
    compare_engines(problem.get(), ceres::SCHUR_JACOBI, "fast path, Huber, constant blocks");
  }
}

// The BAL GPU engine takes the fast path's problems only; ceres_cuda::Solve gives the others (a user's
// cost function, a loss the kernels do not have) to the general engine.
TEST(GpuEngine, RefusesALayoutOffTheFastPath) {
  ceres_cuda::BALProblem bal = synthetic(27);
  auto problem = ba_test::make_problem(bal, true);
  BaLayout layout;
  ASSERT_EQ(analyze_problem(ba_test::ba_options(), problem.get(), &layout), "");
  EXPECT_FALSE(layout.snavely);
  EXPECT_THROW(make_cuda_engine(layout, EngineOptions{}), linalg_cuda::InvalidArgument);
  BaLayout fast_only;
  EXPECT_NE(analyze_problem(ba_test::ba_options(), problem.get(), &fast_only, true), "");
}

// Cameras whose rotation takes the first-order branch (|r|^2 <= DBL_EPSILON: R = I + [r]x, and the
// rotation derivative's point is X, not R X; the fast path's products recover it from the view,
// snavely_jacobian_products.h), with a constant point seen by one of them (|r| about 5e-9) so that
// the camera pass forms F_s x there too.
TEST(GpuEngine, PiecesMatchTheCpuEngineWithFirstOrderRotations) {
  REQUIRE_CUDA_DEVICE();
  ceres_cuda::BALProblem bal = synthetic(25);
  const double rotations[][3] = {{0.0, 0.0, 0.0}, {1e-9, -2e-9, 5e-9}, {-8e-9, 3e-9, 1e-8}};
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j) bal.mutable_camera(2 + 5 * k)[j] = rotations[k][j];
  auto problem = ba_test::make_problem(bal, false, new ceres::HuberLoss(1.0));
  const auto seen_by_camera_7 = std::find(bal.camera_index().begin(), bal.camera_index().end(), 7);
  ASSERT_NE(seen_by_camera_7, bal.camera_index().end());
  problem->SetParameterBlockConstant(
      bal.mutable_point(bal.point_index()[seen_by_camera_7 - bal.camera_index().begin()]));
  compare_engines(problem.get(), ceres::SCHUR_JACOBI, "fast path, three cameras in the first-order branch");
}

// More tiles than the staged point pass has warps on an H100 or H200 (132 multiprocessors, 3 blocks
// of 8 warps each: 3168 warps; 48000 points of 4 residuals make 6000 tiles), so that its warps walk
// more than one tile and its double buffer turns over (smaller problems give each warp one tile).
TEST(GpuEngine, PiecesMatchTheCpuEngineWithSeveralTilesPerWarp) {
  REQUIRE_CUDA_DEVICE();
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 40;
  o.num_points = 48000;
  o.observations_per_point = 4;
  o.seed = 26;
  ceres_cuda::BALProblem bal = ceres_cuda::make_synthetic_bal(o);
  auto problem = ba_test::make_problem(bal, false);
  compare_engines(problem.get(), ceres::SCHUR_JACOBI, "fast path, several tiles per warp");
}

// Points seen by 1 to 60 cameras: the GPU's Schur product packs points into a warp's tile, of at most
// 32 items of a camera's residuals (grouped_point_tiles.h), and gives a point with more a warp of its
// own, in rounds of 32 (60: two rounds, one partial).
ceres_cuda::BALProblem points_of_every_size() {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 64;
  o.num_points = 160;
  o.observations_per_point = 60;
  o.seed = 23;
  const ceres_cuda::BALProblem full = ceres_cuda::make_synthetic_bal(o);
  const auto wanted = [](int p) { return p % 4 == 0 ? 60 : p % 4 == 1 ? 33 : 1 + p % 32; };
  std::vector<int> seen(o.num_points, 0), camera_index, point_index;
  std::vector<double> observations;
  for (int i = 0; i < full.num_observations(); ++i) {
    const int p = full.point_index()[i];
    if (seen[p]++ >= wanted(p)) continue;
    camera_index.push_back(full.camera_index()[i]);
    point_index.push_back(p);
    observations.insert(observations.end(), full.observations().begin() + 2 * i, full.observations().begin() + 2 * i + 2);
  }
  return ceres_cuda::BALProblem(full.num_cameras(), full.num_points(), camera_index, point_index, observations,
                                full.cameras(), full.points());
}

TEST(GpuEngine, PiecesMatchTheCpuEngineWithPointsOfEverySize) {
  REQUIRE_CUDA_DEVICE();
  {
    ceres_cuda::BALProblem bal = points_of_every_size();
    auto problem = ba_test::make_problem(bal, false, new ceres::HuberLoss(1.0));
    compare_engines(problem.get(), ceres::SCHUR_JACOBI, "fast path, points of 1 to 60 residuals");
  }
  {
    ceres_cuda::BALProblem bal = points_of_every_size();
    auto problem = ba_test::make_problem(bal, false, new ceres::SoftLOneLoss(2.0));
    problem->SetParameterBlockConstant(bal.mutable_camera(5));
    problem->SetParameterBlockConstant(bal.mutable_point(8));   // 60 residuals
    problem->SetParameterBlockConstant(bal.mutable_point(13));  // 33 residuals
    compare_engines(problem.get(), ceres::SCHUR_JACOBI, "fast path, SoftL1, points of 1 to 60 residuals, constant blocks");
  }
}

TEST(GpuEngine, PiecesMatchTheCpuEngineWithRepeatedObservations) {
  REQUIRE_CUDA_DEVICE();
  ceres_cuda::BALProblem bal = ba_test::with_repeated_observations(synthetic(24));
  auto problem = ba_test::make_problem(bal, false);
  compare_engines(problem.get(), ceres::SCHUR_JACOBI, "camera-point pairs repeated");
}

TEST(GpuEngine, PiecesMatchTheCpuEngineOnLadybug) {
  REQUIRE_CUDA_DEVICE();
  const std::string path = ba_test::bal_path("problem-49-7776-pre.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found (set CUDA_SOLVERS_DATA)";
  ceres_cuda::BALProblem bal = ceres_cuda::BALProblem::read(path);
  auto problem = ba_test::make_problem(bal, false);
  compare_engines(problem.get(), ceres::SCHUR_JACOBI, "Ladybug");
}

}  // namespace
