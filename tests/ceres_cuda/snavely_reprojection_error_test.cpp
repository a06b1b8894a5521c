// The analytic SnavelyReprojectionError against Ceres' autodiff of the same model, on random cameras
// and points, including rotations small enough for Ceres' first-order branch and the series branch
// of our derivative.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "ba_test_support.h"
#include "ceres_cuda/snavely_reprojection_error.h"

namespace {

double relative(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::max(std::fabs(a), std::fabs(b))); }

// Autodiff of the functor in long double: the reference. (Autodiff in double loses up to ~1e-9 of
// the rotation derivative for |r| around 1e-8..1e-6, where the Jet arithmetic of Rodrigues' formula
// cancels; long double keeps the reference well below the 1e-10 asked of the analytic derivative.)
void long_double_autodiff(const double* camera, const double* point, double ox, double oy, double* r, double* jc,
                          double* jp) {
  using J = ceres::Jet<long double, 12>;
  J cam[9], pt[3], res[2];
  for (int k = 0; k < 9; ++k) cam[k] = J(camera[k], k);
  for (int k = 0; k < 3; ++k) pt[k] = J(point[k], 9 + k);
  ba_test::SnavelyFunctor(ox, oy)(cam, pt, res);
  for (int a = 0; a < 2; ++a) {
    r[a] = static_cast<double>(res[a].a);
    for (int k = 0; k < 9; ++k) jc[9 * a + k] = static_cast<double>(res[a].v[k]);
    for (int k = 0; k < 3; ++k) jp[3 * a + k] = static_cast<double>(res[a].v[9 + k]);
  }
}

void expect_matches_autodiff(const double* camera, const double* point, double ox, double oy) {
  SCOPED_TRACE(testing::Message() << "|r| = " << std::sqrt(camera[0] * camera[0] + camera[1] * camera[1] + camera[2] * camera[2]));
  ceres_cuda::SnavelyReprojectionError analytic(ox, oy);
  std::unique_ptr<ceres::CostFunction> autodiff(ba_test::SnavelyFunctor::Create(ox, oy));
  const double* params[2] = {camera, point};
  double r1[2], r2[2], jc1[18], jc2[18], jp1[6], jp2[6];
  double* j1[2] = {jc1, jp1};
  ASSERT_TRUE(analytic.Evaluate(params, r1, j1));
  long_double_autodiff(camera, point, ox, oy, r2, jc2, jp2);
  // Ceres' own (double) autodiff agrees too, to its accuracy (1e-7 relative at worst, near |r| = 3e-8).
  double r3[2], jc3[18], jp3[6];
  double* j3[2] = {jc3, jp3};
  ASSERT_TRUE(autodiff->Evaluate(params, r3, j3));
  for (int k = 0; k < 18; ++k) EXPECT_NEAR(jc1[k], jc3[k], 1e-6 * (1.0 + std::fabs(jc3[k])));
  // Scale of the Jacobian entries (pixels per unit): compare relative to the row's largest entry.
  for (int a = 0; a < 2; ++a) {
    EXPECT_LT(relative(r1[a], r2[a]), 1e-10);
    double scale = 1.0;
    for (int k = 0; k < 9; ++k) scale = std::max(scale, std::fabs(jc2[9 * a + k]));
    for (int k = 0; k < 3; ++k) scale = std::max(scale, std::fabs(jp2[3 * a + k]));
    for (int k = 0; k < 9; ++k) EXPECT_LT(std::fabs(jc1[9 * a + k] - jc2[9 * a + k]) / scale, 1e-10) << "camera " << a << "," << k;
    for (int k = 0; k < 3; ++k) EXPECT_LT(std::fabs(jp1[3 * a + k] - jp2[3 * a + k]) / scale, 1e-10) << "point " << a << "," << k;
  }
  // Residuals alone, and one Jacobian at a time (Ceres asks for what is not constant).
  double r4[2], only_point[6];
  ASSERT_TRUE(analytic.Evaluate(params, r4, nullptr));
  EXPECT_EQ(r4[0], r1[0]);
  double* j4[2] = {nullptr, only_point};
  ASSERT_TRUE(analytic.Evaluate(params, r4, j4));
  for (int k = 0; k < 6; ++k) EXPECT_EQ(only_point[k], jp1[k]);
}

TEST(SnavelyReprojectionError, MatchesAutodiffOnRandomCameras) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 2000; ++trial) {
    // Rotation magnitudes from 1e-9 (first-order branch) through the series range to ~pi.
    const double magnitude = std::pow(10.0, -9.0 + 9.5 * (trial % 20) / 19.0);
    double camera[9] = {u(rng), u(rng), u(rng), u(rng), u(rng), 5.0 + u(rng), 500 + 100 * u(rng), 0.1 * u(rng),
                        0.01 * u(rng)};
    const double n = std::sqrt(camera[0] * camera[0] + camera[1] * camera[1] + camera[2] * camera[2]);
    for (int k = 0; k < 3; ++k) camera[k] *= std::min(magnitude, 3.1) / n;
    const double point[3] = {u(rng), u(rng), u(rng) - 3.0};
    expect_matches_autodiff(camera, point, 100 * u(rng), 100 * u(rng));
  }
}

TEST(SnavelyReprojectionError, RotationExactlyZeroAndTinyAngles) {
  const double point[3] = {0.3, -0.2, -4.0};
  for (const double angle : {0.0, 1e-20, 1e-8, 1.49e-8, 1.5e-8, 1e-6, 1e-4, 0.99e-4, 1.01e-4}) {
    const double camera[9] = {angle, -0.5 * angle, 0.25 * angle, 0.1, 0.2, 0.3, 800.0, -0.1, 0.02};
    expect_matches_autodiff(camera, point, 1.0, 2.0);
  }
}

TEST(SnavelyReprojectionError, PointInTheCameraPlaneFails) {
  const double camera[9] = {0, 0, 0, 0, 0, 0, 500, 0, 0};
  const double point[3] = {1.0, 2.0, 0.0};
  const double* params[2] = {camera, point};
  double r[2];
  EXPECT_FALSE(ceres_cuda::SnavelyReprojectionError(0, 0).Evaluate(params, r, nullptr));
}

}  // namespace
