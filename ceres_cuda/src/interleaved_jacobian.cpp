#include "interleaved_jacobian.h"

#include <algorithm>

#include "block_schur_math.h"
#include "fresh_memory.h"
#include "phase_log.h"
#include "set_up_threads.h"

namespace ceres_cuda::detail {

long row_values(const JacobianCells& cells, int r) {
  const int first = cells.row_start[r], last = cells.row_start[r + 1];
  if (first == last) return 0;
  const JacobianCell& tail = cells.cells[last - 1];
  const long m = cells.row_offset[r + 1] - cells.row_offset[r];
  return tail.values + m * cells.tangent_size[tail.block] - cells.cells[first].values;
}

// Built on all threads but for the tiles' cut, a pass over the e-blocks' sizes: millions of slots,
// each a few scattered reads of JacobianCells (a small problem's on few: SetUpThreads).
RowTiles::RowTiles(const SchurStructure& s, const JacobianCells& cells) {
  PhaseLog phase("Schur product's row tiles");
  const int R = static_cast<int>(cells.row_start.size()) - 1;
  const SetUpThreads threads(R);
  const int first_e = s.first_e_block(), last_e = s.num_variable_blocks();
  // Slots: the e-blocks' rows, which are their columns' cells in residual order, then the rows
  // without an e-block.
  const int e_slots = cells.column_start[last_e] - cells.column_start[first_e];
  std::vector<int> without_e;
  for (int r = 0; r < R; ++r)
    if (cells.e_cell[r] < 0 && cells.row_start[r + 1] > cells.row_start[r]) without_e.push_back(r);
  const long slots = e_slots + static_cast<long>(without_e.size());
  slot_residual.resize(slots);
  slot_e_block.resize(slots);
#pragma omp parallel for schedule(dynamic, 1024)
  for (int b = first_e; b < last_e; ++b)
    for (int q = cells.column_start[b]; q < cells.column_start[b + 1]; ++q) {
      const int slot = q - cells.column_start[first_e];
      slot_residual[slot] = cells.cells[cells.column_cells[q]].residual;
      slot_e_block[slot] = b;
    }
  for (std::size_t k = 0; k < without_e.size(); ++k) {
    slot_residual[e_slots + k] = without_e[k];
    slot_e_block[e_slots + k] = -1;
  }

  // Tiles: whole segments (an e-block's rows, or one row without an e-block) of at most 32 slots
  // together; a longer e-block alone.
  tile_start.push_back(0);
  int open = 0;  // slots in the tile being filled
  const auto add_segment = [&](int n) {
    const int end = tile_start.back() + open;
    if (open > 0 && open + n > kWarpLanes) {
      tile_start.push_back(end);
      open = 0;
    }
    open += n;
    if (n > kWarpLanes) {
      tile_start.push_back(end + n);
      open = 0;
    }
  };
  for (int b = first_e; b < last_e; ++b)
    if (const int n = cells.column_start[b + 1] - cells.column_start[b]; n > 0) add_segment(n);
  for (std::size_t k = 0; k < without_e.size(); ++k) add_segment(1);
  if (open > 0) tile_start.push_back(tile_start.back() + open);
  phase("slots and tiles");

  const int T = static_cast<int>(tile_start.size()) - 1;
  tile_width.resize(T);
  tile_base.resize(T);
  int most_rows = 0, most_cells = 0, most_e = 0;
#pragma omp parallel for schedule(static) reduction(max : most_rows, most_cells, most_e)
  for (int t = 0; t < T; ++t) {
    long width = 0;
    for (int q = tile_start[t]; q < tile_start[t + 1]; ++q) {
      const int r = slot_residual[q];
      width = std::max(width, row_values(cells, r));
      most_rows = std::max(most_rows, static_cast<int>(cells.row_offset[r + 1] - cells.row_offset[r]));
      most_cells = std::max(most_cells, cells.row_start[r + 1] - cells.row_start[r]);
      if (slot_e_block[q] >= 0) most_e = std::max(most_e, cells.tangent_size[slot_e_block[q]]);
    }
    tile_width[t] = static_cast<int>(width);
  }
  max_rows = most_rows;
  max_e = most_e;
  for (int t = 0; t < T; ++t) {
    tile_base[t] = num_values;
    const long rounds = (tile_start[t + 1] - tile_start[t] + kWarpLanes - 1) / kWarpLanes;
    num_values += rounds * kWarpLanes * tile_width[t];
  }

  row_entries = kSlotFirstCell + 2 * most_cells;
  slot_row = uninitialised_array<int>(static_cast<std::size_t>(row_entries) * slots);
#pragma omp parallel for schedule(static)
  for (long q = 0; q < slots; ++q) {
    const int r = slot_residual[q], first = cells.row_start[r], n = cells.row_start[r + 1] - first;
    const int e_index = cells.e_cell[r] >= 0 ? cells.e_cell[r] - first : kNoECell;
    slot_row[kSlotRowOffset * slots + q] = static_cast<int>(cells.row_offset[r]);
    slot_row[kSlotRowShape * slots + q] =
        pack_row_shape(static_cast<int>(cells.row_offset[r + 1] - cells.row_offset[r]), n, e_index);
    for (int i = 0; i < most_cells; ++i) {
      const int b = i < n ? cells.cells[first + i].block : -1;
      slot_row[(kSlotFirstCell + 2 * i) * slots + q] = b >= 0 ? static_cast<int>(cells.tangent_offset[b]) : 0;
      slot_row[(kSlotFirstCell + 2 * i + 1) * slots + q] = b >= 0 ? cells.tangent_size[b] : 0;
    }
  }
  phase("widths and the slots' rows");
}

ColumnTiles::ColumnTiles(const ColumnChunks& chunks, int num_chunks, const JacobianCells& cells) {
  const SetUpThreads threads(static_cast<long>(cells.row_start.size()) - 1);
  base.resize(num_chunks);
  width.resize(num_chunks);
  lanes = static_cast<long>(num_chunks) * kWarpLanes;
  lane_row = uninitialised_array<int>(lanes);
  lane_rows = uninitialised_array<int>(lanes);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < num_chunks; ++k) {
    const int t = cells.tangent_size[chunks.block[k]];
    long w = 0;
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      const int q = chunks.position[k] + lane;
      const long l = static_cast<long>(k) * kWarpLanes + lane;
      if (q >= chunks.position[k + 1]) {
        lane_row[l] = lane_rows[l] = 0;
        continue;
      }
      const int r = cells.cells[cells.column_cells[q]].residual;
      lane_row[l] = static_cast<int>(cells.row_offset[r]);
      lane_rows[l] = static_cast<int>(cells.row_offset[r + 1] - cells.row_offset[r]);
      w = std::max(w, static_cast<long>(lane_rows[l]) * t);
    }
    width[k] = static_cast<int>(w);
  }
  for (int k = 0; k < num_chunks; ++k) {
    base[k] = num_values;
    num_values += static_cast<long>(kWarpLanes) * width[k];
  }
}

}  // namespace ceres_cuda::detail
