#pragma once
// A robot as its checks see it: the RobotModel, its spheres per link (robot_spheres.h), and the link
// pairs tested against each other for self-collision (those the SRDF does not disable and no joint
// joins, both with spheres). in_collision is the CPU reference of every robot check.
#include <utility>
#include <vector>

#include "ompl_cuda/robot_model.h"
#include "ompl_cuda/robot_spheres.h"
#include "ompl_cuda/scene.h"

namespace ompl_cuda {

class RobotCollisionModel {
 public:
  // spheres: per link, as cover_with_spheres or read_sphere_file give them (InvalidArgument where the
  // count of links differs).
  RobotCollisionModel(RobotModel model, std::vector<std::vector<Sphere>> spheres);

  const RobotModel& model() const { return model_; }
  const std::vector<std::vector<Sphere>>& spheres() const { return spheres_; }
  const std::vector<std::pair<int, int>>& self_collision_pairs() const { return self_pairs_; }
  std::size_t num_spheres() const;

  // Every sphere in the scene frame for the full state, the robot's root link at `base`, link by link.
  void world_spheres(const double* state, const Transform& base, std::vector<Sphere>* out) const;
  // Where link l's spheres start in world_spheres' output (links() + 1 entries).
  const std::vector<std::size_t>& first_sphere() const { return first_sphere_; }

 private:
  RobotModel model_;
  std::vector<std::vector<Sphere>> spheres_;
  std::vector<std::pair<int, int>> self_pairs_;
  std::vector<std::size_t> first_sphere_;
};

// Whether the robot at the full state (root link at `base` in the scene frame) touches the scene or,
// with self_collision, one of its own links of a pair checked; non-finite values collide. The test is
// RobotChecks' (single precision, radii and primitives grown by a few micrometres to cover its
// rounding); this function sets it up for one state, RobotChecks once for many.
bool in_collision(const RobotCollisionModel& robot, const Scene& scene, const Transform& base, const double* state,
                  bool self_collision = true);

}  // namespace ompl_cuda
