#pragma once
// The anchor of the robot checks: the robot's collision geometry as FCL checks it, the way MoveIt's
// FCL collision plugin does. Each link's URDF collision shapes become FCL objects (meshes as
// fcl::BVHModel<OBBRSS> read with the same assimp loader as the sphere cover, boxes, cylinders and
// spheres as FCL's shapes), the scene's primitives FCL's spheres, boxes, cylinders and capsules, its
// meshes fcl::BVHModel<OBBRSS> at their poses, and fcl::collide decides. The tests hold our sphere checks to it (whenever FCL finds contact, they must
// say invalid), and a benchmark can plan with it through FclValidityChecker.
//
//   ompl_cuda::bench::FclRobotChecker fcl(robot, scene, base);   // robot: a RobotCollisionModel
//   bool hit = fcl.in_collision(full_state.data());
//
// FCL takes a mesh as its triangles, not as a solid (its primitives are solids): an obstacle wholly
// inside a link's mesh, or a link's mesh inside another's, touches no triangle, and FCL (so MoveIt)
// reports no contact. The sphere cover takes meshes as solids, so it says invalid there too.
//
// Every check is const and uses no shared mutable state (the BVH models are read only, FCL's
// OBBRSS traversal does not transform them), so one checker serves many threads at once.
#include <memory>
#include <utility>
#include <vector>

#include <ompl/base/StateValidityChecker.h>

#include "ompl_cuda/robot_collision_model.h"
#include "ompl_cuda/robot_model.h"
#include "ompl_cuda/scene.h"

namespace ompl_cuda::bench {

class FclRobotChecker {
 public:
  // The robot's links against the scene (the robot's root at `base` in the scene frame), and the
  // link pairs of robot.self_collision_pairs() against each other. Throws linalg_cuda::ParseError for
  // a mesh that does not read.
  FclRobotChecker(const RobotCollisionModel& robot, const Scene& scene, const Transform& base);
  // The same for a RobotModel and the link pairs to test for self-collision (link indices;
  // InvalidArgument for a pair that is not two links of the model).
  FclRobotChecker(const RobotModel& model, std::vector<std::pair<int, int>> self_pairs, const Scene& scene,
                  const Transform& base);
  ~FclRobotChecker();
  FclRobotChecker(FclRobotChecker&&) noexcept;
  FclRobotChecker& operator=(FclRobotChecker&&) noexcept;

  const RobotModel& model() const { return model_; }
  const std::vector<std::pair<int, int>>& self_pairs() const { return self_pairs_; }

  // Whether FCL finds the robot at the full state (RobotModel::num_variables() values) in contact with
  // the scene (touches_scene), with itself over the self pairs (touches_itself), or either. A state
  // with a NaN value is in collision, as for in_collision (robot_collision_model.h).
  bool touches_scene(const double* full_state) const;
  bool touches_itself(const double* full_state) const;
  bool in_collision(const double* full_state, bool self_collision = true) const;

 private:
  struct Geometry;  // FCL objects of the links and the scene
  RobotModel model_;
  std::vector<std::pair<int, int>> self_pairs_;
  Transform base_;
  std::unique_ptr<Geometry> geometry_;
};

// An OMPL checker of a planning group's states by FCL, as MoveIt plans: the group's values set into
// the held full state, the space's bounds, then FclRobotChecker::in_collision. The space is a
// RealVectorStateSpace of the group's variables (RobotChecks::make_space makes one).
class FclValidityChecker : public ompl::base::StateValidityChecker {
 public:
  // held: the full state the other variables keep (default: the model's default_state()).
  // InvalidArgument where the space's dimension is not the group's or held has the wrong size.
  FclValidityChecker(const ompl::base::SpaceInformationPtr& si, std::shared_ptr<const FclRobotChecker> checker,
                     PlanningGroup group, std::vector<double> held = {});
  bool isValid(const ompl::base::State* state) const override;

 private:
  std::shared_ptr<const FclRobotChecker> checker_;
  PlanningGroup group_;
  std::vector<double> held_;
};

}  // namespace ompl_cuda::bench
