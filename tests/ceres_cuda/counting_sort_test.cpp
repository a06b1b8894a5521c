// parallel_counting_sort against std::stable_sort on random input: the same order, the same bucket
// starts, whatever the number of threads (the problem analysis' orderings must not depend on it).
#include <omp.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "counting_sort.h"

namespace {

using ceres_cuda::detail::parallel_counting_sort;

void expect_stable_sort(const std::vector<int>& bucket, int buckets) {
  const long n = static_cast<long>(bucket.size());
  std::vector<long> expected;  // items not left out, by bucket then by index
  for (long i = 0; i < n; ++i)
    if (bucket[i] >= 0) expected.push_back(i);
  std::stable_sort(expected.begin(), expected.end(), [&](long a, long b) { return bucket[a] < bucket[b]; });
  std::vector<long> expected_start(buckets + 1, 0);
  for (const long i : expected) ++expected_start[bucket[i] + 1];
  std::partial_sum(expected_start.begin(), expected_start.end(), expected_start.begin());

  const int threads = omp_get_max_threads();
  for (const int team : {1, 2, 3, 8}) {
    SCOPED_TRACE(team);
    omp_set_num_threads(team);
    std::vector<long> order(expected.size(), -1);
    const std::vector<long> start = parallel_counting_sort(
        n, buckets, [&](long i) { return bucket[i]; }, [&](long i, long position) { order[position] = i; });
    EXPECT_EQ(start, expected_start);
    EXPECT_EQ(order, expected);
  }
  omp_set_num_threads(threads);
}

TEST(ParallelCountingSort, MatchesStableSort) {
  std::mt19937 rng(3);
  for (const int buckets : {1, 2, 7, 1000}) {
    SCOPED_TRACE(buckets);
    std::uniform_int_distribution<int> pick(-1, buckets - 1);  // -1: left out
    std::vector<int> bucket(100003);
    for (int& b : bucket) b = pick(rng);
    expect_stable_sort(bucket, buckets);
  }
}

TEST(ParallelCountingSort, SkewedSortedAndTinyInputs) {
  std::vector<int> skewed(50000, 3);
  for (std::size_t i = 0; i < skewed.size(); i += 101) skewed[i] = 0;
  expect_stable_sort(skewed, 5);
  std::vector<int> descending(20000);
  for (std::size_t i = 0; i < descending.size(); ++i) descending[i] = static_cast<int>((descending.size() - i) / 7);
  expect_stable_sort(descending, static_cast<int>(descending.size() / 7) + 1);
  expect_stable_sort({}, 4);
  expect_stable_sort({-1, -1}, 1);
  expect_stable_sort({2}, 3);
}

}  // namespace
