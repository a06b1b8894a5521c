#include "jacobian_cells.h"

#include <algorithm>
#include <vector>

#include "counting_sort.h"
#include "phase_log.h"
#include "set_up_threads.h"

namespace ceres_cuda::detail {
namespace {

// Counts at [1 ..] (v[0] == 0) into starts: v[k] becomes the sum of the counts before position k.
template <class T>
void accumulate_counts(std::vector<T>* v) {
  for (std::size_t k = 1; k < v->size(); ++k) (*v)[k] += (*v)[k - 1];
}

}  // namespace

// Built on the set-up's threads (tens of millions of cells at real sizes): counts per residual, their prefix
// sums, the cells filled residual by residual, then the columns by stable counting sorts.
JacobianCells::JacobianCells(const SchurStructure& s) {
  PhaseLog phase("cell layout");
  const int R = static_cast<int>(s.residuals.size()), B = s.num_variable_blocks();
  const SetUpThreads threads(R);
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

// In this file rather than the header: the GPU engine's translation unit is compiled without OpenMP.
ColumnChunks::ColumnChunks(const JacobianCells& cells, int first_block, int last_block, int size, bool whole_e_groups)
    : first(first_block) {
  const SetUpThreads threads(static_cast<long>(cells.row_start.size()) - 1);
  auto e_block_at = [&](int q) {
    const int r = cells.cells[cells.e_sorted_cells[q]].residual;
    return cells.e_cell[r] < 0 ? -1 : cells.cells[cells.e_cell[r]].block;
  };
  // Calls visit(q) at the first position of each of block b's chunks, in order.
  auto for_each_chunk = [&](int b, auto&& visit) {
    const int end = cells.column_start[b + 1];
    for (int q = cells.column_start[b]; q < end;) {
      int next = std::min(q + size, end);
      if (whole_e_groups)
        while (next < end && e_block_at(next) >= 0 && e_block_at(next) == e_block_at(next - 1)) ++next;
      visit(q);
      q = next;
    }
  };
  const int n = last_block - first_block;
  block_start.assign(n + 1, 0);
#pragma omp parallel for schedule(dynamic, 64)
  for (int i = 0; i < n; ++i) for_each_chunk(first_block + i, [&](int) { ++block_start[i + 1]; });
  for (int i = 0; i < n; ++i) block_start[i + 1] += block_start[i];
  block.resize(block_start[n]);
  position.resize(block_start[n] + 1);
#pragma omp parallel for schedule(dynamic, 64)
  for (int i = 0; i < n; ++i) {
    int k = block_start[i];
    for_each_chunk(first_block + i, [&](int q) {
      block[k] = first_block + i;
      position[k++] = q;
    });
  }
  position[block_start[n]] = cells.column_start[last_block];
  for (int b = first_block; b < last_block; ++b) max_tangent = std::max(max_tangent, cells.tangent_size[b]);
}

ChunksBySize::ChunksBySize(const ColumnChunks& chunks, const std::vector<int>& tangent_size) {
  const auto size_of = [&](int k) { return tangent_size[chunks.block[k]]; };
  for (int k = 0; k < chunks.size(); ++k)
    if (std::find(tangent.begin(), tangent.end(), size_of(k)) == tangent.end()) tangent.push_back(size_of(k));
  std::sort(tangent.begin(), tangent.end());
  chunk.reserve(chunks.size());
  group_start.push_back(0);
  for (const int t : tangent) {
    for (int k = 0; k < chunks.size(); ++k)
      if (size_of(k) == t) chunk.push_back(k);
    group_start.push_back(static_cast<int>(chunk.size()));
  }
}

}  // namespace ceres_cuda::detail
