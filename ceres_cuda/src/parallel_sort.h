#pragma once
// A comparison sort on all OpenMP threads, for keys that have no small range to count them in (COLMAP's
// 64-bit point ids, in the order a hash map left them): each thread sorts a run of the values with
// std::sort, then runs are merged pairwise, the merges of a round in parallel. With a total order (no
// two values equal yet different) the result does not depend on the number of threads.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace ceres_cuda::detail {

template <typename T, typename Less = std::less<>>
void parallel_sort(std::vector<T>* values, const Less& less = Less()) {
  const std::size_t n = values->size();
  // Below this, starting the threads costs more than they save.
  constexpr std::size_t kSmallestRun = std::size_t(1) << 14;
  const int runs =
      static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(omp_get_max_threads()), n / kSmallestRun));
  if (runs <= 1) {
    std::sort(values->begin(), values->end(), less);
    return;
  }
  std::vector<std::size_t> bound(static_cast<std::size_t>(runs) + 1);
  for (int r = 0; r <= runs; ++r) bound[r] = n * static_cast<std::size_t>(r) / static_cast<std::size_t>(runs);
  T* from = values->data();
#pragma omp parallel for schedule(static)
  for (int r = 0; r < runs; ++r) std::sort(from + bound[r], from + bound[r + 1], less);
  std::vector<T> other(n);
  T* to = other.data();
  for (int width = 1; width < runs; width *= 2) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int r = 0; r < runs; r += 2 * width) {
      const std::size_t begin = bound[r], middle = bound[std::min(r + width, runs)],
                        end = bound[std::min(r + 2 * width, runs)];
      std::merge(from + begin, from + middle, from + middle, from + end, to + begin, less);
    }
    std::swap(from, to);
  }
  if (from != values->data()) values->swap(other);
}

}  // namespace ceres_cuda::detail
