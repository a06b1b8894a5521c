#pragma once
// OMPL set-ups shared by the ompl_cuda tests: the two supported spaces for a d-link chain, random
// states, and an environment of four rectangles around a 9-link chain.
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include <ompl/base/ScopedState.h>
#include <ompl/base/SpaceInformation.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/base/spaces/SO2StateSpace.h>

#include "ompl_cuda/planar_chain.h"
#include "ompl_cuda/workspace2d.h"

namespace chain_test {

namespace ob = ompl::base;

inline ob::SpaceInformationPtr real_vector_space(int links) {
  auto space = std::make_shared<ob::RealVectorStateSpace>(links);
  space->setBounds(-M_PI, M_PI);
  auto si = std::make_shared<ob::SpaceInformation>(space);
  return si;
}

inline ob::SpaceInformationPtr so2_space(int links) {
  auto space = std::make_shared<ob::CompoundStateSpace>();
  for (int i = 0; i < links; ++i) space->addSubspace(std::make_shared<ob::SO2StateSpace>(), 1.0);
  return std::make_shared<ob::SpaceInformation>(space);
}

// OMPL's KinematicChain demo space (demos/KinematicChainBenchmark.cpp), as users have it: a
// RealVectorStateSpace with bounds [-pi, pi] whose interpolate goes the short way round and whose
// distance is the demo's sum over the joints' positions (so validSegmentCount differs too).
class KinematicChainSpace : public ob::RealVectorStateSpace {
 public:
  explicit KinematicChainSpace(unsigned int links, double link_length = 1.0)
      : ob::RealVectorStateSpace(links), link_length_(link_length) {
    setBounds(-M_PI, M_PI);
  }
  double distance(const ob::State* a, const ob::State* b) const override {
    const double* x = a->as<StateType>()->values;
    const double* y = b->as<StateType>()->values;
    double theta1 = 0., theta2 = 0., dx = 0., dy = 0., dist = 0.;
    for (unsigned int i = 0; i < dimension_; ++i) {
      theta1 += x[i];
      theta2 += y[i];
      dx += std::cos(theta1) - std::cos(theta2);
      dy += std::sin(theta1) - std::sin(theta2);
      dist += std::sqrt(dx * dx + dy * dy);
    }
    return dist * link_length_;
  }
  void interpolate(const ob::State* from, const ob::State* to, double t, ob::State* state) const override {
    const double* f = from->as<StateType>()->values;
    const double* g = to->as<StateType>()->values;
    double* out = state->as<StateType>()->values;
    for (unsigned int i = 0; i < dimension_; ++i) {
      double diff = g[i] - f[i];
      if (std::fabs(diff) <= M_PI) {
        out[i] = f[i] + diff * t;
      } else {
        diff = diff > 0.0 ? 2.0 * M_PI - diff : -2.0 * M_PI - diff;
        out[i] = f[i] - diff * t;
        if (out[i] > M_PI) out[i] -= 2.0 * M_PI;
        else if (out[i] < -M_PI) out[i] += 2.0 * M_PI;
      }
    }
  }

 private:
  double link_length_;
};

inline ob::SpaceInformationPtr kinematic_chain_space(int links, double link_length) {
  return std::make_shared<ob::SpaceInformation>(std::make_shared<KinematicChainSpace>(links, link_length));
}

// Four rectangles around a 9-link chain of unit links at the origin (reach 9).
inline ompl_cuda::Workspace2D four_rectangles() {
  ompl_cuda::Workspace2D w;
  w.rectangles = {{2.0, 1.0, 3.5, 4.0}, {-5.0, 2.5, -3.0, 3.5}, {-2.0, -6.0, 1.0, -4.5}, {4.5, -3.0, 6.0, 0.5}};
  return w;
}

// Sets joint j of state s to v in either space.
inline void set_joint(const ob::SpaceInformationPtr& si, ob::State* s, int j, double v) {
  if (auto* c = dynamic_cast<ob::CompoundState*>(s)) {
    c->as<ob::SO2StateSpace::StateType>(j)->value = v;
  } else {
    s->as<ob::RealVectorStateSpace::StateType>()->values[j] = v;
  }
  (void)si;
}

inline double get_joint(const ob::State* s, int j) {
  if (const auto* c = dynamic_cast<const ob::CompoundState*>(s)) return c->as<ob::SO2StateSpace::StateType>(j)->value;
  return s->as<ob::RealVectorStateSpace::StateType>()->values[j];
}

// n states with joint angles uniform in [-pi, pi) (allocated from si; free with free_states).
inline std::vector<ob::State*> random_states(const ob::SpaceInformationPtr& si, int links, std::size_t n,
                                              unsigned seed, double spread = M_PI) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-spread, spread);
  std::vector<ob::State*> states(n);
  for (auto& s : states) {
    s = si->allocState();
    for (int j = 0; j < links; ++j) set_joint(si, s, j, std::min(u(rng), std::nextafter(M_PI, 0.0)));
  }
  return states;
}

inline void free_states(const ob::SpaceInformationPtr& si, std::vector<ob::State*>& states) {
  for (auto* s : states) si->freeState(s);
  states.clear();
}

}  // namespace chain_test
