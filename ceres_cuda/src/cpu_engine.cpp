// The CPU reference engine: blocks in their natural layout (one residual's Jacobian after another),
// cost functions evaluated on OpenMP threads, the Schur complement applied implicitly (as Ceres'
// ImplicitSchurComplement; DENSE_SCHUR and SPARSE_SCHUR go to the general engines). Every parallel
// loop writes per-camera, per-point or per-residual results only, and sums run in a fixed order, so
// the result does not depend on the number of threads.
#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "ba_engine.h"
#include "ba_index.h"
#include "block_copies.h"
#include "generic_evaluator.h"
#include "linalg_cuda/cpu_cg.h"
#include "linalg_cuda/internal/seconds_since.h"
#include "schur_math.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::detail::seconds_since;

class CpuEngine final : public BaEngine, public EngineInspection {
 public:
  CpuEngine(const BaLayout& layout, const EngineOptions& options)
      : layout_(layout), options_(options), index_(make_index(layout)), evaluator_(layout_, index_, options.num_threads) {
    counters_.cameras_ceres_eliminates = index_.cameras_ceres_eliminates;
    c_ = index_.camera_size;
    m_ = index_.residual_size;
    R_ = index_.residuals;
    const std::size_t n = static_cast<std::size_t>(index_.cameras) * c_ + static_cast<std::size_t>(index_.points) * 3;
    cameras_.resize(layout.cameras.size() * c_);
    points_.resize(layout.points.size() * 3);
    gather_blocks(layout.cameras, c_, cameras_.data());
    gather_blocks(layout.points, 3, points_.data());
    candidate_cameras_ = cameras_;
    candidate_points_ = points_;
    F_.assign(static_cast<std::size_t>(R_) * m_ * c_, 0.0);
    E_.assign(static_cast<std::size_t>(R_) * m_ * 3, 0.0);
    f_.assign(static_cast<std::size_t>(R_) * m_, 0.0);
    candidate_f_ = f_;
    gradient_.assign(n, 0.0);
    scaling_.assign(n, 1.0);
    diagonal_.assign(n, 0.0);
    step_.assign(n, 0.0);
    delta_.assign(n, 0.0);
    Vinv_.assign(static_cast<std::size_t>(index_.points) * 9, 0.0);
    point_work_.assign(static_cast<std::size_t>(index_.points) * 3, 0.0);
  }

  bool evaluate_at_x(double* cost) override {
    const auto start = std::chrono::steady_clock::now();
    const bool ok = evaluate(cameras_.data(), points_.data(), true, cost);
    counters_.jacobian_seconds += seconds_since(start);
    ++counters_.jacobian_evaluations;
    if (ok) compute_gradient();
    return ok;
  }

  bool gradient_norms(double* norm, double* max_norm) override {
    double sum = 0.0, largest = 0.0;
    for (const double g : gradient_) {
      sum += g * g;
      largest = std::max(largest, std::fabs(g));
    }
    *norm = std::sqrt(sum);
    *max_norm = largest;
    return true;
  }

  void compute_jacobi_scaling() override {
    column_norms(scaling_.data());
    for (double& s : scaling_) s = 1.0 / (1.0 + std::sqrt(s));
  }

  void apply_jacobi_scaling() override {
    const std::size_t camera_values = static_cast<std::size_t>(index_.cameras) * c_;
#pragma omp parallel for schedule(static) num_threads(options_.num_threads)
    for (int i = 0; i < R_; ++i) {
      const int cam = index_.camera_of[i], pt = index_.point_of[i];
      for (int a = 0; a < m_; ++a) {
        if (cam >= 0)
          for (int k = 0; k < c_; ++k) F(i, a * c_ + k) *= scaling_[static_cast<std::size_t>(cam) * c_ + k];
        if (pt >= 0)
          for (int q = 0; q < 3; ++q) E(i, 3 * a + q) *= scaling_[camera_values + 3 * static_cast<std::size_t>(pt) + q];
      }
    }
  }

  StepResult solve_step(double radius, bool reuse_diagonal) override {
    const auto start = std::chrono::steady_clock::now();
    if (!reuse_diagonal) {
      column_norms(diagonal_.data());
      for (double& d : diagonal_) d = std::min(std::max(d, options_.min_lm_diagonal), options_.max_lm_diagonal);
    }
    std::vector<double>& d2 = d2_;
    d2.resize(diagonal_.size());
    for (std::size_t k = 0; k < d2.size(); ++k) {
      const double d = std::sqrt(diagonal_[k] / radius);
      d2[k] = d * d;
    }
    const std::size_t camera_values = static_cast<std::size_t>(index_.cameras) * c_;
    const double* d2_points = d2.data() + camera_values;

    // Point blocks V_p = E'E + D_p^2, inverted.
    int singular = 0;
#pragma omp parallel for schedule(static) num_threads(options_.num_threads) reduction(+ : singular)
    for (int p = 0; p < index_.points; ++p) {
      double V[9];
      point_block(Eb(), m_, point_range(p), d2_points + 3 * p, V);
      singular += invert_spd3(V, Vinv_.data() + 9 * static_cast<std::size_t>(p)) > 0 ? 1 : 0;
    }
    counters_.singular_point_blocks += singular;

    // Reduced right-hand side: rhs_c = sum F_i'(f_i - E_i e_p), e_p = V_p^-1 sum E_i' f_i.
    std::vector<double> e(static_cast<std::size_t>(index_.points) * 3);
    auto f_of = [this](int i, int a) { return f_[static_cast<std::size_t>(i) * m_ + a]; };
    point_solve_all(f_of, e.data());
    Eigen::VectorXd rhs(camera_values);
    camera_gather_all([&](int i, int a) { return f_of(i, a) - point_term(i, a, e.data()); }, rhs.data());

    StepResult result;
    Eigen::VectorXd y = Eigen::VectorXd::Zero(camera_values);
    iterative_schur_solve(d2.data(), rhs, y, &result);
    if (result.termination == LinearTermination::Failure || result.termination == LinearTermination::FatalError) {
      counters_.linear_seconds += seconds_since(start);
      return result;
    }

    // Back-substitution: y_p = V_p^-1 sum E_i'(f_i - F_i y_c); the step is -y (Ceres solves J y = f).
    std::vector<double> yp(static_cast<std::size_t>(index_.points) * 3);
    point_solve_all([&](int i, int a) { return f_of(i, a) - camera_term(i, a, y.data()); }, yp.data());
    for (std::size_t k = 0; k < camera_values; ++k) step_[k] = -y[k];
    for (std::size_t k = 0; k < yp.size(); ++k) step_[camera_values + k] = -yp[k];

    result.finite = true;
    for (const double s : step_) result.finite = result.finite && std::isfinite(s);
    // Model cost change -(J s)'(f + J s / 2), summed per residual in order.
    std::vector<double> change(R_);
    const double* step_points = step_.data() + camera_values;
#pragma omp parallel for schedule(static) num_threads(options_.num_threads)
    for (int i = 0; i < R_; ++i) {
      double sum = 0.0;
      for (int a = 0; a < m_; ++a) {
        const double js = camera_term(i, a, step_.data()) + point_term(i, a, step_points);
        sum += js * (f_of(i, a) + 0.5 * js);
      }
      change[i] = -sum;
    }
    result.model_cost_change = 0.0;
    for (const double v : change) result.model_cost_change += v;
    for (std::size_t k = 0; k < step_.size(); ++k) delta_[k] = step_[k] * scaling_[k];
    counters_.linear_seconds += seconds_since(start);
    return result;
  }

  bool evaluate_candidate(double* cost) override {
    const std::size_t camera_values = static_cast<std::size_t>(index_.cameras) * c_;
    // Only the variable blocks (first in both arrays) move; the constant ones are equal in x and the
    // candidate since construction (accept_candidate swaps the two).
    for (std::size_t k = 0; k < camera_values; ++k) candidate_cameras_[k] = cameras_[k] + delta_[k];
    for (std::size_t k = 0; k < static_cast<std::size_t>(index_.points) * 3; ++k)
      candidate_points_[k] = points_[k] + delta_[camera_values + k];
    const auto start = std::chrono::steady_clock::now();
    const bool ok = evaluate(candidate_cameras_.data(), candidate_points_.data(), false, cost);
    counters_.residual_seconds += seconds_since(start);
    ++counters_.residual_evaluations;
    return ok;
  }

  double x_norm() override {
    double sum = 0.0;
    for (std::size_t k = 0; k < static_cast<std::size_t>(index_.cameras) * c_; ++k) sum += cameras_[k] * cameras_[k];
    for (std::size_t k = 0; k < static_cast<std::size_t>(index_.points) * 3; ++k) sum += points_[k] * points_[k];
    return std::sqrt(sum);
  }

  double delta_norm() override {
    double sum = 0.0;
    for (const double d : delta_) sum += d * d;
    return std::sqrt(sum);
  }

  void accept_candidate() override {
    cameras_.swap(candidate_cameras_);
    points_.swap(candidate_points_);
  }

  void write_parameters() override {
    scatter_blocks(cameras_.data(), c_, index_.cameras, layout_.cameras);
    scatter_blocks(points_.data(), 3, index_.points, layout_.points);
  }

  const EngineCounters& counters() const override { return counters_; }

  std::vector<double> jacobian() override {
    std::vector<double> all(F_);
    all.insert(all.end(), E_.begin(), E_.end());
    return all;
  }
  std::vector<double> schur_product(const std::vector<double>& x) override {
    std::vector<double> y(x.size());
    apply_schur(x.data(), y.data());
    return y;
  }
  std::vector<double> preconditioner_blocks() override { return blocks_; }
  std::vector<double> delta() override { return delta_; }
  std::string description() const override {
    return std::string("cpu reference, ") + std::to_string(options_.num_threads) + " thread(s)";
  }

 private:
  double& F(int i, int k) { return F_[static_cast<std::size_t>(i) * m_ * c_ + k]; }
  double& E(int i, int k) { return E_[static_cast<std::size_t>(i) * m_ * 3 + k]; }
  ConstBlocks Fb() const { return {F_.data(), 1, static_cast<std::size_t>(m_) * c_}; }
  ConstBlocks Eb() const { return {E_.data(), 1, static_cast<std::size_t>(m_) * 3}; }
  ResidualRange camera_range(int c) const {
    return {index_.camera_residuals.data(), index_.camera_start[c], index_.camera_start[c + 1]};
  }
  RepeatedPairs repeated_pairs() const {
    if (index_.pair_next.empty()) return {};
    return {index_.pair_next.data(), index_.pair_repeat.data()};
  }
  ResidualRange point_range(int p) const {
    return {index_.point_residuals.data(), index_.point_start[p], index_.point_start[p + 1]};
  }
  // (F_i x_c)_a and (E_i x_p)_a, 0 when the block is constant.
  double camera_term(int i, int a, const double* x_cameras) const {
    const int cam = index_.camera_of[i];
    if (cam < 0) return 0.0;
    double s = 0.0;
    for (int k = 0; k < c_; ++k) s += F_[static_cast<std::size_t>(i) * m_ * c_ + a * c_ + k] * x_cameras[static_cast<std::size_t>(cam) * c_ + k];
    return s;
  }
  double point_term(int i, int a, const double* x_points) const {
    const int pt = index_.point_of[i];
    if (pt < 0) return 0.0;
    double s = 0.0;
    for (int q = 0; q < 3; ++q) s += E_[static_cast<std::size_t>(i) * m_ * 3 + 3 * a + q] * x_points[3 * static_cast<std::size_t>(pt) + q];
    return s;
  }
  template <typename Vec>
  void point_solve_all(const Vec& vec, double* out) const {
#pragma omp parallel for schedule(static) num_threads(options_.num_threads)
    for (int p = 0; p < index_.points; ++p)
      point_solve(Eb(), m_, point_range(p), Vinv_.data() + 9 * static_cast<std::size_t>(p), vec, out + 3 * static_cast<std::size_t>(p));
  }
  template <typename Vec>
  void camera_gather_all(const Vec& vec, double* out) const {
#pragma omp parallel for schedule(dynamic, 4) num_threads(options_.num_threads)
    for (int c = 0; c < index_.cameras; ++c) camera_gather(Fb(), m_, c_, camera_range(c), vec, out + static_cast<std::size_t>(c) * c_);
  }

  // Squared column norms of the current Jacobian (cameras, then points).
  void column_norms(double* out) const {
    const std::size_t camera_values = static_cast<std::size_t>(index_.cameras) * c_;
#pragma omp parallel for schedule(dynamic, 4) num_threads(options_.num_threads)
    for (int c = 0; c < index_.cameras; ++c) {
      double* o = out + static_cast<std::size_t>(c) * c_;
      for (int k = 0; k < c_; ++k) o[k] = 0.0;
      const ResidualRange r = camera_range(c);
      for (int t = r.begin; t < r.end; ++t)
        for (int a = 0; a < m_; ++a)
          for (int k = 0; k < c_; ++k) {
            const double v = F_[static_cast<std::size_t>(r.ids[t]) * m_ * c_ + a * c_ + k];
            o[k] += v * v;
          }
    }
#pragma omp parallel for schedule(static) num_threads(options_.num_threads)
    for (int p = 0; p < index_.points; ++p) {
      double* o = out + camera_values + 3 * static_cast<std::size_t>(p);
      o[0] = o[1] = o[2] = 0.0;
      const ResidualRange r = point_range(p);
      for (int t = r.begin; t < r.end; ++t)
        for (int a = 0; a < m_; ++a)
          for (int q = 0; q < 3; ++q) {
            const double v = E_[static_cast<std::size_t>(r.ids[t]) * m_ * 3 + 3 * a + q];
            o[q] += v * v;
          }
    }
  }

  void compute_gradient() {
    const std::size_t camera_values = static_cast<std::size_t>(index_.cameras) * c_;
    auto f_of = [this](int i, int a) { return f_[static_cast<std::size_t>(i) * m_ + a]; };
    camera_gather_all(f_of, gradient_.data());
#pragma omp parallel for schedule(static) num_threads(options_.num_threads)
    for (int p = 0; p < index_.points; ++p) {
      double* g = gradient_.data() + camera_values + 3 * static_cast<std::size_t>(p);
      g[0] = g[1] = g[2] = 0.0;
      const ResidualRange r = point_range(p);
      for (int t = r.begin; t < r.end; ++t)
        for (int a = 0; a < m_; ++a)
          for (int q = 0; q < 3; ++q) g[q] += E_[static_cast<std::size_t>(r.ids[t]) * m_ * 3 + 3 * a + q] * f_of(r.ids[t], a);
    }
  }

  // At x (jacobians): residuals and Jacobians of the step; at a candidate: its cost only, the
  // residuals going to scratch so that a rejected step leaves x's residuals intact.
  bool evaluate(const double* cameras, const double* points, bool jacobians, double* cost) {
    return evaluator_.evaluate(cameras, points, jacobians ? f_.data() : candidate_f_.data(),
                               jacobians ? F_.data() : nullptr, jacobians ? E_.data() : nullptr, cost);
  }

  void iterative_schur_solve(const double* d2, const Eigen::VectorXd& rhs, Eigen::VectorXd& y, StepResult* result) {
    const std::size_t camera_values = static_cast<std::size_t>(index_.cameras) * c_;
    // Preconditioner blocks: S's (SCHUR_JACOBI) or U's (JACOBI) camera blocks, inverted.
    const bool schur = options_.preconditioner == ceres::SCHUR_JACOBI;
    std::vector<double>& blocks = blocks_;
    blocks.assign(static_cast<std::size_t>(index_.cameras) * c_ * c_, 0.0);
    int singular = 0;
    const ConstBlocks vinv(Vinv_.data(), 1, 9);
#pragma omp parallel for schedule(dynamic, 4) num_threads(options_.num_threads) reduction(+ : singular)
    for (int c = 0; c < index_.cameras; ++c) {
      double* S = blocks.data() + static_cast<std::size_t>(c) * c_ * c_;
      double work[kMaxCameraSize * kMaxCameraSize];
      for (int k = 0; k < c_ * c_; ++k) S[k] = 0.0;
      camera_block_accumulate(Fb(), Eb(), vinv, index_.point_of.data(), m_, c_, camera_range(c), schur, repeated_pairs(), S);
      camera_block_finish(c_, d2 + static_cast<std::size_t>(c) * c_, S);
      singular += invert_spd_regularised(S, c_, work) > 0 ? 1 : 0;
    }
    counters_.singular_camera_blocks += singular;

    const linalg_cuda::cpu::Apply apply_s = [&](const Eigen::VectorXd& x, Eigen::VectorXd& out) {
      out.resize(camera_values);
      apply_schur(x.data(), out.data());
    };
    const linalg_cuda::cpu::Apply apply_m = [&](const Eigen::VectorXd& r, Eigen::VectorXd& z) {
      z.resize(camera_values);
      for (int c = 0; c < index_.cameras; ++c) {
        const double* B = blocks.data() + static_cast<std::size_t>(c) * c_ * c_;
        for (int j = 0; j < c_; ++j) {
          double s = 0.0;
          for (int k = 0; k < c_; ++k) s += B[j * c_ + k] * r[static_cast<std::size_t>(c) * c_ + k];
          z[static_cast<std::size_t>(c) * c_ + j] = s;
        }
      }
    };
    const linalg_cuda::CgOptions cg = step_cg_options(options_);
    const auto pcg_start = std::chrono::steady_clock::now();
    const linalg_cuda::SolverSummary s = linalg_cuda::cpu::cg(apply_s, apply_m, rhs, y, cg);
    counters_.pcg_seconds += seconds_since(pcg_start);
    set_ceres_cg_outcome(s, options_, result);
    counters_.linear_iterations += result->linear_iterations;
  }

  // S x = F'(F x - E V^-1 E'F x) + D^2 x with the last step's D and point blocks.
  void apply_schur(const double* x, double* out) {
    std::vector<double>& w = point_work_;  // once per PCG iteration: no allocation
    point_solve_all([&](int i, int a) { return camera_term(i, a, x); }, w.data());
    camera_gather_all([&](int i, int a) { return camera_term(i, a, x) - point_term(i, a, w.data()); }, out);
    for (std::size_t k = 0; k < static_cast<std::size_t>(index_.cameras) * c_; ++k) out[k] += d2_[k] * x[k];
  }

  const BaLayout& layout_;
  EngineOptions options_;
  BaIndex index_;
  GenericEvaluator evaluator_;
  int c_ = 0, m_ = 0, R_ = 0;
  std::vector<double> cameras_, points_, candidate_cameras_, candidate_points_;
  std::vector<double> F_, E_, f_, candidate_f_;
  std::vector<double> gradient_, scaling_, diagonal_, step_, delta_, Vinv_;
  std::vector<double> d2_, blocks_;  // the last step's D^2 and inverted preconditioner blocks
  std::vector<double> point_work_;   // V^-1 E'F x of the Schur product, one 3-vector per point
  EngineCounters counters_;
};

}  // namespace

std::unique_ptr<BaEngine> make_cpu_engine(const BaLayout& layout, const EngineOptions& options) {
  return std::make_unique<CpuEngine>(layout, options);
}

}  // namespace ceres_cuda::detail
