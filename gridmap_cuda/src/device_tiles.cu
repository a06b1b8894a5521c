// DeviceTiles: the tile table's device copy and the request pass's buffers (device_tiles.h).
#include "device_tiles.h"

#include <algorithm>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/internal/launch_geometry.h"

namespace gridmap_cuda::detail {
namespace {

constexpr int kThreads = 256;

// One changed table entry.
struct TableChange {
  unsigned long long key;
  unsigned position;
  int slot;
};

__global__ void apply_changes_kernel(unsigned long long* keys, int* slots, const TableChange* changes, unsigned n) {
  const unsigned k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= n) return;
  keys[changes[k].position] = changes[k].key;
  slots[changes[k].position] = changes[k].slot;
}

}  // namespace

DeviceTiles::DeviceTiles() {
  counters_.reserve(2 * sizeof(unsigned));
  counters_host_.reserve(2 * sizeof(unsigned));
  const cudaStream_t stream = linalg_cuda::thread_context().stream();
  upload_table(linalg_cuda::DeviceBuffer(), linalg_cuda::DeviceBuffer(), stream);
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void DeviceTiles::upload_table(linalg_cuda::DeviceBuffer keys, linalg_cuda::DeviceBuffer slots, cudaStream_t stream) {
  const std::size_t entries = index_.table_keys().size();
  keys.reserve(entries * sizeof(unsigned long long));
  slots.reserve(entries * sizeof(int));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(keys.data(), index_.table_keys().data(), entries * sizeof(unsigned long long),
                                    cudaMemcpyHostToDevice, stream));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(slots.data(), index_.table_slots().data(), entries * sizeof(int),
                                    cudaMemcpyHostToDevice, stream));
  table_keys_ = std::move(keys);
  table_slots_ = std::move(slots);
}

void DeviceTiles::restore(TileIndex index, cudaStream_t stream) {
  // clear() kept the table's size and a failed add() changed nothing, so the buffers hold it: this
  // allocates nothing when memory has just run out.
  index_ = std::move(index);
  upload_table(std::move(table_keys_), std::move(table_slots_), stream);
}

void DeviceTiles::clear(cudaStream_t stream) {
  index_.clear();
  const std::size_t entries = index_.table_keys().size();
  // All ones: kEmptyTileKey and slot -1.
  LINALG_CUDA_CHECK(cudaMemsetAsync(table_keys_.data(), 0xff, entries * sizeof(unsigned long long), stream));
  LINALG_CUDA_CHECK(cudaMemsetAsync(table_slots_.data(), 0xff, entries * sizeof(int), stream));
}

TileTableView DeviceTiles::view() const {
  return {table_keys_.as<unsigned long long>(), table_slots_.as<int>(), index_.bits()};
}

TileRequest DeviceTiles::begin_request(cudaStream_t stream) {
  const std::size_t entries = std::size_t(1) << seen_bits_;
  seen_.reserve(entries * sizeof(unsigned long long));
  list_.reserve(entries / 2 * sizeof(unsigned long long));
  LINALG_CUDA_CHECK(cudaMemsetAsync(seen_.data(), 0xff, entries * sizeof(unsigned long long), stream));
  LINALG_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, 2 * sizeof(unsigned), stream));
  return {view(), seen_.as<unsigned long long>(), seen_bits_, list_.as<unsigned long long>(),
          static_cast<unsigned>(entries / 2), counters_.as<unsigned>()};
}

bool DeviceTiles::finish_request(cudaStream_t stream) {
  LINALG_CUDA_CHECK(cudaMemcpyAsync(counters_host_.data(), counters_.data(), 2 * sizeof(unsigned),
                                    cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  const unsigned* counters = counters_host_.as<unsigned>();
  if (counters[1] != 0) {  // four times the room, and again
    seen_bits_ += 2;
    return false;
  }
  listed_ = counters[0];
  return true;
}

std::vector<unsigned long long> DeviceTiles::requested(cudaStream_t stream) {
  if (listed_ == 0) return {};
  list_host_.reserve(listed_ * sizeof(unsigned long long));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(list_host_.data(), list_.data(), listed_ * sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  const unsigned long long* listed = list_host_.as<unsigned long long>();
  std::vector<unsigned long long> keys(listed, listed + listed_);
  std::sort(keys.begin(), keys.end());
  return keys;
}

void DeviceTiles::add(const std::vector<unsigned long long>& keys, cudaStream_t stream) {
  if (keys.empty()) return;
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));  // changes_host_ is free again
  // The memory first: a larger table (when it will double), or the changes' buffers.
  const int bits = index_.bits_for(static_cast<std::size_t>(index_.tiles()) + keys.size());
  linalg_cuda::DeviceBuffer grown_keys, grown_slots;
  if (bits != index_.bits()) {
    grown_keys.reserve((std::size_t(1) << bits) * sizeof(unsigned long long));
    grown_slots.reserve((std::size_t(1) << bits) * sizeof(int));
  } else {
    changes_.reserve(keys.size() * sizeof(TableChange));
    changes_host_.reserve(keys.size() * sizeof(TableChange));
  }
  if (bits != index_.bits()) {  // rehashed: the whole table
    for (const unsigned long long key : keys) index_.add(key);
    upload_table(std::move(grown_keys), std::move(grown_slots), stream);
    return;
  }
  TableChange* changes = changes_host_.as<TableChange>();
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const int slot = index_.tiles();
    changes[k] = {keys[k], index_.add(keys[k]), slot};
  }
  LINALG_CUDA_CHECK(cudaMemcpyAsync(changes_.data(), changes, keys.size() * sizeof(TableChange), cudaMemcpyHostToDevice,
                                    stream));
  const unsigned n = static_cast<unsigned>(keys.size());
  apply_changes_kernel<<<linalg_cuda::detail::blocks_for(n, kThreads), kThreads, 0, stream>>>(
      table_keys_.as<unsigned long long>(), table_slots_.as<int>(), changes_.as<TableChange>(), n);
  LINALG_CUDA_CHECK_LAUNCH();
}

}  // namespace gridmap_cuda::detail
