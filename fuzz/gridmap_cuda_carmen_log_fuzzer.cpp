// libFuzzer harness of gridmap_cuda's CARMEN log reader. The input is the whole file, written to a
// scratch file (the reader takes a path) and read as it is: plain text, or gzip when the bytes are
// gzip (zlib's gzread reads both). Plain text is also read a second time gzip-compressed, which
// reaches the decompressing path with valid streams and checks that both paths give the same scans or
// the same error. Scans that are read must come back bit for bit from write_carmen_log and the reader.
// Bad input must end in linalg_cuda's typed errors (fuzz_support.h says which of those still count
// as findings).
#include <zlib.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "gridmap_cuda/carmen_log.h"

namespace {

// What reading gave: the scans, or the error's message without the file name.
struct Outcome {
  bool failed = false;
  std::string message;
  std::vector<gridmap_cuda::LaserScan> scans;
};

void check(const std::vector<gridmap_cuda::LaserScan>& scans) {
  for (const gridmap_cuda::LaserScan& scan : scans) {
    const double values[] = {scan.laser_pose.x, scan.laser_pose.y, scan.laser_pose.theta, scan.start_angle,
                             scan.angular_resolution, scan.max_range, scan.timestamp};
    for (const double v : values) {
      if (!std::isfinite(v)) fuzz::finding("a scan with a pose, geometry or timestamp that is not finite");
    }
    if (!(scan.max_range > 0.0)) fuzz::finding("a scan with a non-positive maximum range");
    for (const float r : scan.ranges) {
      if (!std::isfinite(r) || r < 0.0f) fuzz::finding("a scan with a negative or non-finite reading");
    }
  }
}

// `lines`: how many lines the text has (0: not known, the bytes are compressed).
Outcome read(const std::string& path, long lines) {
  Outcome outcome;
  try {
    outcome.scans = gridmap_cuda::read_carmen_log(path);
    check(outcome.scans);
  } catch (const linalg_cuda::Error& error) {
    outcome.failed = true;
    outcome.message = fuzz::checked_message(error, path, lines);
  }
  return outcome;
}

bool same_scans(const std::vector<gridmap_cuda::LaserScan>& a, const std::vector<gridmap_cuda::LaserScan>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const gridmap_cuda::LaserScan &p = a[i], &q = b[i];
    const double u[] = {p.laser_pose.x, p.laser_pose.y, p.laser_pose.theta, p.start_angle,
                        p.angular_resolution, p.max_range, p.timestamp};
    const double v[] = {q.laser_pose.x, q.laser_pose.y, q.laser_pose.theta, q.start_angle,
                        q.angular_resolution, q.max_range, q.timestamp};
    if (std::memcmp(u, v, sizeof u) != 0 || p.ranges != q.ranges) return false;
  }
  return true;
}

// write_carmen_log prints doubles with 17 significant digits and readings with 9, enough to
// reproduce every value.
void check_round_trip(const std::vector<gridmap_cuda::LaserScan>& scans) {
  static const fuzz::ScratchFile file(".written.log");
  try {
    gridmap_cuda::write_carmen_log(file.path(), scans);
  } catch (const linalg_cuda::Error& error) {
    fuzz::finding(std::string("scans that were read cannot be written: ") + error.what());
  }
  std::vector<gridmap_cuda::LaserScan> again;
  try {
    again = gridmap_cuda::read_carmen_log(file.path());
  } catch (const linalg_cuda::Error& error) {
    fuzz::finding(std::string("written scans cannot be read back: ") + error.what());
  }
  if (!same_scans(scans, again)) fuzz::finding("written scans read back different");
}

bool is_gzip(const uint8_t* data, size_t size) { return size >= 2 && data[0] == 0x1f && data[1] == 0x8b; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile plain(".log");
  static const fuzz::ScratchFile compressed(".log.gz");
  if (is_gzip(data, size)) {
    read(plain.write(data, size), 0);
    return 0;
  }
  const long lines = fuzz::line_count(data, size);
  const Outcome direct = read(plain.write(data, size), lines);
  if (!direct.failed) check_round_trip(direct.scans);

  // Level 1: the compressed path is what is checked, not the compression ratio.
  gzFile file = gzopen(compressed.path().c_str(), "wb1");
  if (!file) fuzz::finding("cannot create " + compressed.path());
  if (size > 0 && gzwrite(file, data, static_cast<unsigned>(size)) != static_cast<int>(size)) {
    fuzz::finding("cannot write " + compressed.path());
  }
  if (gzclose(file) != Z_OK) fuzz::finding("cannot close " + compressed.path());
  const Outcome gzipped = read(compressed.path(), lines);
  if (direct.failed != gzipped.failed || direct.message != gzipped.message) {
    fuzz::finding("plain and gzip differ: '" + direct.message + "' against '" + gzipped.message + "'");
  }
  if (!same_scans(direct.scans, gzipped.scans)) fuzz::finding("plain and gzip give different scans");
  return 0;
}
