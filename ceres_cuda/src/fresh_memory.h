#pragma once
// Fresh memory for the set-up's large arrays. The first touch of fresh memory costs a page fault per
// page, in which the kernel clears the page; the problem analysis and the index fill gigabytes at tens
// of millions of residuals, and on 4 KiB pages faulted on one thread (a std::vector's zero-fill, or
// Ceres copying its residual list) those faults can take longer than the work on the values. Arrays
// that the set-up fills on all threads are left uninitialised, so that their first touches fault in
// parallel. Where the user asks (SolveOptions::advise_huge_pages), large arrays are also advised to be
// 2 MiB pages, and a vector's pages are faulted in on all threads before it is filled; both are hints
// to Linux, and where they are not taken nothing else changes.
#include <omp.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ceres_cuda::detail {

// How many running Solves asked for the advice (it is process-wide: the pages are the process's).
inline std::atomic<int>& huge_page_advice_requests() {
  static std::atomic<int> requests{0};
  return requests;
}

// For the lifetime of a Solve that asks for the advice.
class HugePageAdviceScope {
 public:
  explicit HugePageAdviceScope(bool wanted) : wanted_(wanted) {
    if (wanted_) huge_page_advice_requests().fetch_add(1);
  }
  ~HugePageAdviceScope() {
    if (wanted_) huge_page_advice_requests().fetch_sub(1);
  }
  HugePageAdviceScope(const HugePageAdviceScope&) = delete;
  HugePageAdviceScope& operator=(const HugePageAdviceScope&) = delete;

 private:
  bool wanted_;
};

// Where the advice is wanted: the whole 2 MiB pages inside [data, data + bytes), none if the range is
// small, advised to be huge pages and, with populate, faulted in on all threads. Call it before the
// memory is touched.
inline void prepare_fresh_memory(const void* data, std::size_t bytes, bool populate) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (huge_page_advice_requests().load(std::memory_order_relaxed) == 0) return;
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  if (bytes < 4 * kHugePage) return;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#if defined(MADV_POPULATE_WRITE)  // Linux 5.14; older kernels answer EINVAL, and the first touch faults
  if (!populate) return;
  const long pages = static_cast<long>((end - begin) / kHugePage);
#pragma omp parallel for schedule(static)
  for (long k = 0; k < pages; ++k) madvise(reinterpret_cast<void*>(begin + k * kHugePage), kHugePage, MADV_POPULATE_WRITE);
#endif
#else
  (void)data;
  (void)bytes;
  (void)populate;
#endif
}

// n values of a trivially constructible T, not initialised: for arrays the caller fills on all
// threads (whose first touches then fault in parallel).
template <class T>
std::unique_ptr<T[]> uninitialised_array(std::size_t n) {
  std::unique_ptr<T[]> array(new T[n]);
  prepare_fresh_memory(array.get(), n * sizeof(T), false);
  return array;
}

// Room for n values in the empty vector v, faulted in on all threads where the advice is wanted:
// filling it (a resize's zero-fill on one thread, a copy) then touches memory that is already there.
template <class T>
void reserve_fresh(std::vector<T>* v, std::size_t n) {
  v->reserve(n);
  prepare_fresh_memory(v->data(), n * sizeof(T), true);
}

}  // namespace ceres_cuda::detail
