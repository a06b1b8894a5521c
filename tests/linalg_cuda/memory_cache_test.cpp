// The memory cache (memory_cache.h): freed blocks serve the next request of their size class, a reused
// block waits for the kernels that used it, large blocks and release_cached_memory() go to the driver.
#include "linalg_cuda/memory_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "late_write.h"
#include "linalg_cuda/backend.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "test_support.h"

namespace linalg_cuda {
namespace {

#define REQUIRE_MEMORY_CACHE()                                                                     \
  do {                                                                                             \
    REQUIRE_CUDA_DEVICE();                                                                         \
    const char* value = std::getenv("LINALG_CUDA_MEMORY_CACHE");                                   \
    if (value != nullptr && std::strcmp(value, "0") == 0) GTEST_SKIP() << "LINALG_CUDA_MEMORY_CACHE=0"; \
  } while (0)

TEST(MemoryCache, AFreedBlockServesTheNextRequestOfItsClass) {
  REQUIRE_MEMORY_CACHE();
  release_cached_memory();
  void* first = nullptr;
  {
    DeviceBuffer a(3000);
    first = a.data();
  }
  EXPECT_GE(memory_cache_stats().idle_device_bytes, 3000u);
  const long hits = memory_cache_stats().hits;
  DeviceBuffer b(3070);  // the same class: sizes in (2048, 4096] round up to multiples of 512
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(memory_cache_stats().hits, hits + 1);
  DeviceBuffer c(3070);  // none idle now: a block of its own
  EXPECT_NE(c.data(), first);
}

TEST(MemoryCache, PinnedBlocksAreReusedToo) {
  REQUIRE_MEMORY_CACHE();
  release_cached_memory();
  void* first = nullptr;
  {
    PinnedBuffer a(8192);
    first = a.data();
  }
  EXPECT_GE(memory_cache_stats().idle_pinned_bytes, 8192u);
  PinnedBuffer b(8000);
  EXPECT_EQ(b.data(), first);
}

// A kernel on another stream still writes the first vector when it is freed; the second vector,
// given the same block, is written by the host and read back: the cache must have waited for the
// kernel, which would otherwise overwrite the host's values 20 ms later.
TEST(MemoryCache, AReusedBlockWaitsForTheKernelsThatUsedIt) {
  REQUIRE_MEMORY_CACHE();
  release_cached_memory();
  constexpr std::size_t n = 1 << 14;
  cudaStream_t other = nullptr;
  LINALG_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  const double* first = nullptr;
  {
    DeviceVector<double> a(n);
    first = a.data();
    cache_test::launch_late_write(a.data(), n, 1.0, 20000.0, other);
  }
  DeviceVector<double> b(n);
  EXPECT_EQ(b.data(), first);
  const std::vector<double> twos(n, 2.0);
  b.upload(twos.data(), n);
  LINALG_CUDA_CHECK(cudaStreamSynchronize(other));
  EXPECT_EQ(b.to_std(), twos);
  LINALG_CUDA_CHECK(cudaStreamDestroy(other));
}

TEST(MemoryCache, LargeBlocksAndReleasedOnesGoBackToTheDriver) {
  REQUIRE_MEMORY_CACHE();
  release_cached_memory();
  { DeviceBuffer large(std::size_t(65) << 20); }
  EXPECT_EQ(memory_cache_stats().idle_device_bytes, 0u);
  {
    DeviceBuffer small(4096);
    PinnedBuffer pinned(4096);
  }
  EXPECT_GT(memory_cache_stats().idle_device_bytes, 0u);
  EXPECT_GT(memory_cache_stats().idle_pinned_bytes, 0u);
  release_cached_memory();
  EXPECT_EQ(memory_cache_stats().idle_device_bytes, 0u);
  EXPECT_EQ(memory_cache_stats().idle_pinned_bytes, 0u);
}

}  // namespace
}  // namespace linalg_cuda
