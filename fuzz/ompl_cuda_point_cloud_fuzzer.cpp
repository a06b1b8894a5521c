// libFuzzer harness of ompl_cuda's point cloud reader (PLY and PCD). The input is the whole file,
// written to a scratch file named .ply when it starts with "ply" and .pcd otherwise (the reader picks
// the format by the name), and read twice: as it is, and with non-finite points dropped. Points that
// are read must be finite, come in triples, agree between the two reads (the strict read's points are
// the dropping read's when both succeed), and come back bit for bit through write_ply and the reader.
// Bad input must end in linalg_cuda's typed errors (fuzz_support.h says which still count as findings).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "ompl_cuda/point_cloud.h"

namespace {

struct Outcome {
  bool failed = false;
  std::vector<float> points;
};

Outcome read(const std::string& path, long lines, bool drop) {
  Outcome outcome;
  ompl_cuda::PointCloudReadOptions options;
  options.drop_non_finite = drop;
  try {
    outcome.points = ompl_cuda::read_point_cloud(path, options);
  } catch (const linalg_cuda::Error& error) {
    outcome.failed = true;
    fuzz::checked_message(error, path, lines);
    return outcome;
  }
  if (outcome.points.size() % 3 != 0) fuzz::finding("a cloud whose values are not x y z triples");
  for (const float v : outcome.points)
    if (!std::isfinite(v)) fuzz::finding("a cloud with a coordinate that is not finite");
  return outcome;
}

void check_round_trip(const std::vector<float>& points) {
  static const fuzz::ScratchFile file(".written.ply");
  std::vector<float> again;
  try {
    ompl_cuda::write_ply(file.path(), points);
    again = ompl_cuda::read_point_cloud(file.path());
  } catch (const linalg_cuda::Error& error) {
    fuzz::finding(std::string("points that were read do not come back through write_ply: ") + error.what());
  }
  if (again.size() != points.size() ||
      (!points.empty() && std::memcmp(again.data(), points.data(), points.size() * sizeof(float)) != 0))
    fuzz::finding("points written with write_ply read back different");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile ply(".ply");
  static const fuzz::ScratchFile pcd(".pcd");
  const bool is_ply = size >= 3 && std::memcmp(data, "ply", 3) == 0;
  const std::string& path = (is_ply ? ply : pcd).write(data, size);
  const long lines = fuzz::line_count(data, size);
  const Outcome strict = read(path, lines, false);
  const Outcome dropping = read(path, lines, true);
  if (!strict.failed && (dropping.failed || dropping.points != strict.points))
    fuzz::finding("a cloud read strictly is not the one read with non-finite points dropped");
  if (!dropping.failed) check_round_trip(dropping.points);
  return 0;
}
