#include "space_metric.h"

#include <typeinfo>

#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/base/spaces/SO2StateSpace.h>

namespace ompl_cuda::detail {

namespace ob = ompl::base;

bool batch_metric(const ob::StateSpace& space, MetricKind& kind, std::vector<double>& weights) {
  if (typeid(space) == typeid(ob::RealVectorStateSpace)) {
    kind = MetricKind::kEuclidean;
    return true;
  }
  if (typeid(space) != typeid(ob::CompoundStateSpace)) return false;
  const auto& compound = static_cast<const ob::CompoundStateSpace&>(space);
  for (unsigned i = 0; i < compound.getSubspaceCount(); ++i)
    if (typeid(*compound.getSubspace(i)) != typeid(ob::SO2StateSpace)) return false;
  kind = MetricKind::kSO2Sum;
  weights = compound.getSubspaceWeights();
  return compound.getSubspaceCount() > 0;
}

}  // namespace ompl_cuda::detail
