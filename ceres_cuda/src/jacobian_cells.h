#pragma once
// The Jacobian of a SchurStructure in its natural block layout: one cell per (residual block,
// variable parameter block), m x t row-major (m residuals, t the block's tangent size), residual
// after residual and, within one, in the cost function's parameter order. The residuals' values lie
// the same way, m per residual. Both views the Schur algebra needs are here: the cells of a residual
// (its row of blocks) and the cells of a block (its column), each in residual order.
#include <algorithm>
#include <vector>

#include "schur_structure.h"

namespace ceres_cuda::detail {

struct JacobianCell {
  int residual;  // index into SchurStructure::residuals
  int block;     // variable block (index into SchurStructure::blocks)
  int slot;      // the cost function's parameter index
  long values;   // offset of the cell's m x t values

  // Left uninitialised: JacobianCells fills its tens of millions of cells on all threads, whose first
  // touches of the fresh memory then fault in parallel (fresh_memory.h).
  JacobianCell() {}
  JacobianCell(int residual_, int block_, int slot_, long values_)
      : residual(residual_), block(block_), slot(slot_), values(values_) {}
};

struct JacobianCells {
  std::vector<JacobianCell> cells;
  std::vector<int> row_start;      // residual r's cells: [row_start[r], row_start[r + 1])
  std::vector<int> e_cell;         // residual r's e-block cell, -1 when it has none
  std::vector<long> row_offset;    // residual r's first value in residual vectors
  std::vector<int> column_start;   // variable block b's cells: column_cells[column_start[b] ...]
  std::vector<int> column_cells;
  std::vector<int> e_sorted_cells; // per f-block, its cells stably sorted by their row's e-block
  std::vector<int> tangent_size;   // per variable block
  std::vector<long> tangent_offset;
  long num_values = 0;             // of the whole Jacobian
  long num_rows = 0;               // residual values of all residual blocks

  explicit JacobianCells(const SchurStructure& s);
};

// The columns of blocks [first, last) cut into runs of at most `size` consecutive cells (of
// column_cells, or of e_sorted_cells with `whole_e_groups`, where a run also never splits the cells of
// one e-block): the sums over a long column (intrinsics shared by every image have a cell per
// observation) are taken a run at a time, each run in parallel, then the runs of a block in order.
struct ColumnChunks {
  std::vector<int> block_start;  // block first + i: chunks [block_start[i], block_start[i + 1])
  std::vector<int> block;        // per chunk: its block
  std::vector<int> position;     // chunk k: positions [position[k], position[k + 1]) of the column arrays
  int first = 0;
  int max_tangent = 0;           // the largest tangent size of the blocks

  int size() const { return static_cast<int>(block.size()); }

  // Built on all threads: the chunks of each block counted, then placed (millions of cells).
  ColumnChunks(const JacobianCells& cells, int first_block, int last_block, int size, bool whole_e_groups);
};

// A ColumnChunks' chunks grouped by their block's tangent size (in chunk order within a group), so
// that a kernel can give a thread to each pair of a chunk and an entry of its block: in a group every
// chunk has the same number of entries.
struct ChunksBySize {
  std::vector<int> chunk;        // group after group
  std::vector<int> group_start;  // group g: chunk[group_start[g] .. group_start[g + 1])
  std::vector<int> tangent;      // group g's tangent size

  int groups() const { return static_cast<int>(tangent.size()); }

  ChunksBySize() = default;
  ChunksBySize(const ColumnChunks& chunks, const std::vector<int>& tangent_size);
};

}  // namespace ceres_cuda::detail

