#pragma once
// Shared by the ceres_cuda tests: the Snavely model as a templated functor for Ceres' autodiff (the
// independent reference of the analytic cost function, and the "user-written" cost of the generic
// path), and problem builders.
#include <ceres/autodiff_cost_function.h>
#include <ceres/ceres.h>
#include <ceres/rotation.h>

#include <memory>
#include <string>
#include <vector>

#include "ceres_cuda/bal_problem.h"
#include "test_support.h"

namespace ba_test {

// Ceres' examples/snavely_reprojection_error.h, as users write it.
struct SnavelyFunctor {
  SnavelyFunctor(double x, double y) : observed_x(x), observed_y(y) {}
  template <typename T>
  bool operator()(const T* const camera, const T* const point, T* residuals) const {
    T p[3];
    ceres::AngleAxisRotatePoint(camera, point, p);
    p[0] += camera[3];
    p[1] += camera[4];
    p[2] += camera[5];
    const T xp = -p[0] / p[2];
    const T yp = -p[1] / p[2];
    const T r2 = xp * xp + yp * yp;
    const T distortion = T(1.0) + r2 * (camera[7] + camera[8] * r2);
    residuals[0] = camera[6] * distortion * xp - T(observed_x);
    residuals[1] = camera[6] * distortion * yp - T(observed_y);
    return true;
  }
  static ceres::CostFunction* Create(double x, double y) {
    return new ceres::AutoDiffCostFunction<SnavelyFunctor, 2, 9, 3>(new SnavelyFunctor(x, y));
  }
  double observed_x, observed_y;
};

inline std::string bal_path(const std::string& name) { return (test_support::data_dir() / "bal" / name).string(); }

// A problem built from bal (which must outlive it) with our analytic cost or the autodiff functor.
inline std::unique_ptr<ceres::Problem> make_problem(ceres_cuda::BALProblem& bal, bool autodiff,
                                                    ceres::LossFunction* loss = nullptr) {
  auto problem = std::make_unique<ceres::Problem>();
  if (!autodiff) {
    bal.add_to(problem.get(), loss);
    return problem;
  }
  for (int i = 0; i < bal.num_observations(); ++i)
    problem->AddResidualBlock(SnavelyFunctor::Create(bal.observations()[2 * i], bal.observations()[2 * i + 1]), loss,
                              bal.mutable_camera(bal.camera_index()[i]), bal.mutable_point(bal.point_index()[i]));
  return problem;
}

// bal with every third observation repeated (0.4 px off): residual blocks that share a camera and a
// point, whose Schur terms Ceres' SCHUR_JACOBI sums before the point's inverse (W_cp V_p^-1 W_cp', W_cp
// the sum over the pair's residuals).
inline ceres_cuda::BALProblem with_repeated_observations(const ceres_cuda::BALProblem& bal) {
  std::vector<int> cams, pts;
  std::vector<double> obs;
  for (int i = 0; i < bal.num_observations(); ++i)
    for (int copy = 0; copy < (i % 3 == 0 ? 2 : 1); ++copy) {
      cams.push_back(bal.camera_index()[i]);
      pts.push_back(bal.point_index()[i]);
      obs.push_back(bal.observations()[2 * i] + 0.4 * copy);
      obs.push_back(bal.observations()[2 * i + 1] - 0.4 * copy);
    }
  return ceres_cuda::BALProblem(bal.num_cameras(), bal.num_points(), cams, pts, obs, bal.cameras(), bal.points());
}

inline ceres::Solver::Options ba_options(ceres::LinearSolverType type = ceres::ITERATIVE_SCHUR,
                                         ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI,
                                         int iterations = 20) {
  ceres::Solver::Options options;
  options.linear_solver_type = type;
  options.preconditioner_type = preconditioner;
  options.max_num_iterations = iterations;
  options.num_threads = 2;
  options.logging_type = ceres::SILENT;
  return options;
}

}  // namespace ba_test
