// The GPU engine of the general structure (SchurStructure). Its residuals are evaluated behind
// ResidualEvaluation: the library's cost functions on the GPU (DeviceFamilies), the user's on CPU
// threads with their rows of the Jacobian going to the device in one copy per evaluation. The
// parameters and their manifolds (Plus, PlusJacobian) live on the device or on the host
// (ParameterState). The whole linear algebra of a step runs on the device on JacobianCells' layout
// (CellProducts): Jacobi scaling, the LM diagonal, the e-blocks' inverses, the reduced right-hand side,
// then PCG on the implicit Schur complement (SchurOperator) with its block-Jacobi preconditioner
// (SchurJacobiPreconditioner) for ITERATIVE_SCHUR, or the explicit reduced matrix factored by cuSOLVER
// (ExplicitSchurSolver) for DENSE_SCHUR and SPARSE_SCHUR; then the back-substitution and the model cost
// change. No floating-point atomics: the same bits run after run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cell_products.h"
#include "device_families.h"
#include "device_reductions.cuh"
#include "device_upload.h"
#include "explicit_schur_solver.h"
#include "host_evaluated_engine.h"
#include "interleaved_schur_product.h"
#include "linalg_cuda/backend.h"
#include "linalg_cuda/conjugate_gradient.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/seconds_since.h"
#include "lm_step_kernels.cuh"
#include "parameter_state.h"
#include "phase_log.h"
#include "residual_evaluation.h"
#include "schur_jacobi_preconditioner.h"
#include "schur_operator.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::DeviceBuffer;
using linalg_cuda::DeviceVector;
using linalg_cuda::detail::blocks_for;
using linalg_cuda::detail::seconds_since;

class GeneralCudaEngine final : public HostEvaluatedEngine, public EngineInspection {
 public:
  GeneralCudaEngine(const SchurStructure& structure, const EngineOptions& options)
      : HostEvaluatedEngine(structure, options,
                            first_host_residual(structure.families, static_cast<int>(structure.residuals.size()))),
        stream_(linalg_cuda::thread_context().stream()) {
    PhaseLog phase("general GPU engine");  // its members (cells, evaluator, state) are built by now
    n_ = structure.tangent_size();
    nf_ = structure.f_tangent_size;
    R_ = static_cast<int>(structure.residuals.size());
    d_cells_ = upload_array(cells_.cells, stream_);
    d_row_start_ = upload_array(cells_.row_start, stream_);
    d_e_cell_ = upload_array(cells_.e_cell, stream_);
    d_row_offset_ = upload_array(cells_.row_offset, stream_);
    d_column_start_ = upload_array(cells_.column_start, stream_);
    d_column_cells_ = upload_array(cells_.column_cells, stream_);
    d_e_sorted_cells_ = upload_array(cells_.e_sorted_cells, stream_);
    d_tangent_size_ = upload_array(cells_.tangent_size, stream_);
    d_tangent_offset_ = upload_array(cells_.tangent_offset, stream_);
    jacobian_ = DeviceVector<double>(std::max<long>(1, cells_.num_values));
    phase("the cells' arrays uploaded");
    const BlockSparseView view{d_cells_.as<JacobianCell>(),  d_row_start_.as<int>(),      d_e_cell_.as<int>(),
                               d_row_offset_.as<long>(),      d_column_start_.as<int>(),   d_column_cells_.as<int>(),
                               d_e_sorted_cells_.as<int>(),   d_tangent_size_.as<int>(),   d_tangent_offset_.as<long>(),
                               jacobian_.data(),              structure.f_tangent_size,    structure.first_e_block()};
    const ColumnChunks product_chunks(cells_, 0, structure.num_variable_blocks(), kProductChunkCells, false);
    products_ = std::make_unique<CellProducts>(structure, cells_, view, product_chunks, stream_);
    phase("column chunks");
    auto families = std::make_unique<DeviceFamilies>(structure, evaluator_.plus_jacobian_offsets(),
                                                     d_cells_.as<JacobianCell>(), d_row_start_.as<int>(),
                                                     d_row_offset_.as<long>(), d_tangent_size_.as<int>(), stream_);
    // With every residual on the GPU and every manifold one it applies, the state lives there too.
    parameters_ = make_parameter_state(structure, &state_, &evaluator_, !families->empty() && evaluator_.num_f() == 0,
                                       stream_);
    device_residuals_ = families->num_residuals();
    if (!families->empty()) candidate_f_device_ = DeviceVector<double>(std::max<long>(1, cells_.num_rows));
    evaluations_.push_back(std::move(families));  // the device's first: it runs while the CPU threads evaluate
    evaluations_.push_back(make_host_residual_evaluation(&evaluator_, stream_));
    phase("device families");
    // Only the PCG takes Schur products: the exact solvers form S instead.
    if (options.interleaved_schur_product && options.linear_solver == ceres::ITERATIVE_SCHUR)
      interleaved_ = InterleavedSchurProduct::make(structure, cells_, product_chunks, stream_);
    phase("the Schur product's copies");
    f_ = DeviceVector<double>(std::max<long>(1, cells_.num_rows));
    rows_ = DeviceVector<double>(std::max<long>(1, cells_.num_rows));
    gradient_ = DeviceVector<double>(std::max<long>(1, n_), 0.0);
    scaling_ = DeviceVector<double>(std::max<long>(1, n_), 1.0);
    norms_ = DeviceVector<double>(std::max<long>(1, n_), 0.0);
    diagonal_ = DeviceVector<double>(std::max<long>(1, n_), 0.0);
    d2_ = DeviceVector<double>(std::max<long>(1, n_), 0.0);
    step_ = DeviceVector<double>(std::max<long>(1, n_), 0.0);
    delta_ = DeviceVector<double>(std::max<long>(1, n_), 0.0);
    e_values_ = DeviceVector<double>(std::max<long>(1, structure.e_tangent_size), 0.0);
    y_e_ = DeviceVector<double>(std::max<long>(1, structure.e_tangent_size), 0.0);
    v_inverse_ = DeviceVector<double>(std::max<long>(1, static_cast<long>(structure.num_e_blocks) * kEBlockValues), 0.0);
    rhs_ = DeviceVector<double>(std::max<long>(1, nf_), 0.0);
    y_ = DeviceVector<double>(std::max<long>(1, nf_), 0.0);
    per_residual_ = DeviceVector<double>(std::max(1, R_), 0.0);
    partials_ = DeviceVector<double>(kMaxReduceBlocks, 0.0);
    schur_ = std::make_unique<SchurOperator>(*products_, interleaved_.get(), v_inverse_.data(), d2_.data(),
                                             rows_.data(), e_values_.data());
    if (options.linear_solver == ceres::ITERATIVE_SCHUR)
      preconditioner_ = std::make_unique<SchurJacobiPreconditioner>(structure, *products_, stream_);
    scalars_.reserve(4 * sizeof(double));
    LINALG_CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0, 4 * sizeof(double), stream_));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    phase("work vectors");
  }

  bool evaluate_at_x(double* cost) override {
    const auto start = std::chrono::steady_clock::now();
    EvaluationPoint x;
    const bool ok = parameters_->at_x(&x) && evaluate(x, f_.data(), jacobian_.data(), cost);
    if (interleaved_) interleaved_->jacobian_changed();
    if (ok) products_->column_sums(f_.data(), 0, s_.num_variable_blocks(), gradient_.data());  // J'f
    counters_.jacobian_seconds += seconds_since(start);
    ++counters_.jacobian_evaluations;
    return ok;
  }

  bool candidate_cost(double* cost) override {
    return evaluate(parameters_->at_candidate(), candidate_f_device_.data(), nullptr, cost);
  }

  bool gradient_norms(double* norm, double* max_norm) override {
    return parameters_->gradient_norms(gradient_.data(), norm, max_norm);
  }
  bool move_candidate() override { return parameters_->move_candidate(); }
  double x_norm() override { return parameters_->x_norm(); }
  double delta_norm() override { return parameters_->step_norm(); }
  void accept_candidate() override { parameters_->accept_candidate(); }
  void write_parameters() override { parameters_->write_to_user(); }

  void compute_jacobi_scaling() override {
    products_->column_norms(0, s_.num_variable_blocks(), norms_.data());
    jacobi_scaling_kernel<<<blocks_for(n_), kBlockThreads, 0, stream_>>>(n_, norms_.data(), scaling_.data());
    LINALG_CUDA_CHECK_LAUNCH();
  }

  void apply_jacobi_scaling() override {
    products_->scale_columns(scaling_.data(), jacobian_.data());
    if (interleaved_) interleaved_->jacobian_changed();
  }

  StepResult solve_step(double radius, bool reuse_diagonal) override {
    const auto start = std::chrono::steady_clock::now();
    refresh_interleaved();
    if (!reuse_diagonal) {
      products_->column_norms(0, s_.num_variable_blocks(), norms_.data());
      lm_diagonal_kernel<<<blocks_for(n_), kBlockThreads, 0, stream_>>>(n_, norms_.data(), options_.min_lm_diagonal,
                                                                         options_.max_lm_diagonal, diagonal_.data());
      LINALG_CUDA_CHECK_LAUNCH();
    }
    damping_kernel<<<blocks_for(n_), kBlockThreads, 0, stream_>>>(n_, diagonal_.data(), radius, d2_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    int* singular = scalars_.as<int>();  // [0]: e-blocks, [1]: preconditioner blocks regularised
    LINALG_CUDA_CHECK(cudaMemsetAsync(singular, 0, 2 * sizeof(int), stream_));
    products_->e_inverses(d2_.data(), v_inverse_.data(), singular);
    // The reduced right-hand side F'(f - E V^-1 E'f).
    products_->e_solve(v_inverse_.data(), f_.data(), e_values_.data());
    copy_on_device(rows_.data(), f_.data(), cells_.num_rows);
    products_->subtract_e(e_values_.data(), rows_.data());
    products_->column_sums(rows_.data(), 0, s_.num_f_blocks, rhs_.data());

    StepResult result;
    if (options_.linear_solver == ceres::ITERATIVE_SCHUR)
      iterative_solve(singular + 1, &result);
    else
      exact_solve(&result);
    int counts[2];
    copy_to_host(counts, singular, 2);
    counters_.singular_point_blocks += counts[0];
    counters_.singular_camera_blocks += counts[1];
    if (result.termination == LinearTermination::Failure || result.termination == LinearTermination::FatalError) {
      counters_.linear_seconds += seconds_since(start);
      return result;
    }

    // y_e = V^-1 E'(f - F y_f); step = -y, delta = step .* scaling.
    products_->row_product(y_.data(), true, rows_.data());
    residual_minus_kernel<<<blocks_for(cells_.num_rows), kBlockThreads, 0, stream_>>>(cells_.num_rows, f_.data(),
                                                                                       rows_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    products_->e_solve(v_inverse_.data(), rows_.data(), y_e_.data());
    step_kernel<<<blocks_for(n_), kBlockThreads, 0, stream_>>>(n_, nf_, y_.data(), y_e_.data(), scaling_.data(),
                                                               step_.data(), delta_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    // The model cost change -(J s)'(f + J s / 2), per residual block, summed in a fixed order.
    products_->row_product(step_.data(), false, rows_.data());
    products_->model_change(rows_.data(), f_.data(), per_residual_.data());
    result.model_cost_change = device_sum(per_residual_.data(), R_);
    result.finite = parameters_->take_step(delta_.data()) && std::isfinite(result.model_cost_change);
    counters_.linear_seconds += seconds_since(start);
    return result;
  }

  std::vector<double> jacobian() override { return download(jacobian_, cells_.num_values); }
  std::vector<double> schur_product(const std::vector<double>& x) override {
    refresh_interleaved();
    DeviceVector<double> dx(x), dy(x.size());
    schur_->apply(dx.data(), dy.data());
    return dy.to_std();
  }
  std::vector<double> preconditioner_blocks() override {
    return preconditioner_ ? preconditioner_->blocks() : std::vector<double>();
  }
  std::vector<double> delta() override { return download(delta_, n_); }
  std::string description() const override {
    const long all = static_cast<long>(s_.residuals.size());
    return std::string("cuda (general structure: ") + std::to_string(device_residuals_) + " of " +
           std::to_string(all) + " residual blocks evaluated on the GPU, the rest on " +
           std::to_string(options_.num_threads) + " CPU thread(s); the linear algebra" +
           (parameters_->on_device() ? ", the parameters and their manifolds" : "") + " on the GPU)";
  }

 private:
  // Starts every evaluation, then waits for each: their costs added in a fixed order.
  bool evaluate(const EvaluationPoint& at, double* f, double* jacobian, double* cost) {
    for (const auto& evaluation : evaluations_) evaluation->start(at, f, jacobian);
    bool ok = true;
    *cost = 0.0;
    for (const auto& evaluation : evaluations_) {
      double part = 0.0;
      ok = evaluation->finish(&part) && ok;
      *cost += part;
    }
    return ok && std::isfinite(*cost);
  }

  void refresh_interleaved() {
    if (interleaved_) interleaved_->refresh(products_->view(), products_->product_chunks());
  }

  template <typename T>
  void copy_to_host(T* host, const T* device, long n) {
    if (n > 0) LINALG_CUDA_CHECK(cudaMemcpyAsync(host, device, n * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy_on_device(double* to, const double* from, long n) const {
    if (n > 0) LINALG_CUDA_CHECK(cudaMemcpyAsync(to, from, n * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
  }
  std::vector<double> download(const DeviceVector<double>& v, long n) {
    std::vector<double> host(n);
    copy_to_host(host.data(), v.data(), n);
    return host;
  }
  double device_sum(const double* v, long n) {
    double* out = scalars_.as<double>() + 2;
    sum_kernel<<<std::min<unsigned>(kMaxReduceBlocks, blocks_for(n)), kReduceThreads, 0, stream_>>>(
        v, n, false, partials_.data(), reinterpret_cast<unsigned*>(scalars_.as<double>() + 3), out);
    LINALG_CUDA_CHECK_LAUNCH();
    double result = 0.0;
    copy_to_host(&result, out, 1);
    return result;
  }

  void iterative_solve(int* singular, StepResult* result) {
    preconditioner_->update(options_.preconditioner == ceres::SCHUR_JACOBI, d2_.data(), v_inverse_.data(), singular);
    cg_.set_options(step_cg_options(options_));
    y_.fill(0.0);
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto pcg_start = std::chrono::steady_clock::now();
    const linalg_cuda::SolverSummary summary = cg_.solve(*schur_, rhs_, y_, preconditioner_.get());
    counters_.pcg_seconds += seconds_since(pcg_start);
    set_ceres_cg_outcome(summary, options_, result);
    counters_.linear_iterations += result->linear_iterations;
  }

  // DENSE_SCHUR and SPARSE_SCHUR: F'F's diagonal blocks by the preconditioner's column chunks (without
  // the Schur term), the rest of S and its factorization by the ExplicitSchurSolver.
  void exact_solve(StepResult* result) {
    products_->diagonal_blocks(false, v_inverse_.data());
    if (!explicit_schur_)
      explicit_schur_ = std::make_unique<ExplicitSchurSolver>(s_, cells_, options_.explicit_schur);
    *result = explicit_schur_->solve(products_->view(), products_->diagonal_chunks(), products_->diagonal_partials(),
                                     d2_.data(), v_inverse_.data(), rhs_.data(), y_.data());
    counters_.linear_iterations += result->linear_iterations;
  }

  cudaStream_t stream_;
  long n_ = 0, nf_ = 0;
  int R_ = 0;
  DeviceBuffer d_cells_, d_row_start_, d_e_cell_, d_row_offset_, d_column_start_, d_column_cells_, d_e_sorted_cells_,
      d_tangent_size_, d_tangent_offset_;
  std::unique_ptr<CellProducts> products_;
  // The Schur product on interleaved copies of the Jacobian; null where they do not fit.
  std::unique_ptr<InterleavedSchurProduct> interleaved_;
  std::unique_ptr<SchurOperator> schur_;
  std::unique_ptr<SchurJacobiPreconditioner> preconditioner_;  // ITERATIVE_SCHUR's
  std::vector<std::unique_ptr<ResidualEvaluation>> evaluations_;  // the device families', then the CPU threads'
  int device_residuals_ = 0;
  std::unique_ptr<ParameterState> parameters_;  // on the device or on the host (parameter_state.h)
  DeviceVector<double> candidate_f_device_;  // the device families' residuals at the candidate
  DeviceVector<double> jacobian_, f_, gradient_, scaling_, norms_, diagonal_, d2_, step_, delta_, v_inverse_, rhs_, y_,
      y_e_, per_residual_, partials_, rows_, e_values_;
  DeviceBuffer scalars_;                                 // counters, the sum's result and ticket
  std::unique_ptr<ExplicitSchurSolver> explicit_schur_;  // made on the exact solvers' first step
  linalg_cuda::ConjugateGradient cg_;
};

}  // namespace

std::unique_ptr<BaEngine> make_general_cuda_engine(const SchurStructure& structure, const EngineOptions& options) {
  if (!linalg_cuda::cuda_device_available()) throw linalg_cuda::CudaError("ceres_cuda: no CUDA device");
  return std::make_unique<GeneralCudaEngine>(structure, options);
}

}  // namespace ceres_cuda::detail
