// ceres_cuda::Solve on problems at the edge of what the Schur solvers take, against ceres::Solve:
// a residual on two points (with a user ordering that makes both e-blocks: Ceres refuses it; without
// one: Ceres picks e-blocks that are not all the points), a manifold whose Plus fails, non-finite
// parameter values. ceres_cuda::Solve must not throw or crash, and ends as Ceres does. Each test runs
// on the CPU engine, and on the GPU where a device exists.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <regex>

#include <gtest/gtest.h>

#include "ceres_cuda/solve.h"
#include "general_problems.h"

namespace {

using ceres_cuda::Backend;
using ceres_cuda::SolveDetails;
using namespace general_test;

const ceres_cuda::BALProblem& scene() {
  static const ceres_cuda::BALProblem s = random_scene(10, 400, 3);
  return s;
}

// A distance constraint between two points: a residual with two would-be e-blocks.
struct PointOffset {
  template <typename T>
  bool operator()(const T* a, const T* b, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = (a[k] - b[k] - T(0.5)) * T(10.0);
    return true;
  }
};

GeneralProblem with_point_offset() {
  GeneralProblem g = build(scene(), Shape{});
  g.problem->AddResidualBlock(autodiff<3, 3, 3>(PointOffset{}), nullptr, g.points[0], g.points[1]);
  return g;
}

// R^3 whose Plus fails for steps with a coordinate strictly between `limit` and `upper`. On scene(),
// with (0.05, 1), the first six LM steps move some translation by more than 0.05 and fail, while the
// steps Ceres passes to Plus for its gradient test, Plus(x, -gradient), stay longer than 1 over 10
// iterations. With (0, 1e6) that gradient test fails at once.
class FailingPlusManifold final : public ceres::Manifold {
 public:
  explicit FailingPlusManifold(double limit, double upper = 1.0) : limit_(limit), upper_(upper) {}
  int AmbientSize() const override { return 3; }
  int TangentSize() const override { return 3; }
  bool Plus(const double* x, const double* delta, double* x_plus_delta) const override {
    for (int i = 0; i < 3; ++i) {
      if (std::fabs(delta[i]) > limit_ && std::fabs(delta[i]) < upper_) return false;
      x_plus_delta[i] = x[i] + delta[i];
    }
    return true;
  }
  bool PlusJacobian(const double*, double* jacobian) const override {
    for (int i = 0; i < 9; ++i) jacobian[i] = i % 4 == 0 ? 1.0 : 0.0;
    return true;
  }
  bool Minus(const double* y, const double* x, double* y_minus_x) const override {
    for (int i = 0; i < 3; ++i) y_minus_x[i] = y[i] - x[i];
    return true;
  }
  bool MinusJacobian(const double*, double* jacobian) const override { return PlusJacobian(nullptr, jacobian); }

 private:
  double limit_, upper_;
};

// Ceres' messages name parameter blocks by address, which differs between the two copies.
std::string without_addresses(const std::string& message) {
  return std::regex_replace(message, std::regex("0x[0-9a-fA-F]+"), "0x...");
}

// Equal, NaN equal to NaN: a failed solve leaves the parameters as they were.
bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); });
}

class BadInput : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::Cuda) REQUIRE_CUDA_DEVICE();
  }
  // Solves `ours` with ceres_cuda::Solve on this test's backend; nothing may be thrown.
  ceres::Solver::Summary solve(const ceres::Solver::Options& options, GeneralProblem& ours, SolveDetails* details) {
    ceres::Solver::Summary summary;
    EXPECT_NO_THROW(ceres_cuda::Solve(options, ours.problem.get(), &summary, GetParam(), details));
    return summary;
  }
  // The engine that should have run a problem it takes.
  void expect_engine(const SolveDetails& details) {
    if (GetParam() == Backend::Cpu)
      EXPECT_EQ(details.path, SolveDetails::Path::Cpu)
          << ceres_cuda::to_string(details.path) << ": " << details.fallback_reason;
    else
      EXPECT_TRUE(details.path == SolveDetails::Path::GenericGpu || details.path == SolveDetails::Path::FastGpu)
          << ceres_cuda::to_string(details.path) << ": " << details.fallback_reason;
  }
  Match match() const {
    Match m;
    if (GetParam() == Backend::Cuda) m.pcg_slack = 1;  // the GPU's sums in another order (general_solve_test.cpp)
    return m;
  }
};

TEST_P(BadInput, TwoEBlocksInOneResidualOfAUserOrderingFailLikeCeres) {
  GeneralProblem a = with_point_offset(), b = with_point_offset();
  const std::vector<double> before = b.values();
  ceres::Solver::Summary reference;
  ceres::Solve(options_for(a, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, true), a.problem.get(), &reference);
  ASSERT_EQ(reference.termination_type, ceres::FAILURE);  // "... ordering ... is not an independent set"
  SolveDetails details;
  const ceres::Solver::Summary ours =
      solve(options_for(b, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, true), b, &details);
  EXPECT_EQ(ours.termination_type, ceres::FAILURE) << ours.message;
  EXPECT_EQ(ours.message, reference.message);
  if (details.path == SolveDetails::Path::CeresFallback) {
    EXPECT_FALSE(details.fallback_reason.empty());
  }
  EXPECT_TRUE(same_values(b.values(), before));
}

TEST_P(BadInput, TwoPointResidualWithoutOrderingTakesCeresIndependentSet) {
  // Ceres eliminates a maximal independent set: all points but one of the pair (ordering "399,31").
  GeneralProblem a = with_point_offset(), b = with_point_offset();
  ceres::Solver::Summary reference;
  ceres::Solve(options_for(a, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false), a.problem.get(), &reference);
  ASSERT_NE(reference.termination_type, ceres::FAILURE) << reference.message;
  SolveDetails details;
  const ceres::Solver::Summary ours =
      solve(options_for(b, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false), b, &details);
  expect_engine(details);
  expect_same_solve(reference, ours, match());
}

TEST_P(BadInput, PlusFailingOnSomeStepsRejectsThemLikeCeres) {
  for (const auto type : {ceres::ITERATIVE_SCHUR, ceres::DENSE_SCHUR}) {
    SCOPED_TRACE(ceres::LinearSolverTypeToString(type));
    auto make = [] {
      GeneralProblem g = build(scene(), Shape{});
      auto* m = new FailingPlusManifold(0.05);
      for (double* t : g.translations) g.problem->SetManifold(t, m);
      return g;
    };
    GeneralProblem a = make(), b = make();
    ceres::Solver::Summary reference;
    ceres::Solve(options_for(a, type, ceres::SCHUR_JACOBI, 10, false), a.problem.get(), &reference);
    // The premise: Ceres rejected steps whose Plus failed, as steps of infinite (DBL_MAX) cost, and went on.
    ASSERT_NE(reference.termination_type, ceres::FAILURE) << reference.message;
    ASSERT_GE(reference.num_unsuccessful_steps, 1);
    ASSERT_EQ(reference.iterations[1].cost, DBL_MAX);
    SolveDetails details;
    const ceres::Solver::Summary ours = solve(options_for(b, type, ceres::SCHUR_JACOBI, 10, false), b, &details);
    expect_engine(details);
    expect_same_solve(reference, ours, match());
    EXPECT_EQ(ours.message, reference.message);
  }
}

TEST_P(BadInput, PlusFailingOnTheGradientTestFailsLikeCeres) {
  // Plus fails for every step under 1e6: Ceres' first gradient test, Plus(x, -gradient), fails.
  auto make = [] {
    GeneralProblem g = build(scene(), Shape{});
    auto* m = new FailingPlusManifold(0.0, 1e6);
    for (double* t : g.translations) g.problem->SetManifold(t, m);
    return g;
  };
  GeneralProblem a = make(), b = make();
  const std::vector<double> before = b.values();
  ceres::Solver::Summary reference;
  ceres::Solve(options_for(a, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false), a.problem.get(), &reference);
  ASSERT_EQ(reference.termination_type, ceres::FAILURE);  // "projected_gradient_step = Plus(x, -gradient) failed."
  SolveDetails details;
  const ceres::Solver::Summary ours =
      solve(options_for(b, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false), b, &details);
  EXPECT_EQ(ours.termination_type, ceres::FAILURE) << ours.message;
  EXPECT_EQ(ours.message, reference.message);
  EXPECT_EQ(ours.iterations.size(), reference.iterations.size());
  EXPECT_TRUE(same_values(b.values(), before));
}

TEST_P(BadInput, NonFiniteParametersFailLikeCeres) {
  struct Spoil {
    const char* what;
    void (*apply)(GeneralProblem&);
  };
  const Spoil spoils[] = {
      {"NaN in a point", [](GeneralProblem& g) { g.points[5][1] = NAN; }},
      {"infinity in a constant translation",
       [](GeneralProblem& g) {
         g.translations[0][2] = INFINITY;
         g.problem->SetParameterBlockConstant(g.translations[0]);
       }},
      {"NaN in a quaternion", [](GeneralProblem& g) { g.rotations[3][0] = NAN; }},
      // Ceres names the first in its program's order (the order the residual blocks meet the blocks),
      // here the point of the first residual block, which the engines number after every f-block.
      {"NaN in a point and infinity in a translation met after it",
       [](GeneralProblem& g) {
         std::vector<ceres::ResidualBlockId> ids;
         g.problem->GetResidualBlocks(&ids);
         std::vector<double*> first;
         g.problem->GetParameterBlocksForResidualBlock(ids[0], &first);
         first.back()[1] = NAN;  // the point of the first reprojection (rotation, translation, intrinsics, point)
         for (double* t : g.translations)
           if (std::find(first.begin(), first.end(), t) == first.end()) {
             t[0] = INFINITY;
             break;
           }
       }},
  };
  for (const Spoil& spoil : spoils) {
    SCOPED_TRACE(spoil.what);
    GeneralProblem a = build(scene(), Shape{}), b = build(scene(), Shape{});
    spoil.apply(a);
    spoil.apply(b);
    const std::vector<double> before = b.values();
    ceres::Solver::Summary reference;
    ceres::Solve(options_for(a, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false), a.problem.get(), &reference);
    ASSERT_EQ(reference.termination_type, ceres::FAILURE);  // "ParameterBlock: 0x... has at least one invalid value"
    SolveDetails details;
    const ceres::Solver::Summary ours =
        solve(options_for(b, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false), b, &details);
    EXPECT_EQ(ours.termination_type, ceres::FAILURE) << ours.message;
    EXPECT_EQ(without_addresses(ours.message), without_addresses(reference.message));
    EXPECT_FALSE(ours.IsSolutionUsable());
    EXPECT_TRUE(same_values(b.values(), before));
  }
}

// The tests below replay what ceres_cuda_solve_fuzzer found (fuzz/regressions/ceres_cuda_solve_fuzzer/).

// r = (3 f - 3 e + 3, 3 f - 4 e + 1, 3 f + e - 2): linear, on a 1-value e-block and a 1-value f-block.
struct LinearPair {
  template <typename T>
  bool operator()(const T* e, const T* f, T* r) const {
    r[0] = T(3.0) * f[0] - T(3.0) * e[0] + T(3.0);
    r[1] = T(3.0) * f[0] - T(4.0) * e[0] + T(1.0);
    r[2] = T(3.0) * f[0] + e[0] - T(2.0);
    return true;
  }
};

GeneralProblem linear_pair() {
  GeneralProblem g;
  double* e = g.add_block({-3.0});
  double* f = g.add_block({1.0});
  g.e_blocks = {e};
  g.problem->AddResidualBlock(autodiff<3, 1, 1>(LinearPair{}), nullptr, e, f);
  return g;
}

TEST_P(BadInput, PcgLandingOnTheSolutionIsReportedLikeCeres) {
  // The reduced system has one value: PCG solves it in one iteration, with r = 0 exactly. Ceres' CG
  // has no residual test in an LM step: its second iteration finds rho = r'z = 0 and fails, the LM
  // loop rejects the step as invalid, and after five of them the solve fails. ceres_cuda's CG stopped
  // as converged and took the step. On the CPU ceres_cuda's CG must fail the same way.
  for (const auto preconditioner : {ceres::SCHUR_JACOBI, ceres::JACOBI}) {
    SCOPED_TRACE(ceres::PreconditionerTypeToString(preconditioner));
    GeneralProblem a = linear_pair(), b = linear_pair();
    ceres::Solver::Options options = options_for(a, ceres::ITERATIVE_SCHUR, preconditioner, 10, true);
    options.jacobi_scaling = false;
    ceres::Solver::Summary reference;
    ceres::Solve(options, a.problem.get(), &reference);
    // The premise: Ceres fails this linear problem, every step's CG having failed in its second iteration.
    ASSERT_EQ(reference.termination_type, ceres::FAILURE) << reference.message;
    ASSERT_GE(reference.iterations.size(), 2u);
    ASSERT_EQ(reference.iterations[1].linear_solver_iterations, 2);
    options = options_for(b, ceres::ITERATIVE_SCHUR, preconditioner, 10, true);
    options.jacobi_scaling = false;
    SolveDetails details;
    const ceres::Solver::Summary ours = solve(options, b, &details);
    expect_engine(details);
    if (GetParam() == Backend::Cpu) {
      expect_same_solve(reference, ours, match());
      EXPECT_EQ(ours.message, reference.message);
      continue;
    }
    // The GPU's CG rounds otherwise (fused multiply-adds, its own reductions): its first iteration
    // leaves r at a rounding error, not 0, so rho = r'z is not 0 either, and its second iteration ends
    // on the quadratic-model test, as Ceres' CG ends given those bits. The step is taken: the solve
    // reaches the problem's minimum, with at most two PCG iterations a step.
    GeneralProblem c = linear_pair();
    ceres::Solver::Options exact;
    exact.linear_solver_type = ceres::DENSE_QR;
    ceres::Solver::Summary minimum;
    ceres::Solve(exact, c.problem.get(), &minimum);
    EXPECT_TRUE(ours.IsSolutionUsable()) << ours.message;
    EXPECT_NEAR(ours.final_cost, minimum.final_cost, 1e-9 * minimum.final_cost);
    for (const ceres::IterationSummary& it : ours.iterations) EXPECT_LE(it.linear_solver_iterations, 2);
  }
}

// A cost function that cannot evaluate.
struct FailingCost {
  template <typename T>
  bool operator()(const T* x, T* r) const {
    r[0] = x[0];
    return false;
  }
};

TEST_P(BadInput, FailingResidualOfConstantBlocksIsNamedLikeCeres) {
  // Ceres evaluates the residual blocks whose blocks are all constant as it removes them, and fails
  // the solve naming the first that fails by its index among all residual blocks.
  auto make = [] {
    GeneralProblem g = build(scene(), Shape{});
    double* fixed = g.add_block({1.0});
    g.problem->AddResidualBlock(autodiff<1, 1>(FailingCost{}), nullptr, fixed);
    g.problem->SetParameterBlockConstant(fixed);
    return g;
  };
  GeneralProblem a = make(), b = make();
  ceres::Solver::Summary reference;
  ceres::Solve(options_for(a, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false), a.problem.get(), &reference);
  ASSERT_EQ(reference.termination_type, ceres::FAILURE);  // "Evaluation of the residual N failed during removal ..."
  SolveDetails details;
  const ceres::Solver::Summary ours =
      solve(options_for(b, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false), b, &details);
  EXPECT_EQ(ours.termination_type, ceres::FAILURE);
  EXPECT_EQ(ours.message, reference.message);
}

TEST_P(BadInput, OrderingOfThreeGroupsIsReportedLikeCeres) {
  // Points in group 0, rotations in group 1, translations and intrinsics in group 2: Ceres eliminates
  // group 0 and reports the sizes of all three groups as the ordering used.
  auto make = [](GeneralProblem& g) {
    ceres::Solver::Options options = options_for(g, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false);
    options.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (double* p : g.points) options.linear_solver_ordering->AddElementToGroup(p, 0);
    for (double* q : g.rotations) options.linear_solver_ordering->AddElementToGroup(q, 1);
    for (double* t : g.translations) options.linear_solver_ordering->AddElementToGroup(t, 2);
    for (double* k : g.intrinsics) options.linear_solver_ordering->AddElementToGroup(k, 2);
    return options;
  };
  GeneralProblem a = build(scene(), Shape{}), b = build(scene(), Shape{});
  ceres::Solver::Summary reference;
  ceres::Solve(make(a), a.problem.get(), &reference);
  ASSERT_EQ(reference.linear_solver_ordering_used.size(), 3u);
  SolveDetails details;
  const ceres::Solver::Summary ours = solve(make(b), b, &details);
  expect_engine(details);
  expect_same_solve(reference, ours, match());
}

TEST_P(BadInput, OrderingsThatDoNotHoldTheProblemsBlocksFailLikeCeres) {
  {
    SCOPED_TRACE("one group without the first point");
    auto make = [](GeneralProblem& g) {
      ceres::Solver::Options options = options_for(g, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10, false);
      options.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
      std::vector<double*> blocks;
      g.problem->GetParameterBlocks(&blocks);
      for (double* block : blocks)
        if (block != g.points[0]) options.linear_solver_ordering->AddElementToGroup(block, 0);
      return options;
    };
    GeneralProblem a = build(scene(), Shape{}), b = build(scene(), Shape{});
    ceres::Solver::Summary reference;
    ceres::Solve(make(a), a.problem.get(), &reference);
    ASSERT_EQ(reference.termination_type, ceres::FAILURE);  // "The program has N parameter blocks, but ..."
    SolveDetails details;
    const ceres::Solver::Summary ours = solve(make(b), b, &details);
    EXPECT_EQ(ours.termination_type, ceres::FAILURE);
    EXPECT_EQ(ours.message, reference.message);
  }
  {
    // The BAL shape (the fast path's): points in group 0, and in group 1 a block that is not in the
    // problem in the place of the first camera.
    SCOPED_TRACE("the BAL shape, a foreign block for a camera");
    ceres_cuda::BALProblem bal_a = random_scene(6, 40, 5), bal_b = bal_a;
    double foreign[9] = {};
    auto make = [&](ceres_cuda::BALProblem& bal) {
      ceres::Solver::Options options = ba_test::ba_options(ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 10);
      options.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
      for (int j = 0; j < bal.num_points(); ++j)
        options.linear_solver_ordering->AddElementToGroup(bal.mutable_point(j), 0);
      for (int c = 1; c < bal.num_cameras(); ++c)
        options.linear_solver_ordering->AddElementToGroup(bal.mutable_camera(c), 1);
      options.linear_solver_ordering->AddElementToGroup(foreign, 1);
      return options;
    };
    const auto a = ba_test::make_problem(bal_a, false), b = ba_test::make_problem(bal_b, false);
    ceres::Solver::Summary reference, ours;
    ceres::Solve(make(bal_a), a.get(), &reference);
    ASSERT_EQ(reference.termination_type, ceres::FAILURE);
    SolveDetails details;
    EXPECT_NO_THROW(ceres_cuda::Solve(make(bal_b), b.get(), &ours, GetParam(), &details));
    EXPECT_EQ(ours.termination_type, ceres::FAILURE);
    EXPECT_EQ(without_addresses(ours.message), without_addresses(reference.message));
  }
}

TEST_P(BadInput, OrderingsCeresAbortsOnFailTheSolve) {
  // ceres::Solve aborts the program (Check failed: NumGroups() != 0) on an ordering without elements,
  // and with a Schur solver on one that names only constant blocks. Where ceres_cuda hands such a
  // problem to ceres::Solve (here for use_nonmonotonic_steps), the solve fails instead.
  for (const bool only_constant : {false, true}) {
    SCOPED_TRACE(only_constant ? "only a constant block" : "no element");
    GeneralProblem g = build(scene(), Shape{});
    ceres::Solver::Options options = options_for(g, ceres::SPARSE_SCHUR, ceres::SCHUR_JACOBI, 10, false);
    options.use_nonmonotonic_steps = true;
    options.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    if (only_constant) {
      g.problem->SetParameterBlockConstant(g.points[0]);
      options.linear_solver_ordering->AddElementToGroup(g.points[0], 0);
    }
    const std::vector<double> before = g.values();
    SolveDetails details;
    const ceres::Solver::Summary ours = solve(options, g, &details);
    EXPECT_EQ(details.path, SolveDetails::Path::CeresFallback);
    EXPECT_EQ(ours.termination_type, ceres::FAILURE);
    EXPECT_NE(ours.message.find("linear_solver_ordering"), std::string::npos) << ours.message;
    EXPECT_TRUE(same_values(g.values(), before));
  }
}

std::string backend_name(const testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::Cpu ? "Cpu" : "Cuda";
}
INSTANTIATE_TEST_SUITE_P(Backends, BadInput, testing::Values(Backend::Cpu, Backend::Cuda), backend_name);

}  // namespace
