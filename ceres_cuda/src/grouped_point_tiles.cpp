#include "grouped_point_tiles.h"

#include <omp.h>

#include <algorithm>
#include <cstddef>

#include "set_up_threads.h"

namespace ceres_cuda::detail {
namespace {

int camera_block(int slot_camera) { return slot_camera >= 0 ? slot_camera : ~slot_camera; }

// Per camera block its residuals in a tile (count), the blocks in order of their first residual there
// (touched): what both the tiles' bounds and their fill need.
class TileCounts {
 public:
  TileCounts(const std::vector<int>& point_start, const std::vector<int>& slot_camera, int cameras)
      : point_start_(point_start), slot_camera_(slot_camera), count_(cameras, 0), cursor_(cameras, 0) {}

  // Adds point p's residuals to the tile; the items that adds.
  int add(int p) {
    int added = 0;
    for (int q = point_start_[p]; q < point_start_[p + 1]; ++q) {
      const int block = camera_block(slot_camera_[q]);
      if (count_[block] == 0) touched_.push_back(block);
      if (count_[block] % kItemSlots == 0) ++added;
      ++count_[block];
    }
    return added;
  }

  // Takes point p's residuals back out (p was the last added).
  void remove(int p) {
    for (int q = point_start_[p + 1] - 1; q >= point_start_[p]; --q) {
      const int block = camera_block(slot_camera_[q]);
      if (--count_[block] == 0) touched_.pop_back();  // blocks first used by p are the last touched
    }
  }

  void clear() {
    for (const int block : touched_) count_[block] = 0;
    touched_.clear();
  }

  // Fills tile `tile` (its points added): its positions camera block by camera block (in order of
  // first use in the tile, slots in order within a block) and its items, at the starts out has.
  void fill(int tile, GroupedPointTiles* out) {
    const int begin = out->tile_start[tile], end = out->tile_start[tile + 1];
    int at = begin;
    for (const int block : touched_) {
      cursor_[block] = at;
      at += count_[block];
    }
    for (int q = begin; q < end; ++q) out->position_slot[cursor_[camera_block(slot_camera_[q])]++] = q;
    int item = out->tile_item_start[tile];
    at = begin;
    for (const int block : touched_) {
      const int block_end = at + count_[block];
      for (int first = at; first < block_end; first += kItemSlots, ++item) {
        out->item_start[item] = first;
        out->item_camera[item] = slot_camera_[out->position_slot[first]];
      }
      at = block_end;
    }
    clear();
  }

 private:
  const std::vector<int>& point_start_;
  const std::vector<int>& slot_camera_;
  std::vector<int> count_, cursor_, touched_;
};

// The tiles' bounds over points [first, last), greedily: a tile takes points while their items fit (a
// point of more items than a tile's alone). Appends each tile's end (one past its last point) and its
// item count.
void find_tile_bounds(int first, int last, TileCounts& counts, std::vector<int>* ends, std::vector<int>* items_of) {
  int open = first, items = 0;  // the open tile's first point and items
  for (int p = first; p < last; ++p) {
    const int added = counts.add(p);
    if (items + added <= kTileItems || p == open) {
      items += added;
      continue;
    }
    counts.remove(p);  // p starts the next tile
    counts.clear();
    ends->push_back(p);
    items_of->push_back(items);
    open = p;
    items = counts.add(p);
  }
  counts.clear();
  if (last > open) {
    ends->push_back(last);
    items_of->push_back(items);
  }
}

}  // namespace

GroupedPointTiles make_grouped_point_tiles(const std::vector<int>& point_start, const std::vector<int>& slot_camera,
                                           int cameras) {
  GroupedPointTiles out;
  const int points = static_cast<int>(point_start.size()) - 1;
  SetUpThreads threads(static_cast<long>(slot_camera.size()));
  // The tiles' bounds, segment by segment on all threads, then joined in order.
  const int segments = (points + kTileBoundSegment - 1) / kTileBoundSegment;
  std::vector<std::vector<int>> ends(segments), items_of(segments);
#pragma omp parallel
  {
    TileCounts counts(point_start, slot_camera, cameras);
#pragma omp for schedule(dynamic, 1)
    for (int segment = 0; segment < segments; ++segment) {
      const int first = segment * kTileBoundSegment;
      find_tile_bounds(first, std::min(points, first + kTileBoundSegment), counts, &ends[segment], &items_of[segment]);
    }
  }
  out.tile_start = {0};
  out.tile_item_start = {0};
  out.tile_point_start = {0};
  for (int segment = 0; segment < segments; ++segment)
    for (std::size_t k = 0; k < ends[segment].size(); ++k) {
      out.tile_start.push_back(point_start[ends[segment][k]]);
      out.tile_item_start.push_back(out.tile_item_start.back() + items_of[segment][k]);
      out.tile_point_start.push_back(ends[segment][k]);
    }
  // Their positions and items, tile by tile on all threads.
  const int tiles = static_cast<int>(out.tile_start.size()) - 1;
  out.position_slot.resize(slot_camera.size());
  out.item_start.resize(static_cast<std::size_t>(out.tile_item_start.back()) + 1);
  out.item_camera.resize(out.tile_item_start.back());
  out.item_start.back() = point_start.empty() ? 0 : point_start.back();
#pragma omp parallel
  {
    TileCounts counts(point_start, slot_camera, cameras);
#pragma omp for schedule(dynamic, 256)
    for (int tile = 0; tile < tiles; ++tile) {
      for (int p = out.tile_point_start[tile]; p < out.tile_point_start[tile + 1]; ++p) counts.add(p);
      counts.fill(tile, &out);
    }
  }
  return out;
}

GroupedPointLayout make_grouped_point_layout(const BaIndex& index, int cameras) {
  GroupedPointLayout layout;
  const std::size_t slots = index.point_residuals.size();
  SetUpThreads threads(static_cast<long>(slots));
  std::vector<int> slot_camera(slots);
#pragma omp parallel for schedule(static)
  for (std::size_t q = 0; q < slots; ++q) {
    const int i = index.point_residuals[q];
    slot_camera[q] = index.camera_of[i] >= 0 ? index.camera_of[i] : ~index.camera_param[i];
  }
  layout.tiles = make_grouped_point_tiles(index.point_start, slot_camera, cameras);
  const GroupedPointTiles& t = layout.tiles;
  const int tiles = static_cast<int>(t.tile_start.size()) - 1;
  layout.position_offset.resize(slots);
  layout.position_residual.resize(slots);
  layout.point_offset.resize(t.tile_point_start.empty() ? 0 : t.tile_point_start.back());
  static_assert(kTileItems * kItemSlots <= 256, "a place in a tile fits a byte");
#pragma omp parallel for schedule(dynamic, 256)
  for (int tile = 0; tile < tiles; ++tile) {
    const bool many_items = t.tile_item_start[tile + 1] - t.tile_item_start[tile] > kTileItems;
    for (int j = t.tile_start[tile]; j < t.tile_start[tile + 1]; ++j) {
      layout.position_offset[j] = static_cast<unsigned char>(many_items ? 0 : t.position_slot[j] - t.tile_start[tile]);
      layout.position_residual[j] = index.point_residuals[t.position_slot[j]];
    }
    for (int p = t.tile_point_start[tile]; p < t.tile_point_start[tile + 1]; ++p)
      layout.point_offset[p] = static_cast<unsigned char>(many_items ? 0 : index.point_start[p] - t.tile_start[tile]);
  }
  for (int tile = 0; tile < tiles; ++tile)
    if (t.tile_item_start[tile + 1] - t.tile_item_start[tile] > kTileItems) layout.many_item_tiles.push_back(tile);
  return layout;
}

}  // namespace ceres_cuda::detail
