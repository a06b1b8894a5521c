#pragma once
// OMPL checks for a robot described in URDF and SRDF: the states of one planning group among a Scene.
// RobotChecks is the check engine that a robot's RobotValidityChecker and RobotMotionValidator share;
// its scene can be edited between plans (objects added, moved, removed) without rebuilding the robot.
//
//   auto checks = std::make_shared<ompl_cuda::RobotChecks>(robot, scene, "panda_arm", base);
//   auto space = checks->make_space();                      // RealVectorStateSpace, the joints' limits
//   ompl::geometric::SimpleSetup ss(space);
//   ss.setStateValidityChecker(std::make_shared<ompl_cuda::RobotValidityChecker>(ss.getSpaceInformation(), checks));
//   ss.getSpaceInformation()->setMotionValidator(
//       std::make_shared<ompl_cuda::RobotMotionValidator>(ss.getSpaceInformation(), checks));
//
// A state is valid when it lies within the space's bounds and in_collision (robot_collision_model.h)
// says the robot touches neither the scene nor itself. The checks run on the CPU, batches on all
// cores (OpenMP): backend() is Backend::Cpu.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ompl/base/StateSpace.h>

#include "ompl_cuda/batch_checking.h"
#include "ompl_cuda/robot_collision_model.h"

namespace ompl_cuda {

class RobotChecks {
 public:
  // group: a planning group of the robot's SRDF; base: the robot's root link in the scene frame;
  // held: the full state the other variables keep (default: RobotModel::default_state()).
  // InvalidArgument for an unknown group or a held state of the wrong size.
  RobotChecks(RobotCollisionModel robot, Scene scene, const std::string& group, const Transform& base = Transform(),
              std::vector<double> held = {}, bool self_collision = true);

  const RobotCollisionModel& robot() const { return robot_; }
  const PlanningGroup& group() const { return group_; }
  int dimension() const { return static_cast<int>(group_.variables.size()); }
  // The scene, to read or edit between plans (not while checks run).
  Scene& scene() { return scene_; }
  const Scene& scene() const { return scene_; }

  // A RealVectorStateSpace of the group's variables, bounded by their limits, named by the group.
  ompl::base::StateSpacePtr make_space() const;
  // The full state with the group's variables set from values (dimension() of them).
  void full_state(const double* values, double* state) const;
  // Collision only (the bounds are the space's): whether the group at values touches nothing.
  bool collision_free(const double* values) const;

 private:
  RobotCollisionModel robot_;
  Scene scene_;
  PlanningGroup group_;
  Transform base_;
  std::vector<double> held_;
  bool self_collision_;
};

class RobotValidityChecker : public BatchStateValidityChecker {
 public:
  // si's space: a RealVectorStateSpace of checks->dimension() values (InvalidArgument otherwise).
  RobotValidityChecker(const ompl::base::SpaceInformationPtr& si, std::shared_ptr<RobotChecks> checks);
  using BatchStateValidityChecker::isValid;
  bool isValid(const ompl::base::State* state) const override;
  void isValid(const std::vector<const ompl::base::State*>& states, std::vector<char>& valid) const override;
  Backend backend() const override { return Backend::Cpu; }

 private:
  std::shared_ptr<RobotChecks> checks_;
};

// The decisions and lastValid of OMPL's DiscreteMotionValidator with a RobotValidityChecker: s2 and the
// states at j / n (j = 1 .. n - 1, n = the space's validSegmentCount), linearly interpolated.
class RobotMotionValidator : public BatchMotionValidator {
 public:
  RobotMotionValidator(const ompl::base::SpaceInformationPtr& si, std::shared_ptr<RobotChecks> checks);
  bool checkMotion(const ompl::base::State* s1, const ompl::base::State* s2) const override;
  bool checkMotion(const ompl::base::State* s1, const ompl::base::State* s2,
                   std::pair<ompl::base::State*, double>& lastValid) const override;
  void checkMotions(const std::vector<std::pair<const ompl::base::State*, const ompl::base::State*>>& motions,
                    std::vector<char>& valid, std::vector<double>* last_valid_times = nullptr) const override;
  Backend backend() const override { return Backend::Cpu; }

 private:
  // The first invalid step j of the motion (n when only s2 is, n + 1 when none is), and n.
  int first_invalid(const ompl::base::State* s1, const ompl::base::State* s2, int* n) const;
  void count(std::size_t valid, std::size_t invalid) const;
  std::shared_ptr<RobotChecks> checks_;
  mutable std::mutex count_mutex_;
};

}  // namespace ompl_cuda
