#include "jacobian_cells.h"

#include <algorithm>
#include <vector>

namespace ceres_cuda::detail {

JacobianCells::JacobianCells(const SchurStructure& s) {
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
  // The f-blocks' sorts on all threads: thousands of columns at real sizes.
#pragma omp parallel for schedule(dynamic)
  for (int b = 0; b < s.num_f_blocks; ++b)
    std::stable_sort(e_sorted_cells.begin() + column_start[b], e_sorted_cells.begin() + column_start[b + 1],
                     [&](int x, int y) { return e_block_of(x) < e_block_of(y); });
  for (int b = 0; b < B; ++b) {
    tangent_size.push_back(s.blocks[b].tangent_size);
    tangent_offset.push_back(s.blocks[b].tangent_offset);
  }
}

}  // namespace ceres_cuda::detail
