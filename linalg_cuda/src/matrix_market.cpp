#include "linalg_cuda/matrix_market.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"
#include "linalg_cuda/internal/readable.h"

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

// Hands out the lines of an in-memory file one at a time and knows the current line number, so every
// error can name the line it found. Working on one buffer (instead of getline per line) keeps the
// parse of multi-million-entry files dominated by number conversion, not by stream overhead.
class LineReader {
 public:
  explicit LineReader(const std::string& text) : next_(text.c_str()), end_(text.c_str() + text.size()) {}

  // Moves to the next line; false when the text is exhausted.
  bool advance() {
    if (next_ >= end_) return false;
    begin_ = next_;
    const void* newline = std::memchr(next_, '\n', static_cast<size_t>(end_ - next_));
    line_end_ = newline ? static_cast<const char*>(newline) : end_;
    next_ = newline ? line_end_ + 1 : end_;
    ++line_number_;
    return true;
  }

  const char* begin() const { return begin_; }
  const char* end() const { return line_end_; }
  long line_number() const { return line_number_; }
  // Bytes not yet handed out: bounds how many entries can still follow (used to cap reservations).
  size_t remaining_bytes() const { return static_cast<size_t>(end_ - next_); }

 private:
  const char* next_;
  const char* end_;
  const char* begin_ = nullptr;
  const char* line_end_ = nullptr;
  long line_number_ = 0;
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

// Entry (row, col) of the assembled matrix is not finite: reads the entries again from `lines` (on the
// size line), summing those of (row, col) in the order the assembly does, and fails at the line where
// the sum leaves the range of double. Such files are rare, so finding the line costs a second pass
// instead of a line number kept for every entry.
[[noreturn]] void fail_on_overflowing_sum(LineReader& lines, const Header& header, long long rows, long long cols,
                                          long long declared, const std::string& name, int row, int col) {
  double sum = 0.0;
  long last_line = lines.line_number();
  read_entries(lines, header, rows, cols, declared, name, [&](int i, int j, double value) {
    const bool here = (i == row && j == col) || (header.symmetric && j == row && i == col);
    if (!here) return;
    sum += value;
    last_line = lines.line_number();
    if (!std::isfinite(sum)) {
      throw ParseError(name, last_line,
                       "entry (" + std::to_string(row + 1) + ", " + std::to_string(col + 1) +
                           ") and its duplicates sum to " + detail::readable(sum) +
                           " (duplicates are summed; the sum is beyond the range of double)");
    }
  });
  throw ParseError(name, last_line,
                   "entry (" + std::to_string(row + 1) + ", " + std::to_string(col + 1) +
                       ") and its duplicates sum to a value that is not finite");
}

CsrMatrix parse_matrix_market(const std::string& text, const std::string& name) {
  LineReader lines(text);
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

  // Every entry line takes at least 4 bytes ("i j\n"), so a corrupt entry count cannot force a huge
  // allocation before the file runs out.
  const size_t plausible = std::min(static_cast<size_t>(declared), lines.remaining_bytes() / 4 + 1);
  // The CSR matrix keeps a row pointer per row (and its assembly a count per column) whatever the
  // entries: dimensions far beyond the entries the file can hold are mostly empty rows, memory the file
  // does not back (2e9 rows declared in 60 bytes would take tens of GB). Allowed: 2^20 plus 64 per
  // entry.
  const long long dimension_limit = (1LL << 20) + 64LL * static_cast<long long>(plausible);
  if (rows > dimension_limit || cols > dimension_limit) {
    size_line.fail("a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix with at most " +
                   std::to_string(plausible) + " entries (what the file's " + std::to_string(lines.remaining_bytes()) +
                   " remaining bytes can hold) is mostly empty; at most " + std::to_string(dimension_limit) +
                   " rows and columns are read for that many entries");
  }
  std::vector<Eigen::Triplet<double, int>> triplets;
  triplets.reserve(header.symmetric ? 2 * plausible : plausible);
  const LineReader first_entry = lines;
  read_entries(lines, header, rows, cols, declared, name, [&](int i, int j, double value) {
    triplets.emplace_back(i, j, value);
    if (header.symmetric && i != j) triplets.emplace_back(j, i, value);
  });

  if (advance_to_data_line(lines)) {
    throw ParseError(name, lines.line_number(),
                     "more entries than the " + std::to_string(declared) + " declared in the size line");
  }

  CsrMatrix matrix(static_cast<int>(rows), static_cast<int>(cols));
  // setFromTriplets sums duplicates, which is what the Matrix Market convention asks for.
  matrix.setFromTriplets(triplets.begin(), triplets.end());
  matrix.makeCompressed();
  // Every value is finite, but their sums need not be: duplicates of 1e308 add up to infinity.
  for (int i = 0; i < matrix.outerSize(); ++i) {
    for (CsrMatrix::InnerIterator it(matrix, i); it; ++it) {
      if (!std::isfinite(it.value())) {
        LineReader again = first_entry;
        // A symmetric file names the entry by its place in the lower triangle, where the file has it.
        const bool mirrored = header.symmetric && it.row() < it.col();
        fail_on_overflowing_sum(again, header, rows, cols, declared, name, mirrored ? it.col() : it.row(),
                                mirrored ? it.row() : it.col());
      }
    }
  }
  return matrix;
}

}  // namespace

CsrMatrix read_matrix_market(std::istream& in, const std::string& name) try {
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw ParseError(name, 0, "read error");
  return parse_matrix_market(text, name);
} catch (...) {
  detail::rethrow_with_file_context(name);
}

CsrMatrix read_matrix_market(const std::string& path) try {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw ParseError(path, 0, "is a directory, not a Matrix Market file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ParseError(path, 0, "cannot open file: " + std::string(std::strerror(errno)));
  // One bulk read: much faster than streaming through istreambuf_iterator for large files.
  file.seekg(0, std::ios::end);
  const std::streamoff size = file.tellg();
  file.seekg(0, std::ios::beg);
  std::string text;
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    file.read(&text[0], size);
    text.resize(static_cast<size_t>(file.gcount()));
  }
  if (file.bad() || size < 0) throw ParseError(path, 0, "read error");
  return parse_matrix_market(text, path);
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
