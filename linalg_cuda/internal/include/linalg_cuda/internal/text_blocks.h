#pragma once
// A text read in blocks of a fixed size, as the file readers parse it: the memory a read takes is
// its result plus this buffer, not the file's size again.
//
// The reader sees the text through a window, [begin(), end()), that never splits a piece: a window
// ends just after a cut character ('\n' for readers of lines, any whitespace for readers of
// whitespace-separated fields) or at the end of the text. The bytes after the last cut character of
// what was read (the start of the next line or field) are carried to the front of the buffer before
// the next block is read behind them. The buffer holds one block and the carried piece, and grows
// only while a piece is longer than half a block, up to `max_piece_bytes`.
//
// Parsing with strtod/strtol stays within the window: a number never contains a cut character, so
// a conversion stops at one inside the window, or at the '\0' written after the end of the text.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>

namespace linalg_cuda::detail {

class TextBlocks {
 public:
  static constexpr std::size_t kBlockBytes = std::size_t(1) << 20;  // 1 MiB

  enum class Cut { AfterNewline, AfterBlank };
  enum class Status { Window, End, PieceTooLong };
  // Copies up to `size` bytes of the text to `out` and returns how many; 0 at the end of the text.
  // Throws what the reader's errors are.
  using Read = std::function<std::size_t(char* out, std::size_t size)>;

  // `expected_bytes`: what the text is expected to take (its size where known before reading, an
  // estimate, or 0 where nothing is known). A text expected to be shorter than a block starts with a
  // buffer of its size, which grows if the text is longer.
  TextBlocks(Read read, Cut cut, std::size_t max_piece_bytes, std::uint64_t expected_bytes = 0,
             std::size_t block_bytes = kBlockBytes)
      : read_(std::move(read)),
        cut_kind_(cut),
        max_piece_(max_piece_bytes),
        block_(std::max<std::size_t>(block_bytes, 1)),
        expected_bytes_(expected_bytes) {}

  // Drops the current window and makes the next one: Window, or End when no text is left, or
  // PieceTooLong when a piece (a line or a field) runs beyond max_piece_bytes.
  Status next() {
    const std::size_t carried = filled_ - cut_;
    if (carried > 0) std::memmove(buffer_.get(), buffer_.get() + cut_, carried);
    offset_ += cut_;
    filled_ = carried;
    cut_ = 0;
    for (;;) {
      if (at_end_) {
        cut_ = filled_;
        ensure_capacity(filled_ + 1);
        buffer_[filled_] = '\0';
        return filled_ > 0 ? Status::Window : Status::End;
      }
      if (filled_ > max_piece_) return Status::PieceTooLong;
      // Room for a block behind the carried piece (or for what is expected of the text, and a byte to
      // find its end); a piece longer than half a block doubles the buffer.
      const std::uint64_t read_so_far = offset_ + filled_;
      const std::size_t expected =
          expected_bytes_ == 0 ? block_
                               : static_cast<std::size_t>(std::min<std::uint64_t>(
                                     block_, expected_bytes_ > read_so_far ? expected_bytes_ - read_so_far : 1));
      const std::size_t room = capacity_ > filled_ + 1 ? capacity_ - 1 - filled_ : 0;
      if (room < std::min(block_ / 2 + 1, expected)) ensure_capacity(std::max(2 * capacity_, filled_ + expected + 1));
      const std::size_t want = std::min(block_, capacity_ - 1 - filled_);
      const std::size_t got = read_(buffer_.get() + filled_, want);
      if (got == 0) {
        at_end_ = true;
        continue;
      }
      const std::size_t last = last_cut(filled_, filled_ + got);
      filled_ += got;
      if (last != kNone) {
        cut_ = last + 1;
        return Status::Window;
      }
    }
  }

  const char* begin() const { return buffer_.get(); }
  const char* end() const { return buffer_.get() + cut_; }
  // Bytes of the text before begin().
  std::uint64_t offset() const { return offset_; }
  // Bytes of the text before `p`, a position in the window.
  std::uint64_t offset_of(const char* p) const { return offset_ + static_cast<std::uint64_t>(p - begin()); }

  // Reads the rest of the text without keeping it and returns the text's whole size in bytes. With
  // `newlines`, also counts the '\n' from `from` (a position in the window) to the end of the text.
  // For errors that depend on the size of the text, found where only part of it has been read.
  std::uint64_t drain(const char* from = nullptr, std::uint64_t* newlines = nullptr) {
    if (newlines) *newlines = count_newlines(buffer_.get() + (from ? from - begin() : cut_), buffer_.get() + filled_);
    std::uint64_t size = offset_ + filled_;
    offset_ = size;
    filled_ = cut_ = 0;
    ensure_capacity(std::max<std::size_t>(capacity_, 2));
    while (!at_end_) {
      const std::size_t got = read_(buffer_.get(), std::min(block_, capacity_ - 1));
      if (got == 0) at_end_ = true;
      if (newlines) *newlines += count_newlines(buffer_.get(), buffer_.get() + got);
      size += got;
      offset_ = size;
    }
    buffer_[0] = '\0';
    return size;
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t(0);

  static std::uint64_t count_newlines(const char* p, const char* end) {
    std::uint64_t count = 0;
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)))) != nullptr) {
      ++count;
      ++p;
    }
    return count;
  }

  // Index of the last cut character in buffer_[from, to), or kNone.
  std::size_t last_cut(std::size_t from, std::size_t to) const {
    const char* const base = buffer_.get();
    for (std::size_t i = to; i > from; --i) {
      const char c = base[i - 1];
      if (cut_kind_ == Cut::AfterNewline ? c == '\n' : std::isspace(static_cast<unsigned char>(c)) != 0) return i - 1;
    }
    return kNone;
  }

  // Uninitialised memory: a short file touches only the pages it fills.
  void ensure_capacity(std::size_t bytes) {
    if (bytes <= capacity_) return;
    std::unique_ptr<char[]> grown(new char[bytes]);
    if (filled_ > 0) std::memcpy(grown.get(), buffer_.get(), filled_);
    buffer_ = std::move(grown);
    capacity_ = bytes;
  }

  Read read_;
  Cut cut_kind_;
  std::size_t max_piece_;
  std::size_t block_;
  std::uint64_t expected_bytes_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t filled_ = 0;  // bytes in the buffer: the window, then the carried piece
  std::size_t cut_ = 0;     // the window's end
  std::uint64_t offset_ = 0;
  bool at_end_ = false;
};

}  // namespace linalg_cuda::detail
