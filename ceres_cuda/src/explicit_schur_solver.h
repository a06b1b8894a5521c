#pragma once
// DENSE_SCHUR and SPARSE_SCHUR on the GPU: the reduced matrix S = F'F + D_f^2 - sum_p W_p V_p^-1 W_p'
// formed densely on the device and factored by cuSOLVER's Cholesky (potrf, potrs). F'F's diagonal
// blocks come from the engine's column chunks (the preconditioner's, without the Schur term), its
// other blocks by pairs of f-blocks (FtfPairs). The e-blocks' terms: where S is small enough that dense
// products cost less, as -G G' by cuBLAS' syrk over dense columns G, a chunk of e-blocks at a time;
// otherwise by pairs of f-blocks over W slots (WPairPlan), or, where that plan would not fit in device
// memory, by block rows of W slots (ReducedMatrixPlan). The plans are made on the first solve. Only
// the general GPU engine includes this.
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <memory>
#include <vector>

#include "ba_engine.h"
#include "block_schur_math.h"
#include "jacobian_cells.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "schur_structure.h"
#include "w_pair_plan.h"

namespace ceres_cuda::detail {

class ExplicitSchurSolver {
 public:
  // Runs on the thread's linalg_cuda stream, whose cuBLAS and cuSOLVER handles are bound to it.
  ExplicitSchurSolver(const SchurStructure& structure, const JacobianCells& cells, ExplicitSchurMethod method);
  ExplicitSchurSolver(const ExplicitSchurSolver&) = delete;
  ExplicitSchurSolver& operator=(const ExplicitSchurSolver&) = delete;

  // Solves S y = rhs for the Jacobian in view (scaled), the f-part of the LM damping d2, the e-blocks'
  // inverses, and F'F's diagonal blocks as column-chunk sums (diagonal_partials over chunks). Failure
  // with cuSOLVER's message when S is not positive definite.
  StepResult solve(const BlockSparseView& view, const ChunkView& diagonal_chunks, const double* diagonal_partials,
                   const double* d2, const double* v_inverse, const double* rhs, double* y);

 private:
  void make_pairs();
  void make_slots();
  ExplicitSchurMethod choose_method();
  void subtract_e_terms_by_pairs(const BlockSparseView& view, const double* v_inverse);
  void subtract_e_terms_by_rows(const BlockSparseView& view, const double* v_inverse);
  void subtract_e_terms_by_syrk(const BlockSparseView& view, const double* v_inverse);

  const SchurStructure& s_;
  const JacobianCells& cells_;
  ExplicitSchurMethod method_;
  cudaStream_t stream_;
  long n_;
  int g_width_ = 1;  // G's columns per e-block (the syrk/gemm way): the largest e-block's tangent size
  bool cubes_ = false;  // every block a slot pairs has 3 tangent values: G's kernel specialised for them
  bool f_blocks_of_3_ = false;  // every f-block has 3: F'F's pair kernel specialised for them
  std::vector<linalg_cuda::DeviceBuffer> pair_storage_, slot_storage_;
  bool pairs_made_ = false, slots_made_ = false;
  int num_pair_chunks_ = 0, num_pairs_ = 0, pair_stride_ = 1;
  ExplicitSchurMethod chosen_ = ExplicitSchurMethod::Auto;  // the e-blocks' terms' method, once chosen
  SlotsView slots_{};
  RowsView rows_{};
  std::vector<int> slot_start_;  // on the host, for the pair plan
  std::unique_ptr<WPairPlan> w_pairs_;
  linalg_cuda::DeviceVector<double> dense_, work_, g_, pair_partials_, w_slots_, w_pair_partials_;
  linalg_cuda::DeviceBuffer info_;
};

}  // namespace ceres_cuda::detail
