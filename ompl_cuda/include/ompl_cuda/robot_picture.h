#pragma once
// A still picture of a robot's motion, for documents and reports where a page (robot_view.h) will
// not do: a PNG rendered in software, without a display or GPU. It shows the scene's primitives and
// meshes as shaded solids and its point cloud as dots, the robot's collision spheres at the first state
// (green) and the last (blue), a few states between them as see-through ghosts tinted from green to
// blue, and the path of the robot's tip as an orange line (faint where something hides it) with a
// green dot where it starts and a blue one where it ends.
//
//   ompl_cuda::write_robot_png("path.png", robot, scene, base, states);
#include <string>
#include <vector>

#include "ompl_cuda/robot_collision_model.h"

namespace ompl_cuda {

struct RobotPictureOptions {
  int width = 960, height = 720;  // pixels, 16 .. 8192 each
  int supersampling = 2;          // rendered this many times larger each way, then averaged (1 .. 4)
  int ghosts = 4;                 // states drawn see-through between the first and the last
  // The camera looks at the robot's reach and the scene near it, from this direction: azimuth about
  // the base's z axis from its x axis (the arm's front), elevation above the base's xy plane.
  double azimuth_deg = -150, elevation_deg = 35;
  double field_of_view_deg = 35;  // vertical
  // The link whose origin the tip's line follows; empty: the mean of the links deepest in the tree
  // (the Panda's two fingers: the point between them).
  std::string tip_link;
  std::string title;  // the PNG's Title text, where not empty
};

// states: full states (RobotModel::num_variables() values each) along the path, in order (the tip's
// line joins them, so pass a finely interpolated path); base: the robot's root link in the scene frame.
// No states: the scene alone. Throws linalg_cuda::InvalidArgument for a state of the wrong size or with
// a value that is not finite, an unknown tip link or options out of range, linalg_cuda::Error where the
// file cannot be written.
void write_robot_png(const std::string& file, const RobotCollisionModel& robot, const Scene& scene, const Transform& base,
                     const std::vector<std::vector<double>>& states, const RobotPictureOptions& options = {});

}  // namespace ompl_cuda
