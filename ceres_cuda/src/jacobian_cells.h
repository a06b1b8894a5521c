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

  explicit JacobianCells(const SchurStructure& s) {
    const int R = static_cast<int>(s.residuals.size()), B = s.num_variable_blocks();
    row_start.assign(R + 1, 0);
    e_cell.assign(R, -1);
    row_offset.assign(R + 1, 0);
    column_start.assign(B + 1, 0);
    for (int r = 0; r < R; ++r) {
      const SchurResidual& residual = s.residuals[r];
      const int* params = s.params_of(residual);
      row_offset[r] = num_rows;
      for (int k = 0; k < residual.num_params; ++k) {
        const int b = params[k];
        if (!s.is_variable(b)) continue;
        if (b == residual.e_block) e_cell[r] = static_cast<int>(cells.size());
        cells.push_back({r, b, k, num_values});
        num_values += static_cast<long>(residual.size) * s.blocks[b].tangent_size;
        ++column_start[b + 1];
      }
      num_rows += residual.size;
      row_start[r + 1] = static_cast<int>(cells.size());
    }
    row_offset[R] = num_rows;
    for (int b = 0; b < B; ++b) column_start[b + 1] += column_start[b];
    column_cells.resize(cells.size());
    std::vector<int> next(column_start.begin(), column_start.end() - 1);
    for (int c = 0; c < static_cast<int>(cells.size()); ++c) column_cells[next[cells[c].block]++] = c;
    e_sorted_cells = column_cells;
    auto e_block_of = [&](int c) { return e_cell[cells[c].residual] < 0 ? -1 : cells[e_cell[cells[c].residual]].block; };
    for (int b = 0; b < s.num_f_blocks; ++b)
      std::stable_sort(e_sorted_cells.begin() + column_start[b], e_sorted_cells.begin() + column_start[b + 1],
                       [&](int x, int y) { return e_block_of(x) < e_block_of(y); });
    for (int b = 0; b < B; ++b) {
      tangent_size.push_back(s.blocks[b].tangent_size);
      tangent_offset.push_back(s.blocks[b].tangent_offset);
    }
  }
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

  int size() const { return static_cast<int>(block.size()); }

  ColumnChunks(const JacobianCells& cells, int first_block, int last_block, int size, bool whole_e_groups)
      : first(first_block) {
    auto e_block_at = [&](int q) {
      const int r = cells.cells[cells.e_sorted_cells[q]].residual;
      return cells.e_cell[r] < 0 ? -1 : cells.cells[cells.e_cell[r]].block;
    };
    block_start.push_back(0);
    for (int b = first_block; b < last_block; ++b) {
      const int end = cells.column_start[b + 1];
      for (int q = cells.column_start[b]; q < end;) {
        int next = std::min(q + size, end);
        if (whole_e_groups)
          while (next < end && e_block_at(next) >= 0 && e_block_at(next) == e_block_at(next - 1)) ++next;
        block.push_back(b);
        position.push_back(q);
        q = next;
      }
      block_start.push_back(static_cast<int>(block.size()));
    }
    position.push_back(cells.column_start[last_block]);
  }
};

}  // namespace ceres_cuda::detail

