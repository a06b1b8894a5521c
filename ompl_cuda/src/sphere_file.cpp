// The sphere file of robot_spheres.h: "LINK X Y Z RADIUS" per line, '#' comments.
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_spheres.h"
#include "quoted_text.h"

namespace ompl_cuda {

std::vector<std::vector<Sphere>> read_sphere_file(const std::string& file, const RobotModel& model) {
  std::ifstream in(file);
  if (!in) throw linalg_cuda::ParseError(file, 0, "cannot open the sphere file");
  std::vector<std::vector<Sphere>> spheres(model.links().size());
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream fields(line);
    std::string link;
    Sphere s;
    fields >> link >> s.center[0] >> s.center[1] >> s.center[2] >> s.radius;
    if (!fields) throw linalg_cuda::ParseError(file, number, "expected LINK X Y Z RADIUS");
    std::string extra;
    if (fields >> extra) throw linalg_cuda::ParseError(file, number, "more than LINK X Y Z RADIUS ('" + detail::shown(extra) + "')");
    const int l = model.link_index(link);
    if (l < 0) throw linalg_cuda::ParseError(file, number, "link '" + detail::shown(link) + "' is not the robot's");
    for (const double v : s.center)
      if (!std::isfinite(v)) throw linalg_cuda::ParseError(file, number, "a centre coordinate is not finite");
    if (!std::isfinite(s.radius) || s.radius < 0)
      throw linalg_cuda::ParseError(file, number, "the radius is not a finite non-negative number");
    spheres[l].push_back(s);
  }
  if (in.bad()) throw linalg_cuda::ParseError(file, 0, "cannot read the sphere file");
  return spheres;
}

void write_sphere_file(const std::string& file, const RobotModel& model, const std::vector<std::vector<Sphere>>& spheres,
                       const std::string& comment) {
  if (spheres.size() != model.links().size())
    throw linalg_cuda::InvalidArgument("write_sphere_file: " + std::to_string(spheres.size()) + " links of spheres for a robot of " +
                                       std::to_string(model.links().size()));
  std::ofstream out(file);
  if (!out) throw linalg_cuda::Error("write_sphere_file: cannot write '" + file + "'");
  out << "# spheres of robot '" << model.name() << "': LINK X Y Z RADIUS (metres, in the link's frame)\n";
  if (!comment.empty()) out << "# " << comment << "\n";
  out << std::setprecision(17);
  for (std::size_t l = 0; l < spheres.size(); ++l)
    for (const Sphere& s : spheres[l])
      out << model.links()[l].name << ' ' << s.center[0] << ' ' << s.center[1] << ' ' << s.center[2] << ' ' << s.radius << '\n';
  if (!out) throw linalg_cuda::Error("write_sphere_file: error writing '" + file + "'");
}

}  // namespace ompl_cuda
