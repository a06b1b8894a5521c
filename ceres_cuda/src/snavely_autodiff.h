#pragma once
// The Snavely camera model (Ceres' examples/snavely_reprojection_error.h) for Ceres' AutoDiff, as the
// library's example problems write their user-side cost functions (BALProblem::Cost::AutoDiff, the
// split shape's functor): a point p in the camera frame (after rotation and translation) projected
// with the focal length k[0] and the radial distortion k[1], k[2], minus the observation.
namespace ceres_cuda::detail {

template <typename T>
void snavely_autodiff_residuals(const T* p, const T* k, double observed_x, double observed_y, T* residuals) {
  const T xp = -p[0] / p[2], yp = -p[1] / p[2];
  const T r2 = xp * xp + yp * yp;
  const T distortion = T(1.0) + r2 * (k[1] + k[2] * r2);
  residuals[0] = k[0] * distortion * xp - T(observed_x);
  residuals[1] = k[0] * distortion * yp - T(observed_y);
}

}  // namespace ceres_cuda::detail
