#pragma once
// Where the explicit reduced matrix S = F'F + D_f^2 - sum_p W_p' V_p^-1 W_p gets its terms, for the
// GPU's exact solvers. F'F's blocks off the diagonal: per pair of f-blocks that share residuals, the
// pairs of their cells (FtfPairs). The e-blocks' terms: per e-block p its "slots", the distinct f-blocks its residuals touch, each with
// room for W_pj = sum of F_rj'E_r (t_j x e_p); per f-block j the slots of every e-block that touches
// it. A thread per f-block then forms S's block row j (its lower triangle: the columns of f-blocks
// up to j) from its own cells and slots: no two threads write the same entry, and every sum runs in a
// fixed order, against syrk over dense columns that are mostly zero.
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
  static constexpr int kChunk = 64;
  std::vector<int> pair_j, pair_k;       // per pair: its row and column block
  std::vector<int> entry_j, entry_k;     // per entry: the two cells
  std::vector<int> chunk_pair;           // per chunk: its pair
  std::vector<int> chunk_position;       // chunk q: entries [chunk_position[q], chunk_position[q + 1])
  std::vector<int> pair_chunk_start;     // pair i: chunks [pair_chunk_start[i], pair_chunk_start[i + 1])

  FtfPairs(const SchurStructure& s, const JacobianCells& cells);
};

struct ReducedMatrixPlan {
  std::vector<int> slot_start;      // e-block p (from 0): slots [slot_start[p], slot_start[p + 1])
  std::vector<int> slot_block;      // per slot: its f-block
  std::vector<long> slot_values;    // per slot: offset of its W (t_j x e_p values)
  std::vector<int> slot_e_block;    // per slot: its e-block (a block index)
  std::vector<int> row_start;       // f-block j: its slots at row_slots[row_start[j] ...]
  std::vector<int> row_slots;       // in e-block order
  long num_values = 0;

  ReducedMatrixPlan(const SchurStructure& s, const JacobianCells& cells) {
    slot_start.push_back(0);
    std::vector<int> local;  // the current e-block's f-blocks, in first-use order
    for (int p = s.first_e_block(); p < s.num_variable_blocks(); ++p) {
      local.clear();
      for (int q = cells.column_start[p]; q < cells.column_start[p + 1]; ++q) {
        const int r = cells.cells[cells.column_cells[q]].residual;
        for (int c = cells.row_start[r]; c < cells.row_start[r + 1]; ++c) {
          const int j = cells.cells[c].block;
          if (j != p && std::find(local.begin(), local.end(), j) == local.end()) local.push_back(j);
        }
      }
      for (const int j : local) {
        slot_block.push_back(j);
        slot_values.push_back(num_values);
        slot_e_block.push_back(p);
        num_values += static_cast<long>(s.blocks[j].tangent_size) * s.blocks[p].tangent_size;
      }
      slot_start.push_back(static_cast<int>(slot_block.size()));
    }
    row_start.assign(s.num_f_blocks + 1, 0);
    for (const int j : slot_block) ++row_start[j + 1];
    for (int j = 0; j < s.num_f_blocks; ++j) row_start[j + 1] += row_start[j];
    row_slots.resize(slot_block.size());
    std::vector<int> next(row_start.begin(), row_start.end() - 1);
    for (int slot = 0; slot < static_cast<int>(slot_block.size()); ++slot) row_slots[next[slot_block[slot]]++] = slot;
  }
};

}  // namespace ceres_cuda::detail
