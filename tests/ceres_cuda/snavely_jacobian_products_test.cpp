// The camera-Jacobian products the fast path's Schur passes form from compact views and camera
// frames (snavely_jacobian_products.h, and the loss correction as an operator in robust_loss.h)
// against the Jacobian snavely_residual stores, multiplied out: the residual, J_c x and a camera's sum
// of J_c' u, on random cameras and points whose rotations span the first-order, series and Rodrigues
// branches. Host code: these are the same functions the GPU
// kernels call.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "robust_loss.h"
#include "snavely_jacobian_products.h"
#include "snavely_projection.h"

namespace {

using namespace ceres_cuda::detail;

// |a - b| / max(1, max |b|) over the entries.
double relative_difference(const double* a, const double* b, int n) {
  double d = 0.0, scale = 1.0;
  for (int k = 0; k < n; ++k) {
    d = std::max(d, std::fabs(a[k] - b[k]));
    scale = std::max(scale, std::fabs(b[k]));
  }
  return d / scale;
}

struct Case {
  double camera[9];
  std::vector<double> points;  // 3 per residual of the camera
};

Case random_case(std::mt19937& rng, double rotation) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Case c{{u(rng), u(rng), u(rng), u(rng), u(rng), 5.0 + u(rng), 500 + 100 * u(rng), 0.1 * u(rng), 0.01 * u(rng)}, {}};
  const double n = std::sqrt(c.camera[0] * c.camera[0] + c.camera[1] * c.camera[1] + c.camera[2] * c.camera[2]);
  for (int k = 0; k < 3; ++k) c.camera[k] *= rotation / n;
  for (int i = 0; i < 7; ++i)
    for (const double v : {u(rng), u(rng), u(rng) - 3.0}) c.points.push_back(v);
  return c;
}

TEST(SnavelyJacobianProducts, MatchTheStoredJacobians) {
  std::mt19937 rng(11);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int trial = 0; trial < 400; ++trial) {
    const double rotation = std::min(3.1, std::pow(10.0, -9.0 + 9.5 * (trial % 20) / 19.0));
    SCOPED_TRACE(testing::Message() << "|r| = " << rotation);
    const Case c = random_case(rng, rotation);
    double frame[kFrameSize];
    snavely_frame(c.camera, frame);
    double x[9];
    for (double& v : x) v = n(rng);
    const int residuals = static_cast<int>(c.points.size() / 3);
    double sum_expected[9] = {0}, acc[9] = {0};
    for (int i = 0; i < residuals; ++i) {
      const double* X = &c.points[3 * i];
      double r[2], jc[18];
      ASSERT_TRUE(snavely_residual(c.camera, X, 3.0, -2.0, r, jc, nullptr));
      SnavelyView view;
      ASSERT_TRUE(snavely_view(frame, X, &view));
      const double residual[2] = {view.prediction[0] - 3.0, view.prediction[1] + 2.0};
      EXPECT_LT(relative_difference(residual, r, 2), 1e-12);

      // The compact form: a residual's 3 values and the camera's 12 (J_c x) or its frame (J_c' v),
      // with the rotation's direction q~ (B q in the first-order branch).
      double compact[kCompactViewSize], camera[kCameraTangentSize];
      compact_view(view, compact);
      camera_tangent(frame, x, camera);
      const CompactImage im = compact_image(compact, camera + kTangentIntrinsics);
      EXPECT_EQ(first_order_frame(frame), !(rotation * rotation > 2.220446049250313080847e-16));
      double q[3];
      rotation_direction(frame, first_order_frame(frame), compact, q);
      double u_expected[2] = {0, 0}, u[2];
      for (int a = 0; a < 2; ++a)
        for (int k = 0; k < 9; ++k) u_expected[a] += jc[9 * a + k] * x[k];
      compact_jacobian_times(im, camera, q, u);
      EXPECT_LT(relative_difference(u, u_expected, 2), 1e-11);

      const double v[2] = {n(rng), n(rng)};
      for (int k = 0; k < 9; ++k)
        for (int a = 0; a < 2; ++a) sum_expected[k] += jc[9 * a + k] * v[a];
      compact_camera_jacobian_transpose_accumulate(im, q, v, acc);
    }
    double sum[9];
    camera_jacobian_transpose_finish(frame, acc, sum);
    EXPECT_LT(relative_difference(sum, sum_expected, 9), 1e-11);
  }
}

TEST(SnavelyJacobianProducts, LossCorrectionAsAnOperatorMatchesTheCorrectedJacobian) {
  std::mt19937 rng(12);
  std::normal_distribution<double> n(0.0, 1.0);
  for (const LossKind kind : {LossKind::Huber, LossKind::Cauchy, LossKind::SoftL1}) {
    const BuiltinLoss loss{kind, 1.5};
    for (int trial = 0; trial < 50; ++trial) {
      const double f[2] = {3 * n(rng), 3 * n(rng)};
      double J[2 * 5], x[5];
      for (double& v : J) v = n(rng);
      for (double& v : x) v = n(rng);
      const double s = f[0] * f[0] + f[1] * f[1];
      double rho[3];
      loss.evaluate(s, rho);
      const LossCorrection c = loss_correction(s, rho);
      double corrected[2 * 5];
      std::copy(J, J + 10, corrected);
      correct_jacobian(c, f, 2, 5, [&corrected](int a, int k) -> double& { return corrected[a * 5 + k]; });
      // (C J) x against C (J x).
      double expected[2] = {0, 0}, Jx[2] = {0, 0};
      for (int a = 0; a < 2; ++a)
        for (int k = 0; k < 5; ++k) {
          expected[a] += corrected[a * 5 + k] * x[k];
          Jx[a] += J[a * 5 + k] * x[k];
        }
      apply_correction(c, f, 2, Jx);
      EXPECT_LT(relative_difference(Jx, expected, 2), 1e-13);
      // (C J)' v against J' (C v).
      double v[2] = {n(rng), n(rng)}, transposed[5] = {0}, via[5] = {0};
      for (int k = 0; k < 5; ++k)
        for (int a = 0; a < 2; ++a) transposed[k] += corrected[a * 5 + k] * v[a];
      apply_correction(c, f, 2, v);
      for (int k = 0; k < 5; ++k)
        for (int a = 0; a < 2; ++a) via[k] += J[a * 5 + k] * v[a];
      EXPECT_LT(relative_difference(via, transposed, 5), 1e-13);
    }
  }
}

}  // namespace
