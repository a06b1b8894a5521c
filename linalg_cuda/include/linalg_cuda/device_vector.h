#pragma once
// DeviceVector<T>: a vector in GPU memory that owns it (RAII). Move-only: a copy on the device is an
// explicit call to copy(), so no hidden allocation or transfer happens. float and double.
#include <cstddef>
#include <vector>

#include <Eigen/Core>

namespace linalg_cuda {

template <typename T>
class DeviceVector {
 public:
  using value_type = T;
  using HostEigen = Eigen::Matrix<T, Eigen::Dynamic, 1>;

  DeviceVector() = default;
  explicit DeviceVector(std::size_t size);  // contents undefined
  DeviceVector(std::size_t size, T value);
  DeviceVector(const T* host, std::size_t size);
  explicit DeviceVector(const std::vector<T>& host) : DeviceVector(host.data(), host.size()) {}
  explicit DeviceVector(const HostEigen& host) : DeviceVector(host.data(), static_cast<std::size_t>(host.size())) {}
  ~DeviceVector();

  DeviceVector(DeviceVector&& other) noexcept;
  DeviceVector& operator=(DeviceVector&& other) noexcept;
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;

  // A new vector with the same contents (device-to-device copy).
  DeviceVector copy() const;
  // Copies other's contents into this vector, which must have the same size (no allocation).
  void assign(const DeviceVector& other);
  // New size; contents are undefined afterwards. Reallocates only when the size changes.
  void resize(std::size_t size);
  void fill(T value);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }

  // Host transfers; they synchronise the calling thread's stream. Sizes must match.
  void upload(const T* host, std::size_t size);
  void download(T* host, std::size_t size) const;
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void upload(const HostEigen& host) { upload(host.data(), static_cast<std::size_t>(host.size())); }
  std::vector<T> to_std() const;
  HostEigen to_eigen() const;

 private:
  void release() noexcept;
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

extern template class DeviceVector<float>;
extern template class DeviceVector<double>;
extern template class DeviceVector<int>;  // index arrays (CSR)

}  // namespace linalg_cuda
