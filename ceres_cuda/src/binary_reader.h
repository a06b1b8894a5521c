#pragma once
// A binary file read whole into memory, and a cursor over it whose every read is checked against the
// bytes left: a file that ends early, a count its bytes cannot hold or a non-finite number is a
// linalg_cuda::ParseError naming the file and the byte offset. Cursors are cheap and independent, so
// records whose places are known can be parsed by many threads at once.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace ceres_cuda::detail {

class BinaryFile {
 public:
  // Reads `path` whole, in large chunks on all cores. Throws linalg_cuda::Error when it cannot be
  // opened or is not a regular file, linalg_cuda::ParseError when reading it fails.
  explicit BinaryFile(const std::string& path);
  const std::string& path() const { return path_; }
  const char* data() const { return data_.get(); }
  std::uint64_t size() const { return size_; }

 private:
  std::string path_;
  std::unique_ptr<char[]> data_;
  std::uint64_t size_ = 0;
};

class BinaryCursor {
 public:
  explicit BinaryCursor(const BinaryFile& file, std::uint64_t offset = 0) : file_(&file), offset_(offset) {}

  // `what` names the value in the error when the file ends before it ("a camera id").
  template <typename T>
  T read(const char* what) {
    T value;
    std::memcpy(&value, take(sizeof value, what), sizeof value);
    return value;
  }
  double finite(const char* what);
  // The next n bytes, passed over.
  const char* take(std::uint64_t n, const char* what);
  // The bytes before the next NUL, passed over with the NUL.
  std::string_view until_nul(const char* what);
  // A count of records of at least `bytes_each` bytes, checked against what the file has left.
  std::uint64_t count(std::uint64_t bytes_each, const char* what);
  // Throws unless the cursor is at the file's end; `last` names the records before it.
  void expect_end(const char* last) const;

  std::uint64_t offset() const { return offset_; }
  [[noreturn]] void fail(const std::string& message) const { fail_at(offset_, message); }
  [[noreturn]] void fail_at(std::uint64_t at, const std::string& message) const;

 private:
  const BinaryFile* file_;
  std::uint64_t offset_;
};

}  // namespace ceres_cuda::detail
