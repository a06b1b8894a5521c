// An operator that takes the CG's direction update and p'Ap on itself (FusedCgOperator::apply_cg_step)
// against the same operator without it: the same stopping decisions and solutions to rounding, with
// every preconditioner path and loop form, and the same bits from run to run.
#include <vector>

#include <gtest/gtest.h>

#include "cg_test_systems.h"
#include "fused_step_operator.h"
#include "opaque_operator.h"
#include "linalg_cuda/conjugate_gradient.h"
#include "linalg_cuda/device_csr_matrix.h"
#include "linalg_cuda/device_matrix.h"
#include "linalg_cuda/preconditioner.h"
#include "linalg_cuda/solve.h"

namespace {

using linalg_cuda::CgOptions;
using linalg_cuda::CgTermination;
using linalg_cuda::DeviceVector;
using linalg_cuda::PreconditionerType;

using PlainOperator = cg_test::OpaqueOperator;  // the same product, the solver's own direction update and p'Ap

// A block-Jacobi preconditioner the solver does not know by its exact type (its general path: the
// preconditioner's apply after cg_update_xr).
class OpaqueBlockJacobi : public linalg_cuda::BlockJacobiPreconditioner {
 public:
  using BlockJacobiPreconditioner::BlockJacobiPreconditioner;
};

struct Solved {
  linalg_cuda::SolverSummary summary;
  std::vector<double> x;
};

Solved solve(const linalg_cuda::LinearOperator& a, const DeviceVector<double>& b, const CgOptions& options,
             const linalg_cuda::Preconditioner* m) {
  DeviceVector<double> x(a.rows(), 0.0);
  linalg_cuda::ConjugateGradient cg(options);
  Solved out;
  out.summary = cg.solve(a, b, x, m);
  out.x = x.to_std();
  return out;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  return cg_test::relative_difference(Eigen::Map<const Eigen::VectorXd>(a.data(), static_cast<Eigen::Index>(a.size())),
                                      Eigen::Map<const Eigen::VectorXd>(b.data(), static_cast<Eigen::Index>(b.size())));
}

std::vector<CgOptions> loop_forms() {
  std::vector<CgOptions> forms;
  CgOptions device_loop;  // the default: a graph with a device-side loop, tested every 16 iterations
  device_loop.stop.relative_tolerance = 1e-10;
  device_loop.stop.max_iterations = 5000;
  forms.push_back(device_loop);
  CgOptions every_iteration = device_loop;
  every_iteration.execution.check_every = 1;
  forms.push_back(every_iteration);
  CgOptions batches = device_loop;
  batches.execution.use_device_loop = false;
  batches.execution.check_every = 5;
  forms.push_back(batches);
  CgOptions direct = device_loop;
  direct.execution.use_cuda_graph = false;
  direct.execution.check_every = 3;
  forms.push_back(direct);
  CgOptions quadratic = device_loop;  // Ceres' test on the quadratic model, as ceres_cuda runs it
  quadratic.stop.quadratic_tolerance = 1e-6;
  forms.push_back(quadratic);
  return forms;
}

void expect_same_solves(const linalg_cuda::LinearOperator& a, const DeviceVector<double>& b,
                        const linalg_cuda::Preconditioner* m, const char* what) {
  const PlainOperator plain(a);
  const cg_test::FusedStepOperator fused(a);
  for (const CgOptions& options : loop_forms()) {
    const Solved expected = solve(plain, b, options, m);
    const Solved got = solve(fused, b, options, m);
    ASSERT_TRUE(expected.summary.converged) << what << " " << expected.summary.message;
    EXPECT_EQ(got.summary.termination, expected.summary.termination) << what << " " << got.summary.message;
    EXPECT_NEAR(got.summary.iterations, expected.summary.iterations, 1) << what;
    EXPECT_LT(relative_difference(got.x, expected.x), 1e-9) << what << " check_every " << options.execution.check_every;
    const Solved again = solve(fused, b, options, m);
    EXPECT_EQ(again.x, got.x) << what << ": not the same bits run to run";
    EXPECT_EQ(again.summary.iterations, got.summary.iterations) << what;
  }
  EXPECT_GT(fused.steps_taken(), 0) << what << ": the solver never handed the operator an iteration";
}

TEST(FusedStepOperator, SameSolvesWithEveryPreconditionerPath) {
  REQUIRE_CUDA_DEVICE();
  const linalg_cuda::DeviceCsrMatrix poisson(linalg_cuda::poisson2d(24));
  const DeviceVector<double> b(cg_test::random_vector(static_cast<Eigen::Index>(poisson.rows()), 71));
  for (const auto type : {PreconditionerType::None, PreconditionerType::Jacobi, PreconditionerType::BlockJacobi}) {
    const auto m = linalg_cuda::make_preconditioner(poisson, type, 4);
    expect_same_solves(poisson, b, m.get(), to_string(type));
  }
  const OpaqueBlockJacobi general(poisson, 4);
  expect_same_solves(poisson, b, &general, "a preconditioner of unknown type");

  // A dense operator in the continuous-element block layout, as ceres_cuda's reduced camera system.
  const int bs = 9, nb = 23, n = bs * nb;
  const linalg_cuda::DeviceMatrix dense(cg_test::random_spd(n, 1e3, 72));
  const DeviceVector<double> bd(cg_test::random_vector(n, 73));
  const auto block_jacobi = linalg_cuda::BlockJacobiPreconditioner(dense, bs);
  expect_same_solves(dense, bd, &block_jacobi, "dense, block-Jacobi");
}

// p'Ap <= 0 found from the operator's sum stops the solve at the same iteration, x left finite.
TEST(FusedStepOperator, IndefiniteOperatorStopsAtTheSameIteration) {
  REQUIRE_CUDA_DEVICE();
  linalg_cuda::CsrMatrix a(64, 64);
  for (int i = 0; i < 64; ++i) a.insert(i, i) = (i % 3 == 2 ? -1.0 : 1.0) * (1 + i);
  a.makeCompressed();
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  const DeviceVector<double> b(cg_test::random_vector(64, 74));
  for (const CgOptions& options : loop_forms()) {
    const Solved expected = solve(PlainOperator(device_a), b, options, nullptr);
    const Solved got = solve(cg_test::FusedStepOperator(device_a), b, options, nullptr);
    EXPECT_EQ(got.summary.termination, CgTermination::NotPositiveDefinite) << got.summary.message;
    EXPECT_EQ(got.summary.iterations, expected.summary.iterations);
    EXPECT_TRUE(Eigen::Map<const Eigen::VectorXd>(got.x.data(), 64).allFinite());
  }
}

}  // namespace
