#include "ompl_cuda/chain_motion_validator.h"

#include <ompl/base/SpaceInformation.h>

#include "chain_check_engine.h"
#include "chain_state_layout.h"

namespace ompl_cuda {
namespace {

// OMPL's lastValid time for the first invalid index (DiscreteMotionValidator: (j - 1) / n for an
// interpolated state, (n - 1) / n when only s2 fails, including its -inf for n = 0).
double last_valid_time(int first_invalid, int segments) {
  const int last = segments > 0 ? segments : 1;
  const int j = first_invalid == last ? segments : first_invalid;
  return static_cast<double>(j - 1) / static_cast<double>(segments);
}

}  // namespace

ChainMotionValidator::ChainMotionValidator(const ompl::base::SpaceInformationPtr& si, PlanarChain chain,
                                           Workspace2D workspace, Backend backend)
    : BatchMotionValidator(si) {
  chain.validate();
  layout_ = std::make_unique<detail::ChainStateLayout>(si, chain.links());
  engine_ = std::make_unique<detail::ChainCheckEngine>(chain, workspace, layout_->kind(), layout_->low(),
                                                       layout_->high(), backend);
}

ChainMotionValidator::~ChainMotionValidator() = default;

Backend ChainMotionValidator::backend() const { return engine_->backend(); }

void ChainMotionValidator::count(std::size_t valid, std::size_t invalid) const {
  std::lock_guard<std::mutex> lock(count_mutex_);
  valid_ += static_cast<unsigned int>(valid);
  invalid_ += static_cast<unsigned int>(invalid);
}

bool ChainMotionValidator::checkMotion(const ompl::base::State* s1, const ompl::base::State* s2) const {
  std::pair<ompl::base::State*, double> ignored{nullptr, 0.0};
  return checkMotion(s1, s2, ignored);
}

bool ChainMotionValidator::checkMotion(const ompl::base::State* s1, const ompl::base::State* s2,
                                       std::pair<ompl::base::State*, double>& lastValid) const {
  double from[detail::kMaxLinks], to[detail::kMaxLinks];
  layout_->read(s1, from);
  layout_->read(s2, to);
  const int segments = static_cast<int>(si_->getStateSpace()->validSegmentCount(s1, s2));
  const int first_invalid = engine_->first_invalid(from, to, segments);
  if (first_invalid == 0) {
    count(1, 0);
    return true;
  }
  lastValid.second = last_valid_time(first_invalid, segments);
  if (lastValid.first != nullptr) si_->getStateSpace()->interpolate(s1, s2, lastValid.second, lastValid.first);
  count(0, 1);
  return false;
}

void ChainMotionValidator::checkMotions(
    const std::vector<std::pair<const ompl::base::State*, const ompl::base::State*>>& motions, std::vector<char>& valid,
    std::vector<double>* last_valid_times) const {
  const int d = layout_->dimension();
  const long n = static_cast<long>(motions.size());
  valid.resize(n);
  if (last_valid_times) last_valid_times->resize(n, 0.0);
  const ompl::base::StateSpace* space = si_->getStateSpace().get();
  std::size_t good = 0;
  // Reading the OMPL states and their segment counts is the host's share of the work: on all cores,
  // straight into the engine's (pinned) staging memory; the answers are read from there too.
  engine_->check_motions_filled(
      motions.size(),
      [&](std::size_t first, std::size_t chunk, double* from, double* to, int* segments) {
        const long count = static_cast<long>(chunk);
#pragma omp parallel for schedule(static) if (count > 4096)
        for (long c = 0; c < count; ++c) {
          const std::size_t i = first + c;
          layout_->read(motions[i].first, from + c * d);
          layout_->read(motions[i].second, to + c * d);
          segments[c] = static_cast<int>(space->validSegmentCount(motions[i].first, motions[i].second));
        }
      },
      [&](const int* first_invalid, const int* segments) {
#pragma omp parallel for schedule(static) reduction(+ : good) if (n > 65536)
        for (long i = 0; i < n; ++i) {
          valid[i] = first_invalid[i] == 0;
          good += valid[i];
          if (!valid[i] && last_valid_times) (*last_valid_times)[i] = last_valid_time(first_invalid[i], segments[i]);
        }
      });
  count(good, motions.size() - good);
}

}  // namespace ompl_cuda
