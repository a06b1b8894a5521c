// ceres_cuda::Solve when the device has not the memory a problem needs: the GPU engine's allocation
// fails with linalg_cuda::DeviceMemoryError, Solve runs the CPU engine instead (the reason logged,
// SolveDetails::path Cpu), the GPU engine's partial buffers are freed, and once the memory is there
// again the next Solve runs on the GPU with the same result.
#include <algorithm>
#include <cstddef>
#include <vector>

#include <gtest/gtest.h>

#include "ceres_cuda/solve.h"
#include "general_problems.h"
#include "linalg_cuda/backend.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/memory_cache.h"
#include "test_support.h"

namespace {

using ceres_cuda::Backend;
using ceres_cuda::SolveDetails;

// All of the device's free memory but `spare` bytes: one large buffer, then smaller ones, since
// fragmentation may refuse the exact figure in one piece and what one refused step leaves can exceed
// what a test needs.
std::vector<linalg_cuda::DeviceBuffer> take_device_memory(std::size_t spare) {
  std::vector<linalg_cuda::DeviceBuffer> taken;
  std::size_t most = ~std::size_t(0);
  for (;;) {
    const std::size_t free = linalg_cuda::free_device_memory();
    if (free <= spare + (std::size_t(1) << 20) || most < (std::size_t(1) << 20)) return taken;
    const std::size_t bytes = std::min(free - spare, most);
    try {
      taken.emplace_back(bytes);
    } catch (const linalg_cuda::DeviceMemoryError&) {
      most = bytes / 2;
    }
  }
}

TEST(DeviceMemorySolve, AProblemBeyondTheFreeMemoryRunsOnTheCpuEngineAndTheNextOnTheGpu) {
  REQUIRE_CUDA_DEVICE();
  // About 70000 observations: the Jacobian alone takes 13 MB of device memory.
  const ceres_cuda::BALProblem scene = general_test::random_scene(100, 20000, 31);
  general_test::GeneralProblem held = general_test::build(scene, general_test::Shape{});
  general_test::GeneralProblem free = general_test::build(scene, general_test::Shape{});
  ceres::Solver::Summary held_summary, free_summary;
  SolveDetails held_details, free_details;
  {
    // The cache's idle blocks (earlier tests') would serve the engine despite the hog.
    linalg_cuda::release_cached_memory();
    const std::vector<linalg_cuda::DeviceBuffer> hog = take_device_memory(std::size_t(8) << 20);
    ceres_cuda::Solve(general_test::options_for(held, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 3, true),
                      held.problem.get(), &held_summary, Backend::Cuda, &held_details);
  }
  EXPECT_EQ(held_details.path, SolveDetails::Path::Cpu);
  EXPECT_TRUE(held_summary.IsSolutionUsable()) << held_summary.message;
  ceres_cuda::Solve(general_test::options_for(free, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 3, true),
                    free.problem.get(), &free_summary, Backend::Cuda, &free_details);
  EXPECT_EQ(free_details.path, SolveDetails::Path::GenericGpu);
  EXPECT_EQ(free_summary.iterations.size(), held_summary.iterations.size());
  EXPECT_NEAR(free_summary.final_cost, held_summary.final_cost, 1e-8 * held_summary.final_cost);
}

}  // namespace
