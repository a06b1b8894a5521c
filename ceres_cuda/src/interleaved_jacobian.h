#pragma once
// Warp-interleaved copies of the Jacobian for the two passes of the GPU's implicit Schur product
// (general_cuda_engine.cu). JacobianCells keeps each residual block's row of cells contiguous, which a
// thread per item reads 32 rows apart: every load of a warp touches 32 cache lines. In a tile of up to
// 32 items (a lane each), value j of lane l lies at base + j * 32 + l instead, so that the warp's j-th
// loads are one contiguous run (the continuous-element layout, a tile at a time, for rows of any shape).
//  - RowTiles: the residual blocks in e-block order, those without an e-block last, cut into tiles of
//    whole e-blocks (an e-block with more than 32 rows has a tile of its own, stored and read in rounds
//    of 32 rows): the point pass, u = F x per row, g = E'u summed per e-block, v = u - E V^-1 g.
//  - ColumnTiles: the f-blocks' column chunks (ColumnChunks, a cell per lane): the column pass, F'v.
// Both are plans on the host, built once per engine on the set-up's threads (their largest arrays left
// uninitialised until then: fresh_memory.h); the engine fills the copies after each Jacobian.
#include <memory>
#include <vector>

#include "jacobian_cells.h"
#include "schur_structure.h"

namespace ceres_cuda::detail {

// Values in residual r's row of cells (its cells lie contiguously in JacobianCells' values).
long row_values(const JacobianCells& cells, int r);

// What the point pass reads of a slot's row instead of JacobianCells' arrays, entry j of slot q at
// j * slots + q: its offset in residual vectors; its size, cells and e-cell (packed by pack_row_shape);
// per cell its block's tangent offset and size.
constexpr int kSlotRowOffset = 0, kSlotRowShape = 1, kSlotFirstCell = 2;
constexpr int kNoECell = 255;
inline int pack_row_shape(int rows, int cells, int e_index) { return rows | cells << 8 | e_index << 16; }

struct RowTiles {
  std::vector<int> slot_residual;  // residual blocks, e-block after e-block (residual order within one)
  std::vector<int> slot_e_block;   // per slot, its e-block, or -1
  std::unique_ptr<int[]> slot_row; // the slots' rows (see kSlotRowOffset), row_entries per slot
  int row_entries = 0;             // 2 + 2 x the most cells of a row
  std::vector<int> tile_start;     // tile t: slots [tile_start[t], tile_start[t + 1])
  std::vector<long> tile_base;     // tile t's values from tile_base[t], round after round of 32 rows
  std::vector<int> tile_width;     // values per lane in a round: the most of the tile's rows
  long num_values = 0;             // of the copy
  int max_rows = 0;                // the largest residual block size among the slots
  int max_e = 0;                   // the largest e-block tangent size

  int tiles() const { return static_cast<int>(tile_width.size()); }
  long slots() const { return static_cast<long>(slot_residual.size()); }

  // Offsets in residual and tangent vectors must fit an int (the engine checks).
  RowTiles(const SchurStructure& s, const JacobianCells& cells);
};

// The copy of chunks [0, chunks) of a ColumnChunks over the f-blocks: chunk k's cells (ColumnChunks'
// positions, a lane each) from base[k], width[k] values per lane.
struct ColumnTiles {
  std::vector<long> base;
  std::vector<int> width;
  // Per chunk and lane (k * 32 + lane): the cell's residual's offset in residual vectors and its size
  // (0 for a lane past the chunk's cells).
  std::unique_ptr<int[]> lane_row, lane_rows;
  long lanes = 0;
  long num_values = 0;

  ColumnTiles(const ColumnChunks& chunks, int num_chunks, const JacobianCells& cells);
};

}  // namespace ceres_cuda::detail
