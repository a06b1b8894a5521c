#include "linalg_cuda/memory_cache.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "linalg_cuda/cuda_check.h"

namespace linalg_cuda {
namespace detail {
namespace {

constexpr std::size_t kMinClass = 512;
constexpr std::size_t kMaxCachedBlock = std::size_t(64) << 20;
constexpr std::size_t kMaxIdleDevice = std::size_t(512) << 20;
constexpr std::size_t kMaxIdlePinned = std::size_t(256) << 20;
constexpr int kPinned = -1;  // the "device" of page-locked host blocks in the cache's keys

// The size class of a request: for bytes in (2^k, 2^(k+1)], the next multiple of 2^(k-2), so that a
// block is at most 25% larger than asked for.
std::size_t size_class(std::size_t bytes) {
  if (bytes <= kMinClass) return kMinClass;
  const int k = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1));
  const std::size_t quarter = std::size_t(1) << (k - 2);
  return (bytes + quarter - 1) / quarter * quarter;
}

struct IdleBlock {
  void* pointer;
  int freed_on;         // the device current when it was freed (page-locked blocks: any device's copies)
  unsigned long epoch;  // that device's synchronisations by the cache before the free
};

using Key = std::pair<int, std::size_t>;  // device (or kPinned), size class

struct Cache {
  std::mutex mutex;
  bool enabled = true;
  std::map<Key, std::vector<IdleBlock>> idle;
  std::unordered_map<void*, Key> in_use;  // blocks of a cached class handed out
  std::unordered_map<int, std::size_t> idle_bytes;
  std::unordered_map<int, unsigned long> epoch;
  long hits = 0, misses = 0;
};

// Never destroyed: buffers may be freed by static destructors after this file's would have run.
Cache& cache() {
  static Cache* c = [] {
    auto* made = new Cache();
    const char* value = std::getenv("LINALG_CUDA_MEMORY_CACHE");
    made->enabled = value == nullptr || std::strcmp(value, "0") != 0;
    return made;
  }();
  return *c;
}

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
  return device;
}

// Waits for everything queued on `device` (caller holds the cache's lock).
void synchronize_device(Cache& c, int device) {
  const int current = current_device();
  if (device != current) LINALG_CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t status = cudaDeviceSynchronize();
  if (device != current) cudaSetDevice(current);
  LINALG_CUDA_CHECK(status);
  ++c.epoch[device];
}

// A cached block of `key` made safe to reuse, or null. Prefers one freed before the cache's last
// synchronisation of its device; otherwise synchronises that device once.
void* take_idle(Cache& c, const Key& key) {
  const auto found = c.idle.find(key);
  if (found == c.idle.end() || found->second.empty()) return nullptr;
  std::vector<IdleBlock>& blocks = found->second;
  std::size_t pick = blocks.size() - 1;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (c.epoch[blocks[i].freed_on] != blocks[i].epoch) pick = i;
  const IdleBlock block = blocks[pick];
  if (c.epoch[block.freed_on] == block.epoch) synchronize_device(c, block.freed_on);
  blocks.erase(blocks.begin() + static_cast<long>(pick));
  c.idle_bytes[key.first] -= key.second;
  return block.pointer;
}

void free_to_driver(int device_or_pinned, void* p) noexcept {
  if (device_or_pinned == kPinned)
    cudaFreeHost(p);
  else
    cudaFree(p);
}

// Every idle block of `device_or_pinned` (all when `all`) back to the driver; caller holds the lock.
// cudaFree and cudaFreeHost wait for the device themselves.
void release_idle(Cache& c, bool all, int device_or_pinned) {
  for (auto it = c.idle.begin(); it != c.idle.end();) {
    if (!all && it->first.first != device_or_pinned) {
      ++it;
      continue;
    }
    for (const IdleBlock& block : it->second) free_to_driver(it->first.first, block.pointer);
    c.idle_bytes[it->first.first] -= it->first.second * it->second.size();
    it = c.idle.erase(it);
  }
}

// `bytes` from the cache or, through allocate(size), from the driver; allocate returns null when the
// memory is not there, and is tried again once with the idle blocks of `device_or_pinned` released.
template <class Allocate>
void* cached_malloc(int device_or_pinned, std::size_t bytes, Allocate&& allocate) {
  Cache& c = cache();
  if (!c.enabled || bytes > kMaxCachedBlock) return allocate(bytes);
  const Key key{device_or_pinned, size_class(bytes)};
  {
    const std::lock_guard<std::mutex> lock(c.mutex);
    if (void* p = take_idle(c, key)) {
      c.in_use.emplace(p, key);
      ++c.hits;
      return p;
    }
    ++c.misses;
  }
  void* p = allocate(key.second);
  if (p == nullptr) {
    {
      const std::lock_guard<std::mutex> lock(c.mutex);
      release_idle(c, false, device_or_pinned);
    }
    p = allocate(key.second);
  }
  if (p != nullptr) {
    const std::lock_guard<std::mutex> lock(c.mutex);
    c.in_use.emplace(p, key);
  }
  return p;
}

void cached_free(void* p, bool pinned) noexcept {
  if (p == nullptr) return;
  Cache& c = cache();
  try {
    std::unique_lock<std::mutex> lock(c.mutex);
    const auto it = c.in_use.find(p);
    if (it != c.in_use.end()) {
      const Key key = it->second;
      c.in_use.erase(it);
      const std::size_t limit = key.first == kPinned ? kMaxIdlePinned : kMaxIdleDevice;
      if (c.idle_bytes[key.first] + key.second <= limit) {
        const int device = key.first == kPinned ? current_device() : key.first;
        c.idle[key].push_back({p, device, c.epoch[device]});
        c.idle_bytes[key.first] += key.second;
        return;
      }
    }
  } catch (...) {  // no memory for the cache's bookkeeping: the block goes to the driver
  }
  free_to_driver(pinned ? kPinned : 0, p);
}

// cudaMalloc; null when the device has not the memory.
void* driver_malloc(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not a sticky error: cleared, the device goes on
    return nullptr;
  }
  check(status, "cudaMalloc", __FILE__, __LINE__);
  return p;
}

}  // namespace

void* device_malloc(std::size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  void* p = cached_malloc(current_device(), bytes, driver_malloc);
  if (p == nullptr) throw_device_memory_error(what, bytes);
  return p;
}

void* device_malloc_uncached(std::size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  void* p = driver_malloc(bytes);
  if (p == nullptr) throw_device_memory_error(what, bytes);
  return p;
}

void device_free(void* p) noexcept { cached_free(p, false); }

void* pinned_malloc(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = cached_malloc(kPinned, bytes, [](std::size_t size) -> void* {
    void* q = nullptr;
    const cudaError_t status = cudaMallocHost(&q, size);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    check(status, "cudaMallocHost", __FILE__, __LINE__);
    return q;
  });
  if (p == nullptr) throw_cuda_error(cudaErrorMemoryAllocation, "cudaMallocHost", __FILE__, __LINE__);
  return p;
}

void pinned_free(void* p) noexcept { cached_free(p, true); }

}  // namespace detail

void release_cached_memory() {
  detail::Cache& c = detail::cache();
  const std::lock_guard<std::mutex> lock(c.mutex);
  detail::release_idle(c, true, 0);
}

MemoryCacheStats memory_cache_stats() {
  detail::Cache& c = detail::cache();
  const std::lock_guard<std::mutex> lock(c.mutex);
  MemoryCacheStats stats;
  for (const auto& [device, bytes] : c.idle_bytes) (device == detail::kPinned ? stats.idle_pinned_bytes : stats.idle_device_bytes) += bytes;
  stats.hits = c.hits;
  stats.misses = c.misses;
  return stats;
}

}  // namespace linalg_cuda
