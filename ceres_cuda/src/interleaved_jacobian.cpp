#include "interleaved_jacobian.h"

#include <algorithm>

#include "block_schur_math.h"

namespace ceres_cuda::detail {

long row_values(const JacobianCells& cells, int r) {
  const int first = cells.row_start[r], last = cells.row_start[r + 1];
  if (first == last) return 0;
  const JacobianCell& tail = cells.cells[last - 1];
  const long m = cells.row_offset[r + 1] - cells.row_offset[r];
  return tail.values + m * cells.tangent_size[tail.block] - cells.cells[first].values;
}

RowTiles::RowTiles(const SchurStructure& s, const JacobianCells& cells) {
  const int R = static_cast<int>(cells.row_start.size()) - 1;
  slot_residual.reserve(R);
  slot_e_block.reserve(R);
  tile_start.push_back(0);
  // Slots [tile_start.back(), slots) are the open tile's; segments of n slots are appended whole.
  const auto close_tile = [&] {
    const int first = tile_start.back(), last = static_cast<int>(slot_residual.size());
    if (last == first) return;
    long width = 0;
    for (int q = first; q < last; ++q) width = std::max(width, row_values(cells, slot_residual[q]));
    const long rounds = (last - first + kWarpLanes - 1) / kWarpLanes;
    tile_base.push_back(num_values);
    tile_width.push_back(static_cast<int>(width));
    num_values += rounds * kWarpLanes * width;
    tile_start.push_back(last);
  };
  const auto add_segment = [&](int n, auto&& append) {
    const int open = static_cast<int>(slot_residual.size()) - tile_start.back();
    if (open + n > kWarpLanes) close_tile();
    append();
    if (n > kWarpLanes) close_tile();  // a long e-block's tile of its own
  };
  // An e-block's rows are its column's cells, in residual order.
  for (int b = s.first_e_block(); b < s.num_variable_blocks(); ++b) {
    const int first = cells.column_start[b], last = cells.column_start[b + 1];
    if (first == last) continue;
    add_segment(last - first, [&] {
      for (int q = first; q < last; ++q) {
        slot_residual.push_back(cells.cells[cells.column_cells[q]].residual);
        slot_e_block.push_back(b);
      }
    });
    max_e = std::max(max_e, cells.tangent_size[b]);
  }
  for (int r = 0; r < R; ++r)
    if (cells.e_cell[r] < 0 && cells.row_start[r + 1] > cells.row_start[r])
      add_segment(1, [&] {
        slot_residual.push_back(r);
        slot_e_block.push_back(-1);
      });
  close_tile();
  int max_cells = 0;
  for (const int r : slot_residual) {
    max_rows = std::max(max_rows, static_cast<int>(cells.row_offset[r + 1] - cells.row_offset[r]));
    max_cells = std::max(max_cells, cells.row_start[r + 1] - cells.row_start[r]);
  }
  row_entries = kSlotFirstCell + 2 * max_cells;
  const long slots = static_cast<long>(slot_residual.size());
  slot_row.assign(row_entries * slots, 0);
  for (long q = 0; q < slots; ++q) {
    const int r = slot_residual[q], first = cells.row_start[r], n = cells.row_start[r + 1] - first;
    const int e_index = cells.e_cell[r] >= 0 ? cells.e_cell[r] - first : kNoECell;
    slot_row[kSlotRowOffset * slots + q] = static_cast<int>(cells.row_offset[r]);
    slot_row[kSlotRowShape * slots + q] =
        pack_row_shape(static_cast<int>(cells.row_offset[r + 1] - cells.row_offset[r]), n, e_index);
    for (int i = 0; i < n; ++i) {
      const int b = cells.cells[first + i].block;
      slot_row[(kSlotFirstCell + 2 * i) * slots + q] = static_cast<int>(cells.tangent_offset[b]);
      slot_row[(kSlotFirstCell + 2 * i + 1) * slots + q] = cells.tangent_size[b];
    }
  }
}

ColumnTiles::ColumnTiles(const ColumnChunks& chunks, int num_chunks, const JacobianCells& cells) {
  base.resize(num_chunks);
  width.resize(num_chunks);
  lane_row.assign(static_cast<long>(num_chunks) * kWarpLanes, 0);
  lane_rows.assign(static_cast<long>(num_chunks) * kWarpLanes, 0);
  for (int k = 0; k < num_chunks; ++k) {
    const int t = cells.tangent_size[chunks.block[k]];
    long w = 0;
    for (int q = chunks.position[k]; q < chunks.position[k + 1]; ++q) {
      const int r = cells.cells[cells.column_cells[q]].residual;
      const long lane = static_cast<long>(k) * kWarpLanes + (q - chunks.position[k]);
      lane_row[lane] = static_cast<int>(cells.row_offset[r]);
      lane_rows[lane] = static_cast<int>(cells.row_offset[r + 1] - cells.row_offset[r]);
      w = std::max(w, static_cast<long>(lane_rows[lane]) * t);
    }
    base[k] = num_values;
    width[k] = static_cast<int>(w);
    num_values += kWarpLanes * w;
  }
}

}  // namespace ceres_cuda::detail
