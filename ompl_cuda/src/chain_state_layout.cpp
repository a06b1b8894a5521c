#include "chain_state_layout.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/base/spaces/SO2StateSpace.h>

#include "linalg_cuda/errors.h"

namespace ompl_cuda::detail {
namespace {

// Does this RealVector space interpolate linearly or the short way round the circle (as the
// KinematicChain demo's space, a RealVectorStateSpace subclass, does)? Asked of the space itself:
// from 3 to -3 at t = 0.5 is 0 linearly and +-pi wrapped.
JointKind probe_interpolation(const ompl::base::StateSpace& space) {
  ompl::base::State* from = space.allocState();
  ompl::base::State* to = space.allocState();
  ompl::base::State* mid = space.allocState();
  const unsigned n = space.getDimension();
  auto* f = from->as<ompl::base::RealVectorStateSpace::StateType>();
  auto* t = to->as<ompl::base::RealVectorStateSpace::StateType>();
  for (unsigned i = 0; i < n; ++i) {
    f->values[i] = 3.0;
    t->values[i] = -3.0;
  }
  space.interpolate(from, to, 0.5, mid);
  const double v = mid->as<ompl::base::RealVectorStateSpace::StateType>()->values[0];
  space.freeState(from);
  space.freeState(to);
  space.freeState(mid);
  if (v == 0.0) return kRealVector;
  if (std::fabs(std::fabs(v) - kPi) < 1e-12) return kWrappedReal;
  throw linalg_cuda::InvalidArgument("ChainValidityChecker: the state space's interpolate is neither linear nor "
                                     "the SO2 short way round; it cannot be reproduced on the GPU");
}

}  // namespace

ChainStateLayout::ChainStateLayout(const ompl::base::SpaceInformationPtr& si, int links) {
  if (!si) throw linalg_cuda::InvalidArgument("ChainValidityChecker: SpaceInformationPtr is null");
  const ompl::base::StateSpacePtr& space = si->getStateSpace();
  if (const auto* real = dynamic_cast<const ompl::base::RealVectorStateSpace*>(space.get())) {
    dimension_ = static_cast<int>(real->getDimension());
    low_ = real->getBounds().low;
    high_ = real->getBounds().high;
    kind_ = probe_interpolation(*real);
  } else if (const auto* compound = dynamic_cast<const ompl::base::CompoundStateSpace*>(space.get())) {
    compound_ = true;
    kind_ = kSO2;
    dimension_ = static_cast<int>(compound->getSubspaceCount());
    for (int i = 0; i < dimension_; ++i)
      if (!dynamic_cast<const ompl::base::SO2StateSpace*>(compound->getSubspace(i).get()))
        throw linalg_cuda::InvalidArgument("ChainValidityChecker: component " + std::to_string(i) + " ('" +
                                           compound->getSubspace(i)->getName() +
                                           "') of the compound space is not an SO2StateSpace");
    low_.assign(dimension_, -kPi);
    high_.assign(dimension_, kPi);
  } else {
    throw linalg_cuda::InvalidArgument("ChainValidityChecker: state space '" + space->getName() +
                                       "' is not supported; use RealVectorStateSpace(d) with bounds [-pi, pi] "
                                       "or a CompoundStateSpace of d SO2StateSpace");
  }
  if (dimension_ != links)
    throw linalg_cuda::InvalidArgument("ChainValidityChecker: the state space has " + std::to_string(dimension_) +
                                       " dimensions but the chain has " + std::to_string(links) + " joints");
  for (int i = 0; i < dimension_; ++i)
    if (!std::isfinite(low_[i]) || !std::isfinite(high_[i]) || !(low_[i] <= high_[i]))
      throw linalg_cuda::InvalidArgument("ChainValidityChecker: the bounds of joint " + std::to_string(i) +
                                         " are not a finite interval");
  // A RealVectorStateSpace's bounds are all [0, 0] until set; the checker copies them when it is
  // built, so building it first would make every state with a non-zero joint invalid.
  if (std::all_of(low_.begin(), low_.end(), [](double v) { return v == 0.0; }) &&
      std::all_of(high_.begin(), high_.end(), [](double v) { return v == 0.0; }))
    throw linalg_cuda::InvalidArgument("ChainValidityChecker: the state space's bounds are [0, 0] for every joint "
                                       "(not set yet?); call setBounds (e.g. setBounds(-pi, pi)) before "
                                       "constructing the checker");
}

void ChainStateLayout::read(const ompl::base::State* state, double* out) const {
  if (compound_) {
    const auto* c = state->as<ompl::base::CompoundState>();
    for (int i = 0; i < dimension_; ++i) out[i] = c->as<ompl::base::SO2StateSpace::StateType>(i)->value;
  } else {
    const double* v = state->as<ompl::base::RealVectorStateSpace::StateType>()->values;
    for (int i = 0; i < dimension_; ++i) out[i] = v[i];
  }
}

}  // namespace ompl_cuda::detail
