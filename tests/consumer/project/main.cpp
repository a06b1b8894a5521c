// A user's program: solves a Poisson system on whatever backend is available.
#include <iostream>

#include <linalg_cuda/linalg_cuda.h>

int main() {
  const linalg_cuda::CsrMatrix a = linalg_cuda::poisson2d(32);
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(a.rows());
  Eigen::VectorXd x;
  linalg_cuda::CgOptions options;
  options.preconditioner = linalg_cuda::PreconditionerType::Jacobi;
  const linalg_cuda::SolverSummary summary = linalg_cuda::solve(a, b, x, options);
  std::cout << summary.brief() << "\n";
  const double residual = (b - a * x).norm() / b.norm();
  return summary.converged && residual < 1e-9 ? 0 : 1;
}
