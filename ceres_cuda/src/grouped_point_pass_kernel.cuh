#pragma once
// Private to the GPU engine (included by cuda_engine.cu only): the fast path's point pass over the
// grouped tiles of grouped_point_tiles.h. A warp takes a tile of whole points; a lane takes an item,
// up to kItemSlots residuals of one camera, reads the camera once (Terms::Camera, in registers) and
// forms each residual's term g = E_q' u_q (but for the point's scaling), which it leaves in shared
// memory at the residual's place in the tile's point order; then a lane per point sums its
// residuals' terms in that order (a fixed order: the same bits every run) and finishes the point
// (finish_point). Tiles of one point with more than kTileItems items are another kernel's
// (many_items_point_pass_kernel, below).
//
// The tile's streamed inputs (the views by position, each position's place in the point order, the
// items, each point's first place) are copied into shared memory a tile ahead (cp.async), and what
// its points read once their sums are in (Terms' per-point values) is prefetched into the L2 a tile
// ahead, so that a tile waits only for its cameras' records and the L2; a lane reads what other lanes
// staged: a __syncwarp after the wait, and one after the tile before its buffers are refilled. (On
// the H100 at Venice scale the prefetch took a PCG iteration in the loop from 0.207 to 0.204 ms, the
// staged point starts to 0.202: the last step of a tile, a lane per point, had waited for memory
// twice.) The places are bytes, so that the block's shared memory leaves the L1 room for the
// cameras' records (GroupedStagedTile).
#include <cuda_pipeline.h>

#include "grouped_point_tiles.h"
#include "schur_product_kernels.cuh"

namespace ceres_cuda::detail {
namespace {

constexpr int kTilePositions = kTileItems * kItemSlots;

// The tiles on the device (GroupedPointLayout uploaded): per position its slot's place in its tile,
// per point its first slot's place in its tile, bytes packed four to a word (with a word to spare at
// the end), so that a tile's copies of them are words.
struct GroupedTilesView {
  int tiles;
  const int* tile_start;
  const int* tile_item_start;
  const int* tile_point_start;
  const int* item_start;
  const int* item_camera;
  const int* position_offset;  // bytes, packed
  const int* point_offset;     // bytes, packed
};

// Bytes first .. first + n - 1 of a packed array as words, from the word that holds byte `first`
// (n <= kTilePositions: at most kPlaceWords words), on the warp's lanes; byte b is then at
// to[b - first + (first & 3)].
constexpr int kPlaceWords = (kTilePositions + 3) / 4 + 1;

__device__ __forceinline__ void stage_places(const int* packed, int first, int n, unsigned char* to, int lane) {
  const int word0 = first >> 2, words = n > 0 ? ((first + n - 1) >> 2) - word0 + 1 : 0;
  for (int w = lane; w < words; w += 32) __pipeline_memcpy_async(to + 4 * w, packed + word0 + w, sizeof(int));
}

// A warp's staged tile: entry k of the views of position q0 + j at view[k][j]; its places
// (stage_places: position q0 + j's at offset[j + (q0 & 3)], point p0 + i's at point_offset[i +
// (p0 & 3)]; a tile has at most kTilePositions positions, and each of its points one at least).
// Bytes, not ints: on the H100 a block of the pass then takes 82 KB of shared memory, not 94, and two
// fit in a 164 KB carveout (not 196), leaving 92 KB for the L1 that caches the cameras' records: 0.190
// against 0.202 ms a PCG iteration at Venice scale, 1.037 against 1.099 at Final scale (12 KB more
// a block, for the points' inverse blocks, had cost a tenth).
template <int kView>
struct GroupedStagedTile {
  double view[kView][kTilePositions];
  int item_camera[kTileItems];
  int item_start[kTileItems + 1];
  unsigned char offset[4 * kPlaceWords];
  unsigned char point_offset[4 * kPlaceWords];
};

// A warp's share of the kernel's dynamic shared memory: two staged tiles and the terms' sums.
template <int kView>
struct GroupedWarpShared {
  GroupedStagedTile<kView> stage[2];
  double sums[3][kTilePositions];
};

template <class Terms>
constexpr std::size_t grouped_point_pass_shared_bytes() {
  return sizeof(GroupedWarpShared<Terms::kViewSize>) * kWarpsPerBlock;
}

struct GroupedTileBounds {
  int q0 = 0, q1 = 0, i0 = 0, i1 = 0, p0 = 0, p1 = 0;
  __device__ __forceinline__ bool many_items() const { return i1 - i0 > kTileItems; }
};

__device__ __forceinline__ void prefetch_l2(const void* at) { asm volatile("prefetch.global.L2 [%0];" ::"l"(at)); }

// Terms has
//   kMinBlocks, kViewSize                                     blocks per multiprocessor; view values a residual
//   const double* views; int positions;                       the views by position, entry k at k * positions
//   struct Camera; Camera camera(int item_camera) const;      what an item reads of its camera, once
//   void term(const Camera&, int position, const double* view, double (&g)[3]) const;  E_q' u_q but for s_p
//   void prefetch_points(int p0, int p1, int lane) const;   the per-point values of points p0 .. p1 - 1
//                                                             toward the L2 (prefetch_l2), on the warp's lanes
// and scale_point, store_point and scaled_inverse as for point_pass_tiles (finish_point).
template <class Terms, PointPassResult kResult>
__global__ void __launch_bounds__(kThreads, Terms::kMinBlocks)
    grouped_point_pass_kernel(Terms terms, GroupedTilesView t, const double* __restrict__ Vinv, const int* stopped) {
  constexpr int kView = Terms::kViewSize;
  extern __shared__ double shared_memory[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  GroupedWarpShared<kView>& mine = reinterpret_cast<GroupedWarpShared<kView>*>(shared_memory)[warp];
  const int warps = gridDim.x * kWarpsPerBlock;
  // A tile's bounds are read a tile before its copies are issued, so that issuing them does not wait.
  const auto bounds = [&](int tile) {
    GroupedTileBounds b;
    if (tile < t.tiles) {
      b.q0 = t.tile_start[tile];
      b.q1 = t.tile_start[tile + 1];
      b.i0 = t.tile_item_start[tile];
      b.i1 = t.tile_item_start[tile + 1];
      b.p0 = t.tile_point_start[tile];
      b.p1 = t.tile_point_start[tile + 1];
    }
    return b;
  };
  const auto stage_tile = [&](const GroupedTileBounds& b, GroupedStagedTile<kView>& to) {
    if (b.many_items()) return;  // many_items_point_pass_kernel's
    for (int j = lane; j < b.q1 - b.q0; j += 32)
      for (int k = 0; k < kView; ++k)
        __pipeline_memcpy_async(&to.view[k][j], terms.views + static_cast<std::size_t>(k) * terms.positions + b.q0 + j,
                                sizeof(double));
    stage_places(t.position_offset, b.q0, b.q1 - b.q0, to.offset, lane);
    stage_places(t.point_offset, b.p0, b.p1 - b.p0, to.point_offset, lane);
    if (lane < b.i1 - b.i0) __pipeline_memcpy_async(&to.item_camera[lane], t.item_camera + b.i0 + lane, sizeof(int));
    for (int i = lane; i <= b.i1 - b.i0; i += 32)  // up to kTileItems + 1 starts
      __pipeline_memcpy_async(&to.item_start[i], t.item_start + b.i0 + i, sizeof(int));
  };
  int tile = blockIdx.x * kWarpsPerBlock + warp;
  GroupedTileBounds now = bounds(tile), next = bounds(tile + warps);
  stage_tile(now, mine.stage[0]);
  __pipeline_commit();
  // The tiles and views do not change during a solve: the first tile's copies are on their way before
  // the kernel waits for the cameras' records (programmatic dependent launch).
  linalg_cuda::detail::begin_dependent_kernel();
  if (cg_has_stopped(stopped)) {
    __pipeline_wait_prior(0);  // no copy may land in shared memory after the block has gone
    return;
  }
  for (int k = 0; tile < t.tiles; tile += warps, ++k) {
    stage_tile(next, mine.stage[(k + 1) & 1]);  // empty past the last tile
    __pipeline_commit();
    // What the next tile's points read once their sums are in (Terms' per-point values), toward the
    // L2 now, so that a tile's last step waits on the L2 rather than on memory.
    if (!next.many_items()) terms.prefetch_points(next.p0, next.p1, lane);
    const GroupedTileBounds after = bounds(tile + 2 * warps);
    __pipeline_wait_prior(1);  // this tile's copies, this lane's
    __syncwarp();              // and every lane's
    if (!now.many_items()) {
      const GroupedStagedTile<kView>& staged = mine.stage[k & 1];
      if (lane < now.i1 - now.i0) {
        const typename Terms::Camera camera = terms.camera(staged.item_camera[lane]);
        const int end = staged.item_start[lane + 1] - now.q0;
#pragma unroll 1
        for (int j = staged.item_start[lane] - now.q0; j < end; ++j) {
          double view[kView], g[3];
          for (int v = 0; v < kView; ++v) view[v] = staged.view[v][j];
          terms.term(camera, now.q0 + j, view, g);
          const int at = staged.offset[j + (now.q0 & 3)];
          for (int r = 0; r < 3; ++r) mine.sums[r][at] = g[r];
        }
      }
      __syncwarp();
      for (int p = now.p0 + lane; p < now.p1; p += 32) {
        const int i = p - now.p0 + (now.p0 & 3);
        const int end = p + 1 < now.p1 ? staged.point_offset[i + 1] : now.q1 - now.q0;
        double g[3] = {0.0, 0.0, 0.0}, w[3];
        for (int j = staged.point_offset[i]; j < end; ++j)
          for (int r = 0; r < 3; ++r) g[r] += mine.sums[r][j];
        finish_point<kResult>(terms, Vinv, p, g, w);
      }
    }
    __syncwarp();  // the lanes are done with this tile's buffers before the next copies into them
    now = next;
    next = after;
  }
}

// The tiles of one point with more than kTileItems items (many_tiles lists them; the walk above skips
// them), a warp to a tile: its items in rounds of 32, each lane summing its own, the lanes' sums by a
// fixed shuffle tree, the views read where used. A kernel of its own: inlined in the walk, this path
// took the walk's registers from 120 to 158 (and as a function call to 172).
template <class Terms, PointPassResult kResult>
__global__ void __launch_bounds__(kThreads)
    many_items_point_pass_kernel(Terms terms, GroupedTilesView t, const int* __restrict__ many_tiles, int count,
                                 const double* __restrict__ Vinv, const int* stopped) {
  linalg_cuda::detail::begin_dependent_kernel();
  if (cg_has_stopped(stopped)) return;
  constexpr int kView = Terms::kViewSize;
  const int lane = threadIdx.x % 32;
  for (int k = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32; k < count; k += gridDim.x * kWarpsPerBlock) {
    const int tile = many_tiles[k];
    const int i0 = t.tile_item_start[tile], i1 = t.tile_item_start[tile + 1];
    double total[3] = {0.0, 0.0, 0.0}, w[3];
    for (int i = i0 + lane; i < i1; i += 32) {
      const typename Terms::Camera camera = terms.camera(t.item_camera[i]);
      for (int q = t.item_start[i]; q < t.item_start[i + 1]; ++q) {
        double view[kView], g[3];
        for (int v = 0; v < kView; ++v) view[v] = terms.views[static_cast<std::size_t>(v) * terms.positions + q];
        terms.term(camera, q, view, g);
        for (int r = 0; r < 3; ++r) total[r] += g[r];
      }
    }
    for (int r = 0; r < 3; ++r) total[r] = warp_sum(total[r]);  // on lane 0
    if (lane == 0) finish_point<kResult>(terms, Vinv, t.tile_point_start[tile], total, w);
  }
}

}  // namespace
}  // namespace ceres_cuda::detail
