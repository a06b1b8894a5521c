#pragma once
// A stable counting sort on all OpenMP threads, for the orderings of the problem analysis (residuals
// camera by camera, blocks numbered by first use) at millions of items: each thread counts its own
// run of items per bucket, the runs' offsets go bucket by bucket and, within a bucket, thread by
// thread (so the items' order is kept), then each thread places its run's items straight into their
// places. The result does not depend on the number of threads.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace ceres_cuda::detail {

// Orders items 0 .. count-1 by bucket(i) (in [0, buckets), or -1: i is left out), then by i: calls
// place(i, position) once for every item not left out, with its position in that order, and returns
// where each bucket starts (buckets + 1 entries, the last one the number of items placed). bucket is
// called twice per item and must give the same answer both times; place is called concurrently, for
// distinct positions. Neither may throw.
template <class Bucket, class Place>
std::vector<long> parallel_counting_sort(long count, int buckets, const Bucket& bucket, const Place& place) {
  std::vector<long> start(static_cast<std::size_t>(buckets) + 1, 0);
  // Thread t's counts, then its next positions: [t * buckets + b]. Left uninitialised, each thread
  // zeroing its own row: with a million buckets (a sort by block) the table is tens of megabytes.
  std::unique_ptr<long[]> offsets;
  const std::size_t width = static_cast<std::size_t>(buckets);
  // The table takes threads x buckets values: with many buckets, fewer threads, so that it stays within
  // a few times the items' count.
  const long most = std::max<long>(4 * static_cast<long>(width), count) / std::max<long>(1, static_cast<long>(width));
  const int threads = static_cast<int>(std::max<long>(1, std::min<long>(omp_get_max_threads(), most)));
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads(), t = omp_get_thread_num();
#pragma omp single
    offsets.reset(new long[static_cast<std::size_t>(team) * width]);
    const long begin = count * t / team, end = count * (t + 1) / team;
    long* mine = offsets.get() + static_cast<std::size_t>(t) * width;
    std::fill(mine, mine + width, 0L);
    for (long i = begin; i < end; ++i)
      if (const int b = bucket(i); b >= 0) ++mine[b];
#pragma omp barrier
    // Bucket totals over a range of buckets per thread, their running sum on one thread, then the
    // threads' offsets within each bucket, again a range of buckets per thread.
    const std::size_t first = width * t / team, last = width * (t + 1) / team;
    for (std::size_t b = first; b < last; ++b) {
      long total = 0;
      for (int u = 0; u < team; ++u) total += offsets[static_cast<std::size_t>(u) * width + b];
      start[b + 1] = total;
    }
#pragma omp barrier
#pragma omp single
    for (std::size_t b = 0; b < width; ++b) start[b + 1] += start[b];
    for (std::size_t b = first; b < last; ++b) {
      long running = start[b];
      for (int u = 0; u < team; ++u) {
        long& slot = offsets[static_cast<std::size_t>(u) * width + b];
        const long n = slot;
        slot = running;
        running += n;
      }
    }
#pragma omp barrier
    for (long i = begin; i < end; ++i)
      if (const int b = bucket(i); b >= 0) place(i, mine[b]++);
  }
  return start;
}

}  // namespace ceres_cuda::detail
