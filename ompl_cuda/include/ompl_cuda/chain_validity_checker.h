#pragma once
// ChainValidityChecker: an OMPL StateValidityChecker for a planar chain among 2-D obstacles, with a
// batched check that runs thousands of states in one GPU launch.
//
//   auto checker = std::make_shared<ompl_cuda::ChainValidityChecker>(si, chain, workspace);
//   si->setStateValidityChecker(checker);                    // line 1
//   si->setMotionValidator(std::make_shared<ompl_cuda::ChainMotionValidator>(si, chain, workspace));  // line 2
//
// isValid(state) checks the bounds as the space's satisfiesBounds does, then collisions; it runs on
// the CPU (one state is cheaper there than a launch) with the same code the GPU runs, so single and
// batched answers are identical. NaN joint values are invalid.
#include <memory>
#include <vector>

#include "ompl_cuda/batch_checking.h"
#include "ompl_cuda/planar_chain.h"
#include "ompl_cuda/workspace2d.h"

namespace ompl_cuda {

namespace detail {
class ChainCheckEngine;
class ChainStateLayout;
}  // namespace detail

class ChainValidityChecker : public BatchStateValidityChecker {
 public:
  // The space must be RealVectorStateSpace(d) (bounds as set, e.g. [-pi, pi]; OMPL's KinematicChain
  // demo space is one) or a CompoundStateSpace of d SO2StateSpace, d = chain.links(). Anything else,
  // an invalid chain or workspace, or Backend::Cuda without a device, throws linalg_cuda::InvalidArgument
  // (linalg_cuda::Error for the device).
  ChainValidityChecker(const ompl::base::SpaceInformationPtr& si, PlanarChain chain, Workspace2D workspace,
                       Backend backend = Backend::Auto);
  ~ChainValidityChecker() override;

  using BatchStateValidityChecker::isValid;
  bool isValid(const ompl::base::State* state) const override;
  // One GPU launch for the whole batch.
  void isValid(const std::vector<const ompl::base::State*>& states, std::vector<char>& valid) const override;

  const PlanarChain& chain() const { return chain_; }
  const Workspace2D& workspace() const { return workspace_; }
  Backend backend() const override;

 private:
  PlanarChain chain_;
  Workspace2D workspace_;
  std::unique_ptr<detail::ChainStateLayout> layout_;
  std::unique_ptr<detail::ChainCheckEngine> engine_;
};

}  // namespace ompl_cuda
