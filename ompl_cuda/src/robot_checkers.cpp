#include "ompl_cuda/robot_checkers.h"

#include <ompl/base/SpaceInformation.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>

#include <cmath>

#include "linalg_cuda/errors.h"

namespace ompl_cuda {

namespace ob = ompl::base;

namespace {

const double* values_of(const ob::State* state) { return state->as<ob::RealVectorStateSpace::StateType>()->values; }

void require_group_space(const ob::SpaceInformationPtr& si, const RobotChecks& checks, const char* who) {
  if (!si) throw linalg_cuda::InvalidArgument(std::string(who) + ": SpaceInformationPtr is null");
  const auto* space = dynamic_cast<const ob::RealVectorStateSpace*>(si->getStateSpace().get());
  if (!space || static_cast<int>(space->getDimension()) != checks.dimension())
    throw linalg_cuda::InvalidArgument(std::string(who) + ": the space must be a RealVectorStateSpace of " +
                                       std::to_string(checks.dimension()) + " values (group '" + checks.group().name +
                                       "'; RobotChecks::make_space makes it)");
}

}  // namespace

RobotChecks::RobotChecks(RobotCollisionModel robot, Scene scene, const std::string& group, const Transform& base,
                         std::vector<double> held, bool self_collision)
    : robot_(std::move(robot)),
      scene_(std::move(scene)),
      group_(robot_.model().group(group)),
      base_(base),
      held_(held.empty() ? robot_.model().default_state() : std::move(held)),
      self_collision_(self_collision) {
  if (static_cast<int>(held_.size()) != robot_.model().num_variables())
    throw linalg_cuda::InvalidArgument("RobotChecks: the held state has " + std::to_string(held_.size()) +
                                       " values, the robot " + std::to_string(robot_.model().num_variables()));
  if (group_.variables.empty()) throw linalg_cuda::InvalidArgument("RobotChecks: group '" + group + "' moves no joint");
}

ob::StateSpacePtr RobotChecks::make_space() const {
  auto space = std::make_shared<ob::RealVectorStateSpace>(dimension());
  ob::RealVectorBounds bounds(dimension());
  for (int k = 0; k < dimension(); ++k) {
    bounds.setLow(k, robot_.model().lower_bound(group_.variables[k]));
    bounds.setHigh(k, robot_.model().upper_bound(group_.variables[k]));
    space->setDimensionName(k, group_.joint_names[k]);
  }
  space->setBounds(bounds);
  space->setName(group_.name);
  return space;
}

void RobotChecks::full_state(const double* values, double* state) const {
  std::copy(held_.begin(), held_.end(), state);
  for (int k = 0; k < dimension(); ++k) state[group_.variables[k]] = values[k];
}

bool RobotChecks::collision_free(const double* values) const {
  thread_local std::vector<double> state;  // scratch: no allocation per state once grown
  state.resize(held_.size());
  full_state(values, state.data());
  return !in_collision(robot_, scene_, base_, state.data(), self_collision_);
}

RobotValidityChecker::RobotValidityChecker(const ob::SpaceInformationPtr& si, std::shared_ptr<RobotChecks> checks)
    : BatchStateValidityChecker(si), checks_(std::move(checks)) {
  if (!checks_) throw linalg_cuda::InvalidArgument("RobotValidityChecker: the checks are null");
  require_group_space(si, *checks_, "RobotValidityChecker");
}

bool RobotValidityChecker::isValid(const ob::State* state) const {
  return si_->satisfiesBounds(state) && checks_->collision_free(values_of(state));
}

void RobotValidityChecker::isValid(const std::vector<const ob::State*>& states, std::vector<char>& valid) const {
  valid.assign(states.size(), 0);
#pragma omp parallel for schedule(dynamic, 16)
  for (long i = 0; i < static_cast<long>(states.size()); ++i) valid[i] = isValid(states[i]) ? 1 : 0;
}

RobotMotionValidator::RobotMotionValidator(const ob::SpaceInformationPtr& si, std::shared_ptr<RobotChecks> checks)
    : BatchMotionValidator(si), checks_(std::move(checks)) {
  if (!checks_) throw linalg_cuda::InvalidArgument("RobotMotionValidator: the checks are null");
  require_group_space(si, *checks_, "RobotMotionValidator");
}

int RobotMotionValidator::first_invalid(const ob::State* s1, const ob::State* s2, int* n) const {
  const int segments = static_cast<int>(si_->getStateSpace()->validSegmentCount(s1, s2));
  *n = segments;
  const double *a = values_of(s1), *b = values_of(s2);
  const int d = checks_->dimension();
  std::vector<double> q(d);
  for (int j = 1; j < segments; ++j) {
    const double t = static_cast<double>(j) / segments;
    for (int k = 0; k < d; ++k) q[k] = a[k] + (b[k] - a[k]) * t;  // RealVectorStateSpace::interpolate
    ob::RealVectorStateSpace::StateType state;
    state.values = q.data();
    const bool ok = si_->satisfiesBounds(&state) && checks_->collision_free(q.data());
    state.values = nullptr;
    if (!ok) return j;
  }
  if (!(si_->satisfiesBounds(s2) && checks_->collision_free(b))) return std::max(segments, 1);
  return std::max(segments, 1) + 1;
}

bool RobotMotionValidator::checkMotion(const ob::State* s1, const ob::State* s2) const {
  int n = 0;
  const bool ok = first_invalid(s1, s2, &n) > std::max(n, 1);
  count(ok ? 1 : 0, ok ? 0 : 1);
  return ok;
}

bool RobotMotionValidator::checkMotion(const ob::State* s1, const ob::State* s2,
                                       std::pair<ob::State*, double>& lastValid) const {
  int n = 0;
  const int j = first_invalid(s1, s2, &n);
  const bool ok = j > std::max(n, 1);
  if (!ok) {
    lastValid.second = static_cast<double>(j - 1) / std::max(n, 1);
    if (lastValid.first != nullptr) si_->getStateSpace()->interpolate(s1, s2, lastValid.second, lastValid.first);
  }
  count(ok ? 1 : 0, ok ? 0 : 1);
  return ok;
}

void RobotMotionValidator::checkMotions(const std::vector<std::pair<const ob::State*, const ob::State*>>& motions,
                                        std::vector<char>& valid, std::vector<double>* last_valid_times) const {
  valid.assign(motions.size(), 0);
  if (last_valid_times) last_valid_times->resize(motions.size());
  long valid_count = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : valid_count)
  for (long i = 0; i < static_cast<long>(motions.size()); ++i) {
    int n = 0;
    const int j = first_invalid(motions[i].first, motions[i].second, &n);
    valid[i] = j > std::max(n, 1) ? 1 : 0;
    valid_count += valid[i];
    if (!valid[i] && last_valid_times) (*last_valid_times)[i] = static_cast<double>(j - 1) / std::max(n, 1);
  }
  count(valid_count, motions.size() - valid_count);
}

void RobotMotionValidator::count(std::size_t valid, std::size_t invalid) const {
  std::lock_guard<std::mutex> lock(count_mutex_);
  valid_ += valid;
  invalid_ += invalid;
}

}  // namespace ompl_cuda
