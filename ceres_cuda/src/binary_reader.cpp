#include "binary_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>

#include "linalg_cuda/errors.h"

namespace ceres_cuda::detail {
namespace {

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

BinaryFile::BinaryFile(const std::string& path) : path_(path) {
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw linalg_cuda::Error(path + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) throw linalg_cuda::Error(path + ": not a regular file");
  size_ = static_cast<std::uint64_t>(info.st_size);
  // Not value-initialised: the threads that read into the buffer are the ones that touch its pages.
  data_.reset(new char[std::max<std::uint64_t>(size_, 1)]);

  // Chunks of the page cache copied by many threads; the first chunk that fails, in file order, is the
  // one reported, so a failure reads the same at any thread count.
  constexpr std::uint64_t kChunk = std::uint64_t(8) << 20;
  const std::int64_t chunks = static_cast<std::int64_t>((size_ + kChunk - 1) / kChunk);
  std::int64_t bad_chunk = chunks;
  std::uint64_t bad_at = 0;
  int bad_errno = 0;
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    std::uint64_t at = static_cast<std::uint64_t>(c) * kChunk;
    const std::uint64_t end = std::min(size_, at + kChunk);
    while (at < end) {
      const ssize_t got = ::pread(fd.get(), data_.get() + at, end - at, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        const int error = got < 0 ? errno : 0;
#pragma omp critical(binary_file_failure)
        if (c < bad_chunk) {
          bad_chunk = c;
          bad_at = at;
          bad_errno = error;
        }
        break;
      }
      at += static_cast<std::uint64_t>(got);
    }
  }
  if (bad_chunk < chunks)
    throw linalg_cuda::ParseError::at_byte(
        path, bad_at,
        bad_errno ? std::string("cannot read: ") + std::strerror(bad_errno)
                  : "the file ends before the " + std::to_string(size_) + " bytes it held when opened");
}

const char* BinaryCursor::take(std::uint64_t n, const char* what) {
  if (n > file_->size() - offset_) fail("the file ends where " + std::string(what) + " was expected");
  const char* bytes = file_->data() + offset_;
  offset_ += n;
  return bytes;
}

double BinaryCursor::finite(const char* what) {
  const std::uint64_t at = offset_;
  const double value = read<double>(what);
  if (!std::isfinite(value)) fail_at(at, std::string(what) + " is not a finite number");
  return value;
}

std::string_view BinaryCursor::until_nul(const char* what) {
  const char* begin = file_->data() + offset_;
  const auto* nul = static_cast<const char*>(std::memchr(begin, '\0', file_->size() - offset_));
  if (!nul) fail_at(file_->size(), "the file ends where " + std::string(what) + " was expected");
  offset_ += static_cast<std::uint64_t>(nul - begin) + 1;
  return std::string_view(begin, static_cast<std::size_t>(nul - begin));
}

std::uint64_t BinaryCursor::count(std::uint64_t bytes_each, const char* what) {
  const std::uint64_t at = offset_;
  const std::uint64_t n = read<std::uint64_t>(what);
  const std::uint64_t left = file_->size() - offset_;
  if (n > left / bytes_each)
    fail_at(at, "declares " + std::to_string(n) + " " + what + ", which the " + std::to_string(left) +
                    " bytes left cannot hold (" + std::to_string(bytes_each) + " or more each)");
  return n;
}

void BinaryCursor::expect_end(const char* last) const {
  if (offset_ != file_->size())
    fail(std::to_string(file_->size() - offset_) + " bytes follow the last " + std::string(last) +
         "; expected the file's end");
}

void BinaryCursor::fail_at(std::uint64_t at, const std::string& message) const {
  throw linalg_cuda::ParseError::at_byte(file_->path(), at, message);
}

}  // namespace ceres_cuda::detail
