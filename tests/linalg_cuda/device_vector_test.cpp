// DeviceVector<float> and DeviceVector<double>: host round trips (std::vector, Eigen, raw pointers),
// fill, deep copies, size checks, moves and resize. Tests that touch the GPU skip without a device;
// the empty-vector checks make no CUDA call and run everywhere.
#include "linalg_cuda/device_vector.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "linalg_cuda/errors.h"
#include "test_support.h"

namespace linalg_cuda {
namespace {

const std::size_t kSizes[] = {0, 1, 31, 33, 1000, std::size_t(1) << 20};

template <typename T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> uniform(T(-1), T(1));
  std::vector<T> out(n);
  for (T& v : out) v = uniform(rng);
  return out;
}

template <typename T>
typename DeviceVector<T>::HostEigen random_eigen(std::size_t n, unsigned seed) {
  const std::vector<T> values = random_values<T>(n, seed);
  typename DeviceVector<T>::HostEigen out(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) out[static_cast<Eigen::Index>(i)] = values[i];
  return out;
}

// Bit-for-bit equality (a transfer must not change a single bit).
template <typename T>
::testing::AssertionResult same_bits(const std::vector<T>& expected, const std::vector<T>& actual) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << "sizes differ: " << expected.size() << " vs " << actual.size();
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (std::memcmp(&expected[i], &actual[i], sizeof(T)) != 0)
      return ::testing::AssertionFailure() << "entry " << i << ": expected " << expected[i] << ", got " << actual[i];
  return ::testing::AssertionSuccess();
}

template <typename T>
std::vector<T> to_std(const typename DeviceVector<T>::HostEigen& v) {
  return std::vector<T>(v.data(), v.data() + v.size());
}

template <typename T>
::testing::AssertionResult all_equal(const std::vector<T>& values, T expected) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] != expected)
      return ::testing::AssertionFailure() << "entry " << i << " is " << values[i] << ", expected " << expected;
  return ::testing::AssertionSuccess();
}

template <typename T>
class DeviceVectorTest : public ::testing::Test {};

using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DeviceVectorTest, Scalars);

// ---- no device needed: empty vectors never allocate or launch -------------------------------------

TYPED_TEST(DeviceVectorTest, EmptyVectorNeedsNoDevice) {
  using T = TypeParam;
  DeviceVector<T> v;
  EXPECT_EQ(v.size(), 0u);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.data(), nullptr);
  EXPECT_TRUE(v.to_std().empty());
  EXPECT_EQ(v.to_eigen().size(), 0);
  v.fill(T(3));  // no-op
  v.upload(std::vector<T>{});
  v.download(nullptr, 0);

  DeviceVector<T> sized(std::size_t(0), T(5));
  EXPECT_TRUE(sized.empty());
  DeviceVector<T> copy = v.copy();
  EXPECT_TRUE(copy.empty());
  copy.assign(v);
  v.resize(0);
  EXPECT_TRUE(v.empty());

  DeviceVector<T> moved(std::move(v));
  EXPECT_TRUE(moved.empty());
  EXPECT_TRUE(v.empty());
}

TYPED_TEST(DeviceVectorTest, EmptyVectorSizeMismatchThrowsWithoutDevice) {
  using T = TypeParam;
  DeviceVector<T> v;
  const std::vector<T> one{T(1)};
  typename DeviceVector<T>::HostEigen two(2);
  two.setZero();
  T buffer[3] = {};
  EXPECT_THROW(v.upload(one), DimensionMismatch);
  EXPECT_THROW(v.upload(two), DimensionMismatch);
  EXPECT_THROW(v.upload(buffer, 3), DimensionMismatch);
  EXPECT_THROW(v.download(buffer, 3), DimensionMismatch);
  EXPECT_TRUE(v.empty());
}

// ---- round trips -----------------------------------------------------------------------------------

TYPED_TEST(DeviceVectorTest, RoundTripFromStdVector) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (const std::size_t n : kSizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    const std::vector<T> host = random_values<T>(n, 11 + static_cast<unsigned>(n));
    const DeviceVector<T> device(host);
    EXPECT_EQ(device.size(), n);
    EXPECT_EQ(device.empty(), n == 0);
    EXPECT_TRUE(same_bits(host, device.to_std()));
    EXPECT_TRUE(same_bits(host, to_std<T>(device.to_eigen())));

    std::vector<T> downloaded(n, T(-7));
    device.download(downloaded.data(), n);
    EXPECT_TRUE(same_bits(host, downloaded));
  }
}

TYPED_TEST(DeviceVectorTest, RoundTripFromEigenAndPointer) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (const std::size_t n : kSizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    const typename DeviceVector<T>::HostEigen host = random_eigen<T>(n, 23 + static_cast<unsigned>(n));
    const std::vector<T> expected = to_std<T>(host);

    const DeviceVector<T> from_eigen(host);
    EXPECT_EQ(from_eigen.size(), n);
    const typename DeviceVector<T>::HostEigen back = from_eigen.to_eigen();
    ASSERT_EQ(back.size(), static_cast<Eigen::Index>(n));
    EXPECT_TRUE(same_bits(expected, to_std<T>(back)));

    const DeviceVector<T> from_pointer(host.data(), n);
    EXPECT_TRUE(same_bits(expected, from_pointer.to_std()));
  }
}

TYPED_TEST(DeviceVectorTest, UploadOverwritesContents) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (const std::size_t n : kSizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    DeviceVector<T> device(n, T(4));
    const std::vector<T> first = random_values<T>(n, 31 + static_cast<unsigned>(n));
    device.upload(first);
    EXPECT_TRUE(same_bits(first, device.to_std()));

    const typename DeviceVector<T>::HostEigen second = random_eigen<T>(n, 37 + static_cast<unsigned>(n));
    device.upload(second);
    EXPECT_TRUE(same_bits(to_std<T>(second), device.to_std()));

    const std::vector<T> third = random_values<T>(n, 41 + static_cast<unsigned>(n));
    device.upload(third.data(), n);
    EXPECT_TRUE(same_bits(third, device.to_std()));
  }
}

// ---- fill ------------------------------------------------------------------------------------------

TYPED_TEST(DeviceVectorTest, FillZeroAndNonZero) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (const std::size_t n : kSizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    DeviceVector<T> v(random_values<T>(n, 43 + static_cast<unsigned>(n)));
    v.fill(T(0));
    EXPECT_TRUE(all_equal(v.to_std(), T(0)));
    v.fill(T(-2.5));
    EXPECT_TRUE(all_equal(v.to_std(), T(-2.5)));
    v.fill(T(1e-3));
    EXPECT_TRUE(all_equal(v.to_std(), T(1e-3)));
    v.fill(T(0));  // zero after non-zero (the memset path must overwrite everything)
    EXPECT_TRUE(all_equal(v.to_std(), T(0)));

    EXPECT_TRUE(all_equal(DeviceVector<T>(n, T(0)).to_std(), T(0)));
    EXPECT_TRUE(all_equal(DeviceVector<T>(n, T(3.25)).to_std(), T(3.25)));
  }
}

TYPED_TEST(DeviceVectorTest, FillNegativeZeroKeepsItsSign) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  DeviceVector<T> v(100, T(1));
  v.fill(T(-0.0));
  for (const T x : v.to_std()) EXPECT_TRUE(x == T(0) && std::signbit(x));
}

// ---- copies ----------------------------------------------------------------------------------------

TYPED_TEST(DeviceVectorTest, CopyIsDeep) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (const std::size_t n : kSizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    const std::vector<T> host = random_values<T>(n, 47 + static_cast<unsigned>(n));
    DeviceVector<T> original(host);
    DeviceVector<T> copy = original.copy();
    ASSERT_EQ(copy.size(), n);
    if (n > 0) {
      EXPECT_NE(copy.data(), original.data());
    }
    EXPECT_TRUE(same_bits(host, copy.to_std()));

    copy.fill(T(9));
    EXPECT_TRUE(same_bits(host, original.to_std()));
    EXPECT_TRUE(all_equal(copy.to_std(), T(9)));

    original.fill(T(-1));
    EXPECT_TRUE(all_equal(copy.to_std(), T(9)));
  }
}

TYPED_TEST(DeviceVectorTest, AssignCopiesContentsWithoutSharing) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  for (const std::size_t n : kSizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    const std::vector<T> host = random_values<T>(n, 53 + static_cast<unsigned>(n));
    DeviceVector<T> source(host);
    DeviceVector<T> target(n, T(5));
    const T* target_data = target.data();
    target.assign(source);
    EXPECT_EQ(target.data(), target_data);  // no reallocation
    EXPECT_TRUE(same_bits(host, target.to_std()));
    source.fill(T(2));
    EXPECT_TRUE(same_bits(host, target.to_std()));
  }
}

// ---- size mismatches -------------------------------------------------------------------------------

TYPED_TEST(DeviceVectorTest, SizeMismatchesThrowAndLeaveContentsUnchanged) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  using HostEigen = typename DeviceVector<T>::HostEigen;
  const std::vector<T> host = random_values<T>(5, 59);
  DeviceVector<T> v(host);

  DeviceVector<T> shorter(4, T(1));
  DeviceVector<T> longer(6, T(1));
  DeviceVector<T> empty;
  EXPECT_THROW(v.assign(shorter), DimensionMismatch);
  EXPECT_THROW(v.assign(longer), DimensionMismatch);
  EXPECT_THROW(v.assign(empty), DimensionMismatch);
  EXPECT_THROW(empty.assign(v), DimensionMismatch);

  EXPECT_THROW(v.upload(std::vector<T>(4, T(1))), DimensionMismatch);
  EXPECT_THROW(v.upload(std::vector<T>(6, T(1))), DimensionMismatch);
  const HostEigen four = HostEigen::Constant(4, T(1));
  const HostEigen six = HostEigen::Constant(6, T(1));
  EXPECT_THROW(v.upload(four), DimensionMismatch);
  EXPECT_THROW(v.upload(six), DimensionMismatch);
  std::vector<T> buffer(6, T(1));
  EXPECT_THROW(v.upload(buffer.data(), 4), DimensionMismatch);
  EXPECT_THROW(v.upload(buffer.data(), 6), DimensionMismatch);
  EXPECT_THROW(v.download(buffer.data(), 4), DimensionMismatch);
  EXPECT_THROW(v.download(buffer.data(), 6), DimensionMismatch);
  EXPECT_TRUE(all_equal(buffer, T(1)));  // a refused download writes nothing

  EXPECT_EQ(v.size(), 5u);
  EXPECT_TRUE(same_bits(host, v.to_std()));
}

// ---- moves -----------------------------------------------------------------------------------------

TYPED_TEST(DeviceVectorTest, MoveConstructorTakesStorageAndEmptiesSource) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  const std::vector<T> host = random_values<T>(1000, 61);
  DeviceVector<T> source(host);
  const T* storage = source.data();

  DeviceVector<T> target(std::move(source));
  EXPECT_EQ(target.data(), storage);
  EXPECT_EQ(target.size(), 1000u);
  EXPECT_TRUE(same_bits(host, target.to_std()));
  EXPECT_TRUE(source.empty());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(source.size(), 0u);
  EXPECT_EQ(source.data(), nullptr);

  // The moved-from vector is still usable.
  source.resize(3);
  source.fill(T(2));
  EXPECT_TRUE(all_equal(source.to_std(), T(2)));
  EXPECT_TRUE(same_bits(host, target.to_std()));
}

TYPED_TEST(DeviceVectorTest, MoveAssignmentTakesStorageAndEmptiesSource) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  const std::vector<T> host = random_values<T>(33, 67);
  DeviceVector<T> source(host);
  const T* storage = source.data();
  DeviceVector<T> target(31, T(8));  // its old storage is released by the assignment

  target = std::move(source);
  EXPECT_EQ(target.data(), storage);
  EXPECT_EQ(target.size(), 33u);
  EXPECT_TRUE(same_bits(host, target.to_std()));
  EXPECT_TRUE(source.empty());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(source.data(), nullptr);

  DeviceVector<T> empty;
  target = std::move(empty);
  EXPECT_TRUE(target.empty());
  EXPECT_TRUE(target.to_std().empty());
}

// ---- resize ----------------------------------------------------------------------------------------

TYPED_TEST(DeviceVectorTest, Resize) {
  REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  DeviceVector<T> v(random_values<T>(33, 71));
  const T* storage = v.data();

  v.resize(33);  // same size: no reallocation
  EXPECT_EQ(v.size(), 33u);
  EXPECT_EQ(v.data(), storage);

  for (const std::size_t n : kSizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    v.resize(n);
    EXPECT_EQ(v.size(), n);
    EXPECT_EQ(v.empty(), n == 0);
    const std::vector<T> host = random_values<T>(n, 73 + static_cast<unsigned>(n));
    v.upload(host);
    EXPECT_TRUE(same_bits(host, v.to_std()));
  }
  v.resize(0);
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(v.to_std().empty());
  v.resize(7);
  v.fill(T(1.5));
  EXPECT_TRUE(all_equal(v.to_std(), T(1.5)));
}

}  // namespace
}  // namespace linalg_cuda
