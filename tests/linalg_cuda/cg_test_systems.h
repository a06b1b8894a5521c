#pragma once
// Test systems shared by the CG tests: random SPD matrices, the generated Poisson problems and the
// SuiteSparse files in ../shared/data/matrices.
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include "linalg_cuda/matrix_market.h"
#include "linalg_cuda/poisson.h"
#include "test_support.h"

namespace cg_test {

// Random dense SPD: Q diag(lambda) Q^T with eigenvalues spread over [1, condition].
inline Eigen::MatrixXd random_spd(int n, double condition, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd g(n, n);
  for (int i = 0; i < g.size(); ++i) g.data()[i] = normal(rng);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
  const Eigen::MatrixXd q = qr.householderQ();
  Eigen::VectorXd lambda(n);
  for (int i = 0; i < n; ++i) lambda[i] = n == 1 ? 2.0 : std::pow(condition, double(i) / (n - 1));
  Eigen::MatrixXd a = q * lambda.asDiagonal() * q.transpose();
  return 0.5 * (a + a.transpose());  // exactly symmetric
}

inline Eigen::VectorXd random_vector(Eigen::Index n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = uniform(rng);
  return v;
}

struct NamedMatrix {
  std::string name;
  linalg_cuda::CsrMatrix matrix;
};

// Every .mtx file in data/matrices (empty when the folder is absent).
inline std::vector<NamedMatrix> shared_matrices() {
  std::vector<NamedMatrix> out;
  const std::filesystem::path dir = test_support::data_dir() / "matrices";
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".mtx")
      out.push_back({entry.path().filename().string(), linalg_cuda::read_matrix_market(entry.path().string())});
  return out;
}

inline double relative_difference(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  const double scale = std::max(a.norm(), b.norm());
  return scale > 0 ? (a - b).norm() / scale : 0.0;
}

}  // namespace cg_test
