#pragma once
// The batch interface that ompl_cuda's planners (BatchedRRTstar, BatchedPRM) feed: an OMPL
// StateValidityChecker or MotionValidator that can also check many states or motions in one call (one
// GPU launch, or all cores). The chain's checkers implement it; a planner given any other checker
// falls back to OMPL's one-at-a-time calls.
#include <utility>
#include <vector>

#include <ompl/base/MotionValidator.h>
#include <ompl/base/StateValidityChecker.h>

#include "linalg_cuda/backend.h"

namespace ompl_cuda {

using linalg_cuda::Backend;

class BatchStateValidityChecker : public ompl::base::StateValidityChecker {
 public:
  using ompl::base::StateValidityChecker::StateValidityChecker;
  using ompl::base::StateValidityChecker::isValid;
  // valid[i] = 1 if states[i] is valid, else 0, with the answers of isValid(states[i]).
  virtual void isValid(const std::vector<const ompl::base::State*>& states, std::vector<char>& valid) const = 0;
  // Where the batch calls run.
  virtual Backend backend() const = 0;
};

class BatchMotionValidator : public ompl::base::MotionValidator {
 public:
  using ompl::base::MotionValidator::MotionValidator;
  // valid[i] for motions[i] = (s1, s2), with the answers of checkMotion; when last_valid_times is
  // given, it receives for each invalid motion the time of its last valid state (and is left as is
  // for valid ones, like lastValid.second).
  virtual void checkMotions(const std::vector<std::pair<const ompl::base::State*, const ompl::base::State*>>& motions,
                            std::vector<char>& valid, std::vector<double>* last_valid_times = nullptr) const = 0;
  virtual Backend backend() const = 0;
};

}  // namespace ompl_cuda
