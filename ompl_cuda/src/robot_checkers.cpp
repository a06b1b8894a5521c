#include "ompl_cuda/robot_checkers.h"

#include <ompl/base/SpaceInformation.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>

#include <cmath>

#include "linalg_cuda/errors.h"
#include "robot_check_engine.h"

namespace ompl_cuda {

namespace ob = ompl::base;

namespace {

const double* values_of(const ob::State* state) { return state->as<ob::RealVectorStateSpace::StateType>()->values; }

// The checkers decide for the space they are given with the checks' bounds: the two must agree.
void require_group_space(const ob::SpaceInformationPtr& si, const RobotChecks& checks, const char* who) {
  if (!si) throw linalg_cuda::InvalidArgument(std::string(who) + ": SpaceInformationPtr is null");
  const auto* space = dynamic_cast<const ob::RealVectorStateSpace*>(si->getStateSpace().get());
  if (!space || static_cast<int>(space->getDimension()) != checks.dimension())
    throw linalg_cuda::InvalidArgument(std::string(who) + ": the space must be a RealVectorStateSpace of " +
                                       std::to_string(checks.dimension()) + " values (group '" + checks.group().name +
                                       "'; RobotChecks::make_space makes it)");
  const ob::RealVectorBounds& bounds = space->getBounds();
  if (bounds.low != checks.low() || bounds.high != checks.high())
    throw linalg_cuda::InvalidArgument(std::string(who) + ": the space's bounds differ from the checks' (group '" +
                                       checks.group().name + "'; RobotChecks::set_bounds sets them)");
}

}  // namespace

RobotChecks::RobotChecks(RobotCollisionModel robot, Scene scene, const std::string& group, const Transform& base,
                         std::vector<double> held, bool self_collision, Backend backend)
    : robot_(std::move(robot)),
      scene_(std::move(scene)),
      group_(robot_.model().group(group)),
      base_(base),
      held_(held.empty() ? robot_.model().default_state() : std::move(held)),
      self_collision_(self_collision),
      backend_(backend) {
  if (static_cast<int>(held_.size()) != robot_.model().num_variables())
    throw linalg_cuda::InvalidArgument("RobotChecks: the held state has " + std::to_string(held_.size()) +
                                       " values, the robot " + std::to_string(robot_.model().num_variables()));
  if (group_.variables.empty()) throw linalg_cuda::InvalidArgument("RobotChecks: group '" + group + "' moves no joint");
  for (int v : group_.variables) {
    low_.push_back(robot_.model().lower_bound(v));
    high_.push_back(robot_.model().upper_bound(v));
  }
  make_engine();
}

RobotChecks::~RobotChecks() = default;

void RobotChecks::make_engine() {
  detail::RobotCheckData data(robot_, base_, group_.variables, held_, low_, high_, self_collision_);
  const Backend backend = engine_ ? engine_->backend() : backend_;
  engine_ = std::make_unique<detail::RobotCheckEngine>(std::move(data), scene_, backend);
}

Backend RobotChecks::backend() const { return engine_->backend(); }

void RobotChecks::set_bounds(std::vector<double> low, std::vector<double> high) {
  bool ok = static_cast<int>(low.size()) == dimension() && static_cast<int>(high.size()) == dimension();
  for (int k = 0; ok && k < dimension(); ++k) ok = std::isfinite(low[k]) && std::isfinite(high[k]) && low[k] <= high[k];
  if (!ok)
    throw linalg_cuda::InvalidArgument("RobotChecks::set_bounds: expected " + std::to_string(dimension()) +
                                       " finite pairs with low <= high");
  low_ = std::move(low);
  high_ = std::move(high);
  make_engine();
}

ob::StateSpacePtr RobotChecks::make_space() const {
  auto space = std::make_shared<ob::RealVectorStateSpace>(dimension());
  ob::RealVectorBounds bounds(dimension());
  bounds.low = low_;
  bounds.high = high_;
  for (int k = 0; k < dimension(); ++k) space->setDimensionName(k, group_.joint_names[k]);
  space->setBounds(bounds);
  space->setName(group_.name);
  return space;
}

void RobotChecks::full_state(const double* values, double* state) const {
  std::copy(held_.begin(), held_.end(), state);
  for (int k = 0; k < dimension(); ++k) state[group_.variables[k]] = values[k];
}

const detail::RobotCheckEngine& RobotChecks::synced() const {
  engine_->sync_scene(scene_);
  return *engine_;
}

bool RobotChecks::valid(const double* values) const { return synced().valid(values); }

int RobotChecks::first_invalid(const double* from, const double* to, int segments) const {
  return synced().first_invalid(from, to, segments);
}

void RobotChecks::check_states(const double* values, std::size_t count, char* valid) const {
  engine_->sync_scene(scene_);
  engine_->check_states(values, count, valid);
}

void RobotChecks::check_motions(const double* from, const double* to, const int* segments, std::size_t count,
                                int* first_invalid) const {
  engine_->sync_scene(scene_);
  engine_->check_motions(from, to, segments, count, first_invalid);
}

void RobotChecks::check_states_filled(std::size_t count, const std::function<void(double*)>& fill, char* valid) const {
  engine_->sync_scene(scene_);
  engine_->check_states_filled(count, fill, valid);
}

void RobotChecks::check_motions_filled(std::size_t count, const std::function<void(double*, double*, int*)>& fill,
                                       int* first_invalid) const {
  engine_->sync_scene(scene_);
  engine_->check_motions_filled(count, fill, first_invalid);
}

void RobotChecks::check_states_on_device(const double* values, std::size_t count, char* valid,
                                         cudaStream_t stream) const {
  engine_->sync_scene(scene_);
  engine_->check_states_on_device(values, count, valid, stream);
}

RobotValidityChecker::RobotValidityChecker(const ob::SpaceInformationPtr& si, std::shared_ptr<RobotChecks> checks)
    : BatchStateValidityChecker(si), checks_(std::move(checks)) {
  if (!checks_) throw linalg_cuda::InvalidArgument("RobotValidityChecker: the checks are null");
  require_group_space(si, *checks_, "RobotValidityChecker");
}

bool RobotValidityChecker::isValid(const ob::State* state) const { return checks_->valid(values_of(state)); }

void RobotValidityChecker::isValid(const std::vector<const ob::State*>& states, std::vector<char>& valid) const {
  const std::size_t d = static_cast<std::size_t>(checks_->dimension());
  valid.assign(states.size(), 0);
  // Reading the OMPL states is the host's share of the work: on all cores, as the chain's checker does.
  checks_->check_states_filled(
      states.size(),
      [&](double* values) {
        const long count = static_cast<long>(states.size());
#pragma omp parallel for schedule(static) if (count > 4096)
        for (long i = 0; i < count; ++i) std::copy_n(values_of(states[i]), d, values + i * d);
      },
      valid.data());
}

RobotMotionValidator::RobotMotionValidator(const ob::SpaceInformationPtr& si, std::shared_ptr<RobotChecks> checks)
    : BatchMotionValidator(si), checks_(std::move(checks)) {
  if (!checks_) throw linalg_cuda::InvalidArgument("RobotMotionValidator: the checks are null");
  require_group_space(si, *checks_, "RobotMotionValidator");
}

int RobotMotionValidator::first_invalid(const ob::State* s1, const ob::State* s2, int* n) const {
  *n = static_cast<int>(si_->getStateSpace()->validSegmentCount(s1, s2));
  return checks_->first_invalid(values_of(s1), values_of(s2), *n);
}

bool RobotMotionValidator::checkMotion(const ob::State* s1, const ob::State* s2) const {
  int n = 0;
  const bool ok = first_invalid(s1, s2, &n) == 0;
  count(ok ? 1 : 0, ok ? 0 : 1);
  return ok;
}

bool RobotMotionValidator::checkMotion(const ob::State* s1, const ob::State* s2,
                                       std::pair<ob::State*, double>& lastValid) const {
  int n = 0;
  const int j = first_invalid(s1, s2, &n);
  if (j != 0) {  // DiscreteMotionValidator's lastValid: the state before the first invalid one
    lastValid.second = static_cast<double>(j - 1) / std::max(n, 1);
    if (lastValid.first != nullptr) si_->getStateSpace()->interpolate(s1, s2, lastValid.second, lastValid.first);
  }
  count(j == 0 ? 1 : 0, j == 0 ? 0 : 1);
  return j == 0;
}

void RobotMotionValidator::checkMotions(const std::vector<std::pair<const ob::State*, const ob::State*>>& motions,
                                        std::vector<char>& valid, std::vector<double>* last_valid_times) const {
  const std::size_t d = static_cast<std::size_t>(checks_->dimension()), count_motions = motions.size();
  std::vector<int> segments(count_motions), first(count_motions);
  const ob::StateSpacePtr& space = si_->getStateSpace();
  checks_->check_motions_filled(
      count_motions,
      [&](double* from, double* to, int* counts) {
        const long count = static_cast<long>(count_motions);
#pragma omp parallel for schedule(static) if (count > 4096)
        for (long i = 0; i < count; ++i) {
          std::copy_n(values_of(motions[i].first), d, from + i * d);
          std::copy_n(values_of(motions[i].second), d, to + i * d);
          counts[i] = segments[i] = static_cast<int>(space->validSegmentCount(motions[i].first, motions[i].second));
        }
      },
      first.data());
  valid.assign(count_motions, 0);
  if (last_valid_times) last_valid_times->resize(count_motions);
  std::size_t valid_count = 0;
  for (std::size_t i = 0; i < count_motions; ++i) {
    valid[i] = first[i] == 0 ? 1 : 0;
    valid_count += valid[i];
    if (!valid[i] && last_valid_times) (*last_valid_times)[i] = static_cast<double>(first[i] - 1) / std::max(segments[i], 1);
  }
  count(valid_count, count_motions - valid_count);
}

void RobotMotionValidator::count(std::size_t valid, std::size_t invalid) const {
  std::lock_guard<std::mutex> lock(count_mutex_);
  valid_ += valid;
  invalid_ += invalid;
}

}  // namespace ompl_cuda
