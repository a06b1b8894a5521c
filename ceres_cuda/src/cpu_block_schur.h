#pragma once
// The Schur complement of a block-sparse Jacobian J = [F E] (JacobianCells' layout) on CPU threads,
// for the general structure: any number of f-blocks per residual block, at most one e-block, rows
// without an e-block. With D the LM diagonal, V_p = E_p'E_p + D_p^2 for each e-block p and
//   S = F'F + D_f^2 - F'E V^-1 E'F,
// the reduced system S y_f = F'(f - E V^-1 E'f), and y_e = V^-1 E'(f - F y_f). S is applied
// implicitly (Ceres' ImplicitSchurComplement), its block diagonal is the SCHUR_JACOBI preconditioner
// (F'F's, the JACOBI one), and it is formed explicitly for the exact solvers. Every loop writes
// per-block or per-residual results and sums in residual order: the same bits on any thread count.
#include <functional>
#include <vector>

#include "block_schur_math.h"
#include "jacobian_cells.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

class CpuBlockSchur {
 public:
  CpuBlockSchur(const SchurStructure& structure, const JacobianCells& cells, int threads);

  // The Jacobian's values (JacobianCells::num_values, kept by the caller; they may change between
  // calls, the pointer may not).
  void attach(const double* jacobian) { view_.jacobian = jacobian; }
  // Takes D^2 (a tangent vector, f-blocks first, kept by the caller until the next call) and inverts
  // the e-blocks' V_p. Returns how many needed regularisation.
  int factor_e_blocks(const double* d2);

  // The reduced right-hand side F'(f - E V^-1 E'f), f-part of a tangent vector.
  void reduced_rhs(const double* f, double* rhs) const;
  // out = S x (f-part vectors).
  void apply(const double* x, double* out) const;
  // The block diagonal of S (schur) or of F'F + D_f^2 (not schur), each block inverted; blocks of
  // f-block b at diagonal_offset(b), t x t row-major. Returns how many needed regularisation.
  int inverted_block_diagonal(bool schur, std::vector<double>* blocks) const;
  long diagonal_offset(int f_block) const { return diagonal_offset_[f_block]; }
  // Adds S's entries (lower and upper triangles) one block at a time: add(row, col, t_row x t_col
  // row-major values) for f-blocks row and col.
  void explicit_schur(const std::function<void(int, int, const double*)>& add) const;
  // y_e = V^-1 E'(f - F y_f), e-part of a tangent vector.
  void back_substitute(const double* f, const double* y_f, double* y_e) const;

  // Squared column norms of the Jacobian, a whole tangent vector.
  void column_norms(double* out) const;
  // -(J s)'(f + J s / 2) for a whole tangent vector s, summed per residual block in order.
  double model_cost_change(const double* step, const double* f) const;

  // (J x)_r for every residual block: rows[row_offset[r] ...]; x a whole tangent vector, its f-part
  // only when f_only.
  void jacobian_product(const double* x, bool f_only, double* rows) const;
  // out = J' rows restricted to the blocks [first, last) (tangent vector positions).
  void transpose_product(const double* rows, int first_block, int last_block, double* out) const;

 private:
  // rows_r -= E_r w_p for every residual block with an e-block (w an e-part vector).
  void subtract_e_terms(const double* w, double* rows) const;
  // J' rows (norms: the squared column norms) for blocks [first, last), chunk by chunk.
  void column_sums(const double* rows, bool norms, int first_block, int last_block, double* out) const;

  const SchurStructure& s_;
  const JacobianCells& cells_;
  int threads_;
  BlockSparseView view_;
  const double* d2_ = nullptr;
  std::vector<double> v_inverse_;  // per e-block, kEBlockValues values
  std::vector<long> diagonal_offset_;
  ColumnChunks product_chunks_, diagonal_chunks_;  // every variable block's column; the f-blocks' by e-block
  mutable std::vector<double> product_partials_, diagonal_partials_;
  mutable std::vector<double> rows_, e_values_;  // scratch of apply and friends
};

}  // namespace ceres_cuda::detail
