#pragma once
// The tile table of a tiled map on the GPU (cell_layout.h), and the pass that finds the tiles an insert
// needs before its kernels run.
//
// Per insert: a request kernel walks every beam's line as the model's update will, a run of up to 64
// cells at a time (for_each_tile_of_line), and lists each tile missing from the table once (a
// scratch hash set removes duplicates). The host reads the list,
// adds the tiles to its TileIndex in key order (so the table, and the slots, do not depend on which
// thread got there first) and copies the changed table entries up; the update kernels then find every
// cell's tile. A request pass that finds nothing new costs one small download and one synchronisation.
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "cell_layout.h"
#include "linalg_cuda/device_buffer.h"
#include "tile_index.h"

namespace gridmap_cuda::detail {

// What a request kernel writes to: the missing tiles, each listed once.
struct TileRequest {
  TileTableView table;
  unsigned long long* seen;  // scratch set of the tiles listed so far, 2^seen_bits entries
  int seen_bits;
  unsigned long long* list;  // the tiles listed, at most list_capacity
  unsigned list_capacity;
  unsigned* counters;        // [0]: tiles listed; [1]: set when the set or list ran out of room

#ifdef __CUDACC__
  // Lists tile (tx, ty) unless it is in the table, already listed, or `*last` (the caller's previous
  // tile, kept per thread).
  __device__ void add(int tx, int ty, unsigned long long* last) const {
    const unsigned long long key = tile_key(tx, ty);
    if (key == *last) return;
    *last = key;
    if (table.find(key) >= 0) return;
    const unsigned mask = (1u << seen_bits) - 1u;
    unsigned h = tile_hash(key, seen_bits);
    for (unsigned probes = 0; probes <= mask; ++probes, h = (h + 1) & mask) {
      // A plain read first: most requests find their tile listed, and need no atomic.
      unsigned long long entry = *static_cast<volatile unsigned long long*>(seen + h);
      if (entry == kEmptyTileKey) entry = atomicCAS(seen + h, kEmptyTileKey, key);
      if (entry == key) return;
      if (entry == kEmptyTileKey) {  // this thread put it there: list it
        const unsigned n = atomicAdd(counters, 1u);
        if (n < list_capacity) list[n] = key;
        else counters[1] = 1u;
        return;
      }
    }
    counters[1] = 1u;
  }
#endif
};

class DeviceTiles {
 public:
  DeviceTiles();

  // No tiles (the pool's memory is the backend's and stays).
  void clear(cudaStream_t stream);
  const TileIndex& index() const { return index_; }
  // The table on the device, for the update kernels.
  TileTableView view() const;

  // Clears the request buffers for a pass.
  TileRequest begin_request(cudaStream_t stream);
  // After the pass: false when it ran out of room (the buffers have grown; run it again).
  bool finish_request(cudaStream_t stream);
  // The tiles the last pass listed, sorted.
  std::vector<unsigned long long> requested(cudaStream_t stream);
  // Adds `keys` (new tiles, in that order: slots index().tiles() onwards) and updates the device table.
  // Everything that can run out of memory is allocated first: a throw leaves the tiles as they were.
  void add(const std::vector<unsigned long long>& keys, cudaStream_t stream);
  // Puts back the index as it was before clear() (a copy of index()), its table uploaded again.
  void restore(TileIndex index, cudaStream_t stream);

 private:
  // The whole table into (keys, slots), sized for it, which then become the device table.
  void upload_table(linalg_cuda::DeviceBuffer keys, linalg_cuda::DeviceBuffer slots, cudaStream_t stream);

  TileIndex index_;
  int seen_bits_ = 14;
  unsigned listed_ = 0;
  linalg_cuda::DeviceBuffer table_keys_, table_slots_, seen_, list_, counters_, changes_;
  linalg_cuda::PinnedBuffer counters_host_, list_host_, changes_host_;
};

}  // namespace gridmap_cuda::detail
