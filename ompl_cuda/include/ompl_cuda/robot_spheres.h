#pragma once
// A robot's collision model as spheres per link, the shape the batched checks test (as cuRobo's and
// VAMP's do): made from the URDF's collision geometry as a conservative cover, or read from a file.
//
// The cover contains every point of each link's collision geometry (boxes, cylinders, spheres and
// closed meshes, taken as solids), and reaches at most `tolerance` beyond it: a robot whose spheres
// touch nothing does not touch anything either, and one whose spheres touch something is within
// `tolerance` of it. A mesh that is not closed is covered as its surface.
//
// Sphere file: one sphere per line, "LINK X Y Z RADIUS" (metres, in the link's frame), blank lines and
// lines starting with '#' ignored; write_sphere_file writes it with the tolerance in a comment.
#include <string>
#include <vector>

#include "ompl_cuda/robot_model.h"

namespace ompl_cuda {

struct Sphere {
  double center[3] = {0, 0, 0};
  double radius = 0;
};

struct SphereCoverOptions {
  double tolerance = 0.01;  // metres the cover may reach beyond the geometry (> 0)
};

// Per link (RobotModel::links()' order) its spheres in the link's frame; links without collision
// geometry have none. Meshes are read with assimp (STL, COLLADA, OBJ, ...). Throws ParseError for a
// mesh that does not read, InvalidArgument for a tolerance that is not positive or too small for the
// link's size (a link is gridded into at most 256 cells a side; the message gives the smallest
// tolerance that fits).
std::vector<std::vector<Sphere>> cover_with_spheres(const RobotModel& model, const SphereCoverOptions& options = {});

std::vector<std::vector<Sphere>> read_sphere_file(const std::string& file, const RobotModel& model);
void write_sphere_file(const std::string& file, const RobotModel& model, const std::vector<std::vector<Sphere>>& spheres,
                       const std::string& comment = "");

}  // namespace ompl_cuda
