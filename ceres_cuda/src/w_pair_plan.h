#pragma once
// The e-blocks' terms of the explicit reduced matrix, S -= sum_p W_p' V_p^-1 W_p, by pairs of f-blocks:
// for every pair (j, k), k <= j, of f-blocks that share an e-block, the pairs of W slots (ReducedMatrixPlan)
// of each e-block they share, in e-block order, cut into chunks of at most kChunk. A thread sums a
// chunk's W_pj V_p^-1 W_pk', then a warp sums a pair's chunks in warp order and subtracts the block
// from S: every entry of S has one writer and its terms a fixed order, and no thread walks a long row.
// The plan is built on the device (a radix sort of the slot pairs by their blocks, stable in e-block
// order): at Venice scale it has about 1.2e8 slot pairs, a host build of which would take seconds.
#include <cuda_runtime.h>

#include <vector>

#include "block_schur_math.h"
#include "linalg_cuda/device_buffer.h"
#include "reduced_matrix_plan.h"

namespace ceres_cuda::detail {

// Pairs of f-blocks (j, k) and their chunks of entries, whose sums a warp per pair adds to S's block.
struct PairBlocks {
  const int* pair_j;
  const int* pair_k;
  ChunkView chunks;  // "block" is the pair
  int num_chunks, num_pairs;
};

struct WPairsView {
  PairBlocks pairs;
  const unsigned long long* slots;  // per entry: the slot of j (high 32 bits) and of k, of one e-block
};

class WPairPlan {
 public:
  static constexpr int kChunk = 64;

  // The plan's entries for the slots (ReducedMatrixPlan::slot_start, on the host).
  static long entries(const std::vector<int>& slot_start);
  // The device memory the build takes at its peak, for that many entries: the sort's keys and values
  // twice, the plan's slots, the runs' keys and lengths.
  static long build_bytes(long entries) { return 44 * entries; }

  // Builds the plan on the stream (and waits for it). `stride`: values per chunk partial, at least the
  // largest t_j t_k.
  WPairPlan(const SlotsView& slots, const std::vector<int>& slot_start, int num_f_blocks, int stride,
            cudaStream_t stream);

  const WPairsView& view() const { return view_; }

 private:
  linalg_cuda::DeviceBuffer slots_, pair_j_, pair_k_, chunk_pair_, chunk_position_, pair_chunk_start_;
  WPairsView view_{};
};

}  // namespace ceres_cuda::detail
