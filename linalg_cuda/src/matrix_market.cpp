#include "linalg_cuda/matrix_market.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"
#include "linalg_cuda/internal/readable.h"
#include "linalg_cuda/internal/text_blocks.h"
#include "matrix_market_blocks.h"

namespace linalg_cuda {
namespace {

constexpr const char* kExpectedBanner = "'%%MatrixMarket matrix coordinate real general' expected";

enum class Field { Real, Integer, Pattern };

struct Header {
  Field field = Field::Real;
  bool symmetric = false;
};

// Whitespace inside a line; '\r' is included so that files written on Windows parse unchanged.
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string to_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The longest line read. A Matrix Market line holds two indices and a value, or a comment; a longer
// "line" (a binary file, a file of one endless line) is refused before its buffer fills the memory.
constexpr std::size_t kMaxLineBytes = std::size_t(1) << 20;

// Hands out the lines of the text one at a time, block by block, and knows the current line number,
// so every error can name the line it found. Splitting lines in a buffer by hand (instead of getline
// per line) keeps the parse of multi-million-entry files dominated by number conversion, not by
// stream overhead.
class LineReader {
 public:
  LineReader(detail::TextBlocks& text, const std::string& name) : text_(text), name_(name) {}

  // Moves to the next line; false when the text is exhausted.
  bool advance() {
    while (next_ >= end_) {
      const detail::TextBlocks::Status status = text_.next();
      if (status == detail::TextBlocks::Status::PieceTooLong) fail_too_long(line_number_ + 1);
      next_ = text_.begin();
      end_ = text_.end();
      if (status == detail::TextBlocks::Status::End) return false;
    }
    begin_ = next_;
    const void* newline = std::memchr(next_, '\n', static_cast<size_t>(end_ - next_));
    line_end_ = newline ? static_cast<const char*>(newline) : end_;
    next_ = newline ? line_end_ + 1 : end_;
    ++line_number_;
    // Whatever the blocks held of it: the same line fails the same way wherever the blocks start.
    if (static_cast<size_t>(line_end_ - begin_) > kMaxLineBytes) fail_too_long(line_number_);
    return true;
  }

  const char* begin() const { return begin_; }
  const char* end() const { return line_end_; }
  long line_number() const { return line_number_; }
  // Bytes of the text handed out so far: with the text's size, bounds how many entries can still
  // follow (used to cap reservations).
  std::uint64_t consumed_bytes() const { return next_ ? text_.offset_of(next_) : 0; }
  // Bytes of the current block not yet handed out.
  std::size_t buffered_bytes() const { return static_cast<std::size_t>(end_ - next_); }

 private:
  [[noreturn]] void fail_too_long(long line) const {
    throw ParseError(name_, line, "line longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB: not a Matrix Market line");
  }

  detail::TextBlocks& text_;
  const std::string& name_;
  const char* next_ = nullptr;
  const char* end_ = nullptr;
  const char* begin_ = nullptr;
  const char* line_end_ = nullptr;
  long line_number_ = 0;
};

// The line of each entry, for errors found after the reading (an overflowing sum of duplicates).
// Entries mostly sit on consecutive lines, so only the first entry of each run of them is kept:
// comment or blank lines between entries start a new run.
class EntryLines {
 public:
  void add(long long entry, long line) {
    if (runs_.empty() || line != runs_.back().line + (entry - runs_.back().entry)) runs_.push_back({entry, line});
  }
  long line_of(long long entry) const {
    const auto run = std::upper_bound(runs_.begin(), runs_.end(), entry,
                                      [](long long e, const Run& r) { return e < r.entry; }) - 1;
    return run->line + static_cast<long>(entry - run->entry);
  }

 private:
  struct Run {
    long long entry;
    long line;
  };
  std::vector<Run> runs_;
};

// Splits the current line into numeric fields and turns every problem into a ParseError naming the line.
class FieldScanner {
 public:
  FieldScanner(const LineReader& line, const std::string& name)
      : cursor_(line.begin()), end_(line.end()), line_number_(line.line_number()), name_(name) {}

  [[noreturn]] void fail(const std::string& message) const { throw ParseError(name_, line_number_, message); }

  // Returns false once only whitespace remains on the line.
  bool has_more() {
    skip_blanks();
    return cursor_ < end_;
  }

  long long next_integer(const char* what) {
    const char* start = begin_token(what);
    char* stop = nullptr;
    errno = 0;
    const long long value = std::strtoll(start, &stop, 10);
    finish_token(start, stop, what, "an integer");
    if (errno == ERANGE) fail(std::string(what) + " '" + token_text(start) + "' is out of range");
    return value;
  }

  double next_real(const char* what) {
    const char* start = begin_token(what);
    char* stop = nullptr;
    const double value = std::strtod(start, &stop);
    finish_token(start, stop, what, "a number");
    // strtod happily accepts "nan"/"inf" and turns overflow into inf; none of these belong in a matrix.
    if (!std::isfinite(value)) fail(std::string(what) + " '" + token_text(start) + "' is not a finite number");
    return value;
  }

  // Rejects anything after the last expected field.
  void expect_end(const char* what) {
    if (has_more()) fail("unexpected trailing text '" + token_text(cursor_) + "' after " + what);
  }

 private:
  void skip_blanks() {
    while (cursor_ < end_ && is_blank(*cursor_)) ++cursor_;
  }

  const char* begin_token(const char* what) {
    if (!has_more()) fail(std::string("line ends before the ") + what);
    return cursor_;
  }

  // The conversion must consume the whole token: "12abc" or "1.5" as an index are malformed, not 12 or 1.
  void finish_token(const char* start, const char* stop, const char* what, const char* kind) {
    if (stop == start || stop > end_ || (stop < end_ && !is_blank(*stop))) {
      fail(std::string("expected ") + kind + " for the " + what + ", found '" + token_text(start) + "'");
    }
    cursor_ = stop;
  }

  std::string token_text(const char* start) const {
    const char* stop = start;
    while (stop < end_ && !is_blank(*stop)) ++stop;
    constexpr size_t kMaxShown = 40;
    const size_t length = static_cast<size_t>(stop - start);
    return length <= kMaxShown ? std::string(start, stop) : std::string(start, kMaxShown) + "...";
  }

  const char* cursor_;
  const char* end_;
  long line_number_;
  const std::string& name_;
};

std::vector<std::string> split_words(const char* begin, const char* end) {
  std::vector<std::string> words;
  while (begin < end) {
    while (begin < end && is_blank(*begin)) ++begin;
    const char* start = begin;
    while (begin < end && !is_blank(*begin)) ++begin;
    if (begin > start) words.emplace_back(start, begin);
  }
  return words;
}

Header parse_banner(LineReader& lines, const std::string& name) {
  if (!lines.advance()) throw ParseError(name, 1, std::string("empty file; ") + kExpectedBanner);
  const long line = lines.line_number();
  const std::vector<std::string> words = split_words(lines.begin(), lines.end());
  if (words.empty() || to_lower(words[0]) != "%%matrixmarket") {
    throw ParseError(name, line, std::string("missing Matrix Market banner; ") + kExpectedBanner);
  }
  if (words.size() != 5) {
    throw ParseError(name, line, "banner must have 5 words; " + std::string(kExpectedBanner));
  }
  const std::string object = to_lower(words[1]);
  const std::string format = to_lower(words[2]);
  const std::string field = to_lower(words[3]);
  const std::string symmetry = to_lower(words[4]);
  const auto invalid = [&](const std::string& what, const std::string& word) {
    return ParseError(name, line, "invalid " + what + " '" + word + "' in banner; " + kExpectedBanner);
  };
  const auto unsupported = [&](const std::string& what, const std::string& word, const std::string& supported) {
    return ParseError(name, line, "unsupported " + what + " '" + word + "' (only " + supported + " is supported)");
  };

  if (object != "matrix") throw invalid("object", words[1]);
  if (format == "array") throw unsupported("format", words[2], "coordinate");
  if (format != "coordinate") throw invalid("format", words[2]);

  Header header;
  if (field == "real") {
    header.field = Field::Real;
  } else if (field == "integer") {
    header.field = Field::Integer;
  } else if (field == "pattern") {
    header.field = Field::Pattern;
  } else if (field == "complex") {
    throw unsupported("field", words[3], "real, integer or pattern");
  } else {
    throw invalid("field", words[3]);
  }

  if (symmetry == "general") {
    header.symmetric = false;
  } else if (symmetry == "symmetric") {
    header.symmetric = true;
  } else if (symmetry == "hermitian" || symmetry == "skew-symmetric") {
    throw unsupported("symmetry", words[4], "general or symmetric");
  } else {
    throw invalid("symmetry", words[4]);
  }
  return header;
}

// Moves to the next line that carries data; comments and blank lines may appear anywhere after the banner.
bool advance_to_data_line(LineReader& lines) {
  while (lines.advance()) {
    const char* c = lines.begin();
    while (c < lines.end() && is_blank(*c)) ++c;
    if (c < lines.end() && *c != '%') return true;
  }
  return false;
}

// Reads the `declared` entries that follow the size line and hands each to visit(i, j, value), 0-based;
// `lines` then stands on the last entry's line.
template <typename Visit>
void read_entries(LineReader& lines, const Header& header, long long rows, long long cols, long long declared,
                  const std::string& name, Visit&& visit) {
  for (long long k = 0; k < declared; ++k) {
    if (!advance_to_data_line(lines)) {
      throw ParseError(name, lines.line_number(),
                       "file ended after " + std::to_string(k) + " of " + std::to_string(declared) + " entries");
    }
    FieldScanner entry(lines, name);
    const long long row = entry.next_integer("row index");
    const long long col = entry.next_integer("column index");
    double value = 1.0;
    if (header.field == Field::Real) {
      value = entry.next_real("value");
    } else if (header.field == Field::Integer) {
      value = static_cast<double>(entry.next_integer("value"));
    }
    entry.expect_end(header.field == Field::Pattern ? "'row col' (pattern entries have no value)" : "'row col value'");

    if (row < 1 || row > rows) {
      entry.fail("row index " + std::to_string(row) + " out of range 1.." + std::to_string(rows));
    }
    if (col < 1 || col > cols) {
      entry.fail("column index " + std::to_string(col) + " out of range 1.." + std::to_string(cols));
    }
    if (header.symmetric && col > row) {
      entry.fail("entry (" + std::to_string(row) + ", " + std::to_string(col) +
                 ") is above the diagonal; a symmetric file stores only the lower triangle");
    }
    visit(static_cast<int>(row - 1), static_cast<int>(col - 1), value);
  }
}

using Triplet = Eigen::Triplet<double, int>;

// Entry (row, col) of the assembled matrix is not finite: goes through the entries again (the
// triplets, in the file's order: one per entry, two for an off-diagonal entry of a symmetric file),
// summing those of (row, col) in the order the assembly does, and fails at the line where the sum
// leaves the range of double. Such files are rare, so finding the line costs a second pass instead of
// a line number kept for every entry.
[[noreturn]] void fail_on_overflowing_sum(const std::vector<Triplet>& triplets, const EntryLines& entry_lines,
                                          bool symmetric, long size_line, const std::string& name, int row, int col) {
  double sum = 0.0;
  long last_line = size_line;
  long long entry = 0;
  for (std::size_t t = 0; t < triplets.size(); ++entry) {
    const Triplet& e = triplets[t];
    t += symmetric && e.row() != e.col() ? 2 : 1;
    const bool here = (e.row() == row && e.col() == col) || (symmetric && e.col() == row && e.row() == col);
    if (!here) continue;
    sum += e.value();
    last_line = entry_lines.line_of(entry);
    if (!std::isfinite(sum)) {
      throw ParseError(name, last_line,
                       "entry (" + std::to_string(row + 1) + ", " + std::to_string(col + 1) +
                           ") and its duplicates sum to " + detail::readable(sum) +
                           " (duplicates are summed; the sum is beyond the range of double)");
    }
  }
  throw ParseError(name, last_line,
                   "entry (" + std::to_string(row + 1) + ", " + std::to_string(col + 1) +
                       ") and its duplicates sum to a value that is not finite");
}

// Parses the text that `text` reads. `text_bytes`: the text's size when it is known before reading
// (a file, a seekable stream), 0 when not (a pipe).
CsrMatrix parse_matrix_market(detail::TextBlocks& text, std::uint64_t text_bytes, const std::string& name) {
  LineReader lines(text, name);
  const Header header = parse_banner(lines, name);

  if (!advance_to_data_line(lines)) {
    throw ParseError(name, lines.line_number(), "file ended before the size line 'rows cols entries'");
  }
  FieldScanner size_line(lines, name);
  const long long rows = size_line.next_integer("row count");
  const long long cols = size_line.next_integer("column count");
  const long long declared = size_line.next_integer("entry count");
  size_line.expect_end("the size line 'rows cols entries'");
  if (rows < 0 || cols < 0 || declared < 0) size_line.fail("size line values must be non-negative");
  // The result uses 32-bit indices, as the CUDA sparse kernels downstream do.
  if (rows > INT_MAX || cols > INT_MAX || declared > INT_MAX) {
    size_line.fail("matrix is too large for 32-bit indices");
  }
  if (header.symmetric && rows != cols) {
    size_line.fail("symmetric matrix must be square, got " + std::to_string(rows) + " x " + std::to_string(cols));
  }

  // What the rest of a text of `size` bytes can back: every entry line takes at least 4 bytes ("i j\n"),
  // so a corrupt entry count cannot force a huge allocation before the file runs out. The CSR matrix
  // keeps a row pointer per row (and its assembly a count per column) whatever the entries: dimensions
  // far beyond the entries the file can hold are mostly empty rows, memory the file does not back
  // (2e9 rows declared in 60 bytes would take tens of GB). Allowed: 2^20 plus 64 per entry.
  const long size_line_number = lines.line_number();
  const std::uint64_t after_size_line = lines.consumed_bytes();
  const auto plausible_entries = [&](std::uint64_t size) {
    const std::uint64_t remaining = size > after_size_line ? size - after_size_line : 0;
    const size_t plausible = static_cast<size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(declared),
                                                                         remaining / 4 + 1));
    const long long dimension_limit = (1LL << 20) + 64LL * static_cast<long long>(plausible);
    if (rows > dimension_limit || cols > dimension_limit) {
      throw ParseError(name, size_line_number,
                       "a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix with at most " +
                           std::to_string(plausible) + " entries (what the file's " + std::to_string(remaining) +
                           " remaining bytes can hold) is mostly empty; at most " + std::to_string(dimension_limit) +
                           " rows and columns are read for that many entries");
    }
    return plausible;
  };
  // A text of unknown size reserves what its current block can hold and grows with what it holds;
  // the check of the dimensions waits for the end of the text, where its size is known.
  const size_t reserved = text_bytes > 0 ? plausible_entries(text_bytes)
                                         : std::min<size_t>(static_cast<size_t>(declared), lines.buffered_bytes() / 4 + 1);
  std::vector<Triplet> triplets;
  triplets.reserve(header.symmetric ? 2 * reserved : reserved);
  EntryLines entry_lines;
  try {
    long long entry = 0;
    read_entries(lines, header, rows, cols, declared, name, [&](int i, int j, double value) {
      entry_lines.add(entry++, lines.line_number());
      triplets.emplace_back(i, j, value);
      if (header.symmetric && i != j) triplets.emplace_back(j, i, value);
    });
    if (advance_to_data_line(lines)) {
      throw ParseError(name, lines.line_number(),
                       "more entries than the " + std::to_string(declared) + " declared in the size line");
    }
  } catch (const ParseError&) {
    // A size line that the text cannot back is the first error, as where the size is known at once.
    if (text_bytes == 0) plausible_entries(text.drain());
    throw;
  }
  if (text_bytes == 0) plausible_entries(lines.consumed_bytes());

  CsrMatrix matrix(static_cast<int>(rows), static_cast<int>(cols));
  // setFromTriplets sums duplicates, which is what the Matrix Market convention asks for.
  matrix.setFromTriplets(triplets.begin(), triplets.end());
  matrix.makeCompressed();
  // Every value is finite, but their sums need not be: duplicates of 1e308 add up to infinity.
  for (int i = 0; i < matrix.outerSize(); ++i) {
    for (CsrMatrix::InnerIterator it(matrix, i); it; ++it) {
      if (!std::isfinite(it.value())) {
        // A symmetric file names the entry by its place in the lower triangle, where the file has it.
        const bool mirrored = header.symmetric && it.row() < it.col();
        fail_on_overflowing_sum(triplets, entry_lines, header.symmetric, size_line_number, name,
                                mirrored ? it.col() : it.row(), mirrored ? it.row() : it.col());
      }
    }
  }
  return matrix;
}

// The bytes from the stream's position to its end, or 0 where it cannot seek (a pipe); the position
// is left as it was.
std::uint64_t bytes_left_in(std::istream& in) {
  const std::istream::pos_type here = in.tellg();
  if (here == std::istream::pos_type(-1)) return 0;
  in.seekg(0, std::ios::end);
  const std::istream::pos_type end = in.tellg();
  in.clear();
  in.seekg(here);
  if (end == std::istream::pos_type(-1) || end < here || in.fail()) {
    in.clear();
    return 0;
  }
  return static_cast<std::uint64_t>(end - here);
}

}  // namespace

namespace detail {

CsrMatrix read_matrix_market(std::istream& in, const std::string& name, std::size_t block_bytes) try {
  const std::uint64_t text_bytes = bytes_left_in(in);
  TextBlocks text(
      [&](char* out, std::size_t size) {
        in.read(out, static_cast<std::streamsize>(size));
        if (in.bad()) throw ParseError(name, 0, "read error");
        return static_cast<std::size_t>(in.gcount());
      },
      TextBlocks::Cut::AfterNewline, kMaxLineBytes, text_bytes, block_bytes);
  // An empty text is no different from one of unknown size: both reach the end before any entry.
  return parse_matrix_market(text, text_bytes, name);
} catch (...) {
  rethrow_with_file_context(name);
}

}  // namespace detail

CsrMatrix read_matrix_market(std::istream& in, const std::string& name) {
  return detail::read_matrix_market(in, name, detail::TextBlocks::kBlockBytes);
}

CsrMatrix read_matrix_market(const std::string& path) try {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw ParseError(path, 0, "is a directory, not a Matrix Market file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ParseError(path, 0, "cannot open file: " + std::string(std::strerror(errno)));
  return detail::read_matrix_market(file, path, detail::TextBlocks::kBlockBytes);
} catch (...) {
  detail::rethrow_with_file_context(path);
}

void write_matrix_market(const std::string& path, const CsrMatrix& a, bool symmetric) {
  if (symmetric) {
    if (a.rows() != a.cols()) {
      throw InvalidArgument("write_matrix_market: symmetric output needs a square matrix, got " +
                            std::to_string(a.rows()) + " x " + std::to_string(a.cols()));
    }
    // Only the lower triangle is written, so an asymmetric matrix would silently lose its upper part.
    const CsrMatrix difference = a - CsrMatrix(a.transpose());
    for (int k = 0; k < difference.nonZeros(); ++k) {
      if (difference.valuePtr()[k] != 0.0) {
        throw InvalidArgument("write_matrix_market: symmetric output requested but the matrix is not symmetric");
      }
    }
  }

  long long count = 0;
  for (int i = 0; i < a.outerSize(); ++i) {
    for (CsrMatrix::InnerIterator it(a, i); it; ++it) {
      if (!symmetric || it.col() <= it.row()) ++count;
    }
  }

  const auto close = [](std::FILE* f) { std::fclose(f); };
  std::unique_ptr<std::FILE, decltype(close)> file(std::fopen(path.c_str(), "wb"), close);
  if (!file) throw Error("cannot open '" + path + "' for writing: " + std::strerror(errno));

  std::fprintf(file.get(), "%%%%MatrixMarket matrix coordinate real %s\n", symmetric ? "symmetric" : "general");
  std::fprintf(file.get(), "%lld %lld %lld\n", static_cast<long long>(a.rows()), static_cast<long long>(a.cols()),
               count);
  for (int i = 0; i < a.outerSize(); ++i) {
    for (CsrMatrix::InnerIterator it(a, i); it; ++it) {
      if (symmetric && it.col() > it.row()) continue;
      // 17 significant digits reproduce every double exactly on reading back.
      std::fprintf(file.get(), "%lld %lld %.17g\n", static_cast<long long>(it.row()) + 1,
                   static_cast<long long>(it.col()) + 1, it.value());
    }
  }
  const bool write_failed = std::ferror(file.get()) != 0;
  const bool close_failed = std::fclose(file.release()) != 0;
  if (write_failed || close_failed) throw Error("failed writing '" + path + "': " + std::strerror(errno));
}

}  // namespace linalg_cuda
