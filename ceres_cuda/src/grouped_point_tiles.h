#pragma once
// The fast path's point pass (snavely_schur_kernels.cuh) walks the residuals in point order, a warp
// to a tile of whole points, and in a tile a lane to an "item": a run of up to kItemSlots of the
// tile's residuals that share a camera. The lane reads the camera's record (176 bytes) once for the
// item's residuals rather than once per residual: the per-lane camera loads, 16 bytes at a time,
// were what bound the pass (the L1's data pipe; the points are numbered by first use in the
// camera-major order, so that a tile's points are seen by a few cameras, several times each).
// Within a tile the residuals are reordered camera by camera (positions); the per-point sums then
// read the residuals' terms back in point order, a fixed order: the same bits every run.
// Built once per engine on the host, from the structure alone.
#include <vector>

#include "ba_index.h"

namespace ceres_cuda::detail {

constexpr int kItemSlots = 4;   // residuals a lane takes with one read of their camera
constexpr int kTileItems = 32;  // items of a tile: one per lane; a point with more is a tile of its own
// Tiles never straddle a multiple of this many points: the bounds are found segment by segment on all
// threads, and are the same whatever the number of threads (and so are the sums' orders).
constexpr int kTileBoundSegment = 1 << 16;

struct GroupedPointTiles {
  // Per tile, and one past the last: its first position (the first slot of its first point: tiles
  // hold whole points, so a tile's positions are its slots, reordered), first item, first point.
  // A tile with more than kTileItems items is one point.
  std::vector<int> tile_start, tile_item_start, tile_point_start;
  // Per item, and one past the last: its first position; per item its camera (as slot_camera has it).
  std::vector<int> item_start, item_camera;
  // Per position: its slot (the point-order index of its residual).
  std::vector<int> position_slot;
};

// point_start: the points' CSR starts over the slots; slot_camera: per slot its residual's camera,
// variable (>= 0: its index) or constant (~ its parameter block's index; variable cameras' indices
// are their parameter blocks'); cameras: how many parameter blocks of cameras there are.
// The tiles' bounds are found greedily (a tile takes points while their items fit, and ends at the
// latest at a multiple of kTileBoundSegment points), a segment to a thread, and their positions and
// items filled, on all threads of the set-up (set_up_threads.h).
GroupedPointTiles make_grouped_point_tiles(const std::vector<int>& point_start, const std::vector<int>& slot_camera,
                                           int cameras);

// What the GPU engine uploads for its point pass: the tiles of the index's variable points; per
// position its slot's place in its tile and its residual; per point its first slot's place in its
// tile (places: 0 .. kTileItems * kItemSlots - 1, a byte each, so that a tile's copies in shared
// memory are small; 0 in a tile of more than kTileItems items, which does not use them); the tiles of
// more than kTileItems items, listed.
struct GroupedPointLayout {
  GroupedPointTiles tiles;
  std::vector<unsigned char> position_offset, point_offset;
  std::vector<int> position_residual, many_item_tiles;
};

// cameras: the layout's camera parameter blocks, variable and constant.
GroupedPointLayout make_grouped_point_layout(const BaIndex& index, int cameras);

}  // namespace ceres_cuda::detail
