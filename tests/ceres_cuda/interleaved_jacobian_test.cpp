// The plans of the Schur product's interleaved copies (interleaved_jacobian.h) against what they
// promise: every residual block with cells at one slot, e-blocks whole and in residual order within a
// tile of at most 32 rows (or alone), rows without an e-block last; every tile's values within its own
// range of the copy, wide enough for its rows; the slots' and the column chunks' lanes describing their
// rows as JacobianCells does.
// On the general test problems: long and short e-blocks, pose priors, shared intrinsics, mixed shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "block_schur_math.h"
#include "general_problems.h"
#include "interleaved_jacobian.h"
#include "schur_structure.h"

namespace {

using namespace ceres_cuda::detail;
using general_test::Shape;

SchurStructure analyzed(general_test::GeneralProblem& g) {
  SchurStructure s;
  EXPECT_EQ(analyze_schur_structure(general_test::options_for(g, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 5, true),
                                    g.problem.get(), &s),
            "");
  return s;
}

void expect_valid(const SchurStructure& s, const JacobianCells& cells, const RowTiles& t) {
  const int R = static_cast<int>(s.residuals.size());
  ASSERT_EQ(t.slot_residual.size(), t.slot_e_block.size());
  ASSERT_EQ(t.tile_start.size(), t.tile_base.size() + 1);
  ASSERT_EQ(t.tile_width.size(), t.tile_base.size());
  EXPECT_EQ(t.tile_start.front(), 0);
  EXPECT_EQ(t.tile_start.back(), static_cast<int>(t.slot_residual.size()));
  std::vector<int> seen(R, 0);
  for (const int r : t.slot_residual) ++seen[r];
  for (int r = 0; r < R; ++r) EXPECT_EQ(seen[r], cells.row_start[r + 1] > cells.row_start[r] ? 1 : 0) << r;

  int last_e = -1;
  bool without_e = false;
  long next_base = 0;
  for (int tile = 0; tile < t.tiles(); ++tile) {
    const int q0 = t.tile_start[tile], q1 = t.tile_start[tile + 1];
    ASSERT_LT(q0, q1);
    if (q1 - q0 > kWarpLanes) {  // one e-block alone
      EXPECT_GE(t.slot_e_block[q0], 0);
      for (int q = q0; q < q1; ++q) EXPECT_EQ(t.slot_e_block[q], t.slot_e_block[q0]);
    }
    EXPECT_EQ(t.tile_base[tile], next_base);
    const long rounds = (q1 - q0 + kWarpLanes - 1) / kWarpLanes;
    next_base += rounds * kWarpLanes * t.tile_width[tile];
    for (int q = q0; q < q1; ++q) {
      const int r = t.slot_residual[q], p = t.slot_e_block[q];
      EXPECT_LE(row_values(cells, r), t.tile_width[tile]);
      const long slots = static_cast<long>(t.slot_residual.size());
      const int first = cells.row_start[r], n = cells.row_start[r + 1] - first;
      const int e_index = cells.e_cell[r] >= 0 ? cells.e_cell[r] - first : kNoECell;
      EXPECT_EQ(t.slot_row[kSlotRowOffset * slots + q], cells.row_offset[r]);
      EXPECT_EQ(t.slot_row[kSlotRowShape * slots + q],
                pack_row_shape(static_cast<int>(cells.row_offset[r + 1] - cells.row_offset[r]), n, e_index));
      ASSERT_LE(kSlotFirstCell + 2 * n, t.row_entries);
      for (int i = 0; i < n; ++i) {
        const int b = cells.cells[first + i].block;
        EXPECT_EQ(t.slot_row[(kSlotFirstCell + 2 * i) * slots + q], cells.tangent_offset[b]);
        EXPECT_EQ(t.slot_row[(kSlotFirstCell + 2 * i + 1) * slots + q], cells.tangent_size[b]);
      }
      EXPECT_LE(cells.row_offset[r + 1] - cells.row_offset[r], t.max_rows);
      if (p < 0) {
        EXPECT_LT(cells.e_cell[r], 0);
        without_e = true;
        continue;
      }
      EXPECT_FALSE(without_e) << "rows without an e-block come last";
      ASSERT_GE(cells.e_cell[r], 0);
      EXPECT_EQ(cells.cells[cells.e_cell[r]].block, p);
      EXPECT_LE(s.blocks[p].tangent_size, t.max_e);
      if (q > q0 && t.slot_e_block[q - 1] == p) EXPECT_LT(t.slot_residual[q - 1], r);
      if (p != last_e) {
        EXPECT_GT(p, last_e) << "e-blocks in order";
        EXPECT_TRUE(q == q0 || t.slot_e_block[q - 1] != p);
        // An e-block starting inside a tile ends in it.
        int end = q;
        while (end < static_cast<int>(t.slot_e_block.size()) && t.slot_e_block[end] == p) ++end;
        EXPECT_TRUE(end <= q1 || (q == q0 && end == q1)) << "e-block " << p << " split between tiles";
        last_e = p;
      }
    }
  }
  EXPECT_EQ(t.num_values, next_base);
}

void expect_valid(const JacobianCells& cells, const ColumnChunks& chunks, int f_chunks, const ColumnTiles& t) {
  ASSERT_EQ(static_cast<int>(t.base.size()), f_chunks);
  long next_base = 0;
  for (int k = 0; k < f_chunks; ++k) {
    EXPECT_EQ(t.base[k], next_base);
    next_base += static_cast<long>(kWarpLanes) * t.width[k];
    const int tangent = cells.tangent_size[chunks.block[k]];
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      const int q = chunks.position[k] + lane;
      const long l = static_cast<long>(k) * kWarpLanes + lane;
      if (q >= chunks.position[k + 1]) {
        EXPECT_EQ(t.lane_rows[l], 0);
        continue;
      }
      const int r = cells.cells[cells.column_cells[q]].residual;
      EXPECT_EQ(t.lane_row[l], cells.row_offset[r]);
      EXPECT_EQ(t.lane_rows[l], cells.row_offset[r + 1] - cells.row_offset[r]);
      EXPECT_LE(static_cast<long>(t.lane_rows[l]) * tangent, t.width[k]);
    }
  }
  EXPECT_EQ(t.num_values, next_base);
}

TEST(InterleavedJacobian, TilesHoldEveryRowOnceAndWholeEBlocks) {
  std::vector<std::pair<const char*, Shape>> shapes;
  shapes.emplace_back("split pose", Shape{});
  Shape priors;
  priors.prior = general_test::Prior::Pose;
  priors.shared_intrinsics = true;
  shapes.emplace_back("pose priors, shared intrinsics", priors);
  Shape mixed;
  mixed.mixed = true;
  mixed.constant_point_stride = 5;
  shapes.emplace_back("mixed residual sizes, constant points", mixed);
  Shape inverse_depth;
  inverse_depth.rotation = general_test::Rotation::Pose7;
  inverse_depth.point = general_test::PointKind::InverseDepth;
  shapes.emplace_back("7-value poses, inverse depth", inverse_depth);
  // Points seen by 2 to 5 images, and by 20 to 70 (e-blocks of more rows than a warp has lanes).
  const ceres_cuda::BALProblem short_views = general_test::random_scene(12, 200, 5);
  const ceres_cuda::BALProblem long_views = general_test::random_scene(70, 40, 6, 70, 20);
  for (const ceres_cuda::BALProblem* scene : {&short_views, &long_views})
    for (auto& [name, shape] : shapes) {
      SCOPED_TRACE(std::string(name) + (scene == &long_views ? ", long e-blocks" : ""));
      general_test::GeneralProblem g = general_test::build(*scene, shape);
      const SchurStructure s = analyzed(g);
      const JacobianCells cells(s);
      const RowTiles rows(s, cells);
      expect_valid(s, cells, rows);
      EXPECT_EQ(rows.max_e, shape.point == general_test::PointKind::InverseDepth ? 1 : 3);
      const ColumnChunks chunks(cells, 0, s.num_variable_blocks(), kProductChunkCells, false);
      const int f_chunks = chunks.block_start[s.num_f_blocks];
      expect_valid(cells, chunks, f_chunks, ColumnTiles(chunks, f_chunks, cells));
    }
}

}  // namespace
