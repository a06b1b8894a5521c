// robot_spheres: a robot's collision model as spheres, a conservative cover of its URDF's collision
// geometry, written as a sphere file that ompl_cuda's robot checks read.
//
//   robot_spheres --urdf panda.urdf --package-path ../shared/data/robots --tolerance 0.02 --out panda.spheres
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "command_line.h"
#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_spheres.h"

namespace {

const char* kUsage = R"(usage: robot_spheres --urdf FILE [options]

Covers each link's collision geometry (boxes, cylinders, spheres, meshes) with spheres: every point
of the geometry lies inside a sphere, and no sphere reaches farther than the tolerance beyond it.

  --urdf FILE           the robot (meshes as package://NAME/... or relative to the URDF)
  --package-path DIRS   folders that hold ROS packages, ':'-separated (ROS_PACKAGE_PATH after them)
  --tolerance T         metres the cover may reach beyond the geometry     (default 0.02)
  --out FILE            the sphere file to write (LINK X Y Z RADIUS a line)  (default: print the counts only)
  --help                this text
Exit status: 0 written, 2 bad usage or input.
)";

}  // namespace

int main(int argc, char** argv) {
  const examples::CommandLine cli("robot_spheres", kUsage, {"--urdf", "--package-path", "--tolerance", "--out"});
  std::string urdf, out;
  std::vector<std::string> package_path;
  ompl_cuda::SphereCoverOptions options;
  options.tolerance = 0.02;
  try {
    for (const auto& [flag, value] : cli.parse(argc, argv)) {
      if (flag == "--urdf") urdf = value;
      else if (flag == "--package-path") package_path = examples::split(value, ':');
      else if (flag == "--tolerance") options.tolerance = cli.number(flag, value, 1e-4, 10);
      else out = value;
    }
  } catch (const linalg_cuda::InvalidArgument& e) {
    cli.fail(e.what());
  }
  if (urdf.empty()) cli.fail("--urdf is required");
  try {
    const ompl_cuda::RobotModel robot = ompl_cuda::RobotModel::load(urdf, "", package_path);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::vector<ompl_cuda::Sphere>> spheres = ompl_cuda::cover_with_spheres(robot, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::size_t total = 0;
    for (std::size_t l = 0; l < spheres.size(); ++l) {
      std::printf("%-24s %4zu spheres\n", robot.links()[l].name.c_str(), spheres[l].size());
      total += spheres[l].size();
    }
    std::printf("%-24s %4zu spheres, tolerance %g m, %.2f s\n", robot.name().c_str(), total, options.tolerance, seconds);
    if (!out.empty()) {
      char comment[128];
      std::snprintf(comment, sizeof comment, "robot_spheres --tolerance %g (a conservative cover)", options.tolerance);
      ompl_cuda::write_sphere_file(out, robot, spheres, comment);
      std::printf("wrote %s\n", out.c_str());
    }
    return 0;
  } catch (const std::exception& e) {  // the library's typed errors and anything else: one line
    std::cerr << "robot_spheres: " << e.what() << "\n";
    return 2;
  }
}
