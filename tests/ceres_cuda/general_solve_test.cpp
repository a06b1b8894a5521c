// ceres_cuda::Solve's general engine against ceres::Solve on bundle-adjustment problems in the shapes
// real SfM/SLAM code builds (general_problems.h): quaternion poses on manifolds, shared and partly fixed
// intrinsics, priors, homogeneous and inverse-depth points, constant blocks, losses, residuals of
// several sizes, product, user-written and deprecated LocalParameterization manifolds. Each case is
// solved twice from identical copies, with ceres::Solve and with ceres_cuda::Solve, and compared LM
// iteration by LM iteration. The CPU engine runs everywhere; the GPU tests where a device exists.
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "ceres_cuda/solve.h"
#include "general_problems.h"

namespace {

using ceres_cuda::Backend;
using ceres_cuda::SolveDetails;
using namespace general_test;

// Scenes, built once per process. nullptr: the data file is absent (the test skips).
const ceres_cuda::BALProblem* tiny() { return shared_bal("problem-3-7-pre.txt"); }
const ceres_cuda::BALProblem* ladybug() { return shared_bal("problem-49-7776-pre.txt"); }
const ceres_cuda::BALProblem* ladybug_subset() {  // 12 cameras, 800 points, 3867 observations
  static const auto subset =
      ladybug() ? std::make_unique<ceres_cuda::BALProblem>(bal_subset(*ladybug(), 12, 800)) : nullptr;
  return subset.get();
}
const ceres_cuda::BALProblem* dubrovnik_subset() {  // 16 cameras, 3000 points, 18098 observations
  static const auto* dubrovnik = shared_bal("problem-16-22106-pre.txt.bz2");
  static const auto subset =
      dubrovnik ? std::make_unique<ceres_cuda::BALProblem>(bal_subset(*dubrovnik, 16, 3000)) : nullptr;
  return subset.get();
}
template <std::uint32_t kSeed>
const ceres_cuda::BALProblem* synthetic() {  // 10 cameras, 400 points, each seen by 2 to 5 of them
  static const ceres_cuda::BALProblem scene = random_scene(10, 400, kSeed);
  return &scene;
}

const ceres_cuda::BALProblem* many_views() {  // 24 cameras, 60 points, each seen by 8 to 12 of them
  static const ceres_cuda::BALProblem scene = random_scene(24, 60, 31, 12, 8);
  return &scene;
}

struct Case {
  std::string name;
  const ceres_cuda::BALProblem* (*scene)();
  Shape shape;
  ceres::LinearSolverType type = ceres::ITERATIVE_SCHUR;
  ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI;
  int iterations = 10;
  bool ordered = false;  // an explicit linear_solver_ordering (points group 0), else Ceres' choice
  Match match;
};

Shape shape(std::function<void(Shape&)> edit) {
  Shape s;
  edit(s);
  return s;
}

// By default every LM iteration is compared closely (Match). Where rounding alone moves Ceres' own
// solve after a few steps (long PCG runs on the real files, rejected steps that are far off; see
// CeresAgreesWithItself), only the first n are, and the later successful ones within 1e-3.
Match first_steps(int n) {
  Match m;
  m.strict_steps = n;
  return m;
}

const std::vector<Case>& cases() {
  using R = Rotation;
  using P = PointKind;
  static const std::vector<Case> all = {
      // a. quaternion + translation + per-image intrinsics + point, on the real files.
      {"QuaternionLadybug", ladybug, Shape{}, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 6, true, first_steps(2)},
      {"QuaternionDubrovnikSubset", dubrovnik_subset, Shape{}, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 6, false,
       first_steps(2)},
      {"EigenQuaternionLadybugSubset", ladybug_subset, shape([](Shape& s) { s.rotation = R::EigenQuaternion; })},
      {"EigenQuaternionLadybugSubsetJacobi", ladybug_subset, shape([](Shape& s) { s.rotation = R::EigenQuaternion; }),
       ceres::ITERATIVE_SCHUR, ceres::JACOBI, 10, false, first_steps(1)},
      {"EigenQuaternionRandomDense", synthetic<11>, shape([](Shape& s) { s.rotation = R::EigenQuaternion; }),
       ceres::DENSE_SCHUR, ceres::JACOBI},
      // b. one intrinsics block shared by all images.
      {"SharedIntrinsicsRandom", synthetic<3>, shape([](Shape& s) { s.shared_intrinsics = true; })},
      {"SharedIntrinsicsTinyDense", tiny, shape([](Shape& s) { s.shared_intrinsics = true; }), ceres::DENSE_SCHUR,
       ceres::JACOBI},
      // Added in reverse order, the same problem makes Ceres eliminate a pose block of each camera (3
      // e-blocks; the points are f-blocks). Only an exact solver: PCG on this system is so ill-conditioned
      // that Ceres' own steps move by 2 % when it numbers the f-blocks otherwise.
      {"SharedIntrinsicsTinyReversedDense", tiny, shape([](Shape& s) {
         s.shared_intrinsics = true;
         s.reverse_order = true;
       }),
       ceres::DENSE_SCHUR, ceres::JACOBI},
      // c. k2 held by SubsetManifold(3, {2}).
      {"FixedK2RandomJacobi", synthetic<3>, shape([](Shape& s) { s.fix_k2 = true; }), ceres::ITERATIVE_SCHUR,
       ceres::JACOBI},
      {"FixedK2SharedLadybugSubsetSparse", ladybug_subset, shape([](Shape& s) {
         s.fix_k2 = true;
         s.shared_intrinsics = true;
       }),
       ceres::SPARSE_SCHUR, ceres::JACOBI},
      // d. priors: residuals without an e-block.
      {"PosePriorsOrdered", synthetic<5>, shape([](Shape& s) { s.prior = Prior::Pose; }), ceres::ITERATIVE_SCHUR,
       ceres::SCHUR_JACOBI, 10, true},
      {"TranslationPriorsLadybugSubsetSparse", ladybug_subset, shape([](Shape& s) { s.prior = Prior::Translation; }),
       ceres::SPARSE_SCHUR, ceres::JACOBI},
      // e. homogeneous points on a sphere.
      {"HomogeneousLadybugSubset", ladybug_subset, shape([](Shape& s) { s.point = P::Homogeneous; })},
      {"HomogeneousDynamicSphereDense", synthetic<3>, shape([](Shape& s) { s.point = P::HomogeneousDynamic; }),
       ceres::DENSE_SCHUR, ceres::JACOBI},
      // f. constant poses (whose priors become fixed cost) and constant points.
      {"ConstantPosesAndPoints", synthetic<7>, shape([](Shape& s) {
         s.constant_poses = 2;
         s.constant_point_stride = 7;
         s.prior = Prior::Pose;
       })},
      {"ConstantPosesAndPointsSparse", synthetic<7>, shape([](Shape& s) {
         s.constant_poses = 1;
         s.constant_point_stride = 3;
       }),
       ceres::SPARSE_SCHUR, ceres::JACOBI, 10, true},
      // g. losses.
      {"HuberLadybugSubset", ladybug_subset, shape([](Shape& s) { s.loss = Loss::Huber; }), ceres::ITERATIVE_SCHUR,
       ceres::SCHUR_JACOBI, 10, false, first_steps(7)},
      {"CauchyRandomJacobi", synthetic<13>, shape([](Shape& s) { s.loss = Loss::Cauchy; }), ceres::ITERATIVE_SCHUR,
       ceres::JACOBI},
      // h. reprojections (2), 3-D measurements with a shared sensor offset (3), pose and point priors.
      {"MixedResidualsOrdered", synthetic<3>, shape([](Shape& s) {
         s.mixed = true;
         s.prior = Prior::Pose;
       }),
       ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, true},
      {"MixedResidualsDense", synthetic<3>, shape([](Shape& s) {
         s.mixed = true;
         s.prior = Prior::Translation;
       }),
       ceres::DENSE_SCHUR, ceres::JACOBI},
      // i. random structures with ProductManifold poses, a user-written manifold, a LocalParameterization.
      {"Pose7ProductManifold", synthetic<17>, shape([](Shape& s) {
         s.rotation = R::Pose7;
         s.prior = Prior::Pose;
       })},
      {"Pose7ProductManifoldSparse", synthetic<19>, shape([](Shape& s) {
         s.rotation = R::Pose7;
         s.prior = Prior::Translation;
         s.mixed = true;
         s.loss = Loss::Huber;
       }),
       ceres::SPARSE_SCHUR, ceres::JACOBI},
      {"UserManifoldOnTranslations", synthetic<3>, shape([](Shape& s) { s.scaled_translation = true; })},
      {"QuaternionLocalParameterization", synthetic<23>,
       shape([](Shape& s) { s.rotation = R::QuaternionParameterization; }), ceres::ITERATIVE_SCHUR, ceres::JACOBI},
      {"QuaternionLocalParameterizationSparse", synthetic<23>,
       shape([](Shape& s) { s.rotation = R::QuaternionParameterization; }), ceres::SPARSE_SCHUR, ceres::JACOBI},
      {"EverythingAtOnce", synthetic<29>, shape([](Shape& s) {
         s.shared_intrinsics = true;
         s.fix_k2 = true;
         s.point = P::Homogeneous;
         s.scaled_translation = true;
         s.prior = Prior::Pose;
         s.constant_poses = 1;
         s.constant_point_stride = 11;
         s.loss = Loss::Cauchy;
       })},
      // Few points, each seen by 8 to 12 of 24 cameras: Ceres' independent set is a block of each camera
      // (24 e-blocks), the points are f-blocks.
      {"CameraBlocksEliminated", many_views, Shape{}},
      {"CameraBlocksEliminatedJacobi", many_views, Shape{}, ceres::ITERATIVE_SCHUR, ceres::JACOBI},
      {"CameraBlocksEliminatedDense", many_views, Shape{}, ceres::DENSE_SCHUR, ceres::JACOBI},
      // k. the library's QuaternionSnavelyReprojectionError, which the GPU evaluates, alone and beside
      // the user's cost functions (priors, 3-D measurements) and losses.
      {"LibraryCostLadybug", ladybug, shape([](Shape& s) { s.library_cost = true; }), ceres::ITERATIVE_SCHUR,
       ceres::SCHUR_JACOBI, 6, true, first_steps(2)},
      {"LibraryCostHuberLadybugSubsetSparse", ladybug_subset, shape([](Shape& s) {
         s.library_cost = true;
         s.loss = Loss::Huber;
       }),
       ceres::SPARSE_SCHUR, ceres::JACOBI},
      {"LibraryCostPriorsSharedFixedK2Cauchy", synthetic<31>, shape([](Shape& s) {
         s.library_cost = true;
         s.prior = Prior::Pose;
         s.shared_intrinsics = true;
         s.fix_k2 = true;
         s.constant_poses = 1;
         s.loss = Loss::Cauchy;
       })},
      {"LibraryCostMixedResidualsDense", synthetic<37>, shape([](Shape& s) {
         s.library_cost = true;
         s.mixed = true;
         s.constant_point_stride = 7;
       }),
       ceres::DENSE_SCHUR, ceres::JACOBI},
      {"LibraryCostLocalParameterizationJacobi", synthetic<41>, shape([](Shape& s) {
         s.library_cost = true;
         s.rotation = R::QuaternionParameterization;
       }),
       ceres::ITERATIVE_SCHUR, ceres::JACOBI},
      // j. inverse depth: 1-value e-blocks.
      {"InverseDepthRandom", synthetic<3>, shape([](Shape& s) { s.point = P::InverseDepth; })},
      {"InverseDepthLadybugSubsetDense", ladybug_subset, shape([](Shape& s) { s.point = P::InverseDepth; }),
       ceres::DENSE_SCHUR, ceres::JACOBI, 10, true},
  };
  return all;
}

std::string case_name(const testing::TestParamInfo<Case>& info) { return info.param.name; }
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Builds the case twice; solves the first copy with ceres::Solve (which must make progress: the
// builders' problems are sound) and returns both copies and the reference summary.
struct Solved {
  GeneralProblem reference_problem, problem;
  ceres::Solver::Summary reference;
  ceres::Solver::Options options;  // for `problem`
};
Solved solve_reference(const Case& c, const ceres_cuda::BALProblem& scene) {
  Solved s{build(scene, c.shape), build(scene, c.shape), {}, {}};
  ceres::Solve(options_for(s.reference_problem, c.type, c.preconditioner, c.iterations, c.ordered),
               s.reference_problem.problem.get(), &s.reference);
  EXPECT_NE(s.reference.termination_type, ceres::FAILURE) << s.reference.message;
  EXPECT_LT(s.reference.final_cost, s.reference.initial_cost);
  s.options = options_for(s.problem, c.type, c.preconditioner, c.iterations, c.ordered);
  return s;
}

class GeneralCpuSolve : public testing::TestWithParam<Case> {};
class GeneralGpuSolve : public testing::TestWithParam<Case> {};
class CeresAgreesWithItself : public testing::TestWithParam<Case> {};

TEST_P(GeneralCpuSolve, MatchesCeresStepByStep) {
  const Case& c = GetParam();
  const ceres_cuda::BALProblem* scene = c.scene();
  if (!scene) GTEST_SKIP() << "BAL file not found under " << test_support::data_dir() << " (set CUDA_SOLVERS_DATA)";
  Solved s = solve_reference(c, *scene);
  ceres::Solver::Summary ours;
  SolveDetails details;
  ceres_cuda::Solve(s.options, s.problem.problem.get(), &ours, Backend::Cpu, &details);
  EXPECT_EQ(details.path, SolveDetails::Path::Cpu)
      << ceres_cuda::to_string(details.path) << ": " << details.fallback_reason;
  expect_same_solve(s.reference, ours, c.match);
}

// On the GPU the sums run in another order than on the CPU: a PCG stop test that lands on its
// threshold may stop one iteration earlier or later.
TEST_P(GeneralGpuSolve, MatchesCeresStepByStep) {
  REQUIRE_CUDA_DEVICE();
  const Case& c = GetParam();
  const ceres_cuda::BALProblem* scene = c.scene();
  if (!scene) GTEST_SKIP() << "BAL file not found under " << test_support::data_dir() << " (set CUDA_SOLVERS_DATA)";
  Solved s = solve_reference(c, *scene);
  ceres::Solver::Summary ours;
  SolveDetails details;
  ceres_cuda::Solve(s.options, s.problem.problem.get(), &ours, Backend::Cuda, &details);
  EXPECT_TRUE(details.path == SolveDetails::Path::GenericGpu || details.path == SolveDetails::Path::FastGpu)
      << ceres_cuda::to_string(details.path) << ": " << details.fallback_reason;
  Match m = c.match;
  m.pcg_slack = 1;
  expect_same_solve(s.reference, ours, m);
}

// The premise of each case's tolerances: ceres::Solve on the same problem with its residuals added in
// the other order (so every sum in another order) follows the reference ten times closer than
// ceres_cuda must. Where it does not, the case asks more than rounding allows.
TEST_P(CeresAgreesWithItself, SummedInAnotherOrder) {
  const Case& c = GetParam();
  const ceres_cuda::BALProblem* scene = c.scene();
  if (!scene) GTEST_SKIP() << "BAL file not found under " << test_support::data_dir() << " (set CUDA_SOLVERS_DATA)";
  Solved s = solve_reference(c, *scene);
  Shape reversed = c.shape;
  reversed.reverse_order = !reversed.reverse_order;
  GeneralProblem other = build(*scene, reversed);
  ceres::Solver::Summary summary;
  ceres::Solve(options_for(other, c.type, c.preconditioner, c.iterations, c.ordered), other.problem.get(), &summary);
  if (summary.linear_solver_ordering_used != s.reference.linear_solver_ordering_used)
    GTEST_SKIP() << "in the other order Ceres eliminates other blocks: another linear system";
  Match m = c.match;
  m.cost *= 0.1;  // with room to spare: ceres_cuda's sums differ from Ceres' at least as much
  expect_same_solve(s.reference, summary, m);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GeneralCpuSolve, testing::ValuesIn(cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Shapes, GeneralGpuSolve, testing::ValuesIn(cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Shapes, CeresAgreesWithItself, testing::ValuesIn(cases()), case_name);

}  // namespace
