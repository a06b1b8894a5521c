#pragma once
// The parameter blocks a problem's residual blocks use, found on all OpenMP threads at once: an
// open-addressing hash table on the blocks' addresses (linear probing, Fibonacci hashing of the
// address) into which every residual inserts its camera and its point, recording its own number as
// the block's first use in that role when it is the smallest so far (an integer minimum: the same
// whatever order the threads take). At Final-13682's size that is 29 million residuals and 4.5
// million blocks; taking the blocks from the residuals, in the pass that reads them anyway, spares the
// analysis Problem::GetParameterBlocks (a walk of Ceres' std::map on one thread) and a second look-up
// of every residual's blocks.
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fresh_memory.h"

namespace ceres_cuda::detail {

class BlockUseTable {
 public:
  static constexpr int kNotUsed = INT_MAX;  // first_use() of a role the block never plays

  // Room for max_blocks distinct keys (the table never grows: the caller knows the bound, e.g.
  // Problem::NumParameterBlocks()). The slots are cleared on all threads: at this size, memory
  // first touched by one thread is a cost of its own.
  explicit BlockUseTable(std::size_t max_blocks) {
    int bits = 4;
    while ((std::size_t{1} << bits) < max_blocks + max_blocks / 2) ++bits;  // load at most 2/3
    shift_ = 64 - bits;
    mask_ = (std::size_t{1} << bits) - 1;
    slots_ = uninitialised_array<Slot>(mask_ + 1);
    const long capacity = static_cast<long>(mask_ + 1);
#pragma omp parallel for schedule(static)
    for (long s = 0; s < capacity; ++s) {
      slots_[s].key.store(nullptr, std::memory_order_relaxed);
      slots_[s].first[0].store(kNotUsed, std::memory_order_relaxed);
      slots_[s].first[1].store(kNotUsed, std::memory_order_relaxed);
    }
  }

  // The slot of key (not null), which is inserted if it is new. Safe on any number of threads.
  int insert(const double* key) {
    for (std::size_t s = home(key);; s = (s + 1) & mask_) {
      const double* at = slots_[s].key.load(std::memory_order_relaxed);
      if (at == nullptr && slots_[s].key.compare_exchange_strong(at, key, std::memory_order_relaxed))
        return static_cast<int>(s);
      if (at == key) return static_cast<int>(s);  // also when another thread has just inserted it here
    }
  }

  // Asks the processor to fetch key's first slot: a caller with many keys at hand prefetches them all
  // before inserting them, so that their cache misses overlap.
  void prefetch(const double* key) const { __builtin_prefetch(&slots_[home(key)]); }

  // Records that residual r uses the block in slot as camera (role 0) or point (role 1).
  void use(int slot, int role, int r) {
    std::atomic<int>& first = slots_[slot].first[role];
    int current = first.load(std::memory_order_relaxed);
    while (r < current && !first.compare_exchange_weak(current, r, std::memory_order_relaxed)) {
    }
  }

  // Once the inserting threads are done (an OpenMP region's closing barrier orders them before):
  // the slot of key, or -1 when it is not in the table (also for a null key).
  int find(const double* key) const {
    for (std::size_t s = home(key);; s = (s + 1) & mask_) {
      const double* at = slots_[s].key.load(std::memory_order_relaxed);
      if (at == nullptr) return -1;
      if (at == key) return static_cast<int>(s);
    }
  }

  long capacity() const { return static_cast<long>(mask_ + 1); }
  double* key(long slot) const { return const_cast<double*>(slots_[slot].key.load(std::memory_order_relaxed)); }
  int first_use(long slot, int role) const { return slots_[slot].first[role].load(std::memory_order_relaxed); }

 private:
  std::size_t home(const double* key) const {
    return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(key) >> 3) * 0x9E3779B97F4A7C15ull >> shift_);
  }

  int shift_ = 60;
  std::size_t mask_ = 15;
  struct Slot {  // 16 bytes: a key and its first uses share a cache line
    std::atomic<const double*> key;
    std::atomic<int> first[2];
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace ceres_cuda::detail
