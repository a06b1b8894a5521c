// PointerIndex (the problem analysis' table of parameter blocks) against std::unordered_map on
// addresses laid out as real problems lay them out: one array (BAL), separate allocations, and
// strides of whole pages, which defeat a hash of the address' low bits.
#include <algorithm>
#include <cstddef>
#include <random>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "pointer_index.h"

namespace {

using ceres_cuda::detail::PointerIndex;

void expect_same_as_a_map(const std::vector<double*>& keys, const std::vector<double*>& absent) {
  const PointerIndex index(keys);
  std::unordered_map<const double*, int> map;
  for (int b = 0; b < static_cast<int>(keys.size()); ++b) map.emplace(keys[b], b);
  for (const double* key : keys) ASSERT_EQ(index.find(key), map.at(key));
  for (const double* key : absent) EXPECT_EQ(index.find(key), -1);
}

TEST(PointerIndex, NumbersBlocksOfOneArrayInAnyOrder) {
  std::vector<double> storage(3 * 100000);
  std::vector<double*> keys, absent;
  for (std::size_t p = 0; p < storage.size(); p += 3) keys.push_back(&storage[p]);
  std::shuffle(keys.begin(), keys.end(), std::mt19937(5));
  for (std::size_t p = 1; p < storage.size(); p += 3 * 97) absent.push_back(&storage[p]);
  expect_same_as_a_map(keys, absent);
}

TEST(PointerIndex, NumbersSeparateAllocationsAndPageStrides) {
  std::vector<std::vector<double>> blocks(5000, std::vector<double>(9));
  std::vector<double*> keys;
  for (auto& b : blocks) keys.push_back(b.data());
  expect_same_as_a_map(keys, {static_cast<double*>(nullptr), &blocks[7][1]});

  std::vector<double> pages(512 * 4096);  // a block at the start of every 4 KiB
  std::vector<double*> strided, absent;
  for (std::size_t p = 0; p < pages.size(); p += 512) strided.push_back(&pages[p]);
  for (std::size_t p = 256; p < pages.size(); p += 512 * 31) absent.push_back(&pages[p]);
  expect_same_as_a_map(strided, absent);
}

TEST(PointerIndex, EmptyAndSingle) {
  expect_same_as_a_map({}, {});
  double x[3];
  expect_same_as_a_map({x}, {x + 1});
}

}  // namespace
