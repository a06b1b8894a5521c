#include "explicit_schur_solver.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "explicit_schur_kernels.cuh"
#include "device_upload.h"
#include "linalg_cuda/backend.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "phase_log.h"
#include "reduced_matrix_plan.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::DeviceBuffer;
using linalg_cuda::detail::blocks_for;

// Below this many flops (about 10 ms on a Hopper GPU) the e-blocks' terms are formed by syrk over dense
// columns; above it, by block rows (most of the dense products would be zeros).
constexpr double kMaxSyrkFlops = 2e11;
// Up to this many f-parameters G G' is formed by gemm rather than syrk (subtract_e_terms_by_syrk).
constexpr long kMaxGemmRows = 512;


// CERES_CUDA_EXPLICIT_SCHUR=syrk|pairs|rows in the environment forces a method, to time each on a
// problem (bench_ceres_general); anything else leaves the choice to the solver.
ExplicitSchurMethod method_from_environment() {
  const char* value = std::getenv("CERES_CUDA_EXPLICIT_SCHUR");
  if (value == nullptr) return ExplicitSchurMethod::Auto;
  const std::string v(value);
  if (v == "syrk") return ExplicitSchurMethod::Syrk;
  if (v == "pairs") return ExplicitSchurMethod::Pairs;
  if (v == "rows") return ExplicitSchurMethod::Rows;
  return ExplicitSchurMethod::Auto;
}

}  // namespace

ExplicitSchurSolver::ExplicitSchurSolver(const SchurStructure& structure, const JacobianCells& cells,
                                         ExplicitSchurMethod method)
    : s_(structure),
      cells_(cells),
      method_(method),
      stream_(linalg_cuda::thread_context().stream()),
      n_(structure.f_tangent_size) {
  info_.reserve(sizeof(int));
  for (int p = s_.first_e_block(); p < s_.num_variable_blocks(); ++p)
    g_width_ = std::max(g_width_, s_.blocks[p].tangent_size);
  const SchurSizes sizes = detect_schur_sizes(structure);
  cubes_ = sizes.e == 3 && sizes.f == 3;
  f_blocks_of_3_ = true;
  for (int b = 0; b < s_.num_f_blocks; ++b) f_blocks_of_3_ = f_blocks_of_3_ && s_.blocks[b].tangent_size == 3;
}

StepResult ExplicitSchurSolver::solve(const BlockSparseView& view, const ChunkView& diagonal_chunks,
                                      const double* diagonal_partials, const double* d2, const double* v_inverse,
                                      const double* rhs, double* y) {
  const long n = n_;
  // The thread's handle, made once: a handle's creation costs more than a small problem's step.
  cusolverDnHandle_t solver = linalg_cuda::thread_context().cusolver_dense();
  dense_.resize(static_cast<std::size_t>(n) * n);
  dense_.fill(0.0);
  if (!pairs_made_) make_pairs();
  const FtfPairsView pairs{{pair_storage_[0].as<int>(), pair_storage_[1].as<int>(),
                            {pair_storage_[4].as<int>(), pair_storage_[5].as<int>(), pair_storage_[6].as<int>(), 0,
                             pair_stride_},
                            num_pair_chunks_, num_pairs_},
                           pair_storage_[2].as<int>(),
                           pair_storage_[3].as<int>()};
  const unsigned grid = blocks_for(num_pair_chunks_, kNarrowBlockThreads);
  if (f_blocks_of_3_)
    ftf_pair_chunk_kernel<3><<<grid, kNarrowBlockThreads, 0, stream_>>>(view, pairs, pair_partials_.data());
  else
    ftf_pair_chunk_kernel<0><<<grid, kNarrowBlockThreads, 0, stream_>>>(view, pairs, pair_partials_.data());
  LINALG_CUDA_CHECK_LAUNCH();
  pair_sum_kernel<<<blocks_for(static_cast<std::size_t>(num_pairs_) * kWarpLanes), kBlockThreads, 0, stream_>>>(
      view, pairs.pairs, pair_partials_.data(), 1.0, dense_.data(), n);
  LINALG_CUDA_CHECK_LAUNCH();
  dense_diagonal_kernel<<<blocks_for(static_cast<std::size_t>(s_.num_f_blocks) * kWarpLanes), kBlockThreads, 0,
                          stream_>>>(view, diagonal_chunks, s_.num_f_blocks, diagonal_partials, d2, dense_.data(), n);
  LINALG_CUDA_CHECK_LAUNCH();
  switch (choose_method()) {
    case ExplicitSchurMethod::Syrk: subtract_e_terms_by_syrk(view, v_inverse); break;
    case ExplicitSchurMethod::Pairs: subtract_e_terms_by_pairs(view, v_inverse); break;
    default: subtract_e_terms_by_rows(view, v_inverse); break;
  }

  int work_size = 0;
  LINALG_CUDA_CHECK(cusolverDnDpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), dense_.data(),
                                                static_cast<int>(n), &work_size));
  work_.resize(std::max(1, work_size));
  int* info = info_.as<int>();
  LINALG_CUDA_CHECK(cusolverDnDpotrf(solver, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), dense_.data(),
                                     static_cast<int>(n), work_.data(), work_size, info));
  int host_info = 0;
  LINALG_CUDA_CHECK(cudaMemcpyAsync(&host_info, info, sizeof(int), cudaMemcpyDeviceToHost, stream_));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  StepResult result;
  if (host_info != 0) {
    result.termination = LinearTermination::Failure;
    result.message = "cuSOLVER failure. Unable to perform dense Cholesky factorization (minor " +
                     std::to_string(host_info) + " not positive definite).";
    return result;
  }
  if (n > 0)
    LINALG_CUDA_CHECK(cudaMemcpyAsync(y, rhs, n * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
  LINALG_CUDA_CHECK(cusolverDnDpotrs(solver, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), 1, dense_.data(),
                                     static_cast<int>(n), y, static_cast<int>(n), info));
  result.termination = LinearTermination::Success;
  result.message = "Success.";
  result.linear_iterations = 1;
  return result;
}

// Syrk while its dense products cost little; otherwise the pairs while their plan's build fits in half
// the free device memory; otherwise the rows. Chosen on the first solve and kept.
ExplicitSchurMethod ExplicitSchurSolver::choose_method() {
  if (chosen_ != ExplicitSchurMethod::Auto) return chosen_;
  chosen_ = method_;
  if (chosen_ == ExplicitSchurMethod::Auto) chosen_ = method_from_environment();
  if (chosen_ == ExplicitSchurMethod::Auto) {
    const double syrk_flops = static_cast<double>(n_) * n_ * kMaxEBlockTangentSize * s_.num_e_blocks;
    if (syrk_flops <= kMaxSyrkFlops) return chosen_ = ExplicitSchurMethod::Syrk;
    make_slots();
    const long entries = WPairPlan::entries(slot_start_);
    const bool fits = static_cast<double>(WPairPlan::build_bytes(entries)) <=
                          0.5 * static_cast<double>(linalg_cuda::free_device_memory()) &&
                      entries < (1l << 31) - 1;
    chosen_ = fits ? ExplicitSchurMethod::Pairs : ExplicitSchurMethod::Rows;
  }
  return chosen_;
}

void ExplicitSchurSolver::subtract_e_terms_by_pairs(const BlockSparseView& view, const double* v_inverse) {
  make_slots();
  if (!w_pairs_) {
    int t = 1;
    for (int b = 0; b < s_.num_f_blocks; ++b) t = std::max(t, s_.blocks[b].tangent_size);
    w_pairs_ = std::make_unique<WPairPlan>(slots_, slot_start_, s_.num_f_blocks, t * t, stream_);
    const std::size_t chunks = static_cast<std::size_t>(w_pairs_->view().pairs.num_chunks);
    w_pair_partials_.resize(std::max<std::size_t>(1, chunks * t * t));
  }
  const WPairsView& pairs = w_pairs_->view();
  const int positions = cells_.column_start[s_.num_f_blocks];
  w_slots_kernel<<<blocks_for(positions), kBlockThreads, 0, stream_>>>(view, slots_, positions, w_slots_.data());
  LINALG_CUDA_CHECK_LAUNCH();
  w_pair_chunk_kernel<<<blocks_for(pairs.pairs.num_chunks, kNarrowBlockThreads), kNarrowBlockThreads, 0, stream_>>>(
      view, slots_, pairs, w_slots_.data(), v_inverse, w_pair_partials_.data());
  LINALG_CUDA_CHECK_LAUNCH();
  pair_sum_kernel<<<blocks_for(static_cast<std::size_t>(pairs.pairs.num_pairs) * kWarpLanes), kBlockThreads, 0,
                    stream_>>>(view, pairs.pairs, w_pair_partials_.data(), -1.0, dense_.data(), n_);
  LINALG_CUDA_CHECK_LAUNCH();
}

void ExplicitSchurSolver::subtract_e_terms_by_rows(const BlockSparseView& view, const double* v_inverse) {
  make_slots();
  const int positions = cells_.column_start[s_.num_f_blocks];
  w_slots_kernel<<<blocks_for(positions), kBlockThreads, 0, stream_>>>(view, slots_, positions, w_slots_.data());
  LINALG_CUDA_CHECK_LAUNCH();
  w_rows_kernel<<<blocks_for(static_cast<std::size_t>(s_.num_f_blocks) * kWarpLanes), kBlockThreads, 0, stream_>>>(
      view, slots_, rows_, s_.num_f_blocks, w_slots_.data(), v_inverse, dense_.data(), n_);
  LINALG_CUDA_CHECK_LAUNCH();
}

void ExplicitSchurSolver::subtract_e_terms_by_syrk(const BlockSparseView& view, const double* v_inverse) {
  const long n = n_;
  const int positions = cells_.column_start[s_.num_f_blocks];
  const int width = g_width_;
  const long max_columns = std::max<long>(width, (256l << 20) / sizeof(double) / std::max<long>(1, n));
  const int chunk = static_cast<int>(std::min<long>(max_columns / width, std::max(1, s_.num_e_blocks)));
  g_.resize(static_cast<std::size_t>(n) * width * chunk);
  // No cublasSetStream: it would drop the handle's own workspace (CudaContext::cublas).
  cublasHandle_t blas = linalg_cuda::thread_context().cublas();
  for (int first = 0; first < s_.num_e_blocks; first += chunk) {
    const int count = std::min(chunk, s_.num_e_blocks - first);
    const int columns = width * count;
    LINALG_CUDA_CHECK(cudaMemsetAsync(g_.data(), 0, static_cast<std::size_t>(n) * columns * sizeof(double), stream_));
    if (cubes_)
      explicit_g_kernel<3, 3><<<blocks_for(positions), kBlockThreads, 0, stream_>>>(view, first, count, width, positions,
                                                                                  v_inverse, g_.data(), n);
    else
      explicit_g_kernel<0, 0><<<blocks_for(positions), kBlockThreads, 0, stream_>>>(view, first, count, width, positions,
                                                                                  v_inverse, g_.data(), n);
    LINALG_CUDA_CHECK_LAUNCH();
    const double alpha = -1.0, beta = 1.0;
    const int rows = static_cast<int>(n);
    // G is tall and thin (a few hundred rows, tens of thousands of columns): there cuBLAS' gemm, which
    // writes both triangles, is 2x to 5x faster than its syrk; from about a thousand rows syrk is.
    if (n <= kMaxGemmRows)
      LINALG_CUDA_CHECK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, rows, rows, columns, &alpha, g_.data(), rows,
                                    g_.data(), rows, &beta, dense_.data(), rows));
    else
      LINALG_CUDA_CHECK(cublasDsyrk(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, rows, columns, &alpha, g_.data(), rows,
                                    &beta, dense_.data(), rows));
  }
}

void ExplicitSchurSolver::make_pairs() {
  PhaseLog phase("explicit Schur solver");
  const FtfPairs pairs(s_, cells_);
  phase("F'F's pairs");
  for (std::size_t i = 0; i < pairs.pair_j.size(); ++i)
    pair_stride_ = std::max(pair_stride_, s_.blocks[pairs.pair_j[i]].tangent_size * s_.blocks[pairs.pair_k[i]].tangent_size);
  for (const std::vector<int>* v : {&pairs.pair_j, &pairs.pair_k, &pairs.entry_j, &pairs.entry_k, &pairs.chunk_pair,
                                    &pairs.chunk_position, &pairs.pair_chunk_start})
    pair_storage_.push_back(upload_array(*v, stream_));
  num_pair_chunks_ = static_cast<int>(pairs.chunk_pair.size());
  num_pairs_ = static_cast<int>(pairs.pair_j.size());
  pair_partials_.resize(std::max<std::size_t>(1, pairs.chunk_pair.size() * static_cast<std::size_t>(pair_stride_)));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the plan's host arrays go out of scope
  pairs_made_ = true;
  phase("their upload");
}

void ExplicitSchurSolver::make_slots() {
  if (slots_made_) return;
  const ReducedMatrixPlan plan(s_, cells_);
  for (const auto* v : {&plan.slot_start, &plan.slot_block, &plan.slot_e_block, &plan.row_start, &plan.row_slots})
    slot_storage_.push_back(upload_array(*v, stream_));
  slot_storage_.push_back(upload_array(plan.slot_values, stream_));
  slots_ = {slot_storage_[0].as<int>(), slot_storage_[1].as<int>(), slot_storage_[5].as<long>(),
            slot_storage_[2].as<int>(), s_.num_e_blocks};
  rows_ = {slot_storage_[3].as<int>(), slot_storage_[4].as<int>()};
  slot_start_ = plan.slot_start;
  w_slots_.resize(std::max<long>(1, plan.num_values));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the plan's host arrays go out of scope
  slots_made_ = true;
}

}  // namespace ceres_cuda::detail
