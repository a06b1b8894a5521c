#include "tile_index.h"

#include <algorithm>
#include <cstring>

namespace gridmap_cuda::detail {
namespace {

// The tile's cells x0..x0 + 63 (and likewise y) clipped to the box: false when they miss it.
bool clip(int tile_start, int box_start, int box_end, int* from, int* to) {
  *from = std::max(tile_start, box_start);
  *to = std::min(tile_start + kTileSide - 1, box_end);
  return *from <= *to;
}

}  // namespace

void TileIndex::clear() {
  keys_.clear();
  box_ = {};
  table_keys_.assign(std::size_t(1) << bits_, kEmptyTileKey);
  table_slots_.assign(std::size_t(1) << bits_, -1);
}

unsigned TileIndex::add(unsigned long long key) {
  if (2 * (keys_.size() + 1) > table_keys_.size()) {  // rehash into twice the table, in slot order
    ++bits_;
    table_keys_.assign(std::size_t(1) << bits_, kEmptyTileKey);
    table_slots_.assign(std::size_t(1) << bits_, -1);
    const unsigned mask = (1u << bits_) - 1u;
    for (std::size_t slot = 0; slot < keys_.size(); ++slot) {
      unsigned h = tile_hash(keys_[slot], bits_);
      while (table_keys_[h] != kEmptyTileKey) h = (h + 1) & mask;
      table_keys_[h] = keys_[slot];
      table_slots_[h] = static_cast<int>(slot);
    }
  }
  const unsigned mask = (1u << bits_) - 1u;
  unsigned h = tile_hash(key, bits_);
  while (table_keys_[h] != kEmptyTileKey) h = (h + 1) & mask;
  table_keys_[h] = key;
  table_slots_[h] = static_cast<int>(keys_.size());
  keys_.push_back(key);
  const int x = tile_key_x(key) * kTileSide, y = tile_key_y(key) * kTileSide;
  box_.x0 = std::min(box_.x0, x);
  box_.y0 = std::min(box_.y0, y);
  box_.x1 = std::max(box_.x1, x + kTileSide - 1);
  box_.y1 = std::max(box_.y1, y + kTileSide - 1);
  return h;
}

std::vector<int> TileIndex::overlapping(const CellBox& box) const {
  std::vector<int> slots;
  int from, to;
  for (std::size_t slot = 0; slot < keys_.size(); ++slot)
    if (clip(tile_key_x(keys_[slot]) * kTileSide, box.x0, box.x1, &from, &to) &&
        clip(tile_key_y(keys_[slot]) * kTileSide, box.y0, box.y1, &from, &to))
      slots.push_back(static_cast<int>(slot));
  return slots;
}

namespace {

// The box in bands of 64 rows (one row of tiles), each on one thread: fill(y_from, y_to) for the
// band's rows, then copy(t, x_from, x_to, y_from, y_to) for each listed tile t in it (clipped to the
// box). A band stays in cache between its fill and its copies, and bands never share a byte.
template <typename Fill, typename Copy>
void for_each_band(const TileIndex& tiles, const std::vector<int>& slots, const CellBox& box, const Fill& fill,
                   const Copy& copy) {
  if (box.empty()) return;
  const int first_band = tile_coordinate(box.y0), bands = tile_coordinate(box.y1) - first_band + 1;
  std::vector<int> start(static_cast<std::size_t>(bands) + 1, 0), order(slots.size());
  auto band_of = [&](std::size_t t) { return tile_key_y(tiles.keys()[slots[t]]) - first_band; };
  for (std::size_t t = 0; t < slots.size(); ++t) ++start[band_of(t) + 1];
  for (int b = 0; b < bands; ++b) start[b + 1] += start[b];
  std::vector<int> next(start.begin(), start.end() - 1);
  for (std::size_t t = 0; t < slots.size(); ++t) order[next[band_of(t)]++] = static_cast<int>(t);
#pragma omp parallel for schedule(dynamic, 4) if (bands > 4)
  for (int b = 0; b < bands; ++b) {
    const int y_from = std::max(box.y0, (first_band + b) * kTileSide);
    const int y_to = std::min(box.y1, (first_band + b) * kTileSide + kTileSide - 1);
    fill(y_from, y_to);
    for (int k = start[b]; k < start[b + 1]; ++k) {
      const int t = order[k];
      int x_from, x_to;
      if (clip(tile_key_x(tiles.keys()[slots[t]]) * kTileSide, box.x0, box.x1, &x_from, &x_to))
        copy(t, x_from, x_to, y_from, y_to);
    }
  }
}

}  // namespace

void scatter_tile_bytes(const TileIndex& tiles, const std::vector<int>& slots, const std::uint8_t* tile_major,
                        const CellBox& box, bool top_down, std::uint8_t unknown, std::uint8_t* out) {
  if (box.empty()) return;  // (its span would overflow int)
  const std::size_t width = static_cast<std::size_t>(box.x1 - box.x0 + 1);
  const int height = box.y1 - box.y0 + 1;
  auto row_of = [&](int y) { return static_cast<std::size_t>(top_down ? height - 1 - (y - box.y0) : y - box.y0); };
  for_each_band(
      tiles, slots, box,
      [&](int y_from, int y_to) {
        for (int y = y_from; y <= y_to; ++y) std::memset(out + row_of(y) * width, unknown, width);
      },
      [&](int t, int x_from, int x_to, int y_from, int y_to) {
        for (int y = y_from; y <= y_to; ++y)
          std::memcpy(out + row_of(y) * width + (x_from - box.x0),
                      tile_major + static_cast<std::size_t>(t) * kTileCells + cell_in_tile(x_from, y),
                      x_to - x_from + 1);
      });
}

void scatter_tile_cells(const TileIndex& tiles, const std::int64_t* evidence, const std::uint8_t* known,
                        const CellBox& box, OccupancyGrid* grid) {
  grid->evidence = std::vector<std::int64_t>();
  grid->known = std::vector<std::uint8_t>();
  if (box.empty()) return;  // (its span would overflow int)
  const std::size_t width = static_cast<std::size_t>(box.x1 - box.x0 + 1);
  // Sized without being filled: the bands fill their rows on their own threads.
  grid->evidence.reserve(box.cells());
  grid->known.reserve(box.cells());
  grid->evidence.resize(box.cells());
  grid->known.resize(box.cells());
  const std::vector<int> slots = tiles.overlapping(box);
  std::int64_t* to_evidence = grid->evidence.data();
  std::uint8_t* to_known = grid->known.data();
  for_each_band(
      tiles, slots, box,
      [&](int y_from, int y_to) {
        const std::size_t begin = (y_from - box.y0) * width, end = (y_to - box.y0 + 1) * width;
        std::fill(to_evidence + begin, to_evidence + end, 0);
        std::fill(to_known + begin, to_known + end, 0);
      },
      [&](int t, int x_from, int x_to, int y_from, int y_to) {
        const std::size_t base = static_cast<std::size_t>(slots[t]) * kTileCells;
        for (int y = y_from; y <= y_to; ++y) {
          const std::size_t to = (y - box.y0) * width + (x_from - box.x0), from = base + cell_in_tile(x_from, y);
          std::copy_n(evidence + from, x_to - x_from + 1, to_evidence + to);
          std::copy_n(known + from, x_to - x_from + 1, to_known + to);
        }
      });
}

}  // namespace gridmap_cuda::detail
