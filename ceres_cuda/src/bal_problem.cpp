// BAL reading and writing, and the synthetic generator.
//
// Reading: the text (the file's bytes, or decompressed when they start with "BZh") is read in 1 MiB
// blocks cut after whitespace (linalg_cuda::detail::TextBlocks), so that a read takes the problem's
// memory and a few MiB, and parsed with strtod/strtol, counting lines, so that every error names
// file:line. The format is whitespace-separated, so line breaks are not required where BAL puts them;
// only the number and validity of the values are checked.
#include "ceres_cuda/bal_problem.h"

#include <bzlib.h>
#include <ceres/autodiff_cost_function.h>
#include <ceres/problem.h>
#include <ceres/rotation.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "ceres_cuda/snavely_reprojection_error.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"
#include "linalg_cuda/internal/text_blocks.h"
#include "snavely_autodiff.h"

namespace ceres_cuda {
namespace {

using linalg_cuda::InvalidArgument;
using linalg_cuda::ParseError;

// How many times its compressed size a .bz2 BAL file may expand to (its text compresses 3 to 5 times).
constexpr std::size_t kMaxBzip2Expansion = 50;
// The text a .bz2 file may expand to beyond that, so that small files are never refused.
constexpr std::uint64_t kBzip2Allowance = std::uint64_t(16) << 20;
// The longest field read: BAL's numbers take a few dozen bytes; a longer "field" (a binary file, a
// run of digits) is refused before its buffer fills the memory.
constexpr std::size_t kMaxFieldBytes = std::size_t(1) << 20;
// How much of the file is read at a time to be decompressed.
constexpr std::size_t kCompressedBlockBytes = std::size_t(1) << 16;

// A bzip2 stream that ends before its end-of-stream mark. The reader names the text's last line,
// which only it knows, so this is turned into the ParseError where the line is counted.
struct TruncatedBzip2 {};

// The text of a BAL file, a block at a time: the file's bytes as they are, or decompressed when they
// start with "BZh" (bzip2; possibly several concatenated streams, as pbzip2 writes them, with the NUL
// padding some tools add between them). BAL text compresses a few times; data that expands far more
// is a decompression bomb, stopped before it fills the memory.
class BalSource {
 public:
  explicit BalSource(const std::string& path)
      : path_(path), file_(std::fopen(path.c_str(), "rb"), &std::fclose), input_(new char[kCompressedBlockBytes]) {
    if (!file_) throw linalg_cuda::Error(path + ": cannot open: " + std::strerror(errno));
    struct stat info {};
    if (fstat(fileno(file_.get()), &info) == 0 && S_ISREG(info.st_mode)) file_bytes_ = static_cast<std::uint64_t>(info.st_size);
    fill_input();
    if (failure_ == Failure::Read) raise();
    compressed_ = input_end_ - input_next_ >= 3 && std::memcmp(input_next_, "BZh", 3) == 0;
  }
  ~BalSource() {
    if (in_stream_) BZ2_bzDecompressEnd(&stream_);
  }
  BalSource(const BalSource&) = delete;
  BalSource& operator=(const BalSource&) = delete;

  // The text's size where it is known before reading it (plain text in a regular file), else 0.
  std::uint64_t text_bytes() const { return compressed_ ? 0 : file_bytes_; }
  // What the text is expected to take, for the size of the buffer: its size, or for bzip2 ten times
  // the file's (BAL text compresses 3 to 5 times); 0 where not known.
  std::uint64_t expected_text_bytes() const { return compressed_ ? 10 * file_bytes_ : file_bytes_; }
  // The most text the file can give without an error, where that is known before reading it (bzip2
  // in a regular file: the expansion limit), else 0.
  std::uint64_t text_bound() const { return compressed_ ? expansion_limit() : 0; }

  // Up to `size` bytes of the text; 0 at its end. An error after some bytes is raised on the next
  // call, so that the reader has seen every byte before it (and the lines they hold); every call after
  // an error raises it again.
  std::size_t read(char* out, std::size_t size) {
    std::size_t produced = 0;
    if (failure_ == Failure::None) produced = compressed_ ? decompress(out, size) : copy(out, size);
    if (produced == 0 && failure_ != Failure::None) raise();
    return produced;
  }

 private:
  enum class Failure { None, Read, Init, Corrupt, Truncated, Bomb };

  [[noreturn]] void raise() const {
    switch (failure_) {
      case Failure::Read:
        throw linalg_cuda::Error(path_ + ": read error: " + std::strerror(read_errno_));
      case Failure::Init:
        throw linalg_cuda::Error(path_ + ": bzip2 init failed");
      case Failure::Corrupt:
        throw ParseError(path_, 0, "corrupt bzip2 data (code " + std::to_string(bzip2_status_) + ")");
      case Failure::Bomb:
        throw ParseError(path_, 0, "bzip2 data expands more than " + std::to_string(kMaxBzip2Expansion) +
                                       " times its size; not a BAL file (a decompression bomb?)");
      case Failure::Truncated:
      case Failure::None:
        break;
    }
    throw TruncatedBzip2{};
  }

  // The whole file's size where known; else what has been read of it so far (a pipe).
  std::uint64_t expansion_limit() const {
    return kMaxBzip2Expansion * (file_bytes_ > 0 ? file_bytes_ : input_total_) + kBzip2Allowance;
  }

  // Reads the next block of the file once the last is used up; false at the end of the file.
  bool fill_input() {
    if (input_next_ < input_end_) return true;
    const std::size_t got = std::fread(input_.get(), 1, kCompressedBlockBytes, file_.get());
    if (got == 0 && std::ferror(file_.get())) {
      read_errno_ = errno;
      failure_ = Failure::Read;
    }
    input_next_ = input_.get();
    input_end_ = input_next_ + got;
    input_total_ += got;
    if (got == 0) input_ended_ = true;
    return got > 0;
  }

  std::size_t copy(char* out, std::size_t size) {
    std::size_t produced = std::min(size, static_cast<std::size_t>(input_end_ - input_next_));
    std::memcpy(out, input_next_, produced);
    input_next_ += produced;
    if (produced < size && !input_ended_) {
      produced += std::fread(out + produced, 1, size - produced, file_.get());
      if (std::ferror(file_.get())) {
        read_errno_ = errno;
        failure_ = Failure::Read;
      }
    }
    return produced;
  }

  std::size_t decompress(char* out, std::size_t size) {
    std::size_t produced = 0;
    while (produced < size) {
      if (!in_stream_) {
        // Between streams: skip the padding; then a stream begins, or the file (and the text) ends.
        for (;;) {
          while (input_next_ < input_end_ && *input_next_ == '\0') ++input_next_;
          if (input_next_ < input_end_) break;
          if (!fill_input()) return produced;
        }
        stream_ = bz_stream{};
        if (BZ2_bzDecompressInit(&stream_, 0, 0) != BZ_OK) {
          failure_ = Failure::Init;
          return produced;
        }
        in_stream_ = true;
      }
      if (input_next_ == input_end_ && !input_ended_ && !fill_input() && failure_ != Failure::None) return produced;
      stream_.next_in = input_next_;
      stream_.avail_in = static_cast<unsigned>(input_end_ - input_next_);
      stream_.next_out = out + produced;
      stream_.avail_out = static_cast<unsigned>(std::min<std::size_t>(size - produced, 1u << 30));
      const unsigned room = stream_.avail_out;
      const int status = BZ2_bzDecompress(&stream_);
      input_next_ = stream_.next_in;
      produced += room - stream_.avail_out;
      text_total_ += room - stream_.avail_out;
      if (text_total_ > expansion_limit()) {
        failure_ = Failure::Bomb;
        return produced;
      }
      if (status == BZ_STREAM_END) {
        BZ2_bzDecompressEnd(&stream_);
        in_stream_ = false;
      } else if (status != BZ_OK) {
        bzip2_status_ = status;
        failure_ = Failure::Corrupt;
        return produced;
      } else if (input_next_ == input_end_ && input_ended_ && stream_.avail_out != 0) {
        failure_ = Failure::Truncated;  // all input used, output left unfilled: the stream needs more
        return produced;
      }
    }
    return produced;
  }

  std::string path_;
  std::unique_ptr<FILE, int (*)(FILE*)> file_;
  std::uint64_t file_bytes_ = 0;  // 0: not a regular file, its size unknown
  std::unique_ptr<char[]> input_;
  char* input_next_ = nullptr;
  char* input_end_ = nullptr;
  std::uint64_t input_total_ = 0;
  bool input_ended_ = false;
  bool compressed_ = false;
  bz_stream stream_{};
  bool in_stream_ = false;
  std::uint64_t text_total_ = 0;
  Failure failure_ = Failure::None;
  int read_errno_ = 0;
  int bzip2_status_ = BZ_OK;
};

// Whitespace-separated numbers with line tracking, read from the text's blocks. A NUL byte is not
// text: the input ends at its size, not at the first NUL.
class Tokenizer {
 public:
  Tokenizer(const std::string& path, linalg_cuda::detail::TextBlocks& text) : path_(path), text_(text) {}

  long line() const { return line_; }
  // Where the reading stands in the current block, and in the text.
  const char* position() const { return p_; }
  std::uint64_t offset() const { return p_ ? text_.offset_of(p_) : 0; }
  // Bytes of the current block not read yet.
  std::size_t buffered_bytes() const { return static_cast<std::size_t>(end_ - p_); }

  double number(const char* what) {
    skip_blanks(what);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(p_, &end);
    if (end == p_ || !ends_field(end) || end - p_ > kLongestField) fail_field(std::string("expected a number for ") + what);
    if (!std::isfinite(v)) fail(std::string(what) + " is not finite");
    p_ = end;
    return v;
  }

  long integer(const char* what) {
    skip_blanks(what);
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(p_, &end, 10);
    if (end == p_ || !ends_field(end) || errno == ERANGE || end - p_ > kLongestField)
      fail_field(std::string("expected an integer for ") + what);
    p_ = end;
    return v;
  }

  void expect_end() {
    for (;;) {
      while (p_ < end_ && std::isspace(static_cast<unsigned char>(*p_))) advance();
      if (p_ < end_) fail(*p_ ? "unexpected text after the last point" : "a NUL byte after the last point");
      if (!next_block()) return;
    }
  }

  [[noreturn]] void fail(const std::string& message) const { throw ParseError(path_, line_, message); }

 private:
  static constexpr std::ptrdiff_t kLongestField = static_cast<std::ptrdiff_t>(kMaxFieldBytes);

  static bool ends_field(const char* end) { return *end == '\0' || std::isspace(static_cast<unsigned char>(*end)); }
  // The field at p_ is not what was expected. A field too long to be held is refused as such however
  // much of it a block holds, so the error does not depend on where blocks start.
  [[noreturn]] void fail_field(const std::string& message) const {
    const char* end = p_;
    while (end < end_ && !std::isspace(static_cast<unsigned char>(*end))) ++end;
    if (end - p_ > kLongestField) fail_too_long();
    fail(message);
  }
  [[noreturn]] void fail_too_long() const {
    fail("a field longer than " + std::to_string(kMaxFieldBytes >> 20) + " MiB: not a BAL file");
  }
  void advance() {
    if (*p_ == '\n') ++line_;
    ++p_;
  }
  void skip_blanks(const char* what) {
    for (;;) {
      while (p_ < end_ && std::isspace(static_cast<unsigned char>(*p_))) advance();
      if (p_ < end_) break;
      if (!next_block()) fail(std::string("file ends before ") + what + " (truncated?)");
    }
    if (!*p_) fail(std::string("a NUL byte where ") + what + " was expected");
  }
  // The next block of whole fields; false at the end of the text.
  bool next_block() {
    linalg_cuda::detail::TextBlocks::Status status;
    try {
      status = text_.next();
    } catch (...) {
      p_ = end_ = text_.begin();  // the failed block is empty
      throw;
    }
    p_ = text_.begin();
    end_ = text_.end();
    if (status == linalg_cuda::detail::TextBlocks::Status::PieceTooLong) fail_too_long();
    return status == linalg_cuda::detail::TextBlocks::Status::Window;
  }

  const std::string& path_;
  linalg_cuda::detail::TextBlocks& text_;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  long line_ = 1;
};

// The header's counts and where they end, for the check of what they promise against the text's size.
struct BalHeader {
  bool known = false;
  long cameras = 0, points = 0, observations = 0;
  long line = 0;
  std::uint64_t end = 0;     // bytes of the text up to the end of the header
  long long least = 0;       // bytes that the values the header promises take at the least

  // Every value the header promises takes at least two bytes (a digit and a separator).
  bool promises_more_than(std::uint64_t text_size) const {
    return known && static_cast<unsigned long long>(least) > text_size - end + 1;
  }
  ParseError error(const std::string& path, std::uint64_t text_size) const {
    return ParseError(path, line,
                      "the header declares " + std::to_string(cameras) + " cameras, " + std::to_string(points) +
                          " points and " + std::to_string(observations) + " observations, at least " +
                          std::to_string(least) + " bytes of values, but the file has " +
                          std::to_string(text_size - end) + " bytes after it (truncated?)");
  }
};

// Rotation matrix (row-major) -> angle-axis, through a unit quaternion (Shepperd's method), stable
// for every angle including pi.
void rotation_to_angle_axis(const double* R, double* aa) {
  double w, x, y, z;
  const double trace = R[0] + R[4] + R[8];
  if (trace > 0) {
    const double s = 2.0 * std::sqrt(trace + 1.0);
    w = 0.25 * s; x = (R[7] - R[5]) / s; y = (R[2] - R[6]) / s; z = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    const double s = 2.0 * std::sqrt(1.0 + R[0] - R[4] - R[8]);
    w = (R[7] - R[5]) / s; x = 0.25 * s; y = (R[1] + R[3]) / s; z = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    const double s = 2.0 * std::sqrt(1.0 + R[4] - R[0] - R[8]);
    w = (R[2] - R[6]) / s; x = (R[1] + R[3]) / s; y = 0.25 * s; z = (R[5] + R[7]) / s;
  } else {
    const double s = 2.0 * std::sqrt(1.0 + R[8] - R[0] - R[4]);
    w = (R[3] - R[1]) / s; x = (R[2] + R[6]) / s; y = (R[5] + R[7]) / s; z = 0.25 * s;
  }
  if (w < 0) { w = -w; x = -x; y = -y; z = -z; }
  const double v = std::sqrt(x * x + y * y + z * z);
  const double scale = v > 0 ? 2.0 * std::atan2(v, w) / v : 2.0;
  aa[0] = x * scale;
  aa[1] = y * scale;
  aa[2] = z * scale;
}

// Rodrigues (angle-axis -> row-major matrix).
void angle_axis_to_rotation(const double* aa, double* R) {
  const double theta = std::sqrt(aa[0] * aa[0] + aa[1] * aa[1] + aa[2] * aa[2]);
  if (theta == 0) {
    for (int k = 0; k < 9; ++k) R[k] = k % 4 == 0 ? 1.0 : 0.0;
    return;
  }
  const double w[3] = {aa[0] / theta, aa[1] / theta, aa[2] / theta};
  const double c = std::cos(theta), s = std::sin(theta), oc = 1.0 - c;
  R[0] = c + w[0] * w[0] * oc;        R[1] = w[0] * w[1] * oc - w[2] * s; R[2] = w[0] * w[2] * oc + w[1] * s;
  R[3] = w[1] * w[0] * oc + w[2] * s; R[4] = c + w[1] * w[1] * oc;        R[5] = w[1] * w[2] * oc - w[0] * s;
  R[6] = w[2] * w[0] * oc - w[1] * s; R[7] = w[2] * w[1] * oc + w[0] * s; R[8] = c + w[2] * w[2] * oc;
}

// Ceres' examples/snavely_reprojection_error.h, as users write it (BALProblem::Cost::AutoDiff).
struct SnavelyReprojection {
  SnavelyReprojection(double x, double y) : observed_x(x), observed_y(y) {}
  template <typename T>
  bool operator()(const T* camera, const T* point, T* residuals) const {
    T p[3];
    ceres::AngleAxisRotatePoint(camera, point, p);
    p[0] += camera[3];
    p[1] += camera[4];
    p[2] += camera[5];
    detail::snavely_autodiff_residuals(p, camera + 6, observed_x, observed_y, residuals);
    return true;
  }
  double observed_x, observed_y;
};

}  // namespace

BALProblem::BALProblem(int num_cameras, int num_points, std::vector<int> camera_index, std::vector<int> point_index,
                       std::vector<double> observations, std::vector<double> cameras, std::vector<double> points)
    : num_cameras_(num_cameras), num_points_(num_points), camera_index_(std::move(camera_index)),
      point_index_(std::move(point_index)), observations_(std::move(observations)), cameras_(std::move(cameras)),
      points_(std::move(points)) {
  validate();
}

void BALProblem::validate() const {
  if (num_cameras_ < 0 || num_points_ < 0) throw InvalidArgument("BALProblem: negative camera or point count");
  const std::size_t m = camera_index_.size();
  if (point_index_.size() != m || observations_.size() != 2 * m)
    throw InvalidArgument("BALProblem: " + std::to_string(m) + " camera indices, " +
                          std::to_string(point_index_.size()) + " point indices and " +
                          std::to_string(observations_.size()) + " observation values (need 2 per observation)");
  if (cameras_.size() != static_cast<std::size_t>(kCameraSize) * num_cameras_ ||
      points_.size() != static_cast<std::size_t>(kPointSize) * num_points_)
    throw InvalidArgument("BALProblem: camera/point arrays do not have 9 values per camera and 3 per point");
  for (std::size_t i = 0; i < m; ++i) {
    if (camera_index_[i] < 0 || camera_index_[i] >= num_cameras_ || point_index_[i] < 0 ||
        point_index_[i] >= num_points_)
      throw InvalidArgument("BALProblem: observation " + std::to_string(i) + " refers to camera " +
                            std::to_string(camera_index_[i]) + " / point " + std::to_string(point_index_[i]) +
                            " out of range");
    if (!std::isfinite(observations_[2 * i]) || !std::isfinite(observations_[2 * i + 1]))
      throw InvalidArgument("BALProblem: observation " + std::to_string(i) + " is not finite");
  }
  for (std::size_t i = 0; i < cameras_.size(); ++i)
    if (!std::isfinite(cameras_[i])) throw InvalidArgument("BALProblem: camera " + std::to_string(i / 9) + " is not finite");
  for (std::size_t i = 0; i < points_.size(); ++i)
    if (!std::isfinite(points_[i])) throw InvalidArgument("BALProblem: point " + std::to_string(i / 3) + " is not finite");
}

BALProblem BALProblem::read(const std::string& path) try {
  BalSource source(path);
  linalg_cuda::detail::TextBlocks text([&source](char* out, std::size_t size) { return source.read(out, size); },
                                       linalg_cuda::detail::TextBlocks::Cut::AfterBlank, kMaxFieldBytes,
                                       source.expected_text_bytes());
  Tokenizer in(path, text);
  BalHeader header;
  BALProblem p;
  const auto parse = [&] {
    const long cameras = in.integer("the number of cameras");
    const long points = in.integer("the number of points");
    const long observations = in.integer("the number of observations");
    if (cameras < 0 || points < 0 || observations < 0 || cameras > (1L << 28) || points > (1L << 30) ||
        observations > (1L << 31) - 1)
      in.fail("header counts out of range: " + std::to_string(cameras) + " " + std::to_string(points) + " " +
              std::to_string(observations));
    header.known = true;
    header.cameras = cameras;
    header.points = points;
    header.observations = observations;
    header.line = in.line();
    header.end = in.offset();
    header.least = 8LL * observations + 2LL * kCameraSize * cameras + 2LL * kPointSize * points;
    // Before any memory is reserved: a header that promises more than the rest of the text holds
    // fails here, not after gigabytes of reservations. A bzip2 file's text is known only by reading
    // it; checked here against what it may expand to, and against its size once read.
    if (source.text_bytes() > 0 && header.promises_more_than(source.text_bytes()))
      throw header.error(path, source.text_bytes());
    if (source.text_bound() > 0 && header.promises_more_than(source.text_bound()))
      throw header.error(path, source.text_bound());
    // What the text backs is reserved at once; a text of unknown size (a pipe) reserves what its
    // current block can hold and grows with what it holds.
    const bool backed = source.text_bytes() > 0 || source.text_bound() > 0;
    const auto reservation = [&](long count, std::size_t least_bytes) {
      return backed ? static_cast<std::size_t>(count)
                    : std::min(static_cast<std::size_t>(count), in.buffered_bytes() / least_bytes + 1);
    };
    p.num_cameras_ = static_cast<int>(cameras);
    p.num_points_ = static_cast<int>(points);
    p.camera_index_.reserve(reservation(observations, 8));
    p.point_index_.reserve(reservation(observations, 8));
    p.observations_.reserve(2 * reservation(observations, 8));
    for (long i = 0; i < observations; ++i) {
      const long c = in.integer("an observation's camera index");
      const long q = in.integer("an observation's point index");
      if (c < 0 || c >= cameras) in.fail("camera index " + std::to_string(c) + " out of range [0, " + std::to_string(cameras) + ")");
      if (q < 0 || q >= points) in.fail("point index " + std::to_string(q) + " out of range [0, " + std::to_string(points) + ")");
      p.camera_index_.push_back(static_cast<int>(c));
      p.point_index_.push_back(static_cast<int>(q));
      const double x = in.number("an observation's x");
      const double y = in.number("an observation's y");
      p.observations_.push_back(x);
      p.observations_.push_back(y);
    }
    p.cameras_.reserve(kCameraSize * reservation(cameras, 2 * kCameraSize));
    for (long i = 0; i < kCameraSize * cameras; ++i) p.cameras_.push_back(in.number("a camera parameter"));
    p.points_.reserve(kPointSize * reservation(points, 2 * kPointSize));
    for (long i = 0; i < kPointSize * points; ++i) p.points_.push_back(in.number("a point coordinate"));
    in.expect_end();
  };
  // Reads the rest of the text and returns its size; a bzip2 error on the way is the error. A cut
  // bzip2 stream names the text's last line.
  const auto rest_of_text = [&]() -> std::uint64_t {
    std::uint64_t newlines = 0;
    try {
      return text.drain(in.position(), &newlines);
    } catch (const TruncatedBzip2&) {
      throw ParseError(path, in.line() + static_cast<long>(newlines), "bzip2 stream ends early (truncated file)");
    }
  };
  try {
    parse();
  } catch (const TruncatedBzip2&) {
    rest_of_text();  // throws the error with the line
    throw ParseError(path, in.line(), "bzip2 stream ends early (truncated file)");
  } catch (const ParseError&) {
    if (source.text_bytes() > 0) throw;
    // Where the text's size is not known at the header (bzip2, a pipe), the errors of the whole
    // file come first, as they do where it is: a bzip2 error, then a header that promises more than
    // the text holds.
    const std::uint64_t size = rest_of_text();
    if (header.promises_more_than(size)) throw header.error(path, size);
    throw;
  }
  return p;
} catch (...) {
  linalg_cuda::detail::rethrow_with_file_context(path);
}

void BALProblem::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw linalg_cuda::Error(path + ": cannot write");
  char line[128];
  out << num_cameras_ << ' ' << num_points_ << ' ' << num_observations() << '\n';
  for (int i = 0; i < num_observations(); ++i) {
    std::snprintf(line, sizeof line, "%d %d %.17g %.17g\n", camera_index_[i], point_index_[i], observations_[2 * i],
                  observations_[2 * i + 1]);
    out << line;
  }
  for (const double v : cameras_) {
    std::snprintf(line, sizeof line, "%.17g\n", v);
    out << line;
  }
  for (const double v : points_) {
    std::snprintf(line, sizeof line, "%.17g\n", v);
    out << line;
  }
  if (!out) throw linalg_cuda::Error(path + ": write failed");
}

void BALProblem::write_ply(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw linalg_cuda::Error(path + ": cannot write");
  out << "ply\nformat ascii 1.0\nelement vertex " << num_cameras_ + num_points_
      << "\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nproperty uchar green\n"
         "property uchar blue\nend_header\n";
  for (int i = 0; i < num_cameras_; ++i) {
    const double* c = cameras_.data() + kCameraSize * static_cast<std::size_t>(i);
    double R[9];
    angle_axis_to_rotation(c, R);
    // centre = -R' t
    const double x = -(R[0] * c[3] + R[3] * c[4] + R[6] * c[5]);
    const double y = -(R[1] * c[3] + R[4] * c[4] + R[7] * c[5]);
    const double z = -(R[2] * c[3] + R[5] * c[4] + R[8] * c[5]);
    out << x << ' ' << y << ' ' << z << " 0 255 0\n";
  }
  for (int i = 0; i < num_points_; ++i) {
    const double* q = points_.data() + kPointSize * static_cast<std::size_t>(i);
    out << q[0] << ' ' << q[1] << ' ' << q[2] << " 255 255 255\n";
  }
  if (!out) throw linalg_cuda::Error(path + ": write failed");
}

void BALProblem::add_to(ceres::Problem* problem, ceres::LossFunction* loss, Cost cost) {
  for (int i = 0; i < num_observations(); ++i) {
    const double x = observations_[2 * i], y = observations_[2 * i + 1];
    ceres::CostFunction* function =
        cost == Cost::Library
            ? SnavelyReprojectionError::Create(x, y)
            : new ceres::AutoDiffCostFunction<SnavelyReprojection, 2, 9, 3>(new SnavelyReprojection(x, y));
    problem->AddResidualBlock(function, loss, mutable_camera(camera_index_[i]), mutable_point(point_index_[i]));
  }
}

BALProblem make_synthetic_bal(const SyntheticBalOptions& o) {
  if (o.num_cameras < 2 || o.num_points < 1)
    throw InvalidArgument("make_synthetic_bal: need >= 2 cameras and >= 1 point");
  // Cameras per point: `base`, and one more for the first `extra` points.
  const long long total =
      o.num_observations > 0 ? o.num_observations : static_cast<long long>(o.num_points) * o.observations_per_point;
  const long long base = total / o.num_points, extra = total % o.num_points;
  if (base < 2 || base + (extra > 0 ? 1 : 0) > o.num_cameras)
    throw InvalidArgument(o.num_observations > 0
                              ? "make_synthetic_bal: num_observations must give every point 2 to num_cameras observations"
                              : "make_synthetic_bal: need 2 <= observations_per_point <= cameras");
  if (total > (1LL << 31) - 1) throw InvalidArgument("make_synthetic_bal: more than 2^31 - 1 observations");
  if (!(o.pixel_noise >= 0) || !(o.outlier_fraction >= 0 && o.outlier_fraction <= 1) || !(o.camera_perturbation >= 0) ||
      !(o.point_perturbation >= 0))
    throw InvalidArgument("make_synthetic_bal: noise, perturbations and outlier fraction must be >= 0 (fraction <= 1)");
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  constexpr double kRadius = 10.0, kSceneRadius = 3.0, kPi = 3.14159265358979323846;

  // True cameras on a circle (with a gentle height wave), looking at the origin; BAL cameras look
  // down their -z axis, so the camera's z axis points away from the scene.
  std::vector<double> cameras(9 * static_cast<std::size_t>(o.num_cameras));
  for (int i = 0; i < o.num_cameras; ++i) {
    const double a = 2.0 * kPi * i / o.num_cameras;
    const double C[3] = {kRadius * std::cos(a), kRadius * std::sin(a), 1.5 * std::sin(3.0 * a)};
    const double norm = std::sqrt(C[0] * C[0] + C[1] * C[1] + C[2] * C[2]);
    const double z[3] = {C[0] / norm, C[1] / norm, C[2] / norm};
    double x[3] = {-z[1], z[0], 0.0};  // up (0, 0, 1) x z
    const double xn = std::sqrt(x[0] * x[0] + x[1] * x[1]);
    x[0] /= xn;
    x[1] /= xn;
    const double y[3] = {z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]};
    const double R[9] = {x[0], x[1], x[2], y[0], y[1], y[2], z[0], z[1], z[2]};
    double* cam = cameras.data() + 9 * static_cast<std::size_t>(i);
    rotation_to_angle_axis(R, cam);
    for (int r = 0; r < 3; ++r) cam[3 + r] = -(R[3 * r] * C[0] + R[3 * r + 1] * C[1] + R[3 * r + 2] * C[2]);
    cam[6] = 800.0 * (1.0 + 0.1 * uniform(rng));
    cam[7] = -0.05 + 0.02 * uniform(rng);
    cam[8] = 0.01 + 0.005 * uniform(rng);
  }
  std::vector<double> points(3 * static_cast<std::size_t>(o.num_points));
  for (int j = 0; j < o.num_points; ++j) {
    double* X = points.data() + 3 * static_cast<std::size_t>(j);
    do {
      for (int k = 0; k < 3; ++k) X[k] = kSceneRadius * uniform(rng);
    } while (X[0] * X[0] + X[1] * X[1] + X[2] * X[2] > kSceneRadius * kSceneRadius);
  }

  // Observations sorted by point, like the BAL files; each point seen by a run of neighbouring
  // cameras starting at a random one (as in a video sequence).
  std::vector<int> camera_index, point_index;
  std::vector<double> observations;
  camera_index.reserve(static_cast<std::size_t>(total));
  point_index.reserve(static_cast<std::size_t>(total));
  observations.reserve(2 * static_cast<std::size_t>(total));
  std::uniform_int_distribution<int> first_camera(0, o.num_cameras - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<int> seen;
  for (int j = 0; j < o.num_points; ++j) {
    const int first = first_camera(rng);
    seen.resize(static_cast<std::size_t>(base + (j < extra ? 1 : 0)));
    for (std::size_t k = 0; k < seen.size(); ++k) seen[k] = (first + static_cast<int>(k)) % o.num_cameras;
    std::sort(seen.begin(), seen.end());
    for (const int c : seen) {
      double residual[2];
      // observed = 0 gives the prediction itself
      SnavelyReprojectionError model(0.0, 0.0);
      const double* params[2] = {cameras.data() + 9 * static_cast<std::size_t>(c),
                                 points.data() + 3 * static_cast<std::size_t>(j)};
      model.Evaluate(params, residual, nullptr);
      double u = residual[0] + o.pixel_noise * gauss(rng), v = residual[1] + o.pixel_noise * gauss(rng);
      if (unit(rng) < o.outlier_fraction) {
        u = 500.0 * uniform(rng);
        v = 500.0 * uniform(rng);
      }
      camera_index.push_back(c);
      point_index.push_back(j);
      observations.push_back(u);
      observations.push_back(v);
    }
  }

  // The initial estimate: the truth, perturbed.
  for (int i = 0; i < o.num_cameras; ++i) {
    double* cam = cameras.data() + 9 * static_cast<std::size_t>(i);
    for (int k = 0; k < 3; ++k) cam[k] += o.camera_perturbation * gauss(rng);
    for (int k = 3; k < 6; ++k) cam[k] += o.camera_perturbation * kRadius * gauss(rng);
    cam[6] *= 1.0 + o.camera_perturbation * gauss(rng);
  }
  for (double& v : points) v += o.point_perturbation * gauss(rng);
  return BALProblem(o.num_cameras, o.num_points, std::move(camera_index), std::move(point_index),
                    std::move(observations), std::move(cameras), std::move(points));
}

}  // namespace ceres_cuda
