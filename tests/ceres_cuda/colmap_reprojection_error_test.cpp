// ColmapReprojectionError against Ceres' autodiff of COLMAP's own formulas (BundleAdjustmentCostFunction
// with each camera model's WorldToImage, written here after COLMAP 3.8): residuals and Jacobians to
// 1e-12 relative, on random poses, cameras and points, points near the image's border and near the
// camera's plane, and with blocks held constant.
#include <ceres/autodiff_cost_function.h>
#include <ceres/rotation.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "ceres_cuda/colmap_reprojection_error.h"
#include "linalg_cuda/errors.h"

namespace {

using ceres_cuda::ColmapCameraModel;

// COLMAP's WorldToImage of each model, in its order of operations.
template <typename T>
void world_to_image(ColmapCameraModel model, const T* params, T u, T v, T* x, T* y) {
  switch (model) {
    case ColmapCameraModel::SimplePinhole:
      *x = params[0] * u + params[1];
      *y = params[0] * v + params[2];
      return;
    case ColmapCameraModel::Pinhole:
      *x = params[0] * u + params[2];
      *y = params[1] * v + params[3];
      return;
    case ColmapCameraModel::SimpleRadial:
    case ColmapCameraModel::Radial: {
      const T k1 = params[3];
      const T k2 = model == ColmapCameraModel::Radial ? params[4] : T(0);
      const T u2 = u * u, v2 = v * v, r2 = u2 + v2;
      const T radial = model == ColmapCameraModel::Radial ? k1 * r2 + k2 * r2 * r2 : k1 * r2;
      const T du = u * radial, dv = v * radial;
      *x = params[0] * (u + du) + params[1];
      *y = params[0] * (v + dv) + params[2];
      return;
    }
    case ColmapCameraModel::OpenCV: {
      const T k1 = params[4], k2 = params[5], p1 = params[6], p2 = params[7];
      const T u2 = u * u, uv = u * v, v2 = v * v, r2 = u2 + v2;
      const T radial = k1 * r2 + k2 * r2 * r2;
      const T du = u * radial + T(2) * p1 * uv + p2 * (r2 + T(2) * u2);
      const T dv = v * radial + T(2) * p2 * uv + p1 * (r2 + T(2) * v2);
      *x = params[0] * (u + du) + params[2];
      *y = params[1] * (v + dv) + params[3];
      return;
    }
    default: break;
  }
}

struct ColmapFunctor {
  ColmapCameraModel model;
  double x, y;
  template <typename T>
  bool operator()(const T* qvec, const T* tvec, const T* params, const T* point, T* residuals) const {
    T p[3];
    ceres::UnitQuaternionRotatePoint(qvec, point, p);
    p[0] += tvec[0];
    p[1] += tvec[1];
    p[2] += tvec[2];
    p[0] /= p[2];
    p[1] /= p[2];
    world_to_image(model, params, p[0], p[1], &residuals[0], &residuals[1]);
    residuals[0] -= T(x);
    residuals[1] -= T(y);
    return true;
  }
};

template <int N>
ceres::CostFunction* autodiff(ColmapCameraModel model, double x, double y) {
  return new ceres::AutoDiffCostFunction<ColmapFunctor, 2, 4, 3, N, 3>(new ColmapFunctor{model, x, y});
}

ceres::CostFunction* reference(ColmapCameraModel model, double x, double y) {
  switch (ceres_cuda::colmap_camera_model_num_params(model)) {
    case 3: return autodiff<3>(model, x, y);
    case 4: return autodiff<4>(model, x, y);
    case 5: return autodiff<5>(model, x, y);
    default: return autodiff<8>(model, x, y);
  }
}

// Relative difference, against the larger of the two magnitudes and 1.
double difference(double a, double b) { return std::fabs(a - b) / std::max({1.0, std::fabs(a), std::fabs(b)}); }

TEST(ColmapReprojectionError, MatchesAutodiffOfColmapsFormulas) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const ColmapCameraModel model : {ColmapCameraModel::SimplePinhole, ColmapCameraModel::Pinhole,
                                        ColmapCameraModel::SimpleRadial, ColmapCameraModel::Radial,
                                        ColmapCameraModel::OpenCV}) {
    const int n = ceres_cuda::colmap_camera_model_num_params(model);
    double worst = 0;
    for (int trial = 0; trial < 300; ++trial) {
      double q[4] = {u(rng), u(rng), u(rng), u(rng)};
      const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      for (double& c : q) c /= norm;
      double t[3] = {u(rng), u(rng), 4 + u(rng)};
      std::vector<double> params(n);
      const bool two_focal = model == ColmapCameraModel::Pinhole || model == ColmapCameraModel::OpenCV;
      const int focal = two_focal ? 2 : 1;
      for (int k = 0; k < focal; ++k) params[k] = 800 + 200 * u(rng);
      for (int k = focal; k < focal + 2; ++k) params[k] = 500 + 100 * u(rng);
      for (int k = focal + 2; k < n; ++k) params[k] = 0.05 * u(rng);
      // A point in front of the camera: most inside, some near the border of a wide view (|u| near 1),
      // some near the camera's plane (depth 1e-3).
      const double depth = trial % 10 == 0 ? 1e-3 * (1.5 + u(rng)) : 3 + u(rng);
      const double spread = trial % 10 == 1 ? 1.0 : 0.3;
      double camera[3] = {spread * depth * u(rng), spread * depth * u(rng), depth};
      // The world point whose camera coordinates are `camera`: X = R' (camera - t).
      double conjugate[4] = {q[0], -q[1], -q[2], -q[3]}, shifted[3], X[3];
      for (int k = 0; k < 3; ++k) shifted[k] = camera[k] - t[k];
      ceres::UnitQuaternionRotatePoint(conjugate, shifted, X);
      const double observed_x = 600 * u(rng), observed_y = 400 * u(rng);

      const ceres_cuda::ColmapReprojectionError ours(model, observed_x, observed_y);
      std::unique_ptr<ceres::CostFunction> theirs(reference(model, observed_x, observed_y));
      const double* parameters[4] = {q, t, params.data(), X};
      double r1[2], r2[2];
      std::vector<double> a[4], b[4];
      double* ja[4];
      double* jb[4];
      const int sizes[4] = {4, 3, n, 3};
      for (int k = 0; k < 4; ++k) {
        a[k].assign(2 * sizes[k], 0.0);
        b[k].assign(2 * sizes[k], 0.0);
        ja[k] = a[k].data();
        jb[k] = b[k].data();
      }
      // Some blocks constant: a null Jacobian.
      if (trial % 4 == 2) ja[2] = jb[2] = nullptr;
      if (trial % 4 == 3) ja[0] = jb[0] = nullptr;
      ASSERT_TRUE(ours.Evaluate(parameters, r1, ja));
      ASSERT_TRUE(theirs->Evaluate(parameters, r2, jb));
      for (int k = 0; k < 2; ++k) worst = std::max(worst, difference(r1[k], r2[k]));
      for (int k = 0; k < 4; ++k)
        if (ja[k])
          for (int e = 0; e < 2 * sizes[k]; ++e) worst = std::max(worst, difference(a[k][e], b[k][e]));
      // Residuals alone.
      double r3[2];
      ASSERT_TRUE(ours.Evaluate(parameters, r3, nullptr));
      EXPECT_EQ(r3[0], r1[0]);
      EXPECT_EQ(r3[1], r1[1]);
    }
    EXPECT_LT(worst, 1e-12) << ceres_cuda::colmap_camera_model_name(model);
  }
}

TEST(ColmapReprojectionError, BlocksAndFailures) {
  const ceres_cuda::ColmapReprojectionError cost(ColmapCameraModel::OpenCV, 1, 2);
  EXPECT_EQ(cost.num_residuals(), 2);
  EXPECT_EQ(cost.parameter_block_sizes(), (std::vector<int32_t>{4, 3, 8, 3}));
  // A point in the camera's plane cannot be projected.
  const double q[4] = {1, 0, 0, 0}, t[3] = {0, 0, 0}, params[8] = {1, 1, 0, 0, 0, 0, 0, 0}, X[3] = {1, 1, 0};
  const double* parameters[4] = {q, t, params, X};
  double r[2];
  EXPECT_FALSE(cost.Evaluate(parameters, r, nullptr));
  EXPECT_THROW(ceres_cuda::ColmapReprojectionError(ColmapCameraModel::Fov, 0, 0), linalg_cuda::InvalidArgument);
  EXPECT_THROW(ceres_cuda::ColmapReprojectionError(ColmapCameraModel::FullOpenCV, 0, 0), linalg_cuda::InvalidArgument);
}

}  // namespace
