// The CPU reference CG against Eigen's ConjugateGradient, and its handling of bad input.
#include <cmath>
#include <limits>

#include <Eigen/IterativeLinearSolvers>
#include <gtest/gtest.h>

#include "cg_test_systems.h"
#include "linalg_cuda/cpu_cg.h"
#include "linalg_cuda/errors.h"

namespace {

using linalg_cuda::CgOptions;
using linalg_cuda::CgStoppingCriteria;
using linalg_cuda::CgTermination;
using linalg_cuda::PreconditionerType;

CgOptions tight_options(PreconditionerType preconditioner = PreconditionerType::None, int block_size = 1) {
  CgOptions options;
  options.stop.relative_tolerance = 1e-14;
  options.stop.max_iterations = 100000;
  options.preconditioner = preconditioner;
  options.block_size = block_size;
  return options;
}

// Eigen's CG with the same tolerance: the two solutions must agree to 1e-8.
void expect_matches_eigen(const linalg_cuda::CsrMatrix& a, const std::string& name) {
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 7);
  Eigen::ConjugateGradient<linalg_cuda::CsrMatrix, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner> eigen_cg;
  eigen_cg.setTolerance(1e-14);
  eigen_cg.setMaxIterations(100000);
  eigen_cg.compute(a);
  const Eigen::VectorXd expected = eigen_cg.solve(b);

  for (const auto type : {PreconditionerType::None, PreconditionerType::Jacobi, PreconditionerType::BlockJacobi}) {
    Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
    const auto summary = linalg_cuda::cpu::cg(a, b, x, tight_options(type, 3));
    EXPECT_TRUE(summary.converged) << name << " " << to_string(type) << ": " << summary.message;
    EXPECT_LT(cg_test::relative_difference(x, expected), 1e-8) << name << " " << to_string(type);

    // A requested tolerance is met by the true residual, not only the recursive one.
    CgOptions requested = tight_options(type, 3);
    requested.stop.relative_tolerance = 1e-8;
    x.setZero();
    EXPECT_TRUE(linalg_cuda::cpu::cg(a, b, x, requested).converged) << name;
    EXPECT_LE((b - a * x).norm(), 1.05e-8 * b.norm()) << name << " " << to_string(type);
  }
}

TEST(CpuCg, MatchesEigenOnPoisson) {
  expect_matches_eigen(linalg_cuda::poisson2d(30), "poisson2d(30)");
  expect_matches_eigen(linalg_cuda::poisson3d(12), "poisson3d(12)");
}

TEST(CpuCg, MatchesEigenOnSharedMatrices) {
  const auto matrices = cg_test::shared_matrices();
  if (matrices.empty()) GTEST_SKIP() << "no matrices in " << test_support::data_dir() << " (set CUDA_SOLVERS_DATA)";
  for (const auto& m : matrices) expect_matches_eigen(m.matrix, m.name);
}

// Ceres' truncated-Newton CG (conjugate_gradients_solver.cc, no preconditioner), written out
// independently: the same stopping iteration and solution as the quadratic_tolerance option.
int ceres_style_cg(const linalg_cuda::CsrMatrix& a, const Eigen::VectorXd& b, Eigen::VectorXd& x, double q_tolerance,
                   int min_iterations) {
  x.setZero();
  Eigen::VectorXd r = b, p, q;
  double rho = 1.0, q0 = -x.dot(b + r);
  for (int i = 1;; ++i) {
    const double last_rho = rho;
    rho = r.dot(r);
    p = i == 1 ? Eigen::VectorXd(r) : Eigen::VectorXd(r + (rho / last_rho) * p);
    q = a * p;
    const double alpha = rho / p.dot(q);
    x += alpha * p;
    r -= alpha * q;
    const double q1 = -x.dot(b + r);
    if (i * (q1 - q0) / q1 < q_tolerance && i >= min_iterations) return i;
    q0 = q1;
  }
}

TEST(CpuCg, QuadraticModelTestStopsWhereCeresDoes) {
  const linalg_cuda::CsrMatrix a = linalg_cuda::poisson2d(30);
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 5);
  for (const double eta : {0.5, 0.1, 0.01}) {
    for (const int min_iterations : {0, 40}) {
      Eigen::VectorXd expected(a.rows());
      const int iterations = ceres_style_cg(a, b, expected, eta, min_iterations);
      CgOptions options = tight_options();
      options.stop.quadratic_tolerance = eta;
      options.stop.min_iterations = min_iterations;
      Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
      const auto summary = linalg_cuda::cpu::cg(a, b, x, options);
      EXPECT_EQ(summary.termination, CgTermination::QuadraticModelConverged) << summary.message;
      EXPECT_TRUE(summary.converged);
      EXPECT_EQ(summary.iterations, iterations) << eta << " " << min_iterations;
      EXPECT_GE(summary.iterations, min_iterations);
      EXPECT_LT(cg_test::relative_difference(x, expected), 1e-12);
    }
  }
}

TEST(CpuCg, DenseRandomSpd) {
  for (const int n : {1, 2, 31, 33, 100}) {
    const Eigen::MatrixXd a = cg_test::random_spd(n, 1e3, n);
    const Eigen::VectorXd b = cg_test::random_vector(n, 3);
    Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
    const auto summary = linalg_cuda::cpu::cg(a, b, x, tight_options());
    EXPECT_TRUE(summary.converged) << n;
    EXPECT_LT(cg_test::relative_difference(x, a.llt().solve(b)), 1e-8) << n;
  }
}

TEST(CpuCg, ZeroSizeSystemConverges) {
  const linalg_cuda::CsrMatrix a(0, 0);
  Eigen::VectorXd x(0);
  const auto summary = linalg_cuda::cpu::cg(a, Eigen::VectorXd(0), x, CgOptions{});
  EXPECT_TRUE(summary.converged);
  EXPECT_EQ(summary.iterations, 0);
}

TEST(CpuCg, ZeroRightHandSideGivesZero) {
  const auto a = linalg_cuda::poisson2d(5);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
  const auto summary = linalg_cuda::cpu::cg(a, Eigen::VectorXd::Zero(a.rows()), x, CgOptions{});
  EXPECT_TRUE(summary.converged);
  EXPECT_EQ(summary.iterations, 0);
  EXPECT_EQ(x.norm(), 0.0);
}

TEST(CpuCg, NanInRightHandSideStops) {
  const auto a = linalg_cuda::poisson2d(5);
  Eigen::VectorXd b = cg_test::random_vector(a.rows(), 1);
  b[3] = std::numeric_limits<double>::quiet_NaN();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
  const auto summary = linalg_cuda::cpu::cg(a, b, x, CgOptions{});
  EXPECT_FALSE(summary.converged);
  EXPECT_EQ(summary.termination, CgTermination::NonFinite);
  EXPECT_EQ(summary.iterations, 0);
  EXPECT_TRUE(x.allFinite());
}

TEST(CpuCg, IndefiniteMatrixStopsAndSaysSo) {
  // diag(1, -1, 2, -2, ...): p'Ap <= 0 shows up within the first iterations.
  linalg_cuda::CsrMatrix a(40, 40);
  for (int i = 0; i < 40; ++i) a.insert(i, i) = (i % 2 ? -1.0 : 1.0) * (1 + i / 2);
  a.makeCompressed();
  const Eigen::VectorXd b = cg_test::random_vector(40, 5);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(40);
  const auto summary = linalg_cuda::cpu::cg(a, b, x, CgOptions{});
  EXPECT_EQ(summary.termination, CgTermination::NotPositiveDefinite) << summary.message;
  EXPECT_LT(summary.iterations, 40);
  EXPECT_TRUE(x.allFinite());
  EXPECT_NE(summary.message.find("not positive definite"), std::string::npos);
}

TEST(CpuCg, IterationLimitIsReported) {
  const auto a = linalg_cuda::poisson2d(40);
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 2);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
  CgOptions options;
  options.stop.max_iterations = 5;
  const auto summary = linalg_cuda::cpu::cg(a, b, x, options);
  EXPECT_EQ(summary.termination, CgTermination::MaxIterations);
  EXPECT_EQ(summary.iterations, 5);
  EXPECT_LT(summary.final_residual_norm, summary.initial_residual_norm);
}

// Options no solve can honour are errors, not silent successes: relative_tolerance = -1 would
// otherwise report "converged" after 0 iterations with x = 0.
TEST(CpuCg, InvalidStoppingOptionsThrow) {
  const auto a = linalg_cuda::poisson2d(8);
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 3);
  const auto expect_invalid = [&](auto&& change, const char* words) {
    CgOptions options;
    change(options.stop);
    Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
    try {
      linalg_cuda::cpu::cg(a, b, x, options);
      ADD_FAILURE() << "no error for " << words;
    } catch (const linalg_cuda::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_invalid([](CgStoppingCriteria& s) { s.relative_tolerance = -1; }, "relative_tolerance is -1");
  expect_invalid([](CgStoppingCriteria& s) { s.absolute_tolerance = std::nan(""); }, "absolute_tolerance is nan");
  expect_invalid([](CgStoppingCriteria& s) { s.quadratic_tolerance = INFINITY; }, "quadratic_tolerance is inf");
  expect_invalid([](CgStoppingCriteria& s) { s.max_iterations = 0; }, "max_iterations is 0");
  expect_invalid([](CgStoppingCriteria& s) { s.min_iterations = -1; }, "min_iterations is -1");
  expect_invalid([](CgStoppingCriteria& s) { s.min_iterations = 20000; }, "min_iterations is 20000");
}

TEST(CpuCg, NonSpdDiagonalRejectedByPreconditioners) {
  linalg_cuda::CsrMatrix a = linalg_cuda::poisson2d(4);
  a.coeffRef(5, 5) = -1.0;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(a.rows());
  EXPECT_THROW(linalg_cuda::cpu::cg(a, b, x, tight_options(PreconditionerType::Jacobi)), linalg_cuda::InvalidArgument);
  EXPECT_THROW(linalg_cuda::cpu::cg(a, b, x, tight_options(PreconditionerType::BlockJacobi, 4)),
               linalg_cuda::InvalidArgument);
}

TEST(CpuCg, ShapeMismatchThrows) {
  const auto a = linalg_cuda::poisson2d(4);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
  EXPECT_THROW(linalg_cuda::cpu::cg(a, Eigen::VectorXd::Ones(3), x, CgOptions{}), linalg_cuda::DimensionMismatch);
  linalg_cuda::CsrMatrix rectangular(4, 5);
  EXPECT_THROW(linalg_cuda::cpu::cg(rectangular, Eigen::VectorXd::Ones(4), x, CgOptions{}), linalg_cuda::DimensionMismatch);
}

}  // namespace
