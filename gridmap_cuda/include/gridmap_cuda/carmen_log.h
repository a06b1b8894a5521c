#pragma once
// CARMEN log reading and writing (.log, or gzip-compressed .log.gz).
#include <string>
#include <vector>

#include "gridmap_cuda/laser_scan.h"

namespace gridmap_cuda {

// Reads the laser scans of a CARMEN log: FLASER lines (old format: 180/181 beams at 1 deg, 360/361 at
// 0.5 deg, 400/401 at 0.25 deg, starting at -pi/2, as CARMEN guesses) and ROBOTLASER1 lines (geometry
// given on the line). The laser pose of each line is used. Other message types (PARAM, ODOM, NEFF,
// RAWLASER, ...) and comment lines (#) are skipped. A malformed laser line (missing or non-numeric
// fields, a beam count that does not match the readings, NaN or negative ranges, a beam fan whose last
// angle is beyond the range of double, a pose's x or y farther than 1e8 m from the origin: a corrupt
// field, not a place) throws linalg_cuda::ParseError naming the file and line. Files that end in .gz
// are decompressed (zlib).
std::vector<LaserScan> read_carmen_log(const std::string& path);

// Writes scans as ROBOTLASER1 lines (gzip-compressed when path ends in .gz), readable by CARMEN tools
// and by read_carmen_log. Throws linalg_cuda::InvalidArgument, writing nothing, for a scan with a
// value that is not finite, a negative range, a beam fan beyond the range of double or a position
// farther than 1e8 m from the origin.
void write_carmen_log(const std::string& path, const std::vector<LaserScan>& scans);

}  // namespace gridmap_cuda
