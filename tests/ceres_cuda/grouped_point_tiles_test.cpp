// The point pass's tiles and items (make_grouped_point_tiles) against what they promise: every slot at
// one position of its own tile, tiles of whole points in order with at most kTileItems items (or one
// point), items of at most kItemSlots positions of one camera, a tile's positions camera by camera in
// order of first use and slot order within a camera; on random structures (constant cameras, repeated
// pairs, points seen by many cameras, several segments of the bounds' search; on one thread and on all)
// and on the BAL files' own. Likewise the layout the GPU engine uploads (make_grouped_point_layout).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ba_index.h"
#include "ba_layout.h"
#include "ba_test_support.h"
#include "grouped_point_tiles.h"
#include "set_up_threads.h"

namespace {

using namespace ceres_cuda::detail;
using ba_test::ba_options;
using ba_test::bal_path;
using ba_test::make_problem;

int block_of(int slot_camera) { return slot_camera >= 0 ? slot_camera : ~slot_camera; }

void expect_valid(const std::vector<int>& point_start, const std::vector<int>& slot_camera, const GroupedPointTiles& t) {
  const int points = static_cast<int>(point_start.size()) - 1, slots = point_start.back();
  const int tiles = static_cast<int>(t.tile_start.size()) - 1;
  ASSERT_EQ(t.tile_item_start.size(), t.tile_start.size());
  ASSERT_EQ(t.tile_point_start.size(), t.tile_start.size());
  ASSERT_EQ(static_cast<int>(t.position_slot.size()), slots);
  ASSERT_EQ(t.item_start.size(), t.item_camera.size() + 1);
  EXPECT_EQ(t.tile_start.front(), 0);
  EXPECT_EQ(t.tile_start.back(), slots);
  EXPECT_EQ(t.tile_point_start.front(), 0);
  EXPECT_EQ(t.tile_point_start.back(), points);
  EXPECT_EQ(t.tile_item_start.front(), 0);
  EXPECT_EQ(t.tile_item_start.back(), static_cast<int>(t.item_camera.size()));
  EXPECT_EQ(t.item_start.back(), slots);
  std::vector<int> seen(slots, 0);
  for (int tile = 0; tile < tiles; ++tile) {
    const int p0 = t.tile_point_start[tile], p1 = t.tile_point_start[tile + 1];
    const int q0 = t.tile_start[tile], q1 = t.tile_start[tile + 1];
    const int i0 = t.tile_item_start[tile], i1 = t.tile_item_start[tile + 1];
    ASSERT_LT(p0, p1) << "tile " << tile;
    ASSERT_EQ(q0, point_start[p0]);
    ASSERT_EQ(q1, point_start[p1]);
    if (i1 - i0 > kTileItems) EXPECT_EQ(p1 - p0, 1) << "a tile of many items holds one point";
    // Positions: the tile's slots, grouped by camera in order of first use, slot order within one.
    std::vector<int> order;  // camera blocks by first use
    for (int q = q0; q < q1; ++q)
      if (std::find(order.begin(), order.end(), block_of(slot_camera[q])) == order.end()) order.push_back(block_of(slot_camera[q]));
    std::vector<int> want;
    for (const int block : order)
      for (int q = q0; q < q1; ++q)
        if (block_of(slot_camera[q]) == block) want.push_back(q);
    EXPECT_EQ(std::vector<int>(t.position_slot.begin() + q0, t.position_slot.begin() + q1), want) << "tile " << tile;
    for (int j = q0; j < q1; ++j) ++seen[t.position_slot[j]];
    ASSERT_EQ(t.item_start[i0], q0);
    ASSERT_EQ(t.item_start[i1], q1);
    for (int i = i0; i < i1; ++i) {
      const int a = t.item_start[i], b = t.item_start[i + 1];
      ASSERT_GE(b - a, 1);
      ASSERT_LE(b - a, kItemSlots);
      for (int j = a; j < b; ++j) EXPECT_EQ(slot_camera[t.position_slot[j]], t.item_camera[i]);
      // Items are as long as their camera allows: a shorter one ends its camera's run.
      if (b - a < kItemSlots && b < q1) EXPECT_NE(block_of(slot_camera[t.position_slot[b]]), block_of(t.item_camera[i]));
    }
  }
  for (int q = 0; q < slots; ++q) EXPECT_EQ(seen[q], 1) << "slot " << q;
  // Tiles are as large as the item limit allows: with the next tile's first point the items would be
  // too many, unless that point starts a segment of the bounds' search. No tile straddles one.
  for (int tile = 0; tile < tiles; ++tile)
    EXPECT_EQ(t.tile_point_start[tile] / kTileBoundSegment, (t.tile_point_start[tile + 1] - 1) / kTileBoundSegment)
        << "tile " << tile << " straddles a segment";
  for (int tile = 0; tile + 1 < tiles; ++tile) {
    if (t.tile_point_start[tile + 1] % kTileBoundSegment == 0) continue;
    std::map<int, int> count;
    int items = 0;
    for (int q = t.tile_start[tile]; q < point_start[t.tile_point_start[tile + 1] + 1]; ++q)
      if (count[block_of(slot_camera[q])]++ % kItemSlots == 0) ++items;
    EXPECT_GT(items, kTileItems) << "tile " << tile << " could have taken the next point";
  }
}

// The layout the GPU engine uploads against its tiles: per position its slot's place in its tile and
// its residual, per point its first slot's place in its tile (bytes: a wrapped place would differ
// here), 0 in a tile of more than kTileItems items, and those tiles listed.
void expect_valid_layout(const BaIndex& index, const GroupedPointLayout& layout) {
  const GroupedPointTiles& t = layout.tiles;
  const int tiles = static_cast<int>(t.tile_start.size()) - 1;
  ASSERT_EQ(layout.position_offset.size(), index.point_residuals.size());
  ASSERT_EQ(layout.position_residual.size(), index.point_residuals.size());
  ASSERT_EQ(layout.point_offset.size(), index.point_start.size() - 1);
  std::vector<int> many;
  for (int tile = 0; tile < tiles; ++tile) {
    const int q0 = t.tile_start[tile];
    const bool many_items = t.tile_item_start[tile + 1] - t.tile_item_start[tile] > kTileItems;
    if (many_items) many.push_back(tile);
    for (int j = q0; j < t.tile_start[tile + 1]; ++j) {
      EXPECT_EQ(layout.position_residual[j], index.point_residuals[t.position_slot[j]]) << "position " << j;
      EXPECT_EQ(static_cast<int>(layout.position_offset[j]), many_items ? 0 : t.position_slot[j] - q0) << "position " << j;
    }
    for (int p = t.tile_point_start[tile]; p < t.tile_point_start[tile + 1]; ++p)
      EXPECT_EQ(static_cast<int>(layout.point_offset[p]), many_items ? 0 : index.point_start[p] - q0) << "point " << p;
  }
  EXPECT_EQ(layout.many_item_tiles, many);
}

// A random structure: per point 1..max_views residuals, cameras near a moving centre (as a video's),
// some constant (negative), and with repeat_every > 0 some cameras seen twice by one point.
void random_case(std::mt19937& rng, int points, int cameras, int max_views, int repeat_every) {
  std::vector<int> point_start{0}, slot_camera;
  std::uniform_int_distribution<int> views(1, max_views), jitter(-6, 6);
  for (int p = 0; p < points; ++p) {
    const int centre = (p * cameras) / points;
    const int n = views(rng);
    for (int k = 0; k < n; ++k) {
      const int cam = std::clamp(centre + jitter(rng), 0, cameras - 1);
      slot_camera.push_back(cam % 7 == 3 ? ~cam : cam);
      if (repeat_every > 0 && k % repeat_every == 0) slot_camera.push_back(slot_camera.back());
    }
    point_start.push_back(static_cast<int>(slot_camera.size()));
  }
  const GroupedPointTiles t = make_grouped_point_tiles(point_start, slot_camera, cameras);
  expect_valid(point_start, slot_camera, t);
  // The same tiles when the fill runs on all threads (as the set-up of a large problem does).
  const long saved = set_up_blocks_per_thread();
  set_up_blocks_per_thread() = 0;
  const GroupedPointTiles parallel = make_grouped_point_tiles(point_start, slot_camera, cameras);
  set_up_blocks_per_thread() = saved;
  EXPECT_EQ(parallel.tile_start, t.tile_start);
  EXPECT_EQ(parallel.tile_item_start, t.tile_item_start);
  EXPECT_EQ(parallel.tile_point_start, t.tile_point_start);
  EXPECT_EQ(parallel.item_start, t.item_start);
  EXPECT_EQ(parallel.item_camera, t.item_camera);
  EXPECT_EQ(parallel.position_slot, t.position_slot);
  // The layout, from an index of the same structure whose residuals are numbered at random.
  BaIndex index;
  index.residuals = static_cast<int>(slot_camera.size());
  index.points = points;
  index.point_start = point_start;
  index.point_residuals.resize(slot_camera.size());
  std::iota(index.point_residuals.begin(), index.point_residuals.end(), 0);
  std::shuffle(index.point_residuals.begin(), index.point_residuals.end(), rng);
  index.camera_of.resize(slot_camera.size());
  index.camera_param.resize(slot_camera.size());
  for (std::size_t q = 0; q < slot_camera.size(); ++q) {
    const int i = index.point_residuals[q];
    index.camera_of[i] = slot_camera[q] >= 0 ? slot_camera[q] : -1;
    index.camera_param[i] = block_of(slot_camera[q]);
  }
  const GroupedPointLayout layout = make_grouped_point_layout(index, cameras);
  EXPECT_EQ(layout.tiles.tile_start, t.tile_start);
  EXPECT_EQ(layout.tiles.position_slot, t.position_slot);
  expect_valid_layout(index, layout);
}

TEST(GroupedPointTiles, RandomStructures) {
  std::mt19937 rng(7);
  random_case(rng, 1, 3, 2, 0);
  random_case(rng, 500, 40, 6, 0);
  random_case(rng, 500, 40, 6, 2);
  random_case(rng, 300, 200, 80, 0);  // points seen by more cameras than a tile's items
  random_case(rng, 2000, 5, 12, 3);   // few cameras: long items
  random_case(rng, 2 * kTileBoundSegment + 999, 3000, 6, 0);  // three segments of the bounds' search
}

TEST(GroupedPointTiles, EmptyProblem) {
  const GroupedPointTiles t = make_grouped_point_tiles({0}, {}, 0);
  EXPECT_EQ(t.tile_start, std::vector<int>{0});
  EXPECT_EQ(t.item_start, std::vector<int>{0});
  EXPECT_TRUE(t.item_camera.empty());
}

// On the BAL files' structures, and how many residuals an item takes on average (the reads of a
// camera's record the grouping saves).
TEST(GroupedPointTiles, BalStructures) {
  for (const char* name : {"problem-49-7776-pre.txt", "problem-16-22106-pre.txt.bz2"}) {
    if (!std::filesystem::exists(bal_path(name))) GTEST_SKIP() << bal_path(name) << " not found (set CUDA_SOLVERS_DATA)";
    ceres_cuda::BALProblem bal = ceres_cuda::BALProblem::read(bal_path(name));
    auto problem = make_problem(bal, false);
    BaLayout layout;
    ASSERT_EQ(analyze_problem(ba_options(), problem.get(), &layout), "");
    const BaIndex index = make_index(layout);
    std::vector<int> slot_camera;
    for (const int i : index.point_residuals) slot_camera.push_back(index.camera_of[i] >= 0 ? index.camera_of[i] : ~index.camera_param[i]);
    const GroupedPointTiles t = make_grouped_point_tiles(index.point_start, slot_camera, static_cast<int>(layout.cameras.size()));
    expect_valid(index.point_start, slot_camera, t);
    expect_valid_layout(index, make_grouped_point_layout(index, static_cast<int>(layout.cameras.size())));
    std::printf("%s: %zu residuals, %zu items (%.2f residuals an item), %zu tiles\n", name, slot_camera.size(),
                t.item_camera.size(), static_cast<double>(slot_camera.size()) / t.item_camera.size(), t.tile_start.size() - 1);
  }
}

}  // namespace
