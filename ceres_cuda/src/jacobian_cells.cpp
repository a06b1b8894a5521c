#include "jacobian_cells.h"

#include <vector>

#include "counting_sort.h"
#include "phase_log.h"

namespace ceres_cuda::detail {
namespace {

// Counts at [1 ..] (v[0] == 0) into starts: v[k] becomes the sum of the counts before position k.
template <class T>
void accumulate_counts(std::vector<T>* v) {
  for (std::size_t k = 1; k < v->size(); ++k) (*v)[k] += (*v)[k - 1];
}

}  // namespace

// Built on all threads (tens of millions of cells at real sizes): counts per residual, their prefix
// sums, the cells filled residual by residual, then the columns by stable counting sorts.
JacobianCells::JacobianCells(const SchurStructure& s) {
  PhaseLog phase("cell layout");
  const int R = static_cast<int>(s.residuals.size()), B = s.num_variable_blocks();
  row_start.assign(R + 1, 0);
  row_offset.assign(R + 1, 0);
  e_cell.assign(R, -1);
  std::vector<long> value_start(R + 1, 0);
#pragma omp parallel for schedule(static)
  for (int r = 0; r < R; ++r) {
    const SchurResidual& residual = s.residuals[r];
    const int* params = s.params_of(residual);
    int count = 0;
    long values = 0;
    for (int k = 0; k < residual.num_params; ++k) {
      if (!s.is_variable(params[k])) continue;
      ++count;
      values += static_cast<long>(residual.size) * s.blocks[params[k]].tangent_size;
    }
    row_start[r + 1] = count;
    row_offset[r + 1] = residual.size;
    value_start[r + 1] = values;
  }
  accumulate_counts(&row_start);
  accumulate_counts(&row_offset);
  accumulate_counts(&value_start);
  num_rows = row_offset[R];
  num_values = value_start[R];

  cells.resize(row_start[R]);
#pragma omp parallel for schedule(static)
  for (int r = 0; r < R; ++r) {
    const SchurResidual& residual = s.residuals[r];
    const int* params = s.params_of(residual);
    int c = row_start[r];
    long values = value_start[r];
    for (int k = 0; k < residual.num_params; ++k) {
      const int b = params[k];
      if (!s.is_variable(b)) continue;
      if (b == residual.e_block) e_cell[r] = c;
      cells[c++] = {r, b, k, values};
      values += static_cast<long>(residual.size) * s.blocks[b].tangent_size;
    }
  }

  phase("cells");

  // Columns: the cells by block, in residual order.
  const long C = static_cast<long>(cells.size());
  column_cells.resize(C);
  const std::vector<long> starts = parallel_counting_sort(
      C, B, [&](long c) { return cells[c].block; }, [&](long c, long position) { column_cells[position] = static_cast<int>(c); });
  column_start.assign(starts.begin(), starts.end());

  phase("columns");

  // The f-blocks' columns stably sorted by e-block (the residuals without one first). Where residuals
  // were added point after point, every column is in that order already: one pass tells. Otherwise
  // (residuals image after image, as COLMAP adds them; a block shared by every image has a column of
  // millions) two stable counting sorts on all threads: the residuals by e-block, then their f-cells
  // in that order by f-block.
  e_sorted_cells = column_cells;  // the e-blocks' part stays in residual order (unused)
  auto e_rank = [&](long r) { return e_cell[r] < 0 ? 0 : cells[e_cell[r]].block - s.first_e_block() + 1; };
  const int F = s.num_f_blocks;
  int unsorted = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : unsorted)
  for (int b = 0; b < F; ++b)
    for (int q = column_start[b] + 1; q < column_start[b + 1] && !unsorted; ++q)
      unsorted += e_rank(cells[column_cells[q]].residual) < e_rank(cells[column_cells[q - 1]].residual);
  if (unsorted > 0) {
    std::vector<int> by_e(R);
    parallel_counting_sort(R, s.num_e_blocks + 1, e_rank, [&](long r, long position) { by_e[position] = static_cast<int>(r); });
    std::vector<int> cell_start(R + 1, 0);  // in by_e's order
#pragma omp parallel for schedule(static)
    for (int k = 0; k < R; ++k) cell_start[k + 1] = row_start[by_e[k] + 1] - row_start[by_e[k]];
    accumulate_counts(&cell_start);
    std::vector<int> cells_by_e(C);
#pragma omp parallel for schedule(static)
    for (int k = 0; k < R; ++k)
      for (int c = row_start[by_e[k]], q = cell_start[k]; c < row_start[by_e[k] + 1]; ++c, ++q) cells_by_e[q] = c;
    parallel_counting_sort(
        C, F,
        [&](long q) {
          const int b = cells[cells_by_e[q]].block;
          return b < F ? b : -1;
        },
        [&](long q, long position) { e_sorted_cells[position] = cells_by_e[q]; });
  }
  phase("f-block columns by e-block");

  tangent_size.resize(B);
  tangent_offset.resize(B);
  for (int b = 0; b < B; ++b) {
    tangent_size[b] = s.blocks[b].tangent_size;
    tangent_offset[b] = s.blocks[b].tangent_offset;
  }
}

}  // namespace ceres_cuda::detail
