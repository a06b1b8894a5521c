#include "ompl_cuda/planar_chain.h"

#include <cmath>
#include <string>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"

namespace ompl_cuda {

PlanarChain PlanarChain::uniform(int links, double length, bool self_collision) {
  PlanarChain chain;
  if (links > 0) chain.link_lengths.assign(static_cast<std::size_t>(links), length);
  chain.self_collision = self_collision;
  chain.validate();
  return chain;
}

void PlanarChain::validate() const {
  if (link_lengths.empty()) throw linalg_cuda::InvalidArgument("PlanarChain: the chain has no links");
  if (links() > kMaxLinks)
    throw linalg_cuda::InvalidArgument("PlanarChain: " + std::to_string(links()) + " links; at most " +
                                       std::to_string(kMaxLinks) + " are supported");
  for (int i = 0; i < links(); ++i)
    if (!std::isfinite(link_lengths[i]) || !(link_lengths[i] > 0.0))
      throw linalg_cuda::InvalidArgument("PlanarChain: link " + std::to_string(i) + " has length " +
                                         linalg_cuda::detail::readable(link_lengths[i]) + "; lengths must be positive and finite");
  if (!std::isfinite(base_x) || !std::isfinite(base_y))
    throw linalg_cuda::InvalidArgument("PlanarChain: the base position is not finite");
}

}  // namespace ompl_cuda
