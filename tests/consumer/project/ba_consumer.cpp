// A Ceres user's program: bundle adjustment with the one changed line (ceres_cuda::Solve).
#include <ceres/ceres.h>

#include <iostream>

#include <ceres_cuda/ceres_cuda.h>

int main() {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 8;
  o.num_points = 300;
  ceres_cuda::BALProblem bal = ceres_cuda::make_synthetic_bal(o);
  ceres::Problem problem;
  bal.add_to(&problem, new ceres::HuberLoss(1.0));
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::ITERATIVE_SCHUR;
  options.preconditioner_type = ceres::SCHUR_JACOBI;
  options.max_num_iterations = 20;
  ceres::Solver::Summary summary;
  ceres_cuda::Solve(options, &problem, &summary);
  std::cout << summary.BriefReport() << "\n";
  return summary.IsSolutionUsable() && summary.final_cost < 0.1 * summary.initial_cost ? 0 : 1;
}
