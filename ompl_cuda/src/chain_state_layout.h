#pragma once
// How joint values sit in the OMPL states of a supported space, and how that space bounds and
// interpolates them: a RealVectorStateSpace of dimension d (OMPL's KinematicChain demo space included)
// or a CompoundStateSpace of d SO2StateSpace components. Anything else throws at construction.
#include <vector>

#include <ompl/base/SpaceInformation.h>

#include "chain_geometry.h"

namespace ompl_cuda::detail {

class ChainStateLayout {
 public:
  // Throws linalg_cuda::InvalidArgument with a clear message for unsupported spaces or a dimension
  // that differs from `links`.
  ChainStateLayout(const ompl::base::SpaceInformationPtr& si, int links);

  int dimension() const { return dimension_; }
  JointKind kind() const { return kind_; }
  const std::vector<double>& low() const { return low_; }
  const std::vector<double>& high() const { return high_; }
  // Copies the joint values of `state` to out[0..dimension).
  void read(const ompl::base::State* state, double* out) const;
  BoundsView bounds_view() const { return {kind_, low_.data(), high_.data()}; }

 private:
  int dimension_ = 0;
  bool compound_ = false;
  JointKind kind_ = kRealVector;
  std::vector<double> low_, high_;
};

}  // namespace ompl_cuda::detail
