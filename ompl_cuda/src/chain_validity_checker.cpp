#include "ompl_cuda/chain_validity_checker.h"

#include "chain_check_engine.h"
#include "chain_state_layout.h"

namespace ompl_cuda {

ChainValidityChecker::ChainValidityChecker(const ompl::base::SpaceInformationPtr& si, PlanarChain chain,
                                           Workspace2D workspace, Backend backend)
    : BatchStateValidityChecker(si), chain_(std::move(chain)), workspace_(std::move(workspace)) {
  chain_.validate();
  layout_ = std::make_unique<detail::ChainStateLayout>(si, chain_.links());
  engine_ = std::make_unique<detail::ChainCheckEngine>(chain_, workspace_, layout_->kind(), layout_->low(),
                                                       layout_->high(), backend);
}

ChainValidityChecker::~ChainValidityChecker() = default;

Backend ChainValidityChecker::backend() const { return engine_->backend(); }

bool ChainValidityChecker::isValid(const ompl::base::State* state) const {
  double q[detail::kMaxLinks];
  layout_->read(state, q);
  return engine_->valid(q);
}

void ChainValidityChecker::isValid(const std::vector<const ompl::base::State*>& states, std::vector<char>& valid) const {
  const int d = chain_.links();
  std::vector<double> q(states.size() * d);
  const long count = static_cast<long>(states.size());
#pragma omp parallel for schedule(static) if (count > 4096)
  for (long i = 0; i < count; ++i) layout_->read(states[i], q.data() + i * d);
  valid.resize(states.size());
  engine_->check_states(q.data(), states.size(), valid.data());
}

}  // namespace ompl_cuda
