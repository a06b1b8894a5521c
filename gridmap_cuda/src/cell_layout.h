#pragma once
// Where a cell's log-odds live, written once for the CPU reference and the GPU kernels (LINALG_HD).
// A dense map stores every cell of its extent row by row. A tiled map stores 64 x 64-cell tiles in a
// pool, in the order they were allocated, and finds a tile's place in the pool through an
// open-addressing table keyed by the tile's coordinates; cells may then have any sign.
#include <cstdint>

#include "bresenham_line.h"
#include "linalg_cuda/internal/host_device.h"

namespace gridmap_cuda::detail {

constexpr int kTileBits = 6;
constexpr int kTileSide = 1 << kTileBits;
constexpr int kTileCells = kTileSide * kTileSide;
constexpr unsigned long long kEmptyTileKey = ~0ull;
// A tiled map holds the cells within +-kTiledCellBound: the tiles' span then stays below 2^31 cells
// (an int). Lasers lie within +-2^29 cells and reach less than 2^29 more (beam_batch.h), so only
// absurd beams pass the bound, and their cells beyond it are skipped as a dense grid's edge is.
constexpr int kTiledCellBound = (1 << 30) - 2 * kTileSide;

// The cells a sensor model may update: x0..x1 by y0..y1, inclusive.
struct CellBounds {
  int x0, y0, x1, y1;
  LINALG_HD bool contains(int x, int y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

// The tile holding a cell (floor division: >> is an arithmetic shift for negative ints on both sides).
LINALG_HD int tile_coordinate(int cell) { return cell >> kTileBits; }

// Tile coordinates lie within +-2^24; the bias makes both halves non-negative, so no tile is empty.
LINALG_HD unsigned long long tile_key(int tx, int ty) {
  constexpr long long kBias = 1ll << 30;
  return (static_cast<unsigned long long>(tx + kBias) << 32) | static_cast<unsigned long long>(ty + kBias);
}
LINALG_HD int tile_key_x(unsigned long long key) {
  return static_cast<int>(static_cast<long long>(key >> 32) - (1ll << 30));
}
LINALG_HD int tile_key_y(unsigned long long key) {
  return static_cast<int>(static_cast<long long>(key & 0xffffffffull) - (1ll << 30));
}

// A cell's place inside its tile, row by row.
LINALG_HD int cell_in_tile(int x, int y) { return ((y & (kTileSide - 1)) << kTileBits) | (x & (kTileSide - 1)); }

// Fibonacci hashing into a table of 2^bits entries.
LINALG_HD unsigned tile_hash(unsigned long long key, int bits) {
  return static_cast<unsigned>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

// The tile table as the kernels read it: keys (kEmptyTileKey where free) and the pool slot of each.
struct TileTableView {
  const unsigned long long* keys = nullptr;
  const int* slots = nullptr;
  int bits = 0;

  // The pool slot of the tile, or -1 when it has none.
  LINALG_HD int find(unsigned long long key) const {
    const unsigned mask = (1u << bits) - 1u;
    for (unsigned h = tile_hash(key, bits);; h = (h + 1) & mask) {
      const unsigned long long k = keys[h];
      if (k == key) return slots[h];
      if (k == kEmptyTileKey) return -1;
    }
  }
};

// tile(tx, ty) for every tile that cells 0 .. count - 1 of the line cross, in order along it, a tile
// once per run. The major coordinate crosses a tile in runs of up to 64 steps, and the minor one is
// monotone, so a run's tiles are those between its first and last cells' along the minor axis.
template <typename Tile>
LINALG_HD void for_each_tile_of_line(const BresenhamLine& line, int count, const Tile& tile) {
  for (int j = 0; j < count;) {
    const int major = line.major_start + line.increment * j;
    const int in_run = line.increment > 0 ? kTileSide - (major & (kTileSide - 1)) : (major & (kTileSide - 1)) + 1;
    const int last = count - 1 < j + in_run - 1 ? count - 1 : j + in_run - 1;
    int x0, y0, x1, y1;
    line.cell(j, &x0, &y0);
    line.cell(last, &x1, &y1);
    const int major_tile = tile_coordinate(line.steep ? y0 : x0);
    const int from = tile_coordinate(line.steep ? x0 : y0), to = tile_coordinate(line.steep ? x1 : y1);
    const int step = to >= from ? 1 : -1;
    for (int minor_tile = from;; minor_tile += step) {
      if (line.steep) tile(minor_tile, major_tile);
      else tile(major_tile, minor_tile);
      if (minor_tile == to) break;
    }
    j = last + 1;
  }
}

// Row-major cells of a dense map.
struct DenseCells {
  int width;
  LINALG_HD std::int64_t index(int x, int y) { return static_cast<std::int64_t>(y) * width + x; }
};

// Cells of a tiled map whose tiles are all allocated. Each thread keeps its own copy: it remembers the
// last tile it looked up, since a beam's cells stay in a tile for up to 64 steps.
struct TiledCells {
  TileTableView table;
  unsigned long long last_key = kEmptyTileKey;
  std::int64_t last_base = 0;

  LINALG_HD std::int64_t index(int x, int y) {
    const unsigned long long key = tile_key(tile_coordinate(x), tile_coordinate(y));
    if (key != last_key) {
      last_key = key;
      last_base = static_cast<std::int64_t>(table.find(key)) * kTileCells;
    }
    return last_base + cell_in_tile(x, y);
  }
};

}  // namespace gridmap_cuda::detail
