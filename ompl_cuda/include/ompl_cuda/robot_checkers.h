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
// A state is valid when it lies within the group's bounds (OMPL's satisfiesBounds test) and the robot's
// spheres touch neither the scene nor each other (robot_collision_model.h's in_collision). Single
// checks run on the calling thread; batches (the planners' calls) on the backend: the GPU, or all CPU
// cores. Both decide with the same code and agree on every state.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <ompl/base/StateSpace.h>

#include "ompl_cuda/batch_checking.h"
#include "ompl_cuda/robot_collision_model.h"

namespace ompl_cuda {

namespace detail {
class RobotCheckEngine;
}

class RobotChecks {
 public:
  // group: a planning group of the robot's SRDF; base: the robot's root link in the scene frame;
  // held: the full state the other variables keep (default: RobotModel::default_state()); backend:
  // where batches run (Auto: the GPU when there is one). InvalidArgument for an unknown group or a
  // held state of the wrong size.
  RobotChecks(RobotCollisionModel robot, Scene scene, const std::string& group, const Transform& base = Transform(),
              std::vector<double> held = {}, bool self_collision = true, Backend backend = Backend::Auto);
  ~RobotChecks();
  RobotChecks(const RobotChecks&) = delete;
  RobotChecks& operator=(const RobotChecks&) = delete;

  const RobotCollisionModel& robot() const { return robot_; }
  const PlanningGroup& group() const { return group_; }
  int dimension() const { return static_cast<int>(group_.variables.size()); }
  // The scene, to read or edit between plans (not while checks run); the checks take its changes.
  Scene& scene() { return scene_; }
  const Scene& scene() const { return scene_; }
  Backend backend() const;

  // The group's bounds: its joints' limits, or those set here (InvalidArgument unless dimension()
  // finite pairs with low <= high). The checkers require their space to have these bounds.
  const std::vector<double>& low() const { return low_; }
  const std::vector<double>& high() const { return high_; }
  void set_bounds(std::vector<double> low, std::vector<double> high);

  // A RealVectorStateSpace of the group's variables, with the bounds above, named by the group.
  ompl::base::StateSpacePtr make_space() const;
  // The full state with the group's variables set from values (dimension() of them).
  void full_state(const double* values, double* state) const;

  // Whether the group at values (dimension() of them) is within the bounds and touches nothing; on
  // the calling thread.
  bool valid(const double* values) const;
  // The motion from -> to in `segments` segments, on the calling thread: the smallest j in
  // 1 .. segments whose state is invalid (j = segments, or 1 when segments is 0, is `to` as given; the
  // state at j < segments is from + (to - from) j / segments), or 0 when every state is valid.
  int first_invalid(const double* from, const double* to, int segments) const;
  // Batches on the backend: count states, values[i * dimension() + k] (valid[i] = 1 or 0), and count
  // motions from[i] -> to[i] in segments[i] segments (first_invalid[i] as above).
  void check_states(const double* values, std::size_t count, char* valid) const;
  void check_motions(const double* from, const double* to, const int* segments, std::size_t count,
                     int* first_invalid) const;
  // The same with the inputs written by fill into the checks' staging memory (page-locked for the GPU:
  // one copy at the bus's full speed), e.g. from OMPL states: fill(values) writes count * dimension()
  // values; fill(from, to, segments) count motions.
  void check_states_filled(std::size_t count, const std::function<void(double*)>& fill, char* valid) const;
  void check_motions_filled(std::size_t count, const std::function<void(double*, double*, int*)>& fill,
                            int* first_invalid) const;
  // count states already in GPU memory (count * dimension() doubles), the answers (1 or 0) into GPU
  // memory, launched on `stream` without waiting: for planners that keep their states on the GPU.
  // InvalidArgument when the backend is the CPU.
  void check_states_on_device(const double* values, std::size_t count, char* valid, cudaStream_t stream) const;

 private:
  void make_engine();
  const detail::RobotCheckEngine& synced() const;  // the engine, with the scene's changes taken

  RobotCollisionModel robot_;
  Scene scene_;
  PlanningGroup group_;
  Transform base_;
  std::vector<double> held_, low_, high_;
  bool self_collision_;
  Backend backend_;
  std::unique_ptr<detail::RobotCheckEngine> engine_;
};

class RobotValidityChecker : public BatchStateValidityChecker {
 public:
  // si's space: a RealVectorStateSpace of checks->dimension() values (InvalidArgument otherwise).
  RobotValidityChecker(const ompl::base::SpaceInformationPtr& si, std::shared_ptr<RobotChecks> checks);
  using BatchStateValidityChecker::isValid;
  bool isValid(const ompl::base::State* state) const override;
  void isValid(const std::vector<const ompl::base::State*>& states, std::vector<char>& valid) const override;
  Backend backend() const override { return checks_->backend(); }

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
  Backend backend() const override { return checks_->backend(); }

 private:
  // RobotChecks::first_invalid of the motion, and its segment count n.
  int first_invalid(const ompl::base::State* s1, const ompl::base::State* s2, int* n) const;
  void count(std::size_t valid, std::size_t invalid) const;
  std::shared_ptr<RobotChecks> checks_;
  mutable std::mutex count_mutex_;
};

}  // namespace ompl_cuda
