// libFuzzer harness of ompl_cuda's sphere file reader (read_sphere_file, robot_spheres.h). The input is
// the whole file, written to a scratch file and read for a fixed robot (the Panda's tree,
// ompl_cuda_fuzz_robot.h). What is read must be a list of spheres per link of the robot, one sphere
// per line that is neither blank nor a '#' comment, each with a finite centre and a finite
// non-negative radius, and must come back bit for bit, in its order, through write_sphere_file and the
// reader. Bad input must end in linalg_cuda's typed errors (fuzz_support.h says which still count as
// findings).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "ompl_cuda/robot_spheres.h"
#include "ompl_cuda_fuzz_robot.h"

namespace {

using Spheres = std::vector<std::vector<ompl_cuda::Sphere>>;

const fuzz::ScratchDir& scratch() {
  static const fuzz::ScratchDir dir("spheres");
  return dir;
}

const ompl_cuda::RobotModel& robot() {
  static const ompl_cuda::RobotModel model = fuzz::load_panda_like(scratch());
  return model;
}

// Lines that hold a sphere: those with a character other than space, tab and CR whose first such
// character is not '#'.
size_t sphere_lines(const uint8_t* data, size_t size) {
  size_t count = 0;
  bool start = true, counted = false;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      start = true, counted = false;
    } else if (start && c != ' ' && c != '\t' && c != '\r') {
      start = false;
      if (c != '#' && !counted) ++count, counted = true;
    }
  }
  return count;
}

bool same(const Spheres& a, const Spheres& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t l = 0; l < a.size(); ++l) {
    if (a[l].size() != b[l].size()) return false;
    for (std::size_t k = 0; k < a[l].size(); ++k)
      if (std::memcmp(a[l][k].center, b[l][k].center, sizeof a[l][k].center) != 0 ||
          std::memcmp(&a[l][k].radius, &b[l][k].radius, sizeof(double)) != 0)
        return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  robot();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = scratch().write("robot.spheres", data, size);
  Spheres spheres;
  try {
    spheres = ompl_cuda::read_sphere_file(path, robot());
  } catch (const linalg_cuda::Error& error) {
    fuzz::checked_message(error, path, fuzz::line_count(data, size), data, size);
    return 0;
  }
  if (spheres.size() != robot().links().size()) fuzz::finding("spheres not given per link of the robot");
  size_t count = 0;
  for (const auto& link : spheres)
    for (const ompl_cuda::Sphere& s : link) {
      ++count;
      for (const double v : s.center)
        if (!std::isfinite(v)) fuzz::finding("a sphere whose centre is not finite");
      if (!std::isfinite(s.radius) || s.radius < 0) fuzz::finding("a sphere whose radius is not finite and non-negative");
    }
  if (count != sphere_lines(data, size))
    fuzz::finding(std::to_string(count) + " spheres from " + std::to_string(sphere_lines(data, size)) + " lines that hold one");
  const std::string again = scratch().path() + "/written.spheres";
  Spheres back;
  try {
    ompl_cuda::write_sphere_file(again, robot(), spheres, "fuzz");
    back = ompl_cuda::read_sphere_file(again, robot());
  } catch (const linalg_cuda::Error& error) {
    fuzz::finding(std::string("spheres that were read do not come back through write_sphere_file: ") + error.what());
  }
  if (!same(spheres, back)) fuzz::finding("spheres written with write_sphere_file read back different");
  return 0;
}
