#pragma once
// The general GPU engine's implicit Schur product on the warp-interleaved copies of the Jacobian
// (interleaved_jacobian.h), S x = F'(F x - E V^-1 E'F x) + D_f^2 x in two passes:
//  1. the point pass, a warp per tile of rows and a lane per row: u = F x (block_schur_math.h's
//     row_times), g = E'u summed over each e-block's lanes (a segmented shuffle scan), w = V^-1 g on
//     the e-block's last lane, and v = u - E w into the rows' vector;
//  2. the column pass, a warp per chunk of an f-block's cells: F'v per chunk, then the chunks of a
//     block added in order (column_sum_kernel, with the damping).
// Every sum has a fixed order for a given problem: the same bits run after run. Rows of at most M
// values, e-blocks of at most E and f-blocks of at most T (bounds known when compiled) keep a lane's sums
// in registers.
#include "block_schur_math.h"
#include "grid_stride.cuh"
#include "interleaved_jacobian.h"
#include "linalg_cuda/internal/deterministic_reduce.cuh"

namespace ceres_cuda::detail {
namespace {

// RowTiles and ColumnTiles on the device, and their copies of the Jacobian.
struct RowTilesView {
  const int* slot_residual;
  const int* slot_e_block;
  const int* slot_row;
  long slots;
  const int* tile_start;
  const long* tile_base;
  const int* tile_width;
  int tiles;
  double* values;
};

struct ColumnTilesView {
  const long* base;
  const int* lane_row;
  const int* lane_rows;
  int chunks;
  double* values;
};

// Lane `lane`'s row in round `round` of tile `tile` (its slot tile_start + round * 32 + lane): value j
// at [j * kWarpLanes].
__device__ __forceinline__ double* tile_row(const RowTilesView& t, int tile, int round, int lane) {
  return t.values + t.tile_base[tile] + static_cast<long>(round) * t.tile_width[tile] * kWarpLanes + lane;
}

// Slot q's row as row_times reads it, from RowTiles::slot_row: coalesced loads, where JacobianCells'
// arrays take several dependent ones per cell.
struct SlotRow {
  const int* entries;
  long slots, q;
  int shape;

  __device__ __forceinline__ SlotRow(const RowTilesView& t, int slot)
      : entries(t.slot_row), slots(t.slots), q(slot), shape(t.slot_row[kSlotRowShape * t.slots + slot]) {}
  __device__ __forceinline__ int entry(int j) const { return entries[j * slots + q]; }
  __device__ __forceinline__ int rows() const { return shape & 255; }
  __device__ __forceinline__ int cells() const { return (shape >> 8) & 255; }
  __device__ __forceinline__ int e_index() const { return shape >> 16; }
  __device__ __forceinline__ bool is_e(int i) const { return i == e_index(); }
  __device__ __forceinline__ int tangent(int i) const { return entry(kSlotFirstCell + 2 * i + 1); }
  __device__ __forceinline__ long offset(int i) const { return entry(kSlotFirstCell + 2 * i); }
  __device__ __forceinline__ long row_offset() const { return entry(kSlotRowOffset); }
};

// Values in residual r's row (its cells lie contiguously from its first).
__device__ __forceinline__ long device_row_values(const BlockSparseView& v, int r) {
  long n = 0;
  for (int c = v.row_start[r]; c < v.row_start[r + 1]; ++c) n += v.tangent_size[v.cells[c].block];
  return n * v.rows(r);
}

// The copies after each Jacobian: a warp per tile (chunk), a lane per row (cell); the warp's stores of
// value j are one contiguous run.
__global__ void fill_row_tiles_kernel(BlockSparseView v, RowTilesView t) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(tile, 0, t.tiles) {
    const int q0 = t.tile_start[tile], q1 = t.tile_start[tile + 1];
    for (int q = q0 + lane; q < q1; q += kWarpLanes) {
      const int r = t.slot_residual[q];
      const double* from = v.cell(v.row_start[r]);
      double* to = tile_row(t, tile, (q - q0) / kWarpLanes, lane);
      for (long j = 0, n = device_row_values(v, r); j < n; ++j) to[j * kWarpLanes] = from[j];
    }
  }
}

__global__ void fill_column_tiles_kernel(BlockSparseView v, ChunkView ch, ColumnTilesView t) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(k, 0, t.chunks) {
    const int q = ch.position[k] + lane;
    if (q >= ch.position[k + 1]) continue;
    const int c = v.column_cells[q];
    const double* from = v.cell(c);
    double* to = t.values + t.base[k] + lane;
    for (long j = 0, n = static_cast<long>(v.rows(v.cells[c].residual)) * v.tangent_size[ch.block[k]]; j < n; ++j)
      to[j * kWarpLanes] = from[j];
  }
}

// w = V_p^-1 g for e-block p (e values).
template <int E>
__device__ __forceinline__ void apply_e_inverse(const BlockSparseView& v, const double* v_inverse, int p, int e,
                                                const double (&g)[E], double (&w)[E]) {
  const double* V = v_inverse + static_cast<long>(p - v.first_e_block) * kEBlockValues;
#pragma unroll
  for (int j = 0; j < E; ++j) {
    w[j] = 0.0;
#pragma unroll
    for (int k = 0; k < E; ++k)
      if (j < e && k < e) w[j] += V[j * e + k] * g[k];
  }
}

// A lane's row: u = F x, and g = E'u when it has an e-block (e > 0). Returns the e-cell's position.
template <int M, int E>
__device__ __forceinline__ int lane_row(const SlotRow& row, int e, const double* J, const double* x, double (&u)[M],
                                        double (&g)[E]) {
  const int e_position = row_times(row, J, kWarpLanes, x, true, u);
#pragma unroll
  for (int k = 0; k < E; ++k) g[k] = 0.0;
  if (e > 0) cell_transpose_times(J + static_cast<long>(e_position) * kWarpLanes, kWarpLanes, row.rows(), e, u, g);
  return e_position;
}

// v = u - E w (u alone without an e-block) into the rows' vector.
template <int M, int E>
__device__ __forceinline__ void lane_store(const SlotRow& row, int e, const double* J, int e_position,
                                           const double (&w)[E], double (&u)[M], double* rows) {
  const int m = row.rows();
  if (e > 0) cell_times_subtract(J + static_cast<long>(e_position) * kWarpLanes, kWarpLanes, m, e, w, u);
  double* out = rows + row.row_offset();
#pragma unroll
  for (int a = 0; a < M; ++a)
    if (a < m) out[a] = u[a];
}

// A tile of whole e-blocks (at most 32 rows). A segmented inclusive scan leaves each e-block's sum of
// E'u on its last lane; a row without an e-block is a segment of its own.
template <int M, int E>
__device__ __forceinline__ void whole_e_blocks_tile(const BlockSparseView& v, const RowTilesView& t, int tile,
                                                    const double* x, const double* v_inverse, double* rows) {
  const int lane = threadIdx.x % kWarpLanes;
  const int q = t.tile_start[tile] + lane;
  const bool active = q < t.tile_start[tile + 1];
  const SlotRow row(t, active ? q : t.tile_start[tile]);
  const int p = active ? t.slot_e_block[q] : -1;
  const int e = p >= 0 ? row.tangent(row.e_index()) : 0;
  const double* J = tile_row(t, tile, 0, lane);
  double u[M], g[E], w[E];
#pragma unroll
  for (int k = 0; k < E; ++k) g[k] = 0.0;
  int e_position = -1;
  if (active) e_position = lane_row(row, e, J, x, u, g);
  const unsigned same = __match_any_sync(0xffffffffu, p >= 0 ? p : -2 - lane);
  const int head = __ffs(same) - 1, tail = 31 - __clz(same);
  // The scan's steps up to the tile's longest e-block only: the later ones would add nothing.
  const int longest = static_cast<int>(__reduce_max_sync(0xffffffffu, static_cast<unsigned>(tail - head + 1)));
  for (int d = 1; d < longest; d <<= 1) {
#pragma unroll
    for (int k = 0; k < E; ++k) {
      const double from = __shfl_up_sync(0xffffffffu, g[k], d);
      if (lane - d >= head) g[k] += from;
    }
  }
  if (p >= 0 && lane == tail) apply_e_inverse(v, v_inverse, p, e, g, w);
#pragma unroll
  for (int k = 0; k < E; ++k) w[k] = __shfl_sync(0xffffffffu, w[k], tail);
  if (active) lane_store(row, e, J, e_position, w, u, rows);
}

// One e-block p with more rows than lanes: E'u summed over rounds of 32 rows, then u formed again for v.
template <int M, int E>
__device__ __forceinline__ void long_e_block_tile(const BlockSparseView& v, const RowTilesView& t, int tile,
                                                  const double* x, const double* v_inverse, double* rows) {
  const int lane = threadIdx.x % kWarpLanes;
  const int q0 = t.tile_start[tile], q1 = t.tile_start[tile + 1];
  const int p = t.slot_e_block[q0];
  const SlotRow first(t, q0);
  const int e = first.tangent(first.e_index());
  double u[M], g[E], w[E], total[E];
#pragma unroll
  for (int k = 0; k < E; ++k) total[k] = 0.0;
  for (int round = 0; q0 + round * kWarpLanes < q1; ++round) {
    const int q = q0 + round * kWarpLanes + lane;
#pragma unroll
    for (int k = 0; k < E; ++k) g[k] = 0.0;
    if (q < q1) lane_row(SlotRow(t, q), e, tile_row(t, tile, round, lane), x, u, g);
#pragma unroll
    for (int k = 0; k < E; ++k) total[k] += linalg_cuda::detail::warp_sum(g[k]);  // meaningful on lane 0
  }
  if (lane == 0) apply_e_inverse(v, v_inverse, p, e, total, w);
#pragma unroll
  for (int k = 0; k < E; ++k) w[k] = __shfl_sync(0xffffffffu, w[k], 0);
  for (int round = 0; q0 + round * kWarpLanes < q1; ++round) {
    const int q = q0 + round * kWarpLanes + lane;
    if (q >= q1) continue;
    const SlotRow row(t, q);
    const double* J = tile_row(t, tile, round, lane);
    const int e_position = lane_row(row, 0, J, x, u, g);
    lane_store(row, e, J, e_position, w, u, rows);
  }
}

// rows = F x - E V^-1 E'F x for every row of the tiles.
template <int M, int E>
__global__ void tile_point_pass_kernel(BlockSparseView v, RowTilesView t, const double* x, const double* v_inverse,
                                       double* rows) {
  CERES_CUDA_FOR_EACH_WARP(tile, 0, t.tiles) {
    if (t.tile_start[tile + 1] - t.tile_start[tile] <= kWarpLanes)
      whole_e_blocks_tile<M, E>(v, t, tile, x, v_inverse, rows);
    else
      long_e_block_tile<M, E>(v, t, tile, x, v_inverse, rows);
  }
}

// Chunk k's F_b'v at partials + k * stride: a lane per cell, the lanes' sums in warp_sum's tree. T: a
// bound on the f-blocks' tangent sizes.
template <int T>
__global__ void tile_column_kernel(BlockSparseView v, ChunkView ch, ColumnTilesView t, const double* rows,
                                   double* partials) {
  const int lane = threadIdx.x % kWarpLanes;
  CERES_CUDA_FOR_EACH_WARP(k, 0, t.chunks) {
    double acc[T];
#pragma unroll
    for (int j = 0; j < T; ++j) acc[j] = 0.0;
    const long l = static_cast<long>(k) * kWarpLanes + lane;
    const int m = t.lane_rows[l], tb = v.tangent_size[ch.block[k]];
    if (m > 0) cell_column_terms<T>(t.values + t.base[k] + lane, kWarpLanes, m, tb, rows + t.lane_row[l], false, acc);
#pragma unroll
    for (int j = 0; j < T; ++j)
      if (j < tb) {
        const double sum = linalg_cuda::detail::warp_sum(acc[j]);
        if (lane == 0) partials[static_cast<long>(k) * ch.stride + j] = sum;
      }
  }
}

}  // namespace
}  // namespace ceres_cuda::detail
