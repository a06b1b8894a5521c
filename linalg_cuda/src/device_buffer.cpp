#include "linalg_cuda/device_buffer.h"

#include <utility>

#include "linalg_cuda/cuda_check.h"

namespace linalg_cuda {

DeviceBuffer::~DeviceBuffer() {
  detail::device_free(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    detail::device_free(data_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void DeviceBuffer::reserve(std::size_t bytes) {
  if (bytes <= capacity_) return;
  detail::device_free(data_);
  data_ = nullptr;
  capacity_ = 0;
  data_ = detail::device_malloc(bytes, "DeviceBuffer");
  capacity_ = bytes;
}

PinnedBuffer::~PinnedBuffer() {
  detail::pinned_free(data_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    detail::pinned_free(data_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void PinnedBuffer::reserve(std::size_t bytes) {
  if (bytes <= capacity_) return;
  detail::pinned_free(data_);
  data_ = nullptr;
  capacity_ = 0;
  data_ = detail::pinned_malloc(bytes);
  capacity_ = bytes;
}

}  // namespace linalg_cuda
