// Allocations larger than the device: DeviceVector, DeviceBuffer and the CG behind them fail with
// DeviceMemoryError, which says how much was needed and how much there was; nothing stays allocated
// and the device goes on working (the next allocation and a CG solve succeed). A size whose byte count
// overflows is an InvalidArgument before any CUDA call, and runs everywhere.
#include <cstddef>
#include <limits>
#include <string>

#include <Eigen/Core>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "linalg_cuda/backend.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/poisson.h"
#include "linalg_cuda/solve.h"
#include "test_support.h"

namespace linalg_cuda {
namespace {

// More bytes than the device has in all.
std::size_t beyond_the_device() {
  std::size_t free_bytes = 0, total_bytes = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  return 2 * total_bytes + (std::size_t(1) << 30);
}

void expect_device_still_works() {
  DeviceVector<double> v(1000, 2.5);
  EXPECT_EQ(v.to_std()[999], 2.5);
  const CsrMatrix a = poisson2d(32);
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(a.rows());
  Eigen::VectorXd x;
  CgOptions o;
  o.backend = Backend::Cuda;
  o.stop.relative_tolerance = 1e-10;
  const SolverSummary s = solve(a, b, x, o);
  EXPECT_EQ(s.termination, CgTermination::Converged);
}

TEST(DeviceMemory, AVectorBeyondTheDeviceFailsTypedAndTheDeviceGoesOn) {
  REQUIRE_CUDA_DEVICE();
  const std::size_t bytes = beyond_the_device();
  const std::size_t free_before = free_device_memory();
  try {
    DeviceVector<double> v(bytes / sizeof(double));
    FAIL() << "allocated " << bytes << " bytes";
  } catch (const DeviceMemoryError& e) {
    EXPECT_EQ(e.needed_bytes(), bytes / sizeof(double) * sizeof(double));
    EXPECT_LE(e.free_bytes(), e.total_bytes());
    EXPECT_GT(e.total_bytes(), 0u);
    EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GiB needed"), std::string::npos) << e.what();
  }
  // Nothing is held: the free memory is what it was (to within other users' allocations).
  EXPECT_GE(free_device_memory() + (std::size_t(64) << 20), free_before);
  expect_device_still_works();
}

TEST(DeviceMemory, ABufferThatCannotGrowHoldsNothingAndGrowsLater) {
  REQUIRE_CUDA_DEVICE();
  DeviceBuffer buffer(1024);
  EXPECT_THROW(buffer.reserve(beyond_the_device()), DeviceMemoryError);
  EXPECT_EQ(buffer.capacity(), 0u);
  buffer.reserve(4096);
  EXPECT_GE(buffer.capacity(), 4096u);
  expect_device_still_works();
}

TEST(DeviceMemory, ASizeWhoseBytesOverflowIsAnInvalidArgument) {
  EXPECT_THROW(DeviceVector<double>(std::numeric_limits<std::size_t>::max() / 4), InvalidArgument);
}

}  // namespace
}  // namespace linalg_cuda
