#include "ceres_cuda/split_bal_problem.h"

#include <ceres/autodiff_cost_function.h>
#include <ceres/manifold.h>
#include <ceres/problem.h>
#include <ceres/rotation.h>

#include "ceres_cuda/quaternion_snavely_reprojection_error.h"
#include "snavely_autodiff.h"

namespace ceres_cuda {
namespace {

// The Snavely model (Ceres' examples/snavely_reprojection_error.h) with the rotation by a quaternion.
struct QuaternionReprojection {
  QuaternionReprojection(double x, double y) : observed_x(x), observed_y(y) {}
  template <typename T>
  bool operator()(const T* q, const T* t, const T* k, const T* X, T* residuals) const {
    T p[3];
    ceres::UnitQuaternionRotatePoint(q, X, p);
    p[0] += t[0];
    p[1] += t[1];
    p[2] += t[2];
    detail::snavely_autodiff_residuals(p, k, observed_x, observed_y, residuals);
    return true;
  }
  double observed_x, observed_y;
};

}  // namespace

SplitBALProblem::SplitBALProblem(const BALProblem& bal, bool shared_intrinsics)
    : shared_(shared_intrinsics),
      points_(bal.points()),
      observations_(bal.observations()),
      image_index_(bal.camera_index()),
      point_index_(bal.point_index()) {
  const int n = bal.num_cameras();
  rotations_.resize(4 * static_cast<std::size_t>(n));
  translations_.resize(3 * static_cast<std::size_t>(n));
  intrinsics_.resize(3 * static_cast<std::size_t>(shared_intrinsics ? 1 : n));
  for (int c = 0; c < n; ++c) {
    const double* camera = bal.cameras().data() + BALProblem::kCameraSize * static_cast<std::size_t>(c);
    ceres::AngleAxisToQuaternion(camera, rotation(c));
    for (int k = 0; k < 3; ++k) translation(c)[k] = camera[3 + k];
    if (!shared_intrinsics || c == 0)
      for (int k = 0; k < 3; ++k) intrinsics(c)[k] = camera[6 + k];
  }
}

void SplitBALProblem::add_to(ceres::Problem* problem, ceres::LossFunction* loss, Cost kind) {
  for (std::size_t i = 0; i < image_index_.size(); ++i) {
    const int c = image_index_[i];
    const double x = observations_[2 * i], y = observations_[2 * i + 1];
    ceres::CostFunction* cost =
        kind == Cost::Library
            ? QuaternionSnavelyReprojectionError::Create(x, y)
            : new ceres::AutoDiffCostFunction<QuaternionReprojection, 2, 4, 3, 3, 3>(new QuaternionReprojection(x, y));
    problem->AddResidualBlock(cost, loss, rotation(c), translation(c), intrinsics(c), point(point_index_[i]));
  }
  // One manifold object for all rotations: Problem takes ownership of it once.
  ceres::Manifold* quaternion = new ceres::QuaternionManifold;
  for (int c = 0; c < num_images(); ++c)
    if (problem->HasParameterBlock(rotation(c))) problem->SetManifold(rotation(c), quaternion);
}

void SplitBALProblem::copy_to(BALProblem* bal) const {
  for (int c = 0; c < num_images(); ++c) {
    double* camera = bal->mutable_camera(c);
    ceres::QuaternionToAngleAxis(rotations_.data() + 4 * static_cast<std::size_t>(c), camera);
    for (int k = 0; k < 3; ++k) camera[3 + k] = translations_[3 * static_cast<std::size_t>(c) + k];
    for (int k = 0; k < 3; ++k) camera[6 + k] = intrinsics_[(shared_ ? 0 : 3 * static_cast<std::size_t>(c)) + k];
  }
  for (int i = 0; i < num_points(); ++i)
    for (int k = 0; k < 3; ++k) bal->mutable_point(i)[k] = points_[3 * static_cast<std::size_t>(i) + k];
}

}  // namespace ceres_cuda
