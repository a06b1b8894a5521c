#pragma once
// A picture of a robot's motion that people can open: one self-contained HTML page (no network, no
// files beside it) whose canvas draws the scene's primitives as wireframes and the robot's collision
// spheres in 3-D, and plays the path (drag to turn the view, wheel to zoom, space to pause).
#include <string>
#include <vector>

#include "ompl_cuda/robot_collision_model.h"

namespace ompl_cuda {

// states: full states (RobotModel::num_variables() values each), played in order; base: the robot's
// root link in the scene frame. Throws linalg_cuda::Error where the file cannot be written.
void write_robot_html(const std::string& file, const RobotCollisionModel& robot, const Scene& scene,
                      const Transform& base, const std::vector<std::vector<double>>& states, const std::string& title);

}  // namespace ompl_cuda
