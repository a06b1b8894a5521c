#include "grouped_point_tiles.h"

#include <cstddef>

namespace ceres_cuda::detail {
namespace {

int camera_block(int slot_camera) { return slot_camera >= 0 ? slot_camera : ~slot_camera; }

// The tiles in the making: per camera block its residuals in the open tile (count), the blocks in
// order of their first residual there (touched), and the items the tile would have.
class TileBuilder {
 public:
  TileBuilder(const std::vector<int>& point_start, const std::vector<int>& slot_camera, int cameras,
              GroupedPointTiles* out)
      : point_start_(point_start), slot_camera_(slot_camera), count_(cameras, 0), cursor_(cameras, 0), out_(out) {}

  // Adds point p's residuals to the open tile; the items that adds.
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

  // Closes the open tile, points [first, last): its positions camera block by camera block (in
  // order of first use in the tile, slots in order within a block) and its items.
  void close(int first, int last) {
    const int begin = point_start_[first], end = point_start_[last];
    int at = begin;
    for (const int block : touched_) {
      cursor_[block] = at;
      at += count_[block];
    }
    for (int q = begin; q < end; ++q) out_->position_slot[cursor_[camera_block(slot_camera_[q])]++] = q;
    at = begin;
    for (const int block : touched_) {
      const int block_end = at + count_[block];
      for (int item = at; item < block_end; item += kItemSlots) {
        out_->item_start.push_back(item);
        out_->item_camera.push_back(slot_camera_[out_->position_slot[item]]);
      }
      at = block_end;
      count_[block] = 0;
    }
    touched_.clear();
    out_->tile_start.push_back(end);
    out_->tile_item_start.push_back(static_cast<int>(out_->item_start.size()));
    out_->tile_point_start.push_back(last);
  }

 private:
  const std::vector<int>& point_start_;
  const std::vector<int>& slot_camera_;
  std::vector<int> count_, cursor_, touched_;
  GroupedPointTiles* out_;
};

}  // namespace

GroupedPointTiles make_grouped_point_tiles(const std::vector<int>& point_start, const std::vector<int>& slot_camera,
                                           int cameras) {
  GroupedPointTiles out;
  const int points = static_cast<int>(point_start.size()) - 1;
  out.position_slot.resize(slot_camera.size());
  // At most a tile a point and an item a slot (reserved: growing these took a third of the time at
  // Final-13682 scale).
  for (std::vector<int>* v : {&out.tile_start, &out.tile_item_start, &out.tile_point_start}) v->reserve(points + 1);
  for (std::vector<int>* v : {&out.item_start, &out.item_camera}) v->reserve(slot_camera.size() + 1);
  out.tile_start = {0};
  out.tile_item_start = {0};
  out.tile_point_start = {0};
  TileBuilder tiles(point_start, slot_camera, cameras, &out);
  int first = 0, items = 0;  // the open tile's first point and items
  for (int p = 0; p < points; ++p) {
    const int added = tiles.add(p);
    if (items + added <= kTileItems || p == first) {
      items += added;
      continue;
    }
    tiles.remove(p);  // p starts the next tile
    tiles.close(first, p);
    first = p;
    items = tiles.add(p);
  }
  if (points > first) tiles.close(first, points);
  out.item_start.push_back(point_start.empty() ? 0 : point_start.back());
  return out;
}

}  // namespace ceres_cuda::detail
