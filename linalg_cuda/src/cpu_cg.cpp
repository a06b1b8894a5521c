#include "linalg_cuda/cpu_cg.h"

#include <chrono>
#include <string>
#include <vector>

#include "cg_state.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"
#include "linalg_cuda/internal/readable.h"
#include "linalg_cuda/internal/seconds_since.h"
#include "linalg_cuda/internal/small_spd_inverse.h"

namespace linalg_cuda::cpu {
namespace {

void require_square(Eigen::Index rows, Eigen::Index cols) {
  if (rows != cols)
    throw DimensionMismatch("cpu::cg: the matrix must be square, got " + std::to_string(rows) + "x" +
                            std::to_string(cols));
}

Apply jacobi(const Eigen::VectorXd& diagonal) {
  for (Eigen::Index i = 0; i < diagonal.size(); ++i)
    if (!(diagonal[i] > 0.0) || !std::isfinite(diagonal[i]))
      throw InvalidArgument("JacobiPreconditioner: diagonal entry " + std::to_string(i) + " is " +
                            detail::readable(diagonal[i]) + "; an SPD matrix has a positive, finite diagonal");
  Eigen::VectorXd inverse = diagonal.cwiseInverse();
  return [inverse](const Eigen::VectorXd& r, Eigen::VectorXd& z) { z = inverse.cwiseProduct(r); };
}

// blocks[k] holds block k row-major with leading dimension kMax (the layout the shared inverse uses).
Apply block_jacobi(std::vector<std::vector<double>> blocks, Eigen::Index n, int block_size) {
  constexpr int kMax = 16;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const int m = static_cast<int>(std::min<Eigen::Index>(block_size, n - static_cast<Eigen::Index>(k) * block_size));
    if (!detail::invert_spd_in_place(blocks[k].data(), m, kMax))
      throw InvalidArgument("BlockJacobiPreconditioner: diagonal block " + std::to_string(k) + " (rows " +
                            std::to_string(k * block_size) + "..) is not positive definite");
  }
  return [blocks = std::move(blocks), n, block_size](const Eigen::VectorXd& r, Eigen::VectorXd& z) {
    z.resize(n);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const Eigen::Index first = static_cast<Eigen::Index>(k) * block_size;
      const int m = static_cast<int>(std::min<Eigen::Index>(block_size, n - first));
      for (int i = 0; i < m; ++i) {
        double s = 0.0;
        for (int j = 0; j < m; ++j) s += blocks[k][i * kMax + j] * r[first + j];
        z[first + i] = s;
      }
    }
  };
}

void check_block_size(int block_size) {
  if (block_size < 1 || block_size > 16)
    throw InvalidArgument("BlockJacobiPreconditioner: block size " + std::to_string(block_size) + " outside [1, 16]");
}

}  // namespace

Apply make_preconditioner(const CsrMatrix& a, PreconditionerType type, int block_size) {
  require_square(a.rows(), a.cols());
  if (type == PreconditionerType::None) return {};
  if (type == PreconditionerType::Jacobi) {
    Eigen::VectorXd diagonal = Eigen::VectorXd::Zero(a.rows());
    for (Eigen::Index i = 0; i < a.outerSize(); ++i)
      for (CsrMatrix::InnerIterator it(a, i); it; ++it)
        if (it.col() == i) diagonal[i] += it.value();
    return jacobi(diagonal);
  }
  check_block_size(block_size);
  const Eigen::Index n = a.rows();
  std::vector<std::vector<double>> blocks((n + block_size - 1) / block_size, std::vector<double>(16 * 16, 0.0));
  for (Eigen::Index i = 0; i < a.outerSize(); ++i)
    for (CsrMatrix::InnerIterator it(a, i); it; ++it)
      if (it.col() / block_size == i / block_size)
        blocks[i / block_size][(i % block_size) * 16 + it.col() % block_size] += it.value();
  return block_jacobi(std::move(blocks), n, block_size);
}

namespace {

Apply make_dense_preconditioner(const Eigen::MatrixXd& a, PreconditionerType type, int block_size) {
  if (type == PreconditionerType::None) return {};
  if (type == PreconditionerType::Jacobi) return jacobi(a.diagonal());
  check_block_size(block_size);
  const Eigen::Index n = a.rows();
  std::vector<std::vector<double>> blocks((n + block_size - 1) / block_size, std::vector<double>(16 * 16, 0.0));
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = (i / block_size) * block_size; j < std::min<Eigen::Index>(n, (i / block_size + 1) * block_size); ++j)
      blocks[i / block_size][(i % block_size) * 16 + j % block_size] = a(i, j);
  return block_jacobi(std::move(blocks), n, block_size);
}

}  // namespace

SolverSummary cg(const Apply& apply_a, const Apply& apply_m, const Eigen::VectorXd& b, Eigen::VectorXd& x,
                 const CgOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Eigen::Index n = b.size();
  if (x.size() != n)
    throw DimensionMismatch("cpu::cg: x has " + std::to_string(x.size()) + " entries, b " + std::to_string(n));
  validate(options.stop);
  SolverSummary summary;
  summary.backend = Backend::Cpu;
  detail::CgState s = detail::make_cg_state(options.stop);
  if (n == 0) {
    s.status = detail::kCgConverged;
  } else {
    Eigen::VectorXd q(n), r(n), z(n), p(n);
    apply_a(x, q);
    r = b - q;
    if (apply_m) apply_m(r, z); else z = r;
    p = z;
    detail::start_cg(&s, r.squaredNorm(), b.squaredNorm(), r.dot(z), static_cast<bool>(apply_m), x.dot(b + r));
    summary.initial_residual_norm = std::sqrt(s.rr);
    while (s.status == detail::kCgRunning) {
      apply_a(p, q);
      detail::finish_alpha(&s, p.dot(q));
      if (s.status != detail::kCgRunning) break;
      x += s.alpha * p;
      r -= s.alpha * q;
      if (apply_m) apply_m(r, z); else z = r;
      detail::finish_beta(&s, r.squaredNorm(), r.dot(z), s.quadratic_tolerance > 0.0 ? x.dot(b + r) : 0.0);
      if (s.status != detail::kCgRunning) break;
      p = z + s.beta * p;
    }
  }
  detail::fill_summary(s, options.stop, &summary);
  if (n == 0) summary.message = "empty system: nothing to solve";
  summary.seconds = detail::seconds_since(start);
  return summary;
}

SolverSummary cg(const CsrMatrix& a, const Eigen::VectorXd& b, Eigen::VectorXd& x, const CgOptions& options) {
  require_square(a.rows(), a.cols());
  if (a.rows() != b.size())
    throw DimensionMismatch("cpu::cg: matrix has " + std::to_string(a.rows()) + " rows, b " + std::to_string(b.size()));
  const Apply apply_m = make_preconditioner(a, options.preconditioner, options.block_size);
  return cg([&a](const Eigen::VectorXd& v, Eigen::VectorXd& out) { out.noalias() = a * v; }, apply_m, b, x, options);
}

SolverSummary cg(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, Eigen::VectorXd& x, const CgOptions& options) {
  require_square(a.rows(), a.cols());
  if (a.rows() != b.size())
    throw DimensionMismatch("cpu::cg: matrix has " + std::to_string(a.rows()) + " rows, b " + std::to_string(b.size()));
  const Apply apply_m = make_dense_preconditioner(a, options.preconditioner, options.block_size);
  return cg([&a](const Eigen::VectorXd& v, Eigen::VectorXd& out) { out.noalias() = a * v; }, apply_m, b, x, options);
}

}  // namespace linalg_cuda::cpu
