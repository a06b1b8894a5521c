#include "linalg_cuda/conjugate_gradient.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <typeinfo>

#include "cg_kernels.cuh"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_csr_matrix.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/fused_cg_operator.h"
#include "linalg_cuda/internal/launch_geometry.h"
#include "linalg_cuda/internal/seconds_since.h"

namespace linalg_cuda {

using detail::CgState;
using detail::kCgThreads;
static_assert(detail::kCgMaxBlockSize == BlockJacobiPreconditioner::kMaxBlockSize,
              "cg_update_block_jacobi keeps a row of the largest block in registers");

// Device workspace of one solver, kept while the system size does not change.
struct ConjugateGradient::Workspace {
  std::size_t n = 0;
  DeviceVector<double> r, z, p, q;
  DeviceVector<double> partials;  // three per block of the largest grid
  linalg_cuda::DeviceBuffer state_storage{sizeof(CgState)};
  linalg_cuda::PinnedBuffer host_state_storage{sizeof(CgState)};  // for the once-per-batch read-back
  CgState* state = state_storage.as<CgState>();
  CgState* host_state = host_state_storage.as<CgState>();
  unsigned vector_blocks = 1;
  int max_resident_blocks = 1;
  cudaGraphExec_t graph = nullptr;

  explicit Workspace(std::size_t size) : n(size), r(size), z(size), p(size), q(size) {
    const cudaDeviceProp& props = thread_context().device_properties();
    // A full device of resident blocks: enough loads in flight to saturate HBM, and a grid that
    // depends only on n and the device, which keeps the reductions' order fixed.
    max_resident_blocks = detail::resident_blocks(props, kCgThreads);
    vector_blocks = resident_grid_for(size);
    partials = DeviceVector<double>(3 * static_cast<std::size_t>(max_resident_blocks));
  }
  ~Workspace() {
    if (graph) cudaGraphExecDestroy(graph);
  }
  // Blocks for one thread per item, at most a full device of resident blocks (the kernels loop).
  unsigned resident_grid_for(std::size_t threads) const {
    return std::min(detail::blocks_covering(threads, kCgThreads), static_cast<unsigned>(max_resident_blocks));
  }
};

namespace {

// Rows per CSR-stream chunk: as many (up to a warp's 32) as keep a chunk of average rows within
// the warp's stage; chunks that still overflow take the kernel's long-row path.
int rows_per_chunk(const DeviceCsrMatrix& a) {
  const double mean = a.rows() ? static_cast<double>(a.nonzeros()) / static_cast<double>(a.rows()) : 1.0;
  int rows = 32;
  while (rows > 1 && mean * rows > 0.9 * detail::kStagePerWarp) rows /= 2;
  return rows;
}

// Ends a stream capture that failed part-way and drops what was captured, so that the stream can be
// used again.
void abandon_capture(cudaStream_t stream, cudaGraph_t* graph) {
  cudaStreamEndCapture(stream, graph);
  if (*graph) cudaGraphDestroy(*graph);
  *graph = nullptr;
  cudaGetLastError();
}

// A graph whose one node is a conditional WHILE loop with `batch` CG iterations as its body (captured
// from enqueue_iteration, then a node that sets the loop's condition from the device state). Null
// where the toolkit or driver has no conditional nodes; the caller then captures batches. Throws what
// the capture throws, with the stream no longer capturing.
template <class Enqueue>
cudaGraph_t capture_device_loop(cudaStream_t stream, int batch, const Enqueue& enqueue_iteration, const CgState* state) {
#if CUDART_VERSION >= 12040
  cudaGraph_t graph = nullptr;
  if (cudaGraphCreate(&graph, 0) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  cudaGraphConditionalHandle handle{};
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  cudaGraphNode_t node = nullptr;
  bool made = cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault) == cudaSuccess;
  if (made) {
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    made = cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params) == cudaSuccess;
  }
  if (!made) {
    cudaGetLastError();
    cudaGraphDestroy(graph);
    return nullptr;
  }
  cudaGraph_t body = params.conditional.phGraph_out[0];
  try {
    LINALG_CUDA_CHECK(cudaStreamBeginCaptureToGraph(stream, body, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < batch; ++k) enqueue_iteration();
    detail::cg_continue_while_running<<<1, 1, 0, stream>>>(handle, state);
    LINALG_CUDA_CHECK_LAUNCH();
    LINALG_CUDA_CHECK(cudaStreamEndCapture(stream, &body));
  } catch (...) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);  // the body belongs to the node: destroyed with the graph
    cudaGetLastError();
    cudaGraphDestroy(graph);
    throw;
  }
  return graph;
#else
  (void)stream;
  (void)batch;
  (void)enqueue_iteration;
  (void)state;
  return nullptr;
#endif
}

}  // namespace

ConjugateGradient::ConjugateGradient(CgOptions options) : options_(options) {}
ConjugateGradient::~ConjugateGradient() = default;
ConjugateGradient::ConjugateGradient(ConjugateGradient&&) noexcept = default;
ConjugateGradient& ConjugateGradient::operator=(ConjugateGradient&&) noexcept = default;
void ConjugateGradient::set_options(const CgOptions& options) { options_ = options; }

SolverSummary ConjugateGradient::solve(const LinearOperator& a, const DeviceVector<double>& b, DeviceVector<double>& x,
                                       const Preconditioner* preconditioner) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = a.rows();
  if (a.cols() != n || b.size() != n || x.size() != n || (preconditioner && preconditioner->size() != n))
    throw DimensionMismatch("cg: operator is " + std::to_string(a.rows()) + "x" + std::to_string(a.cols()) +
                            ", b has " + std::to_string(b.size()) + " entries, x " + std::to_string(x.size()) +
                            (preconditioner ? ", preconditioner " + std::to_string(preconditioner->size()) : "") +
                            "; all must equal n");
  if (n > static_cast<std::size_t>(INT32_MAX - (1 << 24)))
    throw InvalidArgument("cg: systems of " + std::to_string(n) + " rows exceed the 32-bit index range");
  if (const auto* m = dynamic_cast<const DeviceCsrMatrix*>(&a); m && m->nonzeros() > static_cast<std::size_t>(INT32_MAX - 1024))
    throw InvalidArgument("cg: " + std::to_string(m->nonzeros()) + " nonzeros exceed the 32-bit index range");
  if (options_.execution.check_every < 1) throw InvalidArgument("cg: check_every must be >= 1");
  validate(options_.stop);

  SolverSummary summary;
  summary.backend = Backend::Cuda;
  auto finish = [&] {
    summary.seconds = detail::seconds_since(start);
    return summary;
  };
  if (n == 0) {
    summary.converged = true;
    summary.termination = CgTermination::Converged;
    summary.message = "empty system: nothing to solve";
    return finish();
  }

  if (!workspace_ || workspace_->n != n) workspace_ = std::make_unique<Workspace>(n);
  Workspace& w = *workspace_;
  const cudaStream_t stream = thread_context().stream();
  const int size = static_cast<int>(n);

  // How this operator and preconditioner run: fused kernels where we know the data.
  // Exactly these classes: a subclass may override apply(), which the fused kernels would bypass.
  const auto* csr = typeid(a) == typeid(DeviceCsrMatrix) ? static_cast<const DeviceCsrMatrix*>(&a) : nullptr;
  const auto* jacobi = preconditioner && typeid(*preconditioner) == typeid(JacobiPreconditioner)
                           ? static_cast<const JacobiPreconditioner*>(preconditioner)
                           : nullptr;
  const double* inverse_diagonal = jacobi ? jacobi->inverse_diagonal().data() : nullptr;
  // An operator that takes part of the iteration on itself, when it says so.
  const auto* fused = dynamic_cast<const FusedCgOperator*>(&a);
  const auto* block_jacobi = preconditioner && typeid(*preconditioner) == typeid(BlockJacobiPreconditioner)
                                 ? static_cast<const BlockJacobiPreconditioner*>(preconditioner)
                                 : nullptr;
  const bool fused_update = preconditioner == nullptr || jacobi != nullptr;
  double* z = preconditioner ? w.z.data() : w.r.data();  // without preconditioner z is r
  const int chunk_rows = csr ? rows_per_chunk(*csr) : 0;
  const unsigned spmv_blocks = csr ? w.resident_grid_for((n + chunk_rows - 1) / chunk_rows * 32) : 0;
  // b is read by the update kernels only when the quadratic-model test needs x'(b + r).
  const double* quadratic_b = options_.stop.quadratic_tolerance > 0.0 ? b.data() : nullptr;

  // ---- set-up: r = b - A x, z = M^{-1} r, p = z; one read-back to decide whether to iterate.
  *w.host_state = detail::make_cg_state(options_.stop);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(w.state, w.host_state, sizeof(CgState), cudaMemcpyHostToDevice, stream));
  a.apply(x, w.q);
  detail::cg_initial_residual<<<w.vector_blocks, kCgThreads, 0, stream>>>(size, b.data(), w.q.data(), x.data(),
                                                                           w.r.data(), w.partials.data(), w.state);
  LINALG_CUDA_CHECK_LAUNCH();
  if (preconditioner) preconditioner->apply(w.r, w.z);
  detail::cg_initial_direction<<<w.vector_blocks, kCgThreads, 0, stream>>>(
      size, w.r.data(), z, w.p.data(), preconditioner != nullptr, w.partials.data(), w.state);
  LINALG_CUDA_CHECK_LAUNCH();

  // ---- one iteration, as kernels on the stream (captured into a graph below). A fused operator that
  // takes the direction update and p'Ap on itself (apply_cg_step) leaves the update kernels alpha to
  // find from its p'Ap, and the next iteration's product the direction to update.
  const CgProductStep operator_step{preconditioner ? w.z : w.r, w.p, &w.state->beta, w.q, &w.state->operator_pap,
                                    &w.state->status};
  auto enqueue_iteration = [&] {
    const double* operator_pap = nullptr;
    if (csr) {
      detail::cg_csr_spmv_dot<<<spmv_blocks, kCgThreads, 0, stream>>>(
          size, chunk_rows, csr->row_ptr().data(), csr->col_idx().data(), csr->values().data(), w.p.data(), w.q.data(),
          w.partials.data(), w.state);
      LINALG_CUDA_CHECK_LAUNCH();
    } else if (fused && fused->apply_cg_step(operator_step)) {
      operator_pap = operator_step.pap;
    } else {
      // &status is a device address: status != kCgRunning is stopped.
      if (fused) fused->apply_unless_stopped(w.p, w.q, &w.state->status);
      else a.apply(w.p, w.q);
      detail::cg_dot_alpha<<<w.vector_blocks, kCgThreads, 0, stream>>>(size, w.p.data(), w.q.data(), w.partials.data(),
                                                                        w.state);
      LINALG_CUDA_CHECK_LAUNCH();
    }
    if (block_jacobi) {
      const std::size_t blocks_per_pass = kCgThreads / block_jacobi->block_size();
      const std::size_t passes = (block_jacobi->num_blocks() + blocks_per_pass - 1) / blocks_per_pass;
      LINALG_CUDA_CHECK(detail::launch_after_previous(
          detail::cg_update_block_jacobi, w.resident_grid_for(passes * kCgThreads), kCgThreads, 0, stream, size,
          block_jacobi->block_size(), static_cast<int>(block_jacobi->num_blocks()),
          block_jacobi->layout() == BlockVectorLayout::kContinuousElement, x.data(), w.r.data(), z, w.p.data(),
          w.q.data(), block_jacobi->inverse_blocks().data(), quadratic_b, operator_pap, w.partials.data(), w.state));
    } else if (fused_update) {
      detail::cg_update_fused<<<w.vector_blocks, kCgThreads, 0, stream>>>(
          size, x.data(), w.r.data(), z, w.p.data(), w.q.data(), inverse_diagonal, quadratic_b, operator_pap,
          w.partials.data(), w.state);
      LINALG_CUDA_CHECK_LAUNCH();
    } else {
      detail::cg_update_xr<<<w.vector_blocks, kCgThreads, 0, stream>>>(size, x.data(), w.r.data(), w.p.data(),
                                                                        w.q.data(), quadratic_b, operator_pap,
                                                                        w.partials.data(), w.state);
      LINALG_CUDA_CHECK_LAUNCH();
      preconditioner->apply(w.r, w.z);
      detail::cg_dot_beta<<<w.vector_blocks, kCgThreads, 0, stream>>>(size, w.r.data(), w.z.data(), w.partials.data(),
                                                                       w.state);
      LINALG_CUDA_CHECK_LAUNCH();
    }
    if (!operator_pap) {
      detail::cg_update_direction<<<w.vector_blocks, kCgThreads, 0, stream>>>(size, z, w.p.data(), w.state);
      LINALG_CUDA_CHECK_LAUNCH();
    }
  };
  const int batch = options_.execution.check_every;
  auto read_state = [&] {
    LINALG_CUDA_CHECK(cudaMemcpyAsync(w.host_state, w.state, sizeof(CgState), cudaMemcpyDeviceToHost, stream));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    return *w.host_state;
  };

  CgState state = read_state();
  summary.rhs_norm = std::sqrt(state.bb);
  summary.initial_residual_norm = std::sqrt(state.rr);

  // ---- capture the loop, or a batch of iterations, once per solve (pointers and operators may differ
  // between solves, so a graph is never reused blindly; an existing executable graph is updated in
  // place).
  bool use_graph = options_.execution.use_cuda_graph && state.status == detail::kCgRunning;
  if (use_graph) {
    cudaGraph_t graph = nullptr;
    try {
      if (options_.execution.use_device_loop && !std::getenv("LINALG_CUDA_CG_HOST_LOOP"))
        graph = capture_device_loop(stream, batch, enqueue_iteration, w.state);
      if (!graph) {  // no conditional nodes: a batch, and a read-back after each launch
        LINALG_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int k = 0; k < batch; ++k) enqueue_iteration();
        LINALG_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      }
    } catch (const CudaError&) {
      // Something in the operator cannot be captured: end the capture, forget it, launch directly.
      abandon_capture(stream, &graph);
      use_graph = false;
    } catch (...) {
      // Any other failure of a user operator: leave the stream usable, then report it.
      abandon_capture(stream, &graph);
      throw;
    }
    if (graph) {
      cudaGraphExecUpdateResultInfo info;
      if (!w.graph || cudaGraphExecUpdate(w.graph, graph, &info) != cudaSuccess) {
        cudaGetLastError();
        if (w.graph) cudaGraphExecDestroy(w.graph);
        w.graph = nullptr;
        const cudaError_t status = cudaGraphInstantiate(&w.graph, graph, 0);
        cudaGraphDestroy(graph);
        if (status != cudaSuccess) {  // no graph then: launch directly
          cudaGetLastError();
          w.graph = nullptr;
          use_graph = false;
        }
      } else {
        cudaGraphDestroy(graph);
      }
    }
  }

  while (state.status == detail::kCgRunning) {
    if (use_graph) {
      LINALG_CUDA_CHECK(cudaGraphLaunch(w.graph, stream));
    } else {
      for (int k = 0; k < batch; ++k) enqueue_iteration();
    }
    state = read_state();
  }

  detail::fill_summary(state, options_.stop, &summary);
  return finish();
}

SolverSummary cg(const LinearOperator& a, const DeviceVector<double>& b, DeviceVector<double>& x,
                 const CgOptions& options, const Preconditioner* preconditioner) {
  ConjugateGradient solver(options);
  return solver.solve(a, b, x, preconditioner);
}

}  // namespace linalg_cuda
