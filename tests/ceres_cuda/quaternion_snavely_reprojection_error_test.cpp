// The analytic QuaternionSnavelyReprojectionError against Ceres' autodiff of the same model (the
// functor of SplitBALProblem: ceres::UnitQuaternionRotatePoint, then the Snavely projection), on
// random poses, intrinsics and points, unit and non-unit quaternions (the derivatives are those of the
// polynomial, which autodiff differentiates as written).
#include <ceres/autodiff_cost_function.h>
#include <ceres/rotation.h>

#include <cmath>
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "ceres_cuda/quaternion_snavely_reprojection_error.h"

namespace {

struct Functor {
  double x, y;
  template <typename T>
  bool operator()(const T* q, const T* t, const T* k, const T* X, T* r) const {
    T p[3];
    ceres::UnitQuaternionRotatePoint(q, X, p);
    for (int i = 0; i < 3; ++i) p[i] += t[i];
    const T xp = -p[0] / p[2], yp = -p[1] / p[2];
    const T r2 = xp * xp + yp * yp;
    const T d = T(1.0) + r2 * (k[1] + k[2] * r2);
    r[0] = k[0] * d * xp - T(x);
    r[1] = k[0] * d * yp - T(y);
    return true;
  }
};

constexpr int kSizes[4] = {4, 3, 3, 3};

TEST(QuaternionSnavelyReprojectionError, MatchesAutodiff) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 2000; ++trial) {
    double q[4] = {u(rng), u(rng), u(rng), u(rng)};
    const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    const double scale = trial % 2 == 0 ? 1.0 : 0.5 + std::fabs(u(rng));  // odd trials: not unit
    for (double& v : q) v *= scale / norm;
    const double t[3] = {u(rng), u(rng), 5.0 + u(rng)};
    const double k[3] = {500 + 100 * u(rng), 0.1 * u(rng), 0.01 * u(rng)};
    const double X[3] = {u(rng), u(rng), u(rng) - 3.0};
    const double ox = 100 * u(rng), oy = 100 * u(rng);
    const double* params[4] = {q, t, k, X};
    ceres_cuda::QuaternionSnavelyReprojectionError analytic(ox, oy);
    ceres::AutoDiffCostFunction<Functor, 2, 4, 3, 3, 3> autodiff(new Functor{ox, oy});
    double r1[2], r2[2], j1[4][8], j2[4][8];
    double* jac1[4] = {j1[0], j1[1], j1[2], j1[3]};
    double* jac2[4] = {j2[0], j2[1], j2[2], j2[3]};
    ASSERT_TRUE(analytic.Evaluate(params, r1, jac1));
    ASSERT_TRUE(autodiff.Evaluate(params, r2, jac2));
    for (int a = 0; a < 2; ++a) {
      EXPECT_NEAR(r1[a], r2[a], 1e-11 * (1.0 + std::fabs(r2[a])));
      double row_scale = 1.0;  // pixels per unit: relative to the row's largest entry
      for (int b = 0; b < 4; ++b)
        for (int c = 0; c < kSizes[b]; ++c) row_scale = std::max(row_scale, std::fabs(j2[b][a * kSizes[b] + c]));
      for (int b = 0; b < 4; ++b)
        for (int c = 0; c < kSizes[b]; ++c)
          EXPECT_NEAR(j1[b][a * kSizes[b] + c], j2[b][a * kSizes[b] + c], 1e-12 * row_scale)
              << "trial " << trial << " block " << b << " row " << a << " column " << c;
    }
    // One Jacobian at a time (Ceres asks only for the blocks that vary), and the residuals alone.
    for (int b = 0; b < 4; ++b) {
      double only[8], r3[2];
      double* jac3[4] = {nullptr, nullptr, nullptr, nullptr};
      jac3[b] = only;
      ASSERT_TRUE(analytic.Evaluate(params, r3, jac3));
      for (int c = 0; c < 2 * kSizes[b]; ++c) EXPECT_EQ(only[c], j1[b][c]);
    }
    double r4[2];
    ASSERT_TRUE(analytic.Evaluate(params, r4, nullptr));
    EXPECT_EQ(r4[0], r1[0]);
    EXPECT_EQ(r4[1], r1[1]);
  }
}

TEST(QuaternionSnavelyReprojectionError, PointInTheCameraPlaneFails) {
  const double q[4] = {1, 0, 0, 0}, t[3] = {0, 0, 0}, k[3] = {500, 0, 0}, X[3] = {1.0, 2.0, 0.0};
  const double* params[4] = {q, t, k, X};
  double r[2];
  EXPECT_FALSE(ceres_cuda::QuaternionSnavelyReprojectionError(0, 0).Evaluate(params, r, nullptr));
}

}  // namespace
