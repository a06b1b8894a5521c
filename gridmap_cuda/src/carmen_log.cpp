// CARMEN log reading and writing.
//
// Why it looks like this: the format facts (from CARMEN's readlog.c / writelog.c).
//  - One message per line, fields separated by blanks; '#' starts a comment line. Only the laser
//    messages are read here; every other type (PARAM, SYNC, ODOM, NEFF, RLASER, RAWLASER*, TRUEPOS,
//    ROBOTLASER2, ...) is skipped without looking at it.
//  - Old format: FLASER num_readings r1..rn laser_x laser_y laser_theta robot_x robot_y robot_theta
//    ipc_timestamp hostname logger_timestamp. The line carries no geometry, so it is guessed like
//    CARMEN does: start_angle = -pi/2; 180/181 beams -> pi/180 apart, 360/361 -> pi/360, 400/401 ->
//    pi/720, any other n -> pi/(n-1) (a 180-degree fan); max_range = 80 m.
//  - New format: ROBOTLASER1 laser_type start_angle field_of_view angular_resolution maximum_range
//    accuracy remission_mode num_readings r1..rn num_remissions rem1..remk laser_x laser_y
//    laser_theta robot_x robot_y robot_theta tv rv forward_safety_dist side_safety_dist turn_axis
//    ipc_timestamp hostname logger_timestamp.
//  - The laser pose (first triple) is the one used; the robot pose is checked but dropped. Positions
//    are at most kMaxPosition from the origin (see there).
//  - Some logs leave out hostname and logger_timestamp, so everything after ipc_timestamp is
//    optional (at most those two fields, though: more means the beam count is wrong). Everything
//    before it must be present and numeric. A last line without a newline must be complete up to
//    logger_timestamp; otherwise the file was cut mid-line and the line is reported as truncated.
//  - Real logs are millions of readings (freiburg-079: 1.7M), so the file is read through zlib in
//    1 MiB blocks (gzread also reads uncompressed files), split into lines by hand and converted
//    with strtod/strtof, checking that each conversion consumed the whole field.
#include "gridmap_cuda/carmen_log.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"
#include "linalg_cuda/internal/readable.h"

namespace gridmap_cuda {
namespace {

using linalg_cuda::ParseError;

constexpr double kPi = 3.14159265358979323846;
constexpr unsigned kBlockSize = 1u << 20;  // zlib buffer and read block (1 MiB)
// The longest line read: a laser line of a million readings takes about 10 MiB; a longer "line" (a
// gzip bomb of one line, a binary file) is refused before its buffer fills the memory.
constexpr size_t kMaxLineBytes = size_t(64) << 20;
constexpr double kFlaserMaxRange = 80.0;   // what CARMEN assumes for old-format lines
// The farthest a pose's x or y may lie from the origin, in metres: 10^8 m, ten times the largest
// coordinate of the frames robots log in (UTM northings reach 10^7 m, Earth-centred coordinates
// 6.4e6 m). A position beyond it is a corrupt field (1e300), not a place: no grid spans it (at 1 m
// a cell, 10^8 m is 10^8 cells a side), and a map's error about it could not say where it came from.
constexpr double kMaxPosition = 1e8;

// Whitespace inside a line; '\r' is included so that files written on Windows parse unchanged.
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// One blank-separated field of a line. The character after it is a blank or the line's '\0', so
// strtod/strtol stop there and "consumed the whole field" is end == p + n.
struct Field {
  const char* p;
  size_t n;
};

bool equals(const Field& f, const char* word) {
  const size_t len = std::strlen(word);
  return f.n == len && std::memcmp(f.p, word, len) == 0;
}

bool to_double(const Field& f, double& out) {
  char* end = nullptr;
  out = std::strtod(f.p, &end);
  return f.n > 0 && end == f.p + f.n;
}

bool is_number(const Field& f) {
  double unused;
  return to_double(f, unused);
}

// A field quoted for an error message (long garbage is cut).
std::string quoted(const Field& f) {
  constexpr size_t kMax = 40;
  std::string text(f.p, std::min(f.n, kMax));
  if (f.n > kMax) text += "...";
  return "'" + text + "'";
}

// Parses the fields of one laser line; every failure names the file, the line and the message type.
class LineParser {
 public:
  LineParser(const std::string& path, long line, const char* type, const std::vector<Field>& fields,
             bool unterminated)
      : path_(path), line_(line), type_(type), f_(fields), unterminated_(unterminated) {
    // Where the numeric body of the line ends: at the hostname when there is one (a non-numeric
    // field among the last two), else at the end of the line.
    const size_t size = f_.size();
    if (size >= 3 && !is_number(f_[size - 2])) {
      body_end_ = size - 2;
      complete_ = true;
    } else if (size >= 3 && !is_number(f_[size - 1])) {
      body_end_ = size - 1;
    } else {
      body_end_ = size;
    }
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw ParseError(path_, line_, std::string(type_) + ": " + message);
  }

  // The last line of a file without a newline must end with hostname and logger_timestamp.
  void check_not_truncated() const {
    if (unterminated_ && !complete_) {
      fail("truncated last line (no newline at end of file, and the line does not end with hostname and "
           "logger_timestamp)");
    }
  }

  size_t size() const { return f_.size(); }
  size_t body_end() const { return body_end_; }

  // Field index as written (shortened), for messages.
  std::string field_text(size_t index) const { return quoted(f_[index]); }

  void require(size_t index, const char* name) const {
    if (index >= f_.size()) fail(std::string("missing field '") + name + "'");
  }

  double number(size_t index, const char* name) const {
    require(index, name);
    double value;
    if (!to_double(f_[index], value)) fail(std::string("field '") + name + "' is not a number: " + quoted(f_[index]));
    if (!std::isfinite(value)) fail(std::string("field '") + name + "' is not finite: " + quoted(f_[index]));
    return value;
  }

  long integer(size_t index, const char* name) const {
    require(index, name);
    const Field& f = f_[index];
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(f.p, &end, 10);
    if (f.n == 0 || end != f.p + f.n || errno == ERANGE) {
      fail(std::string("field '") + name + "' is not an integer: " + quoted(f));
    }
    return value;
  }

  long count(size_t index, const char* name) const {
    const long value = integer(index, name);
    if (value < 0) fail(std::string("field '") + name + "' is negative: " + quoted(f_[index]));
    return value;
  }

  // Reading `beam` (0-based) of the scan, at field `index`.
  float range(size_t index, size_t beam) const {
    const Field& f = f_[index];
    char* end = nullptr;
    const float value = std::strtof(f.p, &end);
    if (f.n == 0 || end != f.p + f.n) fail("reading " + std::to_string(beam) + " is not a number: " + quoted(f));
    if (std::isnan(value)) fail("reading " + std::to_string(beam) + " is NaN: " + quoted(f));
    if (std::isinf(value)) fail("reading " + std::to_string(beam) + " is not finite: " + quoted(f));
    if (value < 0.0f) fail("reading " + std::to_string(beam) + " is negative: " + quoted(f));
    return value;
  }

  void ranges(size_t first, size_t n, std::vector<float>& out) const {
    out.resize(n);
    for (size_t i = 0; i < n; ++i) out[i] = range(first + i, i);
  }

 private:
  const std::string& path_;
  long line_;
  const char* type_;
  const std::vector<Field>& f_;
  bool unterminated_;
  size_t body_end_ = 0;
  bool complete_ = false;
};

double flaser_angular_resolution(long n) {
  if (n == 180 || n == 181) return kPi / 180.0;
  if (n == 360 || n == 361) return kPi / 360.0;
  if (n == 400 || n == 401) return kPi / 720.0;
  if (n >= 2) return kPi / static_cast<double>(n - 1);
  return kPi / 180.0;  // 0 or 1 beam: no fan to spread, keep CARMEN's default
}

const char* const kPoseNames[6] = {"laser_x", "laser_y", "laser_theta", "robot_x", "robot_y", "robot_theta"};

// Reads laser pose, robot pose (checked, dropped) from fields [first, first + 6).
Pose2D parse_poses(const LineParser& p, size_t first) {
  double values[6];
  for (size_t i = 0; i < 6; ++i) {
    values[i] = p.number(first + i, kPoseNames[i]);
    const bool position = i % 3 != 2;
    if (position && !(std::fabs(values[i]) <= kMaxPosition)) {
      p.fail(std::string("field '") + kPoseNames[i] + "' is " + linalg_cuda::detail::readable(values[i]) +
             " m, farther than " + linalg_cuda::detail::readable(kMaxPosition) +
             " m from the origin: not a position in any map (a corrupt field?)");
    }
  }
  return Pose2D{values[0], values[1], values[2]};
}

// FLASER n r1..rn laser_x laser_y laser_theta robot_x robot_y robot_theta ipc_timestamp [host [logger_ts]]
LaserScan parse_flaser(const LineParser& p) {
  p.check_not_truncated();
  const long n = p.count(1, "num_readings");
  const size_t numeric = p.body_end() - 2;  // numeric fields after num_readings
  constexpr size_t kTrailer = 7;            // laser pose, robot pose, ipc_timestamp
  if (numeric != static_cast<size_t>(n) + kTrailer) {
    const std::string need = std::to_string(n) + " readings + laser pose + robot pose + ipc_timestamp need " +
                             std::to_string(n + kTrailer) + " numeric fields after num_readings";
    const char* what = numeric < static_cast<size_t>(n) + kTrailer ? "line too short" : "line too long";
    if (numeric < kTrailer) p.fail(std::string(what) + ": " + need + ", found " + std::to_string(numeric));
    p.fail("expected " + std::to_string(n) + " readings, found " + std::to_string(numeric - kTrailer) + " (" + what +
           ": " + need + ", found " + std::to_string(numeric) + ")");
  }
  LaserScan scan;
  p.ranges(2, static_cast<size_t>(n), scan.ranges);
  const size_t pose = 2 + static_cast<size_t>(n);
  scan.laser_pose = parse_poses(p, pose);
  scan.timestamp = p.number(pose + 6, "ipc_timestamp");
  scan.start_angle = -kPi / 2.0;
  scan.angular_resolution = flaser_angular_resolution(n);
  scan.max_range = kFlaserMaxRange;
  return scan;
}

// ROBOTLASER1 laser_type start_angle fov angular_resolution max_range accuracy remission_mode n r1..rn
//   k rem1..remk laser pose, robot pose, tv rv forward_safety_dist side_safety_dist turn_axis
//   ipc_timestamp [host [logger_ts]]
LaserScan parse_robotlaser1(const LineParser& p) {
  p.check_not_truncated();
  LaserScan scan;
  p.integer(1, "laser_type");
  scan.start_angle = p.number(2, "start_angle");
  p.number(3, "field_of_view");
  scan.angular_resolution = p.number(4, "angular_resolution");
  scan.max_range = p.number(5, "maximum_range");
  if (!(scan.max_range > 0.0)) p.fail("field 'maximum_range' must be positive, got " + p.field_text(5));
  p.number(6, "accuracy");
  p.integer(7, "remission_mode");
  const long n = p.count(8, "num_readings");
  const size_t first_reading = 9;
  const size_t body_end = p.body_end();
  const size_t remissions_at = first_reading + static_cast<size_t>(n);
  if (remissions_at >= body_end) {
    p.fail("line too short: expected " + std::to_string(n) + " readings followed by num_remissions, found " +
           std::to_string(body_end > first_reading ? body_end - first_reading : 0) +
           " numeric fields after num_readings");
  }
  const long k = p.count(remissions_at, "num_remissions");
  constexpr size_t kTrailer = 12;  // laser pose, robot pose, tv rv fwd side turn_axis, ipc_timestamp
  const size_t after_remissions = body_end - remissions_at - 1;
  if (after_remissions != static_cast<size_t>(k) + kTrailer) {
    p.fail("expected " + std::to_string(n) + " readings, then " + std::to_string(k) +
           " remissions + laser pose + robot pose + tv rv forward_safety_dist side_safety_dist turn_axis "
           "ipc_timestamp (" +
           std::to_string(k + kTrailer) + " numeric fields after num_remissions), found " +
           std::to_string(after_remissions) + " numeric fields after num_remissions");
  }
  // Every beam has a direction, start_angle + i * angular_resolution: a fan that leaves the range of
  // double is no scan (and its field of view, which write_carmen_log writes, would be infinite).
  if (n >= 2 && !std::isfinite(scan.start_angle + scan.angular_resolution * static_cast<double>(n - 1))) {
    p.fail("the last of " + std::to_string(n) + " beams has no finite angle (start_angle " + p.field_text(2) +
           " + " + std::to_string(n - 1) + " * angular_resolution " + p.field_text(4) + ")");
  }
  p.ranges(first_reading, static_cast<size_t>(n), scan.ranges);
  const size_t first_remission = remissions_at + 1;
  for (long i = 0; i < k; ++i) p.number(first_remission + static_cast<size_t>(i), "remission");  // checked, not kept
  const size_t pose = first_remission + static_cast<size_t>(k);
  scan.laser_pose = parse_poses(p, pose);
  const char* const kRest[5] = {"tv", "rv", "forward_safety_dist", "side_safety_dist", "turn_axis"};
  for (size_t i = 0; i < 5; ++i) p.number(pose + 6 + i, kRest[i]);
  scan.timestamp = p.number(pose + 11, "ipc_timestamp");
  return scan;
}

// Splits lines, keeps the field vector between lines, collects the scans.
class LogParser {
 public:
  explicit LogParser(const std::string& path) : path_(path) { fields_.reserve(512); }

  // [begin, end) is one line without its '\n'; *end is '\0'.
  void line(const char* begin, const char* end, long number, bool unterminated) {
    fields_.clear();
    const char* p = begin;
    while (p < end) {
      while (p < end && is_blank(*p)) ++p;
      if (p == end) break;
      const char* start = p;
      while (p < end && !is_blank(*p)) ++p;
      fields_.push_back(Field{start, static_cast<size_t>(p - start)});
    }
    if (fields_.empty() || fields_[0].p[0] == '#') return;
    if (equals(fields_[0], "FLASER")) {
      scans_.push_back(parse_flaser(LineParser(path_, number, "FLASER", fields_, unterminated)));
    } else if (equals(fields_[0], "ROBOTLASER1")) {
      scans_.push_back(parse_robotlaser1(LineParser(path_, number, "ROBOTLASER1", fields_, unterminated)));
    }
  }

  std::vector<LaserScan>& scans() { return scans_; }

 private:
  const std::string& path_;
  std::vector<Field> fields_;
  std::vector<LaserScan> scans_;
};

struct GzFile {
  gzFile f = nullptr;
  ~GzFile() {
    if (f) gzclose(f);
  }
};

std::string gz_message(gzFile f) {
  int code = Z_OK;
  const char* text = gzerror(f, &code);
  if (code == Z_ERRNO) return std::strerror(errno);
  return text ? text : "unknown zlib error";
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void append(std::string& out, const char* format, double value) {
  char buffer[64];
  const int n = std::snprintf(buffer, sizeof buffer, format, value);
  out.append(buffer, static_cast<size_t>(n));
}

void append(std::string& out, const char* text) { out.append(text); }

void check_writable(const LaserScan& scan, size_t index) {
  auto bad = [index](const std::string& what) {
    throw linalg_cuda::InvalidArgument("write_carmen_log: scan " + std::to_string(index) + ": " + what);
  };
  const double values[] = {scan.laser_pose.x, scan.laser_pose.y,  scan.laser_pose.theta, scan.start_angle,
                           scan.angular_resolution, scan.max_range, scan.timestamp};
  for (const double v : values) {
    if (!std::isfinite(v)) bad("pose, geometry and timestamp must be finite");
  }
  // What the reader refuses is not written.
  if (!(std::fabs(scan.laser_pose.x) <= kMaxPosition && std::fabs(scan.laser_pose.y) <= kMaxPosition)) {
    bad("laser pose (" + linalg_cuda::detail::readable(scan.laser_pose.x) + ", " +
        linalg_cuda::detail::readable(scan.laser_pose.y) + ") farther than " +
        linalg_cuda::detail::readable(kMaxPosition) + " m from the origin");
  }
  // The line carries the field of view, angular_resolution * (beams - 1); the reader refuses it infinite.
  const double beams = static_cast<double>(scan.ranges.size());
  if (beams >= 2 && !std::isfinite(scan.start_angle + scan.angular_resolution * (beams - 1.0))) {
    bad("the last beam has no finite angle (start_angle + (beams - 1) * angular_resolution)");
  }
  for (size_t i = 0; i < scan.ranges.size(); ++i) {
    if (!std::isfinite(scan.ranges[i]) || scan.ranges[i] < 0.0f) {
      bad("range " + std::to_string(i) + " is negative or not finite");
    }
  }
}

}  // namespace

std::vector<LaserScan> read_carmen_log(const std::string& path) try {
  GzFile file;
  errno = 0;
  file.f = gzopen(path.c_str(), "rb");
  if (!file.f) {
    throw ParseError(path, 0, std::string("cannot open file: ") + (errno ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(file.f, kBlockSize);

  LogParser parser(path);
  // buffer[0, kept) holds the start of a line whose '\n' has not been read yet; a line longer than
  // half the buffer makes it grow. One byte stays free for the '\0' after the last line.
  std::vector<char> buffer(static_cast<size_t>(kBlockSize) + 1);
  size_t kept = 0;
  long line_number = 0;
  for (;;) {
    if (kept > kMaxLineBytes)
      throw ParseError(path, line_number + 1, "line longer than " + std::to_string(kMaxLineBytes >> 20) +
                                                  " MiB: not a CARMEN log line");
    if (buffer.size() - 1 - kept < kBlockSize / 2) buffer.resize(buffer.size() * 2);
    const unsigned want = static_cast<unsigned>(std::min<size_t>(buffer.size() - 1 - kept, kBlockSize));
    const int got = gzread(file.f, buffer.data() + kept, want);
    if (got < 0) throw ParseError(path, line_number + 1, "read error: " + gz_message(file.f));
    if (got == 0) {
      // zlib reports a gzip stream cut short as Z_BUF_ERROR with a normal end of data.
      int code = Z_OK;
      gzerror(file.f, &code);
      if (code != Z_OK) throw ParseError(path, line_number + 1, "read error: " + gz_message(file.f));
      if (kept > 0) {
        buffer[kept] = '\0';
        parser.line(buffer.data(), buffer.data() + kept, ++line_number, /*unterminated=*/true);
      }
      break;
    }
    char* begin = buffer.data();
    char* const end = begin + kept + static_cast<size_t>(got);
    for (;;) {
      char* newline = static_cast<char*>(std::memchr(begin, '\n', static_cast<size_t>(end - begin)));
      if (!newline) break;
      *newline = '\0';
      parser.line(begin, newline, ++line_number, /*unterminated=*/false);
      begin = newline + 1;
    }
    kept = static_cast<size_t>(end - begin);
    std::memmove(buffer.data(), begin, kept);
  }
  return std::move(parser.scans());
} catch (...) {
  linalg_cuda::detail::rethrow_with_file_context(path);
}

void write_carmen_log(const std::string& path, const std::vector<LaserScan>& scans) {
  // Checked first, so that a bad scan leaves no half-written file behind.
  for (size_t i = 0; i < scans.size(); ++i) check_writable(scans[i], i);

  const bool compress = ends_with(path, ".gz");
  GzFile file;
  errno = 0;
  file.f = gzopen(path.c_str(), compress ? "wb" : "wbT");  // T: plain (transparent) output
  if (!file.f) {
    throw linalg_cuda::Error("cannot open " + path + " for writing: " +
                             (errno ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(file.f, kBlockSize);

  std::string text;
  text.reserve(2 * kBlockSize);
  auto flush = [&] {
    if (text.empty()) return;
    if (gzwrite(file.f, text.data(), static_cast<unsigned>(text.size())) != static_cast<int>(text.size())) {
      throw linalg_cuda::Error("cannot write " + path + ": " + gz_message(file.f));
    }
    text.clear();
  };

  append(text,
         "# CARMEN log written by cuda_solvers (gridmap_cuda::write_carmen_log)\n"
         "# ROBOTLASER1 laser_type start_angle field_of_view angular_resolution maximum_range accuracy "
         "remission_mode num_readings [range_readings] num_remissions [remissions] laser_pose_x laser_pose_y "
         "laser_pose_theta robot_pose_x robot_pose_y robot_pose_theta laser_tv laser_rv forward_safety_dist "
         "side_safety_dist turn_axis ipc_timestamp hostname logger_timestamp\n");
  for (const LaserScan& scan : scans) {
    const size_t n = scan.ranges.size();
    const double fov = n > 0 ? scan.angular_resolution * static_cast<double>(n - 1) : 0.0;
    append(text, "ROBOTLASER1 0 ");
    append(text, "%.17g ", scan.start_angle);
    append(text, "%.17g ", fov);
    append(text, "%.17g ", scan.angular_resolution);
    append(text, "%.17g ", scan.max_range);
    append(text, "0.01 0 ");
    text += std::to_string(n);
    for (const float r : scan.ranges) append(text, " %.9g", static_cast<double>(r));
    append(text, " 0");  // num_remissions
    for (int copy = 0; copy < 2; ++copy) {  // laser pose, then robot pose = laser pose
      append(text, " %.17g", scan.laser_pose.x);
      append(text, " %.17g", scan.laser_pose.y);
      append(text, " %.17g", scan.laser_pose.theta);
    }
    append(text, " 0 0 0 0 0");  // tv rv forward_safety_dist side_safety_dist turn_axis
    append(text, " %.17g cuda_solvers", scan.timestamp);
    append(text, " %.17g\n", scan.timestamp);
    if (text.size() >= kBlockSize) flush();
  }
  flush();

  gzFile f = file.f;
  file.f = nullptr;
  const int rc = gzclose(f);
  if (rc != Z_OK) {
    throw linalg_cuda::Error("cannot write " + path + ": " +
                             (rc == Z_ERRNO ? std::string(std::strerror(errno)) : "zlib error " + std::to_string(rc)));
  }
}

}  // namespace gridmap_cuda
