#pragma once
// The number of each parameter block of a ceres::Problem, by its address: an open-addressing hash
// table (linear probing, Fibonacci hashing of the address) built on all OpenMP threads at once, then
// only read. The problem analysis numbers millions of blocks (4.5 million at Final-13682's size) and
// looks two up per residual; std::unordered_map had to be filled on one thread, one node allocation
// per block, which was the largest sequential step of the analysis (docs/ceres_cuda.md).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ceres_cuda::detail {

class PointerIndex {
 public:
  // Numbers keys[b] as b. The keys must be distinct and non-null (a ceres::Problem's parameter blocks).
  explicit PointerIndex(const std::vector<double*>& keys) {
    int bits = 4;
    while ((std::size_t{1} << bits) < keys.size() + keys.size() / 2) ++bits;  // load at most 2/3
    shift_ = 64 - bits;
    mask_ = (std::size_t{1} << bits) - 1;
    // Left uninitialised here and cleared on all threads below: at this size, memory first touched by
    // one thread is a cost of its own.
    slots_.reset(new Slot[mask_ + 1]);
    const long capacity = static_cast<long>(mask_ + 1), count = static_cast<long>(keys.size());
#pragma omp parallel
    {
#pragma omp for schedule(static)
      for (long s = 0; s < capacity; ++s) slots_[s].key.store(nullptr, std::memory_order_relaxed);
#pragma omp for schedule(static)
      for (long b = 0; b < count; ++b) {
        const double* key = keys[b];
        for (std::size_t s = home(key);; s = (s + 1) & mask_) {
          const double* expected = nullptr;
          if (slots_[s].key.compare_exchange_strong(expected, key, std::memory_order_relaxed)) {
            slots_[s].value = static_cast<int>(b);
            break;
          }
        }
      }
    }  // the region's closing barrier publishes the values to the readers
  }

  // The number of key, or -1 when it is not one of the keys.
  int find(const double* key) const {
    for (std::size_t s = home(key);; s = (s + 1) & mask_) {
      const double* at = slots_[s].key.load(std::memory_order_relaxed);
      if (at == nullptr) return -1;  // also for a null key
      if (at == key) return slots_[s].value;
    }
  }

 private:
  std::size_t home(const double* key) const {
    return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(key) >> 3) * 0x9E3779B97F4A7C15ull >> shift_);
  }

  int shift_ = 60;
  std::size_t mask_ = 15;
  struct Slot {  // a key and its value share a cache line
    std::atomic<const double*> key;
    int value;  // set where the slot holds a key
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace ceres_cuda::detail
