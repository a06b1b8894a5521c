// DeviceState (the parameters on the GPU) against BlockState (on the host, with the manifold objects'
// own Plus and PlusJacobian): every manifold the GPU applies, on random states, steps and gradients,
// for Plus, PlusJacobian, accepting the candidate and the norms the LM loop asks for; and the
// manifolds it leaves to the host.
#include <ceres/ceres.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "block_state.h"
#include "device_state.h"
#include "jacobian_cells.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_vector.h"
#include "manifold_math.h"
#include "schur_structure.h"
#include "test_support.h"
#include "threaded_evaluator.h"

namespace {

using namespace ceres_cuda::detail;

// A residual of two values on any blocks; the structure is all these tests need of it.
class AnyBlocks : public ceres::CostFunction {
 public:
  explicit AnyBlocks(const std::vector<int>& sizes) {
    set_num_residuals(2);
    *mutable_parameter_block_sizes() = sizes;
  }
  bool Evaluate(double const* const*, double* residuals, double**) const override {
    residuals[0] = residuals[1] = 0.0;
    return true;
  }
};

void expect_near(const std::vector<double>& a, const std::vector<double>& b, double tolerance, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], tolerance) << what << " at " << k;
}

// After the work queued on the thread's (non-blocking) stream, which cudaMemcpy alone would not wait for.
std::vector<double> download(const double* device, long n) {
  std::vector<double> host(n);
  linalg_cuda::thread_context().synchronize();
  EXPECT_EQ(cudaMemcpy(host.data(), device, n * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

// Poses as quaternions of both orders and points, intrinsics of five values with two held by a
// SubsetManifold, a EuclideanManifold block, a block without manifold and a constant one.
struct Scene {
  ceres::Problem problem;
  std::vector<std::vector<double>> blocks;
  AnyBlocks pose_cost{{4, 4, 5, 3, 2, 3}};

  explicit Scene(std::mt19937* rng) : problem(options()) {
    blocks.reserve(3 * (5 + 4));  // the problem keeps pointers into them
    std::normal_distribution<double> normal;
    for (int image = 0; image < 3; ++image) {
      std::vector<double>& q = blocks.emplace_back(4), &e = blocks.emplace_back(4), &k = blocks.emplace_back(5),
                           &t = blocks.emplace_back(3), &c = blocks.emplace_back(2);
      for (std::vector<double>* v : {&q, &e, &k, &t, &c})
        for (double& value : *v) value = normal(*rng);
      for (std::vector<double>* v : {&q, &e}) {
        const double norm = std::sqrt((*v)[0] * (*v)[0] + (*v)[1] * (*v)[1] + (*v)[2] * (*v)[2] + (*v)[3] * (*v)[3]);
        for (double& value : *v) value /= norm;
      }
      problem.AddParameterBlock(q.data(), 4, new ceres::QuaternionManifold);
      problem.AddParameterBlock(e.data(), 4, new ceres::EigenQuaternionManifold);
      problem.AddParameterBlock(k.data(), 5, new ceres::SubsetManifold(5, {1, 3}));
      problem.AddParameterBlock(t.data(), 3, new ceres::EuclideanManifold<3>);
      problem.AddParameterBlock(c.data(), 2);
      if (image == 2) problem.SetParameterBlockConstant(c.data());
      for (int p = 0; p < 4; ++p) {
        std::vector<double>& point = blocks.emplace_back(3);
        for (double& value : point) value = normal(*rng);
        problem.AddResidualBlock(&pose_cost, nullptr, {q.data(), e.data(), k.data(), t.data(), c.data(), point.data()});
      }
    }
  }
  static ceres::Problem::Options options() {
    ceres::Problem::Options o;
    o.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
    return o;
  }
};

TEST(DeviceState, MatchesTheHostStateForEveryManifoldItApplies) {
  REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(7);
  Scene scene(&rng);
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::SPARSE_SCHUR;
  SchurStructure s;
  ASSERT_EQ(analyze_schur_structure(options, &scene.problem, &s), "");
  ASSERT_EQ(s.num_e_blocks, 12);
  const JacobianCells cells(s);
  ThreadedEvaluator evaluator(s, cells, 1);
  BlockState host(s, 1);
  BlockState start(s, 1);  // the device state's to write back to
  cudaStream_t stream = linalg_cuda::thread_context().stream();
  const std::unique_ptr<DeviceState> device = DeviceState::make(s, &start, evaluator.plus_jacobian_offsets(), stream);
  ASSERT_NE(device, nullptr);

  std::normal_distribution<double> normal(0.0, 0.3);
  auto random_tangent = [&] {
    std::vector<double> v(s.tangent_size());
    for (double& value : v) value = normal(rng);
    return v;
  };
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_TRUE(evaluator.update_plus_jacobians(host.x()));
    EvaluationPoint x;
    ASSERT_TRUE(device->at_x(&x));
    EXPECT_EQ(x.host_state, nullptr);
    const std::vector<double>& expected_jacobians = evaluator.plus_jacobians();
    expect_near(download(x.plus_jacobians, static_cast<long>(expected_jacobians.size())), expected_jacobians, 1e-15,
                "PlusJacobian");

    std::vector<double> delta = random_tangent();
    if (round == 1) std::fill(delta.begin(), delta.end(), 0.0);  // the quaternions' zero step
    const linalg_cuda::DeviceVector<double> d_delta(delta);
    ASSERT_TRUE(host.move_candidate(delta.data()));
    EXPECT_TRUE(device->take_step(d_delta.data()));
    EXPECT_TRUE(device->move_candidate());
    const std::vector<double> host_candidate(host.candidate(), host.candidate() + s.state_size);
    expect_near(download(device->at_candidate().device_state, s.state_size), host_candidate, 1e-14, "Plus");
    EXPECT_NEAR(device->step_norm(), host.step_norm(), 1e-13 * host.step_norm() + 1e-300);

    const std::vector<double> gradient = random_tangent();
    const linalg_cuda::DeviceVector<double> d_gradient(gradient);
    double host_norm = 0, host_max = 0, device_norm = 0, device_max = 0;
    ASSERT_TRUE(host.projected_gradient_norms(gradient.data(), &host_norm, &host_max));
    EXPECT_TRUE(device->gradient_norms(d_gradient.data(), &device_norm, &device_max));
    EXPECT_NEAR(device_norm, host_norm, 1e-13 * host_norm);
    EXPECT_NEAR(device_max, host_max, 1e-13 * host_max);

    // Move again (the projection used the candidate's array), then accept.
    ASSERT_TRUE(host.move_candidate(delta.data()));
    EXPECT_TRUE(device->move_candidate());
    host.accept_candidate();
    device->accept_candidate();
    const std::vector<double> host_x(host.x(), host.x() + s.state_size);
    expect_near(device->download_x(), host_x, 1e-14, "x after accepting");
    EXPECT_NEAR(device->x_norm(), host.x_norm(), 1e-13 * host.x_norm());
  }
  // A step with a NaN is not finite; writing back gives the user's blocks the device's x.
  std::vector<double> bad(s.tangent_size(), 0.0);
  bad[5] = std::nan("");
  const linalg_cuda::DeviceVector<double> d_bad(bad);
  EXPECT_FALSE(device->take_step(d_bad.data()));
  device->write_to_user();
  const std::vector<double> device_x = device->download_x();
  for (int b = 0; b < s.num_variable_blocks(); ++b)
    for (int k = 0; k < s.blocks[b].size; ++k)
      EXPECT_EQ(s.blocks[b].user[k], device_x[s.blocks[b].offset + k]) << "block " << b << " entry " << k;
}

TEST(DeviceState, LeavesOtherManifoldsToTheHost) {
  ceres::SphereManifold<3> sphere;
  ceres::QuaternionManifold quaternion;
  ManifoldKind kind = ManifoldKind::Euclidean;
  unsigned mask = 0;
  EXPECT_FALSE(recognise(&sphere, 3, &kind, &mask));
  EXPECT_TRUE(recognise(&quaternion, 4, &kind, &mask));
  EXPECT_EQ(kind, ManifoldKind::Quaternion);
  EXPECT_TRUE(recognise(nullptr, 3, &kind, &mask));
  EXPECT_EQ(kind, ManifoldKind::Euclidean);
  ceres::SubsetManifold subset(6, {0, 5});
  EXPECT_TRUE(recognise(&subset, 6, &kind, &mask));
  EXPECT_EQ(kind, ManifoldKind::Subset);
  EXPECT_EQ(mask, (1u << 0) | (1u << 5));
}

}  // namespace
