// CudaStream and CudaEvent: a copy on one stream, ordered before work on another by an event, is seen
// complete there; moved-from owners hold nothing (and destroying them is safe). The thread's
// CudaContext: its cuBLAS handle is captured into graphs without allocation nodes.
#include "linalg_cuda/cuda_stream.h"

#include <exception>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
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

// The CG's device loop puts its iteration, a cuBLAS gemv for a dense operator included, in the body of
// a conditional graph node, which cannot hold the memory allocation nodes that cuBLAS records when it
// has no workspace of its own: the context's handle must have one. On a new thread, so that the
// handle is first asked for while the stream captures (its creation allocates outside the graph).
TEST(CudaContext, CublasIsCapturedWithoutAllocationNodes) {
  REQUIRE_CUDA_DEVICE();
  const int n = 300;
  DeviceVector<double> a(std::size_t(n) * n), x(n), y(n);
  a.fill(1.0);
  x.fill(2.0);
  LINALG_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cudaGraphNodeType> types;
  std::vector<double> result;
  std::string error;
  std::thread([&] {
    try {
      CudaContext& context = thread_context();
      const double one = 1.0, zero = 0.0;
      cudaGraph_t graph = nullptr;
      LINALG_CUDA_CHECK(cudaStreamBeginCapture(context.stream(), cudaStreamCaptureModeThreadLocal));
      const cublasStatus_t status =
          cublasDgemv(context.cublas(), CUBLAS_OP_N, n, n, &one, a.data(), n, x.data(), 1, &zero, y.data(), 1);
      LINALG_CUDA_CHECK(cudaStreamEndCapture(context.stream(), &graph));
      LINALG_CUDA_CHECK(status);
      std::size_t count = 0;
      LINALG_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
      std::vector<cudaGraphNode_t> nodes(count);
      LINALG_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
      for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type{};
        LINALG_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
        types.push_back(type);
      }
      cudaGraphExec_t exec = nullptr;
      LINALG_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      LINALG_CUDA_CHECK(cudaGraphLaunch(exec, context.stream()));
      result = y.to_std();
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }).join();
  ASSERT_EQ(error, "");
  EXPECT_FALSE(types.empty());
  for (cudaGraphNodeType type : types) {
    EXPECT_NE(type, cudaGraphNodeTypeMemAlloc);
    EXPECT_NE(type, cudaGraphNodeTypeMemFree);
  }
  ASSERT_EQ(result.size(), std::size_t(n));
  for (double value : result) EXPECT_EQ(value, 2.0 * n);
}

}  // namespace
}  // namespace linalg_cuda
