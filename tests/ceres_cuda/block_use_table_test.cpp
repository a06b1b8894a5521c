// BlockUseTable (the problem analysis' table of parameter blocks) against std::unordered_map, on
// addresses laid out as real problems lay them out (one array as BAL's, separate allocations, strides
// of whole pages, which defeat a hash of the address' low bits), filled from all threads at once; and
// its first uses against a serial minimum.
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "block_use_table.h"

namespace {

using ceres_cuda::detail::BlockUseTable;

// Inserts every key (each several times, from all threads), then checks that each key has one slot
// of its own, that find gives it, and that absent keys are not found.
void expect_a_set(const std::vector<double*>& keys, const std::vector<double*>& absent) {
  BlockUseTable table(keys.size());
  const long n = static_cast<long>(keys.size());
  std::vector<int> slot(keys.size(), -1);
#pragma omp parallel for schedule(dynamic, 7)
  for (long k = 0; k < 3 * n; ++k) {
    const int s = table.insert(keys[k % n]);
    if (k < n) slot[k] = s;
  }
  std::unordered_map<int, const double*> owner;
  for (long k = 0; k < n; ++k) {
    ASSERT_GE(slot[k], 0);
    ASSERT_LT(slot[k], table.capacity());
    ASSERT_TRUE(owner.emplace(slot[k], keys[k]).second) << "two keys in one slot";
    ASSERT_EQ(table.find(keys[k]), slot[k]);
    ASSERT_EQ(table.key(slot[k]), keys[k]);
  }
  for (const double* key : absent) EXPECT_EQ(table.find(key), -1);
  long used = 0;
  for (long s = 0; s < table.capacity(); ++s) used += table.key(s) != nullptr;
  EXPECT_EQ(used, n);
}

TEST(BlockUseTable, FindsBlocksOfOneArrayInAnyOrder) {
  std::vector<double> storage(3 * 100000);
  std::vector<double*> keys, absent;
  for (std::size_t p = 0; p < storage.size(); p += 3) keys.push_back(&storage[p]);
  std::shuffle(keys.begin(), keys.end(), std::mt19937(5));
  for (std::size_t p = 1; p < storage.size(); p += 3 * 97) absent.push_back(&storage[p]);
  expect_a_set(keys, absent);
}

TEST(BlockUseTable, FindsSeparateAllocationsAndPageStrides) {
  std::vector<std::vector<double>> blocks(5000, std::vector<double>(9));
  std::vector<double*> keys;
  for (auto& b : blocks) keys.push_back(b.data());
  expect_a_set(keys, {static_cast<double*>(nullptr), &blocks[7][1]});

  std::vector<double> pages(512 * 4096);  // a block at the start of every 4 KiB
  std::vector<double*> strided, absent;
  for (std::size_t p = 0; p < pages.size(); p += 512) strided.push_back(&pages[p]);
  for (std::size_t p = 256; p < pages.size(); p += 512 * 31) absent.push_back(&pages[p]);
  expect_a_set(strided, absent);
}

TEST(BlockUseTable, EmptyAndSingle) {
  expect_a_set({}, {});
  double x[3];
  expect_a_set({x}, {x + 1});
}

TEST(BlockUseTable, FirstUsesAreTheSmallestResidualOfEachRole) {
  // Residual r uses block camera[r] as camera and point[r] as point; some blocks play both roles.
  constexpr int kBlocks = 20000, kResiduals = 300000;
  std::vector<double> storage(3 * kBlocks);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pick(0, kBlocks - 1);
  std::vector<int> camera(kResiduals), point(kResiduals);
  for (int r = 0; r < kResiduals; ++r) {
    camera[r] = pick(rng) % 500;  // few cameras, used often
    point[r] = pick(rng);
  }
  BlockUseTable table(kBlocks);
#pragma omp parallel for schedule(dynamic, 64)
  for (int r = 0; r < kResiduals; ++r) {
    table.use(table.insert(&storage[3 * camera[r]]), 0, r);
    table.use(table.insert(&storage[3 * point[r]]), 1, r);
  }
  std::vector<int> first_camera(kBlocks, INT_MAX), first_point(kBlocks, INT_MAX);
  for (int r = kResiduals - 1; r >= 0; --r) {
    first_camera[camera[r]] = r;
    first_point[point[r]] = r;
  }
  for (int b = 0; b < kBlocks; ++b) {
    const int s = table.find(&storage[3 * b]);
    if (first_camera[b] == INT_MAX && first_point[b] == INT_MAX) {
      EXPECT_EQ(s, -1);
      continue;
    }
    ASSERT_GE(s, 0);
    EXPECT_EQ(table.first_use(s, 0), first_camera[b] == INT_MAX ? BlockUseTable::kNotUsed : first_camera[b]);
    EXPECT_EQ(table.first_use(s, 1), first_point[b] == INT_MAX ? BlockUseTable::kNotUsed : first_point[b]);
  }
}

}  // namespace
