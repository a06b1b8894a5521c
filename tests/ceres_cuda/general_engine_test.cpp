// The general engines piece by piece: the GPU engine against the CPU reference on the same structure
// (cost, projected gradient norms, the loss-corrected and Jacobi-scaled Jacobian, the implicit Schur
// product on random vectors, the preconditioner blocks, the LM step with every linear solver), and
// the CPU reference against the BAL-shaped CPU engine where both take a problem.
#include <gtest/gtest.h>

#include <ceres/manifold.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "ba_engine.h"
#include "ba_layout.h"
#include "ceres_cuda/colmap_reprojection_error.h"
#include "ceres_cuda/solve.h"
#include "general_problems.h"
#include "schur_structure.h"

namespace {

using namespace ceres_cuda::detail;

EngineInspection* inspect(const std::unique_ptr<BaEngine>& engine) {
  return dynamic_cast<EngineInspection*>(engine.get());
}
using general_test::Shape;

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0.0, m = 0.0;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    d = std::max(d, std::fabs(a[k] - b[k]));
    m = std::max(m, std::fabs(b[k]));
  }
  return d / std::max(m, 1e-300);
}

EngineOptions engine_options(ceres::LinearSolverType solver, ceres::PreconditionerType preconditioner,
                             ExplicitSchurMethod explicit_schur = ExplicitSchurMethod::Auto,
                             bool interleaved_schur_product = true) {
  EngineOptions o;
  o.explicit_schur = explicit_schur;
  o.interleaved_schur_product = interleaved_schur_product;
  o.linear_solver = solver;
  o.preconditioner = preconditioner;
  o.num_threads = 2;
  return o;
}

void compare_engines(const SchurStructure& s, ceres::LinearSolverType solver, ceres::PreconditionerType preconditioner,
                     ExplicitSchurMethod explicit_schur = ExplicitSchurMethod::Auto,
                     bool interleaved_schur_product = true) {
  const char* method = explicit_schur == ExplicitSchurMethod::Rows    ? "rows"
                       : explicit_schur == ExplicitSchurMethod::Pairs ? "pairs"
                       : explicit_schur == ExplicitSchurMethod::Syrk  ? "syrk"
                                                                      : "the engine's choice";
  SCOPED_TRACE(std::string(ceres::LinearSolverTypeToString(solver)) + " " +
               ceres::PreconditionerTypeToString(preconditioner) + " explicit S by " + method +
               (interleaved_schur_product ? "" : ", the Schur product on JacobianCells' layout"));
  const EngineOptions o = engine_options(solver, preconditioner, explicit_schur, interleaved_schur_product);
  auto cpu = make_general_cpu_engine(s, o);
  auto gpu = make_general_cuda_engine(s, o);
  double cpu_cost = 0, gpu_cost = 0;
  ASSERT_TRUE(cpu->evaluate_at_x(&cpu_cost));
  ASSERT_TRUE(gpu->evaluate_at_x(&gpu_cost));
  // Cost functions on CPU threads give the CPU engine's bits; the GPU's evaluation of the library's
  // cost functions rounds otherwise (contracted multiply-adds, the costs summed as a tree).
  const bool device_evaluated = !s.families.empty() && s.families.front().model != CostModel::Host;
  const double evaluation_tolerance = device_evaluated ? 1e-12 : 0.0;
  EXPECT_NEAR(gpu_cost, cpu_cost, evaluation_tolerance * cpu_cost);
  double cn, cm, gn, gm;
  ASSERT_TRUE(cpu->gradient_norms(&cn, &cm));
  ASSERT_TRUE(gpu->gradient_norms(&gn, &gm));
  EXPECT_NEAR(gn, cn, 1e-12 * cn);
  EXPECT_NEAR(gm, cm, 1e-12 * cm);
  for (BaEngine* e : {cpu.get(), gpu.get()}) {
    e->compute_jacobi_scaling();
    e->apply_jacobi_scaling();
  }
  EXPECT_LE(relative_difference(inspect(gpu)->jacobian(), inspect(cpu)->jacobian()), std::max(1e-15, evaluation_tolerance));
  for (const double radius : {1e4, 1e-2}) {
    const StepResult c = cpu->solve_step(radius, false);
    const StepResult g = gpu->solve_step(radius, false);
    EXPECT_EQ(static_cast<int>(g.termination), static_cast<int>(c.termination));
    EXPECT_NEAR(g.linear_iterations, c.linear_iterations, 1);
    EXPECT_NEAR(g.model_cost_change, c.model_cost_change, 1e-8 * std::fabs(c.model_cost_change));
    if (solver == ceres::ITERATIVE_SCHUR)
      EXPECT_LT(relative_difference(inspect(gpu)->preconditioner_blocks(), inspect(cpu)->preconditioner_blocks()), 1e-10);
    EXPECT_LT(relative_difference(inspect(gpu)->delta(), inspect(cpu)->delta()), 1e-6);
    std::mt19937 rng(7);
    std::normal_distribution<double> n(0.0, 1.0);
    std::vector<double> x(s.f_tangent_size);
    for (double& v : x) v = n(rng);
    EXPECT_LT(relative_difference(inspect(gpu)->schur_product(x), inspect(cpu)->schur_product(x)), 1e-13);
  }
  double cpu_candidate = 0, gpu_candidate = 0;
  ASSERT_TRUE(cpu->evaluate_candidate(&cpu_candidate));
  ASSERT_TRUE(gpu->evaluate_candidate(&gpu_candidate));
  EXPECT_NEAR(gpu_candidate, cpu_candidate, 1e-9 * cpu_candidate);
  EXPECT_NEAR(gpu->delta_norm(), cpu->delta_norm(), 1e-6 * cpu->delta_norm());
}

SchurStructure analyzed(general_test::GeneralProblem& g, bool ordered) {
  SchurStructure s;
  const std::string reason = analyze_schur_structure(
      general_test::options_for(g, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 5, ordered), g.problem.get(), &s);
  EXPECT_EQ(reason, "");
  return s;
}

TEST(GeneralGpuEngine, PiecesMatchTheCpuEngine) {
  REQUIRE_CUDA_DEVICE();
  const ceres_cuda::BALProblem scene = general_test::random_scene(8, 300, 11);
  std::vector<std::pair<const char*, Shape>> shapes;
  Shape split;
  shapes.emplace_back("quaternion, translation, intrinsics, point", split);
  Shape priors;
  priors.prior = general_test::Prior::Pose;
  priors.fix_k2 = true;
  priors.loss = general_test::Loss::Cauchy;
  shapes.emplace_back("pose priors, SubsetManifold, Cauchy", priors);
  Shape shared;
  shared.shared_intrinsics = true;
  shared.point = general_test::PointKind::Homogeneous;
  shared.constant_poses = 1;
  shapes.emplace_back("shared intrinsics, SphereManifold points, a constant pose", shared);
  Shape pose7;
  pose7.rotation = general_test::Rotation::Pose7;
  pose7.point = general_test::PointKind::InverseDepth;
  shapes.emplace_back("ProductManifold poses, inverse depth", pose7);
  Shape mixed;
  mixed.mixed = true;
  mixed.loss = general_test::Loss::Huber;
  mixed.scaled_translation = true;
  shapes.emplace_back("mixed residual sizes, a user's manifold, Huber", mixed);
  Shape library;
  library.library_cost = true;
  library.prior = general_test::Prior::Pose;
  library.shared_intrinsics = true;
  library.fix_k2 = true;
  library.constant_poses = 1;
  library.loss = general_test::Loss::Huber;
  shapes.emplace_back("QuaternionSnavelyReprojectionError on the GPU, pose priors on the CPU, SubsetManifold", library);
  Shape library_mixed;
  library_mixed.library_cost = true;
  library_mixed.mixed = true;
  library_mixed.constant_point_stride = 5;
  library_mixed.loss = general_test::Loss::Cauchy;
  shapes.emplace_back("QuaternionSnavelyReprojectionError, mixed residual sizes, Cauchy", library_mixed);
  for (auto& [name, shape] : shapes) {
    SCOPED_TRACE(name);
    general_test::GeneralProblem g = general_test::build(scene, shape);
    const SchurStructure s = analyzed(g, true);
    compare_engines(s, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI);
    compare_engines(s, ceres::ITERATIVE_SCHUR, ceres::JACOBI);
    compare_engines(s, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, ExplicitSchurMethod::Auto, false);
    compare_engines(s, ceres::DENSE_SCHUR, ceres::JACOBI);
    compare_engines(s, ceres::SPARSE_SCHUR, ceres::JACOBI);
    // The problems here are small enough for syrk; the pairs and block rows that large ones take,
    // checked too.
    compare_engines(s, ceres::DENSE_SCHUR, ceres::JACOBI, ExplicitSchurMethod::Rows);
    compare_engines(s, ceres::SPARSE_SCHUR, ceres::JACOBI, ExplicitSchurMethod::Pairs);
    compare_engines(s, ceres::SPARSE_SCHUR, ceres::JACOBI, ExplicitSchurMethod::Syrk);
  }
}

// Points seen by up to 40 images: the Schur product's point pass takes an e-block of more than 32 rows
// in rounds of a warp's lanes (interleaved_schur_kernels.cuh).
TEST(GeneralGpuEngine, LongEBlocksMatchTheCpuEngine) {
  REQUIRE_CUDA_DEVICE();
  const ceres_cuda::BALProblem scene = general_test::random_scene(40, 60, 17, 40, 20);
  Shape shape;
  shape.prior = general_test::Prior::Pose;
  shape.shared_intrinsics = true;
  general_test::GeneralProblem g = general_test::build(scene, shape);
  const SchurStructure s = analyzed(g, true);
  compare_engines(s, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI);
  compare_engines(s, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, ExplicitSchurMethod::Auto, false);
}

// SnavelyReprojectionError's residuals in the general structure (here for a constant camera, which the
// BAL-shaped engines also take, and a Huber loss) are a device family: the GPU evaluates them.
TEST(GeneralGpuEngine, EvaluatesSnavelyReprojectionErrorOnTheDevice) {
  REQUIRE_CUDA_DEVICE();
  ceres_cuda::BALProblem bal = general_test::random_scene(7, 250, 13);
  auto problem = ba_test::make_problem(bal, false, new ceres::HuberLoss(1.0));
  problem->SetParameterBlockConstant(bal.mutable_camera(2));
  SchurStructure s;
  ASSERT_EQ(analyze_schur_structure(ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI), problem.get(), &s),
            "");
  ASSERT_EQ(s.families.size(), 1u);
  EXPECT_EQ(s.families[0].model, CostModel::Snavely);
  EXPECT_EQ(s.families[0].loss.kind, LossKind::Huber);
  compare_engines(s, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI);
  compare_engines(s, ceres::DENSE_SCHUR, ceres::JACOBI);
}

// A COLMAP model of a BAL scene with its cameras in turn SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL
// and OPENCV (the RADIAL parameters carried over, the others zero), as a problem of
// ColmapReprojectionError residuals: qvec on QuaternionManifold, a loss shared by all.
struct ColmapProblem {
  ceres_cuda::ColmapModel model;
  std::unique_ptr<ceres::LossFunction> loss;
  std::unique_ptr<ceres::Problem> problem;
};

std::unique_ptr<ColmapProblem> colmap_problem(const ceres_cuda::BALProblem& bal, ceres::LossFunction* loss) {
  using M = ceres_cuda::ColmapCameraModel;
  auto p = std::make_unique<ColmapProblem>();
  p->model = ceres_cuda::colmap_model_from_bal(bal);
  int k = 0;
  for (auto& [id, camera] : p->model.cameras) {
    const std::vector<double> r = camera.params;  // f, cx, cy, k1, k2
    const M models[5] = {M::SimplePinhole, M::Pinhole, M::SimpleRadial, M::Radial, M::OpenCV};
    camera.model = models[k++ % 5];
    switch (camera.model) {
      case M::SimplePinhole: camera.params = {r[0], r[1], r[2]}; break;
      case M::Pinhole: camera.params = {r[0], r[0], r[1], r[2]}; break;
      case M::SimpleRadial: camera.params = {r[0], r[1], r[2], r[3]}; break;
      case M::Radial: break;
      default: camera.params = {r[0], r[0], r[1], r[2], r[3], r[4], 1e-4, -1e-4}; break;
    }
  }
  p->loss.reset(loss);
  ceres::Problem::Options options;
  options.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  options.manifold_ownership = ceres::TAKE_OWNERSHIP;
  p->problem = std::make_unique<ceres::Problem>(options);
  for (auto& [id, image] : p->model.images) {
    ceres_cuda::ColmapCamera& camera = p->model.cameras.at(image.camera_id);
    for (const ceres_cuda::ColmapImagePoint& seen : image.points2D) {
      if (seen.point3D_id == ceres_cuda::kColmapNoPoint3D) continue;
      p->problem->AddResidualBlock(ceres_cuda::ColmapReprojectionError::Create(camera.model, seen.x, seen.y),
                                   p->loss.get(), image.qvec.data(), image.tvec.data(), camera.params.data(),
                                   p->model.points3D.at(seen.point3D_id).xyz.data());
    }
    p->problem->SetManifold(image.qvec.data(), new ceres::QuaternionManifold);
  }
  return p;
}

// ceres_cuda::Solve and ceres::Solve from copies of a COLMAP problem: the same LM iterations.
void expect_colmap_solve_matches_ceres(ceres_cuda::Backend backend) {
  const ceres_cuda::BALProblem bal = general_test::random_scene(10, 300, 17);
  auto ours = colmap_problem(bal, new ceres::CauchyLoss(2.0)), theirs = colmap_problem(bal, new ceres::CauchyLoss(2.0));
  for (auto* p : {ours.get(), theirs.get()})
    p->problem->SetParameterBlockConstant(p->model.images.begin()->second.tvec.data());
  ceres::Solver::Options options = ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI);
  options.max_num_iterations = 8;
  ceres::Solver::Summary reference, summary;
  ceres::Solve(options, theirs->problem.get(), &reference);
  ceres_cuda::SolveDetails details;
  ceres_cuda::Solve(options, ours->problem.get(), &summary, backend, &details);
  EXPECT_EQ(details.path, backend == ceres_cuda::Backend::Cuda ? ceres_cuda::SolveDetails::Path::GenericGpu
                                                               : ceres_cuda::SolveDetails::Path::Cpu)
      << details.fallback_reason;
  general_test::Match m;
  m.pcg_slack = 1;
  general_test::expect_same_solve(reference, summary, m);
}

// ColmapReprojectionError's five camera models are five device families; the GPU engine evaluates
// them as the CPU engine does (one image constant, a Cauchy loss), and a whole solve follows Ceres'.
TEST(GeneralGpuEngine, EvaluatesColmapReprojectionErrorOnTheDevice) {
  const ceres_cuda::BALProblem bal = general_test::random_scene(10, 300, 17);
  auto p = colmap_problem(bal, new ceres::CauchyLoss(2.0));
  p->problem->SetParameterBlockConstant(p->model.images.begin()->second.tvec.data());
  const ceres::Solver::Options options = ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI);
  SchurStructure s;
  ASSERT_EQ(analyze_schur_structure(options, p->problem.get(), &s), "");
  std::vector<CostModel> models;
  for (const ResidualFamily& family : s.families) models.push_back(family.model);
  std::sort(models.begin(), models.end());
  EXPECT_EQ(models, (std::vector<CostModel>{CostModel::ColmapSimplePinhole, CostModel::ColmapPinhole,
                                            CostModel::ColmapSimpleRadial, CostModel::ColmapRadial,
                                            CostModel::ColmapOpenCV}));
  for (const ResidualFamily& family : s.families) EXPECT_EQ(family.loss.kind, LossKind::Cauchy);
  REQUIRE_CUDA_DEVICE();
  compare_engines(s, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI);
  compare_engines(s, ceres::DENSE_SCHUR, ceres::JACOBI);
  expect_colmap_solve_matches_ceres(ceres_cuda::Backend::Cuda);
}

TEST(GeneralCpuEngine, SolvesColmapReprojectionErrorsAsCeres) {
  expect_colmap_solve_matches_ceres(ceres_cuda::Backend::Cpu);
}

// On a BAL problem both CPU engines apply: the same cost, gradient, LM step and candidate.
TEST(GeneralCpuEngine, MatchesTheBalEngineOnBalProblems) {
  const ceres_cuda::BALProblem bal = general_test::random_scene(6, 200, 12);
  ceres_cuda::BALProblem copy = bal;
  auto problem = ba_test::make_problem(copy, true, new ceres::HuberLoss(1.0));
  problem->SetParameterBlockConstant(copy.mutable_camera(1));
  // ITERATIVE_SCHUR, the one linear solver of the BAL-shaped engines.
  for (const ceres::LinearSolverType solver : {ceres::ITERATIVE_SCHUR}) {
    const ceres::Solver::Options options = ba_test::ba_options(solver, ceres::SCHUR_JACOBI);
    BaLayout layout;
    ASSERT_EQ(analyze_problem(options, problem.get(), &layout), "");
    SchurStructure s;
    ASSERT_EQ(analyze_schur_structure(options, problem.get(), &s), "");
    const EngineOptions o = engine_options(solver, ceres::SCHUR_JACOBI);
    auto bal_engine = make_cpu_engine(layout, o);
    auto general = make_general_cpu_engine(s, o);
    double a = 0, b = 0;
    ASSERT_TRUE(bal_engine->evaluate_at_x(&a));
    ASSERT_TRUE(general->evaluate_at_x(&b));
    EXPECT_NEAR(b, a, 1e-12 * a);
    double an, am, bn, bm;
    ASSERT_TRUE(bal_engine->gradient_norms(&an, &am));
    ASSERT_TRUE(general->gradient_norms(&bn, &bm));
    EXPECT_NEAR(bn, an, 1e-9 * an);
    EXPECT_NEAR(bm, am, 1e-9 * am);
    for (BaEngine* e : {bal_engine.get(), general.get()}) {
      e->compute_jacobi_scaling();
      e->apply_jacobi_scaling();
    }
    const StepResult x = bal_engine->solve_step(1e3, false);
    const StepResult y = general->solve_step(1e3, false);
    EXPECT_EQ(y.linear_iterations, x.linear_iterations);
    EXPECT_NEAR(y.model_cost_change, x.model_cost_change, 1e-8 * std::fabs(x.model_cost_change));
    ASSERT_TRUE(bal_engine->evaluate_candidate(&a));
    ASSERT_TRUE(general->evaluate_candidate(&b));
    EXPECT_NEAR(b, a, 1e-9 * a);
    EXPECT_NEAR(general->delta_norm(), bal_engine->delta_norm(), 1e-8 * bal_engine->delta_norm());
  }
}

}  // namespace
