#pragma once
// A stable counting sort on all OpenMP threads, for the orderings of the problem analysis (residuals
// camera by camera, blocks numbered by first use) at millions of items: each thread counts its own
// run of items per bucket, the runs' offsets go bucket by bucket and, within a bucket, thread by
// thread (so the items' order is kept), then each thread places its run's items straight into their
// places. The result does not depend on the number of threads.
#include <omp.h>

#include <cstddef>
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
  std::vector<long> offsets;  // thread t's counts, then its next positions: [t * buckets + b]
  const std::size_t width = static_cast<std::size_t>(buckets);
#pragma omp parallel
  {
    const int team = omp_get_num_threads(), t = omp_get_thread_num();
#pragma omp single
    offsets.assign(static_cast<std::size_t>(team) * width, 0);
    const long begin = count * t / team, end = count * (t + 1) / team;
    long* mine = offsets.data() + static_cast<std::size_t>(t) * width;
    for (long i = begin; i < end; ++i)
      if (const int b = bucket(i); b >= 0) ++mine[b];
#pragma omp barrier
#pragma omp single
    {
      long running = 0;
      for (std::size_t b = 0; b < width; ++b) {
        start[b] = running;
        for (int u = 0; u < team; ++u) {
          long& slot = offsets[static_cast<std::size_t>(u) * width + b];
          const long n = slot;
          slot = running;
          running += n;
        }
      }
      start[width] = running;
    }
    for (long i = begin; i < end; ++i)
      if (const int b = bucket(i); b >= 0) place(i, mine[b]++);
  }
  return start;
}

}  // namespace ceres_cuda::detail
