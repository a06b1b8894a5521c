// The CPU engine of the general structure (SchurStructure): any Schur-shaped problem Ceres takes,
// with manifolds. x is every block's ambient values, steps live in the tangent space and move x
// through the blocks' Plus; the Schur algebra is CpuBlockSchur's, the exact solvers factor its
// explicit S with Eigen (dense LLT for DENSE_SCHUR, simplicial LLT for SPARSE_SCHUR).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <chrono>
#include <cmath>
#include <vector>

#include "cpu_block_schur.h"
#include "host_evaluated_engine.h"
#include "linalg_cuda/cpu_cg.h"
#include "linalg_cuda/internal/seconds_since.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::detail::seconds_since;

class GeneralCpuEngine final : public HostEvaluatedEngine, public EngineInspection {
 public:
  GeneralCpuEngine(const SchurStructure& structure, const EngineOptions& options)
      : HostEvaluatedEngine(structure, options), schur_(structure, cells_, options.num_threads) {
    const long n = structure.tangent_size();
    jacobian_.assign(cells_.num_values, 0.0);
    f_.assign(cells_.num_rows, 0.0);
    gradient_.assign(n, 0.0);
    scaling_.assign(n, 1.0);
    diagonal_.assign(n, 0.0);
    d2_.assign(n, 0.0);
    step_.assign(n, 0.0);
    delta_.assign(n, 0.0);
    schur_.attach(jacobian_.data());
  }

  bool evaluate_at_x(double* cost) override {
    const bool ok = evaluate_jacobian(f_.data(), jacobian_.data(), cost);
    if (ok) schur_.transpose_product(f_.data(), 0, s_.num_variable_blocks(), gradient_.data());
    return ok;
  }

  bool gradient_norms(double* norm, double* max_norm) override {
    return state_.projected_gradient_norms(gradient_.data(), norm, max_norm);
  }

  void compute_jacobi_scaling() override {
    schur_.column_norms(scaling_.data());
    for (double& s : scaling_) s = 1.0 / (1.0 + std::sqrt(s));
  }

  void apply_jacobi_scaling() override {
    const int C = static_cast<int>(cells_.cells.size());
#pragma omp parallel for schedule(static) num_threads(options_.num_threads)
    for (int c = 0; c < C; ++c) {
      const JacobianCell& cell = cells_.cells[c];
      const SchurBlock& block = s_.blocks[cell.block];
      const int t = block.tangent_size, m = s_.residuals[cell.residual].size;
      double* J = jacobian_.data() + cell.values;
      for (int a = 0; a < m; ++a)
        for (int k = 0; k < t; ++k) J[a * t + k] *= scaling_[block.tangent_offset + k];
    }
  }

  StepResult solve_step(double radius, bool reuse_diagonal) override {
    const auto start = std::chrono::steady_clock::now();
    if (!reuse_diagonal) {
      schur_.column_norms(diagonal_.data());
      for (double& d : diagonal_) d = std::min(std::max(d, options_.min_lm_diagonal), options_.max_lm_diagonal);
    }
    for (std::size_t k = 0; k < d2_.size(); ++k) {
      const double d = std::sqrt(diagonal_[k] / radius);
      d2_[k] = d * d;
    }
    counters_.singular_point_blocks += schur_.factor_e_blocks(d2_.data());
    const long nf = s_.f_tangent_size;
    Eigen::VectorXd rhs(nf), y = Eigen::VectorXd::Zero(nf);
    schur_.reduced_rhs(f_.data(), rhs.data());

    StepResult result;
    if (options_.linear_solver == ceres::ITERATIVE_SCHUR)
      iterative_solve(rhs, y, &result);
    else
      exact_solve(rhs, y, &result);
    if (result.termination == LinearTermination::Failure || result.termination == LinearTermination::FatalError) {
      counters_.linear_seconds += seconds_since(start);
      return result;
    }

    // y_e by back-substitution; the step is -y (Ceres solves J y = f).
    std::vector<double> y_e(s_.e_tangent_size);
    schur_.back_substitute(f_.data(), y.data(), y_e.data());
    for (long k = 0; k < nf; ++k) step_[k] = -y[k];
    for (long k = 0; k < s_.e_tangent_size; ++k) step_[nf + k] = -y_e[k];
    result.finite = true;
    for (const double v : step_) result.finite = result.finite && std::isfinite(v);

    result.model_cost_change = schur_.model_cost_change(step_.data(), f_.data());
    for (std::size_t k = 0; k < step_.size(); ++k) delta_[k] = step_[k] * scaling_[k];
    counters_.linear_seconds += seconds_since(start);
    return result;
  }

  std::vector<double> jacobian() override { return jacobian_; }
  std::vector<double> schur_product(const std::vector<double>& x) override {
    std::vector<double> y(x.size());
    schur_.apply(x.data(), y.data());
    return y;
  }
  std::vector<double> preconditioner_blocks() override { return blocks_; }
  std::vector<double> delta() override { return delta_; }
  std::string description() const override {
    return std::string("cpu reference (general structure), ") + std::to_string(options_.num_threads) + " thread(s)";
  }

 private:
  void iterative_solve(const Eigen::VectorXd& rhs, Eigen::VectorXd& y, StepResult* result) {
    const long nf = s_.f_tangent_size;
    counters_.singular_camera_blocks +=
        schur_.inverted_block_diagonal(options_.preconditioner == ceres::SCHUR_JACOBI, &blocks_);
    const linalg_cuda::cpu::Apply apply_s = [&](const Eigen::VectorXd& x, Eigen::VectorXd& out) {
      out.resize(nf);
      schur_.apply(x.data(), out.data());
    };
    const linalg_cuda::cpu::Apply apply_m = [&](const Eigen::VectorXd& r, Eigen::VectorXd& z) {
      z.resize(nf);
      for (int b = 0; b < s_.num_f_blocks; ++b) {
        const int t = s_.blocks[b].tangent_size;
        const long o = s_.blocks[b].tangent_offset;
        const double* B = blocks_.data() + schur_.diagonal_offset(b);
        for (int j = 0; j < t; ++j) {
          double v = 0.0;
          for (int k = 0; k < t; ++k) v += B[j * t + k] * r[o + k];
          z[o + j] = v;
        }
      }
    };
    const auto pcg_start = std::chrono::steady_clock::now();
    const linalg_cuda::SolverSummary summary =
        linalg_cuda::cpu::cg(apply_s, apply_m, rhs, y, step_cg_options(options_));
    counters_.pcg_seconds += seconds_since(pcg_start);
    set_ceres_cg_outcome(summary, options_, result);
    counters_.linear_iterations += result->linear_iterations;
  }

  // DENSE_SCHUR and SPARSE_SCHUR: S formed and factored; both are exact, they differ in storage.
  void exact_solve(const Eigen::VectorXd& rhs, Eigen::VectorXd& y, StepResult* result) {
    const long nf = s_.f_tangent_size;
    bool factored = false;
    if (options_.linear_solver == ceres::DENSE_SCHUR) {
      Eigen::MatrixXd S = Eigen::MatrixXd::Zero(nf, nf);
      schur_.explicit_schur([&](int row, int col, const double* values) {
        const SchurBlock &a = s_.blocks[row], &b = s_.blocks[col];
        for (int j = 0; j < a.tangent_size; ++j)
          for (int k = 0; k < b.tangent_size; ++k)
            S(a.tangent_offset + j, b.tangent_offset + k) += values[j * b.tangent_size + k];
      });
      const Eigen::LLT<Eigen::MatrixXd> llt(S);
      factored = llt.info() == Eigen::Success;
      if (factored) y = llt.solve(rhs);
    } else {
      std::vector<Eigen::Triplet<double>> entries;
      schur_.explicit_schur([&](int row, int col, const double* values) {
        const SchurBlock &a = s_.blocks[row], &b = s_.blocks[col];
        for (int j = 0; j < a.tangent_size; ++j)
          for (int k = 0; k < b.tangent_size; ++k)
            if (a.tangent_offset + j >= b.tangent_offset + k)  // the lower triangle is what LLT reads
              entries.emplace_back(a.tangent_offset + j, b.tangent_offset + k, values[j * b.tangent_size + k]);
      });
      Eigen::SparseMatrix<double> S(nf, nf);
      S.setFromTriplets(entries.begin(), entries.end());
      const Eigen::SimplicialLLT<Eigen::SparseMatrix<double>, Eigen::Lower> llt(S);
      factored = llt.info() == Eigen::Success;
      if (factored) y = llt.solve(rhs);
    }
    if (!factored) {
      result->termination = LinearTermination::Failure;
      result->message = "Cholesky factorization of the reduced camera matrix failed (not positive definite)";
      return;
    }
    result->termination = LinearTermination::Success;
    result->message = "Success.";
    result->linear_iterations = 1;
    ++counters_.linear_iterations;
  }

  bool move_candidate() override { return state_.move_candidate(delta_.data()); }

  CpuBlockSchur schur_;
  std::vector<double> jacobian_, f_;
  std::vector<double> gradient_, scaling_, diagonal_, d2_, step_, delta_;  // tangent vectors
  std::vector<double> blocks_;  // the last step's inverted preconditioner blocks
};

}  // namespace

std::unique_ptr<BaEngine> make_general_cpu_engine(const SchurStructure& structure, const EngineOptions& options) {
  return std::make_unique<GeneralCpuEngine>(structure, options);
}

}  // namespace ceres_cuda::detail
