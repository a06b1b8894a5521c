// CudaStream and CudaEvent: a copy on one stream, ordered before work on another by an event, is seen
// complete there; moved-from owners hold nothing (and destroying them is safe).
#include "linalg_cuda/cuda_stream.h"

#include <numeric>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/device_buffer.h"
#include "test_support.h"

namespace linalg_cuda {
namespace {

TEST(CudaStream, EventOrdersACopyOnOneStreamBeforeWorkOnAnother) {
  REQUIRE_CUDA_DEVICE();
  CudaStream uploads, work;
  CudaEvent uploaded;
  const std::size_t n = std::size_t(1) << 22;
  PinnedBuffer host(n * sizeof(int)), back(n * sizeof(int));
  std::iota(host.as<int>(), host.as<int>() + n, 7);
  DeviceBuffer first(n * sizeof(int)), second(n * sizeof(int));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(first.data(), host.data(), n * sizeof(int), cudaMemcpyHostToDevice, uploads.get()));
  LINALG_CUDA_CHECK(cudaEventRecord(uploaded.get(), uploads.get()));
  LINALG_CUDA_CHECK(cudaStreamWaitEvent(work.get(), uploaded.get(), 0));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(second.data(), first.data(), n * sizeof(int), cudaMemcpyDeviceToDevice, work.get()));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(back.data(), second.data(), n * sizeof(int), cudaMemcpyDeviceToHost, work.get()));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(work.get()));
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back.as<int>()[i], static_cast<int>(i + 7)) << i;
}

TEST(CudaStream, MovesTransferOwnership) {
  REQUIRE_CUDA_DEVICE();
  CudaStream a;
  const cudaStream_t handle = a.get();
  CudaStream b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.get(), handle);
  CudaStream c;
  c = std::move(b);
  EXPECT_EQ(c.get(), handle);
  LINALG_CUDA_CHECK(cudaStreamSynchronize(c.get()));

  CudaEvent e;
  const cudaEvent_t event = e.get();
  CudaEvent f(std::move(e));
  EXPECT_EQ(e.get(), nullptr);
  EXPECT_EQ(f.get(), event);
  LINALG_CUDA_CHECK(cudaEventRecord(f.get(), c.get()));
  LINALG_CUDA_CHECK(cudaEventSynchronize(f.get()));
}

}  // namespace
}  // namespace linalg_cuda
