// The GPU engine of the general structure (SchurStructure): the library's cost functions are evaluated
// on the GPU (DeviceFamilies), the user's on CPU threads (ThreadedEvaluator) with their rows of the
// Jacobian going to the device in one copy per evaluation at x; the parameters and their manifolds
// (Plus, PlusJacobian) live on the device or on the host (ParameterState), and the whole linear
// algebra of a step runs on the device on JacobianCells' layout with block_schur_math.h's functions (block_schur_kernels.cuh): Jacobi scaling, the LM
// diagonal, the e-blocks' inverses, the reduced right-hand side, PCG on the implicit Schur complement
// with the SCHUR_JACOBI or JACOBI blocks (ITERATIVE_SCHUR), or the explicit reduced matrix factored by
// cuSOLVER (ExplicitSchurSolver: DENSE_SCHUR, SPARSE_SCHUR), the back-substitution and the model cost
// change. No floating-point atomics: the same bits run after run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "block_schur_kernels.cuh"
#include "device_families.h"
#include "device_reductions.cuh"
#include "device_upload.h"
#include "explicit_schur_solver.h"
#include "host_evaluated_engine.h"
#include "interleaved_schur_product.h"
#include "parameter_state.h"
#include "linalg_cuda/backend.h"
#include "linalg_cuda/conjugate_gradient.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/seconds_since.h"
#include "phase_log.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::DeviceBuffer;
using linalg_cuda::DeviceVector;
using linalg_cuda::detail::blocks_for;
using linalg_cuda::detail::seconds_since;

// ColumnChunks' arrays on the device (kept in *storage), as the kernels take them.
ChunkView upload_chunks(const ColumnChunks& chunks, int stride, std::vector<DeviceBuffer>* storage) {
  cudaStream_t stream = linalg_cuda::thread_context().stream();
  storage->push_back(upload_array(chunks.block, stream));
  storage->push_back(upload_array(chunks.position, stream));
  storage->push_back(upload_array(chunks.block_start, stream));
  return {(*storage)[0].as<int>(), (*storage)[1].as<int>(), (*storage)[2].as<int>(), chunks.first, stride};
}

class GeneralCudaEngine;

// S x for the PCG, and the inverted diagonal blocks of S or F'F as its preconditioner.
class ReducedSystem final : public linalg_cuda::LinearOperator {
 public:
  explicit ReducedSystem(const GeneralCudaEngine& engine, std::size_t n) : engine_(engine), n_(n) {}
  std::size_t rows() const override { return n_; }
  std::size_t cols() const override { return n_; }
  void apply(const DeviceVector<double>& x, DeviceVector<double>& y) const override;

 private:
  const GeneralCudaEngine& engine_;
  std::size_t n_;
};

class BlockDiagonal final : public linalg_cuda::Preconditioner {
 public:
  explicit BlockDiagonal(const GeneralCudaEngine& engine, std::size_t n) : engine_(engine), n_(n) {}
  std::size_t size() const override { return n_; }
  void apply(const DeviceVector<double>& r, DeviceVector<double>& z) const override;

 private:
  const GeneralCudaEngine& engine_;
  std::size_t n_;
};

class GeneralCudaEngine final : public HostEvaluatedEngine, public EngineInspection {
 public:
  GeneralCudaEngine(const SchurStructure& structure, const EngineOptions& options)
      : HostEvaluatedEngine(structure, options,
                            first_host_residual(structure.families, static_cast<int>(structure.residuals.size()))),
        stream_(linalg_cuda::thread_context().stream()) {
    PhaseLog phase("general GPU engine");  // its members (cells, evaluator, state) are built by now
    n_ = structure.tangent_size();
    nf_ = structure.f_tangent_size;
    points_ = detect_schur_sizes(structure).e == 3;
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
    std::vector<long> block_offsets(structure.num_f_blocks + 1, 0);
    for (int b = 0; b < structure.num_f_blocks; ++b) {
      const long t = structure.blocks[b].tangent_size;
      block_offsets[b + 1] = block_offsets[b] + t * t;
    }
    d_block_offsets_ = upload_array(block_offsets, stream_);
    phase("the cells' arrays uploaded");
    const ColumnChunks product_chunks(cells_, 0, structure.num_variable_blocks(), kProductChunkCells, false);
    const ColumnChunks diagonal_chunks(cells_, 0, structure.num_f_blocks, kDiagonalChunkCells, true);
    product_chunks_ = upload_chunks(product_chunks, product_stride(product_chunks), &d_product_chunks_);
    diagonal_chunks_ = upload_chunks(diagonal_chunks, diagonal_stride(diagonal_chunks), &d_diagonal_chunks_);
    product_chunk_start_ = product_chunks.block_start;
    diagonal_chunks_by_size_ = ChunksBySize(diagonal_chunks, cells_.tangent_size);
    d_diagonal_chunks_by_size_ = upload_array(diagonal_chunks_by_size_.chunk, stream_);
    product_partials_ = DeviceVector<double>(std::max(1, product_chunks.size()) *
                                             static_cast<std::size_t>(product_chunks_.stride));
    diagonal_partials_ = DeviceVector<double>(std::max(1, diagonal_chunks.size()) *
                                              static_cast<std::size_t>(diagonal_chunks_.stride));
    phase("column chunks");
    view_ = BlockSparseView{d_cells_.as<JacobianCell>(),  d_row_start_.as<int>(),      d_e_cell_.as<int>(),
                            d_row_offset_.as<long>(),      d_column_start_.as<int>(),   d_column_cells_.as<int>(),
                            d_e_sorted_cells_.as<int>(),   d_tangent_size_.as<int>(),   d_tangent_offset_.as<long>(),
                            nullptr,                       structure.f_tangent_size,    structure.first_e_block()};
    host_jacobian_.reserve(std::max<long>(1, evaluator_.num_jacobian_values()) * sizeof(double));
    host_f_.reserve(std::max<long>(1, evaluator_.num_f()) * sizeof(double));
    families_ = std::make_unique<DeviceFamilies>(structure, evaluator_.plus_jacobian_offsets(),
                                                 d_cells_.as<JacobianCell>(), d_row_start_.as<int>(),
                                                 d_row_offset_.as<long>(), d_tangent_size_.as<int>(), stream_);
    // With every residual on the GPU and every manifold one it applies, the state lives there too.
    parameters_ = make_parameter_state(structure, &state_, &evaluator_, !families_->empty() && evaluator_.num_f() == 0,
                                       stream_);
    phase("device families");
    if (!families_->empty()) candidate_f_device_ = DeviceVector<double>(std::max<long>(1, cells_.num_rows));
    jacobian_ = DeviceVector<double>(std::max<long>(1, cells_.num_values));
    view_.jacobian = jacobian_.data();
    // Only the PCG takes Schur products: the exact solvers form S instead.
    if (options.interleaved_schur_product && options.linear_solver == ceres::ITERATIVE_SCHUR)
      interleaved_ = InterleavedSchurProduct::make(structure, cells_, product_chunks, stream_);
    phase("Jacobian and the Schur product's copies");
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
    blocks_ = DeviceVector<double>(std::max<long>(1, block_offsets.back()), 0.0);
    rhs_ = DeviceVector<double>(std::max<long>(1, nf_), 0.0);
    y_ = DeviceVector<double>(std::max<long>(1, nf_), 0.0);
    per_residual_ = DeviceVector<double>(std::max(1, R_), 0.0);
    partials_ = DeviceVector<double>(kMaxReduceBlocks, 0.0);
    scalars_.reserve(4 * sizeof(double));
    LINALG_CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0, 4 * sizeof(double), stream_));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    phase("work vectors");
  }

  bool evaluate_at_x(double* cost) override {
    const auto start = std::chrono::steady_clock::now();
    const double *x = nullptr, *plus_jacobians = nullptr;
    bool ok = parameters_->x_on_device(&x, &plus_jacobians);
    if (ok) {  // the device families run while the CPU threads evaluate the user's cost functions
      families_->launch(x, plus_jacobians, f_.data(), jacobian_.data());
      double host_cost = 0.0, device_cost = 0.0;
      ok = evaluator_.evaluate(state_.x(), host_f_.as<double>(), host_jacobian_.as<double>(), &host_cost);
      if (ok) {  // the one upload of the iteration
        copy_to_device(jacobian_.data() + evaluator_.jacobian_offset(), host_jacobian_.as<double>(),
                       evaluator_.num_jacobian_values());
        copy_to_device(f_.data() + evaluator_.f_offset(), host_f_.as<double>(), evaluator_.num_f());
      }
      ok = families_->finish(&device_cost) && ok;
      *cost = device_cost + host_cost;
      ok = ok && std::isfinite(*cost);
    }
    if (interleaved_) interleaved_->jacobian_changed();
    if (ok) column_sums(f_.data(), false, 0, s_.num_variable_blocks(), gradient_.data());  // J'f
    counters_.jacobian_seconds += seconds_since(start);
    ++counters_.jacobian_evaluations;
    return ok;
  }

  bool candidate_cost(double* cost) override {
    families_->launch(parameters_->candidate_on_device(), nullptr, candidate_f_device_.data(), nullptr);
    double host_cost = 0.0, device_cost = 0.0;
    const bool host_ok = HostEvaluatedEngine::candidate_cost(&host_cost);
    const bool ok = families_->finish(&device_cost) && host_ok;
    *cost = device_cost + host_cost;
    return ok && std::isfinite(*cost);
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
    column_norms(norms_.data());
    jacobi_scaling_kernel<<<blocks_for(n_), kBlockThreads, 0, stream_>>>(n_, norms_.data(), scaling_.data());
    LINALG_CUDA_CHECK_LAUNCH();
  }

  void apply_jacobi_scaling() override {
    scale_cells_kernel<<<blocks_for(cells_.cells.size()), kBlockThreads, 0, stream_>>>(
        view_, static_cast<int>(cells_.cells.size()), scaling_.data(), jacobian_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    if (interleaved_) interleaved_->jacobian_changed();
  }

  StepResult solve_step(double radius, bool reuse_diagonal) override {
    const auto start = std::chrono::steady_clock::now();
    if (interleaved_) interleaved_->refresh(view_, product_chunks_);
    if (!reuse_diagonal) {
      column_norms(norms_.data());
      lm_diagonal_kernel<<<blocks_for(n_), kBlockThreads, 0, stream_>>>(n_, norms_.data(), options_.min_lm_diagonal,
                                                                         options_.max_lm_diagonal, diagonal_.data());
      LINALG_CUDA_CHECK_LAUNCH();
    }
    damping_kernel<<<blocks_for(n_), kBlockThreads, 0, stream_>>>(n_, diagonal_.data(), radius, d2_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    int* singular = scalars_.as<int>();  // [0]: e-blocks, [1]: preconditioner blocks regularised
    LINALG_CUDA_CHECK(cudaMemsetAsync(singular, 0, 2 * sizeof(int), stream_));
    const int first_e = s_.first_e_block(), last_e = s_.num_variable_blocks();
    const unsigned e_grid = blocks_for(s_.num_e_blocks, kNarrowBlockThreads);
    if (points_)
      e_inverse_kernel<3><<<e_grid, kNarrowBlockThreads, 0, stream_>>>(view_, first_e, last_e, d2_.data(),
                                                                        v_inverse_.data(), singular);
    else
      e_inverse_kernel<0><<<e_grid, kNarrowBlockThreads, 0, stream_>>>(view_, first_e, last_e, d2_.data(),
                                                                        v_inverse_.data(), singular);
    LINALG_CUDA_CHECK_LAUNCH();
    // The reduced right-hand side F'(f - E V^-1 E'f).
    e_solve(f_.data(), e_values_.data());
    copy_on_device(rows_.data(), f_.data(), cells_.num_rows);
    subtract_e(e_values_.data());
    column_sums(rows_.data(), false, 0, s_.num_f_blocks, rhs_.data());

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
    row_product_kernel<<<blocks_for(R_), kBlockThreads, 0, stream_>>>(view_, R_, y_.data(), true, rows_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    residual_minus_kernel<<<blocks_for(cells_.num_rows), kBlockThreads, 0, stream_>>>(cells_.num_rows, f_.data(),
                                                                                       rows_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    e_solve(rows_.data(), y_e_.data());
    step_kernel<<<blocks_for(n_), kBlockThreads, 0, stream_>>>(n_, nf_, y_.data(), y_e_.data(), scaling_.data(),
                                                               step_.data(), delta_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    // The model cost change -(J s)'(f + J s / 2), per residual block, summed in a fixed order.
    row_product_kernel<<<blocks_for(R_), kBlockThreads, 0, stream_>>>(view_, R_, step_.data(), false, rows_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    model_change_kernel<<<blocks_for(R_), kBlockThreads, 0, stream_>>>(view_, R_, rows_.data(), f_.data(),
                                                                       per_residual_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    result.model_cost_change = device_sum(per_residual_.data(), R_);
    result.finite = parameters_->take_step(delta_.data()) && std::isfinite(result.model_cost_change);
    counters_.linear_seconds += seconds_since(start);
    return result;
  }

  std::vector<double> jacobian() override { return download(jacobian_, cells_.num_values); }
  std::vector<double> schur_product(const std::vector<double>& x) override {
    if (interleaved_) interleaved_->refresh(view_, product_chunks_);
    DeviceVector<double> dx(x), dy(x.size());
    apply_schur(dx.data(), dy.data());
    return dy.to_std();
  }
  std::vector<double> preconditioner_blocks() override { return blocks_.to_std(); }
  std::vector<double> delta() override { return download(delta_, n_); }
  std::string description() const override {
    const long device = families_->num_residuals(), all = static_cast<long>(s_.residuals.size());
    return std::string("cuda (general structure: ") + std::to_string(device) + " of " + std::to_string(all) +
           " residual blocks evaluated on the GPU, the rest on " + std::to_string(options_.num_threads) +
           " CPU thread(s); the linear algebra" + (parameters_->on_device() ? ", the parameters and their manifolds" : "") +
           " on the GPU)";
  }

  // S x = F'(F x - E V^-1 E'F x) + D_f^2 x, on the stream, without synchronising (the PCG captures it):
  // on the interleaved copies when they fit, on JacobianCells' layout otherwise.
  void apply_schur(const double* x, double* out) const {
    if (interleaved_) {
      interleaved_->apply(view_, product_chunks_, x, v_inverse_.data(), rows_.data(), product_partials_.data());
      column_sum_kernel<<<blocks_for(static_cast<std::size_t>(s_.num_f_blocks) * kWarpLanes), kBlockThreads, 0,
                          stream_>>>(view_, product_chunks_, 0, s_.num_f_blocks, product_partials_.data(), out);
      LINALG_CUDA_CHECK_LAUNCH();
    } else {
      row_product_kernel<<<blocks_for(R_), kBlockThreads, 0, stream_>>>(view_, R_, x, true, rows_.data());
      LINALG_CUDA_CHECK_LAUNCH();
      e_solve(rows_.data(), e_values_.data());
      subtract_e(e_values_.data());
      column_sums(rows_.data(), false, 0, s_.num_f_blocks, out);
    }
    add_damping_kernel<<<blocks_for(nf_), kBlockThreads, 0, stream_>>>(nf_, d2_.data(), x, out);
    LINALG_CUDA_CHECK_LAUNCH();
  }

  void apply_preconditioner(const double* r, double* z) const {
    block_jacobi_kernel<<<blocks_for(s_.num_f_blocks), kBlockThreads, 0, stream_>>>(
        view_, s_.num_f_blocks, d_block_offsets_.as<long>(), blocks_.data(), r, z);
    LINALG_CUDA_CHECK_LAUNCH();
  }

 private:
  void copy_to_device(double* device, const double* host, long n) {
    if (n > 0) LINALG_CUDA_CHECK(cudaMemcpyAsync(device, host, n * sizeof(double), cudaMemcpyHostToDevice, stream_));
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

  void column_norms(double* out) { column_sums(nullptr, true, 0, s_.num_variable_blocks(), out); }
  // J' rows (norms: the squared column norms) for blocks [first, last): a warp per chunk, then per block.
  void column_sums(const double* rows, bool norms, int first, int last, double* out) const {
    const int first_chunk = product_chunk_start_[first], last_chunk = product_chunk_start_[last];
    const unsigned chunk_blocks = blocks_for(static_cast<std::size_t>(last_chunk - first_chunk) * kWarpLanes);
    column_chunk_kernel<<<chunk_blocks, kBlockThreads, 0, stream_>>>(
        view_, product_chunks_, first_chunk, last_chunk, rows, norms, product_partials_.data());
    LINALG_CUDA_CHECK_LAUNCH();
    column_sum_kernel<<<blocks_for(static_cast<std::size_t>(last - first) * kWarpLanes), kBlockThreads, 0, stream_>>>(
        view_, product_chunks_, first, last, product_partials_.data(), out);
    LINALG_CUDA_CHECK_LAUNCH();
  }
  // out (e-part) = V^-1 E' rows.
  void e_solve(const double* rows, double* out) const {
    const unsigned grid = blocks_for(s_.num_e_blocks, kNarrowBlockThreads);
    if (points_)
      e_solve_kernel<3><<<grid, kNarrowBlockThreads, 0, stream_>>>(view_, s_.first_e_block(), s_.num_variable_blocks(),
                                                                    v_inverse_.data(), rows, out);
    else
      e_solve_kernel<0><<<grid, kNarrowBlockThreads, 0, stream_>>>(view_, s_.first_e_block(), s_.num_variable_blocks(),
                                                                    v_inverse_.data(), rows, out);
    LINALG_CUDA_CHECK_LAUNCH();
  }
  // rows -= E w.
  void subtract_e(const double* w) const {
    subtract_e_kernel<<<blocks_for(R_), kBlockThreads, 0, stream_>>>(view_, R_, w, rows_.data());
    LINALG_CUDA_CHECK_LAUNCH();
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

  // The diagonal blocks' chunks of S (schur) or of F'F, a launch per tangent size of the f-blocks.
  void diagonal_chunks(bool schur) {
    const ChunksBySize& groups = diagonal_chunks_by_size_;
    for (int g = 0; g < groups.groups(); ++g) {
      const int first = groups.group_start[g], count = groups.group_start[g + 1] - first, t = groups.tangent[g];
      const unsigned blocks = blocks_for(static_cast<std::size_t>(count) * lower_triangle_entries(t));
      diagonal_chunk_kernel<<<blocks, kBlockThreads, 0, stream_>>>(view_, diagonal_chunks_,
                                                                   d_diagonal_chunks_by_size_.as<int>() + first, count,
                                                                   t, schur, v_inverse_.data(), diagonal_partials_.data());
      LINALG_CUDA_CHECK_LAUNCH();
    }
  }

  void iterative_solve(int* singular, StepResult* result) {
    diagonal_chunks(options_.preconditioner == ceres::SCHUR_JACOBI);
    diagonal_sum_kernel<<<blocks_for(static_cast<std::size_t>(s_.num_f_blocks) * kWarpLanes), kBlockThreads, 0, stream_>>>(
        view_, diagonal_chunks_, s_.num_f_blocks, diagonal_partials_.data(), d2_.data(), d_block_offsets_.as<long>(),
        blocks_.data(), singular);
    LINALG_CUDA_CHECK_LAUNCH();
    cg_.set_options(step_cg_options(options_));
    y_.fill(0.0);
    const ReducedSystem op(*this, nf_);
    const BlockDiagonal preconditioner(*this, nf_);
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto pcg_start = std::chrono::steady_clock::now();
    const linalg_cuda::SolverSummary summary = cg_.solve(op, rhs_, y_, &preconditioner);
    counters_.pcg_seconds += seconds_since(pcg_start);
    set_ceres_cg_outcome(summary, options_, result);
    counters_.linear_iterations += result->linear_iterations;
  }

  // DENSE_SCHUR and SPARSE_SCHUR: F'F's diagonal blocks by the preconditioner's column chunks (without
  // the Schur term), the rest of S and its factorization by the ExplicitSchurSolver.
  void exact_solve(StepResult* result) {
    diagonal_chunks(false);
    if (!explicit_schur_)
      explicit_schur_ = std::make_unique<ExplicitSchurSolver>(s_, cells_, options_.explicit_schur);
    *result = explicit_schur_->solve(view_, diagonal_chunks_, diagonal_partials_.data(), d2_.data(), v_inverse_.data(),
                                     rhs_.data(), y_.data());
    counters_.linear_iterations += result->linear_iterations;
  }

  cudaStream_t stream_;
  long n_ = 0, nf_ = 0;
  bool points_ = false;  // every e-block has 3 tangent values: the e-block kernels specialised for them
  int R_ = 0;
  DeviceBuffer d_cells_, d_row_start_, d_e_cell_, d_row_offset_, d_column_start_, d_column_cells_, d_e_sorted_cells_,
      d_tangent_size_, d_tangent_offset_, d_block_offsets_;
  BlockSparseView view_{};
  std::vector<DeviceBuffer> d_product_chunks_, d_diagonal_chunks_;
  ChunkView product_chunks_{}, diagonal_chunks_{};  // ColumnChunks of products and norms, and of the preconditioner
  std::vector<int> product_chunk_start_;
  // The Schur product on interleaved copies of the Jacobian; null where they do not fit.
  std::unique_ptr<InterleavedSchurProduct> interleaved_;
  ChunksBySize diagonal_chunks_by_size_;  // the diagonal chunks by tangent size, for their kernel's launches
  DeviceBuffer d_diagonal_chunks_by_size_;
  linalg_cuda::PinnedBuffer host_jacobian_, host_f_;  // the CPU threads' rows, uploaded from pinned memory
  std::unique_ptr<DeviceFamilies> families_;
  std::unique_ptr<ParameterState> parameters_;  // on the device or on the host (parameter_state.h)
  DeviceVector<double> candidate_f_device_;  // the device families' residuals at the candidate
  DeviceVector<double> jacobian_, f_, gradient_, scaling_, norms_, diagonal_, d2_, step_, delta_, v_inverse_, blocks_,
      rhs_, y_, y_e_, per_residual_, partials_;
  mutable DeviceVector<double> rows_, e_values_, product_partials_;  // the Schur product's scratch
  DeviceVector<double> diagonal_partials_;
  DeviceBuffer scalars_;                          // counters, the sum's result and ticket
  std::unique_ptr<ExplicitSchurSolver> explicit_schur_;  // made on the exact solvers' first step
  linalg_cuda::ConjugateGradient cg_;
};

void ReducedSystem::apply(const DeviceVector<double>& x, DeviceVector<double>& y) const {
  engine_.apply_schur(x.data(), y.data());
}

void BlockDiagonal::apply(const DeviceVector<double>& r, DeviceVector<double>& z) const {
  engine_.apply_preconditioner(r.data(), z.data());
}

}  // namespace

std::unique_ptr<BaEngine> make_general_cuda_engine(const SchurStructure& structure, const EngineOptions& options) {
  if (!linalg_cuda::cuda_device_available()) throw linalg_cuda::CudaError("ceres_cuda: no CUDA device");
  return std::make_unique<GeneralCudaEngine>(structure, options);
}

}  // namespace ceres_cuda::detail
