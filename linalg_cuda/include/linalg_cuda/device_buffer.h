#pragma once
// Untyped RAII memory for the modules' own structures (structs of arrays, scan tables, staging):
// DeviceBuffer in GPU memory, PinnedBuffer in page-locked host memory (for fast asynchronous
// transfers), both through the library's memory cache (memory_cache.h). Move-only. reserve() grows
// and never shrinks, so a buffer reused across calls allocates only when a call needs more than any
// before it.
#include <cstddef>

namespace linalg_cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) { reserve(bytes); }
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Ensures at least `bytes` of capacity; contents are lost when it has to grow.
  void reserve(std::size_t bytes);
  std::size_t capacity() const { return capacity_; }
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* as() { return static_cast<T*>(data_); }
  template <typename T>
  const T* as() const { return static_cast<const T*>(data_); }

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) { reserve(bytes); }
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void reserve(std::size_t bytes);
  std::size_t capacity() const { return capacity_; }
  void* data() { return data_; }
  template <typename T>
  T* as() { return static_cast<T*>(data_); }
  template <typename T>
  const T* as() const { return static_cast<const T*>(data_); }

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace linalg_cuda
