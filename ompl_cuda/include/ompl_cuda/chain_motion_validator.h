#pragma once
// ChainMotionValidator: an OMPL MotionValidator for a planar chain among 2-D obstacles. Its decisions
// are those of OMPL's DiscreteMotionValidator with a ChainValidityChecker: the motion is valid when
// s2 and the states interpolated by the space at j / n, j = 1 .. n-1, n = space->validSegmentCount(s1, s2),
// are valid (s1 is assumed valid, as OMPL does), and lastValid is the state at (j - 1) / n for the first
// invalid j (n - 1 over n when only s2 is invalid). Single motions run on the CPU; checkMotions runs a
// whole batch in one GPU launch. valid_/invalid_ are counted for every motion; thread-safe.
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ompl_cuda/batch_checking.h"
#include "ompl_cuda/planar_chain.h"
#include "ompl_cuda/workspace2d.h"

namespace ompl_cuda {

namespace detail {
class ChainCheckEngine;
class ChainStateLayout;
}  // namespace detail

class ChainMotionValidator : public BatchMotionValidator {
 public:
  // Same requirements and errors as ChainValidityChecker.
  ChainMotionValidator(const ompl::base::SpaceInformationPtr& si, PlanarChain chain, Workspace2D workspace,
                       Backend backend = Backend::Auto);
  ~ChainMotionValidator() override;

  bool checkMotion(const ompl::base::State* s1, const ompl::base::State* s2) const override;
  bool checkMotion(const ompl::base::State* s1, const ompl::base::State* s2,
                   std::pair<ompl::base::State*, double>& lastValid) const override;

  // One GPU launch for the whole batch.
  void checkMotions(const std::vector<std::pair<const ompl::base::State*, const ompl::base::State*>>& motions,
                    std::vector<char>& valid, std::vector<double>* last_valid_times = nullptr) const override;

  Backend backend() const override;

 private:
  void count(std::size_t valid, std::size_t invalid) const;
  std::unique_ptr<detail::ChainStateLayout> layout_;
  std::unique_ptr<detail::ChainCheckEngine> engine_;
  mutable std::mutex count_mutex_;
};

}  // namespace ompl_cuda
