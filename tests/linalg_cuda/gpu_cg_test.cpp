// The GPU conjugate-gradient solver against the CPU reference: same stopping decisions, solutions
// within 1e-8, bit-identical repeat runs, and the same handling of bad input.
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <vector>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include "cg_test_systems.h"
#include "opaque_operator.h"
#include "linalg_cuda/conjugate_gradient.h"
#include "linalg_cuda/cpu_cg.h"
#include "linalg_cuda/device_csr_matrix.h"
#include "linalg_cuda/device_matrix.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/fused_cg_operator.h"
#include "linalg_cuda/solve.h"

namespace {

using linalg_cuda::Backend;
using linalg_cuda::CgOptions;
using linalg_cuda::CgTermination;
using linalg_cuda::DeviceVector;
using linalg_cuda::PreconditionerType;

CgOptions options_for(PreconditionerType type, int block_size, double tolerance = 1e-14) {
  CgOptions options;
  options.stop.relative_tolerance = tolerance;
  options.stop.max_iterations = 100000;
  options.preconditioner = type;
  options.block_size = block_size;
  return options;
}

using cg_test::OpaqueOperator;  // the CSR matrix behind the interface: the solver's generic path

// GPU (CSR fused path, and generic path) vs CPU reference for every preconditioner.
void expect_gpu_matches_cpu(const linalg_cuda::CsrMatrix& a, const std::string& name) {
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 11);
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  const OpaqueOperator opaque(device_a);
  const DeviceVector<double> device_b(b);
  for (const auto type : {PreconditionerType::None, PreconditionerType::Jacobi, PreconditionerType::BlockJacobi}) {
    const CgOptions options = options_for(type, 3);
    Eigen::VectorXd cpu_x = Eigen::VectorXd::Zero(a.rows());
    const auto cpu = linalg_cuda::cpu::cg(a, b, cpu_x, options);
    ASSERT_TRUE(cpu.converged) << name << " " << cpu.message;
    const auto preconditioner = linalg_cuda::make_preconditioner(device_a, type, 3);
    for (const linalg_cuda::LinearOperator* op : {static_cast<const linalg_cuda::LinearOperator*>(&device_a),
                                                  static_cast<const linalg_cuda::LinearOperator*>(&opaque)}) {
      const char* path = op == &device_a ? "csr" : "generic";
      DeviceVector<double> x(a.rows(), 0.0);
      const auto gpu = linalg_cuda::cg(*op, device_b, x, options, preconditioner.get());
      EXPECT_TRUE(gpu.converged) << name << " " << path << " " << gpu.message;
      EXPECT_EQ(gpu.backend, Backend::Cuda);
      // Rounding differs (fused kernels, block-ordered sums), which shifts the iteration count of
      // ill-conditioned systems (nos6: cond ~1e7) at this tight tolerance by up to ~15%.
      EXPECT_NEAR(gpu.iterations, cpu.iterations, 2 + cpu.iterations / 4) << name << " " << path;
      EXPECT_LT(cg_test::relative_difference(x.to_eigen(), cpu_x), 1e-8) << name << " " << path << " " << to_string(type);
    }
    // The requested tolerance is reached by the true residual.
    DeviceVector<double> x(a.rows(), 0.0);
    const auto gpu = linalg_cuda::cg(device_a, device_b, x, options_for(type, 3, 1e-8), preconditioner.get());
    EXPECT_TRUE(gpu.converged) << name;
    EXPECT_LE((b - a * x.to_eigen()).norm(), 1.05e-8 * b.norm()) << name << " " << to_string(type);
  }
}

// Small systems, a few blocks of threads each, run every kernel of the CSR and generic paths within
// a minute under compute-sanitizer's racecheck (scripts/gpu_sanitize.sh), which the larger ones do not.
TEST(GpuCg, MatchesCpuOnSmallPoisson) {
  REQUIRE_CUDA_DEVICE();
  expect_gpu_matches_cpu(linalg_cuda::poisson2d(1), "poisson2d(1)");
  expect_gpu_matches_cpu(linalg_cuda::poisson2d(12), "poisson2d(12)");
  expect_gpu_matches_cpu(linalg_cuda::poisson3d(7), "poisson3d(7)");
}

TEST(GpuCg, MatchesCpuOnPoisson) {
  REQUIRE_CUDA_DEVICE();
  expect_gpu_matches_cpu(linalg_cuda::poisson2d(45), "poisson2d(45)");
  expect_gpu_matches_cpu(linalg_cuda::poisson3d(17), "poisson3d(17)");
  expect_gpu_matches_cpu(linalg_cuda::poisson3d(40), "poisson3d(40)");
}

TEST(GpuCg, MatchesCpuOnSharedMatrices) {
  REQUIRE_CUDA_DEVICE();
  const auto matrices = cg_test::shared_matrices();
  if (matrices.empty()) GTEST_SKIP() << "no matrices in " << test_support::data_dir() << " (set CUDA_SOLVERS_DATA)";
  for (const auto& m : matrices) expect_gpu_matches_cpu(m.matrix, m.name);
}

TEST(GpuCg, DenseRandomSpdThroughDeviceMatrix) {
  REQUIRE_CUDA_DEVICE();
  for (const int n : {1, 2, 7, 31, 32, 33, 100, 257}) {
    const Eigen::MatrixXd a = cg_test::random_spd(n, 1e4, 100 + n);
    const Eigen::VectorXd b = cg_test::random_vector(n, 17);
    const linalg_cuda::DeviceMatrix device_a(a);
    const DeviceVector<double> device_b(b);
    for (const auto type : {PreconditionerType::None, PreconditionerType::Jacobi, PreconditionerType::BlockJacobi}) {
      const CgOptions options = options_for(type, 4);
      Eigen::VectorXd cpu_x = Eigen::VectorXd::Zero(n);
      const auto cpu = linalg_cuda::cpu::cg(a, b, cpu_x, options);
      std::unique_ptr<linalg_cuda::Preconditioner> preconditioner;
      if (type == PreconditionerType::Jacobi) preconditioner = std::make_unique<linalg_cuda::JacobiPreconditioner>(device_a);
      if (type == PreconditionerType::BlockJacobi)
        preconditioner = std::make_unique<linalg_cuda::BlockJacobiPreconditioner>(device_a, 4);
      DeviceVector<double> x(n, 0.0);
      const auto gpu = linalg_cuda::cg(device_a, device_b, x, options, preconditioner.get());
      EXPECT_TRUE(gpu.converged) << n << " " << gpu.message;
      EXPECT_EQ(gpu.termination, cpu.termination) << n;
      EXPECT_LT(cg_test::relative_difference(x.to_eigen(), cpu_x), 1e-8) << n << " " << to_string(type);
      EXPECT_LT(cg_test::relative_difference(x.to_eigen(), a.llt().solve(b)), 1e-8) << n;
    }
  }
}

// A block-Jacobi preconditioner the solver does not know by its exact type: it takes the generic
// path (the preconditioner's apply, then r'z), where the exact class runs in the fused update.
class OpaqueBlockJacobi : public linalg_cuda::BlockJacobiPreconditioner {
 public:
  using BlockJacobiPreconditioner::BlockJacobiPreconditioner;
  explicit OpaqueBlockJacobi(BlockJacobiPreconditioner&& m) : BlockJacobiPreconditioner(std::move(m)) {}
};

// The fused block-Jacobi update (cg_update_block_jacobi) against the generic path, block by block and
// in the continuous-element layout (the same system with its rows and columns permuted so that row
// i of block k is row i * nb + k, as ceres_cuda keeps its camera values): the same iterations and
// solutions, to rounding.
TEST(GpuCg, BlockJacobiFusedUpdateAndContinuousElementLayout) {
  REQUIRE_CUDA_DEVICE();
  const int bs = 9, nb = 37, n = bs * nb;
  // Well conditioned (a few dozen iterations), so that rounding does not move the iteration counts.
  const Eigen::MatrixXd a = cg_test::random_spd(n, 1e2, 909);
  const Eigen::VectorXd b = cg_test::random_vector(n, 910);
  Eigen::VectorXi to_continuous(n);  // row k * bs + i of a is row i * nb + k of the permuted system
  for (int k = 0; k < nb; ++k)
    for (int i = 0; i < bs; ++i) to_continuous[k * bs + i] = i * nb + k;
  Eigen::MatrixXd ac(n, n);
  Eigen::VectorXd bc(n);
  for (int r = 0; r < n; ++r) {
    bc[to_continuous[r]] = b[r];
    for (int c = 0; c < n; ++c) ac(to_continuous[r], to_continuous[c]) = a(r, c);
  }
  const linalg_cuda::DeviceMatrix device_a(a), device_ac(ac);
  const DeviceVector<double> device_b(b), device_bc(bc);
  const CgOptions options = options_for(PreconditionerType::BlockJacobi, bs, 1e-10);

  const linalg_cuda::BlockJacobiPreconditioner fused(device_a, bs);
  const OpaqueBlockJacobi generic(device_a, bs);
  DeviceVector<double> x_fused(n, 0.0), x_generic(n, 0.0);
  const auto s_fused = linalg_cuda::cg(device_a, device_b, x_fused, options, &fused);
  const auto s_generic = linalg_cuda::cg(device_a, device_b, x_generic, options, &generic);
  ASSERT_TRUE(s_fused.converged) << s_fused.message;
  ASSERT_TRUE(s_generic.converged) << s_generic.message;
  EXPECT_NEAR(s_fused.iterations, s_generic.iterations, 1);
  EXPECT_LT(cg_test::relative_difference(x_fused.to_eigen(), x_generic.to_eigen()), 1e-10);

  // The same inverse blocks (their layout does not depend on the vectors'), for continuous-element
  // vectors, fused and generic.
  const auto continuous = linalg_cuda::BlockJacobiPreconditioner::from_inverse_blocks(
      nb, bs, fused.inverse_blocks(), linalg_cuda::BlockVectorLayout::kContinuousElement);
  const OpaqueBlockJacobi continuous_generic(linalg_cuda::BlockJacobiPreconditioner::from_inverse_blocks(
      nb, bs, fused.inverse_blocks(), linalg_cuda::BlockVectorLayout::kContinuousElement));
  for (const linalg_cuda::Preconditioner* m : {static_cast<const linalg_cuda::Preconditioner*>(&continuous),
                                               static_cast<const linalg_cuda::Preconditioner*>(&continuous_generic)}) {
    DeviceVector<double> xc(n, 0.0);
    const auto s = linalg_cuda::cg(device_ac, device_bc, xc, options, m);
    ASSERT_TRUE(s.converged) << s.message;
    EXPECT_NEAR(s.iterations, s_fused.iterations, 1);
    const Eigen::VectorXd x = xc.to_eigen(), expected = x_fused.to_eigen();
    Eigen::VectorXd back(n);
    for (int r = 0; r < n; ++r) back[r] = x[to_continuous[r]];
    EXPECT_LT(cg_test::relative_difference(back, expected), 1e-10);
  }
}

// An operator that sees the CG's stop flag (FusedCgOperator::apply_unless_stopped) and records what it
// was given; it runs in full regardless, as an operator that ignores the flag does.
class FlagRecordingOperator : public OpaqueOperator, public linalg_cuda::FusedCgOperator {
 public:
  using OpaqueOperator::OpaqueOperator;
  void apply_unless_stopped(const DeviceVector<double>& x, DeviceVector<double>& y, const int* stopped) const override {
    ++flagged_applies;
    if (stopped) flags.push_back(stopped);
    apply(x, y);
  }
  mutable int flagged_applies = 0;
  mutable std::vector<const int*> flags;
};

// The CG's loop hands the operator one device flag, zero while it iterates and nonzero once it has
// stopped, and the same solution whatever check_every (the iterations after the stop are discarded).
TEST(GpuCg, OperatorGetsTheStopFlag) {
  REQUIRE_CUDA_DEVICE();
  const linalg_cuda::CsrMatrix a = linalg_cuda::poisson2d(20);
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 23);
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  const DeviceVector<double> device_b(b);
  DeviceVector<double> reference(a.rows(), 0.0);
  CgOptions options = options_for(PreconditionerType::None, 1, 1e-10);
  options.execution.check_every = 1;
  const auto s_reference = linalg_cuda::cg(OpaqueOperator(device_a), device_b, reference, options);
  ASSERT_TRUE(s_reference.converged) << s_reference.message;
  for (const int check_every : {1, 7, 64}) {
    options.execution.check_every = check_every;
    const FlagRecordingOperator op(device_a);
    DeviceVector<double> x(a.rows(), 0.0);
    linalg_cuda::ConjugateGradient solver(options);  // its state, and so the flag, outlives the solve
    const auto s = solver.solve(op, device_b, x, nullptr);
    ASSERT_TRUE(s.converged) << s.message;
    EXPECT_EQ(s.iterations, s_reference.iterations) << check_every;
    EXPECT_EQ(x.to_std(), reference.to_std()) << check_every;  // bit for bit
    ASSERT_GE(op.flagged_applies, 1) << check_every;
    ASSERT_EQ(op.flags.size(), static_cast<std::size_t>(op.flagged_applies)) << "a null flag, check_every " << check_every;
    for (const int* flag : op.flags) EXPECT_EQ(flag, op.flags.front()) << check_every;
    int stopped = 0;
    ASSERT_EQ(cudaMemcpy(&stopped, op.flags.front(), sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_NE(stopped, 0) << check_every;
  }
}

// The quadratic-model (Nash-Sofer) stopping rule that Levenberg-Marquardt steps use: the same
// iteration as the CPU reference, on the fused CSR path and on the generic (matrix-free) path.
TEST(GpuCg, QuadraticModelTestMatchesCpu) {
  REQUIRE_CUDA_DEVICE();
  const linalg_cuda::CsrMatrix a = linalg_cuda::poisson3d(17);
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 19);
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  const OpaqueOperator opaque(device_a);
  const DeviceVector<double> device_b(b);
  for (const auto type : {PreconditionerType::None, PreconditionerType::Jacobi, PreconditionerType::BlockJacobi}) {
    CgOptions options = options_for(type, 3);
    options.stop.quadratic_tolerance = 0.1;
    options.stop.min_iterations = 3;
    Eigen::VectorXd cpu_x = Eigen::VectorXd::Zero(a.rows());
    const auto cpu = linalg_cuda::cpu::cg(a, b, cpu_x, options);
    ASSERT_EQ(cpu.termination, CgTermination::QuadraticModelConverged) << cpu.message;
    const auto preconditioner = linalg_cuda::make_preconditioner(device_a, type, 3);
    for (const linalg_cuda::LinearOperator* op : {static_cast<const linalg_cuda::LinearOperator*>(&device_a),
                                                  static_cast<const linalg_cuda::LinearOperator*>(&opaque)}) {
      DeviceVector<double> x(a.rows(), 0.0);
      const auto gpu = linalg_cuda::cg(*op, device_b, x, options, preconditioner.get());
      EXPECT_EQ(gpu.termination, CgTermination::QuadraticModelConverged) << gpu.message;
      EXPECT_EQ(gpu.iterations, cpu.iterations) << to_string(type);
      EXPECT_LT(cg_test::relative_difference(x.to_eigen(), cpu_x), 1e-10) << to_string(type);
    }
  }
}

TEST(GpuCg, RepeatedSolvesAreBitIdentical) {
  REQUIRE_CUDA_DEVICE();
  const auto a = linalg_cuda::poisson3d(30);
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  const DeviceVector<double> b(cg_test::random_vector(a.rows(), 3));
  linalg_cuda::ConjugateGradient solver(options_for(PreconditionerType::None, 1, 1e-10));
  DeviceVector<double> x1(a.rows(), 0.0), x2(a.rows(), 0.0);
  const auto s1 = solver.solve(device_a, b, x1);
  const auto s2 = solver.solve(device_a, b, x2);  // reuses the workspace and the graph
  EXPECT_EQ(s1.iterations, s2.iterations);
  EXPECT_EQ(s1.final_residual_norm, s2.final_residual_norm);
  EXPECT_EQ(x1.to_std(), x2.to_std());
}

// Graphs with and without the device-side loop (a conditional node), and plain launches: the same
// iterations and bits whatever the batch.
TEST(GpuCg, BatchSizeGraphsAndTheDeviceLoopDoNotChangeTheResult) {
  REQUIRE_CUDA_DEVICE();
  const auto a = linalg_cuda::poisson2d(60);
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  const DeviceVector<double> b(cg_test::random_vector(a.rows(), 9));
  const linalg_cuda::JacobiPreconditioner jacobi(device_a);
  std::vector<double> reference;
  int reference_iterations = -1;
  for (const int check_every : {1, 7, 16, 100}) {
    for (const int mode : {0, 1, 2}) {  // device loop, graph batches, plain launches
      CgOptions options = options_for(PreconditionerType::Jacobi, 1, 1e-9);
      options.execution.check_every = check_every;
      options.execution.use_cuda_graph = mode < 2;
      options.execution.use_device_loop = mode == 0;
      DeviceVector<double> x(a.rows(), 0.0);
      const auto summary = linalg_cuda::cg(device_a, b, x, options, &jacobi);
      ASSERT_TRUE(summary.converged);
      if (reference_iterations < 0) {
        reference = x.to_std();
        reference_iterations = summary.iterations;
      }
      EXPECT_EQ(summary.iterations, reference_iterations) << check_every << " " << mode;
      EXPECT_EQ(x.to_std(), reference) << check_every << " " << mode;
    }
  }
}

TEST(GpuCg, WarmStartFromTheSolutionStopsAtOnce) {
  REQUIRE_CUDA_DEVICE();
  const auto a = linalg_cuda::poisson2d(20);
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 4);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
  CgOptions options = options_for(PreconditionerType::None, 1, 1e-8);
  options.backend = Backend::Cuda;
  ASSERT_TRUE(linalg_cuda::solve(a, b, x, options).converged);
  const auto again = linalg_cuda::solve(a, b, x, options);
  EXPECT_TRUE(again.converged);
  EXPECT_EQ(again.iterations, 0);
}

TEST(GpuCg, ZeroSizeSystem) {
  REQUIRE_CUDA_DEVICE();
  const linalg_cuda::DeviceCsrMatrix a(linalg_cuda::CsrMatrix(0, 0));
  DeviceVector<double> b, x;
  const auto summary = linalg_cuda::cg(a, b, x);
  EXPECT_TRUE(summary.converged);
  EXPECT_EQ(summary.iterations, 0);
}

TEST(GpuCg, NanInRightHandSideStopsAndSaysSo) {
  REQUIRE_CUDA_DEVICE();
  const auto a = linalg_cuda::poisson2d(10);
  Eigen::VectorXd b = cg_test::random_vector(a.rows(), 1);
  b[17] = std::numeric_limits<double>::quiet_NaN();
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  DeviceVector<double> x(a.rows(), 0.0);
  const auto summary = linalg_cuda::cg(device_a, DeviceVector<double>(b), x);
  EXPECT_EQ(summary.termination, CgTermination::NonFinite);
  EXPECT_FALSE(summary.converged);
  EXPECT_EQ(summary.iterations, 0);
  EXPECT_TRUE(x.to_eigen().allFinite());
  EXPECT_NE(summary.message.find("NaN"), std::string::npos);
}

TEST(GpuCg, IndefiniteMatrixStopsAtTheSameIterationAsCpu) {
  REQUIRE_CUDA_DEVICE();
  linalg_cuda::CsrMatrix a(64, 64);
  for (int i = 0; i < 64; ++i) a.insert(i, i) = (i % 3 == 2 ? -1.0 : 1.0) * (1 + i);
  a.makeCompressed();
  const Eigen::VectorXd b = cg_test::random_vector(64, 5);
  Eigen::VectorXd cpu_x = Eigen::VectorXd::Zero(64);
  const auto cpu = linalg_cuda::cpu::cg(a, b, cpu_x, CgOptions{});
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  DeviceVector<double> x(64, 0.0);
  const auto gpu = linalg_cuda::cg(device_a, DeviceVector<double>(b), x);
  EXPECT_EQ(gpu.termination, CgTermination::NotPositiveDefinite) << gpu.message;
  EXPECT_EQ(gpu.termination, cpu.termination);
  EXPECT_EQ(gpu.iterations, cpu.iterations);
  EXPECT_TRUE(x.to_eigen().allFinite());
}

TEST(GpuCg, IterationLimitMatchesCpu) {
  REQUIRE_CUDA_DEVICE();
  const auto a = linalg_cuda::poisson2d(50);
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 6);
  CgOptions options;
  options.stop.max_iterations = 13;
  Eigen::VectorXd cpu_x = Eigen::VectorXd::Zero(a.rows());
  const auto cpu = linalg_cuda::cpu::cg(a, b, cpu_x, options);
  const linalg_cuda::DeviceCsrMatrix device_a(a);
  DeviceVector<double> x(a.rows(), 0.0);
  const auto gpu = linalg_cuda::cg(device_a, DeviceVector<double>(b), x, options);
  EXPECT_EQ(gpu.termination, CgTermination::MaxIterations);
  EXPECT_EQ(gpu.iterations, 13);
  EXPECT_LT(cg_test::relative_difference(x.to_eigen(), cpu_x), 1e-12);
}

TEST(GpuCg, ShapeMismatchThrowsBeforeLaunching) {
  REQUIRE_CUDA_DEVICE();
  const linalg_cuda::DeviceCsrMatrix a(linalg_cuda::poisson2d(4));
  DeviceVector<double> b(16, 1.0), x(15, 0.0);
  EXPECT_THROW(linalg_cuda::cg(a, b, x), linalg_cuda::DimensionMismatch);
  const linalg_cuda::DeviceMatrix rectangular(4, 5, 1.0);
  DeviceVector<double> b4(4, 1.0), x5(5, 0.0);
  EXPECT_THROW(linalg_cuda::cg(rectangular, b4, x5), linalg_cuda::DimensionMismatch);
}

TEST(GpuCg, InvalidStoppingOptionsThrowBeforeLaunching) {
  REQUIRE_CUDA_DEVICE();
  const linalg_cuda::DeviceCsrMatrix a(linalg_cuda::poisson2d(4));
  DeviceVector<double> b(16, 1.0), x(16, 0.0);
  linalg_cuda::CgOptions options;
  options.stop.relative_tolerance = -1;
  EXPECT_THROW(linalg_cuda::cg(a, b, x, options), linalg_cuda::InvalidArgument);
  options.stop.relative_tolerance = 1e-10;
  options.stop.max_iterations = 0;
  EXPECT_THROW(linalg_cuda::cg(a, b, x, options), linalg_cuda::InvalidArgument);
}

TEST(GpuCg, NonSpdMatrixFileIsReported) {
  REQUIRE_CUDA_DEVICE();
  // A symmetric indefinite matrix as a user would hand it in: [[1, 2], [2, 1]] (eigenvalues 3, -1).
  std::istringstream file("%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1\n2 1 2\n2 2 1\n");
  const auto a = linalg_cuda::read_matrix_market(file, "indefinite.mtx");
  Eigen::VectorXd x;
  CgOptions options;
  options.backend = Backend::Cuda;
  const auto summary = linalg_cuda::solve(a, Eigen::Vector2d(1.0, -1.0), x, options);
  EXPECT_EQ(summary.termination, CgTermination::NotPositiveDefinite) << summary.message;
}

TEST(SolveBackend, AutoPicksCudaWhenPresentAndCpuOtherwise) {
  const auto a = linalg_cuda::poisson2d(8);
  const Eigen::VectorXd b = cg_test::random_vector(a.rows(), 8);
  Eigen::VectorXd x;
  const auto summary = linalg_cuda::solve(a, b, x, options_for(PreconditionerType::Jacobi, 1, 1e-10));
  EXPECT_TRUE(summary.converged);
  EXPECT_EQ(summary.backend, linalg_cuda::cuda_device_available() ? Backend::Cuda : Backend::Cpu);
  EXPECT_LE((b - a * x).norm(), 1.05e-10 * b.norm());
}

}  // namespace
