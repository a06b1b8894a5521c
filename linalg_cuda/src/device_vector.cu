#include "linalg_cuda/device_vector.h"

#include <cstring>
#include <limits>
#include <string>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"

namespace linalg_cuda {
namespace {

template <typename T>
__global__ void fill_kernel(T* __restrict__ x, std::size_t n, T value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = value;
}

void require_same_size(std::size_t expected, std::size_t got, const char* what) {
  if (expected != got)
    throw DimensionMismatch(std::string("DeviceVector::") + what + ": size " + std::to_string(got) +
                            " does not match the vector's size " + std::to_string(expected));
}

}  // namespace

template <typename T>
DeviceVector<T>::DeviceVector(std::size_t size) : size_(size) {
  if (size_ > std::numeric_limits<std::size_t>::max() / sizeof(T))
    throw InvalidArgument("DeviceVector of " + std::to_string(size_) + " elements: the size overflows");
  data_ = static_cast<T*>(detail::device_malloc(size_ * sizeof(T), "DeviceVector"));
}

template <typename T>
DeviceVector<T>::DeviceVector(std::size_t size, T value) : DeviceVector(size) {
  fill(value);
}

template <typename T>
DeviceVector<T>::DeviceVector(const T* host, std::size_t size) : DeviceVector(size) {
  upload(host, size);
}

template <typename T>
DeviceVector<T>::~DeviceVector() {
  release();
}

template <typename T>
void DeviceVector<T>::release() noexcept {
  detail::device_free(data_);
  data_ = nullptr;
  size_ = 0;
}

template <typename T>
DeviceVector<T>::DeviceVector(DeviceVector&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

template <typename T>
DeviceVector<T>& DeviceVector<T>::operator=(DeviceVector&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

template <typename T>
DeviceVector<T> DeviceVector<T>::copy() const {
  DeviceVector<T> out(size_);
  out.assign(*this);
  return out;
}

template <typename T>
void DeviceVector<T>::assign(const DeviceVector& other) {
  require_same_size(size_, other.size_, "assign");
  if (size_ == 0) return;
  LINALG_CUDA_CHECK(cudaMemcpyAsync(data_, other.data_, size_ * sizeof(T), cudaMemcpyDeviceToDevice,
                                    thread_context().stream()));
}

template <typename T>
void DeviceVector<T>::resize(std::size_t size) {
  if (size == size_) return;
  release();
  *this = DeviceVector<T>(size);
}

template <typename T>
void DeviceVector<T>::fill(T value) {
  if (size_ == 0) return;
  cudaStream_t stream = thread_context().stream();
  const T zero{};
  if (std::memcmp(&value, &zero, sizeof(T)) == 0) {  // all-zero bits (not -0.0): a memset will do
    LINALG_CUDA_CHECK(cudaMemsetAsync(data_, 0, size_ * sizeof(T), stream));
    return;
  }
  fill_kernel<<<detail::blocks_for(size_), detail::kThreadsPerBlock, 0, stream>>>(data_, size_, value);
  LINALG_CUDA_CHECK_LAUNCH();
}

template <typename T>
void DeviceVector<T>::upload(const T* host, std::size_t size) {
  require_same_size(size_, size, "upload");
  if (size_ == 0) return;
  cudaStream_t stream = thread_context().stream();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(data_, host, size_ * sizeof(T), cudaMemcpyHostToDevice, stream));
  // The host buffer may be freed as soon as we return.
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <typename T>
void DeviceVector<T>::download(T* host, std::size_t size) const {
  require_same_size(size_, size, "download");
  if (size_ == 0) return;
  cudaStream_t stream = thread_context().stream();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(host, data_, size_ * sizeof(T), cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <typename T>
std::vector<T> DeviceVector<T>::to_std() const {
  std::vector<T> host(size_);
  download(host.data(), size_);
  return host;
}

template <typename T>
typename DeviceVector<T>::HostEigen DeviceVector<T>::to_eigen() const {
  HostEigen host(static_cast<Eigen::Index>(size_));
  download(host.data(), size_);
  return host;
}

template class DeviceVector<float>;
template class DeviceVector<double>;
template class DeviceVector<int>;

}  // namespace linalg_cuda
