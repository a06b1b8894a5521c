#pragma once
// Where the explicit reduced matrix S = F'F + D_f^2 - sum_p W_p' V_p^-1 W_p gets its terms, for the
// GPU's exact solvers. F'F's blocks off the diagonal: per pair of f-blocks that share residuals, the
// pairs of their cells (FtfPairs). The e-blocks' terms: per e-block p its "slots", the distinct
// f-blocks its residuals touch, each with room for W_pj = sum of F_rj'E_r (t_j x e_p); per f-block j the
// slots of every e-block that touches it. The pairs of slots (w_pair_plan.h), or a warp per f-block
// over its slots, then form S's lower triangle: no two threads write the same entry, and every sum
// runs in a fixed order, against syrk over dense columns that are mostly zero.
#include <algorithm>
#include <vector>

#include "jacobian_cells.h"

namespace ceres_cuda::detail {

// F'F's blocks below the diagonal: per pair (j, k), k < j, of f-blocks that share residuals, the cells
// (c of j, d of k) of each shared residual, in residual order, cut into chunks of at most kChunk
// entries. A thread sums a chunk's F_rj'F_rk, then a warp sums a pair's chunks in warp order and writes
// its block of S: every pair in parallel, and one shared by every residual (two blocks shared by all
// images) in parallel too, where a thread per block row of S waited on thousands of terms in turn.
struct FtfPairs {
  static constexpr int kChunk = 16;
  std::vector<int> pair_j, pair_k;       // per pair: its row and column block
  std::vector<int> entry_j, entry_k;     // per entry: the two cells
  std::vector<int> chunk_pair;           // per chunk: its pair
  std::vector<int> chunk_position;       // chunk q: entries [chunk_position[q], chunk_position[q + 1])
  std::vector<int> pair_chunk_start;     // pair i: chunks [pair_chunk_start[i], pair_chunk_start[i + 1])

  FtfPairs(const SchurStructure& s, const JacobianCells& cells);
};

// ReducedMatrixPlan's arrays on the device: the slots, and the block rows.
struct SlotsView {
  const int* slot_start;
  const int* slot_block;
  const long* slot_values;
  const int* slot_e_block;
  int num_e_blocks;
};
struct RowsView {
  const int* row_start;
  const int* row_slots;
};

struct ReducedMatrixPlan {
  std::vector<int> slot_start;      // e-block p (from 0): slots [slot_start[p], slot_start[p + 1])
  std::vector<int> slot_block;      // per slot: its f-block
  std::vector<long> slot_values;    // per slot: offset of its W (t_j x e_p values)
  std::vector<int> slot_e_block;    // per slot: its e-block (a block index)
  std::vector<int> row_start;       // f-block j: its slots at row_slots[row_start[j] ...]
  std::vector<int> row_slots;       // in e-block order
  long num_values = 0;

  // Built on all threads: an e-block's slots per thread, counted, then placed; the rows by a counting
  // sort of the slots by block (a million e-blocks at Venice scale).
  ReducedMatrixPlan(const SchurStructure& s, const JacobianCells& cells);
};

}  // namespace ceres_cuda::detail
