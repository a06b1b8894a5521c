#include "w_pair_plan.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "device_upload.h"
#include "grid_stride.cuh"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"

namespace ceres_cuda::detail {
namespace {

using linalg_cuda::DeviceBuffer;
using linalg_cuda::detail::blocks_for;

// Per e-block, its slot pairs (a, b) whose blocks have block(b) <= block(a) (the slots of one e-block
// are distinct blocks, so each unordered pair once, and a with itself), from entry offset[i]: the key
// is the pair of blocks, the value the pair of slots.
__global__ void fill_kernel(SlotsView s, const long* offset, unsigned long long num_f_blocks, unsigned long long* keys,
                            unsigned long long* values) {
  CERES_CUDA_FOR_EACH(i, 0, s.num_e_blocks) {
    long at = offset[i];
    for (int a = s.slot_start[i]; a < s.slot_start[i + 1]; ++a)
      for (int b = s.slot_start[i]; b < s.slot_start[i + 1]; ++b) {
        const int j = s.slot_block[a], k = s.slot_block[b];
        if (k > j) continue;
        keys[at] = static_cast<unsigned long long>(j) * num_f_blocks + k;
        values[at] = static_cast<unsigned long long>(a) << 32 | static_cast<unsigned>(b);
        ++at;
      }
  }
}

// Per pair: its blocks from its key, and its chunks of at most kChunk entries.
__global__ void pairs_kernel(int pairs, const unsigned long long* keys, const int* entry_start, const int* chunk_start,
                             unsigned long long num_f_blocks, int* pair_j, int* pair_k, int* chunk_pair,
                             int* chunk_position) {
  CERES_CUDA_FOR_EACH(i, 0, pairs) {
    pair_j[i] = static_cast<int>(keys[i] / num_f_blocks);
    pair_k[i] = static_cast<int>(keys[i] % num_f_blocks);
    for (int q = chunk_start[i], e = entry_start[i]; q < chunk_start[i + 1]; ++q, e += WPairPlan::kChunk) {
      chunk_pair[q] = i;
      chunk_position[q] = e;
    }
  }
}

__global__ void chunk_count_kernel(int pairs, const int* entries_per_pair, int* chunks) {
  CERES_CUDA_FOR_EACH(i, 0, pairs) chunks[i] = (entries_per_pair[i] + WPairPlan::kChunk - 1) / WPairPlan::kChunk;
}

// The end of the last chunk's entries, one past the last chunk; and of the last pair's chunks.
__global__ void ends_kernel(int pairs, int entries, const int* chunk_count, int* chunk_start, int* chunk_position) {
  const int chunks = pairs > 0 ? chunk_start[pairs - 1] + chunk_count[pairs - 1] : 0;
  chunk_start[pairs] = chunks;
  chunk_position[chunks] = entries;
}

int bits_for(unsigned long long n) {
  int bits = 1;
  while (bits < 64 && (1ull << bits) < n) ++bits;
  return bits;
}

// Exclusive prefix sums of n ints, with the total at out[n].
void exclusive_sum(const int* in, int* out, int n, DeviceBuffer* temp, cudaStream_t stream) {
  std::size_t bytes = 0;
  LINALG_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, stream));
  temp->reserve(std::max<std::size_t>(1, bytes));
  LINALG_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp->data(), bytes, in, out, n, stream));
}

}  // namespace

long WPairPlan::entries(const std::vector<int>& slot_start) {
  long total = 0;
  for (std::size_t i = 0; i + 1 < slot_start.size(); ++i) {
    const long n = slot_start[i + 1] - slot_start[i];
    total += n * (n + 1) / 2;
  }
  return total;
}

WPairPlan::WPairPlan(const SlotsView& slots, const std::vector<int>& slot_start, int num_f_blocks, int stride,
                     cudaStream_t stream) {
  std::vector<long> offset(slot_start.size(), 0);
  for (std::size_t i = 0; i + 1 < slot_start.size(); ++i) {
    const long n = slot_start[i + 1] - slot_start[i];
    offset[i + 1] = offset[i] + n * (n + 1) / 2;
  }
  const long total = offset.back();
  if (total >= (1l << 31) - 1) throw linalg_cuda::InvalidArgument("ceres_cuda: more than 2^31 slot pairs");
  const int entries = static_cast<int>(total);
  const unsigned long long f = std::max(1, num_f_blocks);
  const DeviceBuffer d_offset = upload_array(offset, stream);
  DeviceBuffer keys_in(std::max<long>(1, total) * 8), values_in(std::max<long>(1, total) * 8),
      keys(std::max<long>(1, total) * 8), temp;
  slots_.reserve(std::max<long>(1, total) * 8);
  fill_kernel<<<blocks_for(slots.num_e_blocks), kBlockThreads, 0, stream>>>(
      slots, d_offset.as<long>(), f, keys_in.as<unsigned long long>(), values_in.as<unsigned long long>());
  LINALG_CUDA_CHECK_LAUNCH();
  // Stable: the entries of a pair stay in e-block order.
  std::size_t bytes = 0;
  const int end_bit = bits_for(f * f);
  LINALG_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in.as<unsigned long long>(),
                                                    keys.as<unsigned long long>(), values_in.as<unsigned long long>(),
                                                    slots_.as<unsigned long long>(), entries, 0, end_bit, stream));
  temp.reserve(std::max<std::size_t>(1, bytes));
  LINALG_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys_in.as<unsigned long long>(),
                                                    keys.as<unsigned long long>(), values_in.as<unsigned long long>(),
                                                    slots_.as<unsigned long long>(), entries, 0, end_bit, stream));
  // The runs of equal keys are the pairs.
  DeviceBuffer unique(std::max<long>(1, total) * 8), run_length(std::max<long>(1, total + 1) * 4), num_runs(4);
  LINALG_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, bytes, keys.as<unsigned long long>(),
                                                       unique.as<unsigned long long>(), run_length.as<int>(),
                                                       num_runs.as<int>(), entries, stream));
  temp.reserve(std::max<std::size_t>(1, bytes));
  LINALG_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp.data(), bytes, keys.as<unsigned long long>(),
                                                       unique.as<unsigned long long>(), run_length.as<int>(),
                                                       num_runs.as<int>(), entries, stream));
  int pairs = 0;
  LINALG_CUDA_CHECK(cudaMemcpyAsync(&pairs, num_runs.data(), sizeof pairs, cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (total == 0) pairs = 0;

  const std::size_t pair_ints = static_cast<std::size_t>(pairs + 1) * sizeof(int);
  DeviceBuffer entry_start(pair_ints), chunk_count(pair_ints);
  pair_chunk_start_.reserve(pair_ints);
  exclusive_sum(run_length.as<int>(), entry_start.as<int>(), pairs, &temp, stream);
  chunk_count_kernel<<<blocks_for(pairs), kBlockThreads, 0, stream>>>(pairs, run_length.as<int>(),
                                                                      chunk_count.as<int>());
  LINALG_CUDA_CHECK_LAUNCH();
  exclusive_sum(chunk_count.as<int>(), pair_chunk_start_.as<int>(), pairs, &temp, stream);
  int chunks = 0;
  if (pairs > 0) {
    int last[2];
    LINALG_CUDA_CHECK(cudaMemcpyAsync(&last[0], pair_chunk_start_.as<int>() + pairs - 1, sizeof(int),
                                      cudaMemcpyDeviceToHost, stream));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(&last[1], chunk_count.as<int>() + pairs - 1, sizeof(int), cudaMemcpyDeviceToHost,
                                      stream));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
    chunks = last[0] + last[1];
  }
  pair_j_.reserve(static_cast<std::size_t>(std::max(1, pairs)) * 4);
  pair_k_.reserve(static_cast<std::size_t>(std::max(1, pairs)) * 4);
  chunk_pair_.reserve(static_cast<std::size_t>(std::max(1, chunks)) * 4);
  chunk_position_.reserve(static_cast<std::size_t>(chunks + 1) * 4);
  ends_kernel<<<1, 1, 0, stream>>>(pairs, entries, chunk_count.as<int>(), pair_chunk_start_.as<int>(),
                                   chunk_position_.as<int>());
  LINALG_CUDA_CHECK_LAUNCH();
  pairs_kernel<<<blocks_for(pairs), kBlockThreads, 0, stream>>>(pairs, unique.as<unsigned long long>(),
                                                                 entry_start.as<int>(), pair_chunk_start_.as<int>(), f,
                                                                 pair_j_.as<int>(), pair_k_.as<int>(),
                                                                 chunk_pair_.as<int>(), chunk_position_.as<int>());
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the build's buffers are freed
  view_.pairs = {pair_j_.as<int>(), pair_k_.as<int>(),
                 ChunkView{chunk_pair_.as<int>(), chunk_position_.as<int>(), pair_chunk_start_.as<int>(), 0, stride},
                 chunks, pairs};
  view_.slots = slots_.as<unsigned long long>();
}

}  // namespace ceres_cuda::detail
