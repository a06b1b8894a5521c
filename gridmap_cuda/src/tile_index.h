#pragma once
// The tiles of a tiled map (cell_layout.h) on the host: their keys in pool order, and the
// open-addressing table the kernels search, built here in a deterministic order (tiles are added in
// the order the caller gives) so that the CUDA backend's copy of it is the same table. Plus the
// copies between tiles and the dense boxes users read.
#include <cstdint>
#include <vector>

#include "cell_layout.h"
#include "mapper_backend.h"

namespace gridmap_cuda::detail {

class TileIndex {
 public:
  TileIndex() { clear(); }

  // No tiles; the table keeps its size.
  void clear();
  int tiles() const { return static_cast<int>(keys_.size()); }
  // The slot of a tile, or -1.
  int find(unsigned long long key) const { return view().find(key); }
  // Adds a tile that is not there yet, in the next slot; returns the table position it took. The
  // table doubles when it would be more than half full (rehashed in slot order).
  unsigned add(unsigned long long key);
  // The table's bits once it holds `tiles` tiles (it doubles whenever it would be more than half full).
  int bits_for(std::size_t tiles) const {
    int bits = bits_;
    while (2 * tiles > (std::size_t(1) << bits)) ++bits;
    return bits;
  }

  TileTableView view() const { return {table_keys_.data(), table_slots_.data(), bits_}; }
  const std::vector<unsigned long long>& table_keys() const { return table_keys_; }
  const std::vector<int>& table_slots() const { return table_slots_; }
  int bits() const { return bits_; }
  // The key of each slot.
  const std::vector<unsigned long long>& keys() const { return keys_; }

  // The cells the tiles span (empty without tiles).
  const CellBox& box() const { return box_; }
  // The slots of the tiles that overlap `box`, in slot order.
  std::vector<int> overlapping(const CellBox& box) const;

 private:
  std::vector<unsigned long long> keys_;
  CellBox box_;
  std::vector<unsigned long long> table_keys_;
  std::vector<int> table_slots_;
  int bits_ = 12;
};

// Writes the bytes of the tiles `slots` (tile_major: kTileCells bytes per listed tile, rows of the
// tile from its smallest y) into `out`, the box's bytes (rows from its smallest y, or from its largest
// if top_down), and `unknown` into every byte no listed tile covers.
void scatter_tile_bytes(const TileIndex& tiles, const std::vector<int>& slots, const std::uint8_t* tile_major,
                        const CellBox& box, bool top_down, std::uint8_t unknown, std::uint8_t* out);

// The tiles' log-odds and known flags (pools indexed slot * kTileCells + cell_in_tile) copied into a
// grid whose cell (0, 0) is `box`'s lower-left cell; cells of no tile stay 0 (unknown).
void scatter_tile_cells(const TileIndex& tiles, const std::int64_t* evidence, const std::uint8_t* known,
                        const CellBox& box, OccupancyGrid* grid);

}  // namespace gridmap_cuda::detail
